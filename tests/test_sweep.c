/* test_sweep.c: `asgd sweep` as a real process: the grid's expansion and
 * results.csv, resuming after lost runs and after Ctrl-C, complete runs of
 * a config since changed, and bad sweep files (repeated values and seeds,
 * keys the sweep sets itself) naming the file, line and key. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>
#include <math.h>

#include <cJSON.h>

#include "support.h"
#include "sweep/grid.h"

static const char s_base[] = "[data]\ndataset = synthetic\n[model]\ntype = softmax\n"
                             "[train]\nepochs = 1\nalgorithm = hogwild\n"
                             "[experiment]\nmode = sim\n";

/* Writes base.ini and grid.ini (sweep text with OUT replaced) in f->dir. */
static void s_files(support_fixture *f, const char *sweep_text)
{
    char path[400], text[2048];
    snprintf(path, sizeof path, "%s/base.ini", f->dir);
    support_write_file(path, s_base);
    snprintf(text, sizeof text, sweep_text, f->out);
    snprintf(f->config, sizeof f->config, "%s/grid.ini", f->dir);
    support_write_file(f->config, text);
}

static const char s_grid[] = "[sweep]\nbase = base.ini\nname = demo\nseeds = 1,2\nout = %s\n"
                             "[grid]\ntrain.algorithm = sync, hogwild\ncluster.workers = 1, 2\n";

/* A summary field of a run folder as text ("%.9g" for numbers). */
static void s_summary_field(const char *dir, const char *key, char *out, size_t n)
{
    char path[700];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    char *text = support_read_file(path);
    assert_non_null(text);
    cJSON *j = cJSON_Parse(text);
    cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    if (cJSON_IsString(v)) {
        snprintf(out, n, "%s", v->valuestring);
    } else {
        snprintf(out, n, "%.9g", v ? v->valuedouble : NAN);
    }
    cJSON_Delete(j);
    free(text);
}

static void test_expansion_and_results(void **state)
{
    support_fixture *f = *state;
    s_files(f, s_grid);
    const char *args[] = {"sweep", f->config, "-j", "2", NULL};
    support_run_asgd(&f->r, f->dir, args);
    if (f->r.status != 0) {
        fail_msg("%s", f->r.err);
    }
    assert_non_null(strstr(f->r.out, "8 runs, 8 ran now, 0 already complete, 0 failed"));
    char path[600];
    snprintf(path, sizeof path, "%s/demo/results.csv", f->out);
    assert_int_equal(support_count_lines(path), 9);
    char *csv = support_read_file(path);
    assert_int_equal(strncmp(csv, "train.algorithm,cluster.workers,seed,algorithm,", 47), 0);
    /* one seed column: the sweep's, not the summary's again */
    const char *header_end = strchr(csv, '\n');
    const char *again = strstr(csv + strlen("train.algorithm,cluster.workers,seed"), ",seed,");
    assert_true(again == NULL || again > header_end);
    /* the run folders' names hold commas: quoted, as RFC 4180 says */
    assert_non_null(strstr(csv, ",\"train.algorithm=sync,cluster.workers=1,seed=1\"\n"));
    free(csv);
    if (!support_python()) {
        skip();
    }
    /* read as a researcher would: every row as wide as the header, and each
     * row's values those of its run's summary */
    char script[600];
    snprintf(script, sizeof script, "%s/tests/results_csv.py", ASGD_SOURCE_DIR);
    const char *py[] = {script, path, "train.algorithm", "cluster.workers", "seed", "algorithm",
                        "workers", "final_test_acc", "train_time_s", "epochs", "dataset",
                        "run_dir", NULL};
    support_result *r = malloc(sizeof *r);
    support_run(r, f->dir, support_python(), py);
    if (r->status != 0) {
        fail_msg("results.csv does not load: %s", r->err);
    }
    int rows = 0;
    for (char *save, *line = strtok_r(r->out, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save), rows++) {
        char alg[32], workers[8], seed[8], sum_alg[32], sum_workers[8], acc[32], train[32];
        char epochs[32], dataset[32], dir[300], want[32];
        assert_int_equal(sscanf(line, "%31[^|]|%7[^|]|%7[^|]|%31[^|]|%7[^|]|%31[^|]|%31[^|]|"
                                "%31[^|]|%31[^|]|%299[^|]", alg, workers, seed, sum_alg,
                                sum_workers, acc, train, epochs, dataset, dir), 10);
        assert_string_equal(alg, sum_alg);          /* the grid's value is the run's */
        assert_string_equal(workers, sum_workers);
        assert_string_equal(dataset, "synthetic"); /* the data set's name, not a path */
        char run[700];
        snprintf(run, sizeof run, "%s/demo/%s", f->out, dir);
        s_summary_field(run, "final_test_acc", want, sizeof want);
        assert_string_equal(acc, want);
        s_summary_field(run, "train_time_s", want, sizeof want);
        assert_string_equal(train, want);
        s_summary_field(run, "seed", want, sizeof want);
        assert_string_equal(seed, want);
    }
    assert_int_equal(rows, 8);
    free(r);
}

