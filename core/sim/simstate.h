/* simstate.h: the simulator's state, shared by its parts: simworker.c,
 * the workers (each a coroutine running the rule's unmodified worker loop,
 * and the link that turns its primitives into events); simshard.c, the
 * shards (messages, failures, checkpoints); sim.c, the event loop with the
 * evaluator; and the events and links they all use (simstate.c). */
#ifndef ASGD_SIMSTATE_H
#define ASGD_SIMSTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "algorithms/server.h"
#include "algorithms/worker.h"
#include "core/checkpoint.h"
#include "core/experiment.h"
#include "core/run.h"
#include "core/sim/simfiber.h"
#include "core/sim/simqueue.h"
#include "core/summary.h"

/* Each worker's coroutine stack, one after another in one mapping
 * (sim.stacks: a mapping each would pass the kernel's limit on mappings
 * beyond about 65,000 workers); only the pages a stack touches are
 * memory. Its lowest SIM_CANARY words hold a pattern checked at every
 * switch back to the event loop, in place of a guard page. */
#define SIM_STACK (512 * 1024)
#define SIM_CANARY 8

enum ev_kind {
    EV_CPU = 1,          /* a job's turn on a core ends (simcpu.c): its owner is
                            the worker, else the shard, else (both -1) the
                            evaluator; tag: the job's number */
    EV_START,            /* a worker (re)starts */
    EV_ARRIVE_PULL,      /* a pull reaches a shard */
    EV_ARRIVE_PUSH,      /* a push reaches a shard */
    EV_ARRIVE_REPLY,     /* a pull's reply reaches a worker */
    EV_EVAL,             /* the evaluator's turn */
    EV_FAIL,             /* a worker fails, or a shard (shard >= 0) */
    EV_ARRIVE_VERDICT,   /* the round leader's verdict on a push reaches its worker */
    EV_SHARD_BACK,       /* a failed shard returns from its checkpoint */
    EV_CHECKPOINT,       /* every shard writes its checkpoint */
    EV_AWAY,             /* a worker's device goes away until `back` (sim.trace) */
    EV_IO_ARRIVE,        /* a message reaches its receiver's I/O thread */
    EV_BALANCE,          /* a tick's load balancing of core e.core's line (simcpu.c) */
    EV_RESUME,           /* a paused worker's minibatch asks for a core again (simcpu.c) */
};

enum { SIM_IO_LEAVING = 1, SIM_IO_ARRIVING };

/* Events that recur for as long as the run lasts, and so are not work
 * that could still move it: evaluations (their work on a core too) and
 * checkpoints. */
static inline bool sim_periodic(const sim_event *e)
{
    return e->kind == EV_EVAL || e->kind == EV_CHECKPOINT ||
           (e->kind == EV_CPU && e->worker < 0 && e->shard < 0 && !e->io);
}

enum wait_kind { WAIT_NONE, WAIT_CPU, WAIT_REPLIES, WAIT_SETTLE, WAIT_VERDICT, WAIT_SHARD_BACK };

/* An owner's work on the cores (simcpu.c): one job at a time. */
typedef struct sim_job {
    double left;             /* seconds of work still to do; < 0: a minibatch, its
                                time drawn as it starts */
    bool whole;              /* the turn it has now finishes it */
    bool minibatch;          /* a worker's minibatch: its [sim] pause stops it */
    double turn;             /* the work the turn it has now does */
    uint64_t seq;            /* its number: a turn of an earlier job ends nothing */
    int core;                /* 1 + the core of its owner's last turn; 0: none yet */
    double ran_until;        /* when that turn ended */
} sim_job;

/* Jobs in line for a core, first come first served (simcpu.c). */
typedef struct sim_line {
    sim_event *buf;
    size_t head, count, cap;
} sim_line;

/* A process's I/O thread (ZeroMQ's one per context): its messages' turns
 * one at a time, in the order they came, so that its sends leave and its
 * arrivals are handed on in order (simcpu.c). */
typedef struct sim_io_thread {
    bool busy;               /* a turn of it is placed or running */
    sim_line waiting;        /* the turns after it */
} sim_io_thread;

