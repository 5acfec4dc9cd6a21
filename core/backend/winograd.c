/* winograd.c: Winograd F(2 x 2, k x k) transforms on the CPU (the
 * contract is backend.h's, the matrices' source winograd.h's).
 *
 * Every transform is one "sandwich" L X R^T of small constant matrices
 * around an a x a (or 2 x 2, or k x k) grid of channel runs: the grid's
 * positions are strided in memory (an image's rows, the a*a planes of v
 * and m), each position a run of contiguous channels, so the inner loops
 * go along channels and vectorize, and the matrices' zeros are skipped. */
#include "core/backend/winograd.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_A = 6, CHANNEL_BLOCK = 64 };

/* One kernel size's matrices, row-major, and their transposes. */
typedef struct winograd_mats {
    int k, a;
    float at[2 * MAX_A], a_[MAX_A * 2];        /* A^T (2 x a), A (a x 2) */
    float g[MAX_A * 5], gt[5 * MAX_A];          /* G (a x k), G^T (k x a) */
    float bt[MAX_A * MAX_A], b_[MAX_A * MAX_A]; /* B^T (a x a), B (a x a) */
} winograd_mats;

static const float s_at3[2 * 4] = {1, 1, 1, 0, 0, 1, -1, 1};
static const float s_g3[4 * 3] = {1, 0, 0, 1, 1, 1, 1, -1, 1, 0, 0, 1};
static const float s_bt3[4 * 4] = {
    1, 0, -1, 0, 0, 0.5f, 0.5f, 0, 0, -0.5f, 0.5f, 0, 0, -1, 0, 1,
};
static const float s_at5[2 * 6] = {1, 1, 1, 1, 1, 0, 0, 1, -1, 2, -2, 1};
static const float s_g5[6 * 5] = {
    1, 0, 0, 0, 0,
    1, 1, 1, 1, 1,
    1, -1, 1, -1, 1,
    1, 2, 4, 8, 16,
    1, -2, 4, -8, 16,
    0, 0, 0, 0, 1,
};
static const float s_bt5[6 * 6] = {
    1, 0, -5.0f / 4, 0, 1.0f / 4, 0,
    0, 2.0f / 3, 2.0f / 3, -1.0f / 6, -1.0f / 6, 0,
    0, -2.0f / 3, 2.0f / 3, 1.0f / 6, -1.0f / 6, 0,
    0, -1.0f / 12, -1.0f / 24, 1.0f / 12, 1.0f / 24, 0,
    0, 1.0f / 12, -1.0f / 24, -1.0f / 12, 1.0f / 24, 0,
    0, 4, 0, -5, 0, 1,
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
    winograd_mats m = {.k = k, .a = k + 1};
    const float *at = k == 3 ? s_at3 : s_at5, *g = k == 3 ? s_g3 : s_g5,
                *bt = k == 3 ? s_bt3 : s_bt5;
    memcpy(m.at, at, (size_t)2 * m.a * sizeof *at);
    memcpy(m.g, g, (size_t)m.a * k * sizeof *g);
    memcpy(m.bt, bt, (size_t)m.a * m.a * sizeof *bt);
    s_transpose(m.a_, m.at, 2, m.a);
    s_transpose(m.gt, m.g, m.a, k);
    s_transpose(m.b_, m.bt, m.a, m.a);
    return m;
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

/* Loops over every tile t: its image ni and its first output (y0, x0). */
#define FOR_EACH_TILE(n, ho, wo, t, ni, y0, x0)                                   \
    for (int ni = 0, t = 0; ni < (n); ni++)                                       \
        for (int y0 = 0; y0 < (ho); y0 += 2)                                      \
            for (int x0 = 0; x0 < (wo); x0 += 2, t++)

void winograd_input(backend *b, float *v, const float *in, int n, int h, int w, int c, int k, int pad)
{
    (void)b;
    winograd_mats m = s_mats(k);
    const int a = m.a, ho = h + 2 * pad - k + 1, wo = w + 2 * pad - k + 1;
    const size_t tiles = backend_winograd_tiles(n, ho, wo), cs = (size_t)c;
    float *tmp = s_scratch((size_t)MAX_A * MAX_A * CHANNEL_BLOCK);
    float *window = s_scratch((size_t)a * a * cs);
    FOR_EACH_TILE(n, ho, wo, t, ni, y0, x0) {
        int iy0 = y0 - pad, ix0 = x0 - pad;
        const float *image = in + (size_t)ni * h * w * cs;
        cgrid src = {image + ((size_t)iy0 * w + ix0) * cs, (size_t)w * cs, cs};
        if (iy0 < 0 || ix0 < 0 || iy0 + a > h || ix0 + a > w) {
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
            src = (cgrid){window, (size_t)a * cs, cs};
        }
        grid out = {v + (size_t)t * cs, (size_t)a * tiles * cs, tiles * cs};
        s_sandwich_runs(out, m.bt, a, a, src, m.bt, a, a, cs, tmp);
    }
    free(window);
    free(tmp);
}

void winograd_input_grad(backend *b, float *din, const float *dv, int n, int h, int w, int c, int k,
                         int pad)
{
    (void)b;
    winograd_mats m = s_mats(k);
    const int a = m.a, ho = h + 2 * pad - k + 1, wo = w + 2 * pad - k + 1;
    const size_t tiles = backend_winograd_tiles(n, ho, wo), cs = (size_t)c;
    float *tmp = s_scratch((size_t)MAX_A * MAX_A * CHANNEL_BLOCK);
    float *window = s_scratch((size_t)a * a * cs);
    memset(din, 0, (size_t)n * h * w * cs * sizeof *din);
    FOR_EACH_TILE(n, ho, wo, t, ni, y0, x0) {
        cgrid src = {dv + (size_t)t * cs, (size_t)a * tiles * cs, tiles * cs};
        grid out = {window, (size_t)a * cs, cs};
        s_sandwich_runs(out, m.b_, a, a, src, m.b_, a, a, cs, tmp);
        /* the window's inputs inside the image get their share */
        int iy0 = y0 - pad, ix0 = x0 - pad;
        int q0 = ix0 < 0 ? -ix0 : 0, q1 = ix0 + a > w ? w - ix0 : a;
        for (int p = 0; p < a; p++) {
            int iy = iy0 + p;
            if (iy < 0 || iy >= h || q0 >= q1) {
                continue;
            }
            float *restrict d = din + (((size_t)ni * h + iy) * w + (size_t)(ix0 + q0)) * cs;
            const float *restrict s = window + ((size_t)p * a + q0) * cs;
            size_t count = (size_t)(q1 - q0) * cs;
            for (size_t e = 0; e < count; e++) {
                d[e] += s[e];
            }
        }
    }
    free(window);
    free(tmp);
}

void winograd_output(backend *b, float *out, const float *mm, int n, int ho, int wo, int oc, int k)
{
    (void)b;
    winograd_mats m = s_mats(k);
    const int a = m.a;
    const size_t tiles = backend_winograd_tiles(n, ho, wo), cs = (size_t)oc;
    float *tmp = s_scratch((size_t)MAX_A * MAX_A * CHANNEL_BLOCK);
    float block[4 * CHANNEL_BLOCK];
    FOR_EACH_TILE(n, ho, wo, t, ni, y0, x0) {
        cgrid src = {mm + (size_t)t * cs, (size_t)a * tiles * cs, tiles * cs};
        float *first = out + (((size_t)ni * ho + y0) * wo + x0) * cs;
        if (y0 + 2 <= ho && x0 + 2 <= wo) {
            grid dst = {first, (size_t)wo * cs, cs};
            s_sandwich_runs(dst, m.at, 2, a, src, m.at, 2, a, cs, tmp);
            continue;
        }
        /* an edge tile: only its outputs inside the image are kept */
        for (size_t c0 = 0; c0 < cs; c0 += CHANNEL_BLOCK) {
            int cn = cs - c0 < CHANNEL_BLOCK ? (int)(cs - c0) : CHANNEL_BLOCK;
            cgrid x = {src.base + c0, src.row, src.col};
            s_sandwich((grid){block, 2 * CHANNEL_BLOCK, CHANNEL_BLOCK}, m.at, 2, a, x, m.at,
                       2, a, cn, tmp);
            for (int i = 0; i < 2 && y0 + i < ho; i++) {
                for (int j = 0; j < 2 && x0 + j < wo; j++) {
                    memcpy(first + ((size_t)i * wo + j) * cs + c0,
                           block + (i * 2 + j) * CHANNEL_BLOCK, (size_t)cn * sizeof *block);
                }
            }
        }
    }
    free(tmp);
}

void winograd_output_grad(backend *b, float *dm, const float *dout, int n, int ho, int wo, int oc,
                          int k)
{
    (void)b;
    winograd_mats m = s_mats(k);
    const int a = m.a;
    const size_t tiles = backend_winograd_tiles(n, ho, wo), cs = (size_t)oc;
    float *tmp = s_scratch((size_t)MAX_A * MAX_A * CHANNEL_BLOCK);
    float *block = s_scratch(4 * cs);
    FOR_EACH_TILE(n, ho, wo, t, ni, y0, x0) {
        const float *first = dout + (((size_t)ni * ho + y0) * wo + x0) * cs;
        cgrid src = {first, (size_t)wo * cs, cs};
        if (y0 + 2 > ho || x0 + 2 > wo) {
            /* an edge tile: the outputs past the image have no gradient */
            for (int i = 0; i < 2; i++) {
                for (int j = 0; j < 2; j++) {
                    float *dst = block + ((size_t)i * 2 + j) * cs;
                    if (y0 + i < ho && x0 + j < wo) {
                        memcpy(dst, first + ((size_t)i * wo + j) * cs, cs * sizeof *dst);
                    } else {
                        memset(dst, 0, cs * sizeof *dst);
                    }
                }
            }
            src = (cgrid){block, 2 * cs, cs};
        }
        grid dst = {dm + (size_t)t * cs, (size_t)a * tiles * cs, tiles * cs};
        s_sandwich_runs(dst, m.a_, a, 2, src, m.a_, a, 2, cs, tmp);
    }
    free(block);
    free(tmp);
}
