/* hogwild.c: Hogwild, asynchronous SGD without waiting.
 *
 *   worker:  pull (no wait); g = grad L(theta); push g
 *   server:  theta~ <- theta~ - lr g at once
 *
 * With server_threads > 1 each shard applies pushes from several threads at
 * once: pushes interleave, and pulls read parameters mid-update, which is
 * the point of Hogwild; each element's update is atomic, as the paper
 * assumes (server_add's stripes), so none is lost. Reference: Niu, Recht,
 * Re, Wright, "Hogwild!: A lock-free approach to parallelizing stochastic
 * gradient descent" (NIPS 2011).
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

typedef struct hogwild_params {
    float lr;
} hogwild_params;

static void *s_configure(config *c, const rule_context *ctx, rule_info *info, error *err)
{
    long threads;
    if (config_get_int(c, "algorithm", "server_threads", 1, 1, 64, &threads, err) < 0) {
        return NULL;
    }
    float lr;
    if (rule_plain_sgd(c, ctx, "hogwild", &lr, err) < 0) {
        return NULL;
    }
    hogwild_params *p = rule_params(sizeof *p, "hogwild", err);
    if (!p) {
        return NULL;
    }
    p->lr = lr;
    info->server_threads = (int)threads;
    return p;
}

static void s_on_push(server *s, const push_msg *m)
{
    const hogwild_params *p = s->params;
    server_record_applied(s, m);
    server_add(s, m->values, -p->lr);
}

const algorithm algorithm_hogwild = {
    .version = ALGORITHM_VERSION,
    .name = "hogwild",
    .summary = "asynchronous SGD: every gradient applied at once, from several threads if asked",
    .keys = "server_threads (1)",
    .configure = s_configure,
    .worker_run = worker_run_gradients,
    .prefetch = true,
    .server_on_push = s_on_push,
    .server_pull_ready = server_always_ready,
};
