/* backend_cuda_ops.cu: asgd's own CUDA kernels, each the GPU form of the
 * loop of the same name in backend_cpu.c (with the same per-element
 * arithmetic from kernels.h where there is any to share), and checked
 * against it by tests/test_cuda.c. Reductions (bias gradients, loss sums)
 * go through fixed trees, never atomics, so results repeat. Kernels that
 * split a flat index into coordinates divide through kernel_divide (a
 * multiply and a shift) rather than the GPU's software division. */
#include "core/backend/cuda.h"

extern "C" {
#include "core/backend/kernels.h"
}

#include <string.h>

/* ---- element-wise ---------------------------------------------------- */

__global__ void k_bias_add(float *out, const float *bias, size_t total, kernel_divider cols)
{
    FOR_EACH(i, total) {
        out[i] += bias[i - kernel_divide(cols, i) * cols.d];
    }
}

__global__ void k_bias_relu(float *out, const float *bias, size_t total, kernel_divider cols)
{
    FOR_EACH(i, total) {
        float v = out[i] + bias[i - kernel_divide(cols, i) * cols.d];
        out[i] = v > 0.0f || v != v ? v : 0.0f;   /* NaN stays: the loss shows it */
    }
}

void cuda_bias_add(backend *b, float *out, const float *bias, int rows, int cols, bool relu)
{
    size_t total = (size_t)rows * (size_t)cols;
    kernel_divider by = kernel_divider_of((uint64_t)cols, total);
    if (relu) {
        k_bias_relu<<<cuda_blocks(total), THREADS, 0, S(b)->stream>>>(out, bias, total, by);
        LAUNCH_CHECK(k_bias_relu);
    } else {
        k_bias_add<<<cuda_blocks(total), THREADS, 0, S(b)->stream>>>(out, bias, total, by);
        LAUNCH_CHECK(k_bias_add);
    }
}

/* Column sums in two passes: blocks of 32 columns x BIAS_ROWS threads,
 * gridDim.y of them down the rows, each writing one partial row (and
 * masking d by ReLU's output on the way, where out is not NULL); then a
 * block per column adds its partials through a fixed tree. */
enum { BIAS_COLS = 32, BIAS_ROWS = 8, BIAS_PARTS = 1024 };

__global__ void k_bias_partial(float *partial, float *d, const float *out, int rows,
                               int cols)
{
    __shared__ float sums[BIAS_ROWS][BIAS_COLS];
    int col = blockIdx.x * BIAS_COLS + threadIdx.x;
    float s = 0;
    if (col < cols) {
        for (int r = blockIdx.y * BIAS_ROWS + threadIdx.y; r < rows;
             r += gridDim.y * BIAS_ROWS) {
            size_t at = (size_t)r * cols + col;
            float v = d[at];
            if (out) {
                v = out[at] > 0.0f ? v : 0.0f;
                d[at] = v;
            }
            s += v;
        }
    }
    sums[threadIdx.y][threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.y == 0 && col < cols) {
        for (int y = 1; y < BIAS_ROWS; y++) {
            s += sums[y][threadIdx.x];
        }
        partial[(size_t)blockIdx.y * cols + col] = s;
    }
}

/* One block of THREADS per column: thread t adds parts t, t + THREADS, ...
 * in order, then the block halves its sums in shared memory. */
__global__ void k_bias_total(float *dbias, const float *partial, int parts, int cols)
{
    __shared__ float sums[THREADS];
    int col = blockIdx.x;
    float s = 0;
    for (int p = threadIdx.x; p < parts; p += THREADS) {
        s += partial[(size_t)p * cols + col];
    }
    sums[threadIdx.x] = s;
    __syncthreads();
    for (int half = THREADS / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) {
            sums[threadIdx.x] += sums[threadIdx.x + half];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        dbias[col] = sums[0];
    }
}

