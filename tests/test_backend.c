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
        if (!(err <= tol)) {
            fail_msg("element %zu: got %g, want %g", i, (double)got[i], want[i]);
        }
    }
    free(got);
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

static void test_bias_add_and_grad(void **state)
{
    (void)state;
    const int rows = 7, cols = 11;
    float *x = s_random((size_t)rows * cols), *bias = s_random((size_t)cols);
    double want[7 * 11], want_grad[11] = {0};
    for (int r = 0; r < rows; r++) {
        for (int c = 0; c < cols; c++) {
            want[r * cols + c] = (double)x[r * cols + c] + bias[c];
            want_grad[c] += x[r * cols + c];
        }
    }
    float *dx = s_device(x, (size_t)rows * cols), *db = s_device(bias, (size_t)cols);
    float *dg = s_device(NULL, (size_t)cols);
    s_b->ops->bias_grad(s_b, dg, dx, rows, cols);
    s_expect(dg, want_grad, (size_t)cols, 1e-6);
    s_b->ops->bias_add(s_b, dx, db, rows, cols);
    s_expect(dx, want, (size_t)rows * cols, 1e-6);
    s_b->ops->release(s_b, dx);
    s_b->ops->release(s_b, db);
    s_b->ops->release(s_b, dg);
    free(x);
    free(bias);
}

static void test_relu_forward_backward(void **state)
{
    (void)state;
    const size_t n = 1001;
    float *x = s_random(n), *dout = s_random(n);
    double *fwd = malloc(n * sizeof *fwd), *bwd = malloc(n * sizeof *bwd);
    for (size_t i = 0; i < n; i++) {
        fwd[i] = x[i] > 0 ? x[i] : 0;
        bwd[i] = x[i] > 0 ? dout[i] : 0;
    }
    float *dx = s_device(x, n), *dy = s_device(NULL, n), *dd = s_device(dout, n);
    float *dgrad = s_device(NULL, n);
    s_b->ops->relu_forward(s_b, dy, dx, n);
    s_expect(dy, fwd, n, 0);
    s_b->ops->relu_backward(s_b, dgrad, dd, dy, n);
    s_expect(dgrad, bwd, n, 0);
    s_b->ops->relu_forward(s_b, dx, dx, n);    /* in place */
    s_expect(dx, fwd, n, 0);
    float *bufs[4] = {dx, dy, dd, dgrad};
    for (int i = 0; i < 4; i++) {
        s_b->ops->release(s_b, bufs[i]);
    }
    free(x);
    free(dout);
    free(fwd);
    free(bwd);
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

static void test_cuda_without_build_is_a_usage_error(void **state)
{
    (void)state;
    backend_spec spec = {.device = BACKEND_CUDA};
    error err = {0};
    assert_null(backend_new(&spec, &err));
    assert_int_equal(err.status, ERROR_USAGE);
    assert_non_null(strstr(err.msg, "cuda"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemm_all_transposes),
        cmocka_unit_test(test_bias_add_and_grad),
        cmocka_unit_test(test_relu_forward_backward),
        cmocka_unit_test(test_softmax_cross_entropy),
        cmocka_unit_test(test_axpy_scale_copy),
        cmocka_unit_test(test_cuda_without_build_is_a_usage_error),
    };
    return cmocka_run_group_tests(tests, s_setup, s_teardown);
}
