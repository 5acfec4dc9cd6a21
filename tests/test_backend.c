/* test_backend.c: every backend operation against a naive double-precision
 * loop, on random inputs, with outputs poisoned (NaN) beforehand so that an
 * element the operation forgot to write is caught. Written against the
 * backend table only, so that any backend can run it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/backend/backend.h"
#include "core/backend/kernels.h"
#include "core/rng.h"

static backend *s_b;
static rng s_r;

static int s_setup(void **state)
{
    (void)state;
    backend_spec spec = {.device = BACKEND_CPU, .threads = 1};
    error err = {0};
    s_b = backend_new(&spec, &err);
    s_r = rng_derive(11, RNG_DATA, 0);
    return s_b ? 0 : -1;
}

static int s_teardown(void **state)
{
    (void)state;
    backend_destroy(&s_b);
    return 0;
}

static float *s_random(size_t n)
{
    float *h = malloc(n * sizeof *h);
    for (size_t i = 0; i < n; i++) {
        h[i] = (float)rng_normal(&s_r);
    }
    return h;
}

/* A device buffer holding host values (or NaN poison when host is NULL). */
static float *s_device(const float *host, size_t n)
{
    float *d = s_b->ops->alloc(s_b, n * sizeof *d);
    float *tmp = malloc(n * sizeof *tmp);
    for (size_t i = 0; i < n; i++) {
        tmp[i] = host ? host[i] : NAN;
    }
    s_b->ops->to_device(s_b, d, tmp, n * sizeof *d);
    free(tmp);
    return d;
}

static void s_expect(const float *device, const double *want, size_t n, double tol)
{
    float *got = malloc(n * sizeof *got);
    s_b->ops->to_host(s_b, got, device, n * sizeof *got);
    for (size_t i = 0; i < n; i++) {
        double err = fabs(got[i] - want[i]) / (fabs(want[i]) + 1.0);
        if (isnan(want[i]) ? !isnan(got[i]) : !(err <= tol)) {
            fail_msg("element %zu: got %g, want %g", i, (double)got[i], want[i]);
        }
    }
    free(got);
}

/* The largest error of device against want over want's root mean square,
 * at most tol: for sums whose terms cancel, where an element's own size
 * says little of the rounding it may carry. Returns the error. */
static double s_expect_rms(const float *device, const double *want, size_t n, double tol,
                           const char *what)
{
    float *got = malloc(n * sizeof *got);
    s_b->ops->to_host(s_b, got, device, n * sizeof *got);
    double sq = 0, worst = 0;
    for (size_t i = 0; i < n; i++) {
        sq += want[i] * want[i];
    }
    double rms = sqrt(sq / (double)n);
    for (size_t i = 0; i < n; i++) {
        double err = fabs(got[i] - want[i]) / rms;
        if (!(err <= worst)) {
            worst = err;   /* NaN, an element left unwritten, lands here */
        }
        if (!(err <= tol)) {
            fail_msg("%s, element %zu: got %g, want %g (error %g of the rms %g)", what, i,
                     (double)got[i], want[i], err, rms);
        }
    }
    free(got);
    return worst;
}

static void test_gemm_all_transposes(void **state)
{
    (void)state;
    const int m = 13, n = 9, k = 17;
    for (int ta = 0; ta < 2; ta++) {
        for (int tb = 0; tb < 2; tb++) {
            for (int accumulate = 0; accumulate < 2; accumulate++) {
                float *a = s_random((size_t)m * k), *bm = s_random((size_t)k * n);
                float *c0 = s_random((size_t)m * n);
                float alpha = 0.75f, beta = accumulate ? 0.5f : 0.0f;
                double *want = malloc((size_t)m * n * sizeof *want);
                for (int i = 0; i < m; i++) {
                    for (int j = 0; j < n; j++) {
                        double s = 0;
                        for (int p = 0; p < k; p++) {
                            double av = ta ? a[p * m + i] : a[i * k + p];
                            double bv = tb ? bm[j * k + p] : bm[p * n + j];
                            s += av * bv;
                        }
                        want[i * n + j] = alpha * s + (accumulate ? beta * c0[i * n + j] : 0);
                    }
                }
                float *da = s_device(a, (size_t)m * k), *db = s_device(bm, (size_t)k * n);
                /* with beta = 0 the output starts as poison: it must be overwritten */
                float *dc = s_device(accumulate ? c0 : NULL, (size_t)m * n);
                s_b->ops->gemm(s_b, dc, da, db, ta, tb, m, n, k, alpha, beta);
                s_expect(dc, want, (size_t)m * n, 1e-5);
                s_b->ops->release(s_b, da);
                s_b->ops->release(s_b, db);
                s_b->ops->release(s_b, dc);
                free(a);
                free(bm);
                free(c0);
                free(want);
            }
        }
    }
}

