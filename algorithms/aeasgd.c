/* aeasgd.c: asynchronous Elastic Averaging SGD.
 *
 *   worker:  lambda local SGD steps; pull theta~ (no wait);
 *            E = alpha (theta - theta~); theta <- theta - E; push E
 *   server:  theta~ <- theta~ + E at once
 *
 * alpha defaults to 0.9 / N; alpha = 0 leaves the centre unchanged.
 * Reference: Zhang, Choromanska, LeCun (NIPS 2015), algorithm 1; as
 * dist-keras's AEASGD. */
#include <stdlib.h>

#include "algorithms/algorithm.h"
#include "algorithms/server.h"
#include "algorithms/worker.h"

typedef struct aeasgd_params {
    long window;
    float alpha;
} aeasgd_params;

static void *s_configure(config *c, const rule_context *ctx, rule_info *info, error *err)
{
    (void)info;
    aeasgd_params *p = malloc(sizeof *p);
    double alpha;
    if (!p) {
        error_set(err, ERROR_RUNTIME, "aeasgd: out of memory");
        return NULL;
    }
    if (config_get_int(c, "algorithm", "window", 10, 1, 1 << 20, &p->window, err) < 0 ||
        config_get_double(c, "algorithm", "alpha", 0.9 / ctx->workers, 0, 1, CONFIG_CLOSED,
                          &alpha, err) < 0) {
        free(p);
        return NULL;
    }
    p->alpha = (float)alpha;
    return p;
}

static int s_worker_run(worker *w)
{
    const aeasgd_params *p = w->params;
    float *center = malloc(w->nparams * sizeof *center);
    float *elastic = malloc(w->nparams * sizeof *elastic);
    int rc = center && elastic ? worker_pull(w, 0) : -1;
    while (rc == 0 && !worker_done(w)) {
        for (long i = 0; i < p->window && !worker_done(w); i++) {
            worker_gradient(w);
            worker_local_step(w);
        }
        if ((rc = worker_pull_into(w, center, 0)) < 0) {
            break;
        }
        worker_elastic(w->theta, elastic, center, p->alpha, w->nparams);
        rc = worker_push(w, elastic, 0);
    }
    worker_settle(w);
    free(center);
    free(elastic);
    return rc;
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
    .server_on_push = s_on_push,
    .server_pull_ready = server_always_ready,
};
