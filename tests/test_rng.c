/* test_rng.c: reproducibility and the moments of each distribution. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>

#include "core/faults.h"
#include "core/rng.h"

static void test_same_seed_same_stream(void **state)
{
    (void)state;
    rng a = rng_derive(42, RNG_BATCH, 3), b = rng_derive(42, RNG_BATCH, 3);
    rng c = rng_derive(42, RNG_BATCH, 4), d = rng_derive(43, RNG_BATCH, 3);
    int same_c = 0, same_d = 0;
    for (int i = 0; i < 1000; i++) {
        uint64_t x = rng_next(&a);
        assert_true(x == rng_next(&b));
        same_c += x == rng_next(&c);
        same_d += x == rng_next(&d);
    }
    assert_int_equal(same_c, 0);
    assert_int_equal(same_d, 0);
}

static void s_moments(double *mean, double *var, double (*draw)(rng *, double),
                      double arg, int n)
{
    rng r = rng_derive(7, RNG_DATA, 0);
    double s = 0, sq = 0;
    for (int i = 0; i < n; i++) {
        double x = draw(&r, arg);
        s += x;
        sq += x * x;
    }
    *mean = s / n;
    *var = sq / n - *mean * *mean;
}

static double s_normal(rng *r, double unused)
{
    (void)unused;
    return rng_normal(r);
}

static double s_uniform(rng *r, double unused)
{
    (void)unused;
    return rng_uniform(r);
}

static void test_distribution_moments(void **state)
{
    (void)state;
    double mean, var;
    s_moments(&mean, &var, s_normal, 0, 200000);
    assert_true(fabs(mean) < 0.01);
    assert_true(fabs(var - 1) < 0.02);
    s_moments(&mean, &var, s_uniform, 0, 200000);
    assert_true(fabs(mean - 0.5) < 0.005);
    assert_true(fabs(var - 1.0 / 12) < 0.002);
    /* Gamma(k, 1): mean k, variance k, for shapes on both sides of 1 */
    const double shapes[] = {0.3, 1.0, 4.5};
    for (int i = 0; i < 3; i++) {
        s_moments(&mean, &var, rng_gamma, shapes[i], 200000);
        assert_true(fabs(mean - shapes[i]) < 0.03 * shapes[i] + 0.01);
        assert_true(fabs(var - shapes[i]) < 0.06 * shapes[i] + 0.01);
    }
}

static void test_below_and_shuffle(void **state)
{
    (void)state;
    rng r = rng_derive(1, RNG_PARTITION, 0);
    int counts[7] = {0};
    for (int i = 0; i < 70000; i++) {
        uint64_t x = rng_below(&r, 7);
        assert_true(x < 7);
        counts[x]++;
    }
    for (int k = 0; k < 7; k++) {
        assert_true(abs(counts[k] - 10000) < 500);
    }
    uint32_t v[100];
    for (uint32_t i = 0; i < 100; i++) {
        v[i] = i;
    }
    rng_shuffle(&r, v, 100);
    int seen[100] = {0}, moved = 0;
    for (uint32_t i = 0; i < 100; i++) {
        seen[v[i]]++;
        moved += v[i] != i;
    }
    for (int i = 0; i < 100; i++) {
        assert_int_equal(seen[i], 1);
    }
    assert_true(moved > 80);
}

/* Injected faults come from their own seeded stream: the same seed and
 * stream give the same faults, and over many messages the rates are the
 * configured ones, each a share of all messages (binomial: 1,000,000
 * draws at 5% is within 0.07 points, at 1% within 0.03, with
 * overwhelming odds). Off, nothing is injected. */
static void test_faults_are_seeded_at_their_rates(void **state)
{
    (void)state;
    fault_spec spec = {.drop = 0.05, .duplicate = 0.01};
    faults a, b, other;
    faults_init(&a, &spec, 7, 3);
    faults_init(&b, &spec, 7, 3);
    faults_init(&other, &spec, 7, 4);
    int same = 1, differ = 0, copies[3] = {0};
    for (int i = 0; i < 1000000; i++) {
        int x = faults_copies(&a), y = faults_copies(&b), z = faults_copies(&other);
        same &= x == y;
        differ |= x != z;
        copies[x]++;
    }
    assert_true(same && differ);
    assert_true(copies[0] == (int)a.dropped && copies[2] == (int)a.duplicated);
    assert_true(fabs(copies[0] / 1e6 - 0.05) < 0.0007);
    /* a share of all messages, not of those not dropped (0.0095) */
    assert_true(fabs(copies[2] / 1e6 - 0.01) < 0.0003);
    fault_spec off = {0};
    assert_false(faults_on(&off));
    assert_true(faults_on(&spec));
    faults none;
    faults_init(&none, &off, 7, 3);
    for (int i = 0; i < 1000; i++) {
        assert_int_equal(faults_copies(&none), 1);
    }
    /* half lost and half sent twice: each the share it says, none sent once */
    fault_spec halves = {.drop = 0.5, .duplicate = 0.5};
    faults h;
    faults_init(&h, &halves, 7, 3);
    int once = 0;
    for (int i = 0; i < 100000; i++) {
        once += faults_copies(&h) == 1;
    }
    assert_int_equal(once, 0);
    assert_true(fabs((double)h.duplicated / 1e5 - 0.5) < 0.006);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_seed_same_stream),
        cmocka_unit_test(test_distribution_moments),
        cmocka_unit_test(test_below_and_shuffle),
        cmocka_unit_test(test_faults_are_seeded_at_their_rates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