/* bias_add with and without the ReLU, and bias_grad with and without its
 * mask, against double loops */
static void test_bias_add_and_grad(void **state)
{
    (void)state;
    const int rows = 7, cols = 11;
    const size_t n = (size_t)rows * cols;
    for (int relu = 0; relu < 2; relu++) {
        float *x = s_random(n), *bias = s_random((size_t)cols), *d = s_random(n);
        if (relu) {
            x[3] = NAN;   /* stays NaN, as PyTorch's relu keeps it: the loss shows it */
        }
        double want[7 * 11], want_d[7 * 11], want_grad[11] = {0};
        for (size_t i = 0; i < n; i++) {
            double v = (double)(x[i] + bias[i % cols]);
            want[i] = relu ? (v > 0 || isnan(v) ? v : 0) : v;
            want_d[i] = relu && !(want[i] > 0) ? 0 : d[i];
            want_grad[i % cols] += want_d[i];
        }
        float *dx = s_device(x, n), *db = s_device(bias, (size_t)cols);
        float *dd = s_device(d, n), *dg = s_device(NULL, (size_t)cols);
        s_b->ops->bias_add(s_b, dx, db, rows, cols, relu);
        s_expect(dx, want, n, 1e-6);
        s_b->ops->bias_grad(s_b, dg, dd, relu ? dx : NULL, rows, cols);
        s_expect(dd, want_d, n, 0);
        s_expect(dg, want_grad, (size_t)cols, 1e-6);
        float *bufs[4] = {dx, db, dd, dg};
        for (int i = 0; i < 4; i++) {
            s_b->ops->release(s_b, bufs[i]);
        }
        free(x);
        free(bias);
        free(d);
    }
}

static void test_softmax_cross_entropy(void **state)
{
    (void)state;
    const int rows = 9, cols = 10;
    float *z = s_random((size_t)rows * cols);
    z[3 * cols + 4] = 80.0f;     /* large logits must not overflow */
    z[5 * cols + 1] = -120.0f;
    int32_t labels[9];
    for (int r = 0; r < rows; r++) {
        labels[r] = (int32_t)rng_below(&s_r, (uint64_t)cols);
    }
    labels[5] = 1;               /* a label whose probability underflows */
    /* tied logits (a model of zeros): the first largest is the guess, as
     * NumPy's and PyTorch's argmax take it, so row 0 (label 0) is a hit
     * and row 1 (label 3) a miss (a mutation taking the last passed) */
    for (int c = 0; c < cols; c++) {
        z[c] = z[cols + c] = 0;
    }
    labels[0] = 0;
    labels[1] = 3;
    double probs[90], dlogits[90], loss = 0;
    int correct = 0;
    float scale = 1.0f / rows;
    for (int r = 0; r < rows; r++) {
        double mx = -INFINITY, s = 0;
        int arg = 0;
        for (int c = 0; c < cols; c++) {
            if (z[r * cols + c] > mx) {
                mx = z[r * cols + c];
                arg = c;
            }
        }
        for (int c = 0; c < cols; c++) {
            s += exp(z[r * cols + c] - mx);
        }
        for (int c = 0; c < cols; c++) {
            probs[r * cols + c] = exp(z[r * cols + c] - mx) / s;
            dlogits[r * cols + c] = scale * (probs[r * cols + c] - (c == labels[r]));
        }
        loss += log(s) - (z[r * cols + labels[r]] - mx);
        correct += arg == labels[r];
    }
    int32_t *dl = s_b->ops->alloc(s_b, sizeof labels);
    s_b->ops->to_device(s_b, dl, labels, sizeof labels);
    float *dz = s_device(z, (size_t)rows * cols), *dp = s_device(NULL, (size_t)rows * cols);
    float *dg = s_device(NULL, (size_t)rows * cols);
    double got_loss;
    int got_correct;
    s_b->ops->softmax_xent_forward(s_b, dp, &got_loss, &got_correct, dz, dl, rows, cols);
    s_expect(dp, probs, (size_t)rows * cols, 1e-6);
    assert_true(isfinite(got_loss));
    assert_true(fabs(got_loss - loss) < 1e-4 * loss);
    assert_true(loss > 120);     /* the underflowing label counts in full */
    assert_int_equal(got_correct, correct);
    s_b->ops->softmax_xent_backward(s_b, dg, dp, dl, rows, cols, scale);
    s_expect(dg, dlogits, (size_t)rows * cols, 1e-6);
    /* in place, as the models use it */
    s_b->ops->softmax_xent_forward(s_b, dz, &got_loss, &got_correct, dz, dl, rows, cols);
    s_expect(dz, probs, (size_t)rows * cols, 1e-6);
    assert_true(fabs(got_loss - loss) < 1e-4 * loss);
    s_b->ops->release(s_b, dl);
    s_b->ops->release(s_b, dz);
    s_b->ops->release(s_b, dp);
    s_b->ops->release(s_b, dg);
    free(z);
}

