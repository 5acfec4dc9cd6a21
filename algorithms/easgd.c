/* easgd.c: synchronous Elastic Averaging SGD.
 *
 *   worker:  lambda local SGD steps; then, round r: pull theta~ (wait for
 *            version >= r); E = alpha (theta - theta~); theta <- theta - E;
 *            push E with tag r
 *   server:  once all N have arrived, theta~ <- theta~ + sum E, version r + 1
 *
 * alpha defaults to 0.9 / N (beta = N alpha = 0.9, the paper's choice);
 * alpha = 0 leaves the centre where it started and the workers independent.
 * The elastic force pulls each worker towards the centre and the centre
 * towards the workers; dist-keras's removed version subtracted lr (W2 - W1),
 * which moves uphill. Reference: Zhang, Choromanska, LeCun, "Deep learning
 * with elastic averaging SGD" (NIPS 2015). */
#include <stdlib.h>

#include "algorithms/algorithm.h"
#include "algorithms/rulekit.h"
#include "algorithms/server.h"
#include "algorithms/worker.h"

typedef struct easgd_params {
    long window;
    float alpha;
} easgd_params;

static void *s_configure(config *c, const rule_context *ctx, rule_info *info, error *err)
{
    easgd_params *p = rule_params(sizeof *p, "easgd", err);
    if (p && (rule_plain_sgd(c, ctx, "easgd", NULL, err) < 0 ||
              rule_window(c, ctx, 10, &p->window, err) < 0 ||
              rule_alpha(c, ctx, &p->alpha, err) < 0)) {
        free(p);
        return NULL;
    }
    info->lockstep = true;
    return p;
}

static int s_worker_run(worker *w)
{
    const easgd_params *p = w->params;
    uint64_t rounds = worker_rounds(w, p->window), round = 0;
    float *center = malloc(w->nparams * sizeof *center);
    float *elastic = malloc(w->nparams * sizeof *elastic);
    int rc = center && elastic ? worker_pull(w, 0) : -1;   /* start at the centre */
    while (rc == 0 && round < rounds) {
        for (long i = 0; i < p->window && !worker_done(w); i++) {
            worker_gradient(w);
            worker_local_step(w);
        }
        if ((rc = worker_pull_into(w, center, round)) < 0) {
            break;
        }
        uint64_t version = worker_version(w);
        if (version >= rounds) {
            break;
        }
        worker_elastic(w->theta, elastic, center, p->alpha, w->nparams);
        rc = worker_push(w, elastic, version);
        round = version + 1;
    }
    worker_settle(w);
    free(center);
    free(elastic);
    return rc;
}

static void s_on_push(server *s, const push_msg *m)
{
    if (server_round_add(s, m) < s->workers) {
        return;
    }
    server_add(s, server_round_sum(s), 1.0f);
    server_round_end(s);
}

const algorithm algorithm_easgd = {
    .version = ALGORITHM_VERSION,
    .name = "easgd",
    .summary = "synchronous EASGD: every window steps, an elastic exchange with the centre",
    .keys = "window (10), alpha (0.9 / workers; 0 = independent workers)",
    .configure = s_configure,
    .worker_run = s_worker_run,
    .server_on_push = s_on_push,
    .server_pull_ready = server_version_reached,
};
