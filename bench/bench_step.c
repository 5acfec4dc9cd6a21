/* bench_step.c: samples per second of one training step (gradient, then
 * the optimizer on the device), as the sequential trainer takes it, and
 * the share of that step's time its GEMMs alone need.
 *
 *   build/bench/bench_step DEVICE MODEL BATCH [STEPS] [REPS]
 *     DEVICE cpu|cuda, MODEL mlp|cnn with [model]'s defaults (mlp 256-128;
 *     cnn the TensorFlow tutorial network) but no dropout, on random
 *     28 x 28 inputs with 10 classes.
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

enum { MAX_CALLS = 64 };
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

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: bench_step cpu|cuda mlp|cnn BATCH [STEPS] [REPS]\n");
        return 2;
    }
    backend_spec bs = {.device = strcmp(argv[1], "cuda") == 0 ? BACKEND_CUDA : BACKEND_CPU,
                       .threads = 0};
    int batch = atoi(argv[3]);
    int steps = argc > 4 ? atoi(argv[4]) : 200;
    int reps = argc > 5 ? atoi(argv[5]) : 5;
    /* the model's own defaults (mlp 256-128, the tutorial CNN), without
     * dropout: torch_step.py's twin has none */
    char text[64];
    snprintf(text, sizeof text, "[model]\ntype = %s\ndropout = 0\n", argv[2]);
    error err = {0};
    model_spec ms;
    config *c = config_parse_string(text, "bench_step", &err);
    int ok = c && model_spec_configure(&ms, c, &err) == 0;
    config_destroy(&c);
    backend *b = ok ? backend_new(&bs, &err) : NULL;
    model *m = b ? model_new(&ms, b, 784, 10, &err) : NULL;
    if (!m || batch < 1 || steps < 1 || reps < 1) {
        fprintf(stderr, "bench_step: %s\n", err.msg[0] ? err.msg : "bad arguments");
        return 2;
    }
    float *params = b->ops->alloc(b, m->nparams * sizeof(float));
    float *grad = b->ops->alloc(b, m->nparams * sizeof(float));
    optim_spec os = {.kind = OPTIM_SGD, .lr = 0.01};
    optim *o = optim_new_on(&os, m->nparams, b);
    float *x = malloc((size_t)batch * 784 * sizeof *x);
    int32_t *y = malloc((size_t)batch * sizeof *y);
    rng r = rng_derive(1, RNG_DATA, 0);
    for (size_t i = 0; i < (size_t)batch * 784; i++) {
        x[i] = (float)rng_normal(&r);
    }
    for (int i = 0; i < batch; i++) {
        y[i] = (int32_t)rng_below(&r, 10);
    }
    model_init_params(m, params, 1);

    /* record one step's GEMM calls, then warm up */
    backend_ops recording = *b->ops;
    recording.gemm = s_recording_gemm;
    s_real = b->ops;
    b->ops = &recording;
    model_gradient(m, grad, params, x, y, batch);
    b->ops = s_real;
    size_t widest = 1;
    for (int j = 0; j < s_ncalls; j++) {
        size_t mn = (size_t)s_calls[j].m * (size_t)s_calls[j].n;
        widest = mn > widest ? mn : widest;
    }
    float *scratch = b->ops->alloc(b, widest * sizeof(float));
    if (!params || !grad || !o || !scratch) {
        fprintf(stderr, "bench_step: out of memory\n");
        return 1;
    }
    for (int i = 0; i < 10; i++) {
        model_gradient(m, grad, params, x, y, batch);
        optim_step(o, params, grad);
    }
    s_sync(b, params);

    double *step_s = calloc((size_t)reps, sizeof *step_s);
    double *gemm_s = calloc((size_t)reps, sizeof *gemm_s);
    for (int rep = 0; rep < reps; rep++) {
        double t0 = run_now();
        for (int i = 0; i < steps; i++) {
            model_gradient(m, grad, params, x, y, batch);
            optim_step(o, params, grad);
        }
        s_sync(b, params);
        double t1 = run_now();
        for (int i = 0; i < steps; i++) {
            for (int j = 0; j < s_ncalls; j++) {
                const gemm_call *g = &s_calls[j];
                b->ops->gemm(b, scratch, g->a, g->bm, g->ta, g->tb, g->m, g->n, g->k,
                             g->alpha, 0.0f);
            }
        }
        s_sync(b, params);
        double t2 = run_now();
        step_s[rep] = (t1 - t0) / steps;
        gemm_s[rep] = (t2 - t1) / steps;
    }
    qsort(step_s, (size_t)reps, sizeof *step_s, s_cmp);
    qsort(gemm_s, (size_t)reps, sizeof *gemm_s, s_cmp);
    double step = step_s[reps / 2], gemm = gemm_s[reps / 2];
    printf("device=%s model=%s batch=%d params=%zu gemms=%d samples_per_s=%.1f "
           "step_ms=%.4f gemm_ms=%.4f gemm_fraction=%.3f\n",
           backend_describe(b), argv[2], batch, m->nparams, s_ncalls, batch / step,
           step * 1e3, gemm * 1e3, gemm / step);
    free(step_s);
    free(gemm_s);
    free(x);
    free(y);
    optim_destroy(&o);
    b->ops->release(b, params);
    b->ops->release(b, grad);
    b->ops->release(b, scratch);
    model_destroy(&m);
    backend_destroy(&b);
    return 0;
}
