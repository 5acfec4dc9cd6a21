/* model.h: models over one flat parameter vector.
 *
 * `softmax` is multinomial logistic regression; `mlp` adds ReLU hidden
 * layers of the sizes in [model] hidden. Layer l owns W_l (in x out,
 * row-major) then b_l (out) in the flat vector, in layer order; the model
 * itself holds only shapes and scratch space, so the same model computes
 * on any parameter vector (a worker's copy, the server's centre).
 *
 * Parameter and gradient vectors live in the backend's memory. */
#ifndef ASGD_MODEL_H
#define ASGD_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "core/backend/backend.h"
#include "core/config.h"
#include "core/data.h"
#include "core/error.h"

#define MODEL_MAX_HIDDEN 8

enum model_type { MODEL_SOFTMAX, MODEL_MLP };
enum model_init { INIT_HE, INIT_XAVIER };

typedef struct model_spec {
    int type;                      /* enum model_type */
    int hidden_count;
    long hidden[MODEL_MAX_HIDDEN];
    int init;                      /* enum model_init */
} model_spec;

typedef struct model {
    model_spec spec;
    backend *b;
    int layers;                          /* weight layers */
    int dims[MODEL_MAX_HIDDEN + 2];      /* dims[0] inputs ... dims[layers] classes */
    size_t w_off[MODEL_MAX_HIDDEN + 1], b_off[MODEL_MAX_HIDDEN + 1];
    size_t nparams;
    /* scratch, for up to `capacity` rows */
    int capacity;
    float *act[MODEL_MAX_HIDDEN + 2];    /* act[0] input (device copy), act[l] layer l output */
    float *delta[2];                     /* ping-pong gradients wrt activations */
    int32_t *labels;
} model;

int model_spec_configure(model_spec *s, config *c, error *err);
const char *model_type_name(int type);

/* Shapes a model for `inputs` features and `classes` classes. */
model *model_new(const model_spec *s, backend *b, int inputs, int classes, error *err);
void model_destroy(model **m);

/* Fills params (nparams, backend memory) with a seeded He or Xavier
 * initialisation; biases are zero. */
void model_init_params(const model *m, float *params, uint64_t seed);

/* One minibatch: grad (nparams) = d mean loss / d params at params, for
 * x (batch x inputs, host memory) and labels y (host). Returns the mean
 * cross-entropy loss. */
float model_gradient(model *m, float *grad, const float *params,
                     const float *x, const int32_t *y, int batch);

/* Mean loss and accuracy of params over a whole data set, in chunks of
 * `batch` rows. */
void model_evaluate(model *m, double *loss, double *accuracy,
                    const float *params, const dataset *d, int batch);

#endif
