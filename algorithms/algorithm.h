/* algorithm.h: the update-rule table.
 *
 * A rule is one file in algorithms/ that fills one `algorithm` with
 * designated initializers, plus one line in registry.c. Its worker side is
 * a plain loop over the worker primitives (worker.h: pull, push, gradient,
 * the local optimizer); its server side is handlers that each shard's
 * skeleton (server.h) calls. The same functions run in every driver: real
 * processes (core/real/), threads (core/threads/), the simulator
 * (core/sim/) and the tests' in-process link. The slots and what each promises, in the manner of
 * SQLite's sqlite3_io_methods:
 *
 * configure (required)
 *   Reads the rule's own keys of [algorithm] with the typed getters (every
 *   key it does not read is an error, so a typo never passes) and returns
 *   its parameters as one malloc'ed block, which the skeleton frees with
 *   free(); NULL with err set (ERROR_USAGE for a bad key) on failure. It
 *   may change *info: server threads, the shards' and the workers'
 *   optimizers (the skeleton fills it with defaults first). Called before
 *   any worker or shard exists; the same parameters reach every worker
 *   (w->params) and every shard (s->params). It is also called, in every
 *   process, for every rule on a config of defaults (to learn the keys
 *   each rule reads, for "not used by this configuration"): it must keep
 *   no state outside the block it returns.
 *
 * worker_run (required)
 *   One worker's whole loop, until w's budget is spent (worker_done);
 *   returns 0, or -1 as soon as a primitive fails (the link has died or
 *   the run is stopping: return at once, without retrying). It must settle
 *   (worker_settle) any buffer it pushed before freeing it.
 *
 * server_init (optional)
 *   The rule's state for one shard, s->state: per shard, or per worker of
 *   the shard (s->workers entries; the evaluator is no worker). NULL means
 *   out of memory and fails the shard. Released by server_free, or with
 *   free() when server_free is NULL.
 *
 * server_free (optional)
 *   Releases s->state when free() alone would not (it holds pointers).
 *
 * server_state_bytes (optional)
 *   The size of s->state when it is flat memory (no pointers): a shard's
 *   checkpoint then saves it byte for byte and a restored shard gets it
 *   back. Without it, a restored shard's state is server_init's fresh one.
 *
 * server_on_push (required)
 *   One push of a worker, values covering the shard's range. Updates theta
 *   only through server.h's helpers (server_step, server_add,
 *   server_assign), which count the version, and records the push as
 *   applied (server_record_applied) or dropped (server_record_dropped)
 *   before it changes theta: the record reads the version as the push's
 *   staleness, so one made after server_add counts a push one update
 *   staler than it was.
 *   With info.server_threads > 1 several pushes of one shard run it at
 *   once, from several threads, and it must be safe so (Hogwild's
 *   server_add is; anything that touches s->state is not, and must keep
 *   server_threads at 1). Otherwise calls never overlap.
 *
 * server_pull_ready (required)
 *   Whether a pull can be answered now: a question, never a change of
 *   state (it is asked again for every waiting pull after every push and
 *   every DONE, any number of times; pushes that apply threads applied,
 *   within a millisecond). When it returns true the shard answers at once
 *   with its current theta, before it handles any other message; when
 *   false the pull waits. m->worker is a worker's index or
 *   ALGORITHM_EVALUATOR: the evaluator's pulls must never wait on training
 *   (answer them at once: real mode asks for them, while threads mode and
 *   the simulator answer them without asking, so a rule that made them
 *   wait would stall in real mode alone). A pull sent to an earlier life
 *   of a shard that was restored from a checkpoint is answered at once,
 *   without asking: the reply tells the worker of the restart, and its
 *   versions may be below min_version. With server_threads > 1 it may run
 *   while pushes are applied.
 *
 * prefetch (a flag)
 *   worker_run calls worker_prefetch, so that [algorithm] prefetch = on
 *   overlaps the next pull with the gradient; the rule's file says what
 *   that changes. A rule without it refuses the key.
 *
 * server_on_pull (optional)
 *   Told, as a pull is answered, that m->worker now holds the shard's
 *   current theta (per-worker state at pull time: delay-compensated ASGD
 *   keeps a copy of what each worker pulled). Called for the evaluator's
 *   pulls too (m->worker == ALGORITHM_EVALUATOR). It may change s->state,
 *   never theta or the version; with server_threads > 1 it may run while
 *   pushes are applied. */
#ifndef ASGD_ALGORITHM_H
#define ASGD_ALGORITHM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "core/error.h"
#include "core/optim.h"

