/* cluster.h: where a role process (asgd ps|worker|evaluator) stands in a
 * cluster, from TensorFlow-style flags or Kubeflow's TF_CONFIG.
 *
 *   asgd ROLE CONFIG [--ps_hosts=H:P,...] [--worker_hosts=H:P,...]
 *                    [--job_name=ps|worker|evaluator] [--task_index=K]
 *                    [--evaluator=0|1] [--run_dir=DIR] [--report_fd=N]
 *                    [--keys=DIR] [--restore | --resume] [section.key=value ...]
 *
 * When TF_CONFIG is set it is used instead of the host flags:
 *   {"cluster": {"ps": [...], "worker": [...], "chief": [...]},
 *    "task": {"type": "worker", "index": 1}, "environment": "cloud"}
 * A "chief", "master" (older TFJobs) or "evaluator" entry runs the
 * evaluator, and tells the servers to wait for it; Kubeflow leaves an
 * Evaluator replica out of the cluster, so an explicit --evaluator wins. For `asgd role`
 * (ROLE_ANY) TF_CONFIG's task.type chooses the role; without TF_CONFIG
 * the role stays ROLE_ANY and servers 0, for engines_place(). ps entries are "HOST:PORT" or full ipc:// / tcp://
 * endpoints; worker entries are only counted (workers bind nothing). */
#ifndef ASGD_CLUSTER_H
#define ASGD_CLUSTER_H

#include <stdbool.h>

#include "core/error.h"
#include "transport/auth.h"

#define CLUSTER_MAX_SERVERS 256
#define CLUSTER_ADDRESS_MAX 512

/* ROLE_ANY: `asgd role`, whose role comes from TF_CONFIG or, left so by
 * cluster_parse, from the launcher's environment (engines.h). */
enum role { ROLE_ANY = -1, ROLE_PS, ROLE_WORKER, ROLE_EVALUATOR };
/* How a shard starts: fresh; from its checkpoint, if any, after a failure
 * (--restore: the time it was down counts); or from its checkpoint to go
 * on with an interrupted run (--resume: the time between does not). */
enum cluster_restore { RESTORE_NONE, RESTORE_RESTART, RESTORE_RESUME };

typedef struct cluster_spec {
    int role;                  /* enum role */
    int task;                  /* index within the role */
    int servers;
    char ps[CLUSTER_MAX_SERVERS][CLUSTER_ADDRESS_MAX];
    int workers;               /* 0: not given (take [cluster] workers) */
    bool evaluator;            /* servers wait for an evaluator's DONE */
    const char *run_dir;       /* NULL: the config's out/name/run_id */
    const char *keys;          /* CURVE keys' folder (NULL: [cluster] keys) */
    int restore;               /* enum cluster_restore: a shard takes up its checkpoint */
    int report_fd;             /* the evaluator's reports to its launcher; -1: none */
    const char *config_path;
    int noverrides;
    char **overrides;          /* section.key=value arguments */
} cluster_spec;

const char *cluster_role_name(int role);
/* role is the subcommand's; argv follows it (CONFIG first). */
int cluster_parse(cluster_spec *s, int role, int argc, char **argv, error *err);
void cluster_free(cluster_spec *s);

/* The keys role `self` ("server", "evaluator", "worker-K") needs when
 * curve is set, from --keys or else config_keys ([cluster] keys): 1 with
 * *a loaded (auth_free it), 0 when there is no authentication, -1 on a
 * missing or bad key or --keys without cluster.auth = curve. */
int cluster_auth(const cluster_spec *s, bool curve, const char *config_keys, const char *self,
                 net_auth *a, error *err);
/* Says on stderr, once per process, that endpoint can be reached from
 * other hosts while nothing authenticates its peers. */
void cluster_warn_open(const char *who, const char *endpoint);

#endif
