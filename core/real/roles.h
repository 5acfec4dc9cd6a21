/* roles.h: one role of a distributed job per process (`asgd ps`, `asgd
 * worker`, `asgd evaluator`), for the launcher's children and for jobs
 * spread over hosts. role_main reads the role's flags or TF_CONFIG
 * (cluster.h), the experiment with the cluster's shape from the host
 * lists, and runs the role in its run folder (--run_dir, default
 * OUT/NAME/RUN_ID or OUT/NAME/cluster). The worker and the evaluator
 * connect to every shard (peers.h), write their metrics into the run
 * folder, and exit 0 when their part of the job is done; the shard is
 * ps.h.
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

/* `asgd ROLE ARGS...`: the process's exit status (0, 1 or 2), after one
 * line on stderr when it failed. */
int role_main(int role, int argc, char **argv);

/* Worker cs->task (one of e->workers: role_main checks) and the
 * evaluator, each until its work is done. */
int worker_main(const cluster_spec *cs, experiment *e, const char *run_dir, error *err);
int evaluator_main(const cluster_spec *cs, experiment *e, const char *run_dir, error *err);

#endif
