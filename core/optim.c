/* optim.c: sgd, momentum, nesterov, adagrad and adam. */
#include "core/optim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static const char *const s_kinds[] = {"sgd", "momentum", "nesterov", "adagrad", "adam", NULL};

const char *optim_kind_name(int kind)
{
    return kind >= 0 && kind <= OPTIM_ADAM ? s_kinds[kind] : NULL;
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
    return optim_new_on(s, n, NULL);
}

/* State in the backend's memory (host memory when b is NULL). */
static float *s_state(backend *b, size_t n)
{
    size_t bytes = (n ? n : 1) * sizeof(float);
    return b ? b->ops->alloc(b, bytes) : calloc(1, bytes);
}

optim *optim_new_on(const optim_spec *s, size_t n, backend *b)
{
    optim *o = calloc(1, sizeof *o);
    if (!o) {
        return NULL;
    }
    o->spec = *s;
    o->n = n;
    o->b = b;
    if ((s->kind != OPTIM_SGD && !(o->s1 = s_state(b, n))) ||
        (s->kind == OPTIM_ADAM && !(o->s2 = s_state(b, n)))) {
        optim_destroy(&o);
        return NULL;
    }
    return o;
}

void optim_destroy(optim **po)
{
    optim *o = *po;
    if (!o) {
        return;
    }
    if (o->b) {
        o->b->ops->release(o->b, o->s1);
        o->b->ops->release(o->b, o->s2);
    } else {
        free(o->s1);
        free(o->s2);
    }
    free(o);
    *po = NULL;
}

void optim_step(optim *o, float *p, const float *g)
{
    o->t++;
    backend_update u = {
        .kind = o->spec.kind, .lr = (float)o->spec.lr, .momentum = (float)o->spec.momentum,
        .beta1 = (float)o->spec.beta1, .beta2 = (float)o->spec.beta2, .eps = (float)o->spec.eps,
        .bias1 = (float)(1.0 - pow(o->spec.beta1, (double)o->t)),
        .bias2 = (float)(1.0 - pow(o->spec.beta2, (double)o->t)),
    };
    if (o->b) {
        o->b->ops->optim_update(o->b, p, g, o->s1, o->s2, o->n, &u);
    } else {
        backend_cpu_ops.optim_update(NULL, p, g, o->s1, o->s2, o->n, &u);
    }
}
