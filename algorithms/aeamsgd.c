/* aeamsgd.c: asynchronous Elastic Averaging Momentum SGD (EAMSGD).
 *
 *   worker:  lambda local Nesterov steps,
 *              v <- delta v - lr grad L(x + delta v);  x <- x + v,
 *            then pull theta~ (no wait); E = alpha (x - theta~);
 *            x <- x - E; push E
 *   server:  theta~ <- theta~ + E at once
 *
 * v is the velocity (it points downhill), so the gradient is taken ahead,
 * at x + delta v. dist-keras's EAMSGD keeps the negative velocity and looks
 * ahead uphill; this does not. Reference: Zhang, Choromanska, LeCun (NIPS
 * 2015), algorithm 2.
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

typedef struct aeamsgd_params {
    long window;
    float alpha, momentum, lr;
} aeamsgd_params;

static void *s_configure(config *c, const rule_context *ctx, rule_info *info, error *err)
{
    (void)info;
    aeamsgd_params *p = rule_params(sizeof *p, "aeamsgd", err);
    double momentum;
    if (p && (rule_plain_sgd(c, ctx, "aeamsgd", &p->lr, err) < 0 ||
              rule_window(c, ctx, 10, &p->window, err) < 0 ||
              rule_alpha(c, ctx, &p->alpha, err) < 0 ||
              config_get_double(c, "algorithm", "momentum", 0.9, 0, 1, CONFIG_OPEN_HI,
                                &momentum, err) < 0)) {
        free(p);
        return NULL;
    }
    if (p) {
        p->momentum = (float)momentum;
    }
    return p;
}

/* One Nesterov step on x with velocity v (ctx): the gradient is taken
 * ahead, at w->theta = x + d v. */
static void s_nesterov_step(worker *w, float *x, void *ctx)
{
    const aeamsgd_params *p = w->params;
    const float d = p->momentum;
    float *v = ctx;
    for (size_t i = 0; i < w->nparams; i++) {
        w->theta[i] = x[i] + d * v[i];
    }
    worker_gradient(w);
    for (size_t i = 0; i < w->nparams; i++) {
        v[i] = d * v[i] - p->lr * w->grad[i];
        x[i] += v[i];
    }
}

static int s_worker_run(worker *w)
{
    const aeamsgd_params *p = w->params;
    /* x is the worker's parameters; w->theta is where gradients are taken */
    float *x = malloc(w->nparams * sizeof *x), *v = calloc(w->nparams, sizeof *v);
    int rc = x && v ? worker_run_elastic(w, x, p->alpha, p->window, s_nesterov_step, v) : -1;
    free(x);
    free(v);
    return rc;
}

static void s_on_push(server *s, const push_msg *m)
{
    server_record_applied(s, m);
    server_add(s, m->values, 1.0f);
}

const algorithm algorithm_aeamsgd = {
    .version = ALGORITHM_VERSION,
    .name = "aeamsgd",
    .summary = "asynchronous EASGD with Nesterov momentum on the local steps",
    .keys = "window (10), alpha (0.9 / workers), momentum (0.9)",
    .configure = s_configure,
    .worker_run = s_worker_run,
    .prefetch = true,
    .server_on_push = s_on_push,
    .server_pull_ready = server_always_ready,
};
