/* aeasgd.c: asynchronous Elastic Averaging SGD.
 *
 *   worker:  lambda local SGD steps; pull theta~ (no wait);
 *            E = alpha (theta - theta~); theta <- theta - E; push E
 *   server:  theta~ <- theta~ + E at once
 *
 * alpha defaults to 0.9 / N; alpha = 0 leaves the centre unchanged.
 * Reference: Zhang, Choromanska, LeCun (NIPS 2015), algorithm 1; as
 * dist-keras's AEASGD.
 *
 * With [algorithm] prefetch = on the centre's pull goes out before the
 * window's last local step (worker_run_elastic): communication overlaps
 * that step, and the elastic force is taken against a centre that misses
 * what other workers pushed during it; with one worker nothing changes. */
#include <stdlib.h>

#include "algorithms/algorithm.h"
#include "algorithms/rulekit.h"
#include "algorithms/server.h"
#include "algorithms/worker.h"

typedef struct aeasgd_params {
    long window;
    float alpha;
} aeasgd_params;

static void *s_configure(config *c, const rule_context *ctx, rule_info *info, error *err)
{
    (void)info;
    aeasgd_params *p = rule_params(sizeof *p, "aeasgd", err);
    if (p && (rule_plain_sgd(c, ctx, "aeasgd", NULL, err) < 0 ||
              rule_window(c, ctx, 10, &p->window, err) < 0 ||
              rule_alpha(c, ctx, &p->alpha, err) < 0)) {
        free(p);
        return NULL;
    }
    return p;
}

/* One local step: the gradient at x = theta, the local optimizer. */
static void s_local_step(worker *w, float *x, void *ctx)
{
    (void)x;
    (void)ctx;
    worker_gradient(w);
    worker_local_step(w);
}

static int s_worker_run(worker *w)
{
    const aeasgd_params *p = w->params;
    return worker_run_elastic(w, w->theta, p->alpha, p->window, s_local_step, NULL);
}

static void s_on_push(server *s, const push_msg *m)
{
    server_record_applied(s, m);
    server_add(s, m->values, 1.0f);
}

const algorithm algorithm_aeasgd = {
    .version = ALGORITHM_VERSION,
    .name = "aeasgd",
    .summary = "asynchronous EASGD: elastic exchanges with the centre, applied at once",
    .keys = "window (10), alpha (0.9 / workers; 0 = independent workers)",
    .configure = s_configure,
    .worker_run = s_worker_run,
    .prefetch = true,
    .server_on_push = s_on_push,
    .server_pull_ready = server_always_ready,
};
