/* backend_cpu.c: the CPU backend. GEMM is OpenBLAS's cblas_sgemm; the
 * other operations are plain loops (over the per-element arithmetic of
 * kernels.h where a GPU kernel shares it), which are also the reference
 * that other backends are checked against. */
#include "core/backend/backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "core/backend/kernels.h"
#include "core/backend/winograd.h"

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

static void s_bias_add(backend *b, float *out, const float *bias, int rows, int cols,
                       bool relu)
{
    (void)b;
    for (int r = 0; r < rows; r++) {
        float *o = out + (size_t)r * (size_t)cols;
        if (relu) {
            for (int c = 0; c < cols; c++) {
                float v = o[c] + bias[c];
                o[c] = v > 0.0f || v != v ? v : 0.0f;   /* NaN stays: the loss shows it */
            }
        } else {
            for (int c = 0; c < cols; c++) {
                o[c] += bias[c];
            }
        }
    }
}

static void s_bias_grad(backend *b, float *dbias, float *d, const float *out, int rows,
                        int cols)
{
    (void)b;
    memset(dbias, 0, (size_t)cols * sizeof *dbias);
    for (int r = 0; r < rows; r++) {
        float *dr = d + (size_t)r * (size_t)cols;
        if (out) {
            const float *o = out + (size_t)r * (size_t)cols;
            for (int c = 0; c < cols; c++) {
                float x = dr[c];   /* loaded unconditionally, so the loop vectorizes */
                float v = o[c] > 0.0f ? x : 0.0f;
                dr[c] = v;
                dbias[c] += v;
            }
        } else {
            for (int c = 0; c < cols; c++) {
                dbias[c] += dr[c];
            }
        }
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
        size_t off = (size_t)r * (size_t)cols;
        int hit;
        loss += (double)kernel_softmax_xent_row(probs + off, logits + off, labels[r], cols,
                                                &hit);
        right += hit;
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

/* im2col and col2im go a kernel row at a time: for output pixel (oy, ox)
 * and kernel row ky, the k x c inputs under kx = 0..k-1 are one run of
 * memory where the row lies inside the image (and the column run is one
 * run of col), so each is one copy (or one sum) of k c floats; only the
 * rows and columns that reach into the padding go element by element. */
static void s_im2col(backend *b, float *col, const float *in, int n, int h, int w,
                     int c, int k, int pad)
{
    (void)b;
    const int ho = h + 2 * pad - k + 1, wo = w + 2 * pad - k + 1;
    const size_t run = (size_t)k * c;
    float *dst = col;
    for (int ni = 0; ni < n; ni++) {
        for (int oy = 0; oy < ho; oy++) {
            for (int ox = 0; ox < wo; ox++) {
                int ix0 = ox - pad;
                bool inside_x = ix0 >= 0 && ix0 + k <= w;
                for (int ky = 0; ky < k; ky++, dst += run) {
                    int iy = oy + ky - pad;
                    if (iy < 0 || iy >= h) {
                        memset(dst, 0, run * sizeof *dst);
                        continue;
                    }
                    const float *row = in + ((size_t)ni * h + iy) * w * c;
                    if (inside_x) {
                        memcpy(dst, row + (size_t)ix0 * c, run * sizeof *dst);
                        continue;
                    }
                    for (int kx = 0; kx < k; kx++) {
                        int ix = ix0 + kx;
                        for (int ci = 0; ci < c; ci++) {
                            dst[(size_t)kx * c + ci] =
                                ix < 0 || ix >= w ? 0.0f : row[(size_t)ix * c + ci];
                        }
                    }
                }
            }
        }
    }
}

static void s_col2im(backend *b, float *din, const float *col, int n, int h, int w,
                     int c, int k, int pad)
{
    (void)b;
    const int ho = h + 2 * pad - k + 1, wo = w + 2 * pad - k + 1;
    const size_t run = (size_t)k * c;
    memset(din, 0, (size_t)n * h * w * c * sizeof *din);
    const float *src = col;
    for (int ni = 0; ni < n; ni++) {
        for (int oy = 0; oy < ho; oy++) {
            for (int ox = 0; ox < wo; ox++) {
                int ix0 = ox - pad;
                /* the kernel row's columns inside the image: [kx0, kx1) */
                int kx0 = ix0 < 0 ? -ix0 : 0, kx1 = ix0 + k > w ? w - ix0 : k;
                for (int ky = 0; ky < k; ky++, src += run) {
                    int iy = oy + ky - pad;
                    if (iy < 0 || iy >= h || kx0 >= kx1) {
                        continue;
                    }
                    float *d = din + (((size_t)ni * h + iy) * w + (size_t)(ix0 + kx0)) * c;
                    const float *from = src + (size_t)kx0 * c;
                    size_t count = (size_t)(kx1 - kx0) * c;
                    for (size_t i = 0; i < count; i++) {
                        d[i] += from[i];
                    }
                }
            }
        }
    }
}

/* Max pooling runs over whole channel vectors (the layout is n x h x w x c)
 * so that the loops vectorize: the window's first pixel, then each later
 * one taking a channel only where strictly greater, which is
 * kernel_pool_argmax's first maximum in scan order (and its NaN handling). */
static void s_maxpool_forward(backend *b, float *out, const float *in, int n, int h,
                              int w, int c, int s)
{
    (void)b;
    const int ho = h / s, wo = w / s;
    for (int ni = 0; ni < n; ni++) {
        for (int oy = 0; oy < ho; oy++) {
            for (int ox = 0; ox < wo; ox++) {
                const float *first = in + (((size_t)ni * h + (size_t)oy * s) * w +
                                           (size_t)ox * s) * c;
                float *o = out + (((size_t)ni * ho + oy) * wo + ox) * c;
                memcpy(o, first, (size_t)c * sizeof *o);
                for (int dy = 0; dy < s; dy++) {
                    for (int dx = dy == 0 ? 1 : 0; dx < s; dx++) {
                        const float *p = first + ((size_t)dy * w + dx) * c;
                        for (int ci = 0; ci < c; ci++) {
                            o[ci] = p[ci] > o[ci] || p[ci] != p[ci] ? p[ci] : o[ci];
                        }
                    }
                }
            }
        }
    }
}

/* Four channels at once (GCC's vector extensions: SSE2 on any x86-64,
 * plain code elsewhere): the window's first maximum's offset per channel,
 * where a plain loop compiled to a compare and a branch per element. */
typedef float pool_f4 __attribute__((vector_size(16)));
typedef int32_t pool_i4 __attribute__((vector_size(16)));

static void s_maxpool_backward(backend *b, float *din, const float *dout, const float *in,
                               int n, int h, int w, int c, int s)
{
    (void)b;
    const int ho = h / s, wo = w / s;
    /* rows and columns past the last whole window get no gradient */
    if (ho * s != h || wo * s != w) {
        memset(din, 0, (size_t)n * h * w * c * sizeof *din);
    }
    for (int ni = 0; ni < n; ni++) {
        for (int oy = 0; oy < ho; oy++) {
            for (int ox = 0; ox < wo; ox++) {
                size_t at0 = (((size_t)ni * h + (size_t)oy * s) * w + (size_t)ox * s) * c;
                const float *first = in + at0;
                float *dfirst = din + at0;
                const float *d = dout + (((size_t)ni * ho + oy) * wo + ox) * c;
                /* zero the window while it is in cache (no separate pass) */
                for (int dy = 0; dy < s; dy++) {
                    memset(dfirst + (size_t)dy * w * c, 0, (size_t)s * c * sizeof *din);
                }
                int ci = 0;
                for (; ci + 4 <= c; ci += 4) {
                    pool_f4 best;
                    pool_i4 at = {0, 0, 0, 0};
                    memcpy(&best, first + ci, sizeof best);
                    for (int dy = 0; dy < s; dy++) {
                        for (int dx = dy == 0 ? 1 : 0; dx < s; dx++) {
                            int32_t off = (dy * w + dx) * c;
                            pool_f4 v;
                            memcpy(&v, first + off + ci, sizeof v);
                            /* -1 where strictly greater, or a NaN (the maximum) */
                            pool_i4 more = (v > best) | (v != v);
                            pool_i4 offs = {off, off, off, off};
                            best = (pool_f4)(((pool_i4)v & more) | ((pool_i4)best & ~more));
                            at = (offs & more) | (at & ~more);
                        }
                    }
                    for (int j = 0; j < 4; j++) {
                        dfirst[(size_t)at[j] + (size_t)ci + j] = d[ci + j];
                    }
                }
                for (; ci < c; ci++) {
                    int32_t at = 0;
                    float best = first[ci];
                    for (int dy = 0; dy < s; dy++) {
                        for (int dx = dy == 0 ? 1 : 0; dx < s; dx++) {
                            int32_t off = (dy * w + dx) * c;
                            if (first[off + ci] > best || first[off + ci] != first[off + ci]) {
                                best = first[off + ci];
                                at = off;
                            }
                        }
                    }
                    dfirst[(size_t)at + (size_t)ci] = d[ci];
                }
            }
        }
    }
}

static void s_dropout(backend *b, float *out, const float *in, size_t n, float rate,
                      uint64_t seed)
{
    (void)b;
    const float keep_scale = 1.0f / (1.0f - rate);
    for (size_t i = 0; i < n; i++) {
        out[i] = kernel_dropout_keep(seed, i, rate) ? in[i] * keep_scale : 0.0f;
    }
}

static void s_optim_update(backend *b, float *p, const float *g, float *s1, float *s2,
                           size_t n, const backend_update *u)
{
    (void)b;
    /* one loop per kind, so that each is a plain loop the compiler vectorizes */
    switch (u->kind) {
    case OPTIM_SGD:
        for (size_t i = 0; i < n; i++) {
            kernel_sgd(&p[i], g[i], u);
        }
        break;
    case OPTIM_MOMENTUM:
        for (size_t i = 0; i < n; i++) {
            kernel_momentum(&p[i], g[i], &s1[i], u);
        }
        break;
    case OPTIM_NESTEROV:
        for (size_t i = 0; i < n; i++) {
            kernel_nesterov(&p[i], g[i], &s1[i], u);
        }
        break;
    case OPTIM_ADAGRAD:
        for (size_t i = 0; i < n; i++) {
            kernel_adagrad(&p[i], g[i], &s1[i], u);
        }
        break;
    case OPTIM_ADAM:
        for (size_t i = 0; i < n; i++) {
            kernel_adam(&p[i], g[i], &s1[i], &s2[i], u);
        }
        break;
    }
}

const backend_ops backend_cpu_ops = {
    .version = BACKEND_OPS_VERSION,
    .name = "cpu",
    .host_visible = true,
    .alloc = s_alloc,
    .release = s_release,
    .to_device = s_memcpy,
    .to_host = s_memcpy,
    .host_alloc = s_alloc,
    .host_release = s_release,
    .gemm = s_gemm,
    .bias_add = s_bias_add,
    .bias_grad = s_bias_grad,
    .softmax_xent_forward = s_softmax_xent_forward,
    .softmax_xent_backward = s_softmax_xent_backward,
    .axpy = s_axpy,
    .scale = s_scale,
    .copy = s_copy,
    .im2col = s_im2col,
    .col2im = s_col2im,
    .winograd_filter = winograd_filter,
    .winograd_filter_grad = winograd_filter_grad,
    .winograd_input = winograd_input,
    .winograd_input_grad = winograd_input_grad,
    .winograd_output = winograd_output,
    .winograd_output_grad = winograd_output_grad,
    .maxpool_forward = s_maxpool_forward,
    .maxpool_backward = s_maxpool_backward,
    .dropout = s_dropout,
    .optim_update = s_optim_update,
};

int backend_cpu_open(backend *b, error *err)
{
    (void)err;
    b->ops = &backend_cpu_ops;
    snprintf(b->description, sizeof b->description, "cpu");
    if (b->threads > 0) {
        openblas_set_num_threads(b->threads);
    }
    return 0;
}
