/* winograd.c: Winograd F(4 x 4, k x k) transforms on the CPU (the
 * contract is backend.h's, the matrices' source winograd.h's).
 *
 * Every transform is one "sandwich" L X R^T of small constant matrices
 * around an a x a (or m x m, or k x k) grid of channel runs: the grid's
 * positions are strided in memory (an image's rows, the a*a planes of v
 * and m), each position a run of contiguous channels, so the inner loops
 * go along channels and vectorize, and the matrices' zeros are skipped. */
#include "core/backend/winograd.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_M = 4, MAX_K = 5, MAX_A = MAX_M + MAX_K - 1, CHANNEL_BLOCK = 64 };

/* One scheme's matrices, row-major, and their transposes. */
typedef struct winograd_mats {
    int k, m, a;
    float at[MAX_M * MAX_A], a_[MAX_A * MAX_M]; /* A^T (m x a), A (a x m) */
    float g[MAX_A * MAX_K], gt[MAX_K * MAX_A];  /* G (a x k), G^T (k x a) */
    float bt[MAX_A * MAX_A], b_[MAX_A * MAX_A]; /* B^T (a x a), B (a x a) */
} winograd_mats;

/* F(4 x 4, 3 x 3), a = 6: the points 0, 1, -1, 2, -2 and infinity */
static const float s_at43[4 * 6] = {
    1, 1, 1, 1, 1, 0,
    0, 1, -1, 2, -2, 0,
    0, 1, 1, 4, 4, 0,
    0, 1, -1, 8, -8, 1,
};
static const float s_g43[6 * 3] = {
    1, 0, 0,
    1, 1, 1,
    1, -1, 1,
    1, 2, 4,
    1, -2, 4,
    0, 0, 1,
};
static const float s_bt43[6 * 6] = {
    1, 0, -5.0f / 4, 0, 1.0f / 4, 0,
    0, 2.0f / 3, 2.0f / 3, -1.0f / 6, -1.0f / 6, 0,
    0, -2.0f / 3, 2.0f / 3, 1.0f / 6, -1.0f / 6, 0,
    0, -1.0f / 12, -1.0f / 24, 1.0f / 12, 1.0f / 24, 0,
    0, 1.0f / 12, -1.0f / 24, -1.0f / 12, 1.0f / 24, 0,
    0, 4, 0, -5, 0, 1,
};
/* F(4 x 4, 5 x 5), a = 8: the points 0, 1, -1, 2, -2, 1/2, -1/2 and infinity */
static const float s_at45[4 * 8] = {
    1, 1, 1, 1, 1, 1, 1, 0,
    0, 1, -1, 2, -2, 1.0f / 2, -1.0f / 2, 0,
    0, 1, 1, 4, 4, 1.0f / 4, 1.0f / 4, 0,
    0, 1, -1, 8, -8, 1.0f / 8, -1.0f / 8, 1,
};
static const float s_g45[8 * 5] = {
    1, 0, 0, 0, 0,
    1, 1, 1, 1, 1,
    1, -1, 1, -1, 1,
    1, 2, 4, 8, 16,
    1, -2, 4, -8, 16,
    1, 1.0f / 2, 1.0f / 4, 1.0f / 8, 1.0f / 16,
    1, -1.0f / 2, 1.0f / 4, -1.0f / 8, 1.0f / 16,
    0, 0, 0, 0, 1,
};
static const float s_bt45[8 * 8] = {
    1, 0, -21.0f / 4, 0, 21.0f / 4, 0, -1, 0,
    0, -2.0f / 9, -2.0f / 9, 17.0f / 18, 17.0f / 18, -2.0f / 9, -2.0f / 9, 0,
    0, 2.0f / 9, -2.0f / 9, -17.0f / 18, 17.0f / 18, 2.0f / 9, -2.0f / 9, 0,
    0, 1.0f / 180, 1.0f / 360, -1.0f / 36, -1.0f / 72, 1.0f / 45, 1.0f / 90, 0,
    0, -1.0f / 180, 1.0f / 360, 1.0f / 36, -1.0f / 72, -1.0f / 45, 1.0f / 90, 0,
    0, 64.0f / 45, 128.0f / 45, -16.0f / 9, -32.0f / 9, 16.0f / 45, 32.0f / 45, 0,
    0, -64.0f / 45, 128.0f / 45, 16.0f / 9, -32.0f / 9, -16.0f / 45, 32.0f / 45, 0,
    0, -1, 0, 21.0f / 4, 0, -21.0f / 4, 0, 1,
};

