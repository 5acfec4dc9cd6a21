/* kernels.h: the arithmetic of one element, one row or one pooling window,
 * shared by the CPU loops (backend_cpu.c) and the CUDA kernels
 * (backend_cuda.cu), so that the two backends differ only in how they walk
 * the data. Every function is inline and compiles for host and device.
 * tests/test_backend.c checks this arithmetic against independent double-
 * precision loops, and tests/test_cuda.c the kernels' walks against the
 * CPU's. */
#ifndef ASGD_BACKEND_KERNELS_H
#define ASGD_BACKEND_KERNELS_H

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/backend/backend.h"

#ifdef __CUDACC__
#define BACKEND_HOST_DEVICE __host__ __device__
#else
#define BACKEND_HOST_DEVICE
#endif

/* Division by a divisor fixed for a whole launch, as one multiply and a
 * shift where every dividend is below 2^31 (Granlund and Montgomery,
 * "Division by invariant integers using multiplication", PLDI 1994): with
 * l = ceil(log2 d), p = 31 + l and m = ceil(2^p / d) < 2^32, floor(n m /
 * 2^p) = floor(n / d) for all n < 2^31, since n (m d - 2^p) < 2^p. A GPU
 * divides integers in software (tens of instructions for 64 bits), and an
 * index walk divides several times per element. kernel_divider(d, limit)
 * takes the multiply when every n it will see is below limit <= 2^31, and
 * plain division otherwise. */
typedef struct kernel_divider {
    uint64_t d;
    uint32_t m, p;
    bool fast;
} kernel_divider;

static inline BACKEND_HOST_DEVICE kernel_divider kernel_divider_of(uint64_t d, uint64_t limit)
{
    kernel_divider v = {d, 0, 0, d > 0 && d < (1ull << 31) && limit <= (1ull << 31)};
    if (v.fast) {
        uint32_t l = 0;
        while ((1ull << l) < d) {
            l++;
        }
        v.p = 31 + l;
        v.m = (uint32_t)(((1ull << v.p) + d - 1) / d);
    }
    return v;
}

static inline BACKEND_HOST_DEVICE uint64_t kernel_divide(kernel_divider v, uint64_t n)
{
    return v.fast ? ((uint64_t)(uint32_t)n * v.m) >> v.p : n / v.d;
}

/* Dropout's mask: element i of a layer is kept unless a counter-based hash
 * (splitmix64) of (seed, i), as a 24-bit fraction, falls below rate. No
 * state, so the backward pass recomputes the forward's mask from the seed. */
static inline BACKEND_HOST_DEVICE bool kernel_dropout_keep(uint64_t seed, uint64_t i,
                                                           float rate)
{
    uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (float)(z >> 40) >= rate * 16777216.0f;
}

/* The flat index into in (n x h x w x c) of window (ni, oy, ox)'s first
 * maximum (in scan order) in channel ci, for s x s windows. */
static inline BACKEND_HOST_DEVICE size_t kernel_pool_argmax(const float *in, int ni, int oy,
                                                            int ox, int ci, int h, int w,
                                                            int c, int s)
{
    size_t best = (((size_t)ni * h + (size_t)oy * s) * w + (size_t)ox * s) * c + ci;
    for (int dy = 0; dy < s; dy++) {
        for (int dx = 0; dx < s; dx++) {
            size_t i = (((size_t)ni * h + (size_t)oy * s + dy) * w + (size_t)ox * s + dx) * c + ci;
            if (in[i] > in[best] || in[i] != in[i]) {   /* a NaN is the max, as in PyTorch */
                best = i;
            }
        }
    }
    return best;
}

/* One row: p (cols) = softmax(z), which may be z itself; returns the row's
 * cross-entropy for label in log-sum-exp form (exact even when p[label]
 * underflows) and sets *hit to whether the argmax is the label. */
static inline BACKEND_HOST_DEVICE float kernel_softmax_xent_row(float *p, const float *z,
                                                               int32_t label, int cols,
                                                               int *hit)
{
    float zmax = -FLT_MAX;
    int argmax = 0;
    for (int c = 0; c < cols; c++) {
        if (z[c] > zmax) {
            zmax = z[c];
            argmax = c;
        }
    }
    float z_label = z[label];   /* read before p overwrites z */
    float sum = 0;
    for (int c = 0; c < cols; c++) {
        p[c] = expf(z[c] - zmax);
        sum += p[c];
    }
    float inv = 1.0f / sum;
    for (int c = 0; c < cols; c++) {
        p[c] *= inv;
    }
    *hit = argmax == label;
    return logf(sum) - (z_label - zmax);
}

/* One element of each optimizer's update (formulas in core/optim.h). */
static inline BACKEND_HOST_DEVICE void kernel_sgd(float *p, float g, const backend_update *u)
{
    *p -= u->lr * g;
}

static inline BACKEND_HOST_DEVICE void kernel_momentum(float *p, float g, float *v,
                                                       const backend_update *u)
{
    *v = u->momentum * *v + g;
    *p -= u->lr * *v;
}

static inline BACKEND_HOST_DEVICE void kernel_nesterov(float *p, float g, float *v,
                                                       const backend_update *u)
{
    *v = u->momentum * *v + g;
    *p -= u->lr * (g + u->momentum * *v);
}

static inline BACKEND_HOST_DEVICE void kernel_adagrad(float *p, float g, float *s,
                                                      const backend_update *u)
{
    *s += g * g;
    *p -= u->lr * g / (sqrtf(*s) + u->eps);
}

static inline BACKEND_HOST_DEVICE void kernel_adam(float *p, float g, float *m, float *v,
                                                   const backend_update *u)
{
    *m = u->beta1 * *m + (1.0f - u->beta1) * g;
    *v = u->beta2 * *v + (1.0f - u->beta2) * g * g;
    *p -= u->lr * (*m / u->bias1) / (sqrtf(*v / u->bias2) + u->eps);
}

#endif
