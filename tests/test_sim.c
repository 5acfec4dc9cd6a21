/* test_sim.c: the simulator. Unit: event ordering and ties, each time
 * model's mean and spread, stragglers and pauses, bad [sim] values, the
 * cores' scheduling driven alone (simcpu.c). End to end (the real
 * binary): byte-for-byte determinism, the equivalences of ALGORITHMS.md in
 * virtual time, the SSP bound under heavy stragglers, failure and
 * recovery, and 1,024 workers; asgd calibrate stopped by a signal. */
#define _DEFAULT_SOURCE   /* usleep */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <glob.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cJSON.h>
#include <zlib.h>

#include "core/experiment.h"
#include "core/real/calibrate.h"
#include "core/export.h"
#include "core/partition.h"
#include "core/sim/simqueue.h"
#include "core/sim/simstate.h"
#include "core/simtime.h"
#include "support.h"
#include "transport/wire.h"

static void test_events_come_out_in_time_order_ties_first_in(void **state)
{
    (void)state;
    simq q = {0};
    rng r = rng_derive(3, RNG_SIM, 9);
    /* 5000 events on 50 distinct times: many ties */
    for (int i = 0; i < 5000; i++) {
        sim_event e = {.t = (double)rng_below(&r, 50) * 0.5, .worker = i};
        assert_int_equal(simq_push(&q, e), 0);
    }
    sim_event prev = {.t = -1}, e;
    int n = 0;
    while (simq_pop(&q, &e)) {
        assert_true(e.t >= prev.t);
        if (e.t == prev.t) {
            assert_true(e.worker > prev.worker);   /* inserted earlier, out earlier */
        }
        prev = e;
        n++;
    }
    assert_int_equal(n, 5000);
    assert_int_equal(simq_pop(&q, &e), 0);
    simq_free(&q);
}

/* Pushes and pops interleaved, as the event loop does (slots are reused):
 * each pop is the earliest waiting event, the first pushed among equals. */
static void test_the_queue_with_slots_reused(void **state)
{
    (void)state;
    simq q = {0};
    rng r = rng_derive(4, RNG_SIM, 2);
    sim_event waiting[600];
    int nwaiting = 0, pushed = 0;
    for (int round = 0; round < 20000; round++) {
        if (nwaiting < 600 && (nwaiting == 0 || rng_below(&r, 3) > 0)) {
            sim_event e = {.t = (double)rng_below(&r, 40), .worker = pushed++};
            assert_int_equal(simq_push(&q, e), 0);
            waiting[nwaiting++] = e;
            continue;
        }
        int first = 0;   /* the reference: the least (t, pushed) by a scan */
        for (int i = 1; i < nwaiting; i++) {
            if (waiting[i].t < waiting[first].t ||
                (waiting[i].t == waiting[first].t && waiting[i].worker < waiting[first].worker)) {
                first = i;
            }
        }
        sim_event e;
        assert_int_equal(simq_pop(&q, &e), 1);
        assert_int_equal(e.worker, waiting[first].worker);
        assert_true(e.t == waiting[first].t);
        waiting[first] = waiting[--nwaiting];
    }
    assert_true(q.nslots <= 600);   /* left slots were taken again */
    simq_free(&q);
}

static sim_spec s_spec(const char *text, int workers)
{
    error err = {0};
    config *c = config_parse_string(text, "sim.ini", &err);
    assert_non_null(c);
    sim_spec s;
    if (sim_spec_configure(&s, c, workers, 1, 1, &err) < 0) {
        fail_msg("%s", err.msg);
    }
    config_destroy(&c);
    return s;
}

static void s_moments(const sim_spec *s, int k, double *mean, double *sd)
{
    rng r = rng_derive(5, RNG_SIM, 1);
    double sum = 0, sq = 0;
    const int n = 200000;
    for (int i = 0; i < n; i++) {
        double t = sim_compute_time(s, k, &r);
        assert_true(t >= 0);
        sum += t;
        sq += t * t;
    }
    *mean = sum / n;
    *sd = sqrt(sq / n - *mean * *mean);
}

static void test_time_models_have_their_mean_and_spread(void **state)
{
    (void)state;
    struct {
        const char *text;
        double mean, sd;
    } cases[] = {
        {"[sim]\ncompute = constant\ncompute_mean = 0.02\n", 0.02, 0},
        {"[sim]\ncompute = normal\ncompute_mean = 0.02\ncompute_sd = 0.002\n", 0.02, 0.002},
        {"[sim]\ncompute = lognormal\ncompute_mean = 0.02\ncompute_sd = 0.01\n", 0.02, 0.01},
        {"[sim]\ncompute = exponential\ncompute_mean = 0.02\n", 0.02, 0.02},
        {"[sim]\ncompute = null\n", 0, 0},
        /* uniform on [0.01, 0.02] and on [0.02, 0.04], each half the time */
        {"[sim]\ncompute = empirical\ncompute_quantiles = 0.01,0.02,0.04\n", 0.0225,
         0.0087797},
    };
    for (int i = 0; i < 6; i++) {
        sim_spec s = s_spec(cases[i].text, 1);
        double mean, sd;
        s_moments(&s, 0, &mean, &sd);
        if (fabs(mean - cases[i].mean) > 0.01 * cases[i].mean + 1e-12 ||
            fabs(sd - cases[i].sd) > 0.03 * cases[i].sd + 1e-7) {
            fail_msg("case %d: mean %g sd %g, want %g and %g", i, mean, sd, cases[i].mean,
                     cases[i].sd);
        }
        sim_spec_free(&s);
    }
}

/* asgd calibrate's quantiles of step times with one slow outlier in 200:
 * the simulator's draws from them have the steps' mean (they had 3.8 times
 * it when q100 was the slowest step), the inner points are the order
 * statistics', and they do not decrease. */
static void test_calibrated_quantiles_keep_the_steps_mean(void **state)
{
    (void)state;
    double times[200], sum = 0;
    for (int i = 0; i < 200; i++) {
        times[i] = i < 199 ? 0.001 + 0.0002 * i / 199.0 : 0.1;
        sum += times[i];
    }
    sim_spec s = s_spec("[sim]\ncompute = empirical\ncompute_quantiles = 1,2\n", 1);
    s.nquantiles = 11;
    sim_quantiles_of(times, 200, s.quantiles, s.nquantiles);
    for (int k = 1; k < s.nquantiles; k++) {
        assert_true(s.quantiles[k] >= s.quantiles[k - 1]);
    }
    assert_true(fabs(s.quantiles[5] - (times[99] + 0.5 * (times[100] - times[99]))) < 1e-15);
    double mean, sd;
    s_moments(&s, 0, &mean, &sd);
    if (fabs(mean - sum / 200) > 0.01 * sum / 200) {
        fail_msg("the draws' mean %g, the steps' %g (q90 %g, q100 %g)", mean, sum / 200,
                 s.quantiles[9], s.quantiles[10]);
    }
    sim_spec_free(&s);
}

static void test_speed_stragglers_and_pauses(void **state)
{
    (void)state;
    sim_spec s = s_spec("[sim]\ncompute_mean = 1\nspeed = 1,2,1,1,1,1,1,1\n"
                        "straggler_fraction = 0.25\nstraggler_slowdown = 10\n"
                        "pause = 3@5-7, 3@7-8\n", 8);
    rng r = rng_derive(1, RNG_SIM, 1);
    int slow = 0;
    for (int k = 0; k < 8; k++) {
        double t = sim_compute_time(&s, k, &r);
        double base = k == 1 ? 2 : 1;
        assert_true(t == base || t == 10 * base);
        slow += t == 10 * base;
    }
    assert_int_equal(slow, 2);                     /* a quarter of 8 */
    assert_true(sim_after_pauses(&s, 3, 4.0) == 4.0);
    assert_true(sim_after_pauses(&s, 3, 6.0) == 8.0);   /* two windows back to back */
    assert_true(sim_after_pauses(&s, 2, 6.0) == 6.0);
    assert_true(fabs(sim_message_time(&s, 0, 1.25e9, &r) - (1 + 50e-6)) < 1e-12);
    sim_spec_free(&s);
}

static void test_bad_sim_values_name_the_key(void **state)
{
    (void)state;
    const char *cases[][2] = {
        {"compute = quantum", "compute"}, {"compute_mean = -1", "compute_mean"},
        {"compute = normal\ncompute_mean = 0", "compute_mean"}, {"speed = 1,2,3", "speed"},
        {"speed = 1,0,1,1", "speed"}, {"straggler_fraction = 1.5", "straggler_fraction"},
        {"straggler_slowdown = 0.5", "straggler_slowdown"}, {"pause = 2@5", "pause"},
        {"pause = 9@1-2", "pause"}, {"pause = 1@3-2", "pause"}, {"latency = -0.1", "latency"},
        {"bandwidth = 0", "bandwidth"}, {"bandwidth = 1e-300", "bandwidth"},
        {"copy_bandwidth = 1e-300", "copy_bandwidth"},
        {"jitter = x", "jitter"}, {"apply = -1", "apply"},
        {"fail = 1", "fail"}, {"fail = 1@x", "fail"}, {"cores = -1", "cores"},
        {"migration = -1", "migration"},
        {"startup_sd = -1", "startup_sd"}, {"fail = ps1@1", "fail"}, {"fail = ps@1", "fail"},
        {"pause = ps0@1-2", "pause"}, {"compute = empirical", "compute"},
        {"compute = empirical\ncompute_quantiles = 0.2,0.1", "compute_quantiles"},
        /* a mean or sd that empirical does not use */
        {"compute = empirical\ncompute_quantiles = 1,2\ncompute_mean = 0.5", "compute_mean"},
        {"compute = empirical\ncompute_quantiles = 1,2\ncompute_sd = 0.5", "compute_sd"},
        {"profile = /nonexistent/profile.ini", "profile"},
        /* numbers as a config's: hex, infinity, and a comma with nothing
         * after it were taken */
        {"pause = 0@0x10-0x20", "pause"}, {"pause = 0@1-inf", "pause"},
        {"pause = 0@1-2,", "pause"}, {"fail = 1@1e999", "fail"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[256], want[64];
        snprintf(text, sizeof text, "[sim]\n%s\n", cases[i][0]);
        snprintf(want, sizeof want, "[sim] %s", cases[i][1]);
        error err = {0};
        config *c = config_parse_string(text, "sim.ini", &err);
        sim_spec s;
        if (sim_spec_configure(&s, c, 4, 1, 1, &err) == 0) {
            fail_msg("accepted \"%s\"", cases[i][0]);
        }
        assert_int_equal(err.status, ERROR_USAGE);
        if (!strstr(err.msg, want) || !strstr(err.msg, "sim.ini:")) {
            fail_msg("\"%s\" does not name %s", err.msg, want);
        }
        config_destroy(&c);
    }
}

/* ---- end to end ---- */

/* The simulated run of a small MLP with extra's overrides, into f->r:
 * its exit status. */
static int s_sim_status(support_fixture *f, const char *const *extra)
{
    const char *args[32] = {"train", "/dev/null", f->out_arg, "experiment.mode=sim",
                            "data.dataset=synthetic", "model.type=mlp", "model.hidden=16,8",
                            "train.epochs=2", "eval.every=0.02"};
    int k = 9;
    for (int i = 0; extra && extra[i]; i++) {
        args[k++] = extra[i];
    }
    args[k] = NULL;
    support_run_asgd(&f->r, f->dir, args);
    return f->r.status;
}

static void s_sim(support_fixture *f, const char *const *extra, char *dir, size_t n)
{
    if (s_sim_status(f, extra) != 0) {
        fail_msg("sim failed (%d): %s", f->r.status, f->r.err);
    }
    size_t len = strcspn(f->r.out, "\n");
    assert_true(len < n);
    memcpy(dir, f->r.out, len);
    dir[len] = '\0';
}

static char *s_file(const char *dir, const char *name)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char *text = support_read_file(path);
    if (!text) {
        fail_msg("no %s", path);
    }
    return text;
}

static double s_num_of(const char *dir, const char *file, const char *key)
{
    char *text = s_file(dir, file);
    cJSON *j = cJSON_Parse(text);
    free(text);
    cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    if (!cJSON_IsNumber(v)) {
        fail_msg("no number %s", key);
    }
    double x = v->valuedouble;
    cJSON_Delete(j);
    return x;
}

static double s_num(const char *dir, const char *key)
{
    return s_num_of(dir, "summary.json", key);
}

static void test_same_seed_same_bytes(void **state)
{
    support_fixture *f = *state;
    const char *const extra[] = {"train.algorithm=hogwild", "cluster.workers=16",
                                 "sim.compute=lognormal", "sim.compute_sd=0.0005",
                                 "sim.jitter=0.00002", "sim.straggler_fraction=0.25", NULL};
    char a[4096], b[4096];
    s_sim(f, extra, a, sizeof a);
    s_sim(f, extra, b, sizeof b);
    assert_string_not_equal(a, b);
    const char *files[] = {"eval.csv", "steps.csv"};
    for (int i = 0; i < 2; i++) {
        char *x = s_file(a, files[i]), *y = s_file(b, files[i]);
        assert_true(strlen(x) > 200);
        assert_string_equal(x, y);
        free(x);
        free(y);
    }
    /* the summaries differ only in the wall clock: how long, and when */
    char *x = s_file(a, "summary.json"), *y = s_file(b, "summary.json");
    cJSON *jx = cJSON_Parse(x), *jy = cJSON_Parse(y);
    const char *wall[] = {"wall_time_s", "started"};
    for (int i = 0; i < 2; i++) {
        cJSON_DeleteItemFromObject(jx, wall[i]);
        cJSON_DeleteItemFromObject(jy, wall[i]);
    }
    cJSON *session;   /* and the one session's start */
    cJSON_ArrayForEach(session, cJSON_GetObjectItemCaseSensitive(jx, "sessions")) {
        cJSON_DeleteItemFromObject(session, "started");
    }
    cJSON_ArrayForEach(session, cJSON_GetObjectItemCaseSensitive(jy, "sessions")) {
        cJSON_DeleteItemFromObject(session, "started");
    }
    char *px = cJSON_Print(jx), *py = cJSON_Print(jy);
    assert_string_equal(px, py);
    cJSON_free(px);
    cJSON_free(py);
    cJSON_Delete(jx);
    cJSON_Delete(jy);
    free(x);
    free(y);
    /* a different seed: a different run */
    const char *const other[] = {"train.algorithm=hogwild", "cluster.workers=16",
                                 "sim.compute=lognormal", "sim.compute_sd=0.0005",
                                 "experiment.seed=2", NULL};
    s_sim(f, other, b, sizeof b);
    x = s_file(a, "steps.csv");
    y = s_file(b, "steps.csv");
    assert_string_not_equal(x, y);
    free(x);
    free(y);
}

/* Step index and loss of every row, and the final loss. */
static char *s_trajectory(support_fixture *f, const char *algorithm, ...)
{
    char alg[64], dir[4096];
    snprintf(alg, sizeof alg, "train.algorithm=%s", algorithm);
    const char *extra[16] = {alg, "cluster.workers=1", "cluster.servers=2"};
    va_list keys;
    va_start(keys, algorithm);
    for (int k = 3; k < 15 && (extra[k] = va_arg(keys, const char *)); k++) {
    }
    va_end(keys);
    if (strcmp(algorithm, "sequential") == 0) {
        const char *args[] = {"train", "/dev/null", f->out_arg, "data.dataset=synthetic",
                              "model.type=mlp", "model.hidden=16,8", "train.epochs=2",
                              "eval.every=0", NULL};
        support_run_asgd(&f->r, f->dir, args);
        assert_int_equal(f->r.status, 0);
        size_t len = strcspn(f->r.out, "\n");
        memcpy(dir, f->r.out, len);
        dir[len] = '\0';
    } else {
        s_sim(f, extra, dir, sizeof dir);
    }
    return support_trajectory(dir);
}

static void test_equivalences_in_virtual_time(void **state)
{
    support_fixture *f = *state;
    char *seq = s_trajectory(f, "sequential", NULL);
    char *sync = s_trajectory(f, "sync", NULL);
    char *hog = s_trajectory(f, "hogwild", NULL);
    char *down = s_trajectory(f, "downpour", "algorithm.window=1",
                              "algorithm.server_optimizer=sgd", "algorithm.local_optimizer=sgd",
                              NULL);
    char *agn = s_trajectory(f, "agn", "algorithm.window=1", NULL);
    assert_true(strlen(seq) > 1000);
    assert_string_equal(sync, seq);
    assert_string_equal(hog, seq);
    assert_string_equal(down, seq);
    assert_string_equal(agn, hog);
    /* AGN with window 1 pushes -lr g, which the centre adds: Hogwild, step
     * for step, also where pushes are stale (4 workers) */
    char *hog4 = s_trajectory(f, "hogwild", "cluster.workers=4", NULL);
    char *agn4 = s_trajectory(f, "agn", "cluster.workers=4", "algorithm.window=1", NULL);
    assert_true(strlen(hog4) > 1000);
    assert_string_equal(agn4, hog4);
    free(hog4);
    free(agn4);
    free(seq);
    free(sync);
    free(hog);
    free(down);
    free(agn);
}

/* DC-ASGD: with lambda = 0 it is Hogwild step for step, at 4 workers; with
 * its lambda the correction changes the steps (the workers' gradients are
 * stale), and with one worker it is sequential SGD again. */
static void test_dcasgd_equivalences_in_virtual_time(void **state)
{
    support_fixture *f = *state;
    char *seq = s_trajectory(f, "sequential", NULL);
    char *one = s_trajectory(f, "dcasgd", NULL);
    char *hog = s_trajectory(f, "hogwild", "cluster.workers=4", NULL);
    char *zero = s_trajectory(f, "dcasgd", "cluster.workers=4", "algorithm.lambda=0", NULL);
    char *dc = s_trajectory(f, "dcasgd", "cluster.workers=4", "algorithm.lambda=1", NULL);
    assert_string_equal(one, seq);
    assert_true(strlen(hog) > 1000);
    assert_string_equal(zero, hog);
    assert_string_not_equal(dc, hog);
    free(seq);
    free(one);
    free(hog);
    free(zero);
    free(dc);
}

/* The staleness-scaled rules' checks in ALGORITHMS.md: staleweight with a
 * constant weight is Hogwild at 4 workers, step for step; delayadaptive
 * and gapaware with one worker (nothing is stale, no gap) are sequential
 * SGD; and the default poly weight does change the steps. */
/* Past the processes' 4,096: 6,000 simulated workers over 2,000 examples
 * (iid deals them round again, one each) each take their minibatch, and
 * every example is counted; real mode still refuses that many, by key. */
static void test_more_workers_than_processes_allow(void **state)
{
    support_fixture *f = *state;
    const char *many[] = {"train.algorithm=hogwild", "cluster.workers=6000",
                          "data.train_size=2000", "train.batch=1",
                          "train.epochs=6", "model.type=softmax", "sim.compute=null",
                          "eval.every=0", NULL};
    char dir[4096];
    s_sim(f, many, dir, sizeof dir);
    assert_true(s_num(dir, "updates") == 12000);
    assert_true(s_num(dir, "samples") == 12000);
    assert_true(s_num(dir, "workers") == 6000);
    const char *real[] = {"train", "/dev/null", f->out_arg, "train.algorithm=hogwild",
                          "cluster.workers=6000", "data.dataset=synthetic", NULL};
    support_run_asgd(&f->r, f->dir, real);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "cluster"));
    assert_non_null(strstr(f->r.err, "workers"));
}

/* [sim] compress_cpu and decode_cpu: compressing each push is the
 * worker's work, decoding it the shard's, each on the way of one worker's
 * 10 steps (the last push's decoding ends after the time axis, which ends
 * where the shard takes it). They cost nothing before: a compressed run
 * simulated faster than a plain one, its real runs 3 to 8 times slower. */
