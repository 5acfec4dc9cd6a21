/* model.h: models over one flat parameter vector.
 *
 * A model is a chain of layers:
 *   softmax  dense(classes)                       multinomial logistic regression
 *   linear   dense(1), squared loss               least squares, on regression data
 *            (classes 1: the targets are data_target's); its loss is
 *            (x.w + b - t)^2 / 2 per example, and evaluation has no accuracy
 *            (NaN)
 *   mlp      [dense(h) relu]... dense(classes)    hidden sizes in [model] hidden
 *   cnn      [conv(k x k x ch, same) relu, maxpool(p)]... [dense(h) relu]...
 *            dense(classes); channels, kernel, pool and hidden in [model]. The
 *            defaults are the network of TensorFlow's layers tutorial: conv
 *            5x5x32, pool 2, conv 5x5x64, pool 2, dense 1024 (dropout 0.4),
 *            dense 10.
 * [model] dropout (mlp: 0, cnn: 0.4) drops hidden dense units while
 * training (inverted dropout: kept ones scaled by 1 / (1 - rate)), with a
 * fresh mask for every model_gradient call; evaluation uses none.
 * Activations are NHWC rows, one row per example, so a dense layer reads an
 * image as its h*w*c features. Each dense or convolutional layer owns W
 * (fan_in x out, row-major; a convolution's fan_in is k*k*c in (kh, kw, c)
 * order, TensorFlow's HWIO) then b (out) in the flat vector, in layer order.
 * The model holds only shapes and scratch space, so the same model computes
 * on any parameter vector (a worker's copy, the server's centre).
 *
 * Parameter and gradient vectors live in the backend's memory; inputs and
 * labels are host memory. */
#ifndef ASGD_MODEL_H
#define ASGD_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/backend/backend.h"
#include "core/config.h"
#include "core/data.h"
#include "core/error.h"

#define MODEL_MAX_HIDDEN 8
#define MODEL_MAX_CONV 4
#define MODEL_MAX_LAYERS (2 * MODEL_MAX_CONV + MODEL_MAX_HIDDEN + 1)

enum model_type { MODEL_SOFTMAX, MODEL_MLP, MODEL_CNN, MODEL_LINEAR };
enum model_init { INIT_HE, INIT_XAVIER };
enum layer_kind { LAYER_DENSE, LAYER_CONV, LAYER_POOL };

typedef struct model_spec {
    int type;                      /* enum model_type */
    int hidden_count;              /* mlp, cnn: dense hidden layers */
    long hidden[MODEL_MAX_HIDDEN];
    int conv_count;                /* cnn: convolutions, each followed by a pool */
    long channels[MODEL_MAX_CONV];
    long kernel, pool;             /* cnn: odd kernel size, pool window */
    int image_count;               /* cnn: 0 or 3 (height, width, channels) */
    long image[3];                 /* 0 values: a square one-channel image */
    double dropout;                /* mlp, cnn: rate after each hidden dense layer */
    int init;                      /* enum model_init */
} model_spec;

typedef struct layer {
    int kind;                      /* enum layer_kind */
    int h, w, c;                   /* input shape per example (dense: 1 x 1 x in) */
    int oh, ow, oc;                /* output shape per example */
    int k, pad;                    /* conv: kernel and zero padding; pool: window */
    bool relu;
    float dropout;                 /* rate, after the relu; 0 = none */
    size_t w_off, b_off;           /* dense, conv: W then b in the flat vector */
    size_t fan_in;                 /* rows of W */
} layer;

typedef struct model {
    model_spec spec;
    backend *b;
    int inputs, classes;
    int layers;
    layer layer[MODEL_MAX_LAYERS];
    size_t nparams;
    /* scratch, for up to `capacity` examples */
    int capacity;
    float *act[MODEL_MAX_LAYERS + 1];    /* act[0] input (device copy), act[l + 1] layer l's output */
    float *col[MODEL_MAX_LAYERS];        /* a convolution's im2col matrix, or its Winograd scratch */
    float *delta[2];                     /* ping-pong gradients wrt activations */
    int32_t *labels;
    float *dev_params, *dev_grad;        /* for the _host calls on a device backend */
    uint64_t dropout_seed;               /* masks: from this seed and the step */
    uint64_t dropout_step;               /* the next model_gradient's; each counts it up */
    /* Told during model_gradient's backward pass, after each layer with
     * parameters, that grad[from, nparams) is final (layers lie in order
     * in the flat vector and backward runs from the last), on a backend
     * whose memory the host sees; NULL: nobody listens. */
    void (*grad_ready)(void *ctx, size_t from);
    void *grad_ready_ctx;
} model;

int model_spec_configure(model_spec *s, config *c, error *err);
const char *model_type_name(int type);

/* Shapes a model for `inputs` features and `classes` classes; a cnn whose
 * image does not fit the inputs is ERROR_USAGE. */
model *model_new(const model_spec *s, backend *b, int inputs, int classes, error *err);
void model_destroy(model **m);
/* model_new's shape checks alone (no backend needed), for the data's
 * inputs and classes: run before any run folder or process exists. Stores
 * the parameter count in *nparams (may be NULL). */
int model_check(const model_spec *s, int inputs, int classes, size_t *nparams, error *err);
/* Elements per example of layer l's output. */
size_t model_layer_size(const layer *l);

/* The dropout masks of the next model_gradient: from seed (a worker's
 * own stream; 0 by default) and step, which each call counts up. A worker
 * seeds each of its steps, so that step k's masks are the same whoever
 * computes it: after a resume or a restart, in a model the simulator's
 * workers share. */
void model_seed_dropout(model *m, uint64_t seed, uint64_t step);

/* Fills params (nparams, backend memory) with a seeded He (normal, sd
 * sqrt(2 / fan_in)) or Xavier (uniform within sqrt(6 / (fan_in + fan_out)),
 * a convolution's fans k * k * c and k * k * oc, as TensorFlow's
 * glorot_uniform and PyTorch's xavier_uniform_) initialisation; biases are
 * zero. */
void model_init_params(const model *m, float *params, uint64_t seed);
/* The same values into host memory, whatever the model's backend (a
 * parameter vector the rules read: a GPU model's device copy is not one). */
void model_init_host(const model *m, float *host, uint64_t seed);

/* One minibatch: grad (nparams) = d mean loss / d params at params, for
 * x (batch x inputs, host memory) and labels y (host). Returns the mean
 * cross-entropy loss. */
float model_gradient(model *m, float *grad, const float *params,
                     const float *x, const int32_t *y, int batch);

/* Mean loss and accuracy of params over a whole data set, in chunks of
 * `batch` rows. */
void model_evaluate(model *m, double *loss, double *accuracy,
                    const float *params, const dataset *d, int batch);

/* The same two with params and grad in host memory (a worker's copy, the
 * evaluator's pull): on a backend whose memory the host cannot see they
 * pass through device copies that the model keeps; on the CPU they are
 * model_gradient and model_evaluate. */
float model_gradient_host(model *m, float *grad, const float *params,
                          const float *x, const int32_t *y, int batch);
void model_evaluate_host(model *m, double *loss, double *accuracy,
                         const float *params, const dataset *d, int batch);

#endif
