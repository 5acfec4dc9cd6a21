/* layers.c: [model] read, and a model's layer chain laid out over the flat
 * parameter vector (shapes, offsets, parameter count); model.c computes
 * on it. */
#include "core/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const s_types[] = {"softmax", "mlp", "cnn", "linear", NULL};
static const char *const s_inits[] = {"he", "xavier", NULL};

const char *model_type_name(int type)
{
    return s_types[type];
}

static int s_configure_cnn(model_spec *s, config *c, error *err)
{
    if (config_get_int_list(c, "model", "channels", "32,64", 1, 1 << 14, s->channels,
                            MODEL_MAX_CONV, &s->conv_count, err) < 0 ||
        config_get_int(c, "model", "kernel", 5, 1, 31, &s->kernel, err) < 0 ||
        config_get_int(c, "model", "pool", 2, 1, 16, &s->pool, err) < 0 ||
        config_get_int_list(c, "model", "hidden", "1024", 1, 1 << 20, s->hidden,
                            MODEL_MAX_HIDDEN, &s->hidden_count, err) < 0 ||
        config_get_int_list(c, "model", "image", "", 1, 1 << 14, s->image, 3,
                            &s->image_count, err) < 0 ||
        /* dropout follows the hidden dense layers: without any, a value
         * given is "not used by this configuration" */
        (s->hidden_count > 0 && config_get_double(c, "model", "dropout", 0.4, 0, 1,
                                                  CONFIG_OPEN_HI, &s->dropout, err) < 0)) {
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
            return config_fail(c, "model", "hidden", err, "an mlp needs at least one hidden "
                               "layer (use type = softmax for none)");
        }
    }
    if (s->type == MODEL_CNN && s_configure_cnn(s, c, err) < 0) {
        return -1;
    }
    return config_get_enum(c, "model", "init", "he", s_inits, &s->init, err);
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
    if ((s->type == MODEL_LINEAR) != (m->classes == 1)) {
        return error_set(err, ERROR_USAGE, s->type == MODEL_LINEAR
                         ? "[model] type: linear (least squares) needs regression data "
                           "(dataset = regression), not %d classes"
                         : "[model] type: %d class: a regression set needs type = linear",
                         m->classes);
    }
    if (s->type == MODEL_CNN && s_build_cnn(m, s, err) < 0) {
        return -1;
    }
    int hidden = s->type == MODEL_SOFTMAX || s->type == MODEL_LINEAR ? 0 : s->hidden_count;
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

int model_check(const model_spec *s, int inputs, int classes, size_t *nparams, error *err)
{
    model *m = calloc(1, sizeof *m);
    if (!m) {
        return error_set(err, ERROR_RUNTIME, "model: out of memory");
    }
    m->spec = *s;
    m->inputs = inputs;
    m->classes = classes;
    int rc = s_build(m, err);
    if (rc == 0 && nparams) {
        *nparams = m->nparams;
    }
    free(m);
    return rc;
}
