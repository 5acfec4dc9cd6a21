/* fedbuff.c: FedBuff, buffered asynchronous aggregation.
 *
 *   worker:  pull theta (noting the version v); lambda local steps;
 *            push D = theta - theta_pulled with base version v
 *   server:  tau = version - v; buffer <- buffer + s(tau) D, with
 *            s(tau) = 1 / sqrt(1 + tau) (weight = sqrt) or 1 (none);
 *            on every K-th push: theta~ <- theta~ + server_lr * buffer / K,
 *            buffer <- 0, version + 1
 *
 * The version counts aggregations, so tau is in aggregations, as in the
 * paper. Keys: window (5), buffer K (workers / 2, at least 1), server_lr
 * (1), weight (sqrt: sqrt|none). With K = 1, weight none and server_lr 1
 * every push is added at once: AGN without its 1 / lambda (with one
 * worker, DynSGD; with window 1, Hogwild). Pushes are recorded applied as
 * they enter the buffer; when the budget ends, the fewer than K pushes
 * still buffered are never applied, as the paper's server stops, and are
 * counted dropped then (their staleness taken back out of the mean).
 *
 * Reference: Nguyen, Malik, Zhan, Yousefpour, Rabbat, Malek, Huba,
 * "Federated Learning with Buffered Asynchronous Aggregation" (AISTATS
 * 2022), Algorithm 1.
 *
 * With [algorithm] prefetch = on the next window's pull goes out before
 * this window's last step (worker_run_windows): communication overlaps
 * that step, and the next window starts from a centre that may lack this
 * worker's last delta (tau one higher where that delta completed a
 * buffer). */
#include <math.h>
#include <stdlib.h>

#include "algorithms/algorithm.h"
#include "algorithms/rulekit.h"
#include "algorithms/server.h"
#include "algorithms/worker.h"

enum weight { WEIGHT_SQRT, WEIGHT_NONE };
static const char *const s_weights[] = {"sqrt", "none", NULL};

typedef struct fedbuff_params {
    long window, buffer;
    float server_lr;
    int weight;               /* enum weight */
} fedbuff_params;

/* A shard's buffer: flat, so that a checkpoint saves it as bytes. */
typedef struct fedbuff_state {
    uint64_t count;           /* pushes in the buffer */
    uint64_t tau[];           /* K: each buffered push's staleness; then the
                                 n floats of the weighted deltas' sum (s_sum) */
} fedbuff_state;

static float *s_sum(const server *s)
{
    const fedbuff_params *p = s->params;
    return (float *)(((fedbuff_state *)s->state)->tau + p->buffer);
}

static void *s_configure(config *c, const rule_context *ctx, rule_info *info, error *err)
{
    (void)info;   /* one apply thread: a push reads and writes the buffer */
    fedbuff_params *p = rule_params(sizeof *p, "fedbuff", err);
    long half = ctx->workers / 2 > 1 ? ctx->workers / 2 : 1;
    double server_lr;
    if (!p || rule_plain_sgd(c, ctx, "fedbuff", NULL, err) < 0 ||
        rule_window(c, ctx, 5, &p->window, err) < 0 ||
        config_get_int(c, "algorithm", "buffer", half, 1, ctx->workers, &p->buffer, err) < 0 ||
        config_get_double(c, "algorithm", "server_lr", 1, 0, 1e6, CONFIG_OPEN_LO, &server_lr,
                          err) < 0 ||
        config_get_enum(c, "algorithm", "weight", "sqrt", s_weights, &p->weight, err) < 0) {
        free(p);
        return NULL;
    }
    p->server_lr = (float)server_lr;
    return p;
}

static int s_worker_run(worker *w)
{
    const fedbuff_params *p = w->params;
    return worker_run_windows(w, p->window, false);
}

static size_t s_state_bytes(const server *s)
{
    const fedbuff_params *p = s->params;
    return sizeof(fedbuff_state) + (size_t)p->buffer * sizeof(uint64_t) +
           s->n * sizeof(float);
}

static void *s_init(server *s)
{
    return calloc(1, s_state_bytes(s));
}

static void s_on_push(server *s, const push_msg *m)
{
    const fedbuff_params *p = s->params;
    fedbuff_state *st = s->state;
    float *sum = s_sum(s);
    uint64_t tau = server_push_staleness(s, m);
    float weight = p->weight == WEIGHT_SQRT ? 1.0f / sqrtf(1.0f + (float)tau) : 1.0f;
    for (size_t i = 0; i < s->n; i++) {
        sum[i] += weight * m->values[i];
    }
    server_record_applied(s, m);
    st->tau[st->count] = tau;
    if (++st->count < (uint64_t)p->buffer) {
        return;
    }
    server_add(s, sum, p->server_lr / (float)p->buffer);
    for (size_t i = 0; i < s->n; i++) {
        sum[i] = 0;
    }
    st->count = 0;
}

/* Training is over: the pushes still buffered will never be applied. */
static void s_on_workers_done(server *s)
{
    fedbuff_state *st = s->state;
    for (uint64_t i = 0; i < st->count; i++) {
        server_record_unapplied(s, st->tau[i]);
    }
    st->count = 0;
}

const algorithm algorithm_fedbuff = {
    .version = ALGORITHM_VERSION,
    .name = "fedbuff",
    .summary = "FedBuff: local-step deltas weighted 1 / sqrt(1 + tau), buffered, and their mean "
               "applied every K pushes",
    .keys = "window (5), buffer (workers / 2), server_lr (1), weight (sqrt: sqrt|none)",
    .configure = s_configure,
    .worker_run = s_worker_run,
    .prefetch = true,
    .server_init = s_init,
    .server_state_bytes = s_state_bytes,
    .server_on_push = s_on_push,
    .server_on_workers_done = s_on_workers_done,
    .server_pull_ready = server_always_ready,
};