static void test_axpy_scale_copy(void **state)
{
    (void)state;
    const size_t n = 517;
    float *x = s_random(n), *y = s_random(n);
    double *w_axpy = malloc(n * sizeof *w_axpy), *w_scale = malloc(n * sizeof *w_scale);
    double *w_copy = malloc(n * sizeof *w_copy);
    for (size_t i = 0; i < n; i++) {
        w_axpy[i] = (double)y[i] - 0.3 * x[i];
        w_scale[i] = 2.5 * w_axpy[i];
        w_copy[i] = x[i];
    }
    float *dx = s_device(x, n), *dy = s_device(y, n), *dc = s_device(NULL, n);
    s_b->ops->axpy(s_b, dy, -0.3f, dx, n);
    s_expect(dy, w_axpy, n, 1e-6);
    s_b->ops->scale(s_b, dy, 2.5f, n);
    s_expect(dy, w_scale, n, 1e-6);
    s_b->ops->copy(s_b, dc, dx, n);
    s_expect(dc, w_copy, n, 0);
    s_b->ops->release(s_b, dx);
    s_b->ops->release(s_b, dy);
    s_b->ops->release(s_b, dc);
    free(x);
    free(y);
    free(w_axpy);
    free(w_scale);
    free(w_copy);
}

/* The input element im2col copies to col[row][j], worked out from the
 * flat indices; -1 for zero padding. */
static long s_im2col_source(size_t row, size_t j, int h, int w, int c, int k, int pad)
{
    int ho = h + 2 * pad - k + 1, wo = w + 2 * pad - k + 1;
    int ox = (int)(row % (size_t)wo), oy = (int)(row / (size_t)wo % (size_t)ho);
    int ni = (int)(row / ((size_t)wo * (size_t)ho));
    int ci = (int)(j % (size_t)c), kx = (int)(j / (size_t)c % (size_t)k);
    int ky = (int)(j / ((size_t)c * (size_t)k));
    int iy = oy + ky - pad, ix = ox + kx - pad;
    if (iy < 0 || iy >= h || ix < 0 || ix >= w) {
        return -1;
    }
    return (((long)ni * h + iy) * w + ix) * c + ci;
}

