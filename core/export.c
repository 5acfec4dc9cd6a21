/* export.c: model.npy and model.json. */
#include "core/export.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "core/run.h"

#define NPY_ALIGN 128

/* The NPY 1.0 header for n float32 values: magic, version, length, and the
 * dict padded with spaces to a multiple of NPY_ALIGN, ending in '\n'. */
static size_t s_npy_header(char *out, size_t cap, size_t n)
{
    char dict[128];
    int len = snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, "
                       "'shape': (%zu,), }", n);
    size_t total = 10 + (size_t)len + 1;
    total = (total + NPY_ALIGN - 1) / NPY_ALIGN * NPY_ALIGN;
    if (total > cap) {
        return 0;
    }
    memset(out, ' ', total);
    memcpy(out, "\x93NUMPY\x01\x00", 8);
    uint16_t hlen = (uint16_t)(total - 10);
    out[8] = (char)(hlen & 0xff);
    out[9] = (char)(hlen >> 8);
    memcpy(out + 10, dict, (size_t)len);
    out[total - 1] = '\n';
    return total;
}

static int s_write_npy(const char *dir, const float *params, size_t n, error *err)
{
    char header[NPY_ALIGN * 2], path[4700];
    size_t hlen = s_npy_header(header, sizeof header, n);
    snprintf(path, sizeof path, "%s/model.npy", dir);
    /* float32 as stored: asgd runs on little-endian hosts (x86-64, aarch64) */
    return run_write_atomic(path, header, hlen, params, n * sizeof(float), err);
}

static cJSON *s_array3(int a, int b, int c)
{
    const int v[3] = {a, b, c};
    return cJSON_CreateIntArray(v, 3);
}

/* A weight or bias block: its offset in the vector, shape and order. */
static void s_block(cJSON *layer, const char *name, size_t offset, const int *shape, int dims)
{
    cJSON *b = cJSON_AddObjectToObject(layer, name);
    cJSON_AddNumberToObject(b, "offset", (double)offset);
    cJSON_AddItemToObject(b, "shape", cJSON_CreateIntArray(shape, dims));
    cJSON_AddStringToObject(b, "order", "row-major (C order)");
}

static cJSON *s_layer(const layer *l, int index)
{
    cJSON *j = cJSON_CreateObject();
    static const char *const kinds[] = {"dense", "conv", "maxpool"};
    char name[32];
    snprintf(name, sizeof name, "%s%d", kinds[l->kind], index + 1);
    cJSON_AddStringToObject(j, "name", name);
    cJSON_AddStringToObject(j, "kind", kinds[l->kind]);
    cJSON_AddItemToObject(j, "input", s_array3(l->h, l->w, l->c));
    cJSON_AddItemToObject(j, "output", s_array3(l->oh, l->ow, l->oc));
    if (l->kind == LAYER_DENSE) {
        const int w[2] = {(int)l->fan_in, l->oc}, b[1] = {l->oc};
        s_block(j, "W", l->w_off, w, 2);
        s_block(j, "b", l->b_off, b, 1);
        cJSON_AddStringToObject(j, "formula", "y = x W + b, x the input flattened in (h, w, c) "
                                "order to a row of h*w*c values");
    } else if (l->kind == LAYER_CONV) {
        const int w[4] = {l->k, l->k, l->c, l->oc}, b[1] = {l->oc};
        s_block(j, "W", l->w_off, w, 4);
        s_block(j, "b", l->b_off, b, 1);
        cJSON_AddNumberToObject(j, "padding", l->pad);
        cJSON_AddNumberToObject(j, "stride", 1);
        cJSON_AddStringToObject(j, "formula", "y[i,j,o] = b[o] + sum over di, dj < k and ci of "
                                "x[i+di-padding, j+dj-padding, ci] W[di,dj,ci,o], x zero outside "
                                "the image (W in HWIO order)");
    } else {
        cJSON_AddNumberToObject(j, "window", l->k);
        cJSON_AddStringToObject(j, "formula", "y[i,j,c] = max of x[window*i + di, window*j + dj, "
                                "c] over di, dj < window; rows and columns past the last whole "
                                "window are dropped");
    }
    cJSON_AddBoolToObject(j, "relu", l->relu);
    if (l->relu) {
        cJSON_AddStringToObject(j, "then", "y = max(y, 0)");
    }
    if (l->dropout > 0) {
        cJSON_AddNumberToObject(j, "dropout_in_training", l->dropout);
    }
    return j;
}