/* A complete run a sweep keeps from an earlier call by another build (an
 * edited commit, as a rebuild after a change leaves) is said on stderr,
 * naming it and both builds: results.csv mixed builds without a word, the
 * git_commit column the only trace. Runs of this build are not. */
static void test_runs_of_another_build_are_said(void **state)
{
    support_fixture *f = *state;
    s_files(f, s_grid);
    const char *args[] = {"sweep", f->config, NULL};
    support_run_asgd(&f->r, f->dir, args);
    assert_int_equal(f->r.status, 0);
    support_run_asgd(&f->r, f->dir, args);
    assert_non_null(strstr(f->r.out, "8 runs, 0 ran now, 8 already complete"));
    assert_null(strstr(f->r.err, "another build"));
    char path[700];
    snprintf(path, sizeof path, "%s/demo/train.algorithm=sync,cluster.workers=2,seed=1/"
             "summary.json", f->out);
    char *text = support_read_file(path);
    assert_non_null(text);
    cJSON *j = cJSON_Parse(text);
    free(text);
    cJSON_ReplaceItemInObjectCaseSensitive(j, "git_commit",
                                           cJSON_CreateString("0123456789abcdef"));
    text = cJSON_Print(j);
    support_write_file(path, text);
    free(text);
    cJSON_Delete(j);
    support_run_asgd(&f->r, f->dir, args);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "8 runs, 0 ran now, 8 already complete"));
    if (!strstr(f->r.err, "1 of the 8 runs in results.csv was made by another build or host "
                          "than this one (train.algorithm=sync,cluster.workers=2,seed=1: "
                          "asgd ") ||
        !strstr(f->r.err, "commit 0123456")) {
        fail_msg("no word of the other build's run: \"%s\"", f->r.err);
    }
}

/* A grid over rules from a base config with one rule's keys: each run
 * ignores the keys its rule does not read (a warning, said once), and the
 * sweep runs. */
static void test_a_grid_over_rules_from_one_rules_config(void **state)
{
    support_fixture *f = *state;
    char path[400], text[1024];
    snprintf(path, sizeof path, "%s/base.ini", f->dir);
    support_write_file(path, "[data]\ndataset = synthetic\ntrain_size = 1000\n[model]\n"
                       "type = softmax\n[train]\nalgorithm = hogwild\nepochs = 1\n[algorithm]\n"
                       "server_threads = 1\n[experiment]\nmode = sim\n");
    snprintf(text, sizeof text, "[sweep]\nbase = base.ini\nname = rules\nseeds = 1,2\n"
             "out = %s\n[grid]\ntrain.algorithm = sync, hogwild, agn\n", f->out);
    snprintf(f->config, sizeof f->config, "%s/grid.ini", f->dir);
    support_write_file(f->config, text);
    const char *args[] = {"sweep", f->config, NULL};
    support_run_asgd(&f->r, f->dir, args);
    if (f->r.status != 0) {
        fail_msg("%s", f->r.err);
    }
    assert_non_null(strstr(f->r.out, "6 runs, 6 ran now"));
    const char *warning = strstr(f->r.err, "[algorithm] server_threads: not used");
    assert_non_null(warning);
    assert_null(strstr(warning + 1, "[algorithm] server_threads: not used"));   /* once */
}

static void test_resume_runs_only_what_is_missing(void **state)
{
    support_fixture *f = *state;
    s_files(f, s_grid);
    const char *args[] = {"sweep", f->config, NULL};
    support_run_asgd(&f->r, f->dir, args);
    assert_int_equal(f->r.status, 0);
    /* lose one run, and leave another incomplete */
    char path[600];
    snprintf(path, sizeof path, "%s/demo/train.algorithm=sync,cluster.workers=2,seed=1", f->out);
    support_rmtree(path);
    snprintf(path, sizeof path, "%s/demo/train.algorithm=hogwild,cluster.workers=1,seed=2/"
             "summary.json", f->out);
    support_write_file(path, "{\"complete\": false}\n");
    support_run_asgd(&f->r, f->dir, args);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "8 runs, 2 ran now, 6 already complete"));
    snprintf(path, sizeof path, "%s/demo/results.csv", f->out);
    assert_int_equal(support_count_lines(path), 9);
    /* the incomplete folder was replaced, not suffixed */
    snprintf(path, sizeof path, "%s/demo/train.algorithm=hogwild,cluster.workers=1,seed=2-2",
             f->out);
    FILE *suffixed = fopen(path, "r");
    assert_null(suffixed);
    assert_null(strstr(f->r.err, "another grid"));
    /* one seed asked for now: the seed-2 runs stay, out of results.csv but
     * drawn by plot and report of the folder, and the sweep says so */
    char fewer[sizeof s_grid];
    snprintf(fewer, sizeof fewer, "%s", s_grid);
    memcpy(strstr(fewer, "seeds = 1,2"), "seeds = 1  ", 11);
    s_files(f, fewer);
    support_run_asgd(&f->r, f->dir, args);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "4 runs, 0 ran now, 4 already complete"));
    if (!strstr(f->r.err, "also holds 4 complete runs of another grid or seed list")) {
        fail_msg("no word of the seed-2 runs: \"%s\"", f->r.err);
    }
}

