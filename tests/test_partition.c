/* test_partition.c: shards are disjoint and complete, label-skew really
 * skews, and the sampler visits each example once per pass. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/partition.h"

static dataset s_data;

static int s_setup(void **state)
{
    (void)state;
    dataset test;
    error err = {0};
    if (dataset_synthetic(&s_data, &test, 10007, 10, 4, 10, 1.0, 3, &err) < 0) {
        return -1;
    }
    dataset_free(&test);
    return 0;
}

static int s_teardown(void **state)
{
    (void)state;
    dataset_free(&s_data);
    return 0;
}

static void s_check_disjoint_complete(const shard *shards, int workers, int n)
{
    int *seen = calloc((size_t)n, sizeof *seen);
    size_t total = 0;
    for (int w = 0; w < workers; w++) {
        assert_true(shards[w].n > 0);
        for (size_t i = 0; i < shards[w].n; i++) {
            assert_true(shards[w].idx[i] < (uint32_t)n);
            seen[shards[w].idx[i]]++;
        }
        total += shards[w].n;
    }
    assert_int_equal(total, n);
    for (int i = 0; i < n; i++) {
        assert_int_equal(seen[i], 1);
    }
    free(seen);
}

/* Mean over workers of the share of a worker's examples in its commonest
 * class: 1/classes for a perfectly mixed split, 1 for one class each. */
static double s_dominance(const shard *shards, int workers)
{
    double total = 0;
    for (int w = 0; w < workers; w++) {
        int counts[10] = {0}, best = 0;
        for (size_t i = 0; i < shards[w].n; i++) {
            counts[s_data.y[shards[w].idx[i]]]++;
        }
        for (int k = 0; k < 10; k++) {
            best = counts[k] > best ? counts[k] : best;
        }
        total += (double)best / (double)shards[w].n;
    }
    return total / workers;
}

static void test_iid_is_disjoint_complete_balanced(void **state)
{
    (void)state;
    const int counts[] = {1, 3, 8, 64};
    for (int c = 0; c < 4; c++) {
        int workers = counts[c];
        shard shards[64];
        error err = {0};
        assert_int_equal(partition_make(shards, workers, &s_data, PARTITION_IID, 0, 5, &err), 0);
        s_check_disjoint_complete(shards, workers, s_data.n);
        for (int w = 0; w < workers; w++) {
            size_t want = (size_t)s_data.n / (size_t)workers;
            assert_true(shards[w].n == want || shards[w].n == want + 1);
        }
        if (workers == 8) {
            assert_true(s_dominance(shards, workers) < 0.15);
        }
        partition_free(shards, workers);
    }
}

static void test_label_skew_is_disjoint_complete_and_skewed(void **state)
{
    (void)state;
    shard shards[8], iid[8];
    error err = {0};
    assert_int_equal(partition_make(shards, 8, &s_data, PARTITION_LABEL_SKEW, 0.1, 5, &err), 0);
    assert_int_equal(partition_make(iid, 8, &s_data, PARTITION_IID, 0, 5, &err), 0);
    s_check_disjoint_complete(shards, 8, s_data.n);
    double skewed = s_dominance(shards, 8), mixed = s_dominance(iid, 8);
    assert_true(skewed > 0.45);
    assert_true(skewed > 3 * mixed);
    partition_free(shards, 8);
    /* large alpha approaches iid */
    assert_int_equal(partition_make(shards, 8, &s_data, PARTITION_LABEL_SKEW, 1000, 5, &err), 0);
    s_check_disjoint_complete(shards, 8, s_data.n);
    assert_true(s_dominance(shards, 8) < 0.15);
    partition_free(shards, 8);
    partition_free(iid, 8);
}

/* A tiny alpha: every worker's Gamma draw for a class can underflow to
 * 0, which once made the shares NaN and wrote past a shard (a segfault for
 * 7 seeds of 20), or to denormals that split a class evenly. Each seed now
 * gives a complete split, or refuses one that leaves a worker empty, and
 * a class goes almost always whole to one worker, as Dirichlet(0.001)
 * does. */
