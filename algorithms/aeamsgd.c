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
 * 2015), algorithm 2. */
#include <stdlib.h>

#include "algorithms/algorithm.h"
#include "algorithms/server.h"
#include "algorithms/worker.h"

typedef struct aeamsgd_params {
    long window;
    float alpha, momentum, lr;
} aeamsgd_params;

static void *s_configure(config *c, const rule_context *ctx, rule_info *info, error *err)
{
    (void)info;
    aeamsgd_params *p = malloc(sizeof *p);
    double alpha, momentum;
    if (!p) {
        error_set(err, ERROR_RUNTIME, "aeamsgd: out of memory");
        return NULL;
    }
    if (config_get_int(c, "algorithm", "window", 10, 1, 1 << 20, &p->window, err) < 0 ||
        config_get_double(c, "algorithm", "alpha", 0.9 / ctx->workers, 0, 1, CONFIG_CLOSED,
                          &alpha, err) < 0 ||
        config_get_double(c, "algorithm", "momentum", 0.9, 0, 1, CONFIG_OPEN_HI, &momentum,
                          err) < 0) {
        free(p);
        return NULL;
    }
    p->alpha = (float)alpha;
    p->momentum = (float)momentum;
    p->lr = (float)ctx->optim->lr;
    return p;
}

static int s_worker_run(worker *w)
{
    const aeamsgd_params *p = w->params;
    const float d = p->momentum;
    size_t n = w->nparams;
    /* x is the worker's parameters; w->theta is where gradients are taken */
    float *x = malloc(n * sizeof *x), *v = calloc(n, sizeof *v);
    float *center = malloc(n * sizeof *center), *elastic = malloc(n * sizeof *elastic);
    int rc = x && v && center && elastic ? worker_pull_into(w, x, 0) : -1;
    while (rc == 0 && !worker_done(w)) {
        for (long k = 0; k < p->window && !worker_done(w); k++) {
            for (size_t i = 0; i < n; i++) {
                w->theta[i] = x[i] + d * v[i];
            }
            worker_gradient(w);
            for (size_t i = 0; i < n; i++) {
                v[i] = d * v[i] - p->lr * w->grad[i];
                x[i] += v[i];
            }
        }
        if ((rc = worker_pull_into(w, center, 0)) < 0) {
            break;
        }
        worker_elastic(x, elastic, center, p->alpha, n);
        rc = worker_push(w, elastic, 0);
    }
    worker_settle(w);
    free(x);
    free(v);
    free(center);
    free(elastic);
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
    .server_on_push = s_on_push,
    .server_pull_ready = server_always_ready,
};