void cuda_bias_grad(backend *b, float *dbias, float *d, const float *out, int rows, int cols)
{
    cuda_state *st = S(b);
    int col_blocks = (cols + BIAS_COLS - 1) / BIAS_COLS;
    int parts = (rows + BIAS_ROWS * 16 - 1) / (BIAS_ROWS * 16);   /* 16 rows a thread */
    parts = parts < 1 ? 1 : (parts > BIAS_PARTS ? BIAS_PARTS : parts);
    size_t need = (size_t)parts * (size_t)cols;
    if (need > st->partial_capacity) {
        b->ops->release(b, st->partial);
        if (!(st->partial = (float *)b->ops->alloc(b, need * sizeof(float)))) {
            cuda_die(__FILE__, __LINE__, "alloc", "out of GPU memory for bias sums");
        }
        st->partial_capacity = need;
    }
    dim3 grid((unsigned)col_blocks, (unsigned)parts), block(BIAS_COLS, BIAS_ROWS);
    k_bias_partial<<<grid, block, 0, st->stream>>>(st->partial, d, out, rows, cols);
    LAUNCH_CHECK(k_bias_partial);
    k_bias_total<<<(unsigned)cols, THREADS, 0, st->stream>>>(dbias, st->partial, parts, cols);
    LAUNCH_CHECK(k_bias_total);
}

/* ---- softmax and cross-entropy ---------------------------------------- */

/* One thread per row (rows are a minibatch, columns the classes). */
__global__ void k_softmax_xent(float *probs, double *row_loss, int *row_correct,
                               const float *logits, const int32_t *labels, int rows, int cols)
{
    FOR_EACH(r, (size_t)rows) {
        row_loss[r] = (double)kernel_softmax_xent_row(probs + r * cols, logits + r * cols,
                                                      labels[r], cols, &row_correct[r]);
    }
}

/* One block: a tree sum of the rows' losses and hits. */
__global__ void k_sum_rows(double *sums, const double *row_loss, const int *row_correct,
                           int rows)
{
    __shared__ double loss[THREADS];
    __shared__ double hits[THREADS];
    double l = 0, h = 0;
    for (int r = threadIdx.x; r < rows; r += blockDim.x) {
        l += row_loss[r];
        h += row_correct[r];
    }
    loss[threadIdx.x] = l;
    hits[threadIdx.x] = h;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if ((int)threadIdx.x < stride) {
            loss[threadIdx.x] += loss[threadIdx.x + stride];
            hits[threadIdx.x] += hits[threadIdx.x + stride];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        sums[0] = loss[0];
        sums[1] = hits[0];
    }
}

void cuda_softmax_xent_forward(backend *b, float *probs, double *loss_sum, int *correct,
                                      const float *logits, const int32_t *labels, int rows,
                                      int cols)
{
    cuda_state *st = S(b);
    if (rows > st->row_capacity) {
        b->ops->release(b, st->row_loss);
        b->ops->release(b, st->row_correct);
        st->row_loss = (double *)b->ops->alloc(b, (size_t)rows * sizeof(double));
        st->row_correct = (int *)b->ops->alloc(b, (size_t)rows * sizeof(int));
        if (!st->row_loss || !st->row_correct) {
            cuda_die(__FILE__, __LINE__, "alloc", "out of GPU memory for the loss");
        }
        st->row_capacity = rows;
    }
    k_softmax_xent<<<cuda_blocks((size_t)rows), THREADS, 0, st->stream>>>(
        probs, st->row_loss, st->row_correct, logits, labels, rows, cols);
    LAUNCH_CHECK(k_softmax_xent);
    k_sum_rows<<<1, THREADS, 0, st->stream>>>(st->sums_device, st->row_loss,
                                              st->row_correct, rows);
    LAUNCH_CHECK(k_sum_rows);
    b->ops->to_host(b, st->sums_host, st->sums_device, 2 * sizeof(double));
    *loss_sum = st->sums_host[0];
    *correct = (int)st->sums_host[1];
}

__global__ void k_softmax_xent_backward(float *dlogits, const float *probs,
                                        const int32_t *labels, size_t total, int cols,
                                        float scale)
{
    FOR_EACH(i, total) {
        size_t r = i / (size_t)cols;
        int c = (int)(i % (size_t)cols);
        dlogits[i] = scale * (probs[i] - (c == labels[r] ? 1.0f : 0.0f));
    }
}

