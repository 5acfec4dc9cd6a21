/* optim.c: sgd, momentum, nesterov, adagrad and adam. */
#include "core/optim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static const char *const s_kinds[] = {"sgd", "momentum", "nesterov", "adagrad", "adam", NULL};

const char *optim_kind_name(int kind)
{
    return s_kinds[kind];
}

int optim_spec_configure(optim_spec *s, config *c, const char *section,
                         const char *prefix, const char *default_kind,
                         double default_lr, error *err)
{
    char key[64];
    s->momentum = 0;
    s->beta1 = 0.9;
    s->beta2 = 0.999;
    s->eps = 1e-8;
    snprintf(key, sizeof key, "%soptimizer", prefix);
    if (config_get_enum(c, section, key, default_kind, s_kinds, &s->kind, err) < 0) {
        return -1;
    }
    snprintf(key, sizeof key, "%slr", prefix);
    if (config_get_double(c, section, key, default_lr, 0, 1e6, CONFIG_OPEN_LO, &s->lr, err) < 0) {
        return -1;
    }
    if (s->kind == OPTIM_MOMENTUM || s->kind == OPTIM_NESTEROV) {
        snprintf(key, sizeof key, "%smomentum", prefix);
        if (config_get_double(c, section, key, 0.9, 0, 1, CONFIG_OPEN_HI, &s->momentum, err) < 0) {
            return -1;
        }
    }
    if (s->kind == OPTIM_ADAM) {
        snprintf(key, sizeof key, "%sbeta1", prefix);
        if (config_get_double(c, section, key, 0.9, 0, 1, CONFIG_OPEN_HI, &s->beta1, err) < 0) {
            return -1;
        }
        snprintf(key, sizeof key, "%sbeta2", prefix);
        if (config_get_double(c, section, key, 0.999, 0, 1, CONFIG_OPEN_HI, &s->beta2, err) < 0) {
            return -1;
        }
    }
    if (s->kind == OPTIM_ADAGRAD || s->kind == OPTIM_ADAM) {
        snprintf(key, sizeof key, "%seps", prefix);
        if (config_get_double(c, section, key, s->kind == OPTIM_ADAM ? 1e-8 : 1e-10,
                              0, 1, CONFIG_OPEN_LO, &s->eps, err) < 0) {
            return -1;
        }
    }
    return 0;
}

optim *optim_new(const optim_spec *s, size_t n)
{
    optim *o = calloc(1, sizeof *o);
    if (!o) {
        return NULL;
    }
    o->spec = *s;
    o->n = n;
    if (s->kind != OPTIM_SGD) {
        o->s1 = calloc(n ? n : 1, sizeof *o->s1);
        if (!o->s1) {
            optim_destroy(&o);
            return NULL;
        }
    }
    if (s->kind == OPTIM_ADAM) {
        o->s2 = calloc(n ? n : 1, sizeof *o->s2);
        if (!o->s2) {
            optim_destroy(&o);
            return NULL;
        }
    }
    return o;
}

void optim_destroy(optim **po)
{
    optim *o = *po;
    if (!o) {
        return;
    }
    free(o->s1);
    free(o->s2);
    free(o);
    *po = NULL;
}

void optim_step(optim *o, float *p, const float *g)
{
    const float lr = (float)o->spec.lr, mu = (float)o->spec.momentum;
    const float eps = (float)o->spec.eps;
    float *v = o->s1;
    o->t++;
    switch (o->spec.kind) {
    case OPTIM_SGD:
        for (size_t i = 0; i < o->n; i++) {
            p[i] -= lr * g[i];
        }
        break;
    case OPTIM_MOMENTUM:
        for (size_t i = 0; i < o->n; i++) {
            v[i] = mu * v[i] + g[i];
            p[i] -= lr * v[i];
        }
        break;
    case OPTIM_NESTEROV:
        for (size_t i = 0; i < o->n; i++) {
            v[i] = mu * v[i] + g[i];
            p[i] -= lr * (g[i] + mu * v[i]);
        }
        break;
    case OPTIM_ADAGRAD:
        for (size_t i = 0; i < o->n; i++) {
            v[i] += g[i] * g[i];
            p[i] -= lr * g[i] / (sqrtf(v[i]) + eps);
        }
        break;
    case OPTIM_ADAM: {
        const float b1 = (float)o->spec.beta1, b2 = (float)o->spec.beta2;
        const float c1 = (float)(1.0 - pow(o->spec.beta1, (double)o->t));
        const float c2 = (float)(1.0 - pow(o->spec.beta2, (double)o->t));
        float *m = o->s1, *s = o->s2;
        for (size_t i = 0; i < o->n; i++) {
            m[i] = b1 * m[i] + (1.0f - b1) * g[i];
            s[i] = b2 * s[i] + (1.0f - b2) * g[i] * g[i];
            p[i] -= lr * (m[i] / c1) / (sqrtf(s[i] / c2) + eps);
        }
        break;
    }
    }
}