static void test_compression_takes_work_at_both_ends(void **state)
{
    support_fixture *f = *state;
    const char *costs[][2] = {{"sim.compress_cpu=0", "sim.decode_cpu=0.001"},
                              {"sim.compress_cpu=0.001", "sim.decode_cpu=0.001"},
                              {"sim.compress_cpu=0.001", "sim.decode_cpu=0.002"}};
    double t[3];
    for (int i = 0; i < 3; i++) {
        const char *extra[] = {"data.train_size=640", "model.type=softmax",
                               "train.algorithm=hogwild", "train.batch=64", "train.epochs=1",
                               "cluster.workers=1", "algorithm.compress=fp16",
                               "sim.compute=constant", "sim.compute_mean=0.01", "eval.every=0",
                               costs[i][0], costs[i][1], NULL};
        char dir[4096];
        s_sim(f, extra, dir, sizeof dir);
        assert_true(s_num(dir, "updates") == 10);
        t[i] = s_num(dir, "time_s");
    }
    if (fabs(t[1] - t[0] - 10 * 0.001) > 1e-9 || fabs(t[2] - t[1] - 9 * 0.001) > 1e-9) {
        fail_msg("time_s %.9f, %.9f, %.9f: compressing added %.9f, decoding %.9f", t[0], t[1],
                 t[2], t[1] - t[0], t[2] - t[1]);
    }
}

/* asgd calibrate prices values through shared segments only where a real
 * worker takes them: not with compression or injected faults, whose
 * values cross the socket (a profile of 1e15 B/s made a compressed job's
 * pulls 4 times too cheap). */
static void test_calibrate_takes_the_path_the_run_takes(void **state)
{
    support_fixture *f = *state;
    const char *ways[] = {"cluster.shm=auto", "algorithm.compress=fp16", "cluster.drop=0.01"};
    for (int i = 0; i < 3; i++) {
        char profile[600];
        snprintf(profile, sizeof profile, "%s/p%d.ini", f->dir, i);
        const char *calibrate[] = {"calibrate", "/dev/null", "-o", profile,
                                   "train.algorithm=hogwild", "data.dataset=synthetic",
                                   "model.type=softmax", ways[i], NULL};
        support_run_asgd(&f->r, f->dir, calibrate);
        if (f->r.status != 0) {
            fail_msg("calibrate %s: %s", ways[i], f->r.err);
        }
        error err = {0};
        config *written = config_load(profile, &err);
        assert_non_null(written);
        double bandwidth, copy;
        assert_int_equal(config_get_double(written, "sim", "bandwidth", 0, 0, 1e300,
                                           CONFIG_CLOSED, &bandwidth, &err), 0);
        assert_int_equal(config_get_double(written, "sim", "copy_bandwidth", 0, 0, 1e300,
                                           CONFIG_CLOSED, &copy, &err), 0);
        /* through a segment, no bandwidth (1e15) but the copies'; through
         * the socket, the socket's (measured: 1e15 too where the model is too
         * small to tell) and no copy; compression's work, where there is
         * compression (it was left out) */
        bool segments = strstr(f->r.out, "values copied through shared segments") != NULL;
        if (i == 0 ? !(bandwidth == 1e15 && copy > 0 && segments) : copy != 0 || segments) {
            fail_msg("%s: bandwidth %g, copy_bandwidth %g", ways[i], bandwidth, copy);
        }
        double encode, decode;
        assert_int_equal(config_get_double(written, "sim", "compress_cpu", -1, 0, 1e3,
                                           CONFIG_CLOSED, &encode, &err), 0);
        assert_int_equal(config_get_double(written, "sim", "decode_cpu", -1, 0, 1e3,
                                           CONFIG_CLOSED, &decode, &err), 0);
        if (i == 1 ? !(encode > 0 && decode > 0) : encode != 0 || decode != 0) {
            fail_msg("%s: compress_cpu %g, decode_cpu %g", ways[i], encode, decode);
        }
        config_destroy(&written);
    }
    /* a profile of shared segments for a run without them: said */
    char profile_key[700];
    snprintf(profile_key, sizeof profile_key, "sim.profile=%s/p0.ini", f->dir);
    const char *extra[] = {profile_key, "train.algorithm=hogwild", "model.type=softmax",
                           "train.epochs=0.1", "cluster.shm=off", NULL};
    assert_int_equal(s_sim_status(f, extra), 0);
    if (!strstr(f->r.err, "shared segments on (") ||
        !strstr(f->r.err, "shared segments off: its compute")) {
        fail_msg("no word of the profile's shared segments: %s", f->r.err);
    }
}

/* A profile: what asgd calibrate measures comes back as [sim]'s values, and
 * it sets the simulated time as it should (one synchronous worker whose
 * minibatch takes exactly 2 ms or 4 ms, on a free network: the run's time
 * doubles), while a key the experiment gives still wins; the costs it
 * prints are those it wrote, however small. */
static void test_a_profile_round_trips_and_sets_the_time(void **state)
{
    support_fixture *f = *state;
    char profile[600], config_arg[700];
    snprintf(profile, sizeof profile, "%s/profile.ini", f->dir);
    const char *calibrate[] = {"calibrate", "/dev/null", "-o", profile,
                               "train.algorithm=hogwild", "data.dataset=synthetic",
                               "model.type=softmax", "cluster.servers=2", NULL};
    support_run_asgd(&f->r, f->dir, calibrate);
    if (f->r.status != 0) {
        fail_msg("calibrate: %s", f->r.err);
    }
    assert_non_null(strstr(f->r.out, "compute:"));
    error err = {0};
    config *written = config_load(profile, &err);
    assert_non_null(written);
    const char *host, *date;
    assert_int_equal(config_get_string(written, "host", "host", "", &host, &err), 0);
    assert_int_equal(config_get_string(written, "host", "date", "", &date, &err), 0);
    assert_true(host[0] && strlen(date) == 20);
    double want[SIM_MAX_QUANTILES];
    int nwant;
    assert_int_equal(config_get_double_list(written, "sim", "compute_quantiles", "", 0, 1e6,
                                            want, SIM_MAX_QUANTILES, &nwant, &err), 0);
    assert_int_equal(nwant, 11);
    char text[900];
    snprintf(text, sizeof text, "[sim]\nprofile = %s\n", profile);
    sim_spec s = s_spec(text, 2);
    assert_int_equal(s.compute, SIM_EMPIRICAL);
    assert_int_equal(s.nquantiles, 11);
    for (int i = 0; i < 11; i++) {
        assert_true(s.quantiles[i] == want[i] && (i == 0 || want[i] >= want[i - 1]));
    }
    double latency;
    assert_int_equal(config_get_double(written, "sim", "latency", 0, 0, 1, CONFIG_CLOSED,
                                       &latency, &err), 0);
    assert_true(s.latency == latency && latency >= 0 && s.bandwidth > 0 && s.cores > 0);
    /* the work each process does: messages, copies through the segments
     * (the default [cluster] shm), evaluations, start-up, turns */
    assert_true(s.message_cpu > 0 && s.copy_bandwidth > 0 && s.eval_cost > 0 &&
                s.startup_cpu > 0 && s.timeslice > 0 && s.apply > 0);
    double migration;   /* the kernel's, or its default: 0 where a host sets it so */
    assert_int_equal(config_get_double(written, "sim", "migration", -1, -1, 1, CONFIG_CLOSED,
                                       &migration, &err), 0);
    assert_true(s.migration == migration && migration >= 0);
    assert_true(s.bandwidth == 1e15);   /* no values cross a socket */
    /* what it prints is what it wrote, to three digits: a pull's answer of
     * 1.4e-7 s printed as "0.000 ms" */
    const char *line = strstr(f->r.out, "apply: ");
    assert_non_null(line);
    double printed[2];
    char units[2][8];
    if (sscanf(line, "apply: %lf %7s a push, %lf %7s a pull", &printed[0], units[0],
               &printed[1], units[1]) != 4) {
        fail_msg("calibrate printed \"%.60s\"", line);
    }
    /* timed on one shard's part, as each of the 2 is charged (it was the
     * whole vector's, charged at both) */
    int shards;
    size_t values;
    assert_int_equal(sscanf(strstr(line, "(at each of "), "(at each of %d shards: shard 0's %zu",
                            &shards, &values), 2);
    uint64_t lo, hi;
    partition_range((32 + 1) * 10, 2, 0, &lo, &hi);   /* softmax: dim 32, 10 classes */
    assert_true(shards == 2 && values == hi - lo && values < (32 + 1) * 10);
    double written_costs[2] = {s.apply, s.answer};
    for (int i = 0; i < 2; i++) {
        double unit = strcmp(units[i], "us") == 0 ? 1e-6 : strcmp(units[i], "ms") == 0 ? 1e-3 : 1;
        if (written_costs[i] <= 0 || fabs(printed[i] * unit / written_costs[i] - 1) > 0.01) {
            fail_msg("calibrate printed %g %s for %g s", printed[i], units[i], written_costs[i]);
        }
    }
    sim_spec_free(&s);
    config_destroy(&written);
    /* used for another rule, or a model of another size (or kind, or
     * minibatch, or device, or shards, or transport) it says so: a softmax
     * profile gave an MLP of batch 512 a 60 us step where its own was 18
     * ms, and one of 1 shard charges each of 4 the whole vector's apply */
    snprintf(config_arg, sizeof config_arg, "sim.profile=%s", profile);
    const char *variants[5][4] = {
        {"train.algorithm=hogwild", "data.dim=32", "cluster.servers=2", "cluster.transport=ipc"},
        {"train.algorithm=sync", "data.dim=32", "cluster.servers=2", "cluster.transport=ipc"},
        {"train.algorithm=hogwild", "data.dim=16", "cluster.servers=2", "cluster.transport=ipc"},
        {"train.algorithm=hogwild", "data.dim=32", "cluster.servers=4", "cluster.transport=ipc"},
        {"train.algorithm=hogwild", "data.dim=32", "cluster.servers=2", "cluster.transport=tcp"}};
    const char *wants[5] = {NULL, "(330 parameters), batch 64, rule sync, on cpu, 2 shards",
                            "(170 parameters), batch 64, rule hogwild, on cpu, 2 shards",
                            "batch 64, rule hogwild, on cpu, 4 shards over ipc",
                            "batch 64, rule hogwild, on cpu, 2 shards over tcp"};
    for (int i = 0; i < 5; i++) {
        const char *run[] = {"train", "/dev/null", f->out_arg, "experiment.mode=sim",
                             variants[i][0], variants[i][1], "data.dataset=synthetic",
                             "model.type=softmax", "train.epochs=0.1", variants[i][2],
                             variants[i][3], config_arg, NULL};
        support_run_asgd(&f->r, f->dir, run);
        assert_int_equal(f->r.status, 0);
        const char *said = strstr(f->r.err, "measured for model softmax (330 parameters), "
                                            "batch 64, rule hogwild, on cpu, 2 shards over ipc");
        if (wants[i] ? !said || !strstr(f->r.err, wants[i]) : said != NULL) {
            fail_msg("the profile of hogwild used by %s %s %s %s: \"%s\"", variants[i][0],
                     variants[i][1], variants[i][2], variants[i][3], f->r.err);
        }
    }
    /* the run keeps a copy of the profile it read */
    char kept[4300];
    snprintf(kept, sizeof kept, "%.*s/inputs/sim.profile-profile.ini",
             (int)strcspn(f->r.out, "\n"), f->r.out);
    char *copy = support_read_file(kept), *original = support_read_file(profile);
    assert_non_null(copy);
    assert_string_equal(copy, original);
    free(copy);
    free(original);
    /* the time it sets */
    double times[3];
    const char *ms[3] = {"0.002,0.002", "0.004,0.004", NULL};
    for (int i = 0; i < 3; i++) {
        snprintf(text, sizeof text, "[host]\nhost = test\n[sim]\ncompute = empirical\n"
                 "compute_quantiles = %s\nlatency = 0\nbandwidth = 1e15\n",
                 ms[i] ? ms[i] : ms[1]);
        support_write_file(profile, text);
        snprintf(config_arg, sizeof config_arg, "sim.profile=%s", profile);
        const char *extra[] = {"train.algorithm=sync", "cluster.workers=1", "eval.every=0",
                               config_arg, i == 2 ? "sim.compute_quantiles=0.001,0.001" : NULL,
                               NULL};
        char dir[4096];
        s_sim(f, extra, dir, sizeof dir);
        times[i] = s_num(dir, "time_s") / s_num(dir, "updates");
    }
    assert_true(fabs(times[0] - 0.002) < 1e-9);
    assert_true(fabs(times[1] - 0.004) < 1e-9);
    assert_true(fabs(times[2] - 0.001) < 1e-9);   /* the experiment's own key wins */
    /* a mean over the profile's empirical model: refused (it changed nothing) */
    const char *mean[] = {"train", "/dev/null", f->out_arg, "experiment.mode=sim",
                          "train.algorithm=hogwild", "data.dataset=synthetic", config_arg,
                          "sim.compute_mean=0.01", NULL};
    support_run_asgd(&f->r, f->dir, mean);
    assert_int_equal(f->r.status, 2);
    if (!strstr(f->r.err, "sim.compute_mean=0.01") || !strstr(f->r.err, "(the profile's)")) {
        fail_msg("%s", f->r.err);
    }
    support_write_file(profile, "[sim]\ncompute_men = 0.1\n");   /* a typo in a profile */
    const char *bad[] = {"train", "/dev/null", f->out_arg, "experiment.mode=sim",
                         "train.algorithm=hogwild", "data.dataset=synthetic", config_arg,
                         NULL};
    support_run_asgd(&f->r, f->dir, bad);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "compute_men"));
    assert_non_null(strstr(f->r.err, "profile"));
}

/* A compute key the model does not read is not used: said, and left out
 * of config.ini (compute_sd beside exponential was kept as if it had
 * shaped the run); so are apply threads, which no simulated shard has.
 * normal's draws below 0 take no time: the mean they make is said where it
 * is off (1.396 ms for a mean of 1 ms and an sd of 2), and is what the
 * run takes. */
static void test_compute_keys_the_model_does_not_read(void **state)
{
    support_fixture *f = *state;
    const char *exponential[] = {"train.algorithm=hogwild", "sim.compute=exponential",
                                 "sim.compute_sd=0.0005", "sim.compute_quantiles=1,2",
                                 "algorithm.server_threads=2", NULL};
    char dir[4096];
    s_sim(f, exponential, dir, sizeof dir);
    const char *keys[] = {"sim.compute_sd=0.0005", "sim.compute_quantiles=1,2",
                          "algorithm.server_threads=2"};
    for (int i = 0; i < 3; i++) {
        char said[128];
        snprintf(said, sizeof said, "%s: not used by this configuration", keys[i]);
        if (!strstr(f->r.err, said)) {
            fail_msg("no word of %s: %s", keys[i], f->r.err);
        }
    }
    char *config = s_file(dir, "config.ini");
    assert_non_null(strstr(config, "compute = exponential"));
    assert_null(strstr(config, "compute_sd"));
    assert_null(strstr(config, "compute_quantiles"));
    assert_null(strstr(config, "server_threads"));
    free(config);
    const char *normal[] = {"train.algorithm=sync", "cluster.workers=1", "eval.every=0",
                            "sim.latency=0", "sim.bandwidth=1e15", "sim.compute=normal",
                            "sim.compute_mean=0.001", "sim.compute_sd=0.002", NULL};
    s_sim(f, normal, dir, sizeof dir);
    assert_non_null(strstr(f->r.err, "sim.compute_sd=0.002: 0.002 beside compute_mean 0.001: "
                                     "compute = normal draws below 0, taken as no time, and "
                                     "its steps take 0.001396 s on average"));
    double step = s_num(dir, "time_s") / s_num(dir, "updates");
    assert_true(step > 0.0012 && step < 0.0016);   /* 1.396 ms, not 1 ms */
    const char *narrow[] = {"train.algorithm=hogwild", "sim.compute=normal",
                            "sim.compute_mean=0.001", "sim.compute_sd=0.0003", NULL};
    s_sim(f, narrow, dir, sizeof dir);
    assert_null(strstr(f->r.err, "on average"));   /* 0.01% off: not worth a word */
}

/* sim.shard_bandwidth is the shard's own link, which its workers' links
 * share: a sync round of one worker is its push in, its reply out and its
 * step; of 8, each push in after the ones before (and the replies out
 * likewise, overlapping the next round's pushes): 8 + 1 messages' time and
 * a step. Each worker's link its own (0), 8 workers' pushes went in at 8x
 * the bandwidth, and a round took its step alone. */
static void test_a_shards_link_is_shared(void **state)
{
    support_fixture *f = *state;
    const char *keys[] = {"train.algorithm=sync", NULL, "eval.every=0", "sim.latency=0",
                          "sim.bandwidth=1e15", "sim.compute=constant", "sim.compute_mean=0.001",
                          NULL, NULL};
    double round[2][2], bytes = 0;
    for (int i = 0; i < 2; i++) {
        for (int shared = 0; shared < 2; shared++) {
            keys[1] = i ? "cluster.workers=8" : "cluster.workers=1";
            keys[7] = shared ? "sim.shard_bandwidth=1e6" : NULL;
            char dir[4096];
            s_sim(f, keys, dir, sizeof dir);
            round[i][shared] = s_num(dir, "time_s") / s_num(dir, "updates");
            bytes = s_num(dir, "push_bytes") / s_num(dir, "push_messages");
        }
    }
    double message = bytes / 1e6;   /* a push's, or a reply's, time through it */
    assert_true(message > 1e-4);
    assert_true(fabs(round[0][0] - 0.001) < 1e-9 && fabs(round[1][0] - 0.001) < 1e-9);
    if (fabs(round[0][1] - (2 * message + 0.001)) > 0.02 * round[0][1] ||
        fabs(round[1][1] - (9 * message + 0.001)) > 0.02 * round[1][1]) {
        fail_msg("rounds of %g and %g s, for %g and %g", round[0][1], round[1][1],
                 2 * message + 0.001, 9 * message + 0.001);
    }
    const char *slow[] = {"sim.shard_bandwidth=0.5", NULL};
    assert_int_equal(s_sim_status(f, slow), 2);
    assert_non_null(strstr(f->r.err, "sim.shard_bandwidth=0.5: 0.5 bytes/s: at least 1"));
}

/* Ctrl-C stops a simulated run, incomplete, with no final evaluation (an
 * extra row of an incomplete run, which real and threads mode do not
 * make: with eval.every = 0, eval.csv keeps its initial row alone), and
 * log.txt's last line says why. */
static void test_sigint_stops_a_simulation(void **state)
{
    support_fixture *f = *state;
    const char *args[] = {"train", "/dev/null", f->out_arg, "experiment.mode=sim",
                          "experiment.name=long", "experiment.run_id=r",
                          "data.dataset=synthetic", "model.type=mlp", "train.algorithm=hogwild",
                          "cluster.workers=2", "train.epochs=100000", "eval.every=0", NULL};
    int pid = support_spawn_asgd(f->dir, args);
    char eval[700], log[700];
    snprintf(eval, sizeof eval, "%s/long/r/eval.csv", f->out);
    snprintf(log, sizeof log, "%s/long/r/log.txt", f->out);
    if (!support_wait_lines(eval, 2, 30)) {
        kill(pid, SIGKILL);
        fail_msg("the run did not start");
    }
    kill(pid, SIGINT);
    assert_int_equal(support_wait(pid), 1);
    assert_int_equal(support_count_lines(eval), 2);   /* the header and the initial row */
    char *text = support_read_file(log);
    assert_non_null(strstr(text, "stopped at"));
    assert_non_null(strstr(text, "interrupted at"));
    free(text);
}

/* SIGTERM while calibrate times messages: it exits 143, its echo process
 * goes with it (it was left waiting for ever) and its socket's private
 * folder is removed (the socket was left in /tmp). The signal is sent
 * once the echo has used 20 ms of CPU, answering messages (about a tenth
 * of its work); a run that ends before then is run again. */
static void test_calibrate_stopped_leaves_nothing(void **state)
{
    support_fixture *f = *state;
    char profile[600];
    snprintf(profile, sizeof profile, "%s/stopped.ini", f->dir);
    const char *calibrate[] = {"calibrate", "/dev/null", "-o", profile,
                               "train.algorithm=hogwild", "data.dataset=synthetic",
                               "model.type=softmax", NULL};
    int pid = -1, echo = -1, status = 0;
    for (int attempt = 0; attempt < 5 && status != 128 + SIGTERM; attempt++) {
        pid = support_spawn_asgd(f->dir, calibrate);
        assert_true(pid > 0);
        echo = -1;
        while (echo < 0 && support_alive(pid)) {
            if (support_children(pid, "calibrate", &echo, 1) == 0) {
                echo = -1;
                usleep(1000);
            }
        }
        long tick_20ms = sysconf(_SC_CLK_TCK) / 50;
        for (int ms = 0; ms < 60000 && echo > 0 && support_alive(echo) &&
                         support_cpu_ticks(echo) < tick_20ms; ms++) {
            usleep(1000);
        }
        if (echo > 0 && support_alive(echo)) {
            kill(pid, SIGTERM);
        }
        status = support_wait(pid);
    }
    assert_int_equal(status, 128 + SIGTERM);
    for (int i = 0; i < 500 && support_alive(echo); i++) {
        usleep(10000);
    }
    assert_false(support_alive(echo));
    char pattern[64];
    snprintf(pattern, sizeof pattern, "/tmp/asgd-calibrate-%d*", pid);
    glob_t left;
    if (glob(pattern, 0, NULL, &left) == 0) {
        fail_msg("left behind: %s", left.gl_pathv[0]);
    }
    assert_int_equal(access(profile, F_OK), -1);
}

