/* test_model.c: every model's gradients against central finite differences,
 * the parameter layout, seeded initialisation and evaluation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/model.h"
#include "core/rng.h"

static backend *s_b;

static int s_setup(void **state)
{
    (void)state;
    backend_spec spec = {.device = BACKEND_CPU, .threads = 1};
    error err = {0};
    s_b = backend_new(&spec, &err);
    return s_b ? 0 : -1;
}

static int s_teardown(void **state)
{
    (void)state;
    backend_destroy(&s_b);
    return 0;
}

static model *s_model(int type, int inputs, int classes, const long *hidden, int nh)
{
    model_spec spec = {.type = type, .hidden_count = nh, .init = INIT_HE};
    if (nh > 0) {
        memcpy(spec.hidden, hidden, (size_t)nh * sizeof *hidden);
    }
    error err = {0};
    model *m = model_new(&spec, s_b, inputs, classes, &err);
    assert_non_null(m);
    return m;
}

static void s_check_gradient(model *m, int batch, double h)
{
    rng r = rng_derive(4, RNG_DATA, 0);
    int in = m->inputs, classes = m->classes;
    float *x = malloc((size_t)batch * in * sizeof *x);
    int32_t *y = malloc((size_t)batch * sizeof *y);
    for (int i = 0; i < batch * in; i++) {
        x[i] = (float)rng_normal(&r);
    }
    for (int i = 0; i < batch; i++) {
        float target = (float)rng_normal(&r);   /* linear: a target's bits */
        y[i] = m->spec.type == MODEL_LINEAR ? 0 : (int32_t)rng_below(&r, (uint64_t)classes);
        if (m->spec.type == MODEL_LINEAR) {
            memcpy(&y[i], &target, sizeof target);
        }
    }
    float *params = malloc(m->nparams * sizeof *params);
    float *grad = malloc(m->nparams * sizeof *grad);
    float *scratch = malloc(m->nparams * sizeof *scratch);
    model_init_params(m, params, 8);
    /* non-zero biases, so their gradients are exercised away from 0 */
    for (size_t i = 0; i < m->nparams; i++) {
        params[i] += 0.1f * (float)rng_normal(&r);
    }
    for (size_t i = 0; i < m->nparams; i++) {
        grad[i] = NAN;   /* every element must be written */
    }
    /* the same dropout masks in every call: rewind the call count */
    m->dropout_step = 0;
    float loss = model_gradient(m, grad, params, x, y, batch);
    assert_true(isfinite(loss) && loss > 0);
    int checked = 0;
    for (size_t i = 0; i < m->nparams; i++) {
        assert_true(isfinite(grad[i]));
        float saved = params[i];
        params[i] = saved + (float)h;
        m->dropout_step = 0;
        double up = model_gradient(m, scratch, params, x, y, batch);
        params[i] = saved - (float)h;
        m->dropout_step = 0;
        double down = model_gradient(m, scratch, params, x, y, batch);
        params[i] = saved;
        double fd = (up - down) / (2 * h);
        double tol = 2e-2 * fmax(fabs(fd), fabs(grad[i])) + 2e-3;
        if (fabs(fd - grad[i]) > tol) {
            fail_msg("parameter %zu: analytic %g, finite difference %g", i,
                     (double)grad[i], fd);
        }
        checked++;
    }
    assert_int_equal(checked, (int)m->nparams);
    free(x);
    free(y);
    free(params);
    free(grad);
    free(scratch);
}

static void test_softmax_gradient_matches_finite_differences(void **state)
{
    (void)state;
    model *m = s_model(MODEL_SOFTMAX, 6, 4, NULL, 0);
    assert_int_equal(m->nparams, 6 * 4 + 4);
    s_check_gradient(m, 5, 1e-2);
    model_destroy(&m);
}

static void test_linear_gradient_matches_finite_differences(void **state)
{
    (void)state;
    model *m = s_model(MODEL_LINEAR, 6, 1, NULL, 0);
    assert_int_equal(m->nparams, 6 + 1);
    s_check_gradient(m, 5, 1e-2);
    model_destroy(&m);
}

/* Least squares: the loss is the mean of (x.w + b - t)^2 / 2, computed here
 * by hand; evaluation has no accuracy; gradient descent on regression data
 * comes down to the noise's floor (0.1^2 / 2) on the test set; and the
 * linear model takes regression data only, and regression data only it. */