/* One of [sim] cores: busy with a turn, or idle; jobs whose caches are on
 * it ([sim] migration) wait in its own line. */
typedef struct sim_core {
    bool busy;
    bool balancing;          /* an EV_BALANCE of its line is due */
    sim_line line;
} sim_core;

typedef struct sim sim;

typedef struct sim_worker {
    worker w;
    sim *s;
    sim_fiber fiber;
    char *stack;
    void *fake_stack;        /* AddressSanitizer's, while switched away */
    int incarnation;
    long written;            /* the most steps a life of it wrote to steps.csv */
    bool running;            /* its coroutine has not returned */
    bool done;               /* its work is complete */
    bool failed;             /* failing: every primitive returns -1 */
    int rc;
    enum wait_kind waiting;
    int pending_replies, pending_pushes;
    int verdict;             /* the round leader's, on the push being sent */
    float *pull_dst;         /* where the shards' replies go: the pull's dst, or prefetch */
    uint64_t *pull_versions, *pull_staleness;
    uint64_t pull_min;       /* the pull's min_version (lowered after a restored shard) */
    uint64_t examples;       /* the examples of its pushes so far, across its lives,
                                each push's total (peers.h's count_steps) */
    bool retaking;           /* a shard other than 0 came back from its checkpoint: the
                                rounds shard 0 has closed are retaken without its
                                verdict (peers_push) */
    /* [algorithm] prefetch: a pull asked early, its replies kept here until
     * the worker pulls (allocated at its first prefetch) */
    float *prefetch;
    uint64_t *prefetch_versions, prefetch_staleness, prefetch_min;
    bool prefetched;
    rng compute_rng;
    compressor *compress;    /* its pushes' compression ([algorithm] compress), or NULL */
    double away_until;       /* its device is away until then (sim.trace) */
    double compute_start;    /* when its current minibatch could start */
    int restarts;
    sim_job job;
    sim_io_thread io;
} sim_worker;

typedef struct sim_shard {
    server *srv;
    sim_event *queue;        /* messages waiting to be processed, FIFO */
    size_t head, count, cap;
    bool busy;
    bool down;               /* failed, until back */
    double back;
    uint32_t generation;     /* 1, one more each time it comes back */
    bool began_saved;        /* this life wrote its checkpoint of when training began
                                (its first worker pull; core/real/ps.c) */
    uint64_t version_at_fail;
    long restarts;           /* times it came back, */
    uint64_t lost;           /* and the updates lost in all (kept here, not in the
                                counters a checkpoint brings back) */
    shard_client *clients;   /* what a checkpoint keeps of each worker (all 0 here) */
    sim_job job;             /* its work on the message it is handling */
    sim_event *outbox;       /* the replies and verdicts that work made, which */
    size_t headout, nout, capout;   /* leave when it is done */
    double outbox_work;      /* their sending and copies, */
    double outbox_done;      /* and how much of that its current job ends at */
    bool collecting;         /* replies go to the outbox */
    sim_io_thread io;
} sim_shard;

