/* gapaware.c: Gap-Aware staleness mitigation.
 *
 *   worker:  pull theta; g = the gradient at what it pulled; push g
 *   server:  keep theta_b[w] = the theta worker w last pulled, and C, the
 *            running mean of |lr * g| per element (decay 0.99): the size
 *            of a typical step. On w's push g, the k-th at this shard,
 *            per element:
 *              G = |theta - theta_b[w]| / (C / (1 - decay^k))  (0 while C is 0)
 *              theta <- theta - lr * g / max(1, G)
 *              C <- decay * C + (1 - decay) * |lr * g|
 *            A gradient computed G typical steps ago is divided by G: the
 *            gap, not the staleness count, sets the penalty. C starts at
 *            0, so after k pushes its weights sum to 1 - decay^k; divided
 *            by that (as Adam's moments are) it is a mean from the first
 *            push on. Without it the first pushes' C was a hundredth of a
 *            step, and a gradient one step stale was divided by 100.
 *
 * With one worker theta never moves between a pull and its push (G = 0),
 * so it is sequential SGD. Keys: decay (0.99).
 *
 * Reference: Barkai, Hakimi, Schuster, "Gap-Aware Mitigation of Gradient
 * Staleness" (ICLR 2020), Algorithm 1.
 *
 * It does not prefetch: its shard keeps what each worker last pulled, and
 * a pull answered early would replace that before the push computed on it
 * arrives. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "algorithms/algorithm.h"
#include "algorithms/rulekit.h"
#include "algorithms/server.h"
#include "algorithms/worker.h"

typedef struct gapaware_params {
    float lr, decay;
} gapaware_params;

static void *s_configure(config *c, const rule_context *ctx, rule_info *info, error *err)
{
    (void)info;   /* one apply thread: a push reads and writes the state */
    float lr;
    double decay;
    if (rule_plain_sgd(c, ctx, "gapaware", &lr, err) < 0 ||
        config_get_double(c, "algorithm", "decay", 0.99, 0, 1, CONFIG_OPEN_HI, &decay,
                          err) < 0) {
        return NULL;
    }
    gapaware_params *p = rule_params(sizeof *p, "gapaware", err);
    if (p) {
        *p = (gapaware_params){.lr = lr, .decay = (float)decay};
    }
    return p;
}

/* The shard's state: each worker's pulled copy, then C and a scratch
 * vector. */
static void *s_init(server *s)
{
    return server_pulled_init(s, 2);
}

static size_t s_state_bytes(const server *s)
{
    return server_pulled_bytes(s, 2);
}

static void s_on_push(server *s, const push_msg *m)
{
    const gapaware_params *p = s->params;
    const float *g = m->values, *bak = server_pulled(s, m->worker);
    float *c = server_pulled(s, (uint32_t)s->workers), *step = c + s->n;
    /* selects, not branches, so that the loop vectorizes: a division
     * under a branch on the gap (a division may trap, so the compiler
     * keeps it a branch) left it scalar, and once workers' pulls differ
     * the branch is unpredictable; 1.3 ms a push of 235,146 in a real
     * 2-worker shard, now 0.28 ms (asgd calibrate's apply); the same
     * values to the bit */
    const float *theta = s->theta;
    const float decay = p->decay, lr = p->lr;
    /* the pushes C holds: every one applied here (each moved the version) */
    double weights = 1 - pow(decay, (double)atomic_load(&s->version));
    const float unbias = weights > 0 ? (float)(1 / weights) : 1.0f;
    for (size_t i = 0, n = s->n; i < n; i++) {
        float known = c[i] > 0 ? 1.0f : 0.0f;   /* C is 0 until the element has moved */
        float gap = known * (fabsf(theta[i] - bak[i]) / (c[i] * unbias + (1.0f - known)));
        float divisor = gap > 1.0f ? gap : 1.0f;   /* g / gap beyond 1, g itself below */
        step[i] = g[i] / divisor;
        c[i] = decay * c[i] + (1 - decay) * fabsf(lr * g[i]);
    }
    server_record_applied(s, m);
    server_add(s, step, -p->lr);
}

const algorithm algorithm_gapaware = {
    .version = ALGORITHM_VERSION,
    .name = "gapaware",
    .summary = "Gap-Aware: each gradient divided by max(1, G), G the gap since its worker "
               "pulled over the mean step size (bias-corrected), per element",
    .keys = "decay (0.99)",
    .configure = s_configure,
    .worker_run = worker_run_gradients,
    .server_init = s_init,
    .server_state_bytes = s_state_bytes,
    .server_on_push = s_on_push,
    .server_on_pull = server_keep_pulled,
    .server_pull_ready = server_always_ready,
};