static void test_least_squares(void **state)
{
    (void)state;
    dataset d, t;
    error err = {0};
    assert_int_equal(dataset_regression(&d, &t, 2000, 500, 8, 0.1, 3, &err), 0);
    assert_int_equal(d.classes, 1);
    model *m = s_model(MODEL_LINEAR, 8, 1, NULL, 0);
    float *params = malloc(m->nparams * sizeof *params);
    float *grad = malloc(m->nparams * sizeof *grad);
    model_init_params(m, params, 1);
    double by_hand = 0;
    for (int i = 0; i < t.n; i++) {
        double out = params[8];
        for (int j = 0; j < 8; j++) {
            out += (double)t.x[i * 8 + j] * params[j];
        }
        double r = out - data_target(&t, i);
        by_hand += r * r / 2;
    }
    by_hand /= t.n;
    double loss, acc;
    model_evaluate(m, &loss, &acc, params, &t, 64);
    assert_true(fabs(loss - by_hand) < 1e-5 * by_hand);
    assert_true(isnan(acc));
    float train = model_gradient(m, grad, params, t.x, t.y, t.n);
    assert_true(fabs(train - loss) < 1e-5 * loss);
    for (int step = 0; step < 500; step++) {
        model_gradient(m, grad, params, d.x, d.y, d.n);
        for (size_t i = 0; i < m->nparams; i++) {
            params[i] -= 0.5f * grad[i];
        }
    }
    model_evaluate(m, &loss, &acc, params, &t, 64);
    assert_true(loss > 0.0035 && loss < 0.0065);
    size_t n;
    model_spec linear = {.type = MODEL_LINEAR}, softmax = {.type = MODEL_SOFTMAX};
    assert_int_equal(model_check(&linear, 8, 10, &n, &err), -1);
    assert_non_null(strstr(err.msg, "regression"));
    assert_int_equal(model_check(&softmax, 8, 1, &n, &err), -1);
    assert_non_null(strstr(err.msg, "linear"));
    free(params);
    free(grad);
    model_destroy(&m);
    dataset_free(&d);
    dataset_free(&t);
}

static void test_mlp_gradient_matches_finite_differences(void **state)
{
    (void)state;
    const long hidden[2] = {7, 5};
    model *m = s_model(MODEL_MLP, 6, 3, hidden, 2);
    assert_int_equal(m->nparams, 6 * 7 + 7 + 7 * 5 + 5 + 5 * 3 + 3);
    s_check_gradient(m, 4, 1e-2);
    /* a larger batch after a smaller one regrows the scratch space */
    s_check_gradient(m, 9, 1e-2);
    model_destroy(&m);
}

/* A small cnn on backend b: 6 x 6 x 2 images, conv k x k x c1, pool 2,
 * conv k x k x c2, pool 2, dense 6 with dropout, dense 3. */
static model *s_cnn(backend *b, long c1, long c2, int k, double dropout)
{
    model_spec spec = {.type = MODEL_CNN, .conv_count = 2, .channels = {c1, c2},
                       .kernel = k, .pool = 2, .hidden_count = 1, .hidden = {6},
                       .image_count = 3, .image = {6, 6, 2}, .init = INIT_HE,
                       .dropout = dropout};
    error err = {0};
    model *m = model_new(&spec, b, 72, 3, &err);
    assert_non_null(m);
    return m;
}

static model *s_small_cnn(double dropout)
{
    return s_cnn(s_b, 3, 4, 3, dropout);
}

static void test_cnn_gradient_matches_finite_differences(void **state)
{
    (void)state;
    for (int with_dropout = 0; with_dropout < 2; with_dropout++) {
        model *m = s_small_cnn(with_dropout ? 0.5 : 0);
        model_seed_dropout(m, 77, 0);
        assert_int_equal(m->layers, 6);
        assert_int_equal(m->layer[3].oh, 1);      /* 6 -> 3 -> 1 after the pools */
        assert_int_equal(m->nparams, (3 * 3 * 2) * 3 + 3 + (3 * 3 * 3) * 4 + 4 + 4 * 6 + 6 +
                                         6 * 3 + 3);
        /* a small step: pooling and relu kinks lie closer than in the mlp */
        s_check_gradient(m, 3, 2e-4);
        model_destroy(&m);
    }
}

/* A cnn whose second convolution (8 input channels, 5 x 5 on 3 x 3: edge
 * tiles only) goes through Winograd's transforms on backend b. */
static model *s_winograd_cnn(backend *b)
{
    return s_cnn(b, 8, 4, 5, 0);
}