void cuda_softmax_xent_backward(backend *b, float *dlogits, const float *probs,
                                       const int32_t *labels, int rows, int cols, float scale)
{
    size_t total = (size_t)rows * (size_t)cols;
    k_softmax_xent_backward<<<cuda_blocks(total), THREADS, 0, S(b)->stream>>>(
        dlogits, probs, labels, total, cols, scale);
    LAUNCH_CHECK(k_softmax_xent_backward);
}

/* ---- vectors ----------------------------------------------------------- */

__global__ void k_axpy(float *y, float a, const float *x, size_t n)
{
    FOR_EACH(i, n) {
        y[i] += a * x[i];
    }
}

cudaError_t cuda_kernels_run_here(void)
{
    cudaFuncAttributes a;
    cudaError_t e = cudaFuncGetAttributes(&a, k_axpy);
    (void)cudaGetLastError();
    return e;
}

void cuda_axpy(backend *b, float *y, float a, const float *x, size_t n)
{
    k_axpy<<<cuda_blocks(n), THREADS, 0, S(b)->stream>>>(y, a, x, n);
    LAUNCH_CHECK(k_axpy);
}

__global__ void k_scale(float *x, float a, size_t n)
{
    FOR_EACH(i, n) {
        x[i] *= a;
    }
}

void cuda_scale(backend *b, float *x, float a, size_t n)
{
    k_scale<<<cuda_blocks(n), THREADS, 0, S(b)->stream>>>(x, a, n);
    LAUNCH_CHECK(k_scale);
}

void cuda_copy(backend *b, float *dst, const float *src, size_t n)
{
    if (dst != src) {
        CUDA_CHECK(cudaMemcpyAsync(dst, src, n * sizeof *dst, cudaMemcpyDeviceToDevice,
                                   S(b)->stream));
    }
}

/* ---- convolution and pooling ------------------------------------------- */

/* The dividers that split a flat index of a convolution's shapes: by the
 * channels, the kernel's side, and the output's width and height (every
 * dividend is below limit). */
typedef struct conv_dividers {
    kernel_divider c, k, wo, ho;
} conv_dividers;

static conv_dividers s_conv_dividers(int c, int k, int ho, int wo, size_t limit)
{
    return {kernel_divider_of((uint64_t)c, limit), kernel_divider_of((uint64_t)k, limit),
            kernel_divider_of((uint64_t)wo, limit), kernel_divider_of((uint64_t)ho, limit)};
}

/* Where the channels come in fours and both buffers are 16-byte aligned,
 * im2col and col2im move four channels a thread as one float4: a
 * convolution over c channels of float is one over c / 4 of float4, with
 * the same arithmetic on each lane. */
static bool s_by_fours(int c, const void *a, const void *b)
{
    return c % 4 == 0 && ((uintptr_t)a | (uintptr_t)b) % 16 == 0;
}

static __device__ inline float s_plus(float a, float b)
{
    return a + b;
}

static __device__ inline float4 s_plus(float4 a, float4 b)
{
    return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
}

/* One thread per column-matrix element (T: one float, or four channels'
 * float4), so that writes are coalesced. */
template <typename T>
__global__ void k_im2col(T *col, const T *in, int h, int w, int pad, kernel_divider width,
                         conv_dividers v, size_t total)
{
    FOR_EACH(i, total) {
        size_t row = kernel_divide(width, i), j = i - row * width.d;
        size_t t = kernel_divide(v.c, j), ky = kernel_divide(v.k, t);
        size_t r2 = kernel_divide(v.wo, row), ni = kernel_divide(v.ho, r2);
        int ci = (int)(j - t * v.c.d), kx = (int)(t - ky * v.k.d);
        int ox = (int)(row - r2 * v.wo.d), oy = (int)(r2 - ni * v.ho.d);
        int iy = oy + (int)ky - pad, ix = ox + kx - pad;
        col[i] = iy < 0 || iy >= h || ix < 0 || ix >= w
                     ? T{}
                     : in[((ni * h + iy) * w + ix) * v.c.d + ci];
    }
}

