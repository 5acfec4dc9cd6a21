/* test_checkpoint.c: a shard saved and restored is the same shard: its
 * parameters, version, counters, per-worker progress, optimizer state,
 * rule state and half-finished round; a damaged or foreign checkpoint is
 * refused and leaves the shard as it was. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "algorithms/server.h"
#include "core/checkpoint.h"
#include "support.h"

enum { N = 5, WORKERS = 3 };

/* A shard of `rule` with [train] optimizer `optimizer`, fresh. */
static server *s_shard(const char *rule, const char *optimizer, int shard, void **params)
{
    char text[256];
    snprintf(text, sizeof text, "[train]\noptimizer = %s\nlr = 0.1\n", optimizer);
    error err = {0};
    config *c = config_parse_string(text, "test", &err);
    optim_spec spec;
    assert_int_equal(optim_spec_configure(&spec, c, "train", "", "sgd", 0.05, &err), 0);
    rule_context ctx = {.workers = WORKERS, .optim = &spec};
    rule_info info = {.server_threads = 1, .server_optim = spec, .local_optim = spec};
    *params = algorithm_find(rule)->configure(c, &ctx, &info, &err);
    if (!*params) {
        fail_msg("%s: %s", rule, err.msg);
    }
    config_destroy(&c);
    float init[2 * N];
    for (int i = 0; i < 2 * N; i++) {
        init[i] = 0.1f * (float)i - 0.3f;
    }
    return server_new(algorithm_find(rule), *params, &info, shard, 2, WORKERS, init, 2 * N);
}

/* Pushes that leave every kind of state behind. */
static void s_train(server *s, const char *rule)
{
    float g[N];
    for (int step = 0; step < 4; step++) {
        for (uint32_t w = 0; w < WORKERS; w++) {
            for (int i = 0; i < N; i++) {
                g[i] = 0.01f * (float)(step * 7 + (int)w * 3 + i) - 0.05f;
            }
            uint64_t tag = strcmp(rule, "ssp") == 0 ? (uint64_t)step : s->version;
            push_msg m = {.worker = w, .tag = tag, .base_version = s->version,
                          .samples = 32 + w, .values = g};
            if (step == 3 && w == 2) {
                return;   /* the last round half done */
            }
            server_push(s, &m);
        }
    }
}

static void s_expect_same(server *a, server *b, const shard_client *ca,
                          const shard_client *cb)
{
    assert_memory_equal(a->theta, b->theta, a->n * sizeof(float));
    assert_int_equal(a->version, b->version);
    assert_int_equal(a->samples, b->samples);
    assert_int_equal(a->stats.pushes, b->stats.pushes);
    assert_int_equal(a->stats.staleness_sum, b->stats.staleness_sum);
    assert_memory_equal(a->stats.histogram, b->stats.histogram, sizeof a->stats.histogram);
    assert_int_equal(a->opt->t, b->opt->t);
    if (a->opt->s1) {
        assert_memory_equal(a->opt->s1, b->opt->s1, a->n * sizeof(float));
    }
    if (a->opt->s2) {
        assert_memory_equal(a->opt->s2, b->opt->s2, a->n * sizeof(float));
    }
    assert_int_equal(a->round_arrived, b->round_arrived);
    if (a->round_sum) {
        assert_memory_equal(a->round_sum, b->round_sum, a->n * sizeof(float));
    }
    if (a->alg->server_state_bytes) {
        assert_memory_equal(a->state, b->state, a->alg->server_state_bytes(a));
    }
    /* and the rule's state as its pulls see it (SSP's clocks: a mutant that
     * sized the state to nothing saved none and compared none) */
    for (uint32_t w = 0; w < WORKERS; w++) {
        for (uint64_t v = 0; v < 9; v++) {
            pull_msg m = {.worker = w, .min_version = v};
            assert_int_equal(server_pull_ready(a, &m), server_pull_ready(b, &m));
        }
    }
    for (int w = 0; w < WORKERS; w++) {
        assert_int_equal(a->worker_samples[w], b->worker_samples[w]);
        assert_int_equal(a->done[w], b->done[w]);
        assert_int_equal(a->in_round[w], b->in_round[w]);
        assert_int_equal(ca[w].push_seq, cb[w].push_seq);
        assert_int_equal(ca[w].verdict, cb[w].verdict);
    }
    /* the count of those done too: a restored shard that counted none
     * never saw every worker done, so never ended (a mutation passed) */
    assert_int_equal(a->done_count, b->done_count);
}