static void test_staleness_scaled_rules_in_virtual_time(void **state)
{
    support_fixture *f = *state;
    char *seq = s_trajectory(f, "sequential", NULL);
    char *adaptive = s_trajectory(f, "delayadaptive", NULL);
    char *gap = s_trajectory(f, "gapaware", NULL);   /* one worker: no gap */
    char *hog = s_trajectory(f, "hogwild", "cluster.workers=4", NULL);
    char *constant = s_trajectory(f, "staleweight", "cluster.workers=4",
                                  "algorithm.weight=constant", NULL);
    char *poly = s_trajectory(f, "staleweight", "cluster.workers=4", NULL);
    assert_string_equal(adaptive, seq);
    assert_string_equal(gap, seq);
    assert_string_equal(constant, hog);
    assert_string_not_equal(poly, hog);
    free(seq);
    free(adaptive);
    free(gap);
    free(hog);
    free(constant);
    free(poly);
}

/* FedBuff with K = 1 and no staleness weight adds each delta at once (AGN
 * without its 1 / lambda): with window 1 it is Hogwild at 4 workers, and
 * with one worker sequential SGD; its default buffer changes the steps.
 * Post-local SGD whose switch comes at the last epoch is averaging after
 * every step, and a switch half way is neither. */
static void test_fedbuff_and_post_local_in_virtual_time(void **state)
{
    support_fixture *f = *state;
    char *seq = s_trajectory(f, "sequential", NULL);
    char *one = s_trajectory(f, "fedbuff", "algorithm.window=1", NULL);
    char *hog = s_trajectory(f, "hogwild", "cluster.workers=4", NULL);
    char *k1 = s_trajectory(f, "fedbuff", "cluster.workers=4", "algorithm.window=1",
                            "algorithm.buffer=1", "algorithm.weight=none", NULL);
    char *buffered = s_trajectory(f, "fedbuff", "cluster.workers=4", "algorithm.window=1", NULL);
    assert_string_equal(one, seq);
    assert_string_equal(k1, hog);
    assert_string_not_equal(buffered, hog);
    char *every = s_trajectory(f, "average", "cluster.workers=2", "algorithm.window=1", NULL);
    char *all = s_trajectory(f, "average", "cluster.workers=2", "algorithm.window=10",
                             "algorithm.switch_epoch=2", NULL);
    char *half = s_trajectory(f, "average", "cluster.workers=2", "algorithm.window=10",
                              "algorithm.switch_epoch=1", NULL);
    char *local = s_trajectory(f, "average", "cluster.workers=2", "algorithm.window=10", NULL);
    assert_true(strlen(every) > 1000);
    assert_string_equal(all, every);
    assert_string_not_equal(half, every);
    assert_string_not_equal(half, local);
    char *texts[] = {seq, one, hog, k1, buffered, every, all, half, local};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        free(texts[i]);
    }
}

/* Compression in virtual time: topk:1 keeps every value, so with one
 * worker (where the bytes' time cannot reorder pushes) it is the
 * uncompressed run step for step, with or without error feedback (which
 * then has nothing to keep), at twice the bytes (index and value); fp16
 * halves them and does change the steps. The bytes set the network time:
 * on slow links, 4 workers' fp16 pushes finish sooner. A rule that pushes
 * whole models takes fp16, not what is made for updates. */
static void test_compression_in_virtual_time(void **state)
{
    support_fixture *f = *state;
    const char *runs[][3] = {
        {"algorithm.compress=none", "cluster.workers=1"},
        {"algorithm.compress=topk:1", "cluster.workers=1"},
        {"algorithm.compress=topk:1", "algorithm.error_feedback=on"},
        {"algorithm.compress=fp16", "cluster.workers=1"},
        {"algorithm.compress=none", "sim.bandwidth=1e6"},
        {"algorithm.compress=fp16", "sim.bandwidth=1e6"},
    };
    enum { RUNS = sizeof runs / sizeof runs[0] };
    char dirs[RUNS][4096];
    for (int i = 0; i < RUNS; i++) {
        const char *extra[] = {"train.algorithm=hogwild", i < 4 ? "cluster.workers=1"
                               : "cluster.workers=4", "cluster.servers=2", runs[i][0],
                               runs[i][1], NULL};
        s_sim(f, extra, dirs[i], sizeof dirs[i]);
    }
    char *plain = support_trajectory(dirs[0]), *all = support_trajectory(dirs[1]);
    char *all_ef = support_trajectory(dirs[2]), *half = support_trajectory(dirs[3]);
    double n = s_num(dirs[0], "params");
    assert_float_equal(s_num(dirs[0], "bytes_per_push"), 2 * WIRE_HEADER_SIZE + 4 * n, 0);
    assert_float_equal(s_num(dirs[1], "bytes_per_push"), 2 * WIRE_HEADER_SIZE + 8 * n, 0);
    assert_float_equal(s_num(dirs[3], "bytes_per_push"), 2 * WIRE_HEADER_SIZE + 2 * n, 0);
    /* every push reaches both shards */
    assert_float_equal(s_num(dirs[3], "push_bytes"),
                       s_num(dirs[3], "bytes_per_push") * s_num(dirs[3], "pushes") / 2, 0);
    assert_true(strlen(plain) > 1000);
    assert_string_equal(all, plain);
    assert_string_equal(all_ef, plain);
    assert_string_not_equal(half, plain);
    assert_true(s_num(dirs[5], "time_s") < s_num(dirs[4], "time_s"));
    free(plain);
    free(all);
    free(all_ef);
    free(half);
    /* average pushes whole models: what is made for updates is refused
     * (topk left the centre's other entries 0, error feedback counted the
     * model twice), fp16 rounds them */
    const char *refused[][3] = {{"algorithm.compress=topk:0.1", NULL, "algorithm.compress"},
                                {"algorithm.compress=sign", NULL, "algorithm.compress"},
                                {"algorithm.compress=fp16", "algorithm.error_feedback=on",
                                 "algorithm.error_feedback"}};
    for (int i = 0; i < 3; i++) {
        const char *args[] = {"train", "/dev/null", f->out_arg, "experiment.mode=sim",
                              "data.dataset=synthetic", "train.algorithm=average",
                              refused[i][0], refused[i][1], NULL};
        support_run_asgd(&f->r, f->dir, args);
        assert_int_equal(f->r.status, 2);
        if (!strstr(f->r.err, refused[i][2]) || !strstr(f->r.err, "pushes whole models")) {
            fail_msg("%s: %s", refused[i][0], f->r.err);
        }
    }
    const char *rounded[] = {"train.algorithm=average", "algorithm.compress=fp16", NULL};
    s_sim(f, rounded, dirs[0], sizeof dirs[0]);
    /* qsgd under error feedback is said where it may lose more than its
     * input (the residual can then grow without bound): 4 bits over a
     * shard's thousands of values, not 16 */
    const char *bits[] = {"algorithm.compress=qsgd:4", "algorithm.compress=qsgd:16"};
    for (int i = 0; i < 2; i++) {
        const char *ef[] = {"train.algorithm=hogwild", bits[i], "algorithm.error_feedback=on",
                            NULL};
        s_sim(f, ef, dirs[0], sizeof dirs[0]);
        bool said = strstr(f->r.err, "the residual error feedback keeps can grow without bound");
        if (said != (i == 0)) {
            fail_msg("%s with error feedback: \"%s\"", bits[i], f->r.err);
        }
    }
}

/* Least squares end to end: 4 simulated workers fit regression data to
 * near the noise's floor (0.1^2 / 2), the summary's accuracy is null (a
 * regression has none), and a label-skewed split of targets is a config
 * error. */
static void test_least_squares_in_virtual_time(void **state)
{
    support_fixture *f = *state;
    const char *extra[] = {"train.algorithm=delayadaptive", "cluster.workers=4",
                           "data.dataset=regression", "data.dim=20", "model.type=linear",
                           "train.lr=0.02", NULL};
    char dir[4096];
    s_sim(f, extra, dir, sizeof dir);
    double loss = s_num(dir, "final_test_loss");
    assert_true(loss > 0.003 && loss < 0.01);
    char *text = s_file(dir, "summary.json");
    cJSON *j = cJSON_Parse(text);
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, "final_test_acc")));
    cJSON_Delete(j);
    free(text);
    const char *args[] = {"train", "/dev/null", f->out_arg, "experiment.mode=sim",
                          "train.algorithm=hogwild", "data.dataset=regression",
                          "model.type=linear", "data.partition=label-skew", NULL};
    support_run_asgd(&f->r, f->dir, args);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "data.partition=label-skew: label-skew needs classes"));
}

/* A worker whose share of the training set is under a minibatch is said
 * (its minibatches repeat its few examples; epochs does not show it):
 * iid, 200 examples over 8 workers, 25 each under 32; label-skew, the
 * smallest share the split made; none where every share holds a batch. */
static void test_a_share_under_a_minibatch_is_said(void **state)
{
    support_fixture *f = *state;
    const char *iid[] = {"data.train_size=200", "cluster.workers=8", "train.batch=32",
                         "train.algorithm=hogwild", NULL};
    char dir[4096];
    s_sim(f, iid, dir, sizeof dir);
    assert_non_null(strstr(f->r.err, "train.batch=32: 32, but a worker's share of the training "
                                     "set is 25 examples: its minibatches repeat them"));
    const char *skew[] = {"data.train_size=2000", "cluster.workers=8", "train.batch=64",
                          "train.algorithm=hogwild", "data.partition=label-skew",
                          "data.alpha=0.1", "experiment.seed=2", NULL};
    s_sim(f, skew, dir, sizeof dir);
    assert_non_null(strstr(f->r.err, "share of the training set is 41 examples"));
    const char *enough[] = {"data.train_size=2000", "cluster.workers=8", "train.batch=32",
                            "train.algorithm=hogwild", NULL};
    s_sim(f, enough, dir, sizeof dir);
    assert_null(strstr(f->r.err, "share of the training set"));
}

static void test_alpha_zero_and_dynsgd_tau_in_virtual_time(void **state)
{
    support_fixture *f = *state;
    const char *rules[] = {"train.algorithm=easgd", "train.algorithm=aeasgd"};
    for (int i = 0; i < 2; i++) {
        const char *const extra[] = {rules[i], "algorithm.alpha=0", "cluster.workers=4", NULL};
        char dir[4096];
        s_sim(f, extra, dir, sizeof dir);
        char *eval = s_file(dir, "eval.csv");
        /* every row's loss and accuracy are the initial model's */
        char *first = strchr(eval, '\n') + 1, *line = first;
        const char *first_loss = first;
        for (int c = 0; c < 4; c++) {
            first_loss = strchr(first_loss, ',') + 1;
        }
        int rows = 0;
        while ((line = strchr(line, '\n')) && line[1]) {
            line++;
            const char *loss = line;
            for (int c = 0; c < 4; c++) {
                loss = strchr(loss, ',') + 1;
            }
            assert_int_equal(strcspn(loss, "\n"), strcspn(first_loss, "\n"));
            assert_memory_equal(loss, first_loss, strcspn(loss, "\n"));
            rows++;
        }
        assert_true(rows >= 3);
        free(eval);
    }
    const char *const dyn[] = {"train.algorithm=dynsgd", "cluster.workers=1", "algorithm.window=3",
                               NULL};
    char dir[4096];
    s_sim(f, dyn, dir, sizeof dir);
    assert_true(s_num(dir, "staleness_max") == 0);
    assert_true(s_num(dir, "updates") > 100);
}

/* [algorithm] prefetch = on for the window, elastic and SSP loops, one
 * worker over two shards: AGN with window 1 and SSP whose bound lets the
 * early pull through take Hogwild's prefetching steps; SSP with bound 0
 * holds the early pull until the worker's own push, so it is sequential
 * SGD again; the elastic rules' pull ends the window after the worker's
 * own push either way, so with one worker nothing changes; the window
 * rules miss their own last push, exactly one update stale; DOWNPOUR's
 * fetch steps miss the push of the step before. */
static void test_prefetch_in_virtual_time(void **state)
{
    support_fixture *f = *state;
    char *seq = s_trajectory(f, "sequential", NULL);
    char *hog = s_trajectory(f, "hogwild", "algorithm.prefetch=on", NULL);
    char *agn = s_trajectory(f, "agn", "algorithm.window=1", "algorithm.prefetch=on", NULL);
    char *ssp = s_trajectory(f, "ssp", "algorithm.prefetch=on", NULL);
    char *ssp0 = s_trajectory(f, "ssp", "algorithm.staleness=0", "algorithm.prefetch=on", NULL);
    assert_string_not_equal(hog, seq);
    assert_string_equal(agn, hog);
    assert_string_equal(ssp, hog);
    assert_string_equal(ssp0, seq);
    free(agn);
    free(ssp);
    free(ssp0);
    const char *elastic[] = {"aeasgd", "aeamsgd"};
    for (int i = 0; i < 2; i++) {
        char *off = s_trajectory(f, elastic[i], "algorithm.window=3", NULL);
        char *on = s_trajectory(f, elastic[i], "algorithm.window=3", "algorithm.prefetch=on",
                                NULL);
        assert_true(strlen(on) > 200);
        assert_string_equal(on, off);
        free(off);
        free(on);
    }
    const char *windows[] = {"train.algorithm=agn", "train.algorithm=dynsgd",
                             "train.algorithm=fedbuff"};
    for (int i = 0; i < 3; i++) {
        const char *const extra[] = {windows[i], "cluster.workers=1", "algorithm.window=3",
                                     "algorithm.prefetch=on", NULL};
        char dir[4096];
        s_sim(f, extra, dir, sizeof dir);
        double pushes = s_num(dir, "updates");
        assert_true(pushes > 100);
        assert_true(s_num(dir, "staleness_max") == 1);
        assert_true(fabs(s_num(dir, "staleness_mean") - (pushes - 1) / pushes) < 1e-9);
    }
    /* DOWNPOUR, one worker, a push every step and a pull every second: the
     * pull of step 2k goes out before step 2k - 1's gradient, so that
     * push 1 is 1 stale (as without prefetch) and from step 2 on the pushes
     * are 1 and 2 stale in turn (0 and 1 without) */
    const char *const down[] = {"train.algorithm=downpour", "cluster.workers=1",
                                "algorithm.window=1", "algorithm.fetch=2",
                                "algorithm.prefetch=on", NULL};
    char dir[4096];
    s_sim(f, down, dir, sizeof dir);
    double pushes = s_num(dir, "updates"), stale = 1;
    for (long k = 2; k < (long)pushes; k++) {
        stale += k % 2 == 0 ? 1 : 2;
    }
    assert_true(pushes > 100);
    assert_true(s_num(dir, "staleness_max") == 2);
    if (fabs(s_num(dir, "staleness_mean") - stale / pushes) > 1e-9) {
        fail_msg("downpour with prefetch: staleness mean %.9f over %g pushes, not %.9f",
                 s_num(dir, "staleness_mean"), pushes, stale / pushes);
    }
    free(seq);
    free(hog);
}

/* Prefetch moves pulls earlier, and asks no more of them: every rule that
 * takes it, two workers over two shards, sends each shard as many bytes
 * and is answered as many as without (a pull asked before a worker's last
 * step, which nothing reads, was one more reply of the whole vector). */
static void test_prefetch_asks_no_more_pulls(void **state)
{
    support_fixture *f = *state;
    const char *rules[][2] = {{"hogwild", "algorithm.window=1"},
                              {"downpour", "algorithm.fetch=2"},
                              {"delayadaptive", "algorithm.window=1"},
                              {"staleweight", "algorithm.window=1"},
                              {"ssp", "algorithm.window=1"},
                              {"agn", "algorithm.window=3"},
                              {"dynsgd", "algorithm.window=3"},
                              {"fedbuff", "algorithm.window=3"},
                              {"aeasgd", "algorithm.window=3"},
                              {"aeamsgd", "algorithm.window=3"}};
    for (size_t r = 0; r < sizeof rules / sizeof rules[0]; r++) {
        char alg[64];
        snprintf(alg, sizeof alg, "train.algorithm=%s", rules[r][0]);
        double bytes[2][2][2];   /* [prefetch][shard][in, out] */
        for (int on = 0; on < 2; on++) {
            const char *const extra[] = {alg, rules[r][1], "cluster.workers=2",
                                         "cluster.servers=2", "eval.every=0",
                                         on ? "algorithm.prefetch=on" : "algorithm.prefetch=off",
                                         NULL};
            char dir[4096];
            s_sim(f, extra, dir, sizeof dir);
            for (int k = 0; k < 2; k++) {
                char ps[32];
                snprintf(ps, sizeof ps, "ps-%d.json", k);
                bytes[on][k][0] = s_num_of(dir, ps, "bytes_in");
                bytes[on][k][1] = s_num_of(dir, ps, "bytes_out");
            }
        }
        for (int k = 0; k < 2; k++) {
            if (bytes[1][k][0] != bytes[0][k][0] || bytes[1][k][1] != bytes[0][k][1]) {
                fail_msg("%s, shard %d: %.0f bytes in and %.0f out with prefetch, %.0f and "
                         "%.0f without", rules[r][0], k, bytes[1][k][0], bytes[1][k][1],
                         bytes[0][k][0], bytes[0][k][1]);
            }
        }
    }
}

/* SSP under heavy stragglers: a quarter of the workers 20x slower, yet no
 * worker's clock gets more than s + 1 ahead of any other's (the rows of
 * steps.csv are in virtual-time order here). */
static void test_ssp_bound_under_heavy_stragglers(void **state)
{
    support_fixture *f = *state;
    const char *const extra[] = {"train.algorithm=ssp", "algorithm.staleness=2",
                                 "cluster.workers=8", "sim.straggler_fraction=0.25",
                                 "sim.straggler_slowdown=20", NULL};
    char dir[4096];
    s_sim(f, extra, dir, sizeof dir);
    char *log = s_file(dir, "log.txt");   /* which, and how many: a fraction's rounding */
    assert_non_null(strstr(log, "straggler_fraction 0.25 (rounded up), with [sim] speed: 2 of 8 "
                                "workers not at speed 1: "));
    free(log);
    char *steps = s_file(dir, "steps.csv");
    long done[8] = {0}, widest = 0;
    int rows = 0;
    for (char *line = strtok(strchr(steps, '\n') + 1, "\n"); line; line = strtok(NULL, "\n")) {
        double t, loss;
        int w;
        long step, stale, bytes;
        assert_int_equal(sscanf(line, "%lf,%d,%ld,%lf,%ld,%ld", &t, &w, &step, &loss, &stale,
                                &bytes), 6);
        for (int b = 0; b < 8; b++) {
            if (b != w && step - done[b] > widest) {
                widest = step - done[b];
            }
        }
        done[w] = step;
        rows++;
    }
    free(steps);
    assert_true(rows > 300);
    assert_true(widest <= 3);
    assert_true(widest >= 2);     /* the bound is reached: the test has teeth */
    /* without the bound, the fast workers run far ahead */
    const char *const hog[] = {"train.algorithm=hogwild", "cluster.workers=8",
                               "sim.straggler_fraction=0.25", "sim.straggler_slowdown=20", NULL};
    s_sim(f, hog, dir, sizeof dir);
    assert_true(s_num(dir, "staleness_max") > 10);
}