/* backend.conv = winograd (the default) computes the gradient of the same
 * function as im2col: against finite differences, and against im2col's
 * loss and gradient to float rounding. */
static void test_winograd_convolution_gradient(void **state)
{
    (void)state;
    model *m = s_winograd_cnn(s_b);
    backend_spec spec = {.device = BACKEND_CPU, .threads = 1, .conv = BACKEND_CONV_IM2COL};
    error err = {0};
    backend *plain = backend_new(&spec, &err);
    assert_non_null(plain);
    model *ref = s_winograd_cnn(plain);
    /* a larger step than im2col's: the transforms' rounding (a few ulps of
     * the loss) is not smooth in the parameters */
    s_check_gradient(m, 3, 2e-3);
    float *params = malloc(m->nparams * sizeof *params);
    float *g1 = malloc(m->nparams * sizeof *g1), *g2 = malloc(m->nparams * sizeof *g2);
    model_init_params(m, params, 5);
    const int batch = 5;
    float x[5 * 72];
    int32_t y[5];
    rng r = rng_derive(9, RNG_DATA, 0);
    for (int i = 0; i < batch * 72; i++) {
        x[i] = (float)rng_normal(&r);
    }
    for (int i = 0; i < batch; i++) {
        y[i] = (int32_t)rng_below(&r, 3);
    }
    float l1 = model_gradient(m, g1, params, x, y, batch);
    float l2 = model_gradient(ref, g2, params, x, y, batch);
    assert_float_equal(l1, l2, 1e-5 * fabs(l2));
    int differ = 0;
    for (size_t i = 0; i < m->nparams; i++) {
        assert_float_equal(g1[i], g2[i], 1e-4 * fabs(g2[i]) + 1e-6);
        differ += g1[i] != g2[i];
    }
    assert_true(differ > 0);   /* two computations, not one path taken twice */
    free(params);
    free(g1);
    free(g2);
    model_destroy(&m);
    model_destroy(&ref);
    backend_destroy(&plain);
}

/* Dropout acts in training only, with a new mask each call. */
static void test_dropout_only_in_training(void **state)
{
    (void)state;
    model *with = s_small_cnn(0.5), *without = s_small_cnn(0);
    float *params = malloc(with->nparams * sizeof *params);
    float *g1 = malloc(with->nparams * sizeof *g1), *g2 = malloc(with->nparams * sizeof *g2);
    model_init_params(with, params, 3);
    dataset d = {.n = 20, .dim = 72, .classes = 3};
    d.x = malloc((size_t)d.n * 72 * sizeof *d.x);
    d.y = malloc((size_t)d.n * sizeof *d.y);
    rng r = rng_derive(6, RNG_DATA, 0);
    for (int i = 0; i < d.n * 72; i++) {
        d.x[i] = (float)rng_normal(&r);
    }
    for (int i = 0; i < d.n; i++) {
        d.y[i] = (int32_t)rng_below(&r, 3);
    }
    double l1, a1, l2, a2;
    model_evaluate(with, &l1, &a1, params, &d, 7);
    model_evaluate(without, &l2, &a2, params, &d, 7);
    assert_true(l1 == l2 && a1 == a2);
    float loss1 = model_gradient(with, g1, params, d.x, d.y, d.n);
    float loss2 = model_gradient(with, g2, params, d.x, d.y, d.n);
    assert_true(loss1 != loss2);             /* a fresh mask */
    with->dropout_step = 0;
    float loss3 = model_gradient(with, g2, params, d.x, d.y, d.n);
    assert_true(loss1 == loss3);             /* the same call count, the same mask */
    assert_memory_equal(g1, g2, with->nparams * sizeof *g1);
    model_gradient(without, g2, params, d.x, d.y, d.n);
    assert_memory_not_equal(g1, g2, with->nparams * sizeof *g1);
    free(d.x);
    free(d.y);
    free(params);
    free(g1);
    free(g2);
    model_destroy(&with);
    model_destroy(&without);
}