static void test_im2col_and_its_adjoint(void **state)
{
    (void)state;
    /* odd sizes, padding both "same" and none, several channels */
    const int shapes[][6] = {{2, 5, 6, 3, 3, 1}, {3, 7, 4, 2, 5, 2}, {1, 6, 6, 1, 3, 0}};
    for (size_t t = 0; t < sizeof shapes / sizeof shapes[0]; t++) {
        int n = shapes[t][0], h = shapes[t][1], w = shapes[t][2], c = shapes[t][3];
        int k = shapes[t][4], pad = shapes[t][5];
        size_t rows = (size_t)n * (h + 2 * pad - k + 1) * (w + 2 * pad - k + 1);
        size_t cols = (size_t)k * k * c, nin = (size_t)n * h * w * c;
        float *x = s_random(nin), *y = s_random(rows * cols);
        double *want = malloc(rows * cols * sizeof *want);
        /* col2im, the adjoint, sums y over the entries each input fills */
        double *want_in = calloc(nin, sizeof *want_in);
        for (size_t r = 0; r < rows; r++) {
            for (size_t j = 0; j < cols; j++) {
                long src = s_im2col_source(r, j, h, w, c, k, pad);
                want[r * cols + j] = src < 0 ? 0.0 : x[src];
                if (src >= 0) {
                    want_in[src] += y[r * cols + j];
                }
            }
        }
        float *dx = s_device(x, nin), *dcol = s_device(NULL, rows * cols);
        s_b->ops->im2col(s_b, dcol, dx, n, h, w, c, k, pad);
        s_expect(dcol, want, rows * cols, 0);
        float *dy = s_device(y, rows * cols), *din = s_device(NULL, nin);
        s_b->ops->col2im(s_b, din, dy, n, h, w, c, k, pad);
        s_expect(din, want_in, nin, 1e-6);
        s_b->ops->release(s_b, dx);
        s_b->ops->release(s_b, dcol);
        s_b->ops->release(s_b, dy);
        s_b->ops->release(s_b, din);
        free(x);
        free(y);
        free(want);
        free(want_in);
    }
}

/* A convolution through the backend's Winograd transforms and a*a GEMMs
 * (as model.c runs it) against direct double loops, forward and backward:
 * edge tiles (odd outputs), padding and none, windows inside the image,
 * channel runs longer than the CPU's block of 64. */
static void s_check_winograd(backend *b)
{
    const backend_ops *ops = b->ops;
    /* n, h, w, c, oc, k, pad */
    const int shapes[][7] = {{2, 7, 6, 3, 5, 3, 1}, {1, 9, 8, 70, 3, 5, 2},
                             {2, 6, 7, 4, 66, 5, 0}, {3, 4, 5, 2, 3, 3, 0},
                             /* windows wholly inside the image too (read in place),
                              * and ones that end one row or column past it */
                             {2, 13, 11, 17, 9, 3, 1}, {1, 14, 14, 20, 7, 5, 2},
                             {2, 12, 12, 5, 4, 3, 1}, {1, 9, 10, 6, 5, 5, 2},
                             {1, 10, 9, 6, 5, 5, 2}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int n = shapes[s][0], h = shapes[s][1], w = shapes[s][2], c = shapes[s][3];
        int oc = shapes[s][4], k = shapes[s][5], pad = shapes[s][6];
        int ho = h + 2 * pad - k + 1, wo = w + 2 * pad - k + 1;
        int a = backend_winograd_tile(k) + k - 1;
        size_t nin = (size_t)n * h * w * c, nout = (size_t)n * ho * wo * oc;
        size_t nw = (size_t)k * k * c * oc, t = backend_winograd_tiles(n, ho, wo, k);
        size_t planes = (size_t)a * a;
        float *x = s_random(nin), *wt = s_random(nw), *dy = s_random(nout);
        double *want = calloc(nout, sizeof *want), *want_dw = calloc(nw, sizeof *want_dw);
        double *want_dx = calloc(nin, sizeof *want_dx);
        for (int ni = 0; ni < n; ni++) {
            for (int oy = 0; oy < ho; oy++) {
                for (int ox = 0; ox < wo; ox++) {
                    for (int ky = 0; ky < k; ky++) {
                        for (int kx = 0; kx < k; kx++) {
                            int iy = oy + ky - pad, ix = ox + kx - pad;
                            if (iy < 0 || iy >= h || ix < 0 || ix >= w) {
                                continue;
                            }
                            for (int ci = 0; ci < c; ci++) {
                                size_t xi = (((size_t)ni * h + iy) * w + ix) * c + ci;
                                for (int o = 0; o < oc; o++) {
                                    size_t yi = (((size_t)ni * ho + oy) * wo + ox) * oc + o;
                                    size_t wi = (((size_t)ky * k + kx) * c + ci) * oc + o;
                                    want[yi] += (double)x[xi] * wt[wi];
                                    want_dw[wi] += (double)x[xi] * dy[yi];
                                    want_dx[xi] += (double)wt[wi] * dy[yi];
                                }
                            }
                        }
                    }
                }
            }
        }
        float *dx = s_device(x, nin), *dw = s_device(wt, nw), *ddy = s_device(dy, nout);
        float *u = s_device(NULL, planes * c * oc), *du = s_device(NULL, planes * c * oc);
        float *v = s_device(NULL, planes * t * c), *mm = s_device(NULL, planes * t * oc);
        float *out = s_device(NULL, nout), *gw = s_device(NULL, nw), *gx = s_device(NULL, nin);
        ops->winograd_filter(b, u, dw, c, oc, k);
        ops->winograd_input(b, v, dx, n, h, w, c, k, pad);
        for (size_t p = 0; p < planes; p++) {
            ops->gemm(b, mm + p * t * oc, v + p * t * c, u + p * c * oc, false, false,
                      (int)t, oc, c, 1.0f, 0.0f);
        }
        ops->winograd_output(b, out, mm, n, ho, wo, oc, k);
        double e_out = s_expect_rms(out, want, nout, 1e-4, "forward");
        ops->winograd_output_grad(b, mm, ddy, n, ho, wo, oc, k);
        for (size_t p = 0; p < planes; p++) {
            ops->gemm(b, du + p * c * oc, v + p * t * c, mm + p * t * oc, true, false, c,
                      oc, (int)t, 1.0f, 0.0f);
            ops->gemm(b, v + p * t * c, mm + p * t * oc, u + p * c * oc, false, true,
                      (int)t, c, oc, 1.0f, 0.0f);
        }
        ops->winograd_filter_grad(b, gw, du, c, oc, k);
        ops->winograd_input_grad(b, gx, v, n, h, w, c, k, pad);
        double e_dw = s_expect_rms(gw, want_dw, nw, 1e-4, "weight gradient");
        double e_dx = s_expect_rms(gx, want_dx, nin, 1e-4, "input gradient");
        print_message("k = %d, %d -> %d channels: errors over the rms %.2g (forward), "
                      "%.2g (weights), %.2g (inputs)\n", k, c, oc, e_out, e_dw, e_dx);
        float *bufs[] = {dx, dw, ddy, u, du, v, mm, out, gw, gx};
        for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) {
            ops->release(s_b, bufs[i]);
        }
        free(x);
        free(wt);
        free(dy);
        free(want);
        free(want_dw);
        free(want_dx);
    }
}