static void test_failure_and_recovery(void **state)
{
    support_fixture *f = *state;
    /* on-failure: worker 1 fails at 0.05 s and is back at 0.08 s */
    const char *const back[] = {"train.algorithm=sync", "cluster.workers=3",
                                "cluster.restart=on-failure", "sim.fail=1@0.05-0.08", NULL};
    char dir[4096];
    s_sim(f, back, dir, sizeof dir);
    assert_true(s_num(dir, "restarts") == 1);
    char *log = s_file(dir, "log.txt");
    assert_non_null(strstr(log, "worker 1 failed at 0.050000 s"));
    assert_non_null(strstr(log, "worker 1 restarts at 0.080000 s"));
    free(log);
    /* sync waits for the missing worker: no update from the failure until
     * it is back (evaluations at 0.06 and 0.08 see the same version) */
    char *eval = s_file(dir, "eval.csv");
    char *at6 = strstr(eval, "\n0.060000,"), *at8 = strstr(eval, "\n0.080000,");
    assert_non_null(at6);
    assert_non_null(at8);
    double t, epoch;
    long u6, u8, more;
    assert_int_equal(sscanf(at6 + 1, "%lf,%lf,%ld,%ld", &t, &epoch, &u6, &more), 4);
    assert_int_equal(sscanf(at8 + 1, "%lf,%lf,%ld,%ld", &t, &epoch, &u8, &more), 4);
    assert_true(u6 > 0);
    assert_int_equal(u6, u8);
    free(eval);
    /* a restarted worker takes up what remains of its share, as a real one
     * does: the run's samples are its epochs', not more */
    const char *hog[] = {"train.algorithm=hogwild", "cluster.workers=3",
                         "cluster.restart=on-failure", "sim.fail=1@0.05-0.08", NULL};
    s_sim(f, hog, dir, sizeof dir);
    assert_true(s_num(dir, "restarts") == 1);
    assert_true(s_num(dir, "samples") == 313 * 64);   /* 2 epochs of 10,000, batch 64 */
    /* never: the run fails cleanly */
    const char *args[] = {"train", "/dev/null", f->out_arg, "experiment.mode=sim",
                          "data.dataset=synthetic", "train.algorithm=hogwild", "cluster.workers=3",
                          "sim.fail=2@0.01", NULL};
    support_run_asgd(&f->r, f->dir, args);
    assert_int_equal(f->r.status, 1);
    assert_non_null(strstr(f->r.err, "worker 2 failed at 0.010 s"));
    assert_non_null(strstr(f->r.err, "restart = never"));
}

/* asgd calibrate's arithmetic from its measurements (which are the host's,
 * so a run of it pins nothing): a 100 us round trip with 40 us of CPU at
 * both ends is four pieces of work of 10 us and a 30 us one-way latency;
 * 1 MB more each way in 2 ms more per round trip is 1 MB per ms; an idle
 * far end's 60 us more wakes two cores, 30 us each (a mutation in the
 * latency's share of the work passed every test). */
static void test_calibrations_arithmetic(void **state)
{
    (void)state;
    message_timing t = {.round_trip = 100e-6, .cpu_per_trip = 40e-6, .wake = 60e-6,
                        .large_round_trip = 100e-6 + 2e-3,
                        .bytes = 1000000 + WIRE_HEADER_SIZE};
    message_costs m;
    calibrate_message_costs(&t, &m);
    assert_true(fabs(m.message_cpu - 10e-6) < 1e-12);
    assert_true(fabs(m.latency - 30e-6) < 1e-12);
    assert_true(fabs(m.wakeup - 30e-6) < 1e-12);
    assert_true(fabs(m.bandwidth - 1e9) < 1e-3);
    t.shared = true;   /* no values cross the socket */
    calibrate_message_costs(&t, &m);
    assert_true(m.bandwidth == 1e15);
    assert_false(m.overlapped);
    /* more work than the trip (threads overlap it): the work is the trip,
     * no latency left, so that the simulated trip is the measured one (it
     * was the work alone, 4 x 100 us) */
    t.cpu_per_trip = 400e-6;
    calibrate_message_costs(&t, &m);
    assert_true(m.overlapped);
    assert_true(m.latency == 0);
    assert_true(fabs(2 * (m.latency + 2 * m.message_cpu) - t.round_trip) < 1e-12);
}

/* A device trace: device 1 three times slower on a slow link, device 2
 * away from 0.02 to 0.05 s. The traced run takes longer; worker 2 leaves
 * at 0.02 s, no step of it ends while it is away, and it rejoins at 0.05
 * s without counting as a restart (restart = never: a device away is no
 * failure); it takes up its share, so the samples are the epochs' as
 * without the trace. A start inside an absence waits for its end. */
static void test_device_traces_in_virtual_time(void **state)
{
    support_fixture *f = *state;
    char trace[4200], key[4300];
    snprintf(trace, sizeof trace, "%s/trace.csv", f->dir);
    support_write_file(trace, "device,speed,bandwidth,latency,off\n0,1,,,\n1,3,1e6,0.001,\n"
                       "2,1,,,0.02-0.05\n");
    snprintf(key, sizeof key, "sim.trace=%s", trace);
    const char *plain[] = {"train.algorithm=hogwild", "cluster.workers=3", NULL};
    const char *traced[] = {"train.algorithm=hogwild", "cluster.workers=3", key, NULL};
    char dir[4096], traced_dir[4096];
    s_sim(f, plain, dir, sizeof dir);
    s_sim(f, traced, traced_dir, sizeof traced_dir);
    assert_true(s_num(traced_dir, "time_s") > s_num(dir, "time_s"));
    assert_true(s_num(traced_dir, "samples") == 313 * 64);
    assert_true(s_num(dir, "samples") == 313 * 64);
    assert_true(s_num(traced_dir, "restarts") == 0);
    /* the summary names the trace it read, with its checksum (an edited
     * trace ran again from the run's config.ini without a word) */
    char *text = s_file(traced_dir, "summary.json");
    cJSON *j = cJSON_Parse(text);
    free(text);
    const cJSON *read = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(j, "inputs"), trace);
    char *bytes = support_read_file(trace), want[64];
    snprintf(want, sizeof want, "crc32 %08lx, %zu bytes",
             (unsigned long)crc32(0, (const Bytef *)bytes, (uInt)strlen(bytes)), strlen(bytes));
    assert_true(cJSON_IsString(read));
    assert_string_equal(read->valuestring, want);
    /* and keeps a copy of it, as it read it: a run folder says which
     * devices it simulated after the trace is edited; the run without a
     * trace has nothing to keep */
    char *kept = s_file(traced_dir, "inputs/sim.trace-trace.csv");
    assert_string_equal(kept, bytes);
    free(kept);
    char first_traced[4096], nothing[4200];
    snprintf(first_traced, sizeof first_traced, "%s", traced_dir);
    snprintf(nothing, sizeof nothing, "%s/inputs", dir);
    assert_int_equal(access(nothing, F_OK), -1);
    cJSON_Delete(j);
    char *log = s_file(traced_dir, "log.txt");
    assert_non_null(strstr(log, "worker 2 away at 0.020000 s, back at 0.050000 s (trace)"));
    free(log);
    char *steps = s_file(traced_dir, "steps.csv"), *save;
    int rows_of_2 = 0;
    for (char *line = strtok_r(steps, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        double t;
        int worker;
        if (sscanf(line, "%lf,%d", &t, &worker) == 2 && worker == 2) {
            rows_of_2++;
            if (t > 0.02 && t < 0.05) {
                fail_msg("worker 2 took a step at %g s, while away", t);
            }
        }
    }
    assert_true(rows_of_2 > 10);
    free(steps);
    /* away from the start: worker 0 begins at 0.03 s */
    support_write_file(trace, "device,speed,bandwidth,latency,off\n0,1,,,0-0.03\n1,1,,,\n");
    s_sim(f, traced, traced_dir, sizeof traced_dir);
    steps = s_file(traced_dir, "steps.csv");
    double first = 1e9;
    for (char *line = strtok_r(steps, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        double t;
        int worker;
        if (sscanf(line, "%lf,%d", &t, &worker) == 2 && worker == 0 && t < first) {
            first = t;
        }
    }
    assert_true(first > 0.03 && first < 1);
    free(steps);
    kept = s_file(first_traced, "inputs/sim.trace-trace.csv");
    assert_string_equal(kept, bytes);
    free(kept);
    free(bytes);
    /* a broken trace is a config error naming the key and the file's line */
    support_write_file(trace, "device,speed,bandwidth,latency,off\n0,0,,,\n");
    const char *args[] = {"train", "/dev/null", f->out_arg, "experiment.mode=sim",
                          "data.dataset=synthetic", "train.algorithm=hogwild", key, NULL};
    support_run_asgd(&f->r, f->dir, args);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "trace"));
    assert_non_null(strstr(f->r.err, "trace.csv:2: column 2"));
}

/* The numbers a log line "... version V ..." gives after `after`. */
static unsigned long s_version_after(const char *log, const char *after)
{
    const char *p = strstr(log, after);
    if (!p || !(p = strstr(p, "version "))) {
        fail_msg("no \"%s ... version\" in the log", after);
    }
    return strtoul(p + strlen("version "), NULL, 10);
}

/* A shard that fails comes back from its latest checkpoint: every push the
 * workers sent is then in the final model, lost with the shard (at most
 * one checkpoint interval's worth), or dropped as computed on what the
 * shard no longer holds: updates + lost + dropped is the run without a
 * failure's updates, exactly. */
static void test_shard_failure_restores_its_checkpoint(void **state)
{
    support_fixture *f = *state;
    const char *const plain[] = {"train.algorithm=hogwild", "cluster.workers=3", NULL};
    char dir[4096];
    s_sim(f, plain, dir, sizeof dir);
    double updates = s_num(dir, "updates"), time_s = s_num(dir, "time_s");
    const char *const failing[] = {"train.algorithm=hogwild", "cluster.workers=3",
                                   "cluster.restart=on-failure", "sim.fail=ps0@0.05",
                                   "checkpoint.every=0.02", NULL};
    s_sim(f, failing, dir, sizeof dir);
    double lost = s_num(dir, "lost_updates");
    assert_true(s_num(dir, "shard_restarts") == 1);
    assert_true(lost > 0);
    assert_true(lost <= 2 * updates * 0.02 / time_s);   /* about one interval's worth */
    assert_true(s_num(dir, "updates") + lost + s_num(dir, "dropped") == updates);
    char *log = s_file(dir, "log.txt");
    unsigned long at_fail = s_version_after(log, "shard 0 failed at 0.050000 s");
    unsigned long restored = s_version_after(log, "shard 0 back at");
    assert_true((double)(at_fail - restored) == lost);
    free(log);
    char path[4200];
    snprintf(path, sizeof path, "%s/checkpoints/ps-0.ckpt", dir);
    assert_int_equal(access(path, F_OK), 0);

    /* two failures from one checkpoint: two lives, both losses counted
     * (the second once came back as the first's generation, and its
     * counters hid the first's loss) */
    const char *const twice[] = {"train.algorithm=hogwild", "cluster.workers=3",
                                 "cluster.restart=on-failure", "sim.fail=ps0@0.05,ps0@0.18",
                                 "checkpoint.every=0.3", NULL};
    s_sim(f, twice, dir, sizeof dir);
    assert_true(s_num(dir, "shard_restarts") == 2);
    assert_true(s_num(dir, "updates") + s_num(dir, "lost_updates") + s_num(dir, "dropped") ==
                updates);

    /* a window without checkpoints: back at its end from the initial
     * parameters, everything before it lost */
    const char *const window[] = {"train.algorithm=sync", "cluster.workers=2", "cluster.servers=2",
                                  "sim.fail=ps1@0.05-0.06", NULL};
    s_sim(f, window, dir, sizeof dir);
    log = s_file(dir, "log.txt");
    assert_int_equal(s_version_after(log, "shard 1 back at"), 0);
    assert_true(s_num(dir, "lost_updates") == s_version_after(log, "shard 1 failed at"));
    free(log);

    /* back from the checkpoint of when training began (of version 0):
     * training still began at the first pull of the life that failed
     * (train_time_s once ran from the next life's, 0.07 s of 1.09, and
     * samples/s was 16 times too high); the checkpoints are a real
     * shard's: at time 0, when training began, the one read back, one at
     * the new life's start and one at each worker's done */
    const char *const early[] = {"train.algorithm=hogwild", "cluster.workers=2",
                                 "model.type=softmax", "cluster.restart=on-failure",
                                 "sim.fail=ps0@0.02", "checkpoint.every=10", NULL};
    s_sim(f, early, dir, sizeof dir);
    assert_true(s_num(dir, "shard_restarts") == 1 && s_num(dir, "checkpoints") == 5);
    if (fabs(s_num(dir, "train_time_s") - s_num(dir, "time_s")) > 0.01 * s_num(dir, "time_s")) {
        fail_msg("train_time_s %g, time_s %g", s_num(dir, "train_time_s"), s_num(dir, "time_s"));
    }

    /* restarting needs checkpoints, as in real mode */
    const char *args[] = {"train", "/dev/null", f->out_arg, "experiment.mode=sim",
                          "data.dataset=synthetic", "train.algorithm=hogwild",
                          "cluster.restart=on-failure", "sim.fail=ps0@0.01", NULL};
    support_run_asgd(&f->r, f->dir, args);
    assert_int_equal(f->r.status, 1);
    assert_non_null(strstr(f->r.err, "shard 0 failed at 0.010 s"));
    assert_non_null(strstr(f->r.err, "[checkpoint] every"));
}

/* An evaluation due while a shard is down waits for its return, as the
 * real evaluator's pull does: rows stamped meanwhile showed the updates
 * the shard then lost (68 updates at 0.06-0.12 s, 42 once it was back). */