static void s_transpose(float *out, const float *in, int rows, int cols)
{
    for (int i = 0; i < rows; i++) {
        for (int j = 0; j < cols; j++) {
            out[j * rows + i] = in[i * cols + j];
        }
    }
}

static winograd_mats s_mats(int k)
{
    winograd_mats w = {.k = k, .m = backend_winograd_tile(k)};
    w.a = w.m + k - 1;
    const float *at = k == 3 ? s_at43 : s_at45, *g = k == 3 ? s_g43 : s_g45,
                *bt = k == 3 ? s_bt43 : s_bt45;
    memcpy(w.at, at, (size_t)w.m * w.a * sizeof *at);
    memcpy(w.g, g, (size_t)w.a * k * sizeof *g);
    memcpy(w.bt, bt, (size_t)w.a * w.a * sizeof *bt);
    s_transpose(w.a_, w.at, w.m, w.a);
    s_transpose(w.gt, w.g, w.a, k);
    s_transpose(w.b_, w.bt, w.a, w.a);
    return w;
}

/* A strided grid of channel runs: position (p, q) at base + p row + q col. */
typedef struct grid {
    float *base;
    size_t row, col;
} grid;

typedef struct cgrid {
    const float *base;
    size_t row, col;
} cgrid;

/* o = coef x, or o += coef x where add: the inner loop of every transform,
 * in whole vectors of VECTOR floats (a constant trip count, so that each is
 * one or two instructions) and then the rest. */
enum { VECTOR = 16 };

static inline void s_axpy(float *restrict o, const float *restrict x, float coef, int cn,
                          bool add)
{
    int e = 0;
    if (add) {
        for (; e + VECTOR <= cn; e += VECTOR) {
            for (int v = 0; v < VECTOR; v++) {
                o[e + v] += coef * x[e + v];
            }
        }
        for (; e < cn; e++) {
            o[e] += coef * x[e];
        }
    } else {
        for (; e + VECTOR <= cn; e += VECTOR) {
            for (int v = 0; v < VECTOR; v++) {
                o[e + v] = coef * x[e + v];
            }
        }
        for (; e < cn; e++) {
            o[e] = coef * x[e];
        }
    }
}

/* out(i, j) = sum over p < lc, q < rc of L(i, p) in(p, q) R(j, q), for i <
 * lr, j < rr, each a run of cn <= CHANNEL_BLOCK floats; tmp holds lr rc
 * CHANNEL_BLOCK floats. Every row of L and R has a non-zero. Built for
 * AVX-512 and AVX2 too, the CPU choosing at load time (the transforms are
 * a third of a step with SSE2's four lanes). */
__attribute__((target_clones("avx512f", "avx2", "default")))
static void s_sandwich(grid out, const float *l, int lr, int lc, cgrid in, const float *r,
                       int rr, int rc, int cn, float *tmp)
{
    for (int i = 0; i < lr; i++) {
        for (int q = 0; q < rc; q++) {
            float *t = tmp + ((size_t)i * rc + q) * CHANNEL_BLOCK;
            bool add = false;
            for (int p = 0; p < lc; p++) {
                if (l[i * lc + p] != 0) {
                    s_axpy(t, in.base + p * in.row + q * in.col, l[i * lc + p], cn, add);
                    add = true;
                }
            }
        }
    }
    for (int i = 0; i < lr; i++) {
        for (int j = 0; j < rr; j++) {
            float *o = out.base + i * out.row + j * out.col;
            bool add = false;
            for (int q = 0; q < rc; q++) {
                if (r[j * rc + q] != 0) {
                    s_axpy(o, tmp + ((size_t)i * rc + q) * CHANNEL_BLOCK, r[j * rc + q], cn,
                           add);
                    add = true;
                }
            }
        }
    }
}

