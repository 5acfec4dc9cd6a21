/* server.h: one parameter-server shard, independent of any transport.
 *
 * A shard owns the contiguous range [lo, hi) of the flat parameter vector
 * (partition_range), a version that counts its updates, the server-side
 * optimizer, and the rule's own state. The process loop (core/real/ps.c)
 * or the simulator decodes messages and calls server_push and
 * server_pull; pulls that are not ready wait here, in arrival order, until
 * server_wake finds them ready. The rule's handlers update the parameters
 * through the helpers below, which keep the version and the staleness
 * records right.
 *
 * With info.server_threads > 1 (Hogwild), pushes are applied by several
 * threads at once, each element's update atomic as Niu et al. assume:
 * server_add goes stripe by stripe (SERVER_STRIPE elements) under each
 * stripe's lock, so concurrent pushes interleave stripe by stripe and no
 * update is lost; pulls read without locks. The version and the
 * statistics stay exact. Only server_add may be used then. */
#ifndef ASGD_SERVER_H
#define ASGD_SERVER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "algorithms/algorithm.h"
#include "core/optim.h"
#include "core/summary.h"

#define SERVER_STRIPE 4096   /* elements under one lock when pushes apply at once */

/* A waiting pull and the driver's handle for its reply. */
typedef struct server_waiting {
    pull_msg pull;
    void *handle;
} server_waiting;

/* How a driver answers a pull: with the shard's parameters now. */
typedef void (*server_reply_fn)(void *ctx, const pull_msg *m, void *handle);

typedef struct server {
    const algorithm *alg;
    const void *params;       /* the rule's parameters */
    void *state;              /* the rule's per-shard state */
    int shard, shards, workers;
    uint64_t lo, hi;
    size_t n;                 /* hi - lo */
    float *theta;             /* the shard's part of the centre model */
    optim *opt;               /* server-side optimizer over theta */
    _Atomic uint64_t version;
    _Atomic uint64_t samples; /* examples behind all pushes received */
    _Atomic uint64_t *worker_samples;   /* the same, per worker */
    shard_stats stats;        /* counters; version and samples are above */
    uint64_t *last_staleness; /* per worker: staleness of its last applied push */
    bool *done;               /* per worker: has finished */
    int done_count;
    bool evaluator_done;
    int verdict;              /* of the push being applied (server_threads 1) */
    int threads;
    pthread_mutex_t stats_lock;
    pthread_mutex_t *stripes; /* server_threads > 1: one lock per stripe of theta */
    size_t nstripes;
    double (*clock)(void *ctx);   /* the driver's time (default: wall clock) */
    void *clock_ctx;
    server_waiting *waiting;  /* pulls not yet ready, in arrival order */
    int nwaiting, waiting_cap;
    /* synchronous rules' round (server_round_add) */
    float *round_sum;
    int round_arrived;
    bool *in_round;           /* per worker: its push is in the round */
} server;

/* A shard of a vector whose initial values are `init` (all nparams), with
 * info->server_optim as its optimizer. */
server *server_new(const algorithm *alg, const void *params, const rule_info *info,
                   int shard, int shards, int workers, const float *init, uint64_t nparams);
void server_destroy(server **s);

/* Skeleton side. server_push refuses a push holding a NaN or an infinite
 * value (counted in stats.nonfinite: the rule never sees it); it returns
 * how the rule took the push: PUSH_IN_ROUND when it recorded it applied,
 * PUSH_LATE when dropped or refused (the verdict the round's leader sends
 * on). */
int server_push(server *s, const push_msg *m);
/* Whether the rule would answer m now; notes the first worker pull. */
bool server_pull_ready(server *s, const pull_msg *m);
/* A pull answered now: tells the rule (server_on_pull) and returns what
 * to send, the shard's theta (n values). */
const float *server_answer(server *s, const pull_msg *m);
/* Copies n of theta's values into dst without a lock, while apply threads
 * or Hogwild's worker threads may add to them: each float is aligned, so
 * none is torn, and the copy holds at least the version read before it.
 * The one read that races by design (scripts/tsan.supp names it alone). */
void server_copy_theta(float *dst, const float *theta, size_t n);
/* Queues a pull that was not ready, with the driver's handle for its
 * reply; -1 when there is no memory to queue it. */
int server_wait(server *s, const pull_msg *m, void *handle);
/* Answers, in arrival order, every queued pull that has become ready:
 * after each push and each DONE. */
