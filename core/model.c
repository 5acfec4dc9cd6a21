/* model.c: forward and backward passes of the softmax and MLP models on
 * the backend's operations.
 *
 * Forward:  a_0 = x;  a_l = relu(a_{l-1} W_l + b_l) for hidden layers;
 *           logits = a_{L-1} W_L + b_L;  loss = mean cross-entropy.
 * Backward: d_L = (softmax(logits) - onehot(y)) / batch;
 *           dW_l = a_{l-1}^T d_l;  db_l = column sums of d_l;
 *           d_{l-1} = (d_l W_l^T) masked where a_{l-1} = 0. */
#include "core/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"

static const char *const s_types[] = {"softmax", "mlp", NULL};
static const char *const s_inits[] = {"he", "xavier", NULL};

const char *model_type_name(int type)
{
    return s_types[type];
}

int model_spec_configure(model_spec *s, config *c, error *err)
{
    memset(s, 0, sizeof *s);
    if (config_get_enum(c, "model", "type", "mlp", s_types, &s->type, err) < 0) {
        return -1;
    }
    if (s->type == MODEL_MLP) {
        if (config_get_int_list(c, "model", "hidden", "256,128", 1, 1 << 20, s->hidden,
                                MODEL_MAX_HIDDEN, &s->hidden_count, err) < 0) {
            return -1;
        }
        if (s->hidden_count == 0) {
            return error_set(err, ERROR_USAGE, "%s: [model] hidden: an mlp needs at "
                             "least one hidden layer (use type = softmax for none)",
                             config_source(c));
        }
    }
    return config_get_enum(c, "model", "init", "he", s_inits, &s->init, err);
}

static void s_free_scratch(model *m)
{
    for (int l = 0; l <= m->layers; l++) {
        m->b->ops->release(m->b, m->act[l]);
        m->act[l] = NULL;
    }
    for (int i = 0; i < 2; i++) {
        m->b->ops->release(m->b, m->delta[i]);
        m->delta[i] = NULL;
    }
    m->b->ops->release(m->b, m->labels);
    m->labels = NULL;
    m->capacity = 0;
}

static int s_reserve(model *m, int rows)
{
    if (rows <= m->capacity) {
        return 0;
    }
    s_free_scratch(m);
    int widest = 0;
    for (int l = 0; l <= m->layers; l++) {
        if (m->dims[l] > widest) {
            widest = m->dims[l];
        }
        m->act[l] = m->b->ops->alloc(m->b, (size_t)rows * (size_t)m->dims[l] * sizeof(float));
        if (!m->act[l]) {
            return -1;
        }
    }
    for (int i = 0; i < 2; i++) {
        m->delta[i] = m->b->ops->alloc(m->b, (size_t)rows * (size_t)widest * sizeof(float));
        if (!m->delta[i]) {
            return -1;
        }
    }
    m->labels = m->b->ops->alloc(m->b, (size_t)rows * sizeof(int32_t));
    if (!m->labels) {
        return -1;
    }
    m->capacity = rows;
    return 0;
}

model *model_new(const model_spec *s, backend *b, int inputs, int classes, error *err)
{
    model *m = calloc(1, sizeof *m);
    if (!m) {
        error_set(err, ERROR_RUNTIME, "model: out of memory");
        return NULL;
    }
    m->spec = *s;
    m->b = b;
    m->dims[0] = inputs;
    int hidden = s->type == MODEL_MLP ? s->hidden_count : 0;
    for (int l = 0; l < hidden; l++) {
        m->dims[l + 1] = (int)s->hidden[l];
    }
    m->layers = hidden + 1;
    m->dims[m->layers] = classes;
    size_t off = 0;
    for (int l = 1; l <= m->layers; l++) {
        m->w_off[l - 1] = off;
        off += (size_t)m->dims[l - 1] * (size_t)m->dims[l];
        m->b_off[l - 1] = off;
        off += (size_t)m->dims[l];
    }
    m->nparams = off;
    return m;
}

void model_destroy(model **pm)
{
    model *m = *pm;
    if (!m) {
        return;
    }
    s_free_scratch(m);
    free(m);
    *pm = NULL;
}

