/* backend.h: the compute backend, a versioned table of operations.
 *
 * Models call only these operations, so that a device (the CPU through
 * OpenBLAS today, CUDA later) is one more table filled with designated
 * initializers. Buffers passed to operations live in the backend's memory
 * (backend_alloc); `host_visible` says whether host code may read them
 * directly (true on the CPU, where to_device/to_host are plain copies).
 *
 * Shapes: matrices are row-major; outputs come first, then inputs, then
 * sizes, as in llm.c. */
#ifndef ASGD_BACKEND_H
#define ASGD_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "core/error.h"

#define BACKEND_OPS_VERSION 1

typedef struct backend backend;

typedef struct backend_ops {
    int version;             /* BACKEND_OPS_VERSION */
    const char *name;
    bool host_visible;

    void *(*alloc)(backend *b, size_t bytes);              /* zeroed; NULL on failure */
    void (*release)(backend *b, void *p);
    void (*to_device)(backend *b, void *dst, const void *src, size_t bytes);
    void (*to_host)(backend *b, void *dst, const void *src, size_t bytes);

    /* c (m x n) = alpha * op(a) (m x k) * op(b) (k x n) + beta * c,
     * where op(x) is x or its transpose as stored. */
    void (*gemm)(backend *b, float *c, const float *a, const float *bm,
                 bool trans_a, bool trans_b, int m, int n, int k,
                 float alpha, float beta);
    /* out (rows x cols) += bias (cols) on every row */
    void (*bias_add)(backend *b, float *out, const float *bias, int rows, int cols);
    /* dbias (cols) = sum over rows of dout (rows x cols) */
    void (*bias_grad)(backend *b, float *dbias, const float *dout, int rows, int cols);
    /* out = max(in, 0); in-place allowed */
    void (*relu_forward)(backend *b, float *out, const float *in, size_t n);
    /* din = dout where out > 0, else 0; out is the forward output */
    void (*relu_backward)(backend *b, float *din, const float *dout,
                          const float *out, size_t n);
    /* probs (rows x cols) = softmax(logits); *loss_sum = sum over rows of
     * -log probs[label]; *correct = rows whose argmax is the label.
     * probs may be logits (in place). */
    void (*softmax_xent_forward)(backend *b, float *probs, double *loss_sum,
                                 int *correct, const float *logits,
                                 const int32_t *labels, int rows, int cols);
    /* dlogits = scale * (probs - onehot(labels)) */
    void (*softmax_xent_backward)(backend *b, float *dlogits, const float *probs,
                                  const int32_t *labels, int rows, int cols,
                                  float scale);
    /* y += a * x */
    void (*axpy)(backend *b, float *y, float a, const float *x, size_t n);
    /* x *= a */
    void (*scale)(backend *b, float *x, float a, size_t n);
    /* dst = src */
    void (*copy)(backend *b, float *dst, const float *src, size_t n);
} backend_ops;

struct backend {
    const backend_ops *ops;
    int threads;
    void *state;          /* the implementation's own */
};

enum backend_device { BACKEND_CPU, BACKEND_CUDA, BACKEND_AUTO };

typedef struct backend_spec {
    int device;           /* enum backend_device */
    long threads;         /* 0 = the library's default */
} backend_spec;

int backend_spec_configure(backend_spec *s, config *c, error *err);
/* Opens the backend the spec names; `cuda` without a usable GPU is
 * ERROR_USAGE. */
backend *backend_new(const backend_spec *s, error *err);
void backend_destroy(backend **b);

extern const backend_ops backend_cpu_ops;
int backend_cpu_open(backend *b, error *err);

#endif
