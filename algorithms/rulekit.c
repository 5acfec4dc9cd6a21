/* rulekit.c: the keys several rules read, read one way. */
#include "algorithms/rulekit.h"

#include <stdint.h>
#include <stdlib.h>

void *rule_params(size_t size, const char *rule, error *err)
{
    void *p = calloc(1, size);
    if (!p) {
        error_set(err, ERROR_RUNTIME, "%s: out of memory", rule);
    }
    return p;
}

int rule_window(config *c, const rule_context *ctx, long def, long *out, error *err)
{
    if (config_get_int(c, "algorithm", "window", def, 1, 1 << 20, out, err) < 0) {
        return -1;
    }
    if ((uint64_t)*out * (uint64_t)ctx->batch > UINT32_MAX) {
        return config_fail(c, "algorithm", "window", err, "%ld steps of %ld examples make "
                           "%llu examples a push, more than a push counts (%lu)", *out,
                           ctx->batch, (unsigned long long)*out * (unsigned long long)ctx->batch,
                           (unsigned long)UINT32_MAX);
    }
    return 0;
}

int rule_alpha(config *c, const rule_context *ctx, float *out, error *err)
{
    double alpha;
    if (config_get_double(c, "algorithm", "alpha", 0.9 / ctx->workers, 0, 1, CONFIG_CLOSED,
                          &alpha, err) < 0) {
        return -1;
    }
    *out = (float)alpha;
    return 0;
}

int rule_backups(config *c, const rule_context *ctx, long *out, error *err)
{
    return config_get_int(c, "algorithm", "backups", 0, 0, ctx->workers - 1, out, err);
}

int rule_plain_sgd(config *c, const rule_context *ctx, const char *rule, float *lr,
                   error *err)
{
    if (ctx->optim->kind != OPTIM_SGD) {
        return config_fail(c, "train", "optimizer", err, "%s takes plain SGD steps (its formula "
                           "heads algorithms/%s.c); set optimizer = sgd", rule, rule);
    }
    if (lr) {
        *lr = (float)ctx->optim->lr;
    }
    return 0;
}