static void test_winograd_matches_direct_convolution(void **state)
{
    (void)state;
    if (!s_b->ops->winograd_input) {
        skip();
    }
    s_check_winograd(s_b);
}

/* 7 x 5 with windows of 2 (the last row and column belong to no window),
 * c channels. */
static void s_check_maxpool(int c)
{
    const int n = 2, h = 7, w = 5, s = 2, ho = h / s, wo = w / s;
    size_t nin = (size_t)n * h * w * c, nout = (size_t)n * ho * wo * c;
    float *x = s_random(nin), *dout = s_random(nout);
    /* a tie: the first maximum in scan order gets the gradient */
    x[((0 * h + 2) * w + 2) * c + 1] = 9.0f;
    x[((0 * h + 3) * w + 3) * c + 1] = 9.0f;
    /* a NaN second in its window is its maximum, as in PyTorch (it was
     * passed over, and a diverged layer looked fine after the pooling) */
    x[((1 * h + 0) * w + 1) * c + 0] = NAN;
    double *want = malloc(nout * sizeof *want), *want_in = calloc(nin, sizeof *want_in);
    for (int ni = 0; ni < n; ni++) {
        for (int oy = 0; oy < ho; oy++) {
            for (int ox = 0; ox < wo; ox++) {
                for (int ci = 0; ci < c; ci++) {
                    size_t best = 0;
                    double mx = -INFINITY;
                    for (int dy = 0; dy < s; dy++) {
                        for (int dx = 0; dx < s; dx++) {
                            size_t i = (((size_t)ni * h + oy * s + dy) * w + ox * s + dx) * c + ci;
                            if (x[i] > mx || isnan(x[i])) {
                                mx = x[i];
                                best = i;
                            }
                        }
                    }
                    size_t o = (((size_t)ni * ho + oy) * wo + ox) * c + ci;
                    want[o] = mx;
                    want_in[best] = dout[o];
                }
            }
        }
    }
    assert_true(want_in[((0 * h + 2) * w + 2) * c + 1] != 0);
    assert_true(want_in[((0 * h + 3) * w + 3) * c + 1] == 0);
    float *dx = s_device(x, nin), *dy = s_device(NULL, nout);
    float *dd = s_device(dout, nout), *din = s_device(NULL, nin);
    s_b->ops->maxpool_forward(s_b, dy, dx, n, h, w, c, s);
    s_expect(dy, want, nout, 0);
    s_b->ops->maxpool_backward(s_b, din, dd, dx, n, h, w, c, s);
    s_expect(din, want_in, nin, 0);
    float *bufs[4] = {dx, dy, dd, din};
    for (int i = 0; i < 4; i++) {
        s_b->ops->release(s_b, bufs[i]);
    }
    free(x);
    free(dout);
    free(want);
    free(want_in);
}

