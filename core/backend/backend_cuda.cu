/* backend_cuda.cu: the CUDA backend. GEMM is cuBLAS's sgemm (plain FP32,
 * no TF32); every other operation is a kernel below, each the GPU form of
 * the loop of the same name in backend_cpu.c (with the same per-element
 * arithmetic from kernels.h where there is any to share), and checked
 * against it by tests/test_cuda.c.
 *
 * All work is queued on one stream per backend. to_device and to_host
 * return once the copy is done (so the host may reuse its buffer), and
 * softmax_xent_forward once its sums are on the host; everything else is
 * asynchronous. Every CUDA and cuBLAS call is checked: a failure prints the
 * call with its file and line and exits with status 1, since an operation
 * has no way to hand an error back mid-step. Reductions (bias gradients,
 * loss sums) go through fixed trees, never atomics, so results repeat.
 *
 * cuBLAS is opened with dlopen when the first CUDA backend opens, not
 * linked: loading it costs every process about 0.1 s and 200 MB of
 * relocations, which CPU runs (and parameter servers) should not pay. */
extern "C" {
#include "core/backend/backend.h"
#include "core/backend/kernels.h"
}

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>

typedef struct cuda_state {
    int device;
    cudaStream_t stream;
    cublasHandle_t blas;
    /* softmax_xent_forward's per-row results and sums */
    double *row_loss;
    int *row_correct;
    int row_capacity;
    double *sums_device;      /* loss sum, correct count (as double) */
    double *sums_host;        /* pinned */
    /* bias_grad's partial column sums */
    float *partial;
    size_t partial_capacity;
} cuda_state;

static void s_die(const char *file, int line, const char *call, const char *what)
{
    fprintf(stderr, "asgd: %s:%d: %s failed: %s\n", file, line, call, what);
    exit(1);
}

/* The cuBLAS calls asgd makes, resolved from the library this build's
 * headers belong to (the _v2 names are what cublas_v2.h maps them to). */
#define ASGD_STR2(x) #x
#define ASGD_STR(x) ASGD_STR2(x)
static const char CUBLAS_LIBRARY[] = "libcublas.so." ASGD_STR(CUBLAS_VER_MAJOR);

static struct cublas_api {
    void *lib;
    cublasStatus_t (*create)(cublasHandle_t *);
    cublasStatus_t (*destroy)(cublasHandle_t);
    cublasStatus_t (*set_stream)(cublasHandle_t, cudaStream_t);
    cublasStatus_t (*sgemm)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                            int, const float *, const float *, int, const float *, int,
                            const float *, float *, int);
    const char *(*status_string)(cublasStatus_t);
} s_blas;

static int s_load_cublas(error *err)
{
    if (s_blas.lib) {
        return 0;
    }
    /* the loader's search path first, then the toolkit this was built with */
    void *lib = dlopen(CUBLAS_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", ASGD_CUDA_LIBRARY_DIR, CUBLAS_LIBRARY);
        lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    }
    if (!lib) {
        return error_set(err, ERROR_RUNTIME, "backend.device = cuda: cannot load %s: %s",
                         CUBLAS_LIBRARY, dlerror());
    }
    const char *names[] = {"cublasCreate_v2", "cublasDestroy_v2", "cublasSetStream_v2",
                           "cublasSgemm_v2", "cublasGetStatusString"};
    void *fns[5];
    for (int i = 0; i < 5; i++) {
        if (!(fns[i] = dlsym(lib, names[i]))) {
            error_set(err, ERROR_RUNTIME, "backend.device = cuda: %s lacks %s",
                      CUBLAS_LIBRARY, names[i]);
            dlclose(lib);
            return -1;
        }
    }
    s_blas.create = (cublasStatus_t(*)(cublasHandle_t *))fns[0];
    s_blas.destroy = (cublasStatus_t(*)(cublasHandle_t))fns[1];
    s_blas.set_stream = (cublasStatus_t(*)(cublasHandle_t, cudaStream_t))fns[2];
    s_blas.sgemm = (decltype(s_blas.sgemm))fns[3];
    s_blas.status_string = (const char *(*)(cublasStatus_t))fns[4];
    s_blas.lib = lib;   /* kept open for the life of the process */
    return 0;
}

