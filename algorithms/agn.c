/* agn.c: Accumulated Gradient Normalization (dist-keras's ADAG).
 *
 *   worker:  pull theta; lambda local steps theta <- theta - lr g;
 *            push D = (theta - theta_pulled) / lambda
 *   server:  theta~ <- theta~ + D at once
 *
 * D is the exact sum of the local steps applied (worker_local_window), so
 * with window = 1 it is -lr g and AGN is Hogwild. A last window that the
 * worker's budget cuts short is divided by the steps it took, not lambda:
 * D is the mean local step, as a full window's is. Reference: Hermans,
 * "On scalable deep learning and parallelizing gradient descent" (2017).
 *
 * With [algorithm] prefetch = on the next window's pull goes out before
 * this window's last step (worker_run_windows): communication overlaps
 * that step, and the next window starts from a centre without this
 * worker's last push (one more of staleness, counted as any other). */
#include <stdlib.h>

#include "algorithms/algorithm.h"
#include "algorithms/rulekit.h"
#include "algorithms/server.h"
#include "algorithms/worker.h"

typedef struct agn_params {
    long window;
} agn_params;

static void *s_configure(config *c, const rule_context *ctx, rule_info *info, error *err)
{
    (void)info;
    agn_params *p = rule_params(sizeof *p, "agn", err);
    if (p && (rule_plain_sgd(c, ctx, "agn", NULL, err) < 0 ||
              rule_window(c, ctx, 5, &p->window, err) < 0)) {
        free(p);
        return NULL;
    }
    return p;
}

static int s_worker_run(worker *w)
{
    const agn_params *p = w->params;
    return worker_run_windows(w, p->window, true);
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
    .prefetch = true,
    .server_on_push = s_on_push,
    .server_pull_ready = server_always_ready,
};