static cJSON *s_describe(const model *m, const dataset *d)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "format", "asgd model 1: model.npy is the flat float32 vector "
                            "these layers index");
    cJSON_AddStringToObject(j, "model", model_type_name(m->spec.type));
    cJSON_AddNumberToObject(j, "params", (double)m->nparams);
    cJSON_AddStringToObject(j, "file", "model.npy");
    cJSON *in = cJSON_AddObjectToObject(j, "input");
    cJSON_AddNumberToObject(in, "features", m->inputs);
    cJSON_AddStringToObject(in, "transform", "x = (raw - mean) / std, raw an IDX file's pixel "
                            "byte / 255 (a generated set's features as made), an example's "
                            "features in (h, w, c) order");
    /* to the bit: cJSON writes 15 digits where they read back within an
     * epsilon, and asgd eval compares these with the data's own */
    char mean[32], std[32];
    snprintf(mean, sizeof mean, "%.17g", d->mean);
    snprintf(std, sizeof std, "%.17g", d->std);
    cJSON_AddRawToObject(in, "mean", mean);
    cJSON_AddRawToObject(in, "std", std);
    cJSON_AddNumberToObject(j, "classes", m->classes);
    /* the set its recorded accuracy is of: the first test_examples of the
     * test file (data.test_size), which a reader must take too */
    cJSON_AddNumberToObject(j, "test_examples", d->n);
    cJSON_AddStringToObject(j, "output", m->spec.type == MODEL_LINEAR
                            ? "the last layer's y: the predicted target (least squares)"
                            : "the last layer's y: logits; the prediction is their argmax, "
                              "probabilities their softmax");
    cJSON *layers = cJSON_AddArrayToObject(j, "layers");
    for (int i = 0; i < m->layers; i++) {
        cJSON_AddItemToArray(layers, s_layer(&m->layer[i], i));
    }
    return j;
}

int export_model(const model *m, const float *params, const dataset *d, const char *dir,
                 error *err)
{
    if (s_write_npy(dir, params, m->nparams, err) < 0) {
        return -1;
    }
    cJSON *j = s_describe(m, d);
    char *text = j ? cJSON_Print(j) : NULL;
    cJSON_Delete(j);
    if (!text) {
        return error_set(err, ERROR_RUNTIME, "model.json: out of memory");
    }
    char path[4700];
    snprintf(path, sizeof path, "%s/model.json", dir);
    int rc = run_write_atomic(path, text, strlen(text), "\n", 1, err);
    cJSON_free(text);
    return rc;
}

int export_read(const char *dir, float *params, size_t n, error *err)
{
    char path[4700], want[NPY_ALIGN * 2], have[NPY_ALIGN * 2];
    snprintf(path, sizeof path, "%s/model.npy", dir);
    size_t hlen = s_npy_header(want, sizeof want, n);
    FILE *f = fopen(path, "rb");
    if (!f) {
        return error_set(err, ERROR_USAGE, "%s: cannot open: %s (a run keeps its model when it "
                         "ends)", path, strerror(errno));
    }
    bool ok = fread(have, 1, hlen, f) == hlen && memcmp(have, want, hlen) == 0 &&
              fread(params, sizeof(float), n, f) == n && fgetc(f) == EOF;
    fclose(f);
    return ok ? 0 : error_set(err, ERROR_USAGE, "%s: not a float32 vector of the %zu "
                              "parameters this run's model has", path, n);
}
