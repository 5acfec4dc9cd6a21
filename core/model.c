/* model.c: forward and backward passes of the layer chain on the backend's
 * operations.
 *
 * Forward, layer by layer from a_0 = x:
 *   dense  a = a_prev W + b               (rows = examples)
 *   conv   a = im2col(a_prev) W + b       (rows = output pixels)
 *   pool   a = maxpool(a_prev)
 *   then relu where the layer has one; the last dense layer's output are
 *   the logits, and the loss is the mean cross-entropy.
 * Backward, from d = (softmax(logits) - onehot(y)) / batch:
 *   d masked where a relu output is 0;
 *   dense  dW = a_prev^T d;  db = column sums of d;  d_prev = d W^T
 *   conv   dW = col^T d;     db = column sums of d;  d_prev = col2im(d W^T)
 *   pool   d_prev = d sent back to each window's maximum. */
#include "core/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"

static const char *const s_types[] = {"softmax", "mlp", "cnn", NULL};
static const char *const s_inits[] = {"he", "xavier", NULL};

const char *model_type_name(int type)
{
    return s_types[type];
}

static int s_configure_cnn(model_spec *s, config *c, error *err)
{
    if (config_get_double(c, "model", "dropout", 0.4, 0, 1, CONFIG_OPEN_HI, &s->dropout,
                          err) < 0 ||
        config_get_int_list(c, "model", "channels", "32,64", 1, 1 << 14, s->channels,
                            MODEL_MAX_CONV, &s->conv_count, err) < 0 ||
        config_get_int(c, "model", "kernel", 5, 1, 31, &s->kernel, err) < 0 ||
        config_get_int(c, "model", "pool", 2, 1, 16, &s->pool, err) < 0 ||
        config_get_int_list(c, "model", "hidden", "1024", 1, 1 << 20, s->hidden,
                            MODEL_MAX_HIDDEN, &s->hidden_count, err) < 0 ||
        config_get_int_list(c, "model", "image", "", 1, 1 << 14, s->image, 3,
                            &s->image_count, err) < 0) {
        return -1;
    }
    if (s->conv_count == 0) {
        return config_error(c, "model", "channels", err, "a cnn needs at least one "
                            "convolution (use type = mlp for none)");
    }
    if (s->kernel % 2 == 0) {
        return config_error(c, "model", "kernel", err, "must be odd, so that 'same' "
                            "padding keeps the image size (got %ld)", s->kernel);
    }
    if (s->image_count != 0 && s->image_count != 3) {
        return config_error(c, "model", "image", err, "give height, width, channels "
                            "(3 numbers), not %d", s->image_count);
    }
    return 0;
}

int model_spec_configure(model_spec *s, config *c, error *err)
{
    memset(s, 0, sizeof *s);
    if (config_get_enum(c, "model", "type", "mlp", s_types, &s->type, err) < 0) {
        return -1;
    }
    if (s->type == MODEL_MLP) {
        if (config_get_int_list(c, "model", "hidden", "256,128", 1, 1 << 20, s->hidden,
                                MODEL_MAX_HIDDEN, &s->hidden_count, err) < 0 ||
            config_get_double(c, "model", "dropout", 0, 0, 1, CONFIG_OPEN_HI, &s->dropout,
                              err) < 0) {
            return -1;
        }
        if (s->hidden_count == 0) {
            return error_set(err, ERROR_USAGE, "%s: [model] hidden: an mlp needs at "
                             "least one hidden layer (use type = softmax for none)",
                             config_source(c));
        }
    }
    if (s->type == MODEL_CNN && s_configure_cnn(s, c, err) < 0) {
        return -1;
    }
    return config_get_enum(c, "model", "init", "he", s_inits, &s->init, err);
}

size_t model_layer_size(const layer *l)
{
    return (size_t)l->oh * (size_t)l->ow * (size_t)l->oc;
}

/* Appends a layer reading the previous layer's output (or the input). */
static layer *s_push(model *m, int kind, int h, int w, int c)
{
    layer *l = &m->layer[m->layers];
    if (m->layers > 0) {
        const layer *prev = &m->layer[m->layers - 1];
        h = prev->oh;
        w = prev->ow;
        c = prev->oc;
    }
    m->layers++;
    *l = (layer){.kind = kind, .h = h, .w = w, .c = c};
    return l;
}

static void s_dense(model *m, int out, bool relu, double dropout)
{
    layer *l = s_push(m, LAYER_DENSE, 1, 1, m->inputs);
    l->fan_in = (size_t)l->h * (size_t)l->w * (size_t)l->c;
    l->h = l->w = 1;
    l->c = (int)l->fan_in;
    l->oh = l->ow = 1;
    l->oc = out;
    l->relu = relu;
    l->dropout = (float)dropout;
}

