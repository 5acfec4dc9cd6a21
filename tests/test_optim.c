/* test_optim.c: each optimizer against steps computed by hand, and the
 * same update whether applied to a whole vector or range by range. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "core/optim.h"

static void s_two_steps(int kind, double lr, double mu, float *p, const float *g1,
                        const float *g2)
{
    optim_spec s = {.kind = kind, .lr = lr, .momentum = mu, .beta1 = 0.9,
                    .beta2 = 0.999, .eps = 1e-8};
    optim *o = optim_new(&s, 2);
    assert_non_null(o);
    optim_step(o, p, g1);
    optim_step(o, p, g2);
    optim_destroy(&o);
    assert_null(o);
}

#define CLOSE(a, b) assert_true(fabs((double)(a) - (double)(b)) < 1e-6)

static const float g1[2] = {0.5f, -2.0f}, g2[2] = {1.0f, 1.0f};

static void test_sgd(void **state)
{
    (void)state;
    float p[2] = {1.0f, 2.0f};
    s_two_steps(OPTIM_SGD, 0.1, 0, p, g1, g2);
    /* 1 - 0.1*0.5 - 0.1*1 = 0.85;  2 + 0.2 - 0.1 = 2.1 */
    CLOSE(p[0], 0.85);
    CLOSE(p[1], 2.1);
}

static void test_momentum(void **state)
{
    (void)state;
    float p[2] = {1.0f, 2.0f};
    s_two_steps(OPTIM_MOMENTUM, 0.1, 0.9, p, g1, g2);
    /* v1 = g1 = (0.5, -2); p = (0.95, 2.2)
     * v2 = 0.9 v1 + g2 = (1.45, -0.8); p = (0.95 - 0.145, 2.2 + 0.08) */
    CLOSE(p[0], 0.805);
    CLOSE(p[1], 2.28);
}

static void test_nesterov(void **state)
{
    (void)state;
    float p[2] = {1.0f, 2.0f};
    s_two_steps(OPTIM_NESTEROV, 0.1, 0.9, p, g1, g2);
    /* v1 = (0.5, -2); p -= 0.1 (g1 + 0.9 v1) = 0.1 (0.95, -3.8) -> (0.905, 2.38)
     * v2 = (1.45, -0.8); p -= 0.1 (g2 + 0.9 v2) = 0.1 (2.305, 0.28) -> (0.6745, 2.352) */
    CLOSE(p[0], 0.6745);
    CLOSE(p[1], 2.352);
}

static void test_adagrad(void **state)
{
    (void)state;
    float p[2] = {1.0f, 2.0f};
    s_two_steps(OPTIM_ADAGRAD, 0.1, 0, p, g1, g2);
    /* s1 = (0.25, 4): p -= 0.1 (0.5/0.5, -2/2) = (0.9, 2.1)
     * s2 = (1.25, 5): p -= 0.1 (1/sqrt(1.25), 1/sqrt(5)) */
    CLOSE(p[0], 0.9 - 0.1 / sqrt(1.25));
    CLOSE(p[1], 2.1 - 0.1 / sqrt(5.0));
}

static void test_adam(void **state)
{
    (void)state;
    float p[2] = {1.0f, 2.0f};
    s_two_steps(OPTIM_ADAM, 0.1, 0, p, g1, g2);
    /* step 1: m̂ = g, v̂ = g^2, so each coordinate moves by lr * sign(g) */
    double want[2];
    for (int i = 0; i < 2; i++) {
        double m1 = 0.1 * g1[i], v1 = 0.001 * g1[i] * g1[i];
        double after1 = (i ? 2.0 : 1.0) - 0.1 * (m1 / 0.1) / (sqrt(v1 / 0.001) + 1e-8);
        double m2 = 0.9 * m1 + 0.1 * g2[i], v2 = 0.999 * v1 + 0.001 * g2[i] * g2[i];
        double c1 = 1 - 0.81, c2 = 1 - 0.999 * 0.999;
        want[i] = after1 - 0.1 * (m2 / c1) / (sqrt(v2 / c2) + 1e-8);
    }
    /* float32 state: (1 - b2^t) loses digits, so allow 1e-5 */
    for (int i = 0; i < 2; i++) {
        if (fabs(p[i] - want[i]) > 1e-5) {
            fail_msg("p[%d] = %.8f, want %.8f", i, (double)p[i], want[i]);
        }
    }
    assert_true(fabs(want[0] - 1.0) > 0.1);   /* the hand example moves */
}

/* A server shard updates its own range with its own optimizer: the result
 * must equal one optimizer over the whole vector. */
static void test_ranges_equal_whole(void **state)
{
    (void)state;
    for (int kind = OPTIM_SGD; kind <= OPTIM_ADAM; kind++) {
        optim_spec s = {.kind = kind, .lr = 0.05, .momentum = 0.9, .beta1 = 0.9,
                        .beta2 = 0.999, .eps = 1e-8};
        float whole[10], parts[10], g[10];
        for (int i = 0; i < 10; i++) {
            whole[i] = parts[i] = (float)i * 0.3f - 1.0f;
        }
        optim *o = optim_new(&s, 10), *lo = optim_new(&s, 4), *hi = optim_new(&s, 6);
        for (int step = 0; step < 5; step++) {
            for (int i = 0; i < 10; i++) {
                g[i] = sinf((float)(i + 3 * step));
            }
            optim_step(o, whole, g);
            optim_step(lo, parts, g);
            optim_step(hi, parts + 4, g + 4);
        }
        assert_memory_equal(whole, parts, sizeof whole);
        optim_destroy(&o);
        optim_destroy(&lo);
        optim_destroy(&hi);
    }
}

static void test_configure_reads_only_its_keys(void **state)
{
    (void)state;
    error err = {0};
    config *c = config_parse_string("[train]\noptimizer = nesterov\nlr = 0.2\n"
                                    "momentum = 0.5\nbeta1 = 0.8\n", "o.ini", &err);
    optim_spec s;
    assert_int_equal(optim_spec_configure(&s, c, "train", "", "sgd", 0.1, &err), 0);
    assert_int_equal(s.kind, OPTIM_NESTEROV);
    assert_true(s.lr == 0.2 && s.momentum == 0.5);
    /* beta1 means nothing to nesterov: reported as unused */
    assert_int_equal(config_check_unused(c, NULL, NULL, NULL, &err), -1);
    assert_non_null(strstr(err.msg, "o.ini:5: [train] beta1"));
    config_destroy(&c);
    c = config_parse_string("[train]\noptimizer = adam\nlr = 0\n", "z.ini", &err);
    assert_int_equal(optim_spec_configure(&s, c, "train", "", "sgd", 0.1, &err), -1);
    assert_non_null(strstr(err.msg, "z.ini:3: [train] lr"));
    config_destroy(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sgd),
        cmocka_unit_test(test_momentum),
        cmocka_unit_test(test_nesterov),
        cmocka_unit_test(test_adagrad),
        cmocka_unit_test(test_adam),
        cmocka_unit_test(test_ranges_equal_whole),
        cmocka_unit_test(test_configure_reads_only_its_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