static void s_expect_config_error(support_fixture *f, const char *text, const char *want);

/* results.csv is written whole or not at all: on a full disk (files
 * limited below its size) the sweep fails, saying so, and the last whole
 * one stays as it was. It was written in place: cut mid-row (a run of
 * empty fields to csv readers), and the earlier one truncated first. */
static void test_results_csv_on_a_full_disk(void **state)
{
    support_fixture *f = *state;
    s_files(f, s_grid);
    const char *args[] = {"sweep", f->config, NULL};
    support_run_asgd(&f->r, f->dir, args);
    assert_int_equal(f->r.status, 0);
    char path[600];
    snprintf(path, sizeof path, "%s/demo/results.csv", f->out);
    char *whole = support_read_file(path);
    assert_non_null(whole);
    support_run_asgd_limited(&f->r, f->dir, args, (long)strlen(whole) / 2);
    assert_int_equal(f->r.status, 1);
    assert_non_null(strstr(f->r.err, "results.csv"));
    char *after = support_read_file(path);
    assert_non_null(after);
    assert_string_equal(after, whole);
    free(after);
    free(whole);
}

static void test_ctrl_c_then_resume(void **state)
{
    support_fixture *f = *state;
    /* four sequential runs of about half a second each, one at a time */
    s_files(f, "[sweep]\nbase = base.ini\nname = slow\nseeds = 1\nout = %s\n[grid]\n"
               "train.algorithm = sequential\nexperiment.mode = real\nmodel.type = mlp\n"
               "train.epochs = 30, 31, 32, 33\n");
    const char *args[] = {"sweep", f->config, NULL};
    int pid = support_spawn_asgd(f->dir, args);
    char first[600];
    snprintf(first, sizeof first, "%s/slow/train.algorithm=sequential,experiment.mode=real,"
             "model.type=mlp,train.epochs=30,seed=1/summary.json", f->out);
    int finished = 0;   /* up to 2 minutes: under the sanitizers, with both cores busy,
                         * the first run took over 12 s */
    for (int i = 0; i < 6000 && !finished; i++) {
        char *s = support_read_file(first);
        finished = s && strstr(s, "\"complete\":\ttrue");
        free(s);
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    assert_true(finished);
    /* a second sweep into the same folder meanwhile is refused: it removed
     * the first one's runs in flight to start them afresh */
    support_run_asgd(&f->r, f->dir, args);
    if (f->r.status != 2 || !strstr(f->r.err, "another asgd sweep is running")) {
        fail_msg("a second sweep: status %d, \"%s\"", f->r.status, f->r.err);
    }
    /* the second run under way (an evaluation written), so that Ctrl-C
     * stops it with its summary written, complete: false */
    char path[600];
    snprintf(path, sizeof path, "%s/slow/train.algorithm=sequential,experiment.mode=real,"
             "model.type=mlp,train.epochs=31,seed=1/eval.csv", f->out);
    support_wait_lines(path, 2, 60);
    assert_int_equal(kill(pid, SIGINT), 0);
    assert_int_equal(support_wait(pid), 1);
    snprintf(path, sizeof path, "%s/stderr", f->dir);
    char *err = support_read_file(path);
    assert_non_null(strstr(err, "interrupted"));
    free(err);
    /* the runs that completed: the sweep's own count, unless Ctrl-C came
     * between a run's last write and the sweep's noting it, so count the
     * complete summaries on disk, which are what a sweep started again
     * trusts */
    int done = 0;
    for (int epochs = 30; epochs < 34; epochs++) {
        snprintf(path, sizeof path, "%s/slow/train.algorithm=sequential,experiment.mode=real,"
                 "model.type=mlp,train.epochs=%d,seed=1/summary.json", f->out, epochs);
        char *s = support_read_file(path);
        done += s && strstr(s, "\"complete\":\ttrue");
        free(s);
    }
    assert_true(done >= 1 && done < 4);
    /* results.csv so far: a row for each complete run, none for the one
     * interrupted (its summary says complete: false; its numbers are of
     * half a run) */
    snprintf(path, sizeof path, "%s/slow/results.csv", f->out);
    int rows = support_count_lines(path) - 1;
    if (rows < 1 || rows > done) {
        fail_msg("results.csv has %d rows of runs, %d complete", rows, done);
    }
    /* again: only the missing runs */
    support_run_asgd(&f->r, f->dir, args);
    assert_int_equal(f->r.status, 0);
    char want[64];
    snprintf(want, sizeof want, "4 runs, %d ran now, %d already complete", 4 - done, done);
    if (!strstr(f->r.out, want)) {
        fail_msg("expected \"%s\", got %s", want, f->r.out);
    }
}

static void test_bad_sweep_files(void **state)
{
    support_fixture *f = *state;
    const char *cases[][2] = {
        {"[sweep]\nbase = base.ini\nout = %s\n[grid]\ntrain.lrr = 0.1, 0.2\n",
         "grid.ini:5: [grid] train.lrr: unknown key"},
        {"[sweep]\nbase = base.ini\nout = %s\n[grid]\ncluster.workers = , \n",
         "grid.ini:5: [grid] cluster.workers: an empty list"},
        {"[sweep]\nbase = base.ini\nout = %s\n[grid]\ncluster.workers = 2, zero\n",
         "grid.ini:5: [grid] cluster.workers: expected an integer"},
        {"[sweep]\nbase = base.ini\nout = %s\n[grid]\nthis line is wrong\n", "grid.ini:5:"},
        {"[sweep]\nbase = base.ini\nout = %s\nseedz = 1\n", "grid.ini:4: [sweep] seedz"},
        {"[sweep]\nout = %s\n", "[sweep] base"},
        /* the message was made after its text was freed: "too many values" */
        {"[sweep]\nbase = base.ini\nout = %s\n[grid]\nsim.trace = a/trace.csv\n",
         "grid.ini:5: [grid] sim.trace: values may not contain '/'"},
        /* a value the config refuses as it reads the override: it was said
         * to be the command line's, whose there was none */
        {"[sweep]\nbase = base.ini\nout = %s\n[grid]\nexperiment.label = a,;b\n",
         "grid.ini:5: [grid] experiment.label: a value may not start with ';'"},
        /* checked against the data before any run starts: it failed (exit 1)
         * once runs before it had run, said as base.ini's */
        {"[sweep]\nbase = base.ini\nout = %s\n[grid]\ndata.train_size = 2000, 40\n",
         "grid.ini: the run data.train_size=40,seed=1: "},
        {"[sweep]\nbase = base.ini\nout = %s\n[grid]\ntrain.algorithm = sync\n"
         "cluster.workers = 2, 64\ndata.train_size = 2000, 100\n",
         "under half a round of 64 workers"},
    };
    for (int i = 0; i < 10; i++) {
        s_files(f, cases[i][0]);
        const char *args[] = {"sweep", f->config, NULL};
        support_run_asgd(&f->r, f->dir, args);
        if (f->r.status != 2 || !strstr(f->r.err, cases[i][1])) {
            fail_msg("case %d: status %d, \"%s\"", i, f->r.status, f->r.err);
        }
        char ran[400];
        snprintf(ran, sizeof ran, "%s/grid", f->out);
        assert_int_not_equal(access(ran, F_OK), 0);   /* no run before the refusal */
    }
    /* a base that does not open is [sweep] base's (it was said as the
     * first run's), and an out that is a file is not told to be shorter */
    s_expect_config_error(f, "[sweep]\nbase = nope.ini\nname = demo\nout = %s\n[grid]\n"
                          "train.lr = 0.1\n", "grid.ini:2: [sweep] base: ");
    s_expect_config_error(f, "[sweep]\nbase = base.ini\nname = demo\nout = base.ini\n[grid]\n"
                          "train.lr = 0.1\n", "grid.ini:4: [sweep] out: ");
    if (strstr(f->r.err, "shorter")) {
        fail_msg("an out that is a file: \"%s\"", f->r.err);
    }
}

/* Runs the sweep file text (OUT replaced) and expects a config error
 * holding want, before anything ran. */
static void s_expect_config_error(support_fixture *f, const char *text, const char *want)
{
    s_files(f, text);
    const char *args[] = {"sweep", f->config, NULL};
    support_run_asgd(&f->r, f->dir, args);
    if (f->r.status != 2 || !strstr(f->r.err, want)) {
        fail_msg("expected status 2 and \"%s\": status %d, \"%s\"", want, f->r.status, f->r.err);
    }
    char path[400];
    snprintf(path, sizeof path, "%s/demo", f->out);
    FILE *ran = fopen(path, "r");
    assert_null(ran);
}

/* A value or a seed listed twice would make two folders of one run, and
 * so would two spellings of one value and the values of a key that no
 * run of the grid reads. */
static void test_repeated_values_and_seeds(void **state)
{
    support_fixture *f = *state;
    s_expect_config_error(f, "[sweep]\nbase = base.ini\nname = demo\nseeds = 1,1\nout = %s\n"
                          "[grid]\ntrain.algorithm = sync\n",
                          "grid.ini:4: [sweep] seeds: seed 1 is listed twice");
    /* apart too: each seed against every one before it */
    s_expect_config_error(f, "[sweep]\nbase = base.ini\nname = demo\nseeds = 1,2,1\nout = %s\n"
                          "[grid]\ntrain.algorithm = sync\n",
                          "grid.ini:4: [sweep] seeds: seed 1 is listed twice");
    s_expect_config_error(f, "[sweep]\nbase = base.ini\nname = demo\nseeds = 1\nout = %s\n"
                          "[grid]\ntrain.algorithm = hogwild, sync, hogwild\n",
                          "grid.ini:7: [grid] train.algorithm: hogwild is listed twice");
    /* an empty value between commas is refused, as in a config's list
     * (0.1,,0.2 ran two runs; ", mine" a label's one) */
    s_expect_config_error(f, "[sweep]\nbase = base.ini\nname = demo\nseeds = 1\nout = %s\n"
                          "[grid]\ntrain.lr = 0.1,,0.2\n",
                          "grid.ini:7: [grid] train.lr: an empty value between its commas");
    s_expect_config_error(f, "[sweep]\nbase = base.ini\nname = demo\nseeds = 1\nout = %s\n"
                          "[grid]\nexperiment.label = , mine\n",
                          "grid.ini:7: [grid] experiment.label: an empty value between its "
                          "commas");
    /* one number written two ways is one value: it once made two runs */
    s_expect_config_error(f, "[sweep]\nbase = base.ini\nname = demo\nseeds = 1\nout = %s\n"
                          "[grid]\ntrain.lr = 0.05, 0.1, 5e-2\n",
                          "grid.ini:7: [grid] train.lr: 0.05 and 5e-2 are one value");
    /* and one boolean written two ways: four runs of one config, under
     * four labels */
    s_expect_config_error(f, "[sweep]\nbase = base.ini\nname = demo\nseeds = 1\nout = %s\n"
                          "[grid]\nalgorithm.prefetch = false, on, no\n",
                          "grid.ini:7: [grid] algorithm.prefetch: false and no are one value "
                          "(the runs algorithm.prefetch=false,seed=1 and "
                          "algorithm.prefetch=no,seed=1 resolve to the same config)");
    /* a key no run reads: [cluster] over the sequential trainer made three
     * identical runs that read as 1, 2 and 4 workers */
    s_expect_config_error(f, "[sweep]\nbase = base.ini\nname = demo\nseeds = 1\nout = %s\n"
                          "[grid]\nexperiment.mode = real\ntrain.algorithm = sequential\n"
                          "cluster.workers = 1, 2, 4\n",
                          "grid.ini:9: [grid] cluster.workers: no run of this grid reads it");
    /* the simulator's costs over real runs: two identical runs */
    s_expect_config_error(f, "[sweep]\nbase = base.ini\nname = demo\nseeds = 1\nout = %s\n"
                          "[grid]\nexperiment.mode = real\ntrain.algorithm = hogwild\n"
                          "sim.latency = 0.001, 1\n",
                          "grid.ini:9: [grid] sim.latency: no run of this grid reads it");
    /* read by some runs and not others: the grid runs (hidden is an mlp's) */
    s_files(f, "[sweep]\nbase = base.ini\nname = demo\nseeds = 1\nout = %s\n[grid]\n"
            "model.type = softmax, mlp\nmodel.hidden = 8, 16\n");
    sweep s;
    error err = {0};
    assert_int_equal(sweep_read(&s, f->config, &err), 0);
    sweep_free(&s);
}

/* A key that takes a list has its values between '|' (commas split
 * 64,32 into two one-layer runs, without a word: now said); one list
 * written two ways is one value; strings that read as one number are two
 * values of a string key. */
static void test_list_values_go_between_bars(void **state)
{
    support_fixture *f = *state;
    s_files(f, "[sweep]\nbase = base.ini\nname = demo\nseeds = 1\nout = %s\n[grid]\n"
            "model.type = mlp\nmodel.hidden = 16,8 | 32\nexperiment.label = 1, 1.0\n");
    sweep s;
    error err = {0};
    if (sweep_read(&s, f->config, &err) < 0) {
        fail_msg("%s", err.msg);
    }
    assert_int_equal(s.nruns, 4);
    assert_int_equal(s.keys[1].count, 2);
    assert_string_equal(s.keys[1].values[0], "16,8");
    assert_string_equal(s.keys[1].values[1], "32");
    assert_string_equal(s.runs[0].overrides[1], "model.hidden=16,8");
    sweep_free(&s);
    /* one list written two ways is one value */
    s_expect_config_error(f, "[sweep]\nbase = base.ini\nname = demo\nseeds = 1\nout = %s\n"
                          "[grid]\nmodel.type = mlp\nmodel.hidden = 16,8 | 16, 8\n",
                          "grid.ini:8: [grid] model.hidden: 16,8 and 16, 8 are one value");
    /* between commas, a list key's values are runs of one item each: said */
    s_files(f, "[sweep]\nbase = base.ini\nname = demo\nseeds = 1\nout = %s\n[grid]\n"
            "model.type = mlp\nmodel.hidden = 16,8\n");
    const char *args[] = {"sweep", f->config, NULL};
    support_run_asgd(&f->r, f->dir, args);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.err, "grid.ini:8: [grid] model.hidden takes a list: its 2 "
                                     "values between commas are 2 runs of one item each"));
    /* so do the simulator's pauses and failures, lists read as strings
     * (two pauses were two runs of one pause each, in silence) */
    s_files(f, "[sweep]\nbase = base.ini\nname = demo\nseeds = 1\nout = %s\n[grid]\n"
            "cluster.workers = 2\nsim.pause = 0@0.001-0.002,1@0.003-0.004\n");
    support_run_asgd(&f->r, f->dir, args);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.err, "grid.ini:8: [grid] sim.pause takes a list: its 2 "
                                     "values between commas are 2 runs of one item each"));
}