static void test_label_skew_with_a_tiny_alpha(void **state)
{
    (void)state;
    int made = 0, classes = 0;
    double largest = 0;   /* the largest worker's share of a class, summed */
    for (uint64_t seed = 1; seed <= 100; seed++) {
        shard shards[4];
        error err = {0};
        if (partition_make(shards, 4, &s_data, PARTITION_LABEL_SKEW, 1e-3, seed, &err) == 0) {
            s_check_disjoint_complete(shards, 4, s_data.n);
            /* a class goes (nearly always) whole to one worker */
            int counts[4][10] = {{0}}, total[10] = {0};
            for (int w = 0; w < 4; w++) {
                for (size_t i = 0; i < shards[w].n; i++) {
                    counts[w][s_data.y[shards[w].idx[i]]]++;
                    total[s_data.y[shards[w].idx[i]]]++;
                }
            }
            for (int k = 0; k < 10; k++) {
                int most = 0;
                for (int w = 0; w < 4; w++) {
                    most = counts[w][k] > most ? counts[w][k] : most;
                }
                largest += (double)most / total[k];
                classes++;
            }
            partition_free(shards, 4);
            made++;
        } else {
            assert_int_equal(err.status, ERROR_USAGE);
            assert_non_null(strstr(err.msg, "no examples"));
        }
    }
    assert_true(made > 0);
    assert_true(largest / classes > 0.98);
    /* near DBL_MIN even the draws' logarithms overflow, every one to -inf:
     * the shares were NaN, a shard's size 2^63 (a crash for 1 seed in 5
     * with one worker); now each class goes whole to one worker */
    for (uint64_t seed = 1; seed <= 50; seed++) {
        for (int workers = 1; workers <= 2; workers++) {
            shard shards[2];
            error err = {0};
            if (partition_make(shards, workers, &s_data, PARTITION_LABEL_SKEW, 2.23e-308, seed,
                               &err) == 0) {
                s_check_disjoint_complete(shards, workers, s_data.n);
                partition_free(shards, workers);
            } else {
                assert_non_null(strstr(err.msg, "no examples"));
            }
        }
    }
}

/* More workers than examples: iid deals the permutation round again, one
 * example each, every example to 2 or 3 of 13 workers over 5 examples;
 * label-skew, which needs one each per class draw, refuses. */
static void test_more_workers_than_examples(void **state)
{
    (void)state;
    dataset tiny, test;
    error err = {0};
    assert_int_equal(dataset_synthetic(&tiny, &test, 5, 1, 2, 2, 1.0, 1, &err), 0);
    shard shards[13];
    assert_int_equal(partition_make(shards, 13, &tiny, PARTITION_IID, 0, 1, &err), 0);
    int seen[5] = {0};
    for (int w = 0; w < 13; w++) {
        assert_int_equal(shards[w].n, 1);
        assert_true(shards[w].idx[0] < 5);
        seen[shards[w].idx[0]]++;
        if (w >= 5) {   /* round again, in the same order */
            assert_int_equal(shards[w].idx[0], shards[w - 5].idx[0]);
        }
    }
    for (int i = 0; i < 5; i++) {
        assert_true(seen[i] == 2 || seen[i] == 3);
    }
    partition_free(shards, 13);
    assert_int_equal(partition_make(shards, 6, &tiny, PARTITION_LABEL_SKEW, 0.5, 1, &err), -1);
    assert_int_equal(err.status, ERROR_USAGE);
    assert_non_null(strstr(err.msg, "label-skew"));
    dataset_free(&tiny);
    dataset_free(&test);
}

/* sampler_skip leaves a sampler where drawing that many examples would:
 * 37 minibatches of 64 over a shard of 1,000 cross two passes, and the
 * next minibatch is the same either way. */
static void test_sampler_skip_is_drawing_without_the_copies(void **state)
{
    (void)state;
    shard shards[10];
    error err = {0};
    assert_int_equal(partition_make(shards, 10, &s_data, PARTITION_IID, 0, 5, &err), 0);
    sampler drawn, skipped;
    assert_int_equal(sampler_init(&drawn, &s_data, &shards[3], rng_derive(9, RNG_BATCH, 3)), 0);
    assert_int_equal(sampler_init(&skipped, &s_data, &shards[3], rng_derive(9, RNG_BATCH, 3)), 0);
    enum { BATCH = 64 };
    float x[BATCH * 10] = {0}, x2[BATCH * 10] = {0};   /* dim is at most 10 */
    int32_t y[BATCH], y2[BATCH];
    for (int i = 0; i < 37; i++) {
        sampler_next(&drawn, x, y, BATCH);
    }
    sampler_skip(&skipped, 37 * BATCH);
    assert_true(drawn.passes == 2 && skipped.passes == drawn.passes && skipped.pos == drawn.pos);
    sampler_next(&drawn, x, y, BATCH);
    sampler_next(&skipped, x2, y2, BATCH);
    assert_memory_equal(x, x2, sizeof x);
    assert_memory_equal(y, y2, sizeof y);
    sampler_free(&drawn);
    sampler_free(&skipped);
    partition_free(shards, 10);
}