static void test_cnn_shape_errors(void **state)
{
    (void)state;
    error err = {0};
    model_spec spec = {.type = MODEL_CNN, .conv_count = 1, .channels = {4}, .kernel = 5,
                       .pool = 2, .image_count = 3, .image = {28, 28, 3}};
    assert_null(model_new(&spec, s_b, 784, 10, &err));
    assert_int_equal(err.status, ERROR_USAGE);
    assert_non_null(strstr(err.msg, "[model] image"));
    /* no image given: a square one-channel image from the inputs */
    spec.image_count = 0;
    model *m = model_new(&spec, s_b, 784, 10, &err);
    assert_non_null(m);
    assert_int_equal(m->layer[0].h, 28);
    assert_int_equal(m->layer[0].c, 1);
    assert_int_equal(m->layer[2].fan_in, 14 * 14 * 4);
    model_destroy(&m);
    /* three pools of 4 shrink 28 to 0 */
    spec.conv_count = 3;
    spec.channels[1] = spec.channels[2] = 4;
    spec.pool = 4;
    assert_null(model_new(&spec, s_b, 784, 10, &err));
    assert_non_null(strstr(err.msg, "[model] pool"));
    /* a cnn's defaults, the TensorFlow tutorial's and the README's: 5 x 5
     * convolutions of 32 and 64 channels, pools of 2, a dense layer of
     * 1,024 and dropout 0.4 after it (a mutation to 0.5 passed) */
    config *c = config_parse_string("[model]\ntype = cnn\n", "cnn.ini", &err);
    model_spec cnn;
    assert_int_equal(model_spec_configure(&cnn, c, &err), 0);
    assert_int_equal(cnn.conv_count, 2);
    assert_int_equal(cnn.channels[0], 32);
    assert_int_equal(cnn.channels[1], 64);
    assert_int_equal(cnn.kernel, 5);
    assert_int_equal(cnn.pool, 2);
    assert_int_equal(cnn.hidden_count, 1);
    assert_int_equal(cnn.hidden[0], 1024);
    assert_true(cnn.dropout == 0.4);
    config_destroy(&c);
}

static void test_parameter_layout_and_init(void **state)
{
    (void)state;
    const long hidden[2] = {256, 128};
    model *m = s_model(MODEL_MLP, 784, 10, hidden, 2);
    assert_int_equal(m->nparams, 784 * 256 + 256 + 256 * 128 + 128 + 128 * 10 + 10);
    assert_int_equal(m->layer[0].w_off, 0);
    assert_int_equal(m->layer[0].b_off, 784 * 256);
    assert_int_equal(m->layer[1].w_off, 784 * 256 + 256);
    float *a = malloc(m->nparams * sizeof *a), *b = malloc(m->nparams * sizeof *b);
    model_init_params(m, a, 3);
    model_init_params(m, b, 3);
    assert_memory_equal(a, b, m->nparams * sizeof *a);
    model_init_params(m, b, 4);
    assert_memory_not_equal(a, b, m->nparams * sizeof *a);
    /* He: first layer weights have std sqrt(2 / 784); biases are zero */
    double sq = 0;
    for (size_t i = 0; i < 784 * 256; i++) {
        sq += (double)a[i] * a[i];
    }
    double sd = sqrt(sq / (784 * 256));
    assert_true(fabs(sd - sqrt(2.0 / 784)) < 0.01 * sqrt(2.0 / 784) + 1e-4);
    for (int j = 0; j < 256; j++) {
        assert_true(a[m->layer[0].b_off + (size_t)j] == 0.0f);
    }
    free(a);
    free(b);
    model_destroy(&m);
}

/* Xavier (Glorot uniform) draws a layer's weights within sqrt(6 / (fan_in
 * + fan_out)); a convolution's fans are k * k * c and k * k * oc, as
 * TensorFlow's glorot_uniform and PyTorch's xavier_uniform_ take them (its
 * fan_out was oc alone, a 5 x 5 first layer's limit 3.8 times too wide).
 * The largest of many uniform draws lies within 1% of the limit. */
static void test_xavier_takes_a_convolutions_fans(void **state)
{
    (void)state;
    model_spec spec = {.type = MODEL_CNN, .conv_count = 2, .channels = {32, 64}, .kernel = 5,
                       .pool = 2, .hidden_count = 1, .hidden = {128}, .image_count = 3,
                       .image = {28, 28, 1}, .init = INIT_XAVIER};
    error err = {0};
    model *m = model_new(&spec, s_b, 784, 10, &err);
    assert_non_null(m);
    float *p = malloc(m->nparams * sizeof *p);
    model_init_params(m, p, 1);
    for (int i = 0; i < m->layers; i++) {
        const layer *l = &m->layer[i];
        if (l->kind == LAYER_POOL) {
            continue;
        }
        double fan_out = l->kind == LAYER_CONV ? 25.0 * l->oc : l->oc;
        double limit = sqrt(6.0 / ((double)l->fan_in + fan_out)), most = 0;
        for (size_t j = 0; j < l->fan_in * (size_t)l->oc; j++) {
            most = fmax(most, fabs(p[l->w_off + j]));
        }
        if (most > limit || most < 0.99 * limit) {
            fail_msg("layer %d: largest weight %g, Glorot's limit %g", i, most, limit);
        }
    }
    free(p);
    model_destroy(&m);
}

