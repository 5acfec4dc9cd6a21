/* agn.c: Accumulated Gradient Normalization (dist-keras's ADAG).
 *
 *   worker:  pull theta; lambda local steps theta <- theta - lr g;
 *            push D = (theta - theta_pulled) / lambda
 *   server:  theta~ <- theta~ + D at once
 *
 * D is the exact sum of the local steps applied (worker_local_window), so
 * with window = 1 it is -lr g and AGN is Hogwild. Reference: Hermans,
 * "On scalable deep learning and parallelizing gradient descent" (2017). */
#include <stdlib.h>
#include <string.h>

#include "algorithms/algorithm.h"
#include "algorithms/server.h"
#include "algorithms/worker.h"

typedef struct agn_params {
    long window;
} agn_params;

static void *s_configure(config *c, const rule_context *ctx, rule_info *info, error *err)
{
    (void)ctx;
    (void)info;
    agn_params *p = malloc(sizeof *p);
    if (!p || config_get_int(c, "algorithm", "window", 5, 1, 1 << 20, &p->window, err) < 0) {
        if (!p) {
            error_set(err, ERROR_RUNTIME, "agn: out of memory");
        }
        free(p);
        return NULL;
    }
    return p;
}

static int s_worker_run(worker *w)
{
    const agn_params *p = w->params;
    float *delta = malloc(w->nparams * sizeof *delta);
    int rc = delta ? 0 : -1;
    while (rc == 0 && !worker_done(w)) {
        if ((rc = worker_pull(w, 0)) < 0) {
            break;
        }
        memset(delta, 0, w->nparams * sizeof *delta);
        long steps = worker_local_window(w, delta, p->window);
        for (size_t i = 0; i < w->nparams; i++) {
            delta[i] /= (float)steps;
        }
        rc = worker_push(w, delta, 0);
    }
    worker_settle(w);
    free(delta);
    return rc;
}

static void s_on_push(server *s, const push_msg *m)
{
    server_record_applied(s, m);
    server_add(s, m->values, 1.0f);
}

const algorithm algorithm_agn = {
    .version = ALGORITHM_VERSION,
    .name = "agn",
    .summary = "AGN / ADAG: lambda local steps, their mean pushed and added at once",
    .keys = "window (5)",
    .configure = s_configure,
    .worker_run = s_worker_run,
    .server_on_push = s_on_push,
    .server_pull_ready = server_always_ready,
};