/* A sweep in a deep folder runs when started there: its runs are told
 * their out from the current folder (the whole path did not fit a line
 * of config.ini, and every sweep there failed as the command line's);
 * started from far above, it names [sweep] out. */
static void test_a_sweep_in_a_deep_folder(void **state)
{
    support_fixture *f = *state;
    char deep[600], path[700];
    int n = snprintf(deep, sizeof deep, "%s", f->dir);
    for (int i = 0; i < 5; i++) {
        n += snprintf(deep + n, sizeof deep - (size_t)n, "/%040d", i);
        assert_int_equal(mkdir(deep, 0755), 0);
    }
    snprintf(path, sizeof path, "%s/base.ini", deep);
    support_write_file(path, s_base);
    snprintf(path, sizeof path, "%s/deep.ini", deep);
    support_write_file(path, "[sweep]\nbase = base.ini\nseeds = 1\n");
    const char *args[] = {"sweep", path, NULL};
    support_run_asgd(&f->r, f->dir, args);
    if (f->r.status != 2 || !strstr(f->r.err, "deep.ini: [sweep] out = runs (the default): too "
                                               "long for a line of config.ini")) {
        fail_msg("from above: status %d, \"%s\"", f->r.status, f->r.err);
    }
    support_run_asgd(&f->r, deep, args);
    if (f->r.status != 0) {
        fail_msg("from its folder: status %d, \"%s\"", f->r.status, f->r.err);
    }
    assert_non_null(strstr(f->r.out, "1 runs, 1 ran now"));
}

