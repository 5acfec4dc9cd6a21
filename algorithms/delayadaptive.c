/* delayadaptive.c: asynchronous SGD with delay-adaptive step sizes.
 *
 *   worker:  pull theta; g = the gradient at what it pulled; push g
 *   server:  tau = version - the version g was computed on;
 *            theta <- theta - lr * min(1, N / tau) * g     (N: the workers)
 *
 * A push at most N updates stale takes the full step; a staler one a step
 * shrunk in proportion, which is what gives the rule its guarantee under
 * arbitrary delays (the authors' code writes lr * N / max(N, tau)). With
 * one worker tau is 0 and it is sequential SGD. No keys of its own.
 *
 * Reference: Mishchenko, Bach, Even, Woodworth, "Asynchronous SGD Beats
 * Minibatch SGD Under Arbitrary Delays" (NeurIPS 2022), section 3.
 *
 * With [algorithm] prefetch = on the next pull goes out before the
 * gradient (worker_run_gradients): communication overlaps compute, and
 * each gradient is computed on parameters without this worker's previous
 * push (one more of staleness, counted as any other). */
#include <stdlib.h>

#include "algorithms/algorithm.h"
#include "algorithms/rulekit.h"
#include "algorithms/server.h"
#include "algorithms/worker.h"

typedef struct delayadaptive_params {
    float lr;
    int workers;
} delayadaptive_params;

static void *s_configure(config *c, const rule_context *ctx, rule_info *info, error *err)
{
    (void)info;
    float lr;
    if (rule_plain_sgd(c, ctx, "delayadaptive", &lr, err) < 0) {
        return NULL;
    }
    delayadaptive_params *p = rule_params(sizeof *p, "delayadaptive", err);
    if (p) {
        *p = (delayadaptive_params){.lr = lr, .workers = ctx->workers};
    }
    return p;
}

static void s_on_push(server *s, const push_msg *m)
{
    const delayadaptive_params *p = s->params;
    uint64_t tau = server_push_staleness(s, m);
    float scale = tau > (uint64_t)p->workers ? (float)p->workers / (float)tau : 1.0f;
    server_record_applied(s, m);
    server_add(s, m->values, -p->lr * scale);
}

const algorithm algorithm_delayadaptive = {
    .version = ALGORITHM_VERSION,
    .name = "delayadaptive",
    .summary = "asynchronous SGD with delay-adaptive steps: a gradient tau updates stale steps "
               "lr * min(1, workers / tau)",
    .keys = "",
    .configure = s_configure,
    .worker_run = worker_run_gradients,
    .prefetch = true,
    .server_on_push = s_on_push,
    .server_pull_ready = server_always_ready,
};