/* sync with Adam (a half-done round and two optimizer moments), ssp
 * (per-worker clocks, the rule's own state) and downpour with its
 * default AdaGrad at the shard:
 * each restored exactly, and the restored shard goes on as the original. */
static void test_a_restored_shard_is_the_same_shard(void **state)
{
    support_fixture *f = *state;
    const char *cases[][2] = {{"sync", "adam"}, {"ssp", "sgd"}, {"downpour", "sgd"}};
    for (int c = 0; c < 3; c++) {
        void *pa, *pb;
        server *a = s_shard(cases[c][0], cases[c][1], 1, &pa);
        s_train(a, cases[c][0]);
        server_mark_done(a, 1);
        shard_client ca[WORKERS] = {{7, PUSH_IN_ROUND}, {9, PUSH_LATE}, {11, PUSH_IN_ROUND}};
        char path[400];
        snprintf(path, sizeof path, "%s/run", f->dir);
        checkpoint_path(path, sizeof path, path, 1);
        error err = {0};
        assert_int_equal(checkpoint_save(path, a, ca, 4, NULL, &err), 0);
        server *b = s_shard(cases[c][0], cases[c][1], 1, &pb);
        shard_client cb[WORKERS] = {{0}};
        uint32_t generation = 0;
        if (checkpoint_load(path, b, cb, &generation, NULL, &err) < 0) {
            fail_msg("%s: %s", cases[c][0], err.msg);
        }
        assert_int_equal(generation, 4);
        s_expect_same(a, b, ca, cb);
        float g[N] = {0.5f, -0.25f, 0.125f, 0, 1};
        push_msg m = {.worker = 2, .tag = strcmp(cases[c][0], "ssp") == 0 ? 3 : a->version,
                      .base_version = a->version, .samples = 1, .values = g};
        server_push(a, &m);
        server_push(b, &m);
        s_expect_same(a, b, ca, cb);
        server_destroy(&a);
        server_destroy(&b);
        free(pa);
        free(pb);
    }
}

/* A checkpoint of a job of other settings (a job run again in an earlier
 * one's folder with another seed) is refused as a usage error, naming the
 * first setting that differs, the shard untouched; one of the same
 * settings, or read without them, is taken up. */
