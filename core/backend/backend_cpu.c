/* backend_cpu.c: the CPU backend. GEMM is OpenBLAS's cblas_sgemm; the
 * element-wise operations are plain loops, which are also the reference
 * that other backends are checked against. */
#include "core/backend/backend.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

static void *s_alloc(backend *b, size_t bytes)
{
    (void)b;
    return calloc(1, bytes ? bytes : 1);
}

static void s_release(backend *b, void *p)
{
    (void)b;
    free(p);
}

static void s_memcpy(backend *b, void *dst, const void *src, size_t bytes)
{
    (void)b;
    if (dst != src) {
        memcpy(dst, src, bytes);
    }
}

static void s_gemm(backend *b, float *c, const float *a, const float *bm,
                   bool trans_a, bool trans_b, int m, int n, int k,
                   float alpha, float beta)
{
    (void)b;
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha,
                a, trans_a ? m : k, bm, trans_b ? k : n, beta, c, n);
}

static void s_bias_add(backend *b, float *out, const float *bias, int rows, int cols)
{
    (void)b;
    for (int r = 0; r < rows; r++) {
        float *o = out + (size_t)r * (size_t)cols;
        for (int c = 0; c < cols; c++) {
            o[c] += bias[c];
        }
    }
}

static void s_bias_grad(backend *b, float *dbias, const float *dout, int rows, int cols)
{
    (void)b;
    memset(dbias, 0, (size_t)cols * sizeof *dbias);
    for (int r = 0; r < rows; r++) {
        const float *d = dout + (size_t)r * (size_t)cols;
        for (int c = 0; c < cols; c++) {
            dbias[c] += d[c];
        }
    }
}

static void s_relu_forward(backend *b, float *out, const float *in, size_t n)
{
    (void)b;
    for (size_t i = 0; i < n; i++) {
        out[i] = in[i] > 0.0f ? in[i] : 0.0f;
    }
}

static void s_relu_backward(backend *b, float *din, const float *dout,
                            const float *out, size_t n)
{
    (void)b;
    for (size_t i = 0; i < n; i++) {
        din[i] = out[i] > 0.0f ? dout[i] : 0.0f;
    }
}

static void s_softmax_xent_forward(backend *b, float *probs, double *loss_sum,
                                   int *correct, const float *logits,
                                   const int32_t *labels, int rows, int cols)
{
    (void)b;
    double loss = 0;
    int right = 0;
    for (int r = 0; r < rows; r++) {
        const float *z = logits + (size_t)r * (size_t)cols;
        float *p = probs + (size_t)r * (size_t)cols;
        float zmax = -FLT_MAX;
        int argmax = 0;
        for (int c = 0; c < cols; c++) {
            if (z[c] > zmax) {
                zmax = z[c];
                argmax = c;
            }
        }
        /* read before p overwrites z when they are the same buffer */
        float z_label = z[labels[r]];
        float sum = 0;
        for (int c = 0; c < cols; c++) {
            p[c] = expf(z[c] - zmax);
            sum += p[c];
        }
        float inv = 1.0f / sum;
        for (int c = 0; c < cols; c++) {
            p[c] *= inv;
        }
        /* log-sum-exp form: exact even when probs[label] underflows */
        loss += (double)(logf(sum) - (z_label - zmax));
        right += argmax == labels[r];
    }
    *loss_sum = loss;
    *correct = right;
}

static void s_softmax_xent_backward(backend *b, float *dlogits, const float *probs,
                                    const int32_t *labels, int rows, int cols,
                                    float scale)
{
    (void)b;
    for (int r = 0; r < rows; r++) {
        const float *p = probs + (size_t)r * (size_t)cols;
        float *d = dlogits + (size_t)r * (size_t)cols;
        for (int c = 0; c < cols; c++) {
            d[c] = scale * (p[c] - (c == labels[r] ? 1.0f : 0.0f));
        }
    }
}

static void s_axpy(backend *b, float *y, float a, const float *x, size_t n)
{
    (void)b;
    for (size_t i = 0; i < n; i++) {
        y[i] += a * x[i];
    }
}

static void s_scale(backend *b, float *x, float a, size_t n)
{
    (void)b;
    for (size_t i = 0; i < n; i++) {
        x[i] *= a;
    }
}

static void s_copy(backend *b, float *dst, const float *src, size_t n)
{
    s_memcpy(b, dst, src, n * sizeof *dst);
}

const backend_ops backend_cpu_ops = {
    .version = BACKEND_OPS_VERSION,
    .name = "cpu",
    .host_visible = true,
    .alloc = s_alloc,
    .release = s_release,
    .to_device = s_memcpy,
    .to_host = s_memcpy,
    .gemm = s_gemm,
    .bias_add = s_bias_add,
    .bias_grad = s_bias_grad,
    .relu_forward = s_relu_forward,
    .relu_backward = s_relu_backward,
    .softmax_xent_forward = s_softmax_xent_forward,
    .softmax_xent_backward = s_softmax_xent_backward,
    .axpy = s_axpy,
    .scale = s_scale,
    .copy = s_copy,
};

int backend_cpu_open(backend *b, error *err)
{
    (void)err;
    b->ops = &backend_cpu_ops;
    if (b->threads > 0) {
        openblas_set_num_threads(b->threads);
    }
    return 0;
}
