/* experiment.h: everything a run needs, read from one config.
 *
 * experiment_configure() reads every key the run will use (so that typos
 * are caught, via config_check_unused, before any data is loaded);
 * experiment_load() then loads the data. The trainers take the result. */
#ifndef ASGD_EXPERIMENT_H
#define ASGD_EXPERIMENT_H

#include <stdbool.h>

#include "algorithms/algorithm.h"
#include "algorithms/worker.h"
#include "core/backend/backend.h"
#include "core/compress.h"
#include "core/config.h"
#include "core/faults.h"
#include "core/data.h"
#include "core/error.h"
#include "core/model.h"
#include "core/optim.h"
#include "core/simtime.h"
#include "core/summary.h"

enum run_mode { MODE_REAL, MODE_SIM, MODE_THREADS };
enum cluster_transport { TRANSPORT_IPC, TRANSPORT_TCP };
/* Kubeflow's restart policies, applied to workers. */
enum restart_policy { RESTART_NEVER, RESTART_ON_FAILURE, RESTART_EXIT_CODE };
/* How peers prove who they are: not at all, or with CurveZMQ keys. */
enum cluster_auth { AUTH_NONE, AUTH_CURVE };

typedef struct experiment {
    config *c;
    /* [experiment] */
    const char *name, *out_root, *run_id;
    const char *label;       /* how figures name the run (default: the algorithm) */
    unsigned long seed;
    int mode;                /* enum run_mode */
    /* [data] */
    data_spec data;
    int partition;           /* enum partition_kind */
    double partition_alpha;
    /* [model] */
    model_spec model;
    /* [train] */
    const char *algorithm_name;
    const algorithm *alg;    /* NULL for the sequential baseline */
    void *rule;              /* the rule's parameters (alg->configure) */
    rule_info rule_info;
    compress_spec compress;  /* [algorithm] compress, error_feedback: any rule's pushes */
    bool prefetch;           /* [algorithm] prefetch: the next pull overlaps the gradient */
    double epochs;
    long batch;
    optim_spec optim;
    /* [eval] */
    double eval_every;       /* seconds of run time; 0 = only start and end */
    long eval_batch;
    long steps_every;        /* record every k-th step in steps.csv */
    /* [cluster], for distributed rules */
    int workers, servers;
    int transport;           /* enum cluster_transport */
    const char *host;
    long port;               /* first shard's port; 0 = any free ones */
    int restart;             /* enum restart_policy */
    long backoff_limit;      /* restarts allowed in the whole job */
    double timeout;          /* seconds a peer may stay silent */
    double resend;           /* seconds without an answer before a request goes again */
    int auth;                /* enum cluster_auth */
    const char *keys;        /* the CURVE keys' folder ("": the launcher makes them) */
    bool shm;                /* [cluster] shm = auto: clients share segments with the
                                shards of their host (transport/shm.h) */
    fault_spec faults;       /* latency, jitter, drop, duplicate (core/faults.h) */
    trace replay;            /* cluster.trace: a device trace real workers replay (n 0: none) */
    /* [checkpoint] */
    double checkpoint_every; /* seconds between a shard's checkpoints; 0: only when stopped */
    /* [backend] */
    backend_spec backend;
    /* [sim] */
    sim_spec sim;
    /* loaded by experiment_load */
    dataset train, test;
    /* the training set's shape and the model's size: experiment_load or
     * experiment_check */
    long n_train;
    int dim, classes;
    double load_s;           /* seconds experiment_load took: start-up in one process */
    size_t nparams;
    /* keys asgd knows that this configuration does not use: one line each,
     * for the caller to print */
    char warnings[2048];
} experiment;

const char *experiment_mode_name(int mode);

/* A cluster's shape fixed from outside the config: the role commands'
 * host lists or TF_CONFIG. 0 keeps [cluster]'s value. */
typedef struct experiment_shape {
    int workers, servers;
} experiment_shape;

/* Loads path (NULL: defaults only), applies the overrides, reads every key
 * (the rule's own through its configure) and rejects unknown ones; shape
 * (may be NULL) replaces [cluster] workers and servers before any rule
 * sees them. On failure *e is left empty. */
int experiment_configure(experiment *e, const char *path, int noverrides,
                         char **overrides, const experiment_shape *shape, error *err);
int experiment_load(experiment *e, error *err);
/* Every check experiment_load makes on the data and the model's shape,
 * without keeping the data, and that [cluster] keys (with auth = curve) is
 * a folder: for a launcher whose processes load them. */
int experiment_check(experiment *e, error *err);
/* What only a run about to train must pass, after experiment_load or
 * experiment_check (asgd eval and calibrate of an older run need not):
 * train.epochs of at least half a round of a lockstep rule's workers (an
 * asynchronous rule with fewer minibatches than workers is warned about),
 * and a label-skew split that gives every worker examples (the labels
 * loaded for it where experiment_check left the data unloaded). Errors
 * name the key (ERROR_USAGE). */
int experiment_check_training(experiment *e, error *err);
/* The backend a process or thread of e computes with: e's, but for a
 * threads run's, which takes one BLAS thread where backend.threads = 0
 * (its workers are the parallelism), and ordinal's GPU. asgd eval takes
 * the evaluator's (ordinal 0), so that it rounds as the run did. */
backend_spec experiment_backend_spec(const experiment *e, int ordinal);
/* Whether e's real workers pass values through shared segments with the
 * shards of their host: [cluster] shm, without compression or injected
 * faults (core/real/peers.c). */
bool experiment_shares_segments(const experiment *e);
/* The settings every process of a distributed job shares, whatever its
 * host and role, as config_settings writes them: [data] (but where its
 * files are), [model], [train], [algorithm] (but a shard's apply
 * threads) and experiment.seed; NULL when out of memory (the caller frees
 * it). A checkpoint keeps them: a shard restores only its own job's. */
char *experiment_settings(const experiment *e);
/* A hash of them, never 0 (the wire's "none given"). A worker of another
 * hash computes another experiment: wire.h carries it, and a shard takes
 * nothing from one whose hash differs from its own. */
uint32_t experiment_job(const experiment *e);
/* A summary with the run's identity filled in (algorithm, label, model,
 * mode, data set, cluster shape, seed, parameter count, epochs). */
void experiment_summary(const experiment *e, run_summary *sum);
/* The configurations read to learn every key asgd reads (for "unknown key"
 * and experiment_value_text), and in *failed how many stopped at an error
 * and so read fewer keys than they should (a test's: 0). */
int experiment_known_variants(int *failed);
/* value as asgd reads section.key (config_value_as_read over every key
 * asgd reads): for comparing and grouping run folders' config.ini values. */
void experiment_value_text(const char *section, const char *key, const char *value, char *out,
                           size_t n);
/* Whether asgd reads section.key in some configuration (a key it knows,
 * which this or that configuration may leave unread). */
bool experiment_knows_key(const char *section, const char *key);
/* Minibatches of every worker together: train.epochs passes over n_train
 * examples. */
long experiment_total_steps(const experiment *e, long n_train);
/* A worker's share of them, unrounded: a lockstep rule's budget is its
 * nearest whole number (worker_budget), one worker's the total. */
double experiment_share(const experiment *e, long n_train);
/* The worker skeleton's view of the run, for n_train training examples. */
worker_spec experiment_worker_spec(const experiment *e, long n_train);
void experiment_destroy(experiment *e);

#endif
