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
 *   pool   d_prev = d sent back to each window's maximum.
 * A convolution with k = 3 or 5 and at least WINOGRAD_MIN_CHANNELS inputs
 * computes the same sums through the backend's Winograd transforms where
 * it has them (backend.conv = winograd, the default): fewer products,
 * float rounding apart the same values. */
#include "core/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"

size_t model_layer_size(const layer *l)
{
    return (size_t)l->oh * (size_t)l->ow * (size_t)l->oc;
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

/* Input channels below which a Winograd layer's a*a GEMMs, whose inner
 * dimension is the channels, lose to im2col's one (a first layer on gray
 * or colour images). */
enum { WINOGRAD_MIN_CHANNELS = 8 };

/* Whether layer l convolves through the backend's Winograd transforms. */
static bool s_winograd(const model *m, const layer *l)
{
    return l->kind == LAYER_CONV && m->b->ops->winograd_input &&
           m->b->conv == BACKEND_CONV_WINOGRAD && backend_winograd_supports(l->k) &&
           l->c >= WINOGRAD_MIN_CHANNELS;
}

/* A Winograd layer's scratch, carved from its col[i] for `capacity` rows:
 * v (a*a x T x c), then m (a*a x T x oc), u and du (a*a x c x oc each),
 * with T the tiles of `rows` examples. Backward reuses m for the gradient
 * with respect to m, and v for the one with respect to v. */
typedef struct winograd_scratch {
    float *v, *m, *u, *du;
    size_t tiles, planes;   /* T and a*a */
} winograd_scratch;

/* a*a, the GEMMs (and planes of v and m) of a Winograd layer */
static size_t s_winograd_planes(const layer *l)
{
    size_t points = (size_t)(backend_winograd_tile(l->k) + l->k - 1);
    return points * points;
}

static size_t s_winograd_floats(const layer *l, int rows)
{
    size_t planes = s_winograd_planes(l);
    size_t tiles = backend_winograd_tiles(rows, l->oh, l->ow, l->k);
    return planes * (tiles * (size_t)(l->c + l->oc) + 2 * (size_t)l->c * (size_t)l->oc);
}

static winograd_scratch s_winograd_scratch(const model *m, int i, int rows)
{
    const layer *l = &m->layer[i];
    size_t planes = s_winograd_planes(l);
    size_t most = backend_winograd_tiles(m->capacity, l->oh, l->ow, l->k);
    winograd_scratch w = {.tiles = backend_winograd_tiles(rows, l->oh, l->ow, l->k),
                          .planes = planes};
    w.v = m->col[i];
    w.m = w.v + planes * most * (size_t)l->c;
    w.u = w.m + planes * most * (size_t)l->oc;
    w.du = w.u + planes * (size_t)l->c * (size_t)l->oc;
    return w;
}

/* z (rows x oh x ow x oc) = layer i's convolution of a, without the bias:
 * the a*a GEMMs between the transforms (backend.h). */
static void s_winograd_forward(model *m, int i, float *z, const float *a,
                               const float *params, int rows)
{
    backend *b = m->b;
    const backend_ops *ops = b->ops;
    const layer *l = &m->layer[i];
    winograd_scratch w = s_winograd_scratch(m, i, rows);
    size_t t = w.tiles, c = (size_t)l->c, oc = (size_t)l->oc;
    ops->winograd_filter(b, w.u, params + l->w_off, l->c, l->oc, l->k);
    ops->winograd_input(b, w.v, a, rows, l->h, l->w, l->c, l->k, l->pad);
    for (size_t p = 0; p < w.planes; p++) {
        ops->gemm(b, w.m + p * t * oc, w.v + p * t * c, w.u + p * c * oc, false, false,
                  (int)t, l->oc, l->c, 1.0f, 0.0f);
    }
    ops->winograd_output(b, z, w.m, rows, l->oh, l->ow, l->oc, l->k);
}

/* The weight gradient of layer i into dw and, where d_prev is not NULL,
 * the gradient with respect to its input, from d (its output's). */
static void s_winograd_backward(model *m, int i, float *dw, float *d_prev, const float *d,
                                int rows)
{
    backend *b = m->b;
    const backend_ops *ops = b->ops;
    const layer *l = &m->layer[i];
    winograd_scratch w = s_winograd_scratch(m, i, rows);
    size_t t = w.tiles, c = (size_t)l->c, oc = (size_t)l->oc;
    ops->winograd_output_grad(b, w.m, d, rows, l->oh, l->ow, l->oc, l->k);
    for (size_t p = 0; p < w.planes; p++) {
        ops->gemm(b, w.du + p * c * oc, w.v + p * t * c, w.m + p * t * oc, true, false,
                  l->c, l->oc, (int)t, 1.0f, 0.0f);
    }
    ops->winograd_filter_grad(b, dw, w.du, l->c, l->oc, l->k);
    if (!d_prev) {
        return;
    }
    for (size_t p = 0; p < w.planes; p++) {
        ops->gemm(b, w.v + p * t * c, w.m + p * t * oc, w.u + p * c * oc, false, true,
                  (int)t, l->c, l->oc, 1.0f, 0.0f);
    }
    ops->winograd_input_grad(b, d_prev, w.v, rows, l->h, l->w, l->c, l->k, l->pad);
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
        if (s_winograd(m, l)) {
            m->col[i] = s_floats(m, 1, s_winograd_floats(l, rows));
        } else if (l->kind == LAYER_CONV) {
            m->col[i] = s_floats(m, rows, (size_t)l->oh * l->ow * l->fan_in);
        }
        if (l->kind == LAYER_CONV && !m->col[i]) {
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

void model_seed_dropout(model *m, uint64_t seed, uint64_t step)
{
    m->dropout_seed = seed;
    m->dropout_step = step;
}

/* Layer i's mask seed for the current model_gradient call. */
static uint64_t s_dropout_seed(const model *m, int i)
{
    return m->dropout_seed * 1000003u + m->dropout_step * MODEL_MAX_LAYERS + (uint64_t)i;
}

void model_init_host(const model *m, float *host, uint64_t seed)
{
    memset(host, 0, m->nparams * sizeof *host);
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
        } else {   /* Glorot: a convolution's fan_out is k * k * oc, as its fan_in k * k * c */
            double fan_out = l->kind == LAYER_CONV ? (double)l->k * l->k * l->oc : l->oc;
            double a = sqrt(6.0 / ((double)l->fan_in + fan_out));
            for (size_t j = 0; j < n; j++) {
                w[j] = (float)(a * (2.0 * rng_uniform(&r) - 1.0));
            }
        }
    }
}

void model_init_params(const model *m, float *params, uint64_t seed)
{
    float *host = malloc((m->nparams ? m->nparams : 1) * sizeof *host);
    if (!host) {
        abort();
    }
    model_init_host(m, host, seed);
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
            ops->bias_add(b, z, params + l->b_off, rows, l->oc, l->relu);
            break;
        case LAYER_CONV:
            if (s_winograd(m, l)) {
                s_winograd_forward(m, i, z, a, params, rows);
            } else {
                ops->im2col(b, m->col[i], a, rows, l->h, l->w, l->c, l->k, l->pad);
                ops->gemm(b, z, m->col[i], params + l->w_off, false, false, pixels, l->oc,
                          (int)l->fan_in, 1.0f, 0.0f);
            }
            ops->bias_add(b, z, params + l->b_off, pixels, l->oc, l->relu);
            break;
        case LAYER_POOL:   /* no bias, no activation (layers.c) */
            ops->maxpool_forward(b, z, a, rows, l->h, l->w, l->c, l->k);
            break;
        }
        if (training && l->dropout > 0) {
            ops->dropout(b, z, z, (size_t)rows * model_layer_size(l), l->dropout,
                         s_dropout_seed(m, i));
        }
        a = z;
    }
    return input;
}

