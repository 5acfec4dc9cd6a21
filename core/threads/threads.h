/* threads.h: `asgd train` with experiment.mode = threads: the workers are
 * threads of one process over one parameter vector, the setting of Niu et
 * al.'s Hogwild paper.
 *
 * Each worker thread runs the rule's unmodified worker loop with a model
 * and a backend of its own (one BLAS thread each unless backend.threads
 * says otherwise) through a third link: a pull copies each shard's part of
 * the centre (waiting, on a condition variable, while the rule's pull
 * readiness says no), and a push runs the shard's handler in place, on the
 * worker's own thread. The shards are the same server skeleton as in the
 * other modes: with the rule's server_threads > 1 (Hogwild) pushes apply
 * at once from every thread, lock-free but for server_add's per-stripe
 * locks, and pulls read mid-update; otherwise each shard applies one push
 * at a time under its lock. The main thread is the evaluator: the initial
 * model, then every eval.every seconds from the first step, then the final
 * one. eval.csv, steps.csv, ps-K.json and summary.json are those of the
 * other modes (bytes are 0: nothing crosses a network).
 *
 * Compression, injected faults, device traces and checkpoints belong to a
 * network and processes: the mode refuses them. */
#ifndef ASGD_THREADS_H
#define ASGD_THREADS_H

#include "core/error.h"
#include "core/experiment.h"
#include "core/run.h"

/* e has a distributed rule: experiment_configure refuses threads without one. */
int threads_train(experiment *e, run *r, error *err);

#endif
