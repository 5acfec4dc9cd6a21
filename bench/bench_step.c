/* bench_step.c: samples per second of one training step (gradient, then
 * the optimizer on the device), as the sequential trainer takes it, and
 * the share of that step's time its GEMMs alone need.
 *
 *   build/bench/bench_step DEVICE MODEL BATCH [STEPS] [REPS] [CONV]
 *     DEVICE cpu|cuda, MODEL mlp|cnn with [model]'s defaults (mlp 256-128;
 *     cnn the TensorFlow tutorial network) but no dropout, on random
 *     28 x 28 inputs with 10 classes; CONV is backend.conv (winograd, the
 *     default, or im2col). Through Winograd a convolution's GEMMs are its
 *     a*a small ones, so its share counts those, not im2col's.
 *
 * The GEMM share comes from a recording backend: one step runs through a
 * copy of the ops table whose gemm notes every call (shapes and buffers)
 * before forwarding it; the bench then replays exactly those calls, alone,
 * through the real gemm, with outputs sent to a scratch buffer so that the
 * inputs keep the step's values (feeding outputs back would let values
 * drift into denormals or overflow, and time that instead). gemm_fraction = GEMM-only time / step time, i.e.
 * the step's rate as a fraction of the GEMM library's (cuBLAS, OpenBLAS)
 * rate for the same shapes. Each of REPS repetitions times STEPS steps then
 * STEPS replays, side by side; the medians are printed as one line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/backend/backend.h"
#include "core/model.h"
#include "core/optim.h"
#include "core/rng.h"
#include "core/run.h"

typedef struct gemm_call {
    const float *a, *bm;
    bool ta, tb;
    int m, n, k;
    float alpha;
} gemm_call;

enum { MAX_CALLS = 256 };
static gemm_call s_calls[MAX_CALLS];
static int s_ncalls;
static const backend_ops *s_real;

static void s_recording_gemm(backend *b, float *c, const float *a, const float *bm,
                             bool ta, bool tb, int m, int n, int k, float alpha, float beta)
{
    if (s_ncalls < MAX_CALLS) {
        s_calls[s_ncalls++] = (gemm_call){a, bm, ta, tb, m, n, k, alpha};
    }
    s_real->gemm(b, c, a, bm, ta, tb, m, n, k, alpha, beta);
}

/* Waits for everything queued on b. */
static void s_sync(backend *b, const float *any)
{
    float one;
    b->ops->to_host(b, &one, any, sizeof one);
}

static int s_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n) (sorted in place): the mean of the two middle
 * values when n is even. */
static double s_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, s_cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One model's step and what it needs. */
typedef struct bench {
    backend *b;
    model *m;
    optim *o;
    float *params, *grad, *scratch, *x;
    int32_t *y;
    int batch;
} bench;

/* The model type's own defaults (mlp 256-128, the tutorial CNN), without
 * dropout (torch_step.py's twin has none), on random inputs and labels. */
static int s_open(bench *k, const backend_spec *bs, const char *type, error *err)
{
    char text[64];
    snprintf(text, sizeof text, "[model]\ntype = %s\ndropout = 0\n", type);
    model_spec ms;
    config *c = config_parse_string(text, "bench_step", err);
    int ok = c && model_spec_configure(&ms, c, err) == 0;
    config_destroy(&c);
    k->b = ok ? backend_new(bs, err) : NULL;
    k->m = k->b ? model_new(&ms, k->b, 784, 10, err) : NULL;
    if (!k->m) {
        return -1;
    }
    backend *b = k->b;
    k->params = b->ops->alloc(b, k->m->nparams * sizeof(float));
    k->grad = b->ops->alloc(b, k->m->nparams * sizeof(float));
    optim_spec os = {.kind = OPTIM_SGD, .lr = 0.01};
    k->o = optim_new_on(&os, k->m->nparams, b);
    k->x = malloc((size_t)k->batch * 784 * sizeof *k->x);
    k->y = malloc((size_t)k->batch * sizeof *k->y);
    if (!k->params || !k->grad || !k->o || !k->x || !k->y) {
        return error_set(err, ERROR_RUNTIME, "out of memory");
    }
    rng r = rng_derive(1, RNG_DATA, 0);
    for (size_t i = 0; i < (size_t)k->batch * 784; i++) {
        k->x[i] = (float)rng_normal(&r);
    }
    for (int i = 0; i < k->batch; i++) {
        k->y[i] = (int32_t)rng_below(&r, 10);
    }
    model_init_params(k->m, k->params, 1);
    return 0;
}

