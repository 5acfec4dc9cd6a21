/* backend.h: the compute backend, a versioned table of operations.
 *
 * Models and optimizers call only these operations, so that a device (the
 * CPU through OpenBLAS, a GPU through CUDA and cuBLAS) is one table filled
 * with designated initializers. Buffers passed to operations live in the
 * backend's memory (alloc); `host_visible` says whether host code may read
 * them directly (true on the CPU, where to_device/to_host are plain
 * copies). host_alloc gives host memory that copies to and from the device
 * fastest (pinned on CUDA): the buffers that workers pull into and push.
 *
 * Operations are queued in order on the backend's one stream; to_host and
 * the two that return host values (softmax_xent_forward) wait for it.
 *
 * Shapes: matrices are row-major; images are NHWC (batch, height, width,
 * channels), so a convolution is im2col then a GEMM whose rows are output
 * pixels; outputs come first, then inputs, then sizes, as in llm.c. The CPU
 * table is the reference every other backend is checked against. */
#ifndef ASGD_BACKEND_H
#define ASGD_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "core/error.h"

#define BACKEND_OPS_VERSION 4

typedef struct backend backend;

/* The optimizers the backends compute (optim_update). core/optim.h reads
 * them from configs and states their formulas. */
enum optim_kind { OPTIM_SGD, OPTIM_MOMENTUM, OPTIM_NESTEROV, OPTIM_ADAGRAD, OPTIM_ADAM };

/* One optimizer step's constants; the formulas are in core/optim.h. */
typedef struct backend_update {
    int kind;                  /* enum optim_kind */
    float lr, momentum, beta1, beta2, eps;
    float bias1, bias2;        /* adam: 1 - beta1^t and 1 - beta2^t */
} backend_update;

typedef struct backend_ops {
    int version;             /* BACKEND_OPS_VERSION */
    const char *name;
    bool host_visible;

    void *(*alloc)(backend *b, size_t bytes);              /* zeroed; NULL on failure */
    void (*release)(backend *b, void *p);
    void (*to_device)(backend *b, void *dst, const void *src, size_t bytes);
    void (*to_host)(backend *b, void *dst, const void *src, size_t bytes);
    void *(*host_alloc)(backend *b, size_t bytes);         /* zeroed; NULL on failure */
    void (*host_release)(backend *b, void *p);

    /* c (m x n) = alpha * op(a) (m x k) * op(b) (k x n) + beta * c,
     * where op(x) is x or its transpose as stored. */
    void (*gemm)(backend *b, float *c, const float *a, const float *bm,
                 bool trans_a, bool trans_b, int m, int n, int k,
                 float alpha, float beta);
    /* A layer's bias and activation in one pass over out: out (rows x
     * cols) += bias (cols) on every row, then, where relu, out = out > 0 ?
     * out : 0 (a NaN stays NaN, as in PyTorch: a diverged layer shows in
     * the loss). */
    void (*bias_add)(backend *b, float *out, const float *bias, int rows, int cols,
                     bool relu);
    /* Their backward pass in one pass over d (rows x cols): where out (the
     * forward output after ReLU) is not NULL, first d = out > 0 ? d : 0 in
     * place (ReLU's backward); then dbias (cols) = the sum over rows of d,
     * in an order fixed by the shape (the CPU's row by row; CUDA's through
     * partial sums and a tree), so that a result repeats. */
    void (*bias_grad)(backend *b, float *dbias, float *d, const float *out, int rows,
                      int cols);
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

    /* col (n*ho*wo x k*k*c) from in (n x h x w x c), stride 1, zero padding
     * pad, where ho = h + 2 pad - k + 1 (wo likewise); a row is one output
     * pixel's k x k x c window in (kh, kw, c) order. */
    void (*im2col)(backend *b, float *col, const float *in, int n, int h, int w,
                   int c, int k, int pad);
    /* din (n x h x w x c) = the sum, for each input element, of the col
     * entries im2col copied it to (the adjoint of im2col). */
    void (*col2im)(backend *b, float *din, const float *col, int n, int h, int w,
                   int c, int k, int pad);
    /* Winograd F(m x m, k x k) convolution (Lavin and Gray, CVPR 2016),
     * optional: all six or none (NULL), and without them the model uses
     * im2col. With m = backend_winograd_tile(k) and a = m + k - 1, an m x m
     * block of a stride-1 convolution's outputs is
     *   Y = A^T [ (G g G^T) . (B^T d B) ] A
     * for its a x a input tile d and each channel pair's k x k filter g
     * ('.' elementwise); summed over input channels, the a*a products are
     * a*a GEMMs (T x c) (c x oc), which the model runs through gemm:
     *   u (a*a x c x oc) = G w G^T       from w, HWIO (k x k x c x oc)
     *   v (a*a x T x c)  = B^T d B       for each of the T tiles of in
     *   out (NHWC)       = A^T m A       from m (a*a x T x oc)
     * Tiles go image by image, row by row, ceil(ho / m) x ceil(wo / m) per
     * image (backend_winograd_tiles), ho and wo as im2col's; a tile's input
     * window starts at (m ty - pad, m tx - pad), zero outside the image,
     * and outputs past ho or wo are dropped. Each _grad is its forward's
     * adjoint (the backward pass); winograd_input_grad overwrites din. */
    void (*winograd_filter)(backend *b, float *u, const float *w, int c, int oc, int k);
    void (*winograd_filter_grad)(backend *b, float *dw, const float *du, int c, int oc,
                                 int k);
    void (*winograd_input)(backend *b, float *v, const float *in, int n, int h, int w,
                           int c, int k, int pad);
    void (*winograd_input_grad)(backend *b, float *din, const float *dv, int n, int h,
                                int w, int c, int k, int pad);
    void (*winograd_output)(backend *b, float *out, const float *m, int n, int ho, int wo,
                            int oc, int k);
    void (*winograd_output_grad)(backend *b, float *dm, const float *dout, int n, int ho,
                                 int wo, int oc, int k);
    /* out (n x h/s x w/s x c) = max over each s x s window of in (n x h x w
     * x c), a NaN the maximum; windows do not overlap, and rows or columns
     * past the last whole window are dropped. */
    void (*maxpool_forward)(backend *b, float *out, const float *in, int n, int h,
                            int w, int c, int s);
    /* din = dout sent to the first maximum (in window scan order) of each
     * window of in, or to its last NaN; every other element of din is 0. */
    void (*maxpool_backward)(backend *b, float *din, const float *dout, const float *in,
                             int n, int h, int w, int c, int s);
    /* out = in / (1 - rate) where kernel_dropout_keep(seed, i, rate), else
     * 0; in place allowed. The backward pass is the same call on the
     * gradient with the same seed. */
    void (*dropout)(backend *b, float *out, const float *in, size_t n, float rate,
                    uint64_t seed);
    /* One optimizer step over n elements: params updated from grad, with
     * the kind's state s1 and s2 (NULL where the kind has none). */
    void (*optim_update)(backend *b, float *params, const float *grad, float *s1,
                         float *s2, size_t n, const backend_update *u);
} backend_ops;