static void test_another_jobs_checkpoint_is_refused(void **state)
{
    support_fixture *f = *state;
    void *pa, *pb;
    server *a = s_shard("sync", "sgd", 1, &pa);
    s_train(a, "sync");
    shard_client ca[WORKERS] = {{0}}, cb[WORKERS] = {{0}};
    char path[400];
    snprintf(path, sizeof path, "%s/settings.ckpt", f->dir);
    error err = {0};
    const char *saved = "experiment.seed = 1\ntrain.epochs = 2\ntrain.lr = 0.1\n";
    assert_int_equal(checkpoint_save(path, a, ca, 1, saved, &err), 0);
    const struct {
        const char *settings, *said;
    } others[] = {
        {"experiment.seed = 2\ntrain.epochs = 2\ntrain.lr = 0.1\n",
         "(experiment.seed = 1 in it, experiment.seed = 2 here)"},
        {"experiment.seed = 1\ntrain.epochs = 2\n", "(train.lr = 0.1 in it, unset here)"},
        {"experiment.seed = 1\ntrain.batch = 8\ntrain.epochs = 2\ntrain.lr = 0.1\n",
         "(train.batch = 8 here, unset in it)"},
        {"experiment.seed = 1\ntrain.epochs = 2\ntrain.lr = 0.1\ntrain.m = 0\n",
         "(train.m = 0 here, unset in it)"},
    };
    server *b = s_shard("sync", "sgd", 1, &pb);
    uint32_t generation;
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        assert_int_equal(checkpoint_load(path, b, cb, &generation, others[i].settings, &err), -1);
        assert_int_equal(err.status, ERROR_USAGE);
        if (!strstr(err.msg, others[i].said)) {
            fail_msg("case %zu: %s", i, err.msg);
        }
        assert_int_equal(b->version, 0);
    }
    assert_int_equal(checkpoint_load(path, b, cb, &generation, NULL, &err), 0);
    assert_int_equal(b->version, a->version);
    server_destroy(&b);
    free(pb);
    b = s_shard("sync", "sgd", 1, &pb);
    assert_int_equal(checkpoint_load(path, b, cb, &generation, saved, &err), 0);
    s_expect_same(a, b, ca, cb);
    server_destroy(&a);
    server_destroy(&b);
    free(pa);
    free(pb);
}

/* Cut short, one byte changed, another shard's, another rule's, another
 * optimizer's: each refused with a reason, the shard untouched. */
static void test_a_bad_checkpoint_is_refused_whole(void **state)
{
    support_fixture *f = *state;
    void *pa, *pb, *pc;
    server *a = s_shard("sync", "adam", 1, &pa);
    s_train(a, "sync");
    shard_client ca[WORKERS] = {{0}};
    char path[400], bad[400];
    snprintf(path, sizeof path, "%s/a.ckpt", f->dir);
    snprintf(bad, sizeof bad, "%s/bad.ckpt", f->dir);
    error err = {0};
    assert_int_equal(checkpoint_save(path, a, ca, 1, NULL, &err), 0);
    char *bytes = NULL;
    FILE *in = fopen(path, "rb");
    fseek(in, 0, SEEK_END);
    long len = ftell(in);
    rewind(in);
    bytes = malloc((size_t)len);
    assert_int_equal(fread(bytes, 1, (size_t)len, in), (size_t)len);
    fclose(in);

    server *fresh = s_shard("sync", "adam", 1, &pb);
    float before[2 * N];
    memcpy(before, fresh->theta, fresh->n * sizeof(float));
    shard_client cb[WORKERS] = {{0}};
    uint32_t generation;
    const struct {
        long keep, flip;
        const char *why;
    } damages[] = {{len / 2, -1, "checksum"}, {len, len / 3, "checksum"}, {7, -1, "cut short"}};
    for (int d = 0; d < 3; d++) {
        FILE *o = fopen(bad, "wb");
        fwrite(bytes, 1, (size_t)damages[d].keep, o);
        if (damages[d].flip >= 0) {
            fseek(o, damages[d].flip, SEEK_SET);
            fputc(bytes[damages[d].flip] ^ 0x10, o);
        }
        fclose(o);
        assert_int_equal(checkpoint_load(bad, fresh, cb, &generation, NULL, &err), -1);
        if (!strstr(err.msg, damages[d].why) || err.status != ERROR_RUNTIME) {
            fail_msg("damage %d: %s (status %d)", d, err.msg, err.status);
        }
        assert_memory_equal(fresh->theta, before, fresh->n * sizeof(float));
        assert_int_equal(fresh->version, 0);
    }
    server *other = s_shard("sync", "adam", 0, &pc);   /* shard 0 */
    assert_int_equal(checkpoint_load(path, other, cb, &generation, NULL, &err), -1);
    assert_non_null(strstr(err.msg, "another shard"));
    server_destroy(&other);
    free(pc);
    other = s_shard("sync", "sgd", 1, &pc);
    assert_int_equal(checkpoint_load(path, other, cb, &generation, NULL, &err), -1);
    assert_non_null(strstr(err.msg, "another optimizer"));
    server_destroy(&other);
    free(pc);
    /* of the same shapes, but another rule's, or another optimizer's with
     * vectors of the same number (they were taken up as this one's) */
    other = s_shard("average", "adam", 1, &pc);
    assert_int_equal(checkpoint_load(path, other, cb, &generation, NULL, &err), -1);
    assert_non_null(strstr(err.msg, "of another rule (sync, not average)"));
    assert_int_equal(err.status, ERROR_USAGE);   /* another job's: exit 2, as other settings */
    server_destroy(&other);
    free(pc);
    server *momentum = s_shard("sync", "momentum", 1, &pc);
    assert_int_equal(checkpoint_save(path, momentum, ca, 1, NULL, &err), 0);
    server_destroy(&momentum);
    free(pc);
    other = s_shard("sync", "nesterov", 1, &pc);
    assert_int_equal(checkpoint_load(path, other, cb, &generation, NULL, &err), -1);
    assert_non_null(strstr(err.msg, "of another optimizer of the shard (momentum, not nesterov)"));
    assert_int_equal(err.status, ERROR_USAGE);
    assert_int_equal(other->version, 0);
    server_destroy(&other);
    free(pc);
    free(bytes);
    server_destroy(&a);
    server_destroy(&fresh);
    free(pa);
    free(pb);
}