static void test_sampler_visits_each_example_once_per_pass(void **state)
{
    (void)state;
    shard shards[3];
    error err = {0};
    assert_int_equal(partition_make(shards, 3, &s_data, PARTITION_IID, 0, 5, &err), 0);
    const shard *s = &shards[1];
    sampler a, b;
    assert_int_equal(sampler_init(&a, &s_data, s, rng_derive(5, RNG_BATCH, 1)), 0);
    assert_int_equal(sampler_init(&b, &s_data, s, rng_derive(5, RNG_BATCH, 1)), 0);
    int batch = 7;
    float *x = malloc((size_t)batch * 4 * sizeof *x), *xb = malloc((size_t)batch * 4 * sizeof *xb);
    int32_t y[7], yb[7];
    /* Identify examples by their features: count how often each row of the
     * shard comes back over exactly two passes. */
    size_t draws = 2 * s->n;
    int *hits = calloc(s->n, sizeof *hits);
    for (size_t done = 0; done < draws; done += (size_t)batch) {
        int take = draws - done < (size_t)batch ? (int)(draws - done) : batch;
        sampler_next(&a, x, y, take);
        sampler_next(&b, xb, yb, take);
        assert_memory_equal(x, xb, (size_t)take * 4 * sizeof *x);   /* seeded */
        for (int r = 0; r < take; r++) {
            size_t found = s->n;
            for (size_t i = 0; i < s->n; i++) {
                if (memcmp(s_data.x + (size_t)s->idx[i] * 4, x + r * 4, 4 * sizeof *x) == 0) {
                    found = i;
                    break;
                }
            }
            assert_true(found < s->n);
            assert_int_equal(y[r], s_data.y[s->idx[found]]);
            hits[found]++;
        }
    }
    for (size_t i = 0; i < s->n; i++) {
        assert_int_equal(hits[i], 2);
    }
    assert_int_equal(a.passes, 1);
    free(hits);
    free(x);
    free(xb);
    sampler_free(&a);
    sampler_free(&b);
    partition_free(shards, 3);
}

static void test_parameter_ranges_are_balanced_and_complete(void **state)
{
    (void)state;
    const uint64_t sizes[] = {0, 1, 2, 7, 10, 1000, 235146, 1ULL << 33};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        for (int shards = 1; shards <= 17; shards++) {
            uint64_t expect = 0, smallest = UINT64_MAX, largest = 0;
            for (int k = 0; k < shards; k++) {
                uint64_t lo, hi;
                partition_range(sizes[i], shards, k, &lo, &hi);
                assert_true(lo == expect);           /* contiguous, in order */
                assert_true(hi >= lo);
                smallest = hi - lo < smallest ? hi - lo : smallest;
                largest = hi - lo > largest ? hi - lo : largest;
                expect = hi;
            }
            assert_true(expect == sizes[i]);         /* nothing lost */
            assert_true(largest - smallest <= 1);    /* balanced */
        }
    }
}

/* Whether a shard's indices are in increasing order (file order). */
static bool s_ascending(const uint32_t *idx, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        if (idx[i] < idx[i - 1]) {
            return false;
        }
    }
    return true;
}

/* iid deals a seeded permutation, not the file in order: a file sorted by
 * label would otherwise give each worker a few classes. Another seed is
 * another split. */
static void test_iid_deals_a_seeded_shuffle(void **state)
{
    (void)state;
    shard a[4], b[4];
    error err = {0};
    assert_int_equal(partition_make(a, 4, &s_data, PARTITION_IID, 0, 5, &err), 0);
    assert_int_equal(partition_make(b, 4, &s_data, PARTITION_IID, 0, 6, &err), 0);
    for (int w = 0; w < 4; w++) {
        assert_false(s_ascending(a[w].idx, a[w].n));
        assert_int_equal(a[w].n, b[w].n);
    }
    assert_memory_not_equal(a[0].idx, b[0].idx, a[0].n * sizeof *a[0].idx);
    partition_free(a, 4);
    partition_free(b, 4);
    /* label-skew too: another seed, other shares */
    assert_int_equal(partition_make(a, 4, &s_data, PARTITION_LABEL_SKEW, 0.5, 5, &err), 0);
    assert_int_equal(partition_make(b, 4, &s_data, PARTITION_LABEL_SKEW, 0.5, 6, &err), 0);
    assert_false(a[0].n == b[0].n && memcmp(a[0].idx, b[0].idx, a[0].n * sizeof *a[0].idx) == 0);
    partition_free(a, 4);
    partition_free(b, 4);
}