/* s_sandwich over runs of `channels` floats, a block at a time. */
static void s_sandwich_runs(grid out, const float *l, int lr, int lc, cgrid in,
                            const float *r, int rr, int rc, size_t channels, float *tmp)
{
    for (size_t c0 = 0; c0 < channels; c0 += CHANNEL_BLOCK) {
        int cn = channels - c0 < CHANNEL_BLOCK ? (int)(channels - c0) : CHANNEL_BLOCK;
        grid o = {out.base + c0, out.row, out.col};
        cgrid x = {in.base + c0, in.row, in.col};
        s_sandwich(o, l, lr, lc, x, r, rr, rc, cn, tmp);
    }
}

static float *s_scratch(size_t floats)
{
    float *p = malloc(floats * sizeof *p);
    if (!p) {
        abort();   /* as the backend's other scratch: nothing to do without it */
    }
    return p;
}

void winograd_filter(backend *b, float *u, const float *w, int c, int oc, int k)
{
    (void)b;
    winograd_mats m = s_mats(k);
    size_t run = (size_t)c * oc;
    float *tmp = s_scratch((size_t)MAX_A * MAX_A * CHANNEL_BLOCK);
    grid out = {u, (size_t)m.a * run, run};
    cgrid in = {w, (size_t)k * run, run};
    s_sandwich_runs(out, m.g, m.a, k, in, m.g, m.a, k, run, tmp);
    free(tmp);
}

void winograd_filter_grad(backend *b, float *dw, const float *du, int c, int oc, int k)
{
    (void)b;
    winograd_mats m = s_mats(k);
    size_t run = (size_t)c * oc;
    float *tmp = s_scratch((size_t)MAX_A * MAX_A * CHANNEL_BLOCK);
    grid out = {dw, (size_t)k * run, run};
    cgrid in = {du, (size_t)m.a * run, run};
    s_sandwich_runs(out, m.gt, k, m.a, in, m.gt, k, m.a, run, tmp);
    free(tmp);
}

/* One of the four tile transforms over a batch: `image` does image ni's
 * tiles; in and out are its source and destination, cs the channels of
 * its tiles' side (c for the input's, oc for the output's), ho and wo the
 * convolution's output size. */
typedef struct tile_job tile_job;
typedef void tile_image_fn(const tile_job *j, int ni, float *window, float *tmp);

struct tile_job {
    tile_image_fn *image;
    winograd_mats m;
    float *out;
    const float *in;
    int n, h, w, ho, wo, pad;
    size_t cs, tiles, per_image;   /* T, and tiles per image */
};

/* Loops over image ni's tiles by their first outputs (y0, x0). */
#define FOR_EACH_TILE(j, y0, x0)                                                  \
    for (int y0 = 0; y0 < (j)->ho; y0 += (j)->m.m)                                \
        for (int x0 = 0; x0 < (j)->wo; x0 += (j)->m.m)

/* The index of image ni's tile whose first output is (y0, x0). */
static size_t s_tile(const tile_job *j, int ni, int y0, int x0)
{
    size_t across = (size_t)((j->wo + j->m.m - 1) / j->m.m);
    return (size_t)ni * j->per_image + (size_t)(y0 / j->m.m) * across + (size_t)(x0 / j->m.m);
}

