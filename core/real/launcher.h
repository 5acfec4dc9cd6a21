/* launcher.h: `asgd train` for distributed rules in real mode.
 *
 * Starts every shard (`asgd ps`), the evaluator and every worker as
 * processes of this same binary, on ipc:// sockets in a private folder or
 * on tcp:// ports of [cluster] host, and supervises them:
 *  - a worker that fails is restarted or fails the job, by [cluster]
 *    restart (Kubeflow's policies: never, on-failure, exit-code: restart
 *    only exit codes 128 and above, i.e. signals), at most backoff_limit
 *    times in all, with exponential back-off; a restarted worker goes on
 *    with what is left of its share. A shard that fails is restarted the
 *    same way, from its checkpoint, when [checkpoint] every is set, and
 *    fails the job otherwise; the evaluator that fails fails the job, and
 *    a shard or the evaluator that ends before the workers are done too;
 *  - on completion, on failure and on SIGINT / SIGTERM every child is
 *    stopped (SIGTERM, then SIGKILL after 5 s) and reaped, and the ipc
 *    folder removed: nothing outlives the job. Children also die with the
 *    launcher itself (PR_SET_PDEATHSIG).
 * Children's stderr goes to the run's log.txt. At the end the workers'
 * steps-K.csv are merged into steps.csv and the shards' counters
 * (ps-K.json) into summary.json. */
#ifndef ASGD_LAUNCHER_H
#define ASGD_LAUNCHER_H

#include <stdbool.h>

#include "core/error.h"
#include "core/experiment.h"
#include "core/run.h"

/* Checks, before a run folder is made, what would otherwise fail only as
 * the shards bind: over tcp, that [cluster] host is an address of this
 * host (asgd train starts every shard here; a job across hosts starts its
 * roles with asgd ps and asgd worker) and that no listener holds an
 * explicit [cluster] port. ERROR_USAGE naming the key's line. */
int launcher_check(experiment *e, error *err);
/* With resume, r is an interrupted run's folder (run_reopen): the shards
 * restore their checkpoints, the workers go on with what is left of their
 * shares, and the metrics go on where they stopped. */
int launcher_train(experiment *e, run *r, bool resume, error *err);

#endif
