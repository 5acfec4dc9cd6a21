/* sagn.c: synchronous AGN, with backup workers.
 *
 *   worker, round r:  pull (wait for version >= r); lambda local steps;
 *                     push D / lambda with tag r
 *   server:           once K = N - backups have arrived,
 *                     theta~ <- theta~ + mean D, version r + 1; later
 *                     tag-r pushes are dropped and counted.
 *
 * A last round that the worker's budget cuts short pushes D divided by
 * the steps it took (the mean local step, as a full round's is). Rounds a
 * shard restored from a checkpoint lost are taken again past the budget,
 * as sync takes its: a worker that stopped would hold every round after. 
 *
 * Reference: tmulc18's SAGN, after Hermans (2017). */
#include <stdlib.h>
#include <string.h>

#include "algorithms/algorithm.h"
#include "algorithms/rulekit.h"
#include "algorithms/server.h"
#include "algorithms/worker.h"

typedef struct sagn_params {
    long window, backups;
} sagn_params;

static void *s_configure(config *c, const rule_context *ctx, rule_info *info, error *err)
{
    sagn_params *p = rule_params(sizeof *p, "sagn", err);
    if (p && (rule_plain_sgd(c, ctx, "sagn", NULL, err) < 0 ||
              rule_window(c, ctx, 5, &p->window, err) < 0 ||
              rule_backups(c, ctx, &p->backups, err) < 0)) {
        free(p);
        return NULL;
    }
    if (p) {
        info->round_leader = p->backups > 0;   /* rounds close without some workers */
        info->lockstep = true;
    }
    return p;
}

static int s_worker_run(worker *w)
{
    const sagn_params *p = w->params;
    uint64_t rounds = worker_rounds(w, p->window), round = 0;
    float *delta = malloc(w->nparams * sizeof *delta);
    int rc = delta ? 0 : -1;
    while (rc == 0) {
        if ((rc = worker_pull(w, round)) < 0) {
            break;
        }
        uint64_t version = worker_version(w);
        if (version >= rounds) {
            break;
        }
        memset(delta, 0, w->nparams * sizeof *delta);
        long steps = worker_local_window(w, delta, p->window);
        if (steps == 0) {   /* the budget is spent before the last round: a shard
                             * restored from a checkpoint lost rounds, which every
                             * worker must push again (as sync does) */
            steps = worker_local_steps(w, delta, p->window);
        }
        for (size_t i = 0; i < w->nparams; i++) {
            delta[i] /= (float)steps;
        }
        rc = worker_push(w, delta, version);
        round = version + 1;
    }
    worker_settle(w);
    free(delta);
    return rc;
}

static void s_on_push(server *s, const push_msg *m)
{
    const sagn_params *p = s->params;
    int needed = s->workers - (int)p->backups;
    if (server_round_add(s, m) < needed) {
        return;
    }
    server_add(s, server_round_sum(s), 1.0f / (float)needed);
    server_round_end(s);
}

const algorithm algorithm_sagn = {
    .version = ALGORITHM_VERSION,
    .name = "sagn",
    .summary = "synchronous AGN: rounds of lambda local steps, N - backups deltas averaged",
    .keys = "window (5), backups (0)",
    .configure = s_configure,
    .worker_run = s_worker_run,
    .server_on_push = s_on_push,
    .server_pull_ready = server_version_reached,
};