static void test_maxpool_forward_backward(void **state)
{
    (void)state;
    s_check_maxpool(3);
    s_check_maxpool(70);   /* more channels than the CPU kernel takes at once */
}

static void test_dropout_masks(void **state)
{
    (void)state;
    const size_t n = 200000;
    const float rate = 0.4f;
    float *x = s_random(n);
    for (size_t i = 0; i < n; i++) {
        x[i] = fabsf(x[i]) + 0.1f;     /* never 0, so a 0 output means dropped */
    }
    float *dx = s_device(x, n), *dy = s_device(NULL, n), *dz = s_device(NULL, n);
    s_b->ops->dropout(s_b, dy, dx, n, rate, 1234);
    s_b->ops->dropout(s_b, dz, dx, n, rate, 1235);
    float *y = malloc(n * sizeof *y), *z = malloc(n * sizeof *z);
    s_b->ops->to_host(s_b, y, dy, n * sizeof *y);
    s_b->ops->to_host(s_b, z, dz, n * sizeof *z);
    size_t dropped = 0, both = 0;
    for (size_t i = 0; i < n; i++) {
        if (y[i] == 0.0f) {
            dropped++;
            both += z[i] == 0.0f;
        } else if (fabsf(y[i] - x[i] / (1.0f - rate)) > 1e-6f * y[i]) {
            fail_msg("element %zu kept as %g, want %g", i, (double)y[i],
                     (double)(x[i] / (1.0f - rate)));
        }
    }
    /* the rate, within 5 standard deviations; the next seed's mask is
     * independent (both dropped: rate^2 of the elements) */
    double sd = sqrt(n * rate * (1 - rate));
    assert_true(fabs((double)dropped - n * rate) < 5 * sd);
    assert_true(fabs((double)both - n * rate * rate) < 5 * sqrt(n * rate * rate));
    /* in place, and the backward call (the same mask) on a gradient */
    s_b->ops->dropout(s_b, dx, dx, n, rate, 1234);
    s_b->ops->to_host(s_b, z, dx, n * sizeof *z);
    assert_memory_equal(y, z, n * sizeof *y);
    free(x);
    free(y);
    free(z);
    s_b->ops->release(s_b, dx);
    s_b->ops->release(s_b, dy);
    s_b->ops->release(s_b, dz);
}

/* The CUDA kernels' index walks divide through kernel_divide: it must be
 * floor division for every dividend below the limit, over every small
 * divisor and those beside each power of two, where the multiplier is
 * tightest; past 2^31 it must divide plainly. */