/* -j counts a run by what it keeps busy: a real run's processes
 * (workers, shards, evaluator), a threads run's threads (workers and the
 * evaluating main thread; once 1, so -j 2 ran two 2-thread runs on two
 * cores at half their speed), a simulated or sequential run as one. */
static void test_runs_weigh_what_they_run(void **state)
{
    support_fixture *f = *state;
    s_files(f, "[sweep]\nbase = base.ini\nname = demo\nseeds = 1\nout = %s\n[grid]\n"
            "experiment.mode = real, threads, sim\ncluster.workers = 3\ncluster.servers = 2\n");
    sweep s;
    error err = {0};
    if (sweep_read(&s, f->config, &err) < 0) {
        fail_msg("%s", err.msg);
    }
    assert_int_equal(s.nruns, 3);
    assert_int_equal(s.runs[0].weight, 3 + 2 + 1);
    assert_int_equal(s.runs[1].weight, 3 + 1);
    assert_int_equal(s.runs[2].weight, 1);
    sweep_free(&s);
}

/* experiment.seed, name, out and run_id are the sweep's own: a [grid]
 * value for one would be overridden without a word. */
static void test_keys_the_sweep_sets_itself(void **state)
{
    support_fixture *f = *state;
    s_expect_config_error(f, "[sweep]\nbase = base.ini\nname = demo\nout = %s\n[grid]\n"
                          "experiment.seed = 5, 6\ntrain.algorithm = sync\n",
                          "grid.ini:6: [grid] experiment.seed: the sweep sets it itself; "
                          "list seeds in [sweep] as `seeds =`");
    const char *keys[] = {"experiment.name", "experiment.out", "experiment.run_id"};
    for (int i = 0; i < 3; i++) {
        char text[256], want[128];
        snprintf(text, sizeof text, "[sweep]\nbase = base.ini\nname = demo\nout = %%s\n"
                 "[grid]\n%s = a, b\ntrain.algorithm = sync\n", keys[i]);
        snprintf(want, sizeof want, "grid.ini:6: [grid] %s: the sweep sets it itself", keys[i]);
        s_expect_config_error(f, text, want);
    }
    /* its own folder is out/name: a name of ".." put the runs in out's
     * parent */
    s_expect_config_error(f, "[sweep]\nbase = base.ini\nname = ..\nout = %s\n[grid]\n"
                          "train.algorithm = sync\n",
                          "grid.ini:3: [sweep] name: \"..\" must be a plain folder name");
    /* in the base config, the same keys are said, with what replaces
     * them (a base's seed = 42 ran as seeds 1, 2 and 3 in silence) */
    char path[400];
    snprintf(path, sizeof path, "%s/base.ini", f->dir);
    s_files(f, "[sweep]\nbase = base.ini\nname = demo\nseeds = 1, 2\nout = %s\n");
    support_write_file(path, "[data]\ndataset = synthetic\n[model]\ntype = softmax\n"
                       "[train]\nepochs = 1\n[experiment]\nseed = 42\nrun_id = mine\n");
    const char *args[] = {"sweep", f->config, NULL};
    support_run_asgd(&f->r, f->dir, args);
    if (f->r.status != 0 ||
        !strstr(f->r.err, "base.ini:8: [experiment] seed: not used by a sweep, which sets it "
                          "in every run from [sweep] seeds (1, 2)") ||
        !strstr(f->r.err, "base.ini:9: [experiment] run_id: not used by a sweep")) {
        fail_msg("a base's seed and run_id: status %d, \"%s\"", f->r.status, f->r.err);
    }
}