static void test_no_evaluation_while_a_shard_is_down(void **state)
{
    support_fixture *f = *state;
    const char *const failing[] = {"train.algorithm=hogwild", "model.type=softmax",
                                   "cluster.restart=on-failure", "sim.fail=ps0@0.04",
                                   "checkpoint.every=0.025", "eval.every=0.03", NULL};
    char dir[4096];
    s_sim(f, failing, dir, sizeof dir);
    char *log = s_file(dir, "log.txt");
    const char *back = strstr(log, "shard 0 back at ");
    assert_non_null(back);
    double back_at = atof(back + strlen("shard 0 back at "));
    unsigned long restored = s_version_after(log, "shard 0 back at");
    free(log);
    assert_true(back_at > 0.1);   /* the case: evaluations fell due while it was down */
    char *csv = s_file(dir, "eval.csv");
    int rows = 0, after = 0;
    for (char *line = strchr(csv, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        double t, epoch, loss, acc;
        long updates, samples;
        assert_int_equal(sscanf(line + 1, "%lf,%lf,%ld,%ld,%lf,%lf", &t, &epoch, &updates,
                                &samples, &loss, &acc), 6);
        if (t > 0.041 && t < back_at - 0.001) {
            fail_msg("a row at %g s, while shard 0 was down (0.04-%g s)", t, back_at);
        }
        if (t >= back_at - 0.001 && after++ == 0) {   /* the held one, once it is back */
            assert_true(t < back_at + 0.001 && updates == (long)restored);
        }
        rows++;
    }
    free(csv);
    assert_true(rows > 3 && after > 0);
}

/* worker 1's steps.csv rows stamped within [from, to) seconds. */
static int s_steps_of_worker_1_within(const char *dir, double from, double to)
{
    char *csv = s_file(dir, "steps.csv");
    int n = 0;
    for (char *line = strchr(csv, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        double t;
        int worker;
        if (sscanf(line + 1, "%lf,%d", &t, &worker) == 2 && worker == 1 && t >= from &&
            t < to) {
            n++;
        }
    }
    free(csv);
    return n;
}

/* The steps.csv rows of worker w (-1: every worker) of a run: the time of
 * its first, the mean time between them in *period (may be NULL), and
 * their count. */
static int s_worker_steps(const char *dir, int w, double *first, double *period)
{
    char *steps = s_file(dir, "steps.csv");
    double last = -1;
    int n = 0;
    *first = -1;
    for (char *line = strtok(strchr(steps, '\n') + 1, "\n"); line; line = strtok(NULL, "\n")) {
        double t;
        int k;
        if (sscanf(line, "%lf,%d,", &t, &k) == 2 && (w < 0 || k == w)) {
            *first = n++ ? *first : t;
            last = t;
        }
    }
    free(steps);
    if (period) {
        *period = n > 1 ? (last - *first) / (n - 1) : NAN;
    }
    return n;
}

/* A paused worker holds no shared core: on one core, while worker 0 is
 * paused worker 1 has it to itself (its pause once kept the core busy:
 * worker 1 took no step in it, and the run took the whole pause longer). */
static void test_a_pause_frees_its_core(void **state)
{
    support_fixture *f = *state;
    const char *plain[] = {"train.algorithm=hogwild", "model.type=softmax", "sim.cores=1",
                           "cluster.workers=2", NULL, NULL};
    char dir[4096];
    s_sim(f, plain, dir, sizeof dir);
    double time_s = s_num(dir, "time_s");
    int alone = s_steps_of_worker_1_within(dir, 0.011, 0.05);
    plain[4] = "sim.pause=0@0.01-0.05";
    s_sim(f, plain, dir, sizeof dir);
    int paused = s_steps_of_worker_1_within(dir, 0.011, 0.05);
    if (!(paused > alone + alone / 2 && s_num(dir, "time_s") < time_s + 0.02)) {
        fail_msg("worker 1 took %d steps in worker 0's pause (%d sharing the core), the run "
                 "%g s against %g s without it", paused, alone, s_num(dir, "time_s"), time_s);
    }
}

/* A process's I/O thread takes its messages one at a time: one hogwild
 * worker over two shards on four cores, 10 ms minibatches, 1 ms latency,
 * message_cpu 2 ms (1 ms in the sender's or receiver's own thread, 1 ms
 * in its I/O thread). From a minibatch's end: the push's own work 0-2 ms,
 * its two sends through the worker's I/O thread 2-3 and 3-4, taken by the
 * shards' I/O threads 4-5 and 5-6 (settled at 6), the pull's own work
 * 6-8, its sends 8-9 and 9-10, the shards' I/O 10-11 and 11-12, their
 * answers' work to 13 and 14, their sends 13-14 and 14-15, taken by the
 * worker's I/O thread 15-16 and 16-17, the replies' own work 17-19, the
 * minibatch 19-29: 29 ms a step. (With each message's I/O turn a job of
 * its own, a process's sends ran on two cores at once: 27 ms.) */
static void test_an_io_thread_takes_one_message_at_a_time(void **state)
{
    support_fixture *f = *state;
    const char *args[] = {"train.algorithm=hogwild", "cluster.workers=1", "cluster.servers=2",
                          "sim.compute=constant", "sim.compute_mean=0.01", "sim.latency=0.001",
                          "sim.bandwidth=1e15", "sim.message_cpu=0.002", "sim.cores=4",
                          "eval.every=0", "train.epochs=0.1", NULL};
    char dir[4096];
    s_sim(f, args, dir, sizeof dir);
    double first, step;
    assert_true(s_worker_steps(dir, -1, &first, &step) > 10);
    if (fabs(step - 0.029) > 1e-6) {
        fail_msg("a step of %.6f s, not 0.029", step);
    }
}

/* A pause that starts in the middle of a minibatch stops it: 10 ms
 * minibatches, a pause from 5 to 50 ms, and the first step ends 45 ms after
 * it would have (it computed straight through the pause: a pause delayed
 * only minibatches that would start in it), with a core of its own and on
 * one shared core alike. */
static void test_a_pause_stops_a_minibatch_under_way(void **state)
{
    support_fixture *f = *state;
    double first[2][2];
    for (int p = 0; p < 2; p++) {
        for (int c = 0; c < 2; c++) {
            const char *args[] = {"train.algorithm=hogwild", "cluster.workers=1",
                                  "sim.compute=constant", "sim.compute_mean=0.01",
                                  "sim.latency=1e-4", "sim.bandwidth=1e15", "eval.every=0",
                                  "train.epochs=0.02", c ? "sim.cores=1" : "sim.cores=0",
                                  p ? "sim.pause=0@0.005-0.05" : NULL, NULL};
            char dir[4096];
            s_sim(f, args, dir, sizeof dir);
            assert_true(s_worker_steps(dir, 0, &first[p][c], NULL) > 0);
        }
    }
    for (int c = 0; c < 2; c++) {
        if (fabs(first[1][c] - first[0][c] - 0.045) > 1e-9) {
            fail_msg("cores = %d: the first step at %.6f s, %.6f s without the pause", c,
                     first[1][c], first[0][c]);
        }
    }
}

/* cores: 4 compute-bound workers on 1 shared core take 4 times as long as
 * on a core each; startup_mean delays every worker's first step, which is
 * start-up (startup_s), not training: the rows' time starts at the step. */
static void test_shared_cores_and_startup(void **state)
{
    support_fixture *f = *state;
    double times[2];
    const char *cores[2] = {"sim.cores=0", "sim.cores=1"};
    for (int i = 0; i < 2; i++) {
        /* 320 minibatches: 80 each */
        const char *const extra[] = {"train.algorithm=hogwild", "cluster.workers=4", cores[i],
                                     "sim.latency=0", "sim.bandwidth=1e15",
                                     "data.train_size=10240", NULL};
        char dir[4096];
        s_sim(f, extra, dir, sizeof dir);
        times[i] = s_num(dir, "time_s");
    }
    assert_true(fabs(times[1] / times[0] - 4) < 0.01);
    const char *const late[] = {"train.algorithm=hogwild", "cluster.workers=4",
                                "sim.startup_mean=0.5", "sim.startup_sd=0.1", NULL};
    char dir[4096];
    s_sim(f, late, dir, sizeof dir);
    /* start-up is reported apart; the time axis starts at the first step */
    double startup = s_num(dir, "startup_s");
    assert_true(startup > 0.2 && startup < 1.0);
    char *steps = s_file(dir, "steps.csv");
    double first = strtod(strchr(steps, '\n') + 1, NULL);
    assert_true(first >= 0 && first < 0.05);
    free(steps);
    char *eval = s_file(dir, "eval.csv");
    char *second = strchr(strchr(eval, '\n') + 1, '\n') + 1;   /* after the initial row */
    assert_true(fabs(strtod(second, NULL) - 0.02) < 1e-9);      /* eval.every after the step */
    free(eval);
}

/* One hogwild worker over one shard, constant 1 ms minibatches, no
 * latency, the extra [sim] keys given: the run's time per update. */
static double s_step_time(support_fixture *f, const char *const *keys, double *params)
{
    const char *extra[16] = {"train.algorithm=hogwild", "cluster.workers=1",
                             "sim.compute=constant", "sim.compute_mean=0.001", "sim.latency=0",
                             "sim.bandwidth=1e15", "eval.every=0"};
    int n = 7;
    for (int i = 0; keys[i]; i++) {
        extra[n++] = keys[i];
    }
    extra[n] = NULL;
    char dir[4096];
    s_sim(f, extra, dir, sizeof dir);
    if (params) {
        *params = s_num(dir, "params");
    }
    return s_num(dir, "time_s") / s_num(dir, "updates");
}

/* The work of messages and copies takes its time: each step of one
 * hogwild worker is its minibatch, its three messages (the pull sent, its
 * reply taken, the push sent) and the shard's two on the pull (taken in,
 * answered), 5 x message_cpu; the push's handling overlaps the next pull.
 * Copies are three a step (the shard's answer into the segment, the
 * worker's out of it, the worker's push into it), the shard's answer work
 * ([sim] answer) one. */
static void test_message_work_takes_its_time(void **state)
{
    support_fixture *f = *state;
    const char *none[] = {NULL};
    double params;
    double base = s_step_time(f, none, &params);
    assert_true(fabs(base - 0.001) < 1e-5);
    const char *messages[] = {"sim.message_cpu=0.0001", NULL};
    assert_true(fabs(s_step_time(f, messages, NULL) - (base + 5e-4)) < 1e-5);
    char bandwidth[64];   /* a copy of the whole vector: 0.2 ms */
    snprintf(bandwidth, sizeof bandwidth, "sim.copy_bandwidth=%.17g", params * 4 / 2e-4);
    const char *copies[] = {bandwidth, NULL};
    assert_true(fabs(s_step_time(f, copies, NULL) - (base + 6e-4)) < 1e-5);
    const char *answer[] = {"sim.answer=0.0003", NULL};
    assert_true(fabs(s_step_time(f, answer, NULL) - (base + 3e-4)) < 1e-5);
    /* on one core the I/O threads' halves of the message work take the
     * worker's core too, and the push's handling no longer overlaps the
     * next step: six message costs (a mutation that quartered the I/O
     * thread's share passed every test) */
    const char *one_core[] = {"sim.message_cpu=0.0001", "sim.cores=1", NULL};
    double step = s_step_time(f, one_core, NULL);
    if (fabs(step - (base + 6e-4)) > 1e-5) {
        fail_msg("a step with message work on one core: %.7f s, not %.7f", step, base + 6e-4);
    }
}

/* The evaluator and the workers' start-up are work on the shared cores: on
 * one core, an evaluation of 50 ms every 100 ms leaves the worker half
 * the core (the run takes about twice as long), on two it takes nothing
 * from it; cut into 2 ms turns it delays no step by more than a few ms,
 * whole it delays some by its 50 ms. A worker's start-up work comes before
 * its first step. */
static void test_the_evaluator_and_start_up_share_the_cores(void **state)
{
    support_fixture *f = *state;
    const char *one[] = {"sim.cores=1", "eval.every=0.1", NULL};
    const char *one_eval[] = {"sim.cores=1", "eval.every=0.1", "sim.eval_cost=0.05", NULL};
    const char *two_eval[] = {"sim.cores=2", "eval.every=0.1", "sim.eval_cost=0.05", NULL};
    double alone = s_step_time(f, one, NULL);
    double halved = s_step_time(f, one_eval, NULL) / alone;
    double beside = s_step_time(f, two_eval, NULL) / alone;
    assert_true(halved > 1.8 && halved < 2.2);
    assert_true(fabs(beside - 1) < 0.02);
    const char *slices[2][9] = {
        {"train.algorithm=hogwild", "cluster.workers=1", "sim.compute=constant",
         "sim.compute_mean=0.001", "sim.cores=1", "eval.every=0.1", "sim.eval_cost=0.05", NULL},
        {"train.algorithm=hogwild", "cluster.workers=1", "sim.compute=constant",
         "sim.compute_mean=0.001", "sim.cores=1", "eval.every=0.1", "sim.eval_cost=0.05",
         "sim.timeslice=0.002"}};
    double longest[2];
    for (int i = 0; i < 2; i++) {
        char dir[4096];
        s_sim(f, slices[i], dir, sizeof dir);
        char *steps = s_file(dir, "steps.csv");
        double before = -1;
        longest[i] = 0;
        for (char *row = strchr(steps, '\n'); row && row[1]; row = strchr(row + 1, '\n')) {
            double t = strtod(row + 1, NULL);
            longest[i] = before >= 0 && t - before > longest[i] ? t - before : longest[i];
            before = t;
        }
        free(steps);
    }
    assert_true(longest[0] > 0.05 && longest[1] < 0.006);
    const char *late[] = {"train.algorithm=hogwild", "cluster.workers=1", "sim.startup_cpu=0.25",
                          "sim.latency=0", "sim.bandwidth=1e15", NULL};
    char dir[4096];
    s_sim(f, late, dir, sizeof dir);
    assert_true(fabs(s_num(dir, "startup_s") - 0.25) < 1e-9);
}

/* The work model changes when things happen, never what a round computes:
 * sync's rounds take every worker's gradient whatever the order, so three
 * workers over two shards on one shared core, with the work of messages,
 * copies, pulls, evaluations and start-up and a time slice, end with the
 * very model they end with when nothing but their minibatches takes time
 * (a message's round tag survives its wait for a core). */
static void test_the_work_model_changes_time_not_rounds(void **state)
{
    support_fixture *f = *state;
    const char *plain[] = {"train.algorithm=sync", "cluster.workers=3", "cluster.servers=2",
                           NULL};
    const char *worked[] = {"train.algorithm=sync", "cluster.workers=3", "cluster.servers=2",
                            "sim.cores=1", "sim.message_cpu=0.00002", "sim.copy_bandwidth=1e9",
                            "sim.answer=0.00001", "sim.apply=0.00005", "sim.eval_cost=0.003",
                            "sim.startup_cpu=0.01", "sim.timeslice=0.0005", "sim.wakeup=0.00001",
                            NULL};
    char a[4096], b[4096];
    s_sim(f, plain, a, sizeof a);
    s_sim(f, worked, b, sizeof b);
    assert_true(s_num(b, "time_s") > 1.5 * s_num(a, "time_s"));
    assert_true(s_num(a, "updates") == s_num(b, "updates"));
    assert_true(s_num(a, "final_test_loss") == s_num(b, "final_test_loss"));
}

/* The replies that one push makes ready leave one by one, each when the
 * shard's work up to it is done, as a real shard copies and sends them in
 * turn: sync's last push of a round answers three waiting pulls, each
 * answer 1 ms of work, so the workers' next steps end 1 and 2 ms after
 * the first's, round after round (all three together if the replies left
 * at the end of the shard's whole work). */
static void test_a_shards_replies_leave_in_turn(void **state)
{
    support_fixture *f = *state;
    const char *args[] = {"train.algorithm=sync", "cluster.workers=3", "sim.compute=constant",
                          "sim.compute_mean=0.01", "sim.latency=0", "sim.bandwidth=1e15",
                          "sim.answer=0.001", "train.epochs=1", NULL};
    char dir[4096];
    s_sim(f, args, dir, sizeof dir);
    char *steps = s_file(dir, "steps.csv");
    double last[3] = {-1, -1, -1};
    for (char *row = strchr(steps, '\n'); row && row[1]; row = strchr(row + 1, '\n')) {
        char *end;
        double t = strtod(row + 1, &end);
        long worker = strtol(end + 1, NULL, 10);
        assert_true(worker >= 0 && worker < 3);
        last[worker] = t;
    }
    free(steps);
    double lo = fmin(last[0], fmin(last[1], last[2]));
    double hi = fmax(last[0], fmax(last[1], last[2]));
    double mid = last[0] + last[1] + last[2] - lo - hi;
    assert_true(fabs(mid - lo - 0.001) < 1e-9 && fabs(hi - lo - 0.002) < 1e-9);
}

/* What a turn makes ready (its messages, its owner's next job, the jobs
 * it wakes) is placed while its core is still taken, as the kernel wakes
 * a task while its waker runs: on one core with no wire latency, a core
 * that idles and pays [sim] wakeup to start again does so only where a
 * message crosses the wire, 3 times a Hogwild step (the push, the pull
 * and the reply), where every job once found the core just freed and woke
 * it (10 times a step). */
static void test_a_turn_hands_on_what_it_makes_ready(void **state)
{
    support_fixture *f = *state;
    const char *base[] = {"train.algorithm=hogwild", "cluster.workers=1", "sim.cores=1",
                          "sim.compute=constant", "sim.compute_mean=0.001", "sim.latency=0",
                          "sim.bandwidth=1e15", "sim.message_cpu=0.00002", "sim.apply=0.0001",
                          "sim.eval_cost=0", "eval.every=0", NULL, NULL};
    char dir[4096];
    base[11] = "sim.wakeup=0";
    s_sim(f, base, dir, sizeof dir);
    double at_once = s_num(dir, "time_s"), steps = s_num(dir, "updates");
    base[11] = "sim.wakeup=0.001";
    s_sim(f, base, dir, sizeof dir);
    double wakes = (s_num(dir, "time_s") - at_once) / 0.001;
    if (fabs(wakes / steps - 3) > 0.05) {
        fail_msg("%.0f wakes in %.0f steps", wakes, steps);
    }
}

/* [sim] migration: a worker woken while the core it last ran on is busy
 * waits for that core while it is cache-hot, as the kernel keeps it
 * there, though the other core is idle: two SAGN workers sharing two
 * cores with a shard and an evaluator now and then take turns on one
 * core, and the run takes longer; what the rounds compute is the same. */
static void test_a_cache_hot_worker_waits_for_its_core(void **state)
{
    support_fixture *f = *state;
    const char *base[] = {"train.algorithm=sagn", "cluster.workers=2", "sim.cores=2",
                          "sim.compute=constant", "sim.compute_mean=0.001", "sim.latency=0",
                          "sim.bandwidth=1e15", "sim.answer=0.0001", "sim.apply=0.0001",
                          "sim.message_cpu=0.00002", "sim.timeslice=0.004",
                          "sim.eval_cost=0.005", NULL, NULL};
    char cold[4096], hot[4096];
    base[12] = "sim.migration=0";
    s_sim(f, base, cold, sizeof cold);
    base[12] = "sim.migration=0.0005";
    s_sim(f, base, hot, sizeof hot);
    assert_true(s_num(hot, "time_s") > 1.03 * s_num(cold, "time_s"));
    assert_true(s_num(hot, "updates") == s_num(cold, "updates"));
    assert_true(s_num(hot, "final_test_loss") == s_num(cold, "final_test_loss"));
    /* with no tick, a job is balanced the moment it goes cold, and found
     * cold then (a balancing that found it still hot at that moment came
     * back to the same instant forever) */
    base[10] = "sim.timeslice=0";
    s_sim(f, base, hot, sizeof hot);
    assert_true(s_num(hot, "final_test_loss") == s_num(cold, "final_test_loss"));
}

/* [sim] placement: with core (the default), a worker woken while no core
 * is idle waits in the line of the core it last ran on, which that core
 * serves first, as the kernel's per-CPU runqueues do; with shared it waits
 * in one line for the next core to free. Eight AEASGD workers on 2 cores
 * (each exchange a pull and then a push): waiting on its own core, an
 * exchange's push follows its pull sooner, so fewer pushes of others come
 * between them (real runs on 2 cores: 32-44% of exchanges see none; one
 * shared line: 3%). The same work either way; a bad value names the key. */
static void test_a_process_waits_on_its_core(void **state)
{
    support_fixture *f = *state;
    const char *base[] = {"train.algorithm=aeasgd", "cluster.workers=8", "sim.cores=2",
                          "sim.compute=constant", "sim.compute_mean=0.001", "sim.latency=0",
                          "sim.bandwidth=1e15", "sim.answer=0.0001", "sim.apply=0.0001",
                          "sim.message_cpu=0.00002", "sim.timeslice=0.004",
                          "sim.eval_cost=0.005", "sim.migration=0.0005", "train.epochs=16",
                          NULL, NULL};
    char own[4096], shared[4096];
    base[14] = "sim.placement=core";
    s_sim(f, base, own, sizeof own);
    base[14] = "sim.placement=shared";
    s_sim(f, base, shared, sizeof shared);
    assert_true(s_num(own, "updates") == s_num(shared, "updates"));
    assert_true(s_num(own, "staleness_mean") < 0.85 * s_num(shared, "staleness_mean"));
    char *own_json = s_file(own, "summary.json"), *shared_json = s_file(shared, "summary.json");
    long own_fresh = 0, shared_fresh = 0;   /* exchanges no other push came between */
    assert_int_equal(sscanf(strstr(own_json, "\"staleness_histogram\""),
                            "\"staleness_histogram\": [%ld", &own_fresh), 1);
    assert_int_equal(sscanf(strstr(shared_json, "\"staleness_histogram\""),
                            "\"staleness_histogram\": [%ld", &shared_fresh), 1);
    free(own_json);
    free(shared_json);
    assert_true(own_fresh > 2 * shared_fresh);

    base[14] = "sim.placement=anywhere";
    assert_int_equal(s_sim_status(f, base), 2);
    assert_non_null(strstr(f->r.err, "placement"));
}

/* Real mode's injected faults and trace replay are refused in the
 * simulator, naming the key (cluster.drop = 0.1 once ran as if 0, the key
 * kept in its config.ini and injected_drops 0); [sim]'s own network keys
 * are the simulator's. */
static void test_real_modes_faults_are_refused(void **state)
{
    support_fixture *f = *state;
    const char *keys[] = {"cluster.drop=0.1", "cluster.duplicate=0.1", "cluster.latency=0.001",
                          "cluster.jitter=0.001"};
    for (int i = 0; i < 4; i++) {
        const char *extra[] = {"train.algorithm=hogwild", keys[i], NULL};
        assert_int_equal(s_sim_status(f, extra), 2);
        char key[32];
        snprintf(key, sizeof key, "%.*s", (int)strcspn(keys[i], "="), keys[i]);
        if (!strstr(f->r.err, key) || !strstr(f->r.err, "[sim] latency")) {
            fail_msg("%s: %s", keys[i], f->r.err);
        }
    }
    char trace[400], key[450];
    snprintf(trace, sizeof trace, "%s/trace.csv", f->dir);
    support_write_file(trace, "device,speed,bandwidth,latency,off\n0,2,,,\n");
    snprintf(key, sizeof key, "cluster.trace=%s", trace);
    const char *replay[] = {"train.algorithm=hogwild", key, NULL};
    assert_int_equal(s_sim_status(f, replay), 2);
    assert_non_null(strstr(f->r.err, "sim.trace"));
    const char *own[] = {"train.algorithm=hogwild", "sim.latency=0.001", "sim.jitter=0.001",
                         NULL};
    assert_int_equal(s_sim_status(f, own), 0);
}

/* Each row's step and loss in a steps.csv (at most `max` rows). */
static int s_step_losses(const char *dir, long *step, double *loss, int max)
{
    char *csv = s_file(dir, "steps.csv");
    int n = 0;
    for (char *line = strchr(csv, '\n'); line && line[1] && n < max;
         line = strchr(line + 1, '\n')) {
        double t;
        int worker;
        assert_int_equal(sscanf(line + 1, "%lf,%d,%ld,%lf", &t, &worker, &step[n], &loss[n]), 4);
        n++;
    }
    free(csv);
    return n;
}

/* A worker restarted after a failure goes on with the minibatches it had
 * not reached (it drew its first ones again, so that an "epoch" repeated
 * part of the data and never saw the rest): at a learning rate too small
 * to move the model, every step's loss is that of the same step of the
 * run without the failure. steps.csv has one row per step, as real mode's
 * has: the step the failure cut before its push, taken again, is written
 * once (its first take's row stayed beside the second). */
static void test_a_restarted_worker_goes_on_with_its_data(void **state)
{
    support_fixture *f = *state;
    const char *base[] = {"train.algorithm=hogwild", "cluster.workers=1", "train.lr=1e-30",
                          "sim.compute=constant", "sim.compute_mean=0.001",
                          "cluster.restart=on-failure", NULL, NULL};
    char plain[4096], failed[4096];
    s_sim(f, base, plain, sizeof plain);
    base[6] = "sim.fail=0@0.015-0.02";
    s_sim(f, base, failed, sizeof failed);
    assert_true(s_num(failed, "restarts") == 1);
    enum { MAX = 4096 };
    static long plain_step[MAX], step[MAX];
    static double plain_loss[MAX], loss[MAX];
    int n_plain = s_step_losses(plain, plain_step, plain_loss, MAX);
    int n = s_step_losses(failed, step, loss, MAX);
    assert_true(n_plain > 40 && n_plain < MAX && plain_step[n_plain - 1] == n_plain);
    if (n != n_plain) {   /* one row per step: the step taken again once */
        fail_msg("%d rows in steps.csv for %d steps", n, n_plain);
    }
    for (int i = 0; i < n; i++) {
        assert_true(step[i] == i + 1);
        if (fabs(loss[i] - plain_loss[step[i] - 1]) > 1e-6) {
            fail_msg("step %ld: loss %.7f, without the failure %.7f", step[i], loss[i],
                     plain_loss[step[i] - 1]);
        }
    }
    /* failing again while it starts (before it took up its share): that
     * life wrote nothing, and the steps the first life wrote and the third
     * took again kept both rows */
    base[6] = "sim.fail=0@0.015-0.02,0@0.0205-0.03";
    const char *again[] = {base[0], base[1], base[2], base[3], base[4], base[5], base[6],
                           "sim.startup_cpu=0.001", NULL};
    s_sim(f, again, failed, sizeof failed);
    assert_true(s_num(failed, "restarts") == 2);
    n = s_step_losses(failed, step, loss, MAX);
    if (n != n_plain) {
        fail_msg("%d rows in steps.csv for %d steps after two failures", n, n_plain);
    }
    for (int i = 0; i < n; i++) {
        assert_true(step[i] == i + 1);
    }
}

/* A shard writes a checkpoint at each worker's done, as a real one does:
 * failing after a worker has finished, it comes back with that worker's
 * work (here worker 1 is away while worker 0 trains alone and finishes:
 * nothing is pushed between its done and the failure). It came back from
 * the checkpoint of time 0, and 158 updates of a worker that had left,
 * which none would redo, were lost. */
static void test_a_shard_keeps_a_finished_workers_work(void **state)
{
    support_fixture *f = *state;
    char trace[400], trace_arg[420];
    snprintf(trace, sizeof trace, "%s/away.csv", f->dir);
    support_write_file(trace, "device,speed,bandwidth,latency,off\n0,1,,,\n1,1,,,0.002-3.0\n");
    snprintf(trace_arg, sizeof trace_arg, "sim.trace=%s", trace);
    const char *base[] = {"train.algorithm=hogwild", "cluster.workers=2",
                          "cluster.restart=on-failure", "checkpoint.every=100", trace_arg, NULL,
                          NULL};
    char plain[4096], failed[4096];
    s_sim(f, base, plain, sizeof plain);
    base[5] = "sim.fail=ps0@1.5";
    s_sim(f, base, failed, sizeof failed);
    assert_true(s_num(failed, "shard_restarts") == 1);
    if (s_num(failed, "lost_updates") != 0 || s_num(failed, "updates") != s_num(plain, "updates")) {
        fail_msg("%.0f updates lost, %.0f of %.0f made", s_num(failed, "lost_updates"),
                 s_num(failed, "updates"), s_num(plain, "updates"));
    }
}

/* A lockstep rule's evaluation waits for its shards to show one round,
 * as the real evaluator's pulls do: each updates value of eval.csv is one
 * model. With backups, shard 0 closes a round two latencies before the
 * other (its verdict's way), and one row in five paired its updates with
 * a model half of the next round. */
static void test_a_lockstep_rows_model_is_one_rounds(void **state)
{
    support_fixture *f = *state;
    const char *extra[] = {"model.type=softmax", "train.epochs=1", "train.algorithm=sync",
                           "cluster.workers=3", "algorithm.backups=1", "cluster.servers=2",
                           "eval.every=0.0001", "sim.latency=0.0002", NULL};
    char dir[4096];
    s_sim(f, extra, dir, sizeof dir);
    char *text = s_file(dir, "eval.csv");
    enum { MAX = 4096 };
    static double loss_of[MAX];
    for (int i = 0; i < MAX; i++) {
        loss_of[i] = NAN;
    }
    int rows = 0;
    for (char *line = strchr(text, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        double t, epoch, loss, acc;
        long updates, samples;
        assert_int_equal(sscanf(line + 1, "%lf,%lf,%ld,%ld,%lf,%lf", &t, &epoch, &updates,
                                &samples, &loss, &acc), 6);
        assert_true(updates >= 0 && updates < MAX);
        if (!isnan(loss_of[updates]) && loss_of[updates] != loss) {
            fail_msg("updates %ld: losses %.9g and %.9g", updates, loss_of[updates], loss);
        }
        loss_of[updates] = loss;
        rows++;
    }
    free(text);
    assert_true(rows > 100);   /* evaluations kept coming */
}

/* A worker restarted while shard 0 is down takes up its share from the
 * count that shard comes back with, as a real worker's first pull waits
 * for it: it took it from the dead shard's count, so that the steps whose
 * pushes the failure lost were never taken again (every example of its
 * share counted only when each is). */
static void test_a_worker_restarted_while_its_shard_is_down(void **state)
{
    support_fixture *f = *state;
    const char *base[] = {"train.algorithm=hogwild", "cluster.workers=1", "train.lr=1e-30",
                          "sim.compute=constant", "sim.compute_mean=0.001",
                          "cluster.restart=on-failure", "checkpoint.every=0.01", NULL, NULL};
    char plain[4096], failed[4096];
    s_sim(f, base, plain, sizeof plain);
    base[7] = "sim.fail=ps0@0.055-0.08,0@0.06-0.07";
    s_sim(f, base, failed, sizeof failed);
    assert_true(s_num(failed, "restarts") == 2 && s_num(failed, "lost_updates") > 0);
    if (s_num(failed, "samples") != s_num(plain, "samples")) {
        fail_msg("samples %.0f, without the failures %.0f", s_num(failed, "samples"),
                 s_num(plain, "samples"));
    }
}

/* A worker restarted after shard 1 came back from an older checkpoint
 * takes up where the shard that counted fewest left it, and shard 0 takes
 * the steps it has once, as in real mode (test_recovery): it took up at
 * shard 0's count, and shard 1 never got the steps its restore lost. */
static void test_a_worker_restarted_after_a_restore_retakes_what_it_lost(void **state)
{
    support_fixture *f = *state;
    const char *base[] = {"train.algorithm=hogwild", "cluster.workers=1", "cluster.servers=2",
                          "train.lr=1e-30", "sim.compute=constant", "sim.compute_mean=0.001",
                          "cluster.restart=on-failure", "checkpoint.every=0.01", NULL, NULL};
    char plain[4096], failed[4096];
    s_sim(f, base, plain, sizeof plain);
    base[8] = "sim.fail=ps1@0.055,0@0.06-0.07";
    s_sim(f, base, failed, sizeof failed);
    assert_true(support_shard_number(failed, 1, "lost_updates") > 0);
    double want = support_shard_number(plain, 0, "samples");
    for (int k = 0; k < 2; k++) {
        if (support_shard_number(failed, k, "samples") != want) {
            fail_msg("shard %d counted %.0f samples, without the failures %.0f", k,
                     support_shard_number(failed, k, "samples"), want);
        }
    }
    /* the steps shard 1 lost, pushed again, and shard 0 already had */
    assert_true(support_shard_number(failed, 0, "duplicates") >=
                support_shard_number(failed, 1, "lost_updates"));
    assert_true(support_shard_number(failed, 1, "duplicates") == 0);
}

/* SSP after a worker's restart: the restarted worker goes on at the clock
 * its counted pushes reached. It began at clock 0 again, ran past the
 * bound (its pulls were always ready), and once done left the others
 * waiting for clocks it never pushed: the run deadlocked. */
static void test_ssp_goes_on_after_a_restart(void **state)
{
    support_fixture *f = *state;
    const char *base[] = {"train.algorithm=ssp", "cluster.workers=3", "sim.compute=lognormal",
                          "sim.compute_mean=0.001", "sim.compute_sd=0.0005", "sim.latency=0.0001",
                          "cluster.restart=on-failure", NULL, NULL};
    char plain[4096], failed[4096];
    s_sim(f, base, plain, sizeof plain);
    base[7] = "sim.fail=1@0.05-0.06";
    s_sim(f, base, failed, sizeof failed);
    assert_true(s_num(failed, "restarts") == 1);
    assert_true(s_num(failed, "samples") == s_num(plain, "samples"));
    assert_true(s_num(failed, "staleness_max") <= 3 + 1 + 2);   /* s = 3, and a restart's */
}

/* FedBuff applies its buffer every K pushes; the fewer than K left when
 * training ends are never applied, and are counted dropped, not applied
 * (they were counted applied, with dropped 0, while the summary's updates
 * held K x as many). */
static void test_fedbuffs_last_buffer_is_counted_dropped(void **state)
{
    support_fixture *f = *state;
    const char *extra[] = {"train.algorithm=fedbuff", "algorithm.buffer=3",
                           "cluster.workers=4", NULL};
    char dir[4096];
    s_sim(f, extra, dir, sizeof dir);
    double messages = s_num(dir, "push_messages");
    assert_true(s_num(dir, "pushes") == 3 * s_num(dir, "updates"));
    assert_true(s_num(dir, "dropped") == fmod(messages, 3));
    assert_true(s_num(dir, "dropped") > 0);   /* this run leaves some */
    /* the pushes left in the buffer leave the staleness too (their sum
     * stayed in staleness_mean, their count left) */
    support_check_run_arithmetic(dir, 10000);
}

/* A shard restored from a checkpoint holds what the workers had pushed
 * then: SSP's clock of a worker that has since finished (it never pushes
 * again), and, for SAGN, rounds that every worker must push again past
 * its budget. Both once waited forever ("deadlock"); each time below falls
 * where that happened. */
static void test_bounded_rules_go_on_after_a_shard_is_restored(void **state)
{
    support_fixture *f = *state;
    const char *runs[][2] = {{"train.algorithm=ssp", "sim.fail=ps1@0.318"},
                             {"train.algorithm=sagn", "sim.fail=ps1@0.05"},
                             {"train.algorithm=sagn", "sim.fail=ps1@0.25"}};
    for (int i = 0; i < 3; i++) {
        const char *extra[] = {runs[i][0], runs[i][1], "cluster.workers=3", "cluster.servers=2",
                               "sim.speed=1,1,3", "cluster.restart=on-failure",
                               i == 0 ? "checkpoint.every=0.1" : "checkpoint.every=0.02", NULL};
        char dir[4096];
        s_sim(f, extra, dir, sizeof dir);
        assert_true(s_num(dir, "restarts") == 1);
        assert_true(s_num(dir, "epochs") >= 2.0);
    }
}

/* A shard restored from a checkpoint that holds a half-done round
 * forgets the round, and its workers retake it: the pushes in it were
 * counted applied in the checkpoint, and stayed so (94 and 95 pushes for
 * 31 rounds of 3 workers, the summary's dropped short by as many). They
 * are counted dropped: pushes are the rounds' pushes, and the staleness
 * histogram sums to them. */
static void test_a_forgotten_half_round_is_counted_dropped(void **state)
{
    support_fixture *f = *state;
    const char *fails[] = {"sim.fail=ps0@0.0061-0.0081", "sim.fail=ps0@0.0072-0.0092",
                           "sim.fail=ps0@0.0161-0.0181"};
    for (int i = 0; i < 3; i++) {
        char id[40], dir[600];
        snprintf(id, sizeof id, "experiment.run_id=h%d", i);
        const char *args[] = {"train", "/dev/null", f->out_arg, "experiment.mode=sim",
                              "experiment.name=half", id, "data.dataset=synthetic",
                              "data.train_size=3000", "model.type=softmax",
                              "train.algorithm=sync", "train.epochs=2", "cluster.workers=3",
                              "cluster.restart=on-failure", "checkpoint.every=0.0013",
                              "sim.compute=exponential", fails[i], "eval.every=0", NULL};
        support_run_asgd(&f->r, f->dir, args);
        if (f->r.status != 0) {
            fail_msg("%s: sim failed (%d): %s", fails[i], f->r.status, f->r.err);
        }
        snprintf(dir, sizeof dir, "%s/half/h%d", f->out, i);
        double updates = s_num(dir, "updates"), pushes = s_num(dir, "pushes");
        if (s_num(dir, "shard_restarts") != 1 || pushes != 3 * updates) {
            fail_msg("%s: %g pushes in %g rounds of 3 workers", fails[i], pushes, updates);
        }
        char path[700];
        snprintf(path, sizeof path, "%s/summary.json", dir);
        char *text = support_read_file(path);
        assert_non_null(text);
        const char *h = strstr(text, "\"staleness_histogram\":");
        assert_non_null(h);
        h = strchr(h, '[');
        double sum = 0;
        for (char *end; h && *h != ']'; h = end) {
            sum += strtod(h + 1, &end);
            if (end == h + 1) {
                break;
            }
        }
        free(text);
        assert_true(sum == pushes);
    }
}

/* Sync whose shard 1 comes back from an older checkpoint than shard 0's
 * version: a worker that had pushed shard 0's round waited there for the
 * next, which only workers now retaking shard 1's rounds could close, and
 * the run stopped as a deadlock at 1.15 s. A worker told by shard 1's
 * reply that it went back asks shard 0 again for that version, so both
 * shards end at one version. */
static void test_sync_goes_on_after_a_shard_goes_back(void **state)
{
    support_fixture *f = *state;
    const char *args[] = {"train", "/dev/null", f->out_arg, "experiment.mode=sim",
                          "experiment.name=back", "experiment.run_id=r",
                          "data.dataset=synthetic", "data.train_size=2000", "model.type=softmax",
                          "train.algorithm=sync", "train.epochs=0.5", "train.batch=8",
                          "cluster.workers=2", "cluster.servers=2", "cluster.restart=on-failure",
                          "checkpoint.every=0.05", "sim.compute=constant", "sim.compute_mean=0.01",
                          "sim.latency=0.001", "sim.cores=1", "sim.timeslice=0",
                          "sim.fail=ps1@0.09-0.26", NULL};
    support_run_asgd(&f->r, f->dir, args);
    if (f->r.status != 0) {
        fail_msg("sim failed (%d): %s", f->r.status, f->r.err);
    }
    char dir[600];
    snprintf(dir, sizeof dir, "%s/back/r", f->out);
    assert_true(s_num(dir, "shard_restarts") == 1);
    assert_true(s_num(dir, "lost_updates") == 2);   /* back at version 2 from 4 */
    /* 0.5 epochs of 2,000 in minibatches of 8, in rounds of 2 workers */
    assert_true(s_num_of(dir, "ps-0.json", "version") == 63);
    assert_true(s_num_of(dir, "ps-1.json", "version") == 63);
    /* with a backup worker, whose rounds shard 0 leads: shard 1 behind
     * retakes the rounds shard 0 closed without its verdict (it said
     * "late", and shard 1 never moved); shard 0 behind is pulled from
     * afresh after its verdict (which told of its new life, and the next
     * pull waited there for a round it had lost). Both deadlocked. */
    const char *failures[] = {"sim.fail=ps1@0.09-0.26", "sim.fail=ps0@0.09-0.26"};
    for (int i = 0; i < 2; i++) {
        char id[40];
        snprintf(id, sizeof id, "experiment.run_id=b%d", i);
        const char *led[] = {"train", "/dev/null", f->out_arg, "experiment.mode=sim",
                             "experiment.name=back", id, "data.dataset=synthetic",
                             "data.train_size=2000", "model.type=softmax",
                             "train.algorithm=sync", "algorithm.backups=1", "train.epochs=0.5",
                             "train.batch=8", "cluster.workers=3", "cluster.servers=2",
                             "cluster.restart=on-failure", "checkpoint.every=0.05",
                             "sim.compute=constant", "sim.compute_mean=0.01",
                             "sim.latency=0.001", "sim.cores=1", "sim.timeslice=0", failures[i],
                             NULL};
        support_run_asgd(&f->r, f->dir, led);
        if (f->r.status != 0) {
            fail_msg("%s, one backup: sim failed (%d): %s", failures[i], f->r.status, f->r.err);
        }
        snprintf(dir, sizeof dir, "%s/back/b%d", f->out, i);
        assert_true(s_num(dir, "shard_restarts") == 1);
        /* a round for each of a worker's 42 steps (125 shared by 3) */
        assert_true(s_num_of(dir, "ps-0.json", "version") == 42);
        assert_true(s_num_of(dir, "ps-1.json", "version") == 42);
    }
}

/* The reverse: [sim]'s keys that change what happens to the workers are
 * refused by a real or threads run, naming the key (a real run with
 * sim.trace once ran every device present, the key kept in its
 * config.ini); [sim]'s cost model passes, as a real run pays its costs
 * for real. */
static void test_sims_scenario_is_refused_by_other_modes(void **state)
{
    support_fixture *f = *state;
    char trace[400], trace_key[450];
    snprintf(trace, sizeof trace, "%s/trace.csv", f->dir);
    support_write_file(trace, "device,speed,bandwidth,latency,off\n0,1,,,0.01-0.2 0.2-0.4\n");
    snprintf(trace_key, sizeof trace_key, "sim.trace=%s", trace);
    const char *keys[] = {trace_key, "sim.straggler_fraction=0.5", "sim.pause=0@0.01-0.02",
                          "sim.fail=1@0.05", "sim.speed=1,2"};
    const char *modes[] = {"experiment.mode=real", "experiment.mode=threads"};
    for (int m = 0; m < 2; m++) {
        for (int i = 0; i < 5; i++) {
            const char *extra[] = {"train.algorithm=hogwild", "cluster.workers=2", modes[m],
                                   keys[i], NULL};
            char key[32];   /* the command line names it as given: "sim.KEY=VALUE" */
            snprintf(key, sizeof key, "command line: %.*s=", (int)strcspn(keys[i], "="),
                     keys[i]);
            if (s_sim_status(f, extra) != 2 || !strstr(f->r.err, key) ||
                !strstr(f->r.err, ": only experiment.mode = sim follows it")) {
                fail_msg("%s %s: status %d, \"%s\"", modes[m], keys[i], f->r.status, f->r.err);
            }
        }
    }
    const char *costs[] = {"train.algorithm=hogwild", "cluster.workers=2",
                           "experiment.mode=threads", "sim.cores=2", "sim.latency=0.001", NULL};
    if (s_sim_status(f, costs) != 0) {
        fail_msg("threads with [sim] costs: %s", f->r.err);
    }
}

/* steps.csv's bytes are what the worker has sent and received so far, as
 * in real mode (they were always 0): with one shard, each Hogwild step
 * after the first adds its push, the next pull and its reply. */
static void test_steps_count_the_bytes_on_the_wire(void **state)
{
    support_fixture *f = *state;
    const char *extra[] = {"train.algorithm=hogwild", "cluster.workers=2", NULL};
    char dir[4096];
    s_sim(f, extra, dir, sizeof dir);
    double params = s_num(dir, "params");
    char *csv = s_file(dir, "steps.csv");
    long last = -1;
    int rows = 0;
    for (char *line = strchr(csv, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        double t, loss;
        int worker;
        long step, staleness, bytes;
        assert_int_equal(sscanf(line + 1, "%lf,%d,%ld,%lf,%ld,%ld", &t, &worker, &step, &loss,
                                &staleness, &bytes), 6);
        if (worker != 0) {
            continue;
        }
        if (last >= 0) {
            assert_true(bytes - last == 3 * WIRE_HEADER_SIZE + 2 * 4 * (long)params);
            rows++;
        }
        last = bytes;
    }
    free(csv);
    assert_true(rows > 100);
    /* and the shard's counters are those bytes (they were always 0): every
     * push came after a pull, answered with the parameters */
    double pushes = s_num_of(dir, "ps-0.json", "pushes");
    double reply = WIRE_HEADER_SIZE + 4 * params;
    assert_true(s_num_of(dir, "ps-0.json", "bytes_in") == pushes * (WIRE_HEADER_SIZE + reply));
    assert_true(s_num_of(dir, "ps-0.json", "bytes_out") == pushes * reply);
}

/* eval.csv's accuracies: the initial model's, the best after an update
 * with a finite loss, and the best with a non-finite loss (-1: none). */
static void s_accuracies(const char *dir, double *initial, double *best, double *nonfinite)
{
    char *csv = s_file(dir, "eval.csv");
    *initial = NAN;
    *best = *nonfinite = -1;
    for (char *line = strchr(csv, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        double t, epoch, loss, acc;
        long updates, samples;
        assert_int_equal(sscanf(line + 1, "%lf,%lf,%ld,%ld,%lf,%lf", &t, &epoch, &updates,
                                &samples, &loss, &acc), 6);
        if (updates == 0) {
            *initial = acc;
        } else if (isfinite(loss)) {
            *best = fmax(*best, acc);
        } else {
            *nonfinite = fmax(*nonfinite, acc);
        }
    }
    free(csv);
}

/* best_test_acc is the best evaluation of a trained model: a run that
 * never learns (a learning rate of 1,000: its loss in the hundreds, never
 * non-finite, so not diverged) scored its best on the initial model, at
 * random, and reported that. */
static void test_the_best_accuracy_is_after_training(void **state)
{
    support_fixture *f = *state;
    const char *extra[] = {"train.algorithm=hogwild", "cluster.workers=2", "train.lr=1e3",
                           "experiment.seed=1", NULL};
    char dir[4096];
    s_sim(f, extra, dir, sizeof dir);
    double initial, best, nonfinite;
    s_accuracies(dir, &initial, &best, &nonfinite);
    assert_true(best > 0 && initial > best);   /* the case: the untrained model scored best */
    assert_true(nonfinite < 0);
    assert_true(fabs(s_num(dir, "best_test_acc") - best) < 1e-6);
}

/* Nor is it a diverged model's: a run whose loss became NaN scored that
 * model (its parameters NaN) at 0.08, above its trained ones, and
 * reported that as its best. Its final accuracy is unknown (null) too:
 * it was that 0.08, which a figure averaged in. */
static void test_the_best_accuracy_is_of_a_finite_model(void **state)
{
    support_fixture *f = *state;
    const char *extra[] = {"train.algorithm=hogwild", "cluster.workers=2", "train.lr=80",
                           "model.hidden=16", "train.epochs=5", "eval.every=0.01",
                           "experiment.seed=1", NULL};
    char dir[4096];
    s_sim(f, extra, dir, sizeof dir);
    double initial, best, nonfinite;
    s_accuracies(dir, &initial, &best, &nonfinite);
    char *text = s_file(dir, "summary.json");
    cJSON *j = cJSON_Parse(text);
    free(text);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "diverged")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, "final_test_acc")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, "final_test_loss")));
    cJSON_Delete(j);
    assert_true(best > 0 && nonfinite > best);   /* the case: the NaN model scored best */
    assert_true(fabs(s_num(dir, "best_test_acc") - best) < 1e-6);
}

