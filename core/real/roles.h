/* roles.h: the worker and evaluator processes (`asgd worker`, `asgd
 * evaluator`). Each connects to every shard (peers.h), writes its metrics
 * into the run folder, and exits 0 when its part of the job is done.
 *
 * worker K:   runs the rule's worker loop, appending a row per step to
 *             RUN_DIR/steps-K.csv; then says DONE to every shard, whose
 *             acks confirm that all its pushes arrived.
 * evaluator:  pulls the centre model at start, every eval.every seconds
 *             and once every worker is done, appending rows to
 *             RUN_DIR/eval.csv; then says DONE. Between evaluations it only
 *             asks shard counters (a few bytes), never slowing training. */
#ifndef ASGD_ROLES_H
#define ASGD_ROLES_H

#include "core/real/cluster.h"
#include "core/error.h"
#include "core/experiment.h"

int worker_main(const cluster_spec *cs, experiment *e, const char *run_dir, error *err);
int evaluator_main(const cluster_spec *cs, experiment *e, const char *run_dir, error *err);

#endif
