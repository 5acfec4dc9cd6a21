/* staleweight.c: asynchronous SGD with a staleness weight on each push.
 *
 *   worker:  pull theta; g = the gradient at what it pulled; push g
 *   server:  tau = version - the version g was computed on;
 *            theta <- theta - lr * s(tau) * g, with s one of
 *              constant  s = 1                              (Hogwild)
 *              poly      s = (1 + tau)^-a
 *              hinge     s = 1 if tau <= b, else 1 / (a (tau - b) + 1)
 *
 * Keys: weight (poly), a (0.5), b (4).
 *
 * Reference: Xie, Koyejo, Gupta, "Asynchronous Federated Optimization"
 * (FedAsync, 2019), section 5.2's staleness functions, as FLSim's
 * AsyncWeight implements them.
 *
 * With [algorithm] prefetch = on the next pull goes out before the
 * gradient (worker_run_gradients): communication overlaps compute, and
 * each gradient is computed on parameters without this worker's previous
 * push (one more of staleness, counted as any other). */
#include <math.h>
#include <stdlib.h>

#include "algorithms/algorithm.h"
#include "algorithms/rulekit.h"
#include "algorithms/server.h"
#include "algorithms/worker.h"

enum weight { WEIGHT_CONSTANT, WEIGHT_POLY, WEIGHT_HINGE };
static const char *const s_weights[] = {"constant", "poly", "hinge", NULL};

typedef struct staleweight_params {
    float lr;
    int weight;               /* enum weight */
    double a, b;
} staleweight_params;

static void *s_configure(config *c, const rule_context *ctx, rule_info *info, error *err)
{
    (void)info;
    float lr;
    if (rule_plain_sgd(c, ctx, "staleweight", &lr, err) < 0) {
        return NULL;
    }
    staleweight_params *p = rule_params(sizeof *p, "staleweight", err);
    if (!p || config_get_enum(c, "algorithm", "weight", "poly", s_weights, &p->weight, err) < 0 ||
        config_get_double(c, "algorithm", "a", 0.5, 0, 1e6, CONFIG_CLOSED, &p->a, err) < 0 ||
        config_get_double(c, "algorithm", "b", 4, 0, 1e9, CONFIG_CLOSED, &p->b, err) < 0) {
        free(p);
        return NULL;
    }
    p->lr = lr;
    return p;
}

/* s(tau) */
static double s_weight(const staleweight_params *p, double tau)
{
    switch (p->weight) {
    case WEIGHT_POLY:
        return pow(1 + tau, -p->a);
    case WEIGHT_HINGE:
        return tau <= p->b ? 1 : 1 / (p->a * (tau - p->b) + 1);
    default:
        return 1;
    }
}

static void s_on_push(server *s, const push_msg *m)
{
    const staleweight_params *p = s->params;
    uint64_t tau = server_push_staleness(s, m);
    float scale = (float)s_weight(p, (double)tau);
    server_record_applied(s, m);
    server_add(s, m->values, -p->lr * scale);
}

const algorithm algorithm_staleweight = {
    .version = ALGORITHM_VERSION,
    .name = "staleweight",
    .summary = "asynchronous SGD with a staleness weight s(tau) on each push: constant, poly "
               "(1 + tau)^-a or hinge",
    .keys = "weight (poly: constant|poly|hinge), a (0.5), b (4)",
    .configure = s_configure,
    .worker_run = worker_run_gradients,
    .prefetch = true,
    .server_on_push = s_on_push,
    .server_pull_ready = server_always_ready,
};
