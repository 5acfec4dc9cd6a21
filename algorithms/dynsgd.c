/* dynsgd.c: DynSGD, staleness-aware asynchronous updates.
 *
 *   worker:  pull theta (noting the version v); lambda local steps;
 *            push D = theta - theta_pulled with base version v
 *   server:  tau = version - v;  theta~ <- theta~ + D / (tau + 1)
 *
 * Reference: Jiang, Cui, Zhang, Yu, "Heterogeneity-aware distributed
 * parameter servers" (SIGMOD 2017), as implemented in dist-keras. */
#include <stdlib.h>
#include <string.h>

#include "algorithms/algorithm.h"
#include "algorithms/server.h"
#include "algorithms/worker.h"

typedef struct dynsgd_params {
    long window;
} dynsgd_params;

static void *s_configure(config *c, const rule_context *ctx, rule_info *info, error *err)
{
    (void)ctx;
    (void)info;
    dynsgd_params *p = malloc(sizeof *p);
    if (!p || config_get_int(c, "algorithm", "window", 5, 1, 1 << 20, &p->window, err) < 0) {
        if (!p) {
            error_set(err, ERROR_RUNTIME, "dynsgd: out of memory");
        }
        free(p);
        return NULL;
    }
    return p;
}

static int s_worker_run(worker *w)
{
    const dynsgd_params *p = w->params;
    float *delta = malloc(w->nparams * sizeof *delta);
    int rc = delta ? 0 : -1;
    while (rc == 0 && !worker_done(w)) {
        if ((rc = worker_pull(w, 0)) < 0) {
            break;
        }
        memset(delta, 0, w->nparams * sizeof *delta);
        worker_local_window(w, delta, p->window);
        rc = worker_push(w, delta, 0);   /* carries the pulled versions */
    }
    worker_settle(w);
    free(delta);
    return rc;
}

static void s_on_push(server *s, const push_msg *m)
{
    uint64_t version = s->version;
    uint64_t tau = version > m->base_version ? version - m->base_version : 0;
    server_record_applied(s, m);   /* records the same tau as staleness */
    server_add(s, m->values, 1.0f / (float)(tau + 1));
}

const algorithm algorithm_dynsgd = {
    .version = ALGORITHM_VERSION,
    .name = "dynsgd",
    .summary = "DynSGD: local steps pushed, scaled at the server by 1 / (staleness + 1)",
    .keys = "window (5)",
    .configure = s_configure,
    .worker_run = s_worker_run,
    .server_on_push = s_on_push,
    .server_pull_ready = server_always_ready,
};