/* A sweep of simulated runs without a distributed rule is refused before
 * any runs (every run failed at its start, and the sweep said 1). */
static void test_a_sim_sweep_without_a_rule(void **state)
{
    support_fixture *f = *state;
    char base[400];
    snprintf(base, sizeof base, "%s/base.ini", f->dir);
    s_files(f, "[sweep]\nbase = base.ini\nname = demo\nseeds = 1\nout = %s\n[grid]\n"
               "train.epochs = 1, 2\n");
    support_write_file(base, "[data]\ndataset = synthetic\n[model]\ntype = softmax\n"
                       "[experiment]\nmode = sim\n");
    const char *args[] = {"sweep", f->config, NULL};
    support_run_asgd(&f->r, f->dir, args);
    if (f->r.status != 2 || !strstr(f->r.err, "[experiment] mode: sim needs a distributed rule")) {
        fail_msg("status %d, \"%s\"", f->r.status, f->r.err);
    }
    char path[400];
    snprintf(path, sizeof path, "%s/demo", f->out);
    assert_int_equal(access(path, F_OK), -1);
}

/* A complete run made from another config than the sweep's now is not
 * taken as done, nor removed: the sweep says which folder and why. */
static void test_complete_runs_of_a_changed_config(void **state)
{
    support_fixture *f = *state;
    s_files(f, "[sweep]\nbase = base.ini\nname = demo\nseeds = 1\nout = %s\n[grid]\n"
               "cluster.workers = 1, 2\ntrain.algorithm = sync\n");
    const char *args[] = {"sweep", f->config, NULL};
    support_run_asgd(&f->r, f->dir, args);
    assert_int_equal(f->r.status, 0);
    char base[400], summary[600];
    snprintf(base, sizeof base, "%s/base.ini", f->dir);
    support_write_file(base, "[data]\ndataset = synthetic\n[model]\ntype = softmax\n"
                       "[train]\nepochs = 2\n[experiment]\nmode = sim\n");
    support_run_asgd(&f->r, f->dir, args);
    if (f->r.status != 2 || !strstr(f->r.err, "demo/cluster.workers=1,train.algorithm=sync,seed=1") ||
        !strstr(f->r.err, "[train] epochs") || !strstr(f->r.err, "changed since it ran")) {
        fail_msg("status %d, \"%s\" %s", f->r.status, f->r.err, f->r.out);
    }
    snprintf(summary, sizeof summary,
             "%s/demo/cluster.workers=1,train.algorithm=sync,seed=1/summary.json", f->out);
    char *kept = support_read_file(summary);
    assert_non_null(kept);   /* the results are still there */
    free(kept);
    /* the config as it was: both runs are done */
    support_write_file(base, s_base);
    support_run_asgd(&f->r, f->dir, args);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "2 runs, 0 ran now, 2 already complete"));
    /* the same number written otherwise is the same config (epochs = 1e0
     * was "changed since it ran" from 1) */
    support_write_file(base, "[data]\ndataset = synthetic\n[model]\ntype = softmax\n"
                       "[train]\nepochs = 1e0\nalgorithm = hogwild\n[experiment]\nmode = sim\n");
    support_run_asgd(&f->r, f->dir, args);
    if (f->r.status != 0 || !strstr(f->r.out, "2 runs, 0 ran now, 2 already complete")) {
        fail_msg("epochs 1e0 against 1: status %d, \"%s\"", f->r.status, f->r.err);
    }
    support_write_file(base, s_base);
    /* a run whose config.ini gives a key this build does not read (another
     * build's run) is not this sweep's either */
    char ran[700];
    snprintf(ran, sizeof ran,
             "%s/demo/cluster.workers=1,train.algorithm=sync,seed=1/config.ini", f->out);
    char *text = support_read_file(ran), more[8192];
    snprintf(more, sizeof more, "%s\n[backend]\nnewkey = 3\n", text);
    support_write_file(ran, more);
    support_run_asgd(&f->r, f->dir, args);
    if (f->r.status != 2 || !strstr(f->r.err, "[backend] newkey = 3")) {
        fail_msg("status %d, \"%s\"", f->r.status, f->r.err);
    }
    /* but a key asgd knows that this configuration does not read, which an
     * older build wrote out (a sim run's [cluster] host and timeout), is,
     * whatever its value: every sim sweep stopped, exit 2, "another
     * build's run?" */
    snprintf(more, sizeof more, "%s\n[cluster]\nhost = 127.0.0.1\ntimeout = 6e1\n", text);
    support_write_file(ran, more);
    support_run_asgd(&f->r, f->dir, args);
    if (f->r.status != 0 || !strstr(f->r.out, "2 runs, 0 ran now, 2 already complete")) {
        fail_msg("defaults an older build wrote: status %d, \"%s\"", f->r.status, f->r.err);
    }
    snprintf(more, sizeof more, "%s\n[cluster]\ntimeout = 5\n", text);
    support_write_file(ran, more);
    support_run_asgd(&f->r, f->dir, args);
    if (f->r.status != 0 || !strstr(f->r.out, "2 runs, 0 ran now, 2 already complete")) {
        fail_msg("timeout 5, unread in sim: status %d, \"%s\"", f->r.status, f->r.err);
    }
    support_write_file(ran, text);
    free(text);
    /* the same config, but a file the runs read changed since: a trace
     * edited after the runs (they were skipped as done) */
    char trace[400], grid[1200];
    snprintf(trace, sizeof trace, "%s/trace.csv", f->dir);
    support_write_file(trace, "device,speed,bandwidth,latency,off\n0,1,,,\n1,2,,,\n");
    snprintf(grid, sizeof grid, "[sweep]\nbase = base.ini\nname = traced\nseeds = 1\nout = %s\n"
             "[grid]\ncluster.workers = 2\ntrain.algorithm = sync\nsim.trace = trace.csv\n",
             f->out);
    support_write_file(f->config, grid);
    support_run_asgd(&f->r, f->dir, args);
    assert_int_equal(f->r.status, 0);
    support_write_file(trace, "device,speed,bandwidth,latency,off\n0,1,,,\n1,3,,,\n");
    support_run_asgd(&f->r, f->dir, args);
    if (f->r.status != 2 || !strstr(f->r.err, "trace.csv changed since it ran")) {
        fail_msg("status %d, \"%s\" %s", f->r.status, f->r.err, f->r.out);
    }
}