/* The layout of this table: a rule that states another version (or lacks
 * a required slot) stops asgd at the registry's first lookup, naming it
 * (algorithm_check; registry.c aborts: a programmer's error). 2 added
 * server_free and server_on_pull; 3 added server_state_bytes; 4 added
 * prefetch; 5 added server_on_workers_done. */
#define ALGORITHM_VERSION 5

struct worker;
struct server;

/* The worker field of the evaluator's pulls and DONE: no worker's index
 * (the wire format uses the same value, WIRE_EVALUATOR). */
#define ALGORITHM_EVALUATOR 0xfffffffeu

/* Whether a push made its round, as the round's leader (shard 0) decided:
 * with rule_info.round_leader, the other shards take exactly the pushes
 * shard 0 took, so that a round is the same set of workers everywhere. */
enum push_verdict { PUSH_UNDECIDED, PUSH_IN_ROUND, PUSH_LATE };

/* A push as the shard's handler sees it: values cover the shard's range. */
typedef struct push_msg {
    uint32_t worker;
    uint64_t tag;             /* round or clock, as the rule uses it */
    uint64_t base_version;    /* the shard version the worker computed on */
    uint32_t samples;         /* examples behind this push */
    int verdict;              /* enum push_verdict: the leader's, for shards but 0 */
    const float *values;
} push_msg;

typedef struct pull_msg {
    uint32_t worker;          /* or ALGORITHM_EVALUATOR */
    uint64_t min_version;
} pull_msg;

/* What configure() is told about the run. */
typedef struct rule_context {
    int workers;
    const optim_spec *optim;  /* [train] optimizer and lr */
    double epochs;            /* [train] epochs: the whole budget */
    long batch;               /* [train] batch: examples per step */
} rule_context;

/* What configure() tells the skeleton. The skeleton fills it with defaults
 * first: one server thread, and [train]'s optimizer for both optimizers. */
typedef struct rule_info {
    int server_threads;       /* > 1: pushes are applied concurrently (server_add only) */
    /* Rounds that may close without every worker (backup workers): shard 0
     * decides each round's members and the other shards follow its verdict
     * (a push goes to shard 0 first, then to the others with its verdict).
     * Rules whose rounds go through server_round_add set it when they have
     * backups. A worker that dies between its push to shard 0 and the
     * others leaves their round one push short: the job then stops with
     * [cluster] timeout, rather than train on rounds that differ. */
    bool round_leader;
    /* Every worker takes part in every round (sync, sagn, easgd, average):
     * they all get the same budget, the whole number of minibatches
     * nearest their share of train.epochs, so that rounds line up; the
     * other rules split train.epochs exactly, to the minibatch. */
    bool lockstep;
    /* Pushes are whole models, not updates (average): compression that
     * drops or quantizes entries as if they were updates (topk, randomk,
     * sign, qsgd) and error feedback are refused, where fp16 and bf16
     * round them (topk set every entry it left out of the centre to 0). */
    bool pushes_models;
    optim_spec server_optim;  /* the shards' optimizer (server_step) */
    optim_spec local_optim;   /* the workers' optimizer (worker_local_step) */
} rule_info;

typedef struct algorithm {
    int version;              /* ALGORITHM_VERSION */
    const char *name;
    const char *summary;
    const char *keys;         /* its [algorithm] keys with defaults, for help */
    void *(*configure)(config *c, const rule_context *ctx, rule_info *info, error *err);
    int (*worker_run)(struct worker *w);
    void *(*server_init)(struct server *s);
    void (*server_free)(struct server *s);
    size_t (*server_state_bytes)(const struct server *s);
    void (*server_on_push)(struct server *s, const push_msg *m);
    bool (*server_pull_ready)(struct server *s, const pull_msg *m);
    void (*server_on_pull)(struct server *s, const pull_msg *m);
    /* Optional: once every worker has finished, before the final model is
     * read (a rule that holds pushes it never applied says so here, with
     * server_record_unapplied). It runs once per life of the shard, after
     * the last push has been applied: on the thread that applies pushes
     * (threads mode: under the shard's lock), or with apply threads
     * (server_threads > 1, real mode) on the shard's own thread once they
     * are drained. */
    void (*server_on_workers_done)(struct server *s);
    bool prefetch;            /* worker_run calls worker_prefetch */
} algorithm;

/* The registry (registry.c). */
const algorithm *algorithm_find(const char *name);
/* NULL-terminated list of every rule's table, in registry order. */
const algorithm *const *algorithm_all(void);
/* Whether a table keeps this header's promises: the current version, a
 * name, and every required slot; NULL, or what is wrong. */
const char *algorithm_check(const algorithm *a);

#endif