/* Counters added after a file was written (the injected faults') read as
 * 0 from it, so a checkpoint or a ps-K.json from before them still loads;
 * present, they are checked as any other: from 0 to below 2^64. */
static void test_counters_from_before_read_as_zero(void **state)
{
    (void)state;
    shard_stats st = {.shard = 1, .pushes = 7, .injected_drops = 3, .injected_duplicates = 2};
    char *json = shard_stats_json(&st);
    assert_non_null(json);
    shard_stats back;
    error err = {0};
    assert_int_equal(shard_stats_parse(json, strlen(json), &back, &err), 0);
    assert_true(back.injected_drops == 3 && back.injected_duplicates == 2 && back.pushes == 7);
    char older[4096];
    char *cut = strstr(json, ",\"injected_drops\"");
    char *rest = strstr(json, ",\"first_pull_at\"");
    assert_non_null(cut);
    assert_non_null(rest);
    snprintf(older, sizeof older, "%.*s%s", (int)(cut - json), json, rest);
    assert_null(strstr(older, "injected"));
    assert_int_equal(shard_stats_parse(older, strlen(older), &back, &err), 0);
    assert_true(back.injected_drops == 0 && back.injected_duplicates == 0 && back.pushes == 7);
    char bad[4096];
    snprintf(bad, sizeof bad, "%.*s,\"injected_drops\":-1%s", (int)(cut - json), json, rest);
    assert_int_equal(shard_stats_parse(bad, strlen(bad), &back, &err), -1);
    /* nor 2^64, which no counter holds (its conversion was undefined) */
    snprintf(bad, sizeof bad, "%.*s,\"injected_drops\":18446744073709551616%s",
             (int)(cut - json), json, rest);
    assert_int_equal(shard_stats_parse(bad, strlen(bad), &back, &err), -1);
    snprintf(bad, sizeof bad, "%.*s,\"injected_drops\":18446744073709549568%s",
             (int)(cut - json), json, rest);   /* the largest double below it */
    assert_int_equal(shard_stats_parse(bad, strlen(bad), &back, &err), 0);
    assert_true(back.injected_drops == 18446744073709549568ull);
    cJSON_free(json);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, support_fixture_setup, support_fixture_teardown)
    const struct CMUnitTest tests[] = {
        T(test_a_restored_shard_is_the_same_shard),
        T(test_another_jobs_checkpoint_is_refused),
        T(test_a_bad_checkpoint_is_refused_whole),
        T(test_counters_from_before_read_as_zero),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