/* v = B^T d B for image ni's tiles. */
static void s_input_image(const tile_job *j, int ni, float *window, float *tmp)
{
    const int a = j->m.a, h = j->h, w = j->w;
    const size_t cs = j->cs;
    const float *image = j->in + (size_t)ni * h * w * cs;
    FOR_EACH_TILE(j, y0, x0) {
        size_t t = s_tile(j, ni, y0, x0);
        int iy0 = y0 - j->pad, ix0 = x0 - j->pad;
        cgrid src = {window, (size_t)a * cs, cs};
        if (iy0 >= 0 && ix0 >= 0 && iy0 + a <= h && ix0 + a <= w) {
            src = (cgrid){image + ((size_t)iy0 * w + (size_t)ix0) * cs, (size_t)w * cs, cs};
        } else {
            /* the window reaches into the padding: gather it, zeros outside */
            for (int p = 0; p < a; p++) {
                for (int q = 0; q < a; q++) {
                    float *dst = window + ((size_t)p * a + q) * cs;
                    int iy = iy0 + p, ix = ix0 + q;
                    if (iy < 0 || iy >= h || ix < 0 || ix >= w) {
                        memset(dst, 0, cs * sizeof *dst);
                    } else {
                        memcpy(dst, image + ((size_t)iy * w + ix) * cs, cs * sizeof *dst);
                    }
                }
            }
        }
        grid out = {j->out + t * cs, (size_t)a * j->tiles * cs, j->tiles * cs};
        s_sandwich_runs(out, j->m.bt, a, a, src, j->m.bt, a, a, cs, tmp);
    }
}

/* din = the sum of B dv B^T over image ni's tiles, each on the inputs its
 * window covers (the image's part of din zeroed first). */
static void s_input_grad_image(const tile_job *j, int ni, float *window, float *tmp)
{
    const int a = j->m.a, h = j->h, w = j->w;
    const size_t cs = j->cs;
    float *image = j->out + (size_t)ni * h * w * cs;
    memset(image, 0, (size_t)h * w * cs * sizeof *image);
    FOR_EACH_TILE(j, y0, x0) {
        size_t t = s_tile(j, ni, y0, x0);
        cgrid src = {j->in + t * cs, (size_t)a * j->tiles * cs, j->tiles * cs};
        grid out = {window, (size_t)a * cs, cs};
        s_sandwich_runs(out, j->m.b_, a, a, src, j->m.b_, a, a, cs, tmp);
        /* the window's inputs inside the image get their share */
        int iy0 = y0 - j->pad, ix0 = x0 - j->pad;
        int q0 = ix0 < 0 ? -ix0 : 0, q1 = ix0 + a > w ? w - ix0 : a;
        for (int p = 0; p < a; p++) {
            int iy = iy0 + p;
            if (iy < 0 || iy >= h || q0 >= q1) {
                continue;
            }
            float *restrict d = image + ((size_t)iy * w + (size_t)(ix0 + q0)) * cs;
            const float *restrict from = window + ((size_t)p * a + q0) * cs;
            size_t count = (size_t)(q1 - q0) * cs;
            for (size_t e = 0; e < count; e++) {
                d[e] += from[e];
            }
        }
    }
}

/* out = A^T m A for image ni's tiles, outputs past the image dropped. */
static void s_output_image(const tile_job *j, int ni, float *block, float *tmp)
{
    const int a = j->m.a, s = j->m.m, ho = j->ho, wo = j->wo;
    const size_t cs = j->cs;
    FOR_EACH_TILE(j, y0, x0) {
        size_t t = s_tile(j, ni, y0, x0);
        cgrid src = {j->in + t * cs, (size_t)a * j->tiles * cs, j->tiles * cs};
        float *first = j->out + (((size_t)ni * ho + y0) * wo + x0) * cs;
        if (y0 + s <= ho && x0 + s <= wo) {
            grid dst = {first, (size_t)wo * cs, cs};
            s_sandwich_runs(dst, j->m.at, s, a, src, j->m.at, s, a, cs, tmp);
            continue;
        }
        /* an edge tile: only its outputs inside the image are kept */
        grid dst = {block, (size_t)s * cs, cs};
        s_sandwich_runs(dst, j->m.at, s, a, src, j->m.at, s, a, cs, tmp);
        for (int i = 0; i < s && y0 + i < ho; i++) {
            for (int q = 0; q < s && x0 + q < wo; q++) {
                memcpy(first + ((size_t)i * wo + q) * cs, block + ((size_t)i * s + q) * cs,
                       cs * sizeof *block);
            }
        }
    }
}