/* Counters past 9 digits (push_bytes passes 1e9 within an epoch of a
 * small MLP) are written whole, not rounded to "%.9g"'s 1.79611512e+09;
 * the staleness histogram is one cell of all its bins. */
static void test_large_counters_are_exact(void **state)
{
    support_fixture *f = *state;
    s_files(f, "[sweep]\nbase = base.ini\nname = demo\nseeds = 1\nout = %s\n"
               "[grid]\ncluster.workers = 1\n");
    const char *args[] = {"sweep", f->config, NULL};
    support_run_asgd(&f->r, f->dir, args);
    assert_int_equal(f->r.status, 0);
    char path[600];
    snprintf(path, sizeof path, "%s/demo/cluster.workers=1,seed=1/summary.json", f->out);
    char *text = support_read_file(path);
    assert_non_null(text);
    cJSON *j = cJSON_Parse(text);
    free(text);
    cJSON_ReplaceItemInObjectCaseSensitive(j, "push_bytes", cJSON_CreateNumber(1796115123.0));
    cJSON_ReplaceItemInObjectCaseSensitive(j, "samples", cJSON_CreateNumber(-1234567890.0));
    /* a list of numbers is one cell of every value, spaces between */
    const double bins[] = {3, 0, 2};
    cJSON_ReplaceItemInObjectCaseSensitive(j, "staleness_histogram",
                                           cJSON_CreateDoubleArray(bins, 3));
    /* and inputs that are no object of checksums: passed over (their
     * checking read a NULL name) */
    cJSON *odd = cJSON_CreateArray();
    cJSON_AddItemToArray(odd, cJSON_CreateString("/etc/hostname"));
    cJSON_ReplaceItemInObjectCaseSensitive(j, "inputs", odd);
    char *out = cJSON_Print(j);
    support_write_file(path, out);
    free(out);
    cJSON_Delete(j);
    support_run_asgd(&f->r, f->dir, args);   /* complete: skipped, results.csv written again */
    assert_int_equal(f->r.status, 0);
    snprintf(path, sizeof path, "%s/demo/results.csv", f->out);
    char *csv = support_read_file(path);
    assert_non_null(strstr(csv, ",1796115123,"));
    assert_non_null(strstr(csv, ",-1234567890,"));
    assert_non_null(strstr(csv, ",3 0 2,"));
    /* no column for what is no single value (sessions came out as 0) */
    char header[4096];
    snprintf(header, sizeof header, "%.*s", (int)strcspn(csv, "\n"), csv);
    assert_null(strstr(header, "sessions"));
    assert_null(strstr(header, "inputs"));
    assert_non_null(strstr(header, "staleness_histogram"));
    free(csv);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, support_fixture_setup, support_fixture_teardown)
    const struct CMUnitTest tests[] = {
        T(test_expansion_and_results),
        T(test_a_grid_over_rules_from_one_rules_config),
        T(test_runs_weigh_what_they_run),
        T(test_resume_runs_only_what_is_missing),
        T(test_results_csv_on_a_full_disk),
        T(test_ctrl_c_then_resume),
        T(test_bad_sweep_files),
        T(test_repeated_values_and_seeds),
        T(test_list_values_go_between_bars),
        T(test_a_sweep_in_a_deep_folder),
        T(test_keys_the_sweep_sets_itself),
        T(test_complete_runs_of_a_changed_config),
        T(test_a_sim_sweep_without_a_rule),
        T(test_large_counters_are_exact),
        T(test_runs_of_another_build_are_said),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