static void test_a_thousand_workers(void **state)
{
    support_fixture *f = *state;
    const char *args[] = {"train", "/dev/null", f->out_arg, "experiment.mode=sim",
                          "data.dataset=synthetic", "data.train_size=65536", "model.type=softmax",
                          "train.algorithm=hogwild", "cluster.workers=1024", "train.epochs=1",
                          "eval.every=0", NULL};
    support_run_asgd(&f->r, f->dir, args);
    if (f->r.status != 0) {
        fail_msg("%s", f->r.err);
    }
    char dir[4096];
    size_t len = strcspn(f->r.out, "\n");
    memcpy(dir, f->r.out, len);
    dir[len] = '\0';
    assert_true(s_num(dir, "workers") == 1024);
    assert_true(s_num(dir, "updates") == 1024);    /* one minibatch each */
    assert_true(s_num(dir, "staleness_max") > 500);
}

/* train.epochs means the same work for any worker count: the asynchronous
 * rules split it to the minibatch (4,096 workers, 5 epochs: 5,120
 * minibatches, some workers take 1 and some 2); the elastic and averaging
 * rules' local loops stop at the budget; the synchronous ones take the
 * whole rounds nearest it, every worker the same. */
static void test_budgets_add_up_to_the_epochs(void **state)
{
    support_fixture *f = *state;
    const char *many[] = {"train.algorithm=hogwild", "cluster.workers=4096",
                          "data.train_size=65536", "train.epochs=5", "eval.every=0", NULL};
    char dir[4096];
    s_sim(f, many, dir, sizeof dir);
    assert_true(s_num(dir, "samples") == 5.0 * 65536);
    assert_true(s_num(dir, "epochs") == 5.0);
    const char *local[][3] = {{"train.algorithm=easgd", "algorithm.window=10", NULL},
                              {"train.algorithm=average", "algorithm.window=10", NULL},
                              {"train.algorithm=agn", "algorithm.window=10", NULL},
                              {"train.algorithm=sync", NULL, NULL}};
    for (int i = 0; i < 4; i++) {
        const char *one[] = {local[i][0], "cluster.workers=1", "train.epochs=1", local[i][1],
                             NULL};
        s_sim(f, one, dir, sizeof dir);
        /* 10,000 examples: 156.25 minibatches of 64; one worker takes 157
         * (the sequential trainer's count, rounded up), lockstep or not
         * (156, the nearest, lost the sequential trainer's last step); not
         * 16 windows of 10 */
        assert_true(s_num(dir, "samples") == 157 * 64);
    }
    const char *sync[] = {"train.algorithm=sync", "cluster.workers=3", "train.epochs=2", NULL};
    s_sim(f, sync, dir, sizeof dir);
    /* 312.5 minibatches: 104 rounds of 3 workers, within half a round */
    assert_true(s_num(dir, "updates") == 104);
    assert_true(fabs(s_num(dir, "samples") / 64 - 312.5) <= 1.5);
    /* 45.3 minibatches, 11.3 rounds of 4: 11 rounds (from 46, the total
     * rounded up, it once took 12: 0.7 of a round over) */
    const char *four[] = {"train.algorithm=sync", "cluster.workers=4", "train.epochs=0.29",
                          NULL};
    s_sim(f, four, dir, sizeof dir);
    assert_true(s_num(dir, "updates") == 11);
    assert_true(fabs(s_num(dir, "samples") / 64 - 0.29 * 10000 / 64) <= 2);
    /* its rates and eval.csv's epochs are of its samples (an epoch from
     * the version times the batch went unseen) */
    support_check_run_arithmetic(dir, 10000);
}