static void s_conv(model *m, int h, int w, int c, int channels, int k)
{
    layer *l = s_push(m, LAYER_CONV, h, w, c);
    l->k = k;
    l->pad = k / 2;
    l->oh = l->h;
    l->ow = l->w;
    l->oc = channels;
    l->fan_in = (size_t)k * (size_t)k * (size_t)l->c;
    l->relu = true;
}

static void s_pool(model *m, int s)
{
    layer *l = s_push(m, LAYER_POOL, 0, 0, 0);
    l->k = s;
    l->oh = l->h / s;
    l->ow = l->w / s;
    l->oc = l->c;
}

static int s_build_cnn(model *m, const model_spec *s, error *err)
{
    long h = s->image[0], w = s->image[1], c = s->image[2];
    if (s->image_count == 0) {
        h = w = lround(sqrt((double)m->inputs));
        c = 1;
    }
    if (h * w * c != m->inputs) {
        return error_set(err, ERROR_USAGE, "[model] image: %ld x %ld x %ld does not "
                         "match the data's %d features per example", h, w, c, m->inputs);
    }
    for (int i = 0; i < s->conv_count; i++) {
        s_conv(m, (int)h, (int)w, (int)c, (int)s->channels[i], (int)s->kernel);
        s_pool(m, (int)s->pool);
        if (m->layer[m->layers - 1].oh == 0 || m->layer[m->layers - 1].ow == 0) {
            return error_set(err, ERROR_USAGE, "[model] pool: %ld pools of %ld shrink "
                             "the %ld x %ld image to nothing", (long)(i + 1), s->pool, h, w);
        }
    }
    return 0;
}

/* The layer chain and parameter layout of m->spec. */
static int s_build(model *m, error *err)
{
    const model_spec *s = &m->spec;
    if (s->type == MODEL_CNN && s_build_cnn(m, s, err) < 0) {
        return -1;
    }
    int hidden = s->type == MODEL_SOFTMAX ? 0 : s->hidden_count;
    for (int i = 0; i < hidden; i++) {
        s_dense(m, (int)s->hidden[i], true, s->dropout);
    }
    s_dense(m, m->classes, false, 0);
    size_t off = 0;
    for (int i = 0; i < m->layers; i++) {
        layer *l = &m->layer[i];
        if (l->kind != LAYER_POOL) {
            l->w_off = off;
            off += l->fan_in * (size_t)l->oc;
            l->b_off = off;
            off += (size_t)l->oc;
        }
    }
    m->nparams = off;
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
    m->inputs = inputs;
    m->classes = classes;
    if (s_build(m, err) < 0) {
        free(m);
        return NULL;
    }
    return m;
}

int model_check(const model_spec *s, int inputs, int classes, error *err)
{
    model *m = calloc(1, sizeof *m);
    if (!m) {
        return error_set(err, ERROR_RUNTIME, "model: out of memory");
    }
    m->spec = *s;
    m->inputs = inputs;
    m->classes = classes;
    int rc = s_build(m, err);
    free(m);
    return rc;
}

static void s_free_scratch(model *m)
{
    backend *b = m->b;
    for (int i = 0; i <= m->layers; i++) {
        b->ops->release(b, m->act[i]);
        m->act[i] = NULL;
    }
    for (int i = 0; i < m->layers; i++) {
        b->ops->release(b, m->col[i]);
        m->col[i] = NULL;
    }
    for (int i = 0; i < 2; i++) {
        b->ops->release(b, m->delta[i]);
        m->delta[i] = NULL;
    }
    b->ops->release(b, m->labels);
    m->labels = NULL;
    m->capacity = 0;
}

/* Device copies of params and grad for the _host calls. */
static void s_reserve_device_params(model *m)
{
    if (m->dev_params) {
        return;
    }
    size_t bytes = m->nparams * sizeof(float);
    m->dev_params = m->b->ops->alloc(m->b, bytes);
    m->dev_grad = m->b->ops->alloc(m->b, bytes);
    if (!m->dev_params || !m->dev_grad) {
        abort();
    }
}

static float *s_floats(model *m, int rows, size_t per_row)
{
    return m->b->ops->alloc(m->b, (size_t)rows * per_row * sizeof(float));
}

