/* test_rules.c: shard ranges, and each rule's server and worker steps
 * against examples computed by hand. Worker loops run unmodified against
 * real shard objects through an in-process link that also records every
 * primitive call. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/server.h"
#include "core/worker.h"
#include "support.h"

static void test_shard_ranges_are_balanced_and_complete(void **state)
{
    (void)state;
    const uint64_t sizes[] = {0, 1, 2, 7, 10, 1000, 235146, 1ULL << 33};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        for (int shards = 1; shards <= 17; shards++) {
            uint64_t expect = 0, smallest = UINT64_MAX, largest = 0;
            for (int k = 0; k < shards; k++) {
                uint64_t lo, hi;
                shard_range(sizes[i], shards, k, &lo, &hi);
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

static const optim_spec s_sgd = {.kind = OPTIM_SGD, .lr = 0.5};

/* A rule's parameters from [algorithm] text. */
static void *s_configure(const char *name, const char *text, int workers, rule_info *info)
{
    error err = {0};
    config *c = config_parse_string(text, "rule.ini", &err);
    assert_non_null(c);
    rule_context ctx = {.workers = workers, .optim = &s_sgd};
    *info = (rule_info){.server_threads = 1, .server_optim = s_sgd, .local_optim = s_sgd};
    void *p = algorithm_find(name)->configure(c, &ctx, info, &err);
    if (!p) {
        fail_msg("%s", err.msg);
    }
    assert_int_equal(config_check_unused(c, &err), 0);
    config_destroy(&c);
    return p;
}

static void s_expect_theta(const server *s, const float *want)
{
    for (size_t i = 0; i < s->n; i++) {
        if (fabsf(s->theta[i] - want[i]) > 1e-6f) {
            fail_msg("theta[%zu] = %g, want %g", i, (double)s->theta[i], (double)want[i]);
        }
    }
}

static void test_sync_server_averages_a_round(void **state)
{
    (void)state;
    rule_info info;
    void *p = s_configure("sync", "", 2, &info);
    const float init[3] = {1, 2, 3}, g0[3] = {1, 0, 2}, g1[3] = {3, 2, 0};
    server *s = server_new(algorithm_find("sync"), p, &info, 0, 1, 2, init, 3);
    pull_msg round1 = {.worker = 0, .min_version = 1};
    assert_false(server_pull_ready(s, &round1));
    server_push(s, &(push_msg){.worker = 0, .tag = 0, .base_version = 0, .samples = 8, .values = g0});
    s_expect_theta(s, init);                          /* waits for the round */
    assert_int_equal(s->version, 0);
    server_push(s, &(push_msg){.worker = 1, .tag = 0, .base_version = 0, .samples = 8, .values = g1});
    /* mean (2, 1, 1), lr 0.5 */
    s_expect_theta(s, (const float[]){0, 1.5f, 2.5f});
    assert_int_equal(s->version, 1);
    assert_true(server_pull_ready(s, &round1));
    assert_int_equal(s->samples, 16);
    /* a late gradient for round 0 is dropped and counted */
    server_push(s, &(push_msg){.worker = 0, .tag = 0, .base_version = 0, .values = g0});
    s_expect_theta(s, (const float[]){0, 1.5f, 2.5f});
    assert_int_equal(s->stats.dropped, 1);
    assert_int_equal(s->stats.pushes, 2);
    assert_int_equal(s->stats.staleness_max, 0);
    server_destroy(&s);
    free(p);
}

static void test_sync_backups_and_worker_learning_rates(void **state)
{
    (void)state;
    rule_info info;
    /* one backup: the first gradient of a round is applied, the second dropped */
    void *p = s_configure("sync", "[algorithm]\nbackups = 1\n", 2, &info);
    const float init[2] = {1, 1}, g[2] = {2, 4};
    server *s = server_new(algorithm_find("sync"), p, &info, 0, 1, 2, init, 2);
    server_push(s, &(push_msg){.worker = 1, .tag = 0, .values = g});
    s_expect_theta(s, (const float[]){0, -1});
    server_push(s, &(push_msg){.worker = 0, .tag = 0, .values = g});
    s_expect_theta(s, (const float[]){0, -1});
    assert_int_equal(s->stats.dropped, 1);
    server_destroy(&s);
    free(p);
    /* sum of per-worker-rate gradients: theta - (0.25 g0 + 1.0 g1) */
    p = s_configure("sync", "[algorithm]\naggregate = sum\nworker_lr = 0.25, 1.0\n", 2, &info);
    s = server_new(algorithm_find("sync"), p, &info, 0, 1, 2, init, 2);
    /* workers push g scaled by worker_lr / lr: 0.5 g0 and 2 g1 */
    server_push(s, &(push_msg){.worker = 0, .tag = 0, .values = (const float[]){0.5f, 0}});
    server_push(s, &(push_msg){.worker = 1, .tag = 0, .values = (const float[]){0, 2}});
    s_expect_theta(s, (const float[]){0.75f, 0});
    server_destroy(&s);
    free(p);
}

