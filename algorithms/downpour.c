/* downpour.c: DOWNPOUR SGD.
 *
 *   worker:  every `fetch` steps pull theta; g = grad L(theta);
 *            theta <- opt_local(theta, g); a <- a + g;
 *            every `window` steps push a, a <- 0
 *   server:  theta~ <- opt_server(theta~, a)        (AdaGrad by default)
 *
 * local_optimizer = sgd gives DOWNPOUR-Easy (the TensorFlow guide's
 * variant; unlike tmulc18's, every worker has the same local learning rate,
 * worker 0 included). With window = fetch = 1 and SGD on both sides it is
 * the sequential trajectory. Reference: Dean et al., "Large scale
 * distributed deep networks" (NIPS 2012).
 *
 * With [algorithm] prefetch = on the pull of a fetch step goes out before
 * the gradient of the step before it: communication overlaps compute, and
 * the parameters fetched miss the push of that step, if it pushes. */
#include <stdlib.h>
#include <string.h>

#include "algorithms/algorithm.h"
#include "algorithms/rulekit.h"
#include "algorithms/server.h"
#include "algorithms/worker.h"

typedef struct downpour_params {
    long window, fetch;
} downpour_params;

static const char *const s_server_optims[] = {"adagrad", "sgd", "adam", NULL};
static const int s_server_kinds[] = {OPTIM_ADAGRAD, OPTIM_SGD, OPTIM_ADAM};
static const char *const s_local_optims[] = {"adagrad", "sgd", NULL};
static const int s_local_kinds[] = {OPTIM_ADAGRAD, OPTIM_SGD};

static void *s_configure(config *c, const rule_context *ctx, rule_info *info, error *err)
{
    downpour_params *p = rule_params(sizeof *p, "downpour", err);
    int server_kind, local_kind;
    double server_lr;
    if (!p) {
        return NULL;
    }
    if (ctx->optim->kind != OPTIM_SGD) {   /* it would be ignored */
        config_fail(c, "train", "optimizer", err, "downpour's optimizers are [algorithm] "
                    "local_optimizer and server_optimizer; set optimizer = sgd");
        free(p);
        return NULL;
    }
    if (rule_window(c, ctx, 3, &p->window, err) < 0 ||
        config_get_int(c, "algorithm", "fetch", 1, 1, 1 << 20, &p->fetch, err) < 0 ||
        config_get_enum(c, "algorithm", "server_optimizer", "adagrad", s_server_optims,
                        &server_kind, err) < 0 ||
        config_get_double(c, "algorithm", "server_lr", ctx->optim->lr, 0, 1e6, CONFIG_OPEN_LO,
                          &server_lr, err) < 0 ||
        config_get_enum(c, "algorithm", "local_optimizer", "adagrad", s_local_optims,
                        &local_kind, err) < 0) {
        free(p);
        return NULL;
    }
    info->server_optim = (optim_spec){.kind = s_server_kinds[server_kind], .lr = server_lr,
                                      .beta1 = 0.9, .beta2 = 0.999,
                                      .eps = s_server_kinds[server_kind] == OPTIM_ADAM ? 1e-8 : 1e-10};
    info->local_optim = (optim_spec){.kind = s_local_kinds[local_kind], .lr = ctx->optim->lr,
                                     .eps = 1e-10};
    return p;
}

static int s_worker_run(worker *w)
{
    const downpour_params *p = w->params;
    float *a = calloc(w->nparams, sizeof *a);
    int rc = a ? 0 : -1;
    for (long step = 0; rc == 0 && !worker_done(w); step++) {
        if (step % p->fetch == 0 && (rc = worker_pull(w, 0)) < 0) {
            break;
        }
        if ((step + 1) % p->fetch == 0 && w->steps + 1 < w->budget &&
            (rc = worker_prefetch(w, 0)) < 0) {
            break;
        }
        worker_gradient(w);
        worker_local_step(w);
        for (size_t i = 0; i < w->nparams; i++) {
            a[i] += w->grad[i];
        }
        if ((step + 1) % p->window == 0 || worker_done(w)) {
            rc = worker_push(w, a, 0);
            worker_settle(w);
            memset(a, 0, w->nparams * sizeof *a);
        }
    }
    worker_settle(w);
    free(a);
    return rc;
}

static void s_on_push(server *s, const push_msg *m)
{
    server_record_applied(s, m);
    server_step(s, m->values);
}

const algorithm algorithm_downpour = {
    .version = ALGORITHM_VERSION,
    .name = "downpour",
    .summary = "DOWNPOUR: local steps, accumulated gradients pushed every window steps",
    .keys = "window (3), fetch (1), server_optimizer (adagrad|sgd|adam), server_lr ([train] lr), "
            "local_optimizer (adagrad|sgd = DOWNPOUR-Easy)",
    .configure = s_configure,
    .worker_run = s_worker_run,
    .prefetch = true,
    .server_on_push = s_on_push,
    .server_pull_ready = server_always_ready,
};