static int s_reserve(model *m, int rows)
{
    if (rows <= m->capacity) {
        return 0;
    }
    s_free_scratch(m);
    size_t widest = (size_t)m->inputs;
    if (!(m->act[0] = s_floats(m, rows, (size_t)m->inputs))) {
        return -1;
    }
    for (int i = 0; i < m->layers; i++) {
        const layer *l = &m->layer[i];
        size_t size = model_layer_size(l);
        widest = size > widest ? size : widest;
        if (!(m->act[i + 1] = s_floats(m, rows, size))) {
            return -1;
        }
        if (l->kind == LAYER_CONV &&
            !(m->col[i] = s_floats(m, rows, (size_t)l->oh * l->ow * l->fan_in))) {
            return -1;
        }
    }
    for (int i = 0; i < 2; i++) {
        if (!(m->delta[i] = s_floats(m, rows, widest))) {
            return -1;
        }
    }
    if (!(m->labels = m->b->ops->alloc(m->b, (size_t)rows * sizeof(int32_t)))) {
        return -1;
    }
    m->capacity = rows;
    return 0;
}

void model_destroy(model **pm)
{
    model *m = *pm;
    if (!m) {
        return;
    }
    s_free_scratch(m);
    m->b->ops->release(m->b, m->dev_params);
    m->b->ops->release(m->b, m->dev_grad);
    free(m);
    *pm = NULL;
}

void model_seed_dropout(model *m, uint64_t seed)
{
    m->dropout_seed = seed;
}

/* Layer i's mask seed for the current model_gradient call. */
static uint64_t s_dropout_seed(const model *m, int i)
{
    return m->dropout_seed * 1000003u + m->calls * MODEL_MAX_LAYERS + (uint64_t)i;
}

void model_init_params(const model *m, float *params, uint64_t seed)
{
    float *host = calloc(m->nparams ? m->nparams : 1, sizeof *host);
    if (!host) {
        abort();
    }
    rng r = rng_derive(seed, RNG_INIT, 0);
    for (int i = 0; i < m->layers; i++) {
        const layer *l = &m->layer[i];
        if (l->kind == LAYER_POOL) {
            continue;
        }
        float *w = host + l->w_off;
        size_t n = l->fan_in * (size_t)l->oc;
        if (m->spec.init == INIT_HE) {
            double sd = sqrt(2.0 / (double)l->fan_in);
            for (size_t j = 0; j < n; j++) {
                w[j] = (float)(sd * rng_normal(&r));
            }
        } else {
            double a = sqrt(6.0 / ((double)l->fan_in + l->oc));
            for (size_t j = 0; j < n; j++) {
                w[j] = (float)(a * (2.0 * rng_uniform(&r) - 1.0));
            }
        }
    }
    m->b->ops->to_device(m->b, params, host, m->nparams * sizeof *host);
    free(host);
}

/* Forward pass up to the logits (left in act[layers]), with dropout when
 * training; returns the input matrix used. */