/* The kernel sizes the winograd_ operations take, the side m of their
 * output tiles (F(4 x 4, 3 x 3) and F(4 x 4, 5 x 5)), and their tile count. */
static inline bool backend_winograd_supports(int k)
{
    return k == 3 || k == 5;
}

static inline int backend_winograd_tile(int k)
{
    (void)k;
    return 4;
}

static inline size_t backend_winograd_tiles(int n, int ho, int wo, int k)
{
    int m = backend_winograd_tile(k);
    return (size_t)n * (size_t)((ho + m - 1) / m) * (size_t)((wo + m - 1) / m);
}

/* How convolutions compute: Winograd where the backend has it and the
 * layer allows (backend.conv = winograd, the default), else im2col. */
enum backend_conv { BACKEND_CONV_WINOGRAD, BACKEND_CONV_IM2COL };

struct backend {
    const backend_ops *ops;
    int threads;
    int conv;             /* enum backend_conv */
    char description[128];
    void *state;          /* the implementation's own */
};

enum backend_device { BACKEND_CPU, BACKEND_CUDA, BACKEND_AUTO };

typedef struct backend_spec {
    int device;           /* enum backend_device */
    long threads;         /* 0 = the library's default */
    int conv;             /* enum backend_conv */
    int ordinal;          /* which GPU: ordinal mod the visible GPUs (worker id) */
} backend_spec;

int backend_spec_configure(backend_spec *s, config *c, error *err);
/* Opens the backend the spec names. `cuda` without a usable GPU (or in a
 * build without nvcc) is ERROR_USAGE; `auto` takes a GPU when one is usable
 * and the CPU otherwise. */
backend *backend_new(const backend_spec *s, error *err);
void backend_destroy(backend **b);
/* Checks, without opening a GPU context, that the spec's device can be
 * opened: ERROR_USAGE naming where c set backend.device (file and line)
 * when it cannot. `asgd train` asks before it makes a run folder or
 * starts any process. */
int backend_check(const backend_spec *s, config *c, error *err);
/* "cpu", or "cuda:N (device name)". */
const char *backend_describe(const backend *b);
/* Makes b's GPU the calling thread's current one (CUDA keeps one per
 * thread): a thread that computes through a backend opened on another
 * thread calls it first, as threads mode's workers and evaluator do.
 * Nothing for the CPU. */
void backend_use_here(const backend *b);
/* What a spec's workers will compute on, without opening a backend: "cpu",
 * or "cuda (G GPUs: NAME)" where a GPU is usable. */
void backend_resolve(const backend_spec *s, char *out, size_t n);
/* Whether OpenBLAS runs kernels older than this CPU's instructions: a CPU
 * that OpenBLAS does not recognise (newer than its release, or named
 * vaguely by a virtual machine) falls back to its Prescott (SSE3) kernels
 * where AVX2 is there. Then why says so, and which OPENBLAS_CORETYPE fits. */
bool backend_blas_lags_cpu(char *why, size_t n);
/* The BLAS threads a process computing by s uses: s's threads, or with
 * threads = 0 OpenBLAS's own default in this environment (its cores, or
 * OPENBLAS_NUM_THREADS). */
int backend_blas_threads(const backend_spec *s);

extern const backend_ops backend_cpu_ops;
int backend_cpu_open(backend *b, error *err);
/* The CUDA backend, in builds with nvcc (ASGD_HAVE_CUDA): the number of
 * visible GPUs (-1 and ERROR_USAGE when there is none); open takes GPU
 * (ordinal mod that number); close releases its stream and handles. */
int backend_cuda_devices(error *err);
/* "cuda (G GPUs: NAME of the first)" into out; out unchanged without one,
 * or where the first is one this build's kernels do not run on. */
void backend_cuda_name(char *out, size_t n);
int backend_cuda_open(backend *b, int ordinal, error *err);
void backend_cuda_use(const backend *b);
void backend_cuda_close(backend *b);

#endif