template <typename T>
static void s_im2col(backend *b, T *col, const T *in, int n, int h, int w, int c, int k,
                     int pad)
{
    int ho = h + 2 * pad - k + 1, wo = w + 2 * pad - k + 1;
    size_t width = (size_t)k * k * c, total = (size_t)n * ho * wo * width;
    k_im2col<T><<<cuda_blocks(total), THREADS, 0, S(b)->stream>>>(
        col, in, h, w, pad, kernel_divider_of(width, total),
        s_conv_dividers(c, k, ho, wo, total), total);
    LAUNCH_CHECK(k_im2col);
}

void cuda_im2col(backend *b, float *col, const float *in, int n, int h, int w, int c,
                        int k, int pad)
{
    if (s_by_fours(c, col, in)) {
        s_im2col(b, (float4 *)col, (const float4 *)in, n, h, w, c / 4, k, pad);
    } else {
        s_im2col(b, col, in, n, h, w, c, k, pad);
    }
}

/* One thread per input element (T as in k_im2col), gathering the k x k
 * column entries it was copied to: no two threads write the same element. */
template <typename T>
__global__ void k_col2im(T *din, const T *col, int k, int pad, int ho, int wo,
                         kernel_divider c, kernel_divider w, kernel_divider h, size_t total)
{
    size_t width = (size_t)k * k * c.d;
    FOR_EACH(i, total) {
        size_t p = kernel_divide(c, i), q = kernel_divide(w, p), ni = kernel_divide(h, q);
        int ci = (int)(i - p * c.d), ix = (int)(p - q * w.d), iy = (int)(q - ni * h.d);
        T s{};
        for (int ky = 0; ky < k; ky++) {
            int oy = iy - ky + pad;
            if (oy < 0 || oy >= ho) {
                continue;
            }
            for (int kx = 0; kx < k; kx++) {
                int ox = ix - kx + pad;
                if (ox < 0 || ox >= wo) {
                    continue;
                }
                size_t row = ((size_t)ni * ho + oy) * wo + ox;
                s = s_plus(s, col[row * width + ((size_t)ky * k + kx) * c.d + ci]);
            }
        }
        din[i] = s;
    }
}

template <typename T>
static void s_col2im(backend *b, T *din, const T *col, int n, int h, int w, int c, int k,
                     int pad)
{
    int ho = h + 2 * pad - k + 1, wo = w + 2 * pad - k + 1;
    size_t total = (size_t)n * h * w * c;
    k_col2im<T><<<cuda_blocks(total), THREADS, 0, S(b)->stream>>>(
        din, col, k, pad, ho, wo, kernel_divider_of((uint64_t)c, total),
        kernel_divider_of((uint64_t)w, total), kernel_divider_of((uint64_t)h, total), total);
    LAUNCH_CHECK(k_col2im);
}

void cuda_col2im(backend *b, float *din, const float *col, int n, int h, int w, int c,
                        int k, int pad)
{
    if (s_by_fours(c, din, col)) {
        s_col2im(b, (float4 *)din, (const float4 *)col, n, h, w, c / 4, k, pad);
    } else {
        s_col2im(b, din, col, n, h, w, c, k, pad);
    }
}

__global__ void k_maxpool_forward(float *out, const float *in, int h, int w, int s,
                                  kernel_divider c, kernel_divider wo, kernel_divider ho,
                                  size_t total)
{
    FOR_EACH(i, total) {
        size_t p = kernel_divide(c, i), q = kernel_divide(wo, p), ni = kernel_divide(ho, q);
        int ci = (int)(i - p * c.d), ox = (int)(p - q * wo.d), oy = (int)(q - ni * ho.d);
        out[i] = in[kernel_pool_argmax(in, (int)ni, oy, ox, ci, h, w, (int)c.d, s)];
    }
}

void cuda_maxpool_forward(backend *b, float *out, const float *in, int n, int h, int w,
                                 int c, int s)
{
    size_t total = (size_t)n * (h / s) * (w / s) * c;
    k_maxpool_forward<<<cuda_blocks(total), THREADS, 0, S(b)->stream>>>(
        out, in, h, w, s, kernel_divider_of((uint64_t)c, total),
        kernel_divider_of((uint64_t)(w / s), total), kernel_divider_of((uint64_t)(h / s), total),
        total);
    LAUNCH_CHECK(k_maxpool_forward);
}

