/* backend.c: choosing and opening a backend by name. */
#include "core/backend/backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include <cblas.h>

static const char *const s_devices[] = {"cpu", "cuda", "auto", NULL};
static const char *const s_convs[] = {"winograd", "im2col", NULL};

#ifndef ASGD_HAVE_CUDA
static int s_no_cuda(error *err)
{
    return error_set(err, ERROR_USAGE, "this build has no CUDA backend (nvcc was not found "
                     "when it was built); use device = cpu or auto");
}
#endif

int backend_spec_configure(backend_spec *s, config *c, error *err)
{
    s->ordinal = 0;
    if (config_get_enum(c, "backend", "device", "cpu", s_devices, &s->device, err) < 0 ||
        config_get_int(c, "backend", "threads", 1, 0, 1024, &s->threads, err) < 0 ||
        config_get_enum(c, "backend", "conv", "winograd", s_convs, &s->conv, err) < 0) {
        return -1;
    }
    return 0;
}

int backend_check(const backend_spec *s, config *c, error *err)
{
    if (s->device != BACKEND_CUDA) {
        return 0;   /* the CPU, or auto's fallback to it, always opens */
    }
    error why = {0};
#ifdef ASGD_HAVE_CUDA
    if (backend_cuda_devices(&why) >= 0) {
        return 0;
    }
#else
    s_no_cuda(&why);
#endif
    return config_fail(c, "backend", "device", err, "%s", why.msg);
}

void backend_resolve(const backend_spec *s, char *out, size_t n)
{
    snprintf(out, n, "cpu");
#ifdef ASGD_HAVE_CUDA
    if (s->device != BACKEND_CPU) {
        backend_cuda_name(out, n);   /* leaves "cpu" when no GPU is usable */
    }
#else
    (void)s;
#endif
}

bool backend_blas_lags_cpu(char *why, size_t n)
{
#if defined(__x86_64__) || defined(__i386__)
    /* OpenBLAS's kernels for AVX2 and FMA, and for AVX-512 (0.3.21's names) */
    static const char *const wide[] = {"Haswell", "Zen", "Excavator", "SkylakeX",
                                       "Cooperlake", "SapphireRapids", NULL};
    const char *core = openblas_get_corename();
    __builtin_cpu_init();
    if (!core || !__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
        return false;
    }
    for (int i = 0; wide[i]; i++) {
        if (strcasecmp(core, wide[i]) == 0) {
            return false;
        }
    }
    const char *fit = __builtin_cpu_supports("avx512f") ? "SkylakeX" : "Haswell";
    snprintf(why, n, "OpenBLAS computes with its %s kernels on a CPU with AVX2 (a CPU newer "
             "than OpenBLAS, or one a virtual machine names vaguely): the MLP's steps ran 2.5 "
             "to 6.6 times slower than with its Haswell or SkylakeX kernels (bench/RESULTS.md); "
             "set OPENBLAS_CORETYPE=%s", core, fit);
    return true;
#else
    (void)why;
    (void)n;
    return false;
#endif
}

int backend_blas_threads(const backend_spec *s)
{
    /* a process that never set its count has OpenBLAS's default */
    return s->threads > 0 ? s->threads : openblas_get_num_threads();
}

/* Opens the CUDA backend into b; -1 with err filled when it cannot. */
static int s_open_cuda(backend *b, const backend_spec *s, error *err)
{
#ifdef ASGD_HAVE_CUDA
    return backend_cuda_open(b, s->ordinal, err);
#else
    (void)b;
    (void)s;
    return s_no_cuda(err);
#endif
}

backend *backend_new(const backend_spec *s, error *err)
{
    backend *b = calloc(1, sizeof *b);
    if (!b) {
        error_set(err, ERROR_RUNTIME, "backend: out of memory");
        return NULL;
    }
    b->threads = (int)s->threads;
    b->conv = s->conv;
    if (s->device != BACKEND_CPU) {
        error why = {0};
        if (s_open_cuda(b, s, &why) == 0) {
            return b;
        }
        if (s->device == BACKEND_CUDA) {
            error_set(err, why.status, "backend.device = cuda: %s", why.msg);
            free(b);
            return NULL;
        }
        /* auto: no usable GPU, so the CPU */
    }
    if (backend_cpu_open(b, err) < 0) {
        free(b);
        return NULL;
    }
    return b;
}

const char *backend_describe(const backend *b)
{
    return b->description;
}

void backend_use_here(const backend *b)
{
#ifdef ASGD_HAVE_CUDA
    if (b->state) {   /* only the CUDA backend has state */
        backend_cuda_use(b);
    }
#else
    (void)b;
#endif
}

void backend_destroy(backend **pb)
{
    backend *b = *pb;
    if (!b) {
        return;
    }
#ifdef ASGD_HAVE_CUDA
    if (b->state) {
        backend_cuda_close(b);
    }
#endif
    free(b);
    *pb = NULL;
}
