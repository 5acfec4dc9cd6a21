/* sync.c: synchronous SGD with backup workers.
 *
 *   worker, round r:  pull (wait for version >= r); g = grad L(theta);
 *                     push s_k g with tag r          (s_k = worker_lr[k] / lr)
 *   server:           collect tag-r gradients; once K = N - backups have
 *                     arrived, theta~ <- opt(theta~, mean g) (or the sum),
 *                     version r + 1; later tag-r gradients are dropped and
 *                     counted.
 *
 * With worker_lr and aggregate = sum this is Synchronous SGD with different
 * learning rates: theta~ <- theta~ - sum_k lr_k g_k (for server SGD).
 * A worker's round is the version it pulled, so a restarted worker joins the
 * round in progress. Each shard's part of a gradient is pushed as soon as
 * the backward pass has made it final (worker_gradient_push: wait-free
 * backpropagation), so with several shards the last layers' gradients
 * travel and are collected while the first layers' are computed; the
 * values and rounds are the same. References: TensorFlow's SyncReplicasOptimizer; Chen,
 * Pan, Monga, Bengio, Jozefowicz, "Revisiting distributed synchronous SGD"
 * (2016) for backup workers. */
#include <stdlib.h>

#include "algorithms/algorithm.h"
#include "algorithms/rulekit.h"
#include "algorithms/server.h"
#include "algorithms/worker.h"

enum { AGGREGATE_MEAN, AGGREGATE_SUM };
static const char *const s_aggregates[] = {"mean", "sum", NULL};

typedef struct sync_params {
    int backups;
    int aggregate;
    float lr_scale[];         /* one per worker */
} sync_params;

static void *s_configure(config *c, const rule_context *ctx, rule_info *info, error *err)
{
    long backups;
    int aggregate, n;
    double *lrs = malloc((size_t)ctx->workers * sizeof *lrs);
    sync_params *p = calloc(1, sizeof *p + (size_t)ctx->workers * sizeof(float));
    if (!lrs || !p) {
        free(lrs);
        free(p);
        error_set(err, ERROR_RUNTIME, "sync: out of memory");
        return NULL;
    }
    if (rule_backups(c, ctx, &backups, err) < 0 ||
        config_get_enum(c, "algorithm", "aggregate", "mean", s_aggregates, &aggregate, err) < 0 ||
        config_get_double_list(c, "algorithm", "worker_lr", "", 0, 1e6, lrs, ctx->workers,
                               &n, err) < 0) {
        goto fail;
    }
    if (n != 0 && n != ctx->workers) {
        config_fail(c, "algorithm", "worker_lr", err, "%d learning rates for %d workers (give "
                    "one per worker, or none)", n, ctx->workers);
        goto fail;
    }
    double most = 0;
    for (int k = 0; k < n; k++) {
        most = lrs[k] > most ? lrs[k] : most;
    }
    if (n != 0 && most == 0) {   /* nothing would train, without a word */
        config_fail(c, "algorithm", "worker_lr", err, "every rate is 0: no worker would move "
                    "the model");
        goto fail;
    }
    p->backups = (int)backups;
    p->aggregate = aggregate;
    for (int k = 0; k < ctx->workers; k++) {
        p->lr_scale[k] = n ? (float)(lrs[k] / ctx->optim->lr) : 1.0f;
    }
    free(lrs);
    info->server_threads = 1;
    info->round_leader = backups > 0;   /* rounds close without some workers */
    info->lockstep = true;
    return p;
fail:
    free(lrs);
    free(p);
    return NULL;
}

static int s_worker_run(worker *w)
{
    const sync_params *p = w->params;
    float scale = p->lr_scale[w->id];
    uint64_t round = 0;
    for (;;) {
        if (worker_pull(w, round) < 0) {
            return -1;
        }
        uint64_t version = worker_version(w);
        if (version >= (uint64_t)w->budget) {
            return 0;
        }
        if (worker_gradient_push(w, version, scale) < 0) {   /* each part as soon as final */
            return -1;
        }
        round = version + 1;
    }
}

static void s_on_push(server *s, const push_msg *m)
{
    const sync_params *p = s->params;
    int needed = s->workers - p->backups;
    if (server_round_add(s, m) < needed) {
        return;
    }
    float *sum = server_round_sum(s);
    if (p->aggregate == AGGREGATE_MEAN) {
        for (size_t i = 0; i < s->n; i++) {
            sum[i] /= (float)needed;
        }
    }
    server_step(s, sum);
    server_round_end(s);
}

const algorithm algorithm_sync = {
    .version = ALGORITHM_VERSION,
    .name = "sync",
    .summary = "synchronous SGD: average N - backups gradients per round",
    .keys = "backups (0), aggregate (mean|sum), worker_lr (one per worker; empty)",
    .configure = s_configure,
    .worker_run = s_worker_run,
    .server_on_push = s_on_push,
    .server_pull_ready = server_version_reached,
};
