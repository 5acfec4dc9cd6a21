/* average.c: synchronous model averaging, the worked example of
 * experiments/writing-a-rule.
 *
 *   worker, round r:  `window` local steps ([train] optimizer, its
 *                     state kept across rounds); push theta with tag r;
 *                     pull the average (wait for version r + 1)
 *   server:           once all N have arrived, theta~ <- mean theta,
 *                     version r + 1
 *
 * Post-local SGD (switch_epoch > 0): the rounds of the first switch_epoch
 * epochs take one local step each, which is synchronous minibatch SGD
 * (the mean of theta - lr g_i is theta - lr mean g_i); the rest take
 * `window`. Keys: window (10), switch_epoch (0: local from the start; at
 * most train.epochs).
 *
 * Reference: Zinkevich, Weimer, Smola, Li, "Parallelized stochastic
 * gradient descent" (NIPS 2010) averages once at the end; averaging every
 * window steps is local SGD (Stich, ICLR 2019); post-local SGD is Lin,
 * Stich, Patel, Jaggi, "Don't Use Large Mini-Batches, Use Local SGD"
 * (ICLR 2020). */
#include <math.h>
#include <stdlib.h>

#include "algorithms/algorithm.h"
#include "algorithms/rulekit.h"
#include "algorithms/server.h"
#include "algorithms/worker.h"

typedef struct average_params {
    long window;
    double switch_share;      /* switch_epoch / epochs: the synchronous share */
} average_params;

static void *s_configure(config *c, const rule_context *ctx, rule_info *info, error *err)
{
    average_params *p = rule_params(sizeof *p, "average", err);
    double switch_epoch;
    if (!p || rule_window(c, ctx, 10, &p->window, err) < 0 ||
        config_get_double(c, "algorithm", "switch_epoch", 0, 0, ctx->epochs, CONFIG_CLOSED,
                          &switch_epoch, err) < 0) {
        free(p);
        return NULL;
    }
    p->switch_share = switch_epoch > 0 ? switch_epoch / ctx->epochs : 0;
    info->lockstep = true;
    info->pushes_models = true;
    return p;
}

static int s_worker_run(worker *w)
{
    const average_params *p = w->params;
    /* the first sync_rounds rounds take one step each */
    uint64_t sync_rounds = (uint64_t)llround((double)w->budget * p->switch_share);
    uint64_t rounds = sync_rounds + (uint64_t)((w->budget - (long)sync_rounds + p->window - 1) /
                                               p->window);
    if (worker_pull(w, 0) < 0) {
        return -1;
    }
    for (uint64_t round = worker_version(w); round < rounds; round = worker_version(w)) {
        long steps = round < sync_rounds ? 1 : p->window;
        for (long i = 0; i < steps && !worker_done(w); i++) {
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
    .summary = "model averaging (local SGD): every window local steps, the centre becomes the "
               "mean; post-local SGD with switch_epoch",
    .keys = "window (10), switch_epoch (0: post-local SGD off)",
    .configure = s_configure,
    .worker_run = s_worker_run,
    .server_on_push = s_on_push,
    .server_pull_ready = server_version_reached,
};
