/* average.c: synchronous model averaging, the worked example of
 * experiments/writing-a-rule.
 *
 *   worker, round r:  `window` local steps; push theta with tag r;
 *                     pull the average (wait for version r + 1)
 *   server:           once all N have arrived, theta~ <- mean theta,
 *                     version r + 1
 *
 * Reference: Zinkevich, Weimer, Smola, Li, "Parallelized stochastic
 * gradient descent" (NIPS 2010) averages once at the end; averaging every
 * window steps is local SGD (Stich, ICLR 2019). */
#include <stdlib.h>

#include "algorithms/algorithm.h"
#include "algorithms/rulekit.h"
#include "algorithms/server.h"
#include "algorithms/worker.h"

typedef struct average_params {
    long window;
} average_params;

static void *s_configure(config *c, const rule_context *ctx, rule_info *info, error *err)
{
    (void)ctx;
    average_params *p = rule_params(sizeof *p, "average", err);
    if (p && rule_window(c, 10, &p->window, err) < 0) {
        free(p);
        return NULL;
    }
    info->lockstep = true;
    return p;
}

static int s_worker_run(worker *w)
{
    const average_params *p = w->params;
    uint64_t rounds = worker_rounds(w, p->window);
    if (worker_pull(w, 0) < 0) {
        return -1;
    }
    for (uint64_t round = worker_version(w); round < rounds; round = worker_version(w)) {
        for (long i = 0; i < p->window && !worker_done(w); i++) {
            worker_gradient(w);
            worker_local_step(w);
        }
        if (worker_push(w, w->theta, round) < 0 || worker_pull(w, round + 1) < 0) {
            return -1;
        }
    }
    return 0;
}

static void s_on_push(server *s, const push_msg *m)
{
    if (server_round_add(s, m) < s->workers) {
        return;
    }
    float *sum = server_round_sum(s);
    for (size_t i = 0; i < s->n; i++) {
        sum[i] /= (float)s->workers;
    }
    server_assign(s, sum);
    server_round_end(s);
}

const algorithm algorithm_average = {
    .version = ALGORITHM_VERSION,
    .name = "average",
    .summary = "model averaging: every window local steps, the centre becomes the mean",
    .keys = "window (10)",
    .configure = s_configure,
    .worker_run = s_worker_run,
    .server_on_push = s_on_push,
    .server_pull_ready = server_version_reached,
};