#define CUDA_CHECK(call)                                                    \
    do {                                                                    \
        cudaError_t e_ = (call);                                            \
        if (e_ != cudaSuccess) {                                            \
            s_die(__FILE__, __LINE__, #call, cudaGetErrorString(e_));       \
        }                                                                   \
    } while (0)

#define CUBLAS_CHECK(call)                                                  \
    do {                                                                    \
        cublasStatus_t s_ = (call);                                         \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                  \
            s_die(__FILE__, __LINE__, #call, s_blas.status_string(s_));     \
        }                                                                   \
    } while (0)

/* After a launch: a bad configuration shows up here, not at the next call. */
#define LAUNCH_CHECK(kernel)                                                \
    do {                                                                    \
        cudaError_t e_ = cudaGetLastError();                                \
        if (e_ != cudaSuccess) {                                            \
            s_die(__FILE__, __LINE__, #kernel, cudaGetErrorString(e_));     \
        }                                                                   \
    } while (0)

static cuda_state *S(backend *b)
{
    return (cuda_state *)b->state;
}

constexpr int THREADS = 256;

static unsigned s_blocks(size_t n)
{
    size_t blocks = (n + THREADS - 1) / THREADS;
    return (unsigned)(blocks < 65535 * 16 ? (blocks ? blocks : 1) : 65535 * 16);
}

/* grid-stride loop over [0, n) */
#define FOR_EACH(i, n)                                                        \
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < (n);    \
         i += (size_t)gridDim.x * blockDim.x)

/* ---- memory ---------------------------------------------------------- */

static void *s_alloc(backend *b, size_t bytes)
{
    void *p = NULL;
    if (cudaMalloc(&p, bytes ? bytes : 1) != cudaSuccess) {
        (void)cudaGetLastError();   /* out of memory is the caller's to report */
        return NULL;
    }
    CUDA_CHECK(cudaMemsetAsync(p, 0, bytes, S(b)->stream));
    return p;
}

static void s_release(backend *b, void *p)
{
    (void)b;
    CUDA_CHECK(cudaFree(p));   /* waits for the work queued on it */
}

static void *s_host_alloc(backend *b, size_t bytes)
{
    (void)b;
    void *p = NULL;
    if (cudaMallocHost(&p, bytes ? bytes : 1) != cudaSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    memset(p, 0, bytes);
    return p;
}

static void s_host_release(backend *b, void *p)
{
    (void)b;
    if (p) {
        CUDA_CHECK(cudaFreeHost(p));
    }
}

static void s_to_device(backend *b, void *dst, const void *src, size_t bytes)
{
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, S(b)->stream));
    CUDA_CHECK(cudaStreamSynchronize(S(b)->stream));
}

static void s_to_host(backend *b, void *dst, const void *src, size_t bytes)
{
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, S(b)->stream));
    CUDA_CHECK(cudaStreamSynchronize(S(b)->stream));
}

/* ---- GEMM ------------------------------------------------------------ */

/* Row-major c = op(a) op(b) is column-major c^T = op(b)^T op(a)^T: the
 * same call with the operands swapped and every matrix read as stored. */
static void s_gemm(backend *b, float *c, const float *a, const float *bm,
                   bool trans_a, bool trans_b, int m, int n, int k,
                   float alpha, float beta)
{
    CUBLAS_CHECK(s_blas.sgemm(S(b)->blas, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                             trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k, &alpha,
                             bm, trans_b ? k : n, a, trans_a ? m : k, &beta, c, n));
}

/* ---- element-wise ---------------------------------------------------- */

