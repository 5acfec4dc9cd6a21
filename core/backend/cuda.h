/* cuda.h: what the two halves of the CUDA backend share (C++, for .cu
 * files only): backend_cuda.cu (devices, memory, cuBLAS's GEMM, the
 * table) and backend_cuda_ops.cu (asgd's own kernels, each the GPU form of
 * the loop of the same name in backend_cpu.c). */
#ifndef ASGD_CUDA_H
#define ASGD_CUDA_H

extern "C" {
#include "core/backend/backend.h"
}

#include <cuda_runtime.h>
#include <cublas_v2.h>

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

/* Prints the failed call with its file and line, and exits with status 1:
 * an operation has no way to hand an error back mid-step. */
void cuda_die(const char *file, int line, const char *call, const char *what);

#define CUDA_CHECK(call)                                                    \
    do {                                                                    \
        cudaError_t e_ = (call);                                            \
        if (e_ != cudaSuccess) {                                            \
            cuda_die(__FILE__, __LINE__, #call, cudaGetErrorString(e_));    \
        }                                                                   \
    } while (0)

/* After a launch: a bad configuration shows up here, not at the next call. */
#define LAUNCH_CHECK(kernel)                                                \
    do {                                                                    \
        cudaError_t e_ = cudaGetLastError();                                \
        if (e_ != cudaSuccess) {                                            \
            cuda_die(__FILE__, __LINE__, #kernel, cudaGetErrorString(e_));  \
        }                                                                   \
    } while (0)

static inline cuda_state *S(backend *b)
{
    return (cuda_state *)b->state;
}

constexpr int THREADS = 256;

static inline unsigned cuda_blocks(size_t n)
{
    size_t blocks = (n + THREADS - 1) / THREADS;
    return (unsigned)(blocks < 65535 * 16 ? (blocks ? blocks : 1) : 65535 * 16);
}

/* grid-stride loop over [0, n) */
#define FOR_EACH(i, n)                                                      \
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < (n); \
         i += (size_t)gridDim.x * blockDim.x)

/* Whether this build's kernels run on the current device: cudaSuccess, or
 * why not (cudaErrorNoKernelImageForDevice on a GPU older than the
 * architectures it was built for, where cuBLAS still works). */
cudaError_t cuda_kernels_run_here(void);

/* The operations of backend_cuda_ops.cu, as backend.h states them. */
void cuda_bias_add(backend *b, float *out, const float *bias, int rows, int cols, bool relu);
void cuda_bias_grad(backend *b, float *dbias, float *d, const float *out, int rows, int cols);
void cuda_softmax_xent_forward(backend *b, float *probs, double *loss_sum, int *correct,
                               const float *logits, const int32_t *labels, int rows, int cols);
void cuda_softmax_xent_backward(backend *b, float *dlogits, const float *probs,
                                const int32_t *labels, int rows, int cols, float scale);
void cuda_axpy(backend *b, float *y, float a, const float *x, size_t n);
void cuda_scale(backend *b, float *x, float a, size_t n);
void cuda_copy(backend *b, float *dst, const float *src, size_t n);
void cuda_im2col(backend *b, float *col, const float *in, int n, int h, int w, int c, int k,
                 int pad);
void cuda_col2im(backend *b, float *din, const float *col, int n, int h, int w, int c, int k,
                 int pad);
void cuda_maxpool_forward(backend *b, float *out, const float *in, int n, int h, int w, int c,
                          int s);
void cuda_maxpool_backward(backend *b, float *din, const float *dout, const float *in, int n,
                           int h, int w, int c, int s);
void cuda_dropout(backend *b, float *out, const float *in, size_t n, float rate, uint64_t seed);
void cuda_optim_update(backend *b, float *p, const float *g, float *s1, float *s2, size_t n,
                       const backend_update *u);

#endif
