/* backend_cuda.cu: the CUDA backend's devices, memory and table. GEMM is
 * cuBLAS's sgemm (plain FP32, no TF32); every other operation is one of
 * asgd's kernels (backend_cuda_ops.cu), checked against the CPU loops by
 * tests/test_cuda.c.
 *
 * All work is queued on one stream per backend. to_device and to_host
 * return once the copy is done (so the host may reuse its buffer), and
 * softmax_xent_forward once its sums are on the host; everything else is
 * asynchronous. Every CUDA and cuBLAS call is checked: a failure prints the
 * call with its file and line and exits with status 1, since an operation
 * has no way to hand an error back mid-step.
 *
 * cuBLAS is opened with dlopen when the first CUDA backend opens, not
 * linked: loading it costs every process about 0.1 s and 200 MB of
 * relocations, which CPU runs (and parameter servers) should not pay. */
#include "core/backend/cuda.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cuda_die(const char *file, int line, const char *call, const char *what)
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

#define CUBLAS_CHECK(call)                                                  \
    do {                                                                    \
        cublasStatus_t s_ = (call);                                         \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                  \
            cuda_die(__FILE__, __LINE__, #call, s_blas.status_string(s_));     \
        }                                                                   \
    } while (0)

/* ---- memory ---------------------------------------------------------- */

static void *s_alloc(backend *b, size_t bytes)
{
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, bytes ? bytes : 1);
    if (e == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();   /* out of memory is the caller's to report */
        return NULL;
    }
    if (e != cudaSuccess) {   /* an earlier kernel's fault, which it reports: it was
                               * cleared here and taken for memory run out */
        cuda_die(__FILE__, __LINE__, "cudaMalloc", cudaGetErrorString(e));
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
    .bias_add = cuda_bias_add,
    .bias_grad = cuda_bias_grad,
    .softmax_xent_forward = cuda_softmax_xent_forward,
    .softmax_xent_backward = cuda_softmax_xent_backward,
    .axpy = cuda_axpy,
    .scale = cuda_scale,
    .copy = cuda_copy,
    .im2col = cuda_im2col,
    .col2im = cuda_col2im,
    /* no Winograd transforms on the GPU yet: convolutions use im2col */
    .winograd_filter = NULL,
    .winograd_filter_grad = NULL,
    .winograd_input = NULL,
    .winograd_input_grad = NULL,
    .winograd_output = NULL,
    .winograd_output_grad = NULL,
    .maxpool_forward = cuda_maxpool_forward,
    .maxpool_backward = cuda_maxpool_backward,
    .dropout = cuda_dropout,
    .optim_update = cuda_optim_update,
};

extern "C" int backend_cuda_devices(error *err)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        const char *why = e != cudaSuccess ? cudaGetErrorString(e) : "no devices";
        const char *visible = getenv("CUDA_VISIBLE_DEVICES");
        (void)cudaGetLastError();
        return error_set(err, ERROR_USAGE, "no usable GPU (%s; "
                         "CUDA_VISIBLE_DEVICES=%s); use device = cpu or auto", why,
                         visible ? visible : "(unset)");
    }
    return count;
}

extern "C" void backend_cuda_name(char *out, size_t n)
{
    int count = 0;
    cudaDeviceProp prop;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0 ||
        cudaGetDeviceProperties(&prop, 0) != cudaSuccess || cudaSetDevice(0) != cudaSuccess ||
        cuda_kernels_run_here() != cudaSuccess) {   /* one auto does not take: not the run's */
        (void)cudaGetLastError();
        return;
    }
    snprintf(out, n, "cuda (%d GPU%s: %.96s)", count, count > 1 ? "s" : "", prop.name);
}

/* What an open that failed part way had made, released (cudaFree and
 * friends take NULL), so that device = auto falls back to the CPU with no
 * GPU buffer, stream or handle left behind. */
static void s_open_failed(cuda_state *st)
{
    if (st->blas) {
        (void)s_blas.destroy(st->blas);
    }
    (void)cudaFreeHost(st->sums_host);
    (void)cudaFree(st->sums_device);
    if (st->stream) {
        (void)cudaStreamDestroy(st->stream);
    }
    (void)cudaGetLastError();
    free(st);
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
        s_open_failed(st);
        return error_set(err, ERROR_RUNTIME, "%s:%d: GPU %d: %s", __FILE__, __LINE__,
                         ordinal, cudaGetErrorString(e));
    }
    if ((e = cuda_kernels_run_here()) != cudaSuccess) {
        /* an older GPU than the build's architectures: cuBLAS ran, and the
         * first of asgd's kernels failed the run, where auto takes the CPU */
        int device = st->device;
        s_open_failed(st);
        return error_set(err, ERROR_USAGE, "GPU %d (%.96s, compute capability %d.%d): %s: "
                         "this build's kernels are for other GPUs (CMAKE_CUDA_ARCHITECTURES); "
                         "use device = cpu or auto, or build for it", device, prop.name,
                         prop.major, prop.minor, cudaGetErrorString(e));
    }
    if (s_load_cublas(err) < 0) {
        s_open_failed(st);
        return -1;
    }
    cublasStatus_t bs = s_blas.create(&st->blas);
    /* the default math mode is full FP32, as the CPU computes: TF32 tensor
     * cores only with CUBLAS_TF32_TENSOR_OP_MATH, which asgd never sets */
    if (bs == CUBLAS_STATUS_SUCCESS) {
        bs = s_blas.set_stream(st->blas, st->stream);
    }
    if (bs != CUBLAS_STATUS_SUCCESS) {
        const char *what = st->blas ? "cublasSetStream" : "cublasCreate";
        s_open_failed(st);
        return error_set(err, ERROR_RUNTIME, "%s:%d: %s: %s", __FILE__, __LINE__, what,
                         s_blas.status_string(bs));
    }
    b->ops = &s_cuda_ops;
    b->state = st;
    snprintf(b->description, sizeof b->description, "cuda:%d (%.96s)", st->device, prop.name);
    return 0;
}

extern "C" void backend_cuda_use(const backend *b)
{
    CUDA_CHECK(cudaSetDevice(((const cuda_state *)b->state)->device));
}

extern "C" void backend_cuda_close(backend *b)
{
    cuda_state *st = S(b);
    if (!st) {
        return;
    }
    CUDA_CHECK(cudaSetDevice(st->device));   /* its stream and buffers are that GPU's */
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