static void s_close(bench *k)
{
    free(k->x);
    free(k->y);
    optim_destroy(&k->o);
    if (k->b) {
        k->b->ops->release(k->b, k->params);
        k->b->ops->release(k->b, k->grad);
        k->b->ops->release(k->b, k->scratch);
    }
    model_destroy(&k->m);
    backend_destroy(&k->b);
}

static void s_step(bench *k)
{
    model_gradient(k->m, k->grad, k->params, k->x, k->y, k->batch);
    optim_step(k->o, k->params, k->grad);
}

/* Records one step's GEMM calls and makes the scratch output they replay
 * into; then warms up. */
static int s_record(bench *k, error *err)
{
    backend *b = k->b;
    backend_ops recording = *b->ops;
    recording.gemm = s_recording_gemm;
    s_real = b->ops;
    b->ops = &recording;
    model_gradient(k->m, k->grad, k->params, k->x, k->y, k->batch);
    b->ops = s_real;
    size_t widest = 1;
    for (int j = 0; j < s_ncalls; j++) {
        size_t mn = (size_t)s_calls[j].m * (size_t)s_calls[j].n;
        widest = mn > widest ? mn : widest;
    }
    if (!(k->scratch = b->ops->alloc(b, widest * sizeof(float)))) {
        return error_set(err, ERROR_RUNTIME, "out of memory");
    }
    for (int i = 0; i < 10; i++) {
        s_step(k);
    }
    s_sync(b, k->params);
    return 0;
}

/* Seconds per step of `steps` steps, then of their GEMMs replayed alone. */
static void s_time(bench *k, int steps, double *step_s, double *gemm_s)
{
    backend *b = k->b;
    double t0 = run_now();
    for (int i = 0; i < steps; i++) {
        s_step(k);
    }
    s_sync(b, k->params);
    double t1 = run_now();
    for (int i = 0; i < steps; i++) {
        for (int j = 0; j < s_ncalls; j++) {
            const gemm_call *g = &s_calls[j];
            b->ops->gemm(b, k->scratch, g->a, g->bm, g->ta, g->tb, g->m, g->n, g->k,
                         g->alpha, 0.0f);
        }
    }
    s_sync(b, k->params);
    double t2 = run_now();
    *step_s = (t1 - t0) / steps;
    *gemm_s = (t2 - t1) / steps;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: bench_step cpu|cuda mlp|cnn BATCH [STEPS] [REPS] "
                        "[winograd|im2col]\n");
        return 2;
    }
    backend_spec bs = {.device = strcmp(argv[1], "cuda") == 0 ? BACKEND_CUDA : BACKEND_CPU,
                       .threads = 0};
    if (argc > 6 && strcmp(argv[6], "im2col") == 0) {
        bs.conv = BACKEND_CONV_IM2COL;
    }
    bench k = {.batch = atoi(argv[3])};
    int steps = argc > 4 ? atoi(argv[4]) : 200;
    int reps = argc > 5 ? atoi(argv[5]) : 5;
    error err = {0};
    if (k.batch < 1 || steps < 1 || reps < 1 || reps > 1000) {
        fprintf(stderr, "bench_step: bad arguments\n");
        return 2;
    }
    if (s_open(&k, &bs, argv[2], &err) < 0 || s_record(&k, &err) < 0) {
        fprintf(stderr, "bench_step: %s\n", err.msg);
        s_close(&k);
        return 2;
    }
    double step_s[1000], gemm_s[1000];
    for (int rep = 0; rep < reps; rep++) {
        s_time(&k, steps, &step_s[rep], &gemm_s[rep]);
    }
    double step = s_median(step_s, reps), gemm = s_median(gemm_s, reps);
    printf("device=%s model=%s batch=%d params=%zu gemms=%d samples_per_s=%.1f "
           "step_ms=%.4f gemm_ms=%.4f gemm_fraction=%.3f\n",
           backend_describe(k.b), argv[2], k.batch, k.m->nparams, s_ncalls, k.batch / step,
           step * 1e3, gemm * 1e3, gemm / step);
    s_close(&k);
    return 0;
}
