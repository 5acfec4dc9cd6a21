/* optim.h: optimizers over flat float vectors (workers' local steps and the
 * servers' updates alike).
 *
 * An optimizer owns the state for n elements; to update a range of a
 * larger vector, give it that range's pointers (a server shard holds one
 * optimizer of its own length). Formulas, with g the gradient:
 *   sgd       p -= lr g
 *   momentum  v = mu v + g;  p -= lr v
 *   nesterov  v = mu v + g;  p -= lr (g + mu v)          (as PyTorch)
 *   adagrad   s += g^2;      p -= lr g / (sqrt(s) + eps)
 *   adam      m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;
 *             p -= lr (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps) */
#ifndef ASGD_OPTIM_H
#define ASGD_OPTIM_H

#include <stddef.h>

#include "core/backend/backend.h"
#include "core/config.h"
#include "core/error.h"

typedef struct optim_spec {
    int kind;              /* enum optim_kind */
    double lr;
    double momentum;       /* momentum, nesterov */
    double beta1, beta2;   /* adam */
    double eps;            /* adagrad, adam */
} optim_spec;

typedef struct optim {
    optim_spec spec;
    size_t n;
    long t;                /* steps taken */
    backend *b;            /* where params and state live; NULL: host memory */
    float *s1, *s2;        /* velocity / squares / moments, as the kind needs */
} optim;

/* Reads `optimizer`, `lr` and the kind's own keys from `section`, with
 * keys named prefix + "optimizer" etc. (prefix "" for [train]). */
int optim_spec_configure(optim_spec *s, config *c, const char *section,
                         const char *prefix, const char *default_kind,
                         double default_lr, error *err);
/* kind's name (enum optim_kind), NULL for no kind. */
const char *optim_kind_name(int kind);

/* An optimizer over host vectors (computed by the CPU backend's reference
 * update, backend_cpu_ops.optim_update). */
optim *optim_new(const optim_spec *s, size_t n);
/* The same over vectors in b's memory, with its state there too. */
optim *optim_new_on(const optim_spec *s, size_t n, backend *b);
void optim_destroy(optim **o);
/* One update of params (n) by grad (n), both where the optimizer lives. */
void optim_step(optim *o, float *params, const float *grad);

#endif