void model_init_params(const model *m, float *params, uint64_t seed)
{
    float *host = malloc(m->nparams * sizeof *host);
    if (!host) {
        abort();
    }
    rng r = rng_derive(seed, RNG_INIT, 0);
    for (int l = 1; l <= m->layers; l++) {
        int in = m->dims[l - 1], out = m->dims[l];
        float *w = host + m->w_off[l - 1];
        size_t n = (size_t)in * (size_t)out;
        if (m->spec.init == INIT_HE) {
            double sd = sqrt(2.0 / in);
            for (size_t i = 0; i < n; i++) {
                w[i] = (float)(sd * rng_normal(&r));
            }
        } else {
            double a = sqrt(6.0 / (in + out));
            for (size_t i = 0; i < n; i++) {
                w[i] = (float)(a * (2.0 * rng_uniform(&r) - 1.0));
            }
        }
        memset(host + m->b_off[l - 1], 0, (size_t)out * sizeof *host);
    }
    m->b->ops->to_device(m->b, params, host, m->nparams * sizeof *host);
    free(host);
}

/* Forward pass up to the logits (left in act[layers]); returns the input
 * matrix used. */
static const float *s_forward(model *m, const float *params, const float *x, int rows)
{
    const backend_ops *ops = m->b->ops;
    const float *input = x;
    if (!ops->host_visible) {
        ops->to_device(m->b, m->act[0], x, (size_t)rows * (size_t)m->dims[0] * sizeof(float));
        input = m->act[0];
    }
    const float *a = input;
    for (int l = 1; l <= m->layers; l++) {
        int in = m->dims[l - 1], out = m->dims[l];
        float *z = m->act[l];
        ops->gemm(m->b, z, a, params + m->w_off[l - 1], false, false, rows, out, in, 1.0f, 0.0f);
        ops->bias_add(m->b, z, params + m->b_off[l - 1], rows, out);
        if (l < m->layers) {
            ops->relu_forward(m->b, z, z, (size_t)rows * (size_t)out);
        }
        a = z;
    }
    return input;
}

float model_gradient(model *m, float *grad, const float *params,
                     const float *x, const int32_t *y, int batch)
{
    if (s_reserve(m, batch) < 0) {
        abort();   /* scratch for one batch: nothing sensible to do without it */
    }
    const backend_ops *ops = m->b->ops;
    const int32_t *labels = y;
    if (!ops->host_visible) {
        ops->to_device(m->b, m->labels, y, (size_t)batch * sizeof *y);
        labels = m->labels;
    }
    const float *input = s_forward(m, params, x, batch);
    int L = m->layers;
    double loss_sum;
    int correct;
    float *d = m->delta[0];
    /* probabilities overwrite the logits: nothing needs them afterwards */
    ops->softmax_xent_forward(m->b, m->act[L], &loss_sum, &correct, m->act[L],
                              labels, batch, m->dims[L]);
    ops->softmax_xent_backward(m->b, d, m->act[L], labels, batch, m->dims[L],
                               1.0f / (float)batch);
    for (int l = L; l >= 1; l--) {
        int in = m->dims[l - 1], out = m->dims[l];
        const float *a_prev = l > 1 ? m->act[l - 1] : input;
        ops->gemm(m->b, grad + m->w_off[l - 1], a_prev, d, true, false, in, out, batch, 1.0f, 0.0f);
        ops->bias_grad(m->b, grad + m->b_off[l - 1], d, batch, out);
        if (l > 1) {
            float *d_prev = m->delta[(L - l + 1) % 2];
            ops->gemm(m->b, d_prev, d, params + m->w_off[l - 1], false, true, batch, in, out, 1.0f, 0.0f);
            ops->relu_backward(m->b, d_prev, d_prev, m->act[l - 1], (size_t)batch * (size_t)in);
            d = d_prev;
        }
    }
    return (float)(loss_sum / batch);
}

void model_evaluate(model *m, double *loss, double *accuracy,
                    const float *params, const dataset *d, int batch)
{
    if (s_reserve(m, batch) < 0) {
        abort();
    }
    const backend_ops *ops = m->b->ops;
    double loss_sum = 0;
    long correct = 0;
    int L = m->layers;
    for (int start = 0; start < d->n; start += batch) {
        int rows = d->n - start < batch ? d->n - start : batch;
        const int32_t *labels = d->y + start;
        if (!ops->host_visible) {
            ops->to_device(m->b, m->labels, labels, (size_t)rows * sizeof *labels);
            labels = m->labels;
        }
        s_forward(m, params, d->x + (size_t)start * (size_t)d->dim, rows);
        double ls;
        int right;
        ops->softmax_xent_forward(m->b, m->act[L], &ls, &right, m->act[L], labels,
                                  rows, m->dims[L]);
        loss_sum += ls;
        correct += right;
    }
    *loss = loss_sum / d->n;
    *accuracy = (double)correct / d->n;
}