__global__ void k_bias_add(float *out, const float *bias, size_t total, int cols)
{
    FOR_EACH(i, total) {
        out[i] += bias[i % (size_t)cols];
    }
}

static void s_bias_add(backend *b, float *out, const float *bias, int rows, int cols)
{
    size_t total = (size_t)rows * (size_t)cols;
    k_bias_add<<<s_blocks(total), THREADS, 0, S(b)->stream>>>(out, bias, total, cols);
    LAUNCH_CHECK(k_bias_add);
}

/* Column sums in two passes: blocks of 32 columns x BIAS_ROWS threads,
 * gridDim.y of them down the rows, each writing one partial row; then one
 * thread per column adds the partials in order. */
enum { BIAS_COLS = 32, BIAS_ROWS = 8 };

__global__ void k_bias_partial(float *partial, const float *dout, int rows, int cols)
{
    __shared__ float sums[BIAS_ROWS][BIAS_COLS];
    int col = blockIdx.x * BIAS_COLS + threadIdx.x;
    float s = 0;
    if (col < cols) {
        for (int r = blockIdx.y * BIAS_ROWS + threadIdx.y; r < rows;
             r += gridDim.y * BIAS_ROWS) {
            s += dout[(size_t)r * cols + col];
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

__global__ void k_bias_total(float *dbias, const float *partial, int parts, int cols)
{
    FOR_EACH(c, (size_t)cols) {
        float s = 0;
        for (int p = 0; p < parts; p++) {
            s += partial[(size_t)p * cols + c];
        }
        dbias[c] = s;
    }
}

static void s_bias_grad(backend *b, float *dbias, const float *dout, int rows, int cols)
{
    cuda_state *st = S(b);
    int col_blocks = (cols + BIAS_COLS - 1) / BIAS_COLS;
    int parts = (rows + BIAS_ROWS * 16 - 1) / (BIAS_ROWS * 16);   /* 16 rows a thread */
    parts = parts < 1 ? 1 : (parts > 256 ? 256 : parts);
    size_t need = (size_t)parts * (size_t)cols;
    if (need > st->partial_capacity) {
        s_release(b, st->partial);
        if (!(st->partial = (float *)s_alloc(b, need * sizeof(float)))) {
            s_die(__FILE__, __LINE__, "s_alloc", "out of GPU memory for bias sums");
        }
        st->partial_capacity = need;
    }
    dim3 grid((unsigned)col_blocks, (unsigned)parts), block(BIAS_COLS, BIAS_ROWS);
    k_bias_partial<<<grid, block, 0, st->stream>>>(st->partial, dout, rows, cols);
    LAUNCH_CHECK(k_bias_partial);
    k_bias_total<<<s_blocks((size_t)cols), THREADS, 0, st->stream>>>(dbias, st->partial,
                                                                      parts, cols);
    LAUNCH_CHECK(k_bias_total);
}

__global__ void k_relu_forward(float *out, const float *in, size_t n)
{
    FOR_EACH(i, n) {
        out[i] = in[i] > 0.0f ? in[i] : 0.0f;
    }
}

static void s_relu_forward(backend *b, float *out, const float *in, size_t n)
{
    k_relu_forward<<<s_blocks(n), THREADS, 0, S(b)->stream>>>(out, in, n);
    LAUNCH_CHECK(k_relu_forward);
}

__global__ void k_relu_backward(float *din, const float *dout, const float *out, size_t n)
{
    FOR_EACH(i, n) {
        din[i] = out[i] > 0.0f ? dout[i] : 0.0f;
    }
}

static void s_relu_backward(backend *b, float *din, const float *dout, const float *out,
                            size_t n)
{
    k_relu_backward<<<s_blocks(n), THREADS, 0, S(b)->stream>>>(din, dout, out, n);
    LAUNCH_CHECK(k_relu_backward);
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

static void s_softmax_xent_forward(backend *b, float *probs, double *loss_sum, int *correct,
                                   const float *logits, const int32_t *labels, int rows,
                                   int cols)
{
    cuda_state *st = S(b);
    if (rows > st->row_capacity) {
        s_release(b, st->row_loss);
        s_release(b, st->row_correct);
        st->row_loss = (double *)s_alloc(b, (size_t)rows * sizeof(double));
        st->row_correct = (int *)s_alloc(b, (size_t)rows * sizeof(int));
        if (!st->row_loss || !st->row_correct) {
            s_die(__FILE__, __LINE__, "s_alloc", "out of GPU memory for the loss");
        }
        st->row_capacity = rows;
    }
    k_softmax_xent<<<s_blocks((size_t)rows), THREADS, 0, st->stream>>>(
        probs, st->row_loss, st->row_correct, logits, labels, rows, cols);
    LAUNCH_CHECK(k_softmax_xent);
    k_sum_rows<<<1, THREADS, 0, st->stream>>>(st->sums_device, st->row_loss,
                                              st->row_correct, rows);
    LAUNCH_CHECK(k_sum_rows);
    s_to_host(b, st->sums_host, st->sums_device, 2 * sizeof(double));
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

static void s_softmax_xent_backward(backend *b, float *dlogits, const float *probs,
                                    const int32_t *labels, int rows, int cols, float scale)
{
    size_t total = (size_t)rows * (size_t)cols;
    k_softmax_xent_backward<<<s_blocks(total), THREADS, 0, S(b)->stream>>>(
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

static void s_axpy(backend *b, float *y, float a, const float *x, size_t n)
{
    k_axpy<<<s_blocks(n), THREADS, 0, S(b)->stream>>>(y, a, x, n);
    LAUNCH_CHECK(k_axpy);
}

__global__ void k_scale(float *x, float a, size_t n)
{
    FOR_EACH(i, n) {
        x[i] *= a;
    }
}

static void s_scale(backend *b, float *x, float a, size_t n)
{
    k_scale<<<s_blocks(n), THREADS, 0, S(b)->stream>>>(x, a, n);
    LAUNCH_CHECK(k_scale);
}

static void s_copy(backend *b, float *dst, const float *src, size_t n)
{
    if (dst != src) {
        CUDA_CHECK(cudaMemcpyAsync(dst, src, n * sizeof *dst, cudaMemcpyDeviceToDevice,
                                   S(b)->stream));
    }
}

/* ---- convolution and pooling ------------------------------------------- */

/* One thread per column-matrix element, so that writes are coalesced. */
__global__ void k_im2col(float *col, const float *in, int n, int h, int w, int c, int k,
                         int pad, int ho, int wo)
{
    size_t width = (size_t)k * k * c, total = (size_t)n * ho * wo * width;
    FOR_EACH(i, total) {
        size_t row = i / width, j = i % width;
        int ci = (int)(j % c), kx = (int)(j / c % k), ky = (int)(j / ((size_t)c * k));
        int ox = (int)(row % wo), oy = (int)(row / wo % ho), ni = (int)(row / ((size_t)wo * ho));
        int iy = oy + ky - pad, ix = ox + kx - pad;
        col[i] = iy < 0 || iy >= h || ix < 0 || ix >= w
                     ? 0.0f
                     : in[(((size_t)ni * h + iy) * w + ix) * c + ci];
    }
}

static void s_im2col(backend *b, float *col, const float *in, int n, int h, int w, int c,
                     int k, int pad)
{
    int ho = h + 2 * pad - k + 1, wo = w + 2 * pad - k + 1;
    size_t total = (size_t)n * ho * wo * k * k * c;
    k_im2col<<<s_blocks(total), THREADS, 0, S(b)->stream>>>(col, in, n, h, w, c, k, pad,
                                                            ho, wo);
    LAUNCH_CHECK(k_im2col);
}

/* One thread per input element, gathering the k x k column entries it was
 * copied to: no two threads write the same element. */
__global__ void k_col2im(float *din, const float *col, int n, int h, int w, int c, int k,
                         int pad, int ho, int wo)
{
    size_t width = (size_t)k * k * c, total = (size_t)n * h * w * c;
    FOR_EACH(i, total) {
        int ci = (int)(i % c), ix = (int)(i / c % w), iy = (int)(i / ((size_t)c * w) % h);
        int ni = (int)(i / ((size_t)c * w * h));
        float s = 0;
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
                s += col[row * width + ((size_t)ky * k + kx) * c + ci];
            }
        }
        din[i] = s;
    }
}

static void s_col2im(backend *b, float *din, const float *col, int n, int h, int w, int c,
                     int k, int pad)
{
    int ho = h + 2 * pad - k + 1, wo = w + 2 * pad - k + 1;
    size_t total = (size_t)n * h * w * c;
    k_col2im<<<s_blocks(total), THREADS, 0, S(b)->stream>>>(din, col, n, h, w, c, k, pad,
                                                            ho, wo);
    LAUNCH_CHECK(k_col2im);
}

__global__ void k_maxpool_forward(float *out, const float *in, int n, int h, int w, int c,
                                  int s)
{
    int ho = h / s, wo = w / s;
    size_t total = (size_t)n * ho * wo * c;
    FOR_EACH(i, total) {
        int ci = (int)(i % c), ox = (int)(i / c % wo), oy = (int)(i / ((size_t)c * wo) % ho);
        int ni = (int)(i / ((size_t)c * wo * ho));
        out[i] = in[kernel_pool_argmax(in, ni, oy, ox, ci, h, w, c, s)];
    }
}

static void s_maxpool_forward(backend *b, float *out, const float *in, int n, int h, int w,
                              int c, int s)
{
    size_t total = (size_t)n * (h / s) * (w / s) * c;
    k_maxpool_forward<<<s_blocks(total), THREADS, 0, S(b)->stream>>>(out, in, n, h, w, c, s);
    LAUNCH_CHECK(k_maxpool_forward);
}

/* One thread per input element: it takes its window's gradient if it is
 * the window's first maximum, else 0 (windows do not overlap). */
__global__ void k_maxpool_backward(float *din, const float *dout, const float *in, int n,
                                   int h, int w, int c, int s)
{
    int ho = h / s, wo = w / s;
    size_t total = (size_t)n * h * w * c;
    FOR_EACH(i, total) {
        int ci = (int)(i % c), ix = (int)(i / c % w), iy = (int)(i / ((size_t)c * w) % h);
        int ni = (int)(i / ((size_t)c * w * h));
        int oy = iy / s, ox = ix / s;
        float g = 0.0f;
        if (oy < ho && ox < wo && kernel_pool_argmax(in, ni, oy, ox, ci, h, w, c, s) == i) {
            g = dout[(((size_t)ni * ho + oy) * wo + ox) * c + ci];
        }
        din[i] = g;
    }
}

static void s_maxpool_backward(backend *b, float *din, const float *dout, const float *in,
                               int n, int h, int w, int c, int s)
{
    size_t total = (size_t)n * h * w * c;
    k_maxpool_backward<<<s_blocks(total), THREADS, 0, S(b)->stream>>>(din, dout, in, n, h,
                                                                      w, c, s);
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

static void s_dropout(backend *b, float *out, const float *in, size_t n, float rate,
                      uint64_t seed)
{
    k_dropout<<<s_blocks(n), THREADS, 0, S(b)->stream>>>(out, in, n, rate, seed);
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

static void s_optim_update(backend *b, float *p, const float *g, float *s1, float *s2,
                           size_t n, const backend_update *u)
{
    k_optim_update<<<s_blocks(n), THREADS, 0, S(b)->stream>>>(p, g, s1, s2, n, *u);
    LAUNCH_CHECK(k_optim_update);
}

/* ---- the table --------------------------------------------------------- */

static const backend_ops s_cuda_ops = {
    .version = BACKEND_OPS_VERSION,
    .name = "cuda",
    .host_visible = false,
    .alloc = s_alloc,
    .release = s_release,
    .to_device = s_to_device,
    .to_host = s_to_host,
    .host_alloc = s_host_alloc,
    .host_release = s_host_release,
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
    .im2col = s_im2col,
    .col2im = s_col2im,
    .maxpool_forward = s_maxpool_forward,
    .maxpool_backward = s_maxpool_backward,
    .dropout = s_dropout,
    .optim_update = s_optim_update,
};

extern "C" int backend_cuda_devices(error *err)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        const char *why = e != cudaSuccess ? cudaGetErrorString(e) : "no devices";
        const char *visible = getenv("CUDA_VISIBLE_DEVICES");
        (void)cudaGetLastError();
        return error_set(err, ERROR_USAGE, "backend.device = cuda: no usable GPU (%s; "
                         "CUDA_VISIBLE_DEVICES=%s); use device = cpu or auto", why,
                         visible ? visible : "(unset)");
    }
    return count;
}

extern "C" int backend_cuda_open(backend *b, int ordinal, error *err)
{
    int count = backend_cuda_devices(err);
    if (count < 0) {
        return -1;
    }
    cudaError_t e;
    cuda_state *st = (cuda_state *)calloc(1, sizeof *st);
    if (!st) {
        return error_set(err, ERROR_RUNTIME, "backend: out of memory");
    }
    st->device = (ordinal < 0 ? 0 : ordinal) % count;
    cudaDeviceProp prop;
    if ((e = cudaSetDevice(st->device)) != cudaSuccess ||
        (e = cudaGetDeviceProperties(&prop, st->device)) != cudaSuccess ||
        (e = cudaStreamCreateWithFlags(&st->stream, cudaStreamNonBlocking)) != cudaSuccess ||
        (e = cudaMalloc((void **)&st->sums_device, 2 * sizeof(double))) != cudaSuccess ||
        (e = cudaMallocHost((void **)&st->sums_host, 2 * sizeof(double))) != cudaSuccess) {
        free(st);
        return error_set(err, ERROR_RUNTIME, "%s:%d: GPU %d: %s", __FILE__, __LINE__,
                         ordinal, cudaGetErrorString(e));
    }
    if (s_load_cublas(err) < 0) {
        free(st);
        return -1;
    }
    cublasStatus_t bs = s_blas.create(&st->blas);
    if (bs != CUBLAS_STATUS_SUCCESS) {
        free(st);
        return error_set(err, ERROR_RUNTIME, "%s:%d: cublasCreate: %s", __FILE__, __LINE__,
                         s_blas.status_string(bs));
    }
    /* the default math mode is full FP32, as the CPU computes: TF32 tensor
     * cores only with CUBLAS_TF32_TENSOR_OP_MATH, which asgd never sets */
    CUBLAS_CHECK(s_blas.set_stream(st->blas, st->stream));
    b->ops = &s_cuda_ops;
    b->state = st;
    snprintf(b->description, sizeof b->description, "cuda:%d (%.96s)", st->device, prop.name);
    return 0;
}

extern "C" void backend_cuda_close(backend *b)
{
    cuda_state *st = S(b);
    if (!st) {
        return;
    }
    CUDA_CHECK(cudaStreamSynchronize(st->stream));
    CUDA_CHECK(cudaFree(st->row_loss));
    CUDA_CHECK(cudaFree(st->row_correct));
    CUDA_CHECK(cudaFree(st->partial));
    CUDA_CHECK(cudaFree(st->sums_device));
    CUDA_CHECK(cudaFreeHost(st->sums_host));
    CUBLAS_CHECK(s_blas.destroy(st->blas));
    CUDA_CHECK(cudaStreamDestroy(st->stream));
    free(st);
    b->state = NULL;
}
