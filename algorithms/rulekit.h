/* rulekit.h: what several rules share when they read their keys: the
 * parameter block, and the [algorithm] keys more than one rule reads, each
 * with one meaning, range and default wherever it appears. */
#ifndef ASGD_RULEKIT_H
#define ASGD_RULEKIT_H

#include <stddef.h>

#include "algorithms/algorithm.h"

/* A zeroed parameter block of size bytes for `rule` (freed with free()),
 * or NULL with err set. */
void *rule_params(size_t size, const char *rule, error *err);

/* window: local steps between two communications, 1 to 2^20, and at most
 * as many as a push's example count (32 bits on the wire) holds at
 * ctx->batch examples a step: a larger window would wrap the count that
 * samples/s and epochs are made of. */
int rule_window(config *c, const rule_context *ctx, long def, long *out, error *err);
/* alpha: the elastic force's rate, in [0, 1]; 0.9 / workers by default
 * (beta = 0.9 in EASGD's paper), 0 leaves every worker on its own. */
int rule_alpha(config *c, const rule_context *ctx, float *out, error *err);
/* A rule whose formula takes plain SGD steps (its file's header: at the
 * server, as Hogwild's kin, or in the workers' local steps, as AGN and
 * EASGD): 0 with *lr the [train] learning rate (lr may be NULL), or -1
 * with err naming [train] optimizer when the config asks for another
 * optimizer, which the rule would otherwise ignore or misapply. */
int rule_plain_sgd(config *c, const rule_context *ctx, const char *rule, float *lr,
                   error *err);
/* backups: workers a synchronous round does not wait for, 0 to N - 1. */
int rule_backups(config *c, const rule_context *ctx, long *out, error *err);

#endif
