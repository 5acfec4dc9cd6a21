/* ps.h: one parameter-server shard as a process: a ZeroMQ ROUTER loop
 * around server.h.
 *
 * The loop decodes and validates every message (wire.h) before anything
 * touches parameters; a bad one is counted in stats.rejected, logged (the
 * first few) and dropped, and the shard keeps serving. Pulls that are not
 * ready (server_pull_ready) wait in a queue that is re-checked after every
 * push. A message must speak for its sender (senders.h): one for a worker
 * index, or the evaluator, from any other peer is counted in
 * stats.foreign and dropped. With auth, the shard is a CURVE server and
 * admits only the keys of its folder (auth.h); refused handshakes are
 * counted in stats.unauthenticated. The shard stops when every worker and
 * the expected evaluator have said DONE, or on SIGINT / SIGTERM. */
#ifndef ASGD_PS_H
#define ASGD_PS_H

#include <stdbool.h>

#include "core/real/cluster.h"
#include "core/error.h"
#include "core/faults.h"
#include "core/experiment.h"
#include "algorithms/server.h"
#include "core/checkpoint.h"
#include "transport/auth.h"

typedef struct ps_options {
    const char *endpoint;      /* to bind */
    bool expect_evaluator;
    const net_auth *auth;      /* NULL: no authentication */
    const char *checkpoint;    /* where to checkpoint ("": never) */
    const char *settings;      /* the job's, kept in each checkpoint (experiment_settings) */
    double checkpoint_every;   /* seconds between checkpoints; 0: only when stopped */
    bool restored;             /* s was taken up from a checkpoint */
    bool restore_asked;        /* --restore or --resume: a shard that has lived before
                                  comes back from its checkpoint; a worker that heard
                                  from that life, with none found, fails the shard */
    uint64_t seen_version;     /* resumed shard 0: the updates the last session's last
                                  evaluation saw (eval.csv), which a checkpoint written
                                  before it lost (its job's launcher was killed) */
    fault_spec faults;         /* drop and duplicate for replies to pulls and pushes */
    uint64_t seed;             /* their stream's */
    compress_spec compress;    /* the encoding pushes must come in */
    uint32_t job;              /* experiment_job: a request of another is not taken, and
                                  its reply (every reply carries this) fails its sender */
} ps_options;

/* Serves s until it should stop; 0 on a normal end. clients (s->workers)
 * hold what the shard knows of each worker's pushes; generation is drawn
 * at random for a fresh shard and is one more than its checkpoint's for a
 * restored one, so that no two lives of a shard share one. Requests
 * are answered with their sequence numbers and the generation: a push sent
 * again is applied once, and a client that last heard from an earlier
 * generation is answered at once and flagged WIRE_FLAG_RESTARTED (its
 * pushes, computed on parameters this shard no longer holds, are dropped).
 * With o->checkpoint_every, the shard writes its checkpoint when it starts
 * (a restored one: its new generation, so that another failure before the
 * next interval does not bring back the same one), every that many
 * seconds and at each worker's DONE; and when stopped by a signal. */
int ps_serve(server *s, void *zmq_ctx, const ps_options *o, shard_client *clients,
             uint32_t generation, error *err);

/* `asgd ps`: builds shard cs->task (one of cs->servers: role_main checks)
 * from the experiment (restored from
 * RUN_DIR/checkpoints/ps-K.ckpt with --restore, when there is one) and
 * serves it, then writes its counters to RUN_DIR/ps-K.json. */
int ps_main(const cluster_spec *cs, experiment *e, const char *run_dir, error *err);

#endif