/* Synchronous EASGD with two workers and alpha 0.3 (not 0: a wrong sign
 * of the elastic force must show), replayed by hand: every window each
 * worker takes its local SGD steps, then x_k -= E_k with E_k = alpha
 * (x_k - c), and the centre takes c += E_0 + E_1. The simulated run's
 * saved centre (model.npy) is the same to the bit. */
static void test_easgd_two_workers_by_hand(void **state)
{
    support_fixture *f = *state;
    support_write_file(f->config, "[data]\ndataset = synthetic\ntrain_size = 400\n"
                       "test_size = 50\ndim = 6\nclasses = 3\n[model]\ntype = mlp\nhidden = 5\n"
                       "[train]\nalgorithm = easgd\nepochs = 1\nbatch = 16\nlr = 0.1\n"
                       "[algorithm]\nwindow = 3\nalpha = 0.3\n[cluster]\nworkers = 2\n"
                       "[experiment]\nmode = sim\n[eval]\nevery = 0\n");
    const char *args[] = {"train", f->config, f->out_arg, NULL};
    support_run_asgd(&f->r, f->dir, args);
    assert_int_equal(f->r.status, 0);
    char dir[4096];
    size_t len = strcspn(f->r.out, "\n");
    memcpy(dir, f->r.out, len);
    dir[len] = '\0';

    experiment e;
    error err = {0};
    assert_int_equal(experiment_configure(&e, f->config, 0, NULL, NULL, &err), 0);
    assert_int_equal(experiment_load(&e, &err), 0);
    backend *b = backend_new(&e.backend, &err);
    model *m = model_new(&e.model, b, e.dim, e.classes, &err);
    size_t n = m->nparams;
    float *c = malloc(n * sizeof *c), *saved = malloc(n * sizeof *saved);
    model_init_host(m, c, e.seed);
    worker w[2];
    worker_spec spec = experiment_worker_spec(&e, e.n_train);
    for (int k = 0; k < 2; k++) {
        shard mine;
        assert_int_equal(partition_take(&mine, 2, k, &e.train, e.partition, e.partition_alpha,
                                        e.seed, &err), 0);
        assert_int_equal(worker_init(&w[k], &spec, k, m, &e.train, &mine, &err), 0);
        partition_free(&mine, 1);
        memcpy(w[k].theta, c, n * sizeof *c);
    }
    /* 25 minibatches: 13 for each worker, in rounds of 3 (the last of 1) */
    uint64_t rounds = worker_rounds(&w[0], 3);
    assert_int_equal(rounds, 5);
    for (uint64_t r = 0; r < rounds; r++) {
        float *elastic[2];
        for (int k = 0; k < 2; k++) {
            for (int step = 0; step < 3 && !worker_done(&w[k]); step++) {
                worker_gradient(&w[k]);
                worker_local_step(&w[k]);
            }
            elastic[k] = malloc(n * sizeof(float));
            worker_elastic(w[k].theta, elastic[k], c, 0.3f, n);
        }
        for (size_t i = 0; i < n; i++) {
            float sum = 0;
            sum += elastic[0][i];
            sum += elastic[1][i];
            c[i] += 1.0f * sum;
        }
        free(elastic[0]);
        free(elastic[1]);
    }
    assert_int_equal(export_read(dir, saved, n, &err), 0);
    assert_memory_equal(saved, c, n * sizeof *c);
    for (int k = 0; k < 2; k++) {
        worker_free(&w[k]);
    }
    free(c);
    free(saved);
    model_destroy(&m);
    backend_destroy(&b);
    experiment_destroy(&e);
}

/* A counter of shard k's ps-K.json. */
static double s_shard_num(const char *dir, int k, const char *key)
{
    char name[32];
    snprintf(name, sizeof name, "ps-%d.json", k);
    char *text = s_file(dir, name);
    cJSON *j = cJSON_Parse(text);
    free(text);
    cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    assert_true(cJSON_IsNumber(v));
    double x = v->valuedouble;
    cJSON_Delete(j);
    return x;
}

/* Synchronous SGD with a backup worker over 1, 2 and 4 shards, with
 * jittered links that reorder arrivals between shards: every round is the
 * same workers on every shard (same versions, applied and dropped pushes),
 * and dropped counts each late push once: it is exactly the pushes sent
 * (one per step) less the K = 2 applied per round. */
static void test_sync_rounds_agree_across_shards(void **state)
{
    support_fixture *f = *state;
    for (int servers = 1; servers <= 4; servers *= 2) {
        char shards[32], dir[4096];
        snprintf(shards, sizeof shards, "cluster.servers=%d", servers);
        const char *extra[] = {"train.algorithm=sync", "cluster.workers=3", "algorithm.backups=1",
                               shards, "sim.compute=lognormal",
                               "sim.compute_mean=0.002", "sim.compute_sd=0.001",
                               "sim.latency=200e-6", "sim.jitter=300e-6", NULL};
        s_sim(f, extra, dir, sizeof dir);
        double updates = s_num(dir, "updates"), dropped = s_num(dir, "dropped");
        char *steps = s_file(dir, "steps.csv");
        int pushes = -1;   /* rows but the header: one push each */
        for (const char *p = steps; *p; p++) {
            pushes += *p == '\n';
        }
        free(steps);
        assert_true(updates > 0);
        assert_true(dropped > 0);
        if (dropped != pushes - 2 * updates) {
            fail_msg("%d shards: %g dropped, but %d pushes for %g rounds of 2", servers, dropped,
                     pushes, updates);
        }
        for (int k = 0; k < servers; k++) {
            assert_true(s_shard_num(dir, k, "version") == updates);
            assert_true(s_shard_num(dir, k, "pushes") == 2 * updates);
            assert_true(s_shard_num(dir, k, "dropped") == dropped);
        }
    }
}

/* eval.csv's time column (at most max rows). */
static int s_eval_times(const char *dir, double *t, int max)
{
    char *csv = s_file(dir, "eval.csv");
    int n = 0;
    for (char *row = strchr(csv, '\n'); row && row[1] && n < max; row = strchr(row + 1, '\n')) {
        t[n++] = strtod(row + 1, NULL);
    }
    free(csv);
    return n;
}

/* [sim] eval_cost on a core of its own, workers starting at 0.05 s:
 * evaluations that take less than eval.every come exactly every
 * eval.every from the first step (the initial one, made before training,
 * is not one of them: counted, it put every later one an interval late);
 * those that fall due while one is made are skipped, as the real
 * evaluator skips them: the next is the first due after it ends (due in
 * the past, the next once went back in time: rows 0.02 s apart for
 * evaluations of 0.03 s; then it began as the last ended, 0.03 s apart,
 * where a real evaluator's rows are 0.04 s apart). */
static void test_evaluations_with_a_cost_keep_their_times(void **state)
{
    support_fixture *f = *state;
    const char *args[] = {"train.algorithm=hogwild", "cluster.workers=1", "model.type=softmax",
                          "train.epochs=2", "sim.compute=constant", "sim.compute_mean=0.001",
                          "sim.latency=0", "sim.bandwidth=1e15", "sim.startup_mean=0.05", NULL,
                          NULL};
    const double costs[4] = {0.005, 0.03, 0.02, 0.06};   /* 0.02, 0.06: ending on a due
                                                             * time is past it (to rounding,
                                                             * rows were 0.02 or 0.04 apart) */
    for (int c = 0; c < 4; c++) {
        char cost[64], dir[4096];
        snprintf(cost, sizeof cost, "sim.eval_cost=%g", costs[c]);
        args[9] = cost;
        s_sim(f, args, dir, sizeof dir);
        double t[64] = {0};
        int n = s_eval_times(dir, t, 64);
        assert_true(n > 5);
        double every = 0.02 * (floor(costs[c] / 0.02 + 1e-9) + 1);
        assert_true(t[0] == 0);   /* the initial model's */
        for (int i = 1; i < n - 1; i++) {   /* the last row: the final model's, at the end */
            double want = 0.02 + every * (i - 1);
            if (fabs(t[i] - want) > 1e-9) {
                fail_msg("eval_cost %g: row %d at %.9f s, not %.9f", costs[c], i, t[i], want);
            }
        }
        assert_true(t[n - 1] >= t[n - 2]);
    }
}

/* A worker whose failure window starts while it is still starting up
 * (loading its data) fails as a running one does: its first step waits
 * for the window's end (the failure was dropped, and it trained through
 * the window without a word in the log). */
static void test_a_worker_failing_before_its_first_step_waits(void **state)
{
    support_fixture *f = *state;
    const char *args[] = {"train.algorithm=hogwild", "cluster.workers=2", "model.type=softmax",
                          "train.epochs=0.5", "sim.startup_mean=0.05", "sim.startup_sd=0",
                          "sim.fail=1@0.01-0.2",
                          "cluster.restart=on-failure", NULL};
    char dir[4096];
    s_sim(f, args, dir, sizeof dir);
    char *log = s_file(dir, "log.txt");
    assert_non_null(strstr(log, "worker 1 failed at 0.010000 s, before its first step"));
    free(log);
    double first[2];
    s_worker_steps(dir, 0, &first[0], NULL);
    s_worker_steps(dir, 1, &first[1], NULL);
    /* time runs from worker 0's first pull, at its start-up of 0.05 s */
    if (!(first[0] >= 0 && first[1] >= 0.2 - 0.05 - 1e-9)) {
        fail_msg("first steps at %g and %g s, worker 1 down until 0.2 s", first[0], first[1]);
    }
}

/* A worker takes the round leader's verdict as it takes a reply, with a
 * message's work ([sim] message_cpu): sync with a backup worker over two
 * shards, worker 0 alone in each round (worker 1 100 times slower), pays
 * 11 message works a round on its path, not 10 (the verdict's receipt was
 * free: rounds of 15, 25 and 35 ms for message_cpu 0, 1 and 2 ms). */
static void test_taking_a_verdict_is_a_messages_work(void **state)
{
    support_fixture *f = *state;
    double step[2];
    for (int i = 0; i < 2; i++) {
        const char *args[] = {"train.algorithm=sync", "algorithm.backups=1", "cluster.workers=2",
                              "cluster.servers=2", "sim.speed=1,100", "sim.compute=constant",
                              "sim.compute_mean=0.01", "sim.latency=0.001", "sim.bandwidth=1e15",
                              i ? "sim.message_cpu=0.002" : "sim.message_cpu=0",
                              "eval.every=0", "train.epochs=0.2", NULL};
        char dir[4096];
        s_sim(f, args, dir, sizeof dir);
        double first;
        assert_true(s_worker_steps(dir, 0, &first, &step[i]) > 10);
    }
    if (fabs(step[0] - 0.015) > 1e-6 || fabs(step[1] - step[0] - 11 * 0.002) > 1e-6) {
        fail_msg("rounds of %.6f s and %.6f s with message_cpu 0 and 2 ms", step[0], step[1]);
    }
}

/* An evaluation held while a shard is down is made when it comes back,
 * and the ones after it are on the grid again (every 0.01 s from the first
 * step: they followed the held one 0.01 s apart, 0.0571, 0.0671, ...). */
static void test_evaluations_after_a_held_one_keep_their_times(void **state)
{
    support_fixture *f = *state;
    const char *args[] = {"train.algorithm=hogwild", "cluster.workers=2", "model.type=softmax",
                          "eval.every=0.01", "checkpoint.every=0.02", "cluster.restart=on-failure",
                          "sim.fail=ps0@0.0335-0.0472", "sim.compute=constant",
                          "sim.compute_mean=0.001", "sim.latency=0", NULL};
    char dir[4096];
    s_sim(f, args, dir, sizeof dir);
    double t[256] = {0};
    int n = s_eval_times(dir, t, 256), off = 0, held = 0;
    assert_true(n > 8);
    for (int i = 1; i < n - 1; i++) {   /* the last row: the final model's, at the end */
        double k = t[i] / 0.01;
        if (fabs(k - round(k)) > 1e-6) {
            off++;
            held += t[i] > 0.03 && t[i] < 0.05;   /* made as the shard came back */
        }
    }
    if (off != 1 || held != 1) {
        fail_msg("%d rows off the 0.01 s grid (%d of them the held one)", off, held);
    }
}

/* The work a shard does on a push ([sim] apply) delays the pull that
 * follows it (one worker's push and next pull reach the shard together),
 * and a worker's message work is per shard: with two shards a step is
 * its minibatch, six message costs of the worker's (two pulls sent, two
 * replies taken, two pushes sent) and two of the shards', which work side
 * by side. A compressed push's copy is of the bytes it sends. [sim]
 * answer is a reply's work, not a verdict's. */
static void test_a_shards_apply_and_each_shards_messages_take_time(void **state)
{
    support_fixture *f = *state;
    const char *apply[] = {"sim.apply=0.0003", NULL};
    double step = s_step_time(f, apply, NULL);
    if (fabs(step - (0.001 + 0.0003 * 312 / 313)) > 1e-6) {   /* no push before the first step */
        fail_msg("a step with apply: %.7f s", step);
    }
    const char *two[] = {"cluster.servers=2", "sim.message_cpu=0.0001", NULL};
    step = s_step_time(f, two, NULL);
    if (fabs(step - (0.001 + 8e-4)) > 1e-5) {
        fail_msg("a step over two shards with message work: %.7f s, not %.7f", step, 0.0018);
    }
    /* a compressed push's copy is of its compressed bytes (topk:0.01: 8 of
     * 754 values, 64 bytes), the reply's two copies of the whole vector */
    double params;
    const char *none[] = {NULL};
    s_step_time(f, none, &params);
    char bandwidth[64];   /* a copy of the whole vector: 0.2 ms */
    snprintf(bandwidth, sizeof bandwidth, "sim.copy_bandwidth=%.17g", params * 4 / 2e-4);
    const char *compressed[] = {bandwidth, "algorithm.compress=topk:0.01", NULL};
    step = s_step_time(f, compressed, NULL);
    if (step <= 0.0014 || step > 0.0014 + 1e-5) {
        fail_msg("a step with compressed pushes and copies: %.7f s", step);
    }
    /* a round of sync with a backup worker over two shards: its minibatch
     * and the reply's answer work; the leader's verdict is no reply and
     * costs no answer work (charged one, the round took 0.4 ms more) */
    const char *verdict[] = {"train.algorithm=sync", "cluster.workers=2", "algorithm.backups=1",
                             "cluster.servers=2", "sim.answer=0.0002", NULL};
    step = s_step_time(f, verdict, NULL);
    if (fabs(step - 0.0012) > 1e-5) {
        fail_msg("a round with a verdict: %.7f s, not %.7f", step, 0.0012);
    }
}

/* A shard that fails with pushes queued in it ([sim] apply keeps it busy)
 * loses them with its process, and counts them lost: updates + lost +
 * dropped is still every push the workers sent. The pulls that reached
 * it while it was down go again a [cluster] resend (1 s) after they were
 * sent, not the moment it is back (0.15 s): no step ends in between. */
static void test_a_failed_shard_loses_its_queue_and_resends_wait(void **state)
{
    support_fixture *f = *state;
    const char *plain[] = {"train.algorithm=hogwild", "cluster.workers=3", "sim.apply=0.0004",
                           NULL};
    char dir[4096];
    s_sim(f, plain, dir, sizeof dir);
    double updates = s_num(dir, "updates");
    const char *failing[] = {"train.algorithm=hogwild", "cluster.workers=3", "sim.apply=0.0004",
                             "cluster.restart=on-failure", "sim.fail=ps0@0.05",
                             "checkpoint.every=0.02", NULL};
    s_sim(f, failing, dir, sizeof dir);
    char *log = s_file(dir, "log.txt");
    double in_queue = s_num(dir, "lost_updates") -
                      (double)(s_version_after(log, "shard 0 failed at 0.050000 s") -
                               s_version_after(log, "shard 0 back at 0.150000 s"));
    free(log);
    assert_true(in_queue > 0);   /* the test has teeth: a push was waiting */
    assert_true(s_num(dir, "updates") + s_num(dir, "lost_updates") + s_num(dir, "dropped") ==
                updates);
    char *steps = s_file(dir, "steps.csv");
    int after = 0;
    for (char *row = strchr(steps, '\n'); row && row[1]; row = strchr(row + 1, '\n')) {
        double t = strtod(row + 1, NULL);
        if (t > 0.06 && t < 1.04) {
            fail_msg("a step ended at %g s, before the first resend after the failure", t);
        }
        after += t >= 1.04;
    }
    free(steps);
    assert_true(after > 0);
}