static void test_sync_rejects_bad_keys(void **state)
{
    (void)state;
    const char *bad[] = {"[algorithm]\nbackups = 2\n", "[algorithm]\naggregate = median\n",
                         "[algorithm]\nworker_lr = 0.1\n", "[algorithm]\nworker_lr = 0.1, -1\n"};
    for (int i = 0; i < 4; i++) {
        error err = {0};
        config *c = config_parse_string(bad[i], "bad.ini", &err);
        rule_info info;
        rule_context ctx = {.workers = 2, .optim = &s_sgd};
        assert_null(algorithm_find("sync")->configure(c, &ctx, &info, &err));
        assert_int_equal(err.status, ERROR_USAGE);
        assert_non_null(strstr(err.msg, "bad.ini"));
        config_destroy(&c);
    }
}

static void test_hogwild_server_applies_at_once(void **state)
{
    (void)state;
    rule_info info;
    void *p = s_configure("hogwild", "[algorithm]\nserver_threads = 2\n", 2, &info);
    assert_int_equal(info.server_threads, 2);
    const float init[2] = {1, 2};
    server *s = server_new(algorithm_find("hogwild"), p, &info, 0, 1, 2, init, 2);
    assert_true(server_pull_ready(s, &(pull_msg){.worker = 0, .min_version = 99}));
    server_push(s, &(push_msg){.worker = 0, .base_version = 0, .values = (const float[]){2, 2}});
    s_expect_theta(s, (const float[]){0, 1});
    /* worker 1 computed on version 0, applied at version 1: staleness 1 */
    server_push(s, &(push_msg){.worker = 1, .base_version = 0, .values = (const float[]){-2, 4}});
    s_expect_theta(s, (const float[]){1, -1});
    assert_int_equal(s->version, 2);
    assert_int_equal(s->stats.staleness_max, 1);
    assert_int_equal(s->stats.staleness_sum, 1);
    assert_int_equal(s->last_staleness[1], 1);
    assert_int_equal(s->stats.histogram[0], 1);
    assert_int_equal(s->stats.histogram[1], 1);
    server_destroy(&s);
    free(p);
    /* hogwild is plain SGD at the server */
    error err = {0};
    config *c = config_parse_string("", "h.ini", &err);
    optim_spec adam = {.kind = OPTIM_ADAM, .lr = 0.1};
    rule_context ctx = {.workers = 1, .optim = &adam};
    assert_null(algorithm_find("hogwild")->configure(c, &ctx, &info, &err));
    assert_non_null(strstr(err.msg, "optimizer"));
    config_destroy(&c);
}

/* The in-process link: every shard is a server object here; calls are
 * recorded as "p<min_version>" and "s<tag>". */
typedef struct direct {
    server **shards;
    int count;
    char calls[4096];
} direct;

static int s_direct_pull(worker *w, float *dst, uint64_t min_version)
{
    direct *d = w->link_state;
    size_t len = strlen(d->calls);
    snprintf(d->calls + len, sizeof d->calls - len, "p%llu ", (unsigned long long)min_version);
    for (int k = 0; k < d->count; k++) {
        server *s = d->shards[k];
        if (!server_pull_ready(s, &(pull_msg){.worker = (uint32_t)w->id, .min_version = min_version})) {
            return -1;   /* would block forever: nobody else is pushing */
        }
        memcpy(dst + s->lo, s->theta, s->n * sizeof(float));
        w->versions[k] = s->version;
    }
    w->staleness = d->shards[0]->last_staleness[w->id];
    return 0;
}