struct sim {
    experiment *e;
    run *r;
    long ending_core;          /* 1 + the core whose turn has just ended, freed once what
                                  the turn did is placed (sim_cpu_release); 0: none */
    simq q;
    double now;
    uint64_t events;
    sim_worker *workers;
    sim_shard *shards;
    int nworkers, nshards;
    double *link_free;       /* per (worker, shard, direction): last arrival */
    double *shard_link;      /* per (shard, direction), with sim.shard_bandwidth: when its
                                own link has sent its last bytes */
    uint32_t *heard;         /* per (worker, shard): the generation it last heard */
    uint32_t *asked;         /* per (worker, shard): its last pull request's number */
    bool *answered;          /* per (worker, shard): that request's reply has come */
    rng net_rng;
    model *m;
    shard *parts;
    sim_fiber main_fiber;
    const void *main_stack_bottom;
    size_t main_stack_size;
    int done_workers, restarts;
    int workers_finished;     /* since the loop last had the shards checkpoint and ask
                                 their waiting pulls again */
    /* [sim] cores: each core, the idle ones (a stack, idle[0..nidle), and
     * where each stands in it, -1 when busy), the jobs in line for any
     * core, and how many wait in the cores' own lines */
    sim_core *cores;
    long *idle, *idle_at, nidle;
    sim_line shared;
    size_t waiting_own;
    bool failed;
    bool diverged;           /* the test loss became non-finite: the run stops */
    bool started;            /* a worker has pulled: training has begun */
    long queued_work;        /* queued events that are not evaluations */
    bool evaluated_at_end;   /* the final evaluation is in eval.csv */
    bool retaken;            /* a worker that started again took steps again
                              * whose rows steps.csv has (core/steps.h) */
    sim_job eval_job;        /* the evaluator's ([sim] eval_cost) */
    bool eval_busy;          /* it is working on an evaluation, */
    bool eval_due;           /* and the next fell due meanwhile */
    bool eval_held;          /* one fell due while a shard was down: made once it is back */
    double eval_waits_since; /* a lockstep rule's evaluation, due then (0: none), waits for
                                the shards to show one round (core/real/roles.c) */
    long evaluations;        /* those during training, with eval_cost */
    double first_step;       /* when: time 0 of every row and of time_s */
    double evaluated_at;     /* eval.csv's last row's time, from first_step */
    error *err;
    float *centre;
    char *stacks;            /* nworkers x SIM_STACK, reserved, not committed */
    float *batch_x;          /* the one minibatch buffer all workers draw into */
    int32_t *batch_y;
    run_summary sum;         /* evaluations go in as they happen */
    long n_train;
};

/* simstate.c */
/* Queues an event; -1 (and the run failed) when there is no memory. */
int sim_schedule(sim *s, sim_event e);
/* When a message of `bytes` sent now on the link between a worker and a
 * shard arrives (to_shard: that direction), never before the link's
 * previous message: links keep their order. */
double sim_arrival(sim *s, int worker, int shard, int to_shard, double bytes);
/* Whether this incarnation of a worker is running and has not failed:
 * whether a message of it, or a job, still matters. */
bool sim_worker_alive(const sim *s, int worker, int incarnation);
/* A waiting pull's handle for the shard: the asking worker's incarnation
 * and the request's number (a reply to a request asked again since is
 * dropped). */
static inline void *sim_pull_handle(int incarnation, uint32_t request)
{
    return (void *)(uintptr_t)((uint64_t)request << 32 | (uint32_t)incarnation);
}
static inline int sim_handle_incarnation(const void *handle)
{
    return (int)(uint32_t)(uintptr_t)handle;
}
static inline uint32_t sim_handle_request(const void *handle)
{
    return (uint32_t)((uint64_t)(uintptr_t)handle >> 32);
}
/* Appends e to a FIFO kept in an array from *head (moved to 0 when the
 * array is full, before it grows). */
int sim_queue_add(sim_event **buf, size_t *count, size_t *cap, size_t *head, sim_event e);
/* Takes the first event of such a FIFO (count > 0); head goes back to 0
 * when it empties. */
sim_event sim_queue_pop(sim_event *buf, size_t *count, size_t *head);
/* How long a failed process takes to restart under the restart policy,
 * growing with the restarts so far, as the launcher's back-off. */
double sim_restart_delay(const sim *s);

/* simcpu.c */
/* Owners of jobs: a worker (this incarnation), a shard, the evaluator. */
sim_event sim_who_worker(const sim_worker *sw);
sim_event sim_who_shard(int k);
sim_event sim_who_evaluator(void);
/* Makes the [sim] cores, all idle (none with cores = 0). -1 when out of
 * memory. */
int sim_cpu_init(sim *s);
void sim_cpu_free(sim *s);
/* EV_BALANCE e: a scheduler tick's balancing; an idle core takes the
 * first job of core e.core's own line once its caches have gone cold. */
void sim_cpu_balance(sim *s, const sim_event *e);
/* Message e's work in an I/O thread (`work` seconds, one turn), on a
 * free core now or once one is its turn; its end is an EV_CPU with e.io. */
int sim_cpu_io(sim *s, sim_event e, double work);
/* Sends message e (a pull, push, reply or verdict between e.worker and
 * e.shard) of `bytes`: it arrives after the link's time; with shared
 * cores and [sim] message_cpu, through its sender's and its receiver's
 * I/O threads, each a turn on a core. -1 when out of memory. */
