/* dcasgd.c: delay-compensated asynchronous SGD (DC-ASGD).
 *
 *   worker:  pull theta; g = the gradient at what it pulled; push g (as
 *            Hogwild does)
 *   server:  on each worker's pull, keep theta_bak[w] = the theta it got;
 *            on its push g:
 *              theta <- theta - lr * (g + lambda * g * g * (theta - theta_bak[w]))
 *            (elementwise): g is corrected by a cheap diagonal estimate of
 *            the Hessian, g * g, times how far theta moved since w pulled.
 *   adaptive = on (DC-ASGD-a): lambda is lambda / sqrt(ms + 1e-7) per
 *            element, ms <- m * ms + (1 - m) * g * g over every push.
 *
 * With lambda = 0 it is Hogwild; with one worker theta never moves between
 * a pull and its push, so it is sequential SGD. Keys: lambda (0.04; the
 * paper's DC-ASGD-a used 2), adaptive (off), ms_decay (0.95).
 *
 * Reference: Zheng, Meng, Wang, Chen, Yu, Ma, Liu, "Asynchronous
 * Stochastic Gradient Descent with Delay Compensation" (ICML 2017),
 * Algorithm 1 and section 5 (DC-ASGD-c and DC-ASGD-a).
 *
 * It does not prefetch: its shard keeps what each worker last pulled, and
 * a pull answered early would replace that before the push computed on it
 * arrives. */
#include <math.h>
#include <stdlib.h>

#include "algorithms/algorithm.h"
#include "algorithms/rulekit.h"
#include "algorithms/server.h"
#include "algorithms/worker.h"

typedef struct dcasgd_params {
    float lr, lambda, ms_decay;
    bool adaptive;
} dcasgd_params;

static void *s_configure(config *c, const rule_context *ctx, rule_info *info, error *err)
{
    (void)info;   /* one apply thread: a push reads and writes the state */
    float lr;
    if (rule_plain_sgd(c, ctx, "dcasgd", &lr, err) < 0) {
        return NULL;
    }
    dcasgd_params *p = rule_params(sizeof *p, "dcasgd", err);
    bool adaptive;
    double lambda, decay;
    if (!p || config_get_bool(c, "algorithm", "adaptive", false, &adaptive, err) < 0 ||
        config_get_double(c, "algorithm", "lambda", 0.04, 0, 1e6,
                          CONFIG_CLOSED, &lambda, err) < 0 ||
        config_get_double(c, "algorithm", "ms_decay", 0.95, 0, 1, CONFIG_OPEN_HI, &decay,
                          err) < 0) {
        free(p);
        return NULL;
    }
    *p = (dcasgd_params){.lr = lr, .lambda = (float)lambda,
                         .ms_decay = (float)decay, .adaptive = adaptive};
    return p;
}

/* The shard's state (server_pulled_init): each worker's pulled copy,
 * then the mean square of the gradients and a scratch vector. */
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
    const dcasgd_params *p = s->params;
    const float *g = m->values, *bak = server_pulled(s, m->worker), *theta = s->theta;
    float *ms = server_pulled(s, (uint32_t)s->workers), *step = ms + s->n;
    const float lambda = p->lambda, decay = p->ms_decay;
    /* one loop for each setting, the parameters in locals (the loop
     * with a sqrtf vectorizes only under -fno-math-errno, which the
     * build sets) */
    if (p->adaptive) {
        for (size_t i = 0, n = s->n; i < n; i++) {
            float g2 = g[i] * g[i];
            ms[i] = decay * ms[i] + (1 - decay) * g2;
            step[i] = g[i] + lambda / sqrtf(ms[i] + 1e-7f) * g2 * (theta[i] - bak[i]);
        }
    } else {
        for (size_t i = 0, n = s->n; i < n; i++) {
            step[i] = g[i] + lambda * (g[i] * g[i]) * (theta[i] - bak[i]);
        }
    }
    server_record_applied(s, m);
    server_add(s, step, -p->lr);
}

const algorithm algorithm_dcasgd = {
    .version = ALGORITHM_VERSION,
    .name = "dcasgd",
    .summary = "delay-compensated ASGD: each gradient corrected by lambda * g * g * (theta - "
               "what its worker pulled); adaptive = on scales lambda by 1 / sqrt(mean g^2)",
    .keys = "lambda (0.04), adaptive (off), ms_decay (0.95)",
    .configure = s_configure,
    .worker_run = worker_run_gradients,
    .server_init = s_init,
    .server_state_bytes = s_state_bytes,
    .server_on_push = s_on_push,
    .server_on_pull = server_keep_pulled,
    .server_pull_ready = server_always_ready,
};
