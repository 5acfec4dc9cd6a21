/* dynsgd.c: DynSGD, staleness-aware asynchronous updates.
 *
 *   worker:  pull theta (noting the version v); lambda local steps;
 *            push D = theta - theta_pulled with base version v
 *   server:  tau = version - v;  theta~ <- theta~ + D / (tau + 1)
 *
 * Reference: Jiang, Cui, Zhang, Yu, "Heterogeneity-aware distributed
 * parameter servers" (SIGMOD 2017), as implemented in dist-keras.
 *
 * With [algorithm] prefetch = on the next window's pull goes out before
 * this window's last step (worker_run_windows): communication overlaps
 * that step, and the next window starts from a centre without this
 * worker's last push, so its tau is one higher and its delta scaled the
 * more (with one worker tau is 1, not 0, for every push but the first). */
#include <stdlib.h>

#include "algorithms/algorithm.h"
#include "algorithms/rulekit.h"
#include "algorithms/server.h"
#include "algorithms/worker.h"

typedef struct dynsgd_params {
    long window;
} dynsgd_params;

static void *s_configure(config *c, const rule_context *ctx, rule_info *info, error *err)
{
    (void)info;
    dynsgd_params *p = rule_params(sizeof *p, "dynsgd", err);
    if (p && (rule_plain_sgd(c, ctx, "dynsgd", NULL, err) < 0 ||
              rule_window(c, ctx, 5, &p->window, err) < 0)) {
        free(p);
        return NULL;
    }
    return p;
}

static int s_worker_run(worker *w)
{
    const dynsgd_params *p = w->params;
    return worker_run_windows(w, p->window, false);
}

static void s_on_push(server *s, const push_msg *m)
{
    uint64_t tau = server_push_staleness(s, m);
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
    .prefetch = true,
    .server_on_push = s_on_push,
    .server_pull_ready = server_always_ready,
};