void server_wake(server *s, server_reply_fn reply, void *ctx);
/* The first queued pull of worker (or ALGORITHM_EVALUATOR), or NULL. */
server_waiting *server_find_waiting(server *s, uint32_t worker);
/* Empties the queue, handing each handle to release (may be NULL). */
void server_drop_waiting(server *s, void (*release)(void *ctx, void *handle), void *ctx);
/* Marks worker (or ALGORITHM_EVALUATOR) finished; true when every worker is. */
bool server_mark_done(server *s, uint32_t worker);
bool server_workers_done(const server *s);
/* The staleness of the worker's last applied push (0 for the evaluator),
 * read safely while apply threads run. */
uint64_t server_last_staleness(server *s, uint32_t worker);
/* Skeleton side: around a write to s->stats of a counter the apply
 * threads write too (dropped, last_push_at): the counters' lock where
 * server_threads > 1, else nothing. */
void server_stats_lock(server *s);
void server_stats_unlock(server *s);
/* The shard's counters now, version and samples included. */
void server_snapshot(server *s, shard_stats *out);
/* For a driver that runs its shards in its own process (the simulator,
 * threads mode): the shard's counters added to sum and written to
 * DIR/ps-K.json, as a real shard process writes its own; -1 with err set
 * when the file cannot be written. */
int server_report(server *s, run_summary *sum, const char *dir, error *err);

/* Rule side: state that keeps, per worker, the shard's theta as that
 * worker last pulled it (theta_b of DC-ASGD and Gap-Aware), followed by
 * `extra` vectors of n floats for the rule's own use, in one flat block (a
 * checkpoint saves it as bytes). server_pulled_init is a server_init
 * (every copy starts as the initial theta, the extra vectors at 0; NULL
 * when out of memory); server_pulled_bytes its size, for
 * server_state_bytes; server_keep_pulled a server_on_pull. */
void *server_pulled_init(server *s, int extra);
size_t server_pulled_bytes(const server *s, int extra);
void server_keep_pulled(server *s, const pull_msg *m);
/* Worker w's copy, or (w = s->workers + k) the rule's k-th extra vector. */
float *server_pulled(server *s, uint32_t w);
/* Rule side: how many updates the shard made since m's values were
 * computed (version - base_version, 0 if the push is from the future),
 * the tau of the staleness-scaled rules. */
uint64_t server_push_staleness(const server *s, const push_msg *m);
/* Rule side: count a push as applied now (staleness = version - base),
 * or as dropped. */
void server_record_applied(server *s, const push_msg *m);
void server_record_dropped(server *s);
/* Rule side: a push recorded applied, with that staleness, that the rule
 * will never apply after all (a buffer left when training ends): counted
 * dropped instead. staleness_max keeps it. */
void server_record_unapplied(server *s, uint64_t staleness);
/* Synchronous rules: adds a push tagged with the current version to the
 * round's sum and records it, returning how many have arrived this round;
 * a push for another round, one the round's leader found late, or a
 * second from a worker already in the round (a restarted process that
 * joined the round its previous life had pushed to) is dropped and
 * counted (returns 0); the last with the verdict "in the round", so that
 * the other shards take it where they lack the first. */
int server_round_add(server *s, const push_msg *m);
/* The round's sum (n values); server_round_end clears it for the next,
 * and forgets a half-done round a shard restored from a checkpoint held
 * (core/real/ps.c, the simulator): every worker retakes that round (its
 * pull is answered at once), and a round that shard 0 leads holds only
 * pushes the other shards got too (a pushing worker's earlier life in it,
 * which a shard behind had lost, closed it there and stalled that one). */
float *server_round_sum(server *s);
void server_round_end(server *s);
/* A half-done round a shard restored from a checkpoint, forgotten (every
 * worker retakes it): each push in it counted dropped, not applied, as
 * server_record_unapplied (it was counted once more than rounds were
 * applied), then server_round_end. */
void server_round_forget(server *s);

/* Pull readiness most rules use: once the shard's version reaches the
 * pull's minimum, or at once. */
bool server_version_reached(server *s, const pull_msg *m);
bool server_always_ready(server *s, const pull_msg *m);

/* theta <- opt(theta, grad); version + 1. */
void server_step(server *s, const float *grad);
/* theta += scale * delta; version + 1. */
void server_add(server *s, const float *delta, float scale);
/* theta <- values; version + 1. */
void server_assign(server *s, const float *values);

#endif