static const float *s_forward(model *m, const float *params, const float *x, int rows,
                              bool training)
{
    backend *b = m->b;
    const backend_ops *ops = b->ops;
    const float *input = x;
    if (!ops->host_visible) {
        ops->to_device(b, m->act[0], x, (size_t)rows * (size_t)m->inputs * sizeof(float));
        input = m->act[0];
    }
    const float *a = input;
    for (int i = 0; i < m->layers; i++) {
        const layer *l = &m->layer[i];
        float *z = m->act[i + 1];
        int pixels = rows * l->oh * l->ow;
        switch (l->kind) {
        case LAYER_DENSE:
            ops->gemm(b, z, a, params + l->w_off, false, false, rows, l->oc, (int)l->fan_in,
                      1.0f, 0.0f);
            ops->bias_add(b, z, params + l->b_off, rows, l->oc);
            break;
        case LAYER_CONV:
            ops->im2col(b, m->col[i], a, rows, l->h, l->w, l->c, l->k, l->pad);
            ops->gemm(b, z, m->col[i], params + l->w_off, false, false, pixels, l->oc,
                      (int)l->fan_in, 1.0f, 0.0f);
            ops->bias_add(b, z, params + l->b_off, pixels, l->oc);
            break;
        case LAYER_POOL:
            ops->maxpool_forward(b, z, a, rows, l->h, l->w, l->c, l->k);
            break;
        }
        if (l->relu) {
            ops->relu_forward(b, z, z, (size_t)rows * model_layer_size(l));
        }
        if (training && l->dropout > 0) {
            ops->dropout(b, z, z, (size_t)rows * model_layer_size(l), l->dropout,
                         s_dropout_seed(m, i));
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
    backend *b = m->b;
    const backend_ops *ops = b->ops;
    const int32_t *labels = y;
    if (!ops->host_visible) {
        ops->to_device(b, m->labels, y, (size_t)batch * sizeof *y);
        labels = m->labels;
    }
    const float *input = s_forward(m, params, x, batch, true);
    float *logits = m->act[m->layers];
    double loss_sum;
    int correct;
    int cur = 0;
    float *d = m->delta[cur];
    /* probabilities overwrite the logits: nothing needs them afterwards */
    ops->softmax_xent_forward(b, logits, &loss_sum, &correct, logits, labels, batch,
                              m->classes);
    ops->softmax_xent_backward(b, d, logits, labels, batch, m->classes,
                               1.0f / (float)batch);
    for (int i = m->layers - 1; i >= 0; i--) {
        const layer *l = &m->layer[i];
        const float *a_prev = i > 0 ? m->act[i] : input;
        float *d_prev = m->delta[1 - cur];
        int pixels = batch * l->oh * l->ow;
        size_t outputs = (size_t)batch * model_layer_size(l);
        if (l->dropout > 0) {
            ops->dropout(b, d, d, outputs, l->dropout, s_dropout_seed(m, i));
        }
        if (l->relu) {
            /* act is after dropout, but a dropped unit's d is already 0 */
            ops->relu_backward(b, d, d, m->act[i + 1], outputs);
        }
        switch (l->kind) {
        case LAYER_DENSE:
            ops->gemm(b, grad + l->w_off, a_prev, d, true, false, (int)l->fan_in, l->oc,
                      batch, 1.0f, 0.0f);
            ops->bias_grad(b, grad + l->b_off, d, batch, l->oc);
            if (i > 0) {
                ops->gemm(b, d_prev, d, params + l->w_off, false, true, batch,
                          (int)l->fan_in, l->oc, 1.0f, 0.0f);
            }
            break;
        case LAYER_CONV:
            ops->gemm(b, grad + l->w_off, m->col[i], d, true, false, (int)l->fan_in, l->oc,
                      pixels, 1.0f, 0.0f);
            ops->bias_grad(b, grad + l->b_off, d, pixels, l->oc);
            if (i > 0) {
                /* the column matrix is spent: it takes d W^T */
                ops->gemm(b, m->col[i], d, params + l->w_off, false, true, pixels,
                          (int)l->fan_in, l->oc, 1.0f, 0.0f);
                ops->col2im(b, d_prev, m->col[i], batch, l->h, l->w, l->c, l->k, l->pad);
            }
            break;
        case LAYER_POOL:
            if (i > 0) {
                ops->maxpool_backward(b, d_prev, d, a_prev, batch, l->h, l->w, l->c, l->k);
            }
            break;
        }
        cur = 1 - cur;
        d = d_prev;
    }
    m->calls++;
    return (float)(loss_sum / batch);
}

void model_evaluate(model *m, double *loss, double *accuracy,
                    const float *params, const dataset *d, int batch)
{
    if (s_reserve(m, batch) < 0) {
        abort();
    }
    backend *b = m->b;
    const backend_ops *ops = b->ops;
    double loss_sum = 0;
    long correct = 0;
    float *logits = m->act[m->layers];
    for (int start = 0; start < d->n; start += batch) {
        int rows = d->n - start < batch ? d->n - start : batch;
        const int32_t *labels = d->y + start;
        if (!ops->host_visible) {
            ops->to_device(b, m->labels, labels, (size_t)rows * sizeof *labels);
            labels = m->labels;
        }
        s_forward(m, params, d->x + (size_t)start * (size_t)d->dim, rows, false);
        double ls;
        int right;
        ops->softmax_xent_forward(b, logits, &ls, &right, logits, labels, rows, m->classes);
        loss_sum += ls;
        correct += right;
    }
    *loss = loss_sum / d->n;
    *accuracy = (double)correct / d->n;
}

float model_gradient_host(model *m, float *grad, const float *params,
                          const float *x, const int32_t *y, int batch)
{
    const backend_ops *ops = m->b->ops;
    if (ops->host_visible) {
        return model_gradient(m, grad, params, x, y, batch);
    }
    s_reserve_device_params(m);
    size_t bytes = m->nparams * sizeof(float);
    ops->to_device(m->b, m->dev_params, params, bytes);
    float loss = model_gradient(m, m->dev_grad, m->dev_params, x, y, batch);
    ops->to_host(m->b, grad, m->dev_grad, bytes);
    return loss;
}

void model_evaluate_host(model *m, double *loss, double *accuracy,
                         const float *params, const dataset *d, int batch)
{
    const backend_ops *ops = m->b->ops;
    if (ops->host_visible) {
        model_evaluate(m, loss, accuracy, params, d, batch);
        return;
    }
    s_reserve_device_params(m);
    ops->to_device(m->b, m->dev_params, params, m->nparams * sizeof(float));
    model_evaluate(m, loss, accuracy, m->dev_params, d, batch);
}