static void test_evaluate_agrees_with_training_loss(void **state)
{
    (void)state;
    dataset d, t;
    error err = {0};
    assert_int_equal(dataset_synthetic(&d, &t, 103, 5, 8, 3, 1.0, 2, &err), 0);
    const long hidden[1] = {16};
    model *m = s_model(MODEL_MLP, 8, 3, hidden, 1);
    float *params = malloc(m->nparams * sizeof *params);
    float *grad = malloc(m->nparams * sizeof *grad);
    model_init_params(m, params, 1);
    double loss_full, acc_full, loss_chunks, acc_chunks;
    model_evaluate(m, &loss_full, &acc_full, params, &d, 103);
    model_evaluate(m, &loss_chunks, &acc_chunks, params, &d, 10);
    float train_loss = model_gradient(m, grad, params, d.x, d.y, d.n);
    assert_true(fabs(loss_full - train_loss) < 1e-5 * fabs(loss_full));
    assert_true(fabs(loss_full - loss_chunks) < 1e-5 * fabs(loss_full));
    assert_true(acc_full == acc_chunks);
    /* accuracy counts argmax hits: fit the data and check it rises */
    for (int step = 0; step < 300; step++) {
        model_gradient(m, grad, params, d.x, d.y, d.n);
        for (size_t i = 0; i < m->nparams; i++) {
            params[i] -= 0.3f * grad[i];
        }
    }
    double loss_after, acc_after;
    model_evaluate(m, &loss_after, &acc_after, params, &d, 10);
    assert_true(loss_after < 0.5 * loss_full);
    assert_true(acc_after > acc_full);
    assert_true(acc_after > 0.8);
    free(params);
    free(grad);
    model_destroy(&m);
    dataset_free(&d);
    dataset_free(&t);
}

/* A diverged first layer shows in the loss: its NaN weights gave a hidden
 * layer of zeros through ReLU (NaN > 0 is false), a finite loss and
 * finite gradients, and a run that never said it had diverged. A NaN
 * that max pooling meets is the window's maximum, as in PyTorch. */
static void test_a_nan_layer_shows_in_the_loss(void **state)
{
    (void)state;
    const long hidden[] = {4};
    model *m = s_model(MODEL_MLP, 3, 2, hidden, 1);
    float *params = malloc(m->nparams * sizeof *params);
    float *grad = malloc(m->nparams * sizeof *grad);
    model_init_params(m, params, 1);
    for (int i = 0; i < 3 * 4; i++) {
        params[i] = NAN;   /* the first layer's weights */
    }
    dataset d = {.n = 2, .dim = 3, .classes = 2};
    float x[6] = {0.1f, -0.2f, 0.3f, 0.5f, 0.4f, -0.6f};
    int32_t y[2] = {0, 1};
    d.x = x;
    d.y = y;
    double loss, acc;
    model_evaluate(m, &loss, &acc, params, &d, 2);
    assert_true(isnan(loss));
    assert_true(isnan(model_gradient(m, grad, params, x, y, 2)));
    free(params);
    free(grad);
    model_destroy(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_softmax_gradient_matches_finite_differences),
        cmocka_unit_test(test_linear_gradient_matches_finite_differences),
        cmocka_unit_test(test_least_squares),
        cmocka_unit_test(test_a_nan_layer_shows_in_the_loss),
        cmocka_unit_test(test_mlp_gradient_matches_finite_differences),
        cmocka_unit_test(test_cnn_gradient_matches_finite_differences),
        cmocka_unit_test(test_winograd_convolution_gradient),
        cmocka_unit_test(test_dropout_only_in_training),
        cmocka_unit_test(test_cnn_shape_errors),
        cmocka_unit_test(test_parameter_layout_and_init),
        cmocka_unit_test(test_xavier_takes_a_convolutions_fans),
        cmocka_unit_test(test_evaluate_agrees_with_training_loss),
    };
    return cmocka_run_group_tests(tests, s_setup, s_teardown);
}