int sim_send(sim *s, sim_event e, double bytes);
/* The part of a message's work at each end that the process's own thread
 * does ([sim] message_cpu, or half of it where I/O threads do the rest). */
double sim_message_work(const sim *s);
/* A message's I/O turn has ended (e: its EV_CPU): leaving, it goes on the
 * wire (false); arriving, e becomes the message itself, to be delivered
 * now (true). */
bool sim_io_done(sim *s, sim_event *e);
/* who's next job: `work` seconds (< 0: a worker's minibatch), on a free
 * core now or once one is its turn; its end is an EV_CPU. -1 when out of
 * memory (the run failed). */
int sim_cpu_run(sim *s, sim_event who, double work);
/* EV_RESUME e: a worker's minibatch, put off while its [sim] pause
 * held no core, asks for one (nothing if the worker has failed since). */
void sim_cpu_resume(sim *s, const sim_event *e);
/* EV_CPU e: a turn on a core ends; true when it finished its owner's
 * current job, whose effects the caller then makes happen (the messages
 * it sends, the jobs it makes ready) while its core is still taken, as a
 * waker is running when it wakes others; then sim_cpu_release. */
bool sim_cpu_turn_ended(sim *s, const sim_event *e);
/* The core of the turn that has just ended goes to the next in its line
 * (or idles): after the turn's effects, which found it busy. */
void sim_cpu_release(sim *s);

/* simshard.c */
/* A message reaches its shard: queued and processed, or, while the shard
 * is down, sent again after it is back. */
void sim_shard_arrive(sim *s, const sim_event *e);
/* Processes shard k's queued messages until it is busy or idle. */
void sim_shard_process(sim *s, int k);
/* Shard k's work on a message is done: a pull is answered, and the next
 * message taken. */
void sim_shard_cpu_done(sim *s, int k);
/* Shard k fails now; back >= 0: it returns then, else the restart policy
 * and [checkpoint] every decide. */
void sim_shard_fail(sim *s, int k, double back);
/* Shard k returns from its latest checkpoint. */
void sim_shard_back(sim *s, int k);
/* Shard k, when up, asks its waiting pulls again: after a worker's DONE
 * (a rule's readiness may turn on who is done), as a real shard does. */
void sim_shard_wake(sim *s, int k);
/* Every shard that is up writes its checkpoint (RUN_DIR/checkpoints). */
void sim_checkpoint_all(sim *s);
/* Shard k (up) writes its checkpoint, as it does at a worker's done
 * with [checkpoint] every (a shard failing later comes back with that
 * worker's work: it has left, and none would redo it). */
void sim_checkpoint_shard(sim *s, int k);

/* simworker.c */
/* (Re)starts worker k's coroutine and runs it to its first wait. */
int sim_worker_start(sim *s, int k);
/* Worker k fails now; back >= 0: it returns then, else the restart
 * policy decides. */
void sim_worker_fail(sim *s, int k, double back);
/* Worker k's device goes away until back (sim.trace): a running worker
 * leaves at once, losing what it had not pushed, and starts again at back
 * (whatever [cluster] restart says: a device away is no failure); one not
 * started yet starts no earlier than back; one done stays done. */
void sim_worker_away(sim *s, int k, double back);
/* Resumes a waiting worker until its next wait. */
void sim_worker_wake(sim_worker *sw);
/* A reply to sw's pull came from a shard restored to `version`, below
 * the pull's min_version: the shards whose replies have not come are
 * asked again for `version` (their pulls may wait for rounds that only
 * workers now retaking the restored shard's rounds could close), as a
 * real worker does (peers_pull). */
void sim_worker_pull_lower(sim_worker *sw, uint64_t version);
/* Worker k, if still running, unwinds its loop now (every primitive
 * fails): the run ends early. */
void sim_worker_stop(sim *s, int k);
/* Resumes worker sw's coroutine after its job's work is done. */
void sim_worker_cpu_done(sim_worker *sw);
/* compute = measured: times real gradients on a scratch worker. */
int sim_calibrate(sim *s);
void sim_worker_free(sim_worker *sw);

#endif