/* One thread per window: its first maximum takes the window's gradient
 * and the rest of the window 0 (windows do not overlap), so each maximum
 * is found once; rows or columns past the last whole window are zeroed
 * first. */
__global__ void k_maxpool_backward(float *din, const float *dout, const float *in, int h,
                                   int w, int s, kernel_divider c, kernel_divider wo,
                                   kernel_divider ho, size_t total)
{
    FOR_EACH(i, total) {
        size_t p = kernel_divide(c, i), q = kernel_divide(wo, p), ni = kernel_divide(ho, q);
        int ci = (int)(i - p * c.d), ox = (int)(p - q * wo.d), oy = (int)(q - ni * ho.d);
        size_t best = kernel_pool_argmax(in, (int)ni, oy, ox, ci, h, w, (int)c.d, s);
        float g = dout[i];
        for (int dy = 0; dy < s; dy++) {
            for (int dx = 0; dx < s; dx++) {
                size_t j = ((ni * h + (size_t)oy * s + dy) * w + (size_t)ox * s + dx) * c.d + ci;
                din[j] = j == best ? g : 0.0f;
            }
        }
    }
}

void cuda_maxpool_backward(backend *b, float *din, const float *dout, const float *in,
                                  int n, int h, int w, int c, int s)
{
    if (h % s != 0 || w % s != 0) {
        CUDA_CHECK(cudaMemsetAsync(din, 0, (size_t)n * h * w * c * sizeof *din, S(b)->stream));
    }
    size_t total = (size_t)n * (h / s) * (w / s) * c;
    k_maxpool_backward<<<cuda_blocks(total), THREADS, 0, S(b)->stream>>>(
        din, dout, in, h, w, s, kernel_divider_of((uint64_t)c, total),
        kernel_divider_of((uint64_t)(w / s), total), kernel_divider_of((uint64_t)(h / s), total),
        total);
    LAUNCH_CHECK(k_maxpool_backward);
}

/* ---- dropout ----------------------------------------------------------- */

__global__ void k_dropout(float *out, const float *in, size_t n, float rate, uint64_t seed)
{
    const float keep_scale = 1.0f / (1.0f - rate);
    FOR_EACH(i, n) {
        out[i] = kernel_dropout_keep(seed, i, rate) ? in[i] * keep_scale : 0.0f;
    }
}

void cuda_dropout(backend *b, float *out, const float *in, size_t n, float rate,
                         uint64_t seed)
{
    k_dropout<<<cuda_blocks(n), THREADS, 0, S(b)->stream>>>(out, in, n, rate, seed);
    LAUNCH_CHECK(k_dropout);
}

/* ---- optimizers -------------------------------------------------------- */

__global__ void k_optim_update(float *p, const float *g, float *s1, float *s2, size_t n,
                               backend_update u)
{
    FOR_EACH(i, n) {
        switch (u.kind) {
        case OPTIM_SGD:
            kernel_sgd(&p[i], g[i], &u);
            break;
        case OPTIM_MOMENTUM:
            kernel_momentum(&p[i], g[i], &s1[i], &u);
            break;
        case OPTIM_NESTEROV:
            kernel_nesterov(&p[i], g[i], &s1[i], &u);
            break;
        case OPTIM_ADAGRAD:
            kernel_adagrad(&p[i], g[i], &s1[i], &u);
            break;
        case OPTIM_ADAM:
            kernel_adam(&p[i], g[i], &s1[i], &s2[i], &u);
            break;
        }
    }
}

void cuda_optim_update(backend *b, float *p, const float *g, float *s1, float *s2,
                              size_t n, const backend_update *u)
{
    k_optim_update<<<cuda_blocks(n), THREADS, 0, S(b)->stream>>>(p, g, s1, s2, n, *u);
    LAUNCH_CHECK(k_optim_update);
}