/* m = A dY A^T for image ni's tiles, dY zero past the image. */
static void s_output_grad_image(const tile_job *j, int ni, float *block, float *tmp)
{
    const int a = j->m.a, s = j->m.m, ho = j->ho, wo = j->wo;
    const size_t cs = j->cs;
    FOR_EACH_TILE(j, y0, x0) {
        size_t t = s_tile(j, ni, y0, x0);
        const float *first = j->in + (((size_t)ni * ho + y0) * wo + x0) * cs;
        cgrid src = {first, (size_t)wo * cs, cs};
        if (y0 + s > ho || x0 + s > wo) {
            /* an edge tile: the outputs past the image have no gradient */
            for (int i = 0; i < s; i++) {
                for (int q = 0; q < s; q++) {
                    float *dst = block + ((size_t)i * s + q) * cs;
                    if (y0 + i < ho && x0 + q < wo) {
                        memcpy(dst, first + ((size_t)i * wo + q) * cs, cs * sizeof *dst);
                    } else {
                        memset(dst, 0, cs * sizeof *dst);
                    }
                }
            }
            src = (cgrid){block, (size_t)s * cs, cs};
        }
        grid dst = {j->out + t * cs, (size_t)a * j->tiles * cs, j->tiles * cs};
        s_sandwich_runs(dst, j->m.a_, a, s, src, j->m.a_, a, s, cs, tmp);
    }
}

/* Every image of a job, one after the other. Not split over threads: with
 * OpenBLAS's own threads spinning between its calls, threads of ours here
 * made a 2-thread step slower, not faster (bench_step: 1,320 samples/s
 * with the transforms on one thread, 760 with them on two). */
static void s_run(const tile_job *j)
{
    float *tmp = s_scratch((size_t)MAX_A * MAX_A * CHANNEL_BLOCK);
    float *window = s_scratch((size_t)MAX_A * MAX_A * j->cs);
    for (int ni = 0; ni < j->n; ni++) {
        j->image(j, ni, window, tmp);
    }
    free(window);
    free(tmp);
}

static tile_job s_job(tile_image_fn *image, int k, float *out, const float *in, int n, int h,
                      int w, int cs, int pad)
{
    tile_job j = {.image = image, .m = s_mats(k), .out = out, .in = in, .n = n, .h = h,
                  .w = w, .ho = h + 2 * pad - k + 1, .wo = w + 2 * pad - k + 1, .pad = pad,
                  .cs = (size_t)cs};
    j.tiles = backend_winograd_tiles(n, j.ho, j.wo, k);
    j.per_image = backend_winograd_tiles(1, j.ho, j.wo, k);
    return j;
}

void winograd_input(backend *b, float *v, const float *in, int n, int h, int w, int c, int k,
                    int pad)
{
    tile_job j = s_job(s_input_image, k, v, in, n, h, w, c, pad);
    (void)b;
    s_run(&j);
}

void winograd_input_grad(backend *b, float *din, const float *dv, int n, int h, int w, int c,
                         int k, int pad)
{
    tile_job j = s_job(s_input_grad_image, k, din, dv, n, h, w, c, pad);
    (void)b;
    s_run(&j);
}

/* The output side's jobs: h and w such that ho and wo come out (pad 0). */
void winograd_output(backend *b, float *out, const float *mm, int n, int ho, int wo, int oc,
                     int k)
{
    tile_job j = s_job(s_output_image, k, out, mm, n, ho + k - 1, wo + k - 1, oc, 0);
    (void)b;
    s_run(&j);
}

void winograd_output_grad(backend *b, float *dm, const float *dout, int n, int ho, int wo,
                          int oc, int k)
{
    tile_job j = s_job(s_output_grad_image, k, dm, dout, n, ho + k - 1, wo + k - 1, oc, 0);
    (void)b;
    s_run(&j);
}