/* Label-skew gives each worker a random draw of each class, not the
 * class's first examples in file order: a worker's examples of any one
 * class are not in increasing order. */
static void test_label_skew_draws_within_each_class(void **state)
{
    (void)state;
    shard shards[4];
    error err = {0};
    assert_int_equal(partition_make(shards, 4, &s_data, PARTITION_LABEL_SKEW, 1000, 5, &err), 0);
    uint32_t *mine = malloc((size_t)s_data.n * sizeof *mine);
    for (int w = 0; w < 4; w++) {
        for (int k = 0; k < 10; k++) {
            size_t n = 0;
            for (size_t i = 0; i < shards[w].n; i++) {
                if (s_data.y[shards[w].idx[i]] == k) {
                    mine[n++] = shards[w].idx[i];
                }
            }
            assert_true(n > 100);   /* alpha 1000: about 250 each */
            if (s_ascending(mine, n)) {
                fail_msg("worker %d's %zu examples of class %d are in file order", w, n, k);
            }
        }
    }
    free(mine);
    partition_free(shards, 4);
}

/* The sampler draws each pass in a fresh seeded order: the first pass is
 * not the shard's order (a label-skew shard is grouped by class: its first
 * epoch would go class by class), nor is a pass the one before it. */
static void test_sampler_shuffles_every_pass(void **state)
{
    (void)state;
    shard shards[4];
    error err = {0};
    assert_int_equal(partition_make(shards, 4, &s_data, PARTITION_LABEL_SKEW, 1000, 5, &err), 0);
    const shard *s = &shards[2];
    sampler sp;
    assert_int_equal(sampler_init(&sp, &s_data, s, rng_derive(5, RNG_BATCH, 2)), 0);
    int32_t *in_order = malloc(s->n * sizeof *in_order), *first = malloc(s->n * sizeof *first);
    int32_t *second = malloc(s->n * sizeof *second);
    float *x = malloc(s->n * (size_t)s_data.dim * sizeof *x);
    for (size_t i = 0; i < s->n; i++) {
        in_order[i] = s_data.y[s->idx[i]];
    }
    sampler_next(&sp, x, first, (int)s->n);
    sampler_next(&sp, x, second, (int)s->n);
    assert_int_equal(sp.passes, 1);
    assert_memory_not_equal(first, in_order, s->n * sizeof *first);
    assert_memory_not_equal(second, first, s->n * sizeof *first);
    /* each pass holds the shard's labels, each example once */
    int counts[10] = {0};
    for (size_t i = 0; i < s->n; i++) {
        counts[in_order[i]]++;
        counts[first[i]]--;
    }
    for (int k = 0; k < 10; k++) {
        assert_int_equal(counts[k], 0);
    }
    free(in_order);
    free(first);
    free(second);
    free(x);
    sampler_free(&sp);
    partition_free(shards, 4);
}

/* partition_take gives worker id the shard partition_make gives it: a
 * process that takes its own shard trains on what the simulator's worker
 * of that id would (another disjoint shard each is no error either). */
static void test_take_is_the_shard_of_that_id(void **state)
{
    (void)state;
    shard all[5];
    error err = {0};
    assert_int_equal(partition_make(all, 5, &s_data, PARTITION_LABEL_SKEW, 0.5, 7, &err), 0);
    for (int id = 0; id < 5; id++) {
        shard mine;
        assert_int_equal(partition_take(&mine, 5, id, &s_data, PARTITION_LABEL_SKEW, 0.5, 7,
                                        &err), 0);
        assert_int_equal(mine.n, all[id].n);
        assert_memory_equal(mine.idx, all[id].idx, mine.n * sizeof *mine.idx);
        partition_free(&mine, 1);
    }
    partition_free(all, 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_iid_is_disjoint_complete_balanced),
        cmocka_unit_test(test_label_skew_is_disjoint_complete_and_skewed),
        cmocka_unit_test(test_label_skew_with_a_tiny_alpha),
        cmocka_unit_test(test_sampler_skip_is_drawing_without_the_copies),
        cmocka_unit_test(test_more_workers_than_examples),
        cmocka_unit_test(test_sampler_visits_each_example_once_per_pass),
        cmocka_unit_test(test_parameter_ranges_are_balanced_and_complete),
        cmocka_unit_test(test_iid_deals_a_seeded_shuffle),
        cmocka_unit_test(test_label_skew_draws_within_each_class),
        cmocka_unit_test(test_sampler_shuffles_every_pass),
        cmocka_unit_test(test_take_is_the_shard_of_that_id),
    };
    return cmocka_run_group_tests(tests, s_setup, s_teardown);
}