static int s_direct_push(worker *w, const float *values, uint64_t tag, uint32_t samples)
{
    direct *d = w->link_state;
    size_t len = strlen(d->calls);
    snprintf(d->calls + len, sizeof d->calls - len, "s%llu ", (unsigned long long)tag);
    for (int k = 0; k < d->count; k++) {
        server *s = d->shards[k];
        server_push(s, &(push_msg){.worker = (uint32_t)w->id, .tag = tag,
                                   .base_version = w->versions[k], .samples = samples,
                                   .values = values + s->lo});
    }
    return 0;
}

static const worker_link s_direct_link = {.pull = s_direct_pull, .push = s_direct_push};

/* Runs `rule` with one worker over two shards on a small synthetic set and
 * checks the centre against the sequential loop done here by hand. */
static void s_one_worker_run(const char *rule, const char *expected_calls)
{
    support_fixture *f;
    support_fixture_setup((void **)&f);
    char text[512];
    snprintf(text, sizeof text, "[data]\ndataset = synthetic\ntrain_size = 40\ntest_size = 10\n"
             "dim = 5\nclasses = 3\n[model]\ntype = mlp\nhidden = 4\n[train]\nalgorithm = %s\n"
             "epochs = 1\nbatch = 8\nlr = 0.1\n[cluster]\nworkers = 1\nservers = 2\n", rule);
    support_write_file(f->config, text);
    experiment e;
    error err = {0};
    assert_int_equal(experiment_configure(&e, f->config, 0, NULL, &err), 0);
    assert_int_equal(experiment_load(&e, &err), 0);
    backend *b = backend_new(&e.backend, &err);
    model *m = model_new(&e.model, b, e.train.dim, e.train.classes, &err);
    float *init = malloc(m->nparams * sizeof *init);
    model_init_params(m, init, e.seed);
    direct d = {.count = 2};
    server *shards[2];
    for (int k = 0; k < 2; k++) {
        shards[k] = server_new(e.alg, e.rule, &e.rule_info, k, 2, 1, init, m->nparams);
    }
    d.shards = shards;
    worker w;
    assert_int_equal(worker_init(&w, &e, e.alg, e.rule, 0, 1, 2, m, &err), 0);
    w.link = &s_direct_link;
    w.link_state = &d;
    assert_int_equal(w.budget, 5);                   /* 40 examples / batch 8 */
    assert_int_equal(e.alg->worker_run(&w), 0);
    assert_string_equal(d.calls, expected_calls);

    /* by hand: five SGD steps on the same minibatches */
    worker ref;
    assert_int_equal(worker_init(&ref, &e, e.alg, e.rule, 0, 1, 2, m, &err), 0);
    memcpy(ref.theta, init, m->nparams * sizeof *init);
    for (int step = 0; step < 5; step++) {
        worker_gradient(&ref);
        for (size_t i = 0; i < m->nparams; i++) {
            ref.theta[i] -= 0.1f * ref.grad[i];
        }
    }
    for (int k = 0; k < 2; k++) {
        assert_int_equal(shards[k]->version, 5);
        assert_int_equal(shards[k]->stats.staleness_max, 0);
        assert_memory_equal(shards[k]->theta, ref.theta + shards[k]->lo,
                            shards[k]->n * sizeof(float));
        server_destroy(&shards[k]);
    }
    worker_free(&w);
    worker_free(&ref);
    free(init);
    model_destroy(&m);
    backend_destroy(&b);
    experiment_destroy(&e);
    support_fixture_teardown((void **)&f);
}

static void test_sync_worker_loop(void **state)
{
    (void)state;
    /* pull round r, push tag r, until the pulled version reaches the budget */
    s_one_worker_run("sync", "p0 s0 p1 s1 p2 s2 p3 s3 p4 s4 p5 ");
}

static void test_hogwild_worker_loop(void **state)
{
    (void)state;
    s_one_worker_run("hogwild", "p0 s0 p0 s0 p0 s0 p0 s0 p0 s0 ");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shard_ranges_are_balanced_and_complete),
        cmocka_unit_test(test_sync_server_averages_a_round),
        cmocka_unit_test(test_sync_backups_and_worker_learning_rates),
        cmocka_unit_test(test_sync_rejects_bad_keys),
        cmocka_unit_test(test_hogwild_server_applies_at_once),
        cmocka_unit_test(test_sync_worker_loop),
        cmocka_unit_test(test_hogwild_worker_loop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