static void test_divider_is_exact_division(void **state)
{
    (void)state;
    uint64_t divisors[3000 + 3 * 31 + 2];
    int nd = 0;
    for (uint64_t d = 1; d <= 3000; d++) {
        divisors[nd++] = d;
    }
    for (int k = 2; k <= 31; k++) {
        divisors[nd++] = (1ull << k) - 1;
        divisors[nd++] = 1ull << k;
        divisors[nd++] = (1ull << k) + 1;
    }
    divisors[nd++] = 800;    /* an im2col row: 5 x 5 x 32 */
    divisors[nd++] = 3136;   /* a pooled 7 x 7 x 64 image */
    const uint64_t limit = 1ull << 31;
    for (int i = 0; i < nd; i++) {
        uint64_t d = divisors[i];
        kernel_divider v = kernel_divider_of(d, limit);
        assert_int_equal(v.fast, d < limit);
        uint64_t edges[] = {0, 1, d - 1, d, d + 1, limit - 1, limit - 1 - d,
                            (limit - 1) / d * d, (limit - 1) / d * d - 1};
        for (size_t e = 0; e < sizeof edges / sizeof edges[0]; e++) {
            if (edges[e] < limit && kernel_divide(v, edges[e]) != edges[e] / d) {
                fail_msg("%llu / %llu gave %llu", (unsigned long long)edges[e],
                         (unsigned long long)d, (unsigned long long)kernel_divide(v, edges[e]));
            }
        }
        for (int r = 0; r < 2000; r++) {
            uint64_t n = rng_below(&s_r, limit);
            if (kernel_divide(v, n) != n / d) {
                fail_msg("%llu / %llu gave %llu", (unsigned long long)n,
                         (unsigned long long)d, (unsigned long long)kernel_divide(v, n));
            }
        }
    }
    /* dividends that may pass 2^31: plain division, right for any */
    kernel_divider big = kernel_divider_of(7, limit + 1);
    assert_false(big.fast);
    assert_int_equal(kernel_divide(big, 1ull << 40), (1ull << 40) / 7);
}

static void test_host_alloc_is_zeroed_and_copies(void **state)
{
    (void)state;
    const size_t n = 300;
    float *h = s_b->ops->host_alloc(s_b, n * sizeof *h);
    assert_non_null(h);
    for (size_t i = 0; i < n; i++) {
        assert_true(h[i] == 0.0f);
        h[i] = (float)i;
    }
    double *want = malloc(n * sizeof *want);
    for (size_t i = 0; i < n; i++) {
        want[i] = (double)i;
    }
    float *d = s_device(NULL, n);
    s_b->ops->to_device(s_b, d, h, n * sizeof *h);
    s_expect(d, want, n, 0);
    s_b->ops->release(s_b, d);
    s_b->ops->host_release(s_b, h);
    free(want);
}

/* With every GPU hidden (before this process's first CUDA call), cuda is a
 * usage error whether or not the build has the CUDA backend, and auto
 * falls back to the CPU. */
static void test_cuda_without_a_gpu(void **state)
{
    (void)state;
    setenv("CUDA_VISIBLE_DEVICES", "", 1);
    backend_spec spec = {0};
    error err = {0};
    config *c = config_parse_string("[model]\ntype = mlp\n[backend]\ndevice = cuda\n",
                                    "gpu.ini", &err);
    assert_non_null(c);
    assert_int_equal(backend_spec_configure(&spec, c, &err), 0);
    assert_int_equal(spec.device, BACKEND_CUDA);
    assert_int_equal(backend_check(&spec, c, &err), -1);
    assert_int_equal(err.status, ERROR_USAGE);
    /* the config's line, as every other config error names it */
    assert_non_null(strstr(err.msg, "gpu.ini:4: [backend] device"));
    config_destroy(&c);
    err = (error){0};
    assert_null(backend_new(&spec, &err));
    assert_int_equal(err.status, ERROR_USAGE);
    assert_non_null(strstr(err.msg, "backend.device = cuda"));
    spec.device = BACKEND_AUTO;
    backend *b = backend_new(&spec, &err);
    assert_non_null(b);
    assert_string_equal(backend_describe(b), "cpu");
    assert_true(b->ops == &backend_cpu_ops);
    backend_destroy(&b);
    assert_null(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemm_all_transposes),
        cmocka_unit_test(test_bias_add_and_grad),
        cmocka_unit_test(test_softmax_cross_entropy),
        cmocka_unit_test(test_axpy_scale_copy),
        cmocka_unit_test(test_im2col_and_its_adjoint),
        cmocka_unit_test(test_winograd_matches_direct_convolution),
        cmocka_unit_test(test_maxpool_forward_backward),
        cmocka_unit_test(test_dropout_masks),
        cmocka_unit_test(test_divider_is_exact_division),
        cmocka_unit_test(test_host_alloc_is_zeroed_and_copies),
        cmocka_unit_test(test_cuda_without_a_gpu),
    };
    return cmocka_run_group_tests(tests, s_setup, s_teardown);
}