/* The squared loss of the linear model's rows outputs (one each, in the
 * backend's memory) against the targets whose bits y holds (host memory):
 * returns the sum of (out - t)^2 / 2 and, when d is not NULL, writes
 * scale (out - t) into d (the backend's memory). Done on the host: rows
 * values each way. */
static double s_squared_loss(model *m, const float *out, const int32_t *y, int rows,
                             float *d, float scale)
{
    const backend_ops *ops = m->b->ops;
    float *host = malloc((size_t)rows * sizeof *host);
    if (!host) {
        abort();   /* as s_reserve: nothing sensible to do without it */
    }
    ops->to_host(m->b, host, out, (size_t)rows * sizeof *host);
    double sum = 0;
    for (int i = 0; i < rows; i++) {
        float r = host[i] - data_target_of(y[i]);
        sum += 0.5 * (double)r * (double)r;
        host[i] = scale * r;
    }
    if (d) {
        ops->to_device(m->b, d, host, (size_t)rows * sizeof *host);
    }
    free(host);
    return sum;
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
    if (m->spec.type == MODEL_LINEAR) {
        loss_sum = s_squared_loss(m, logits, y, batch, d, 1.0f / (float)batch);
    } else {
        /* probabilities overwrite the logits: nothing needs them afterwards */
        ops->softmax_xent_forward(b, logits, &loss_sum, &correct, logits, labels, batch,
                                  m->classes);
        ops->softmax_xent_backward(b, d, logits, labels, batch, m->classes,
                                   1.0f / (float)batch);
    }
    for (int i = m->layers - 1; i >= 0; i--) {
        const layer *l = &m->layer[i];
        const float *a_prev = i > 0 ? m->act[i] : input;
        float *d_prev = m->delta[1 - cur];
        int pixels = batch * l->oh * l->ow;
        size_t outputs = (size_t)batch * model_layer_size(l);
        if (l->dropout > 0) {
            ops->dropout(b, d, d, outputs, l->dropout, s_dropout_seed(m, i));
        }
        /* ReLU's mask is act, which is after dropout, but a dropped unit's
         * d is already 0 */
        const float *relu_out = l->relu ? m->act[i + 1] : NULL;
        switch (l->kind) {
        case LAYER_DENSE:
            ops->bias_grad(b, grad + l->b_off, d, relu_out, batch, l->oc);
            ops->gemm(b, grad + l->w_off, a_prev, d, true, false, (int)l->fan_in, l->oc,
                      batch, 1.0f, 0.0f);
            if (i > 0) {
                ops->gemm(b, d_prev, d, params + l->w_off, false, true, batch,
                          (int)l->fan_in, l->oc, 1.0f, 0.0f);
            }
            break;
        case LAYER_CONV:
            ops->bias_grad(b, grad + l->b_off, d, relu_out, pixels, l->oc);
            if (s_winograd(m, l)) {
                s_winograd_backward(m, i, grad + l->w_off, i > 0 ? d_prev : NULL, d, batch);
                break;
            }
            ops->gemm(b, grad + l->w_off, m->col[i], d, true, false, (int)l->fan_in, l->oc,
                      pixels, 1.0f, 0.0f);
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
        if (m->grad_ready && l->kind != LAYER_POOL && ops->host_visible) {
            m->grad_ready(m->grad_ready_ctx, l->w_off);
        }
        cur = 1 - cur;
        d = d_prev;
    }
    m->dropout_step++;
    return (float)(loss_sum / batch);
}

void model_evaluate(model *m, double *loss, double *accuracy,
                    const float *params, const dataset *d, int batch)
{
    /* room for the rows there are: an eval.batch past the test set made
     * room for all of it (627 MB of columns for the CNN at 1,000) */
    batch = d->n > 0 && d->n < batch ? d->n : batch;
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
        int right = 0;
        if (m->spec.type == MODEL_LINEAR) {
            ls = s_squared_loss(m, logits, d->y + start, rows, NULL, 0);
        } else {
            ops->softmax_xent_forward(b, logits, &ls, &right, logits, labels, rows,
                                      m->classes);
        }
        loss_sum += ls;
        correct += right;
    }
    *loss = loss_sum / d->n;
    *accuracy = m->spec.type == MODEL_LINEAR ? NAN : (double)correct / d->n;
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