/* [cluster] restart's back-off: a worker that fails again and again
 * restarts 0.1 s after its first failure, twice as long after each next,
 * at most 5 s after one (the seventh: 6.4 s uncapped), and the failure
 * past backoff_limit restarts no more: the run fails. */
static void test_restarts_back_off_up_to_their_limit(void **state)
{
    support_fixture *f = *state;
    const char *args[] = {"train.algorithm=hogwild", "cluster.workers=1", "model.type=softmax",
                          "train.epochs=1", "eval.every=0", "cluster.restart=on-failure",
                          "cluster.backoff_limit=7",
                          "sim.fail=0@0.01,0@0.12,0@0.33,0@0.74,0@1.55,0@3.16,0@6.37", NULL};
    char dir[4096];
    s_sim(f, args, dir, sizeof dir);
    assert_true(s_num(dir, "restarts") == 7);
    char *log = s_file(dir, "log.txt");
    const char *want[] = {"worker 0 restarts at 0.110000 s", "worker 0 restarts at 0.320000 s",
                          "worker 0 restarts at 6.360000 s", "worker 0 restarts at 11.370000 s"};
    for (int i = 0; i < 4; i++) {
        if (!strstr(log, want[i])) {
            fail_msg("no \"%s\" in the log", want[i]);
        }
    }
    free(log);
    args[6] = "cluster.backoff_limit=2";
    args[7] = "sim.fail=0@0.01,0@0.12,0@0.33";
    assert_int_equal(s_sim_status(f, args), 1);
    assert_non_null(strstr(f->r.err, "worker 0 failed at 0.330 s"));
    assert_non_null(strstr(f->r.err, "backoff_limit"));
}

/* The time models' edges: a fraction of the workers that is not a whole
 * number of them makes the next whole number stragglers; draws of compute
 * time, start-up and latency never go below 0, however wide their spread;
 * pauses chain in any order they are listed; a trace's speed multiplies
 * its device's compute time, and its latency (0 too) and bandwidth replace
 * [sim]'s on that device's link. */
static void test_the_time_models_edges(void **state)
{
    support_fixture *f = *state;
    const struct {
        const char *fraction;
        int workers, slow;
    } stragglers[] = {{"0.3", 4, 2}, {"0.25", 8, 2}, {"0.1", 3, 1}, {"0.5", 3, 2}};
    for (int i = 0; i < 4; i++) {
        char text[128];
        snprintf(text, sizeof text, "[sim]\nstraggler_fraction = %s\nstraggler_slowdown = 10\n",
                 stragglers[i].fraction);
        sim_spec s = s_spec(text, stragglers[i].workers);
        int slow = 0;
        for (int k = 0; k < stragglers[i].workers; k++) {
            slow += s.speed[k] == 10;
        }
        if (slow != stragglers[i].slow) {
            fail_msg("straggler_fraction %s of %d workers: %d slow, not %d",
                     stragglers[i].fraction, stragglers[i].workers, slow, stragglers[i].slow);
        }
        sim_spec_free(&s);
    }
    sim_spec s = s_spec("[sim]\ncompute = normal\ncompute_mean = 0.001\ncompute_sd = 0.002\n"
                        "startup_mean = 0.1\nstartup_sd = 0.2\nlatency = 0.0001\n"
                        "jitter = 0.001\nbandwidth = 1e6\npause = 0@7-8, 0@5-7\n", 1);
    rng r = rng_derive(6, RNG_SIM, 1);
    int zeros[3] = {0};
    for (int i = 0; i < 10000; i++) {
        double t[3] = {sim_compute_time(&s, 0, &r), sim_startup_time(&s, &r),
                       sim_message_time(&s, 0, 1000, &r) - 1000 / 1e6};
        for (int k = 0; k < 3; k++) {
            assert_true(t[k] >= 0);
            zeros[k] += t[k] == 0;
        }
    }
    assert_true(zeros[0] > 1000 && zeros[1] > 1000 && zeros[2] > 1000);   /* some went below */
    assert_true(sim_after_pauses(&s, 0, 6.0) == 8.0);
    sim_spec_free(&s);

    char trace[4200], text[4400];
    snprintf(trace, sizeof trace, "%s/trace.csv", f->dir);
    support_write_file(trace, "device,speed,bandwidth,latency,off\n0,1,,,\n1,3,1e6,0,\n"
                       "2,1,,0.002,\n");
    snprintf(text, sizeof text, "[sim]\ncompute_mean = 0.001\nlatency = 0.0001\nbandwidth = 1e9\n"
             "trace = %s\n", trace);
    s = s_spec(text, 3);
    const double compute[3] = {0.001, 0.003, 0.001};
    const double message[3] = {0.0001 + 1e-6, 1e-3, 0.002 + 1e-6};   /* 1,000 bytes */
    for (int k = 0; k < 3; k++) {
        double c = sim_compute_time(&s, k, &r), m = sim_message_time(&s, k, 1000, &r);
        if (fabs(c - compute[k]) > 1e-12 || fabs(m - message[k]) > 1e-12) {
            fail_msg("device %d: compute %g s, a message %g s; not %g and %g", k, c, m,
                     compute[k], message[k]);
        }
    }
    sim_spec_free(&s);
}

/* ---- the cores alone (simcpu.c) ---- */

/* Shards 0..7 as the owners of jobs on [sim] cores, driven through the
 * simulator's queue: the jobs given at time 0, in order, and those each
 * job's end starts (`then`, in order, while its core is still taken, as
 * the simulator places a turn's effects); when each owner's last job
 * ended and on which core its last turn was. */
typedef struct cpu_job {
    int after;      /* -1: at time 0; else when owner `after`'s job ends */
    int who;
    double work;
} cpu_job;

typedef struct cpu_run {
    double end[8];
    int core[8];
} cpu_run;

static cpu_run s_cpu_run(const sim_spec *spec, const cpu_job *jobs, int njobs)
{
    experiment *e = calloc(1, sizeof *e);
    assert_non_null(e);
    e->sim = *spec;
    error err = {0};
    sim_shard shards[8];
    memset(shards, 0, sizeof shards);
    sim s = {.e = e, .err = &err, .shards = shards, .nshards = 8};
    assert_int_equal(sim_cpu_init(&s), 0);
    cpu_run out;
    bool used[16] = {false};
    for (int k = 0; k < 8; k++) {
        out.end[k] = -1;
        out.core[k] = -1;
    }
    for (int i = 0; i < njobs; i++) {
        if (jobs[i].after < 0) {
            assert_int_equal(sim_cpu_run(&s, sim_who_shard(jobs[i].who), jobs[i].work), 0);
            used[i] = true;
        }
    }
    sim_event ev;
    while (simq_pop(&s.q, &ev)) {
        s.now = ev.t;
        if (ev.kind == EV_BALANCE) {
            sim_cpu_balance(&s, &ev);
            continue;
        }
        assert_int_equal(ev.kind, EV_CPU);
        if (!sim_cpu_turn_ended(&s, &ev)) {
            continue;
        }
        out.end[ev.shard] = s.now;
        out.core[ev.shard] = ev.core;
        for (int i = 0; i < njobs; i++) {
            if (!used[i] && jobs[i].after == ev.shard) {
                used[i] = true;
                assert_int_equal(sim_cpu_run(&s, sim_who_shard(jobs[i].who), jobs[i].work), 0);
            }
        }
        sim_cpu_release(&s);
    }
    assert_false(s.failed);
    sim_cpu_free(&s);
    simq_free(&s.q);
    free(e);
    return out;
}

/* [sim] migration on two cores, each start 0.1 ms of [sim] wakeup: owner
 * 0 ran on core 0 until 1.1 ms; ready again at 3.1 ms, it finds owner 2's
 * 10 ms job on core 0 and core 1 idle. With no migration core 1 takes it
 * at once; with 5 ms it waits, hot, until it goes cold (6.1 ms), when the
 * idle core takes it and wakes; with 12 ms core 0 is free first (11.1 ms)
 * and, busy, goes straight on to it. With placement = shared too: a hot
 * owner waits in its core's line, which no other core takes from while it
 * is hot. Of two idle cores, the one that went idle last takes it. */
static void test_a_hot_owner_waits_until_it_goes_cold(void **state)
{
    (void)state;
    const cpu_job jobs[] = {{-1, 0, 0.001}, {-1, 1, 0.003}, {0, 2, 0.010}, {1, 0, 0.001}};
    const double migration[3] = {0, 0.005, 0.012}, end[3] = {0.0041, 0.0072, 0.0121};
    const int core[3] = {1, 1, 0};
    for (int i = 0; i < 6; i++) {   /* placement = core, then shared: the same */
        sim_spec spec = {.cores = 2, .wakeup = 0.0001, .migration = migration[i % 3],
                         .placement = i < 3 ? SIM_PLACE_CORE : SIM_PLACE_SHARED};
        cpu_run r = s_cpu_run(&spec, jobs, 4);
        if (fabs(r.end[0] - end[i % 3]) > 1e-12 || r.core[0] != core[i % 3]) {
            fail_msg("migration %g, placement %d: owner 0's job ended at %.7f s on core %d, "
                     "not %.7f on %d", migration[i % 3], spec.placement, r.end[0], r.core[0],
                     end[i % 3], core[i % 3]);
        }
    }
    /* a third core, idle since 2.1 ms: at 6.1 ms the one that went idle
     * last (core 1, at 3.1 ms) takes owner 0 */
    const cpu_job three[] = {{-1, 0, 0.001}, {-1, 1, 0.003}, {-1, 3, 0.002}, {0, 2, 0.010},
                             {1, 0, 0.001}};
    sim_spec spec = {.cores = 3, .wakeup = 0.0001, .migration = 0.005};
    cpu_run r = s_cpu_run(&spec, three, 5);
    if (fabs(r.end[0] - 0.0072) > 1e-12 || r.core[0] != 1) {
        fail_msg("on three cores owner 0's job ended at %.7f s on core %d", r.end[0], r.core[0]);
    }
}

/* Which core a job takes, on three cores (no migration): an owner that
 * has run takes the core it last ran on if that is idle, though another
 * went idle after it; a new one takes the core that went idle last.
 * Owners 0, 1 and 2 run on cores 0, 1 and 2 and end at 1, 2 and 3 ms; at
 * 3 ms owner 0 (core 0) and a new owner 3 (core 1) come, in either order. */
static void test_a_job_takes_its_last_core_else_the_last_idled(void **state)
{
    (void)state;
    cpu_job jobs[] = {{-1, 0, 0.001}, {-1, 1, 0.002}, {-1, 2, 0.003}, {2, 0, 0.001},
                      {2, 3, 0.001}};
    sim_spec spec = {.cores = 3};
    for (int order = 0; order < 2; order++) {   /* owner 0's first, then owner 3's */
        cpu_run r = s_cpu_run(&spec, jobs, 5);
        if (r.core[0] != 0 || r.core[3] != 1) {
            fail_msg("owner 0's job on core %d, new owner 3's on core %d (not 0 and 1)",
                     r.core[0], r.core[3]);
        }
        cpu_job swap = jobs[3];
        jobs[3] = jobs[4];
        jobs[4] = swap;
    }
    /* a core with nothing of its own or shared to run takes from the other
     * cores' lines the job that has waited longest, at a tie the next
     * core's after it first: at 2 ms owners 1 and 0 join the lines of
     * cores 1 and 0 (busy until 4 ms), and core 2, freed, takes owner 0's,
     * then owner 1's */
    const cpu_job lines[] = {{-1, 0, 0.001}, {-1, 1, 0.001}, {-1, 2, 0.001}, {0, 5, 0.003},
                             {1, 6, 0.003}, {2, 7, 0.001}, {7, 1, 0.001}, {7, 0, 0.001}};
    cpu_run r = s_cpu_run(&spec, lines, 8);
    if (fabs(r.end[0] - 0.003) > 1e-12 || fabs(r.end[1] - 0.004) > 1e-12 || r.core[0] != 2 ||
        r.core[1] != 2) {
        fail_msg("owner 0's job ended at %.7f s on core %d, owner 1's at %.7f s", r.end[0],
                 r.core[0], r.end[1]);
    }
}

/* [sim] timeslice on one core, each start from idle 0.1 ms of wakeup: a
 * job alone goes on from slice to slice without waking again (10 ms of
 * work end at 10.1 ms); one exactly a slice long is done in that slice,
 * not sent to the back of the line with nothing left to do; a long job
 * lets a waiting one have the core after its slice. At a tie between the
 * core's own line and the shared one, its own comes first. */
static void test_time_slices_on_a_core(void **state)
{
    (void)state;
    sim_spec spec = {.cores = 1, .timeslice = 0.001, .wakeup = 0.0001};
    const cpu_job alone[] = {{-1, 0, 0.010}};
    cpu_run r = s_cpu_run(&spec, alone, 1);
    assert_true(fabs(r.end[0] - 0.0101) < 1e-12);
    const cpu_job exact[] = {{-1, 0, 0.001}, {-1, 1, 0.001}};
    r = s_cpu_run(&spec, exact, 2);
    if (fabs(r.end[0] - 0.0011) > 1e-12 || fabs(r.end[1] - 0.0021) > 1e-12) {
        fail_msg("a job one slice long ended at %.7f s, the next at %.7f s", r.end[0], r.end[1]);
    }
    const cpu_job sliced[] = {{-1, 0, 0.005}, {-1, 1, 0.001}};
    r = s_cpu_run(&spec, sliced, 2);
    if (fabs(r.end[1] - 0.0021) > 1e-12 || fabs(r.end[0] - 0.0061) > 1e-12) {
        fail_msg("a 1 ms job behind a 5 ms one ended at %.7f s, that one at %.7f s", r.end[1],
                 r.end[0]);
    }
    spec.timeslice = 0;   /* owner 0's next job and a new owner's join at 1.1 ms */
    const cpu_job tie[] = {{-1, 0, 0.001}, {0, 1, 0.001}, {0, 0, 0.001}};
    r = s_cpu_run(&spec, tie, 3);
    if (fabs(r.end[0] - 0.0021) > 1e-12 || fabs(r.end[1] - 0.0031) > 1e-12) {
        fail_msg("the core's own line's job ended at %.7f s, the shared line's at %.7f s",
                 r.end[0], r.end[1]);
    }
}

/* train_time_s runs from shard 0's first pull, as time_s does, to its last
 * push, the run's end here, and samples/s is of it: a first pull, from a
 * worker that has heard no generation of the shard yet, is a pull like
 * any other (taken as from before a restart, it skipped the shard's
 * bookkeeping of pulls, and train_time_s began at a later one: 2% short).
 * A lockstep rule's run ends at its last push too, as in real mode, not
 * once the last round's replies are back (two latencies later). */
static void test_train_time_starts_at_the_first_pull(void **state)
{
    support_fixture *f = *state;
    const char *rules[] = {"train.algorithm=hogwild", "train.algorithm=sync",
                           "train.algorithm=average"};
    for (int i = 0; i < 3; i++) {
        const char *args[] = {rules[i], "cluster.workers=3", "train.epochs=1",
                              "sim.latency=0.002", NULL};
        char dir[4096];
        s_sim(f, args, dir, sizeof dir);
        double time_s = s_num(dir, "time_s"), train = s_num(dir, "train_time_s");
        if (fabs(train - time_s) > 1e-12 * time_s) {
            fail_msg("%s: train_time_s %.9f, time_s %.9f", rules[i], train, time_s);
        }
        assert_true(fabs(s_num(dir, "samples_per_s") - s_num(dir, "samples") / train) < 1e-6);
        char *eval = s_file(dir, "eval.csv");
        const char *last = strrchr(eval, '\n');
        while (last > eval && last[-1] != '\n') {
            last--;
        }
        if (fabs(strtod(last, NULL) - time_s) > 1e-6) {
            fail_msg("%s: eval.csv ends at %.9f s, time_s %.9f", rules[i], strtod(last, NULL),
                     time_s);
        }
        free(eval);
    }
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, support_fixture_setup, support_fixture_teardown)
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_events_come_out_in_time_order_ties_first_in),
        cmocka_unit_test(test_the_queue_with_slots_reused),
        cmocka_unit_test(test_time_models_have_their_mean_and_spread),
        cmocka_unit_test(test_calibrated_quantiles_keep_the_steps_mean),
        cmocka_unit_test(test_speed_stragglers_and_pauses),
        cmocka_unit_test(test_bad_sim_values_name_the_key),
        T(test_same_seed_same_bytes),
        T(test_equivalences_in_virtual_time),
        T(test_dcasgd_equivalences_in_virtual_time),
        T(test_staleness_scaled_rules_in_virtual_time),
        T(test_more_workers_than_processes_allow),
        T(test_a_profile_round_trips_and_sets_the_time),
        T(test_calibrate_takes_the_path_the_run_takes),
        T(test_compression_takes_work_at_both_ends),
        T(test_calibrate_stopped_leaves_nothing),
        T(test_fedbuff_and_post_local_in_virtual_time),
        T(test_compression_in_virtual_time),
        T(test_least_squares_in_virtual_time),
        T(test_alpha_zero_and_dynsgd_tau_in_virtual_time),
        T(test_prefetch_in_virtual_time),
        T(test_prefetch_asks_no_more_pulls),
        T(test_a_share_under_a_minibatch_is_said),
        T(test_ssp_bound_under_heavy_stragglers),
        T(test_failure_and_recovery),
        T(test_device_traces_in_virtual_time),
        T(test_shard_failure_restores_its_checkpoint),
        T(test_shared_cores_and_startup),
        T(test_message_work_takes_its_time),
        T(test_the_evaluator_and_start_up_share_the_cores),
        T(test_the_work_model_changes_time_not_rounds),
        T(test_a_shards_replies_leave_in_turn),
        T(test_a_turn_hands_on_what_it_makes_ready),
        T(test_a_cache_hot_worker_waits_for_its_core),
        T(test_a_process_waits_on_its_core),
        T(test_steps_count_the_bytes_on_the_wire),
        T(test_the_best_accuracy_is_after_training),
        T(test_the_best_accuracy_is_of_a_finite_model),
        T(test_real_modes_faults_are_refused),
        T(test_sims_scenario_is_refused_by_other_modes),
        T(test_a_restarted_worker_goes_on_with_its_data),
        T(test_a_worker_restarted_while_its_shard_is_down),
        T(test_a_shard_keeps_a_finished_workers_work),
        T(test_a_lockstep_rows_model_is_one_rounds),
        T(test_a_worker_restarted_after_a_restore_retakes_what_it_lost),
        T(test_ssp_goes_on_after_a_restart),
        T(test_bounded_rules_go_on_after_a_shard_is_restored),
        T(test_a_forgotten_half_round_is_counted_dropped),
        T(test_sync_goes_on_after_a_shard_goes_back),
        T(test_fedbuffs_last_buffer_is_counted_dropped),
        cmocka_unit_test(test_calibrations_arithmetic),
        T(test_no_evaluation_while_a_shard_is_down),
        T(test_a_pause_frees_its_core),
        T(test_a_thousand_workers),
        T(test_sync_rounds_agree_across_shards),
        T(test_budgets_add_up_to_the_epochs),
        T(test_compute_keys_the_model_does_not_read),
        T(test_a_shards_link_is_shared),
        T(test_sigint_stops_a_simulation),
        T(test_easgd_two_workers_by_hand),
        T(test_evaluations_with_a_cost_keep_their_times),
        T(test_evaluations_after_a_held_one_keep_their_times),
        T(test_taking_a_verdict_is_a_messages_work),
        T(test_a_pause_stops_a_minibatch_under_way),
        T(test_an_io_thread_takes_one_message_at_a_time),
        T(test_a_worker_failing_before_its_first_step_waits),
        T(test_a_shards_apply_and_each_shards_messages_take_time),
        T(test_a_failed_shard_loses_its_queue_and_resends_wait),
        T(test_restarts_back_off_up_to_their_limit),
        T(test_the_time_models_edges),
        cmocka_unit_test(test_a_hot_owner_waits_until_it_goes_cold),
        cmocka_unit_test(test_a_job_takes_its_last_core_else_the_last_idled),
        cmocka_unit_test(test_time_slices_on_a_core),
        T(test_train_time_starts_at_the_first_pull),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
