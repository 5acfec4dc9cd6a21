/* test_threads.c: experiment.mode = threads, workers as threads over one
 * parameter vector (core/threads/threads.h), through the real binary. One
 * worker thread follows the sequential trajectory exactly; every rule
 * learns with three threads (the waiting rules' pulls included); four
 * Hogwild threads applying at once lose no update; the run folder is the
 * other modes', its evaluations stamped when the centre is copied; what
 * needs a network is refused by name; Ctrl-C stops it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cJSON.h>

#include "algorithms/algorithm.h"
#include "core/run.h"
#include "support.h"

static void s_run_dir(const support_fixture *f, char *buf, size_t n)
{
    size_t len = strcspn(f->r.out, "\n");
    assert_true(len > 0 && len < n);
    memcpy(buf, f->r.out, len);
    buf[len] = '\0';
}

/* A threads-mode run of `algorithm` on the synthetic set with `workers`
 * threads and extra overrides (NULL-terminated, or NULL); its folder into
 * dir. */
static void s_train(support_fixture *f, const char *algorithm, int workers,
                    const char *const *extra, char *dir, size_t n)
{
    char alg[64], count[64];
    snprintf(alg, sizeof alg, "train.algorithm=%s", algorithm);
    snprintf(count, sizeof count, "cluster.workers=%d", workers);
    const char *args[24] = {"train", "/dev/null", f->out_arg, alg, count,
                            "experiment.mode=threads", "data.dataset=synthetic",
                            "model.type=mlp", "model.hidden=32", "train.epochs=4",
                            "train.lr=0.05", "eval.every=0.05"};
    int k = 12;
    for (int i = 0; extra && extra[i]; i++) {
        args[k++] = extra[i];
    }
    args[k] = NULL;
    support_run_asgd(&f->r, f->dir, args);
    if (f->r.status != 0) {
        fail_msg("%s: %s", algorithm, f->r.err);
    }
    s_run_dir(f, dir, n);
}

/* First and last test loss of eval.csv; the first row is the initial
 * model at time 0. */
static void s_eval_ends(const char *dir, double *first, double *last)
{
    char path[4200], line[512];
    snprintf(path, sizeof path, "%s/eval.csv", dir);
    FILE *in = fopen(path, "r");
    assert_non_null(in);
    int rows = 0;
    while (fgets(line, sizeof line, in)) {
        double t, epoch, loss, acc;
        long u, s;
        if (sscanf(line, "%lf,%lf,%ld,%ld,%lf,%lf", &t, &epoch, &u, &s, &loss, &acc) == 6) {
            if (rows++ == 0) {
                *first = loss;
                assert_true(t == 0 && u == 0 && s == 0);
            }
            *last = loss;
        }
    }
    fclose(in);
    assert_true(rows >= 2);
}

static void test_one_thread_follows_sequential_exactly(void **state)
{
    support_fixture *f = *state;
    const char *common[] = {"train", "/dev/null", f->out_arg, "data.dataset=synthetic",
                            "model.type=mlp", "model.hidden=16,8", "train.epochs=1",
                            "eval.every=0", NULL, NULL, NULL, NULL, NULL};
    /* 156.25 minibatches: sync's nearest whole number (156) once lost the
     * sequential trainer's last step, which 2 epochs (312.5) did not show */
    char dir[4096];
    common[8] = "train.algorithm=sequential";
    support_run_asgd(&f->r, f->dir, common);
    assert_int_equal(f->r.status, 0);
    s_run_dir(f, dir, sizeof dir);
    char *seq = support_trajectory(dir);
    assert_true(strlen(seq) > 1000);
    /* dcasgd and gapaware: theta never moves between a worker's pull and its
     * push, so the copy the shard keeps at the pull leaves no correction */
    const char *rules[] = {"train.algorithm=hogwild", "train.algorithm=sync",
                           "train.algorithm=delayadaptive", "train.algorithm=dcasgd",
                           "train.algorithm=gapaware"};
    for (int i = 0; i < 5; i++) {
        common[8] = rules[i];
        common[9] = "experiment.mode=threads";
        common[10] = "cluster.workers=1";
        common[11] = "cluster.servers=2";
        support_run_asgd(&f->r, f->dir, common);
        if (f->r.status != 0) {
            fail_msg("%s: %s", rules[i], f->r.err);
        }
        s_run_dir(f, dir, sizeof dir);
        char *t = support_trajectory(dir);
        if (strcmp(t, seq) != 0) {
            fail_msg("%s: one thread's steps differ from the sequential trainer's", rules[i]);
        }
        free(t);
        /* time_s spans both shards' training, as train_time_s does (it came
         * out microseconds short of it) */
        char path[4200];
        snprintf(path, sizeof path, "%s/summary.json", dir);
        cJSON *j = support_json_file(path);
        double time_s = support_json_number(j, "time_s");
        double trained = support_json_number(j, "train_time_s");
        cJSON_Delete(j);
        if (!(trained > 0 && time_s >= trained)) {
            fail_msg("%s: time_s %.9f, train_time_s %.9f", rules[i], time_s, trained);
        }
    }
    free(seq);
}

static void test_every_rule_learns_with_three_threads(void **state)
{
    support_fixture *f = *state;
    for (const algorithm *const *a = algorithm_all(); *a; a++) {
        char dir[4096];
        s_train(f, (*a)->name, 3, NULL, dir, sizeof dir);
        double first, last;
        s_eval_ends(dir, &first, &last);
        if (!(last < 0.8 * first)) {
            fail_msg("%s: test loss %g -> %g", (*a)->name, first, last);
        }
    }
}

/* Four Hogwild threads applying their pushes at once (server_threads 4,
 * no shard lock): every push is one update and every example counted,
 * and the folder has the other modes' files. */
static void test_hogwild_threads_at_once_lose_nothing(void **state)
{
    support_fixture *f = *state;
    const char *at_once[] = {"algorithm.server_threads=4", "cluster.servers=2", NULL};
    char dir[4096], path[4200];
    s_train(f, "hogwild", 4, at_once, dir, sizeof dir);
    snprintf(path, sizeof path, "%s/summary.json", dir);
    cJSON *j = support_json_file(path);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(j, "mode")->valuestring, "threads");
    double updates = support_json_number(j, "updates"), pushes = support_json_number(j, "pushes");
    double samples = support_json_number(j, "samples");
    assert_true(updates > 100);
    assert_true(pushes == 2 * updates);           /* to each of two shards, each applied */
    assert_true(samples == 4 * 10000);           /* 4 epochs of the 10,000 examples */
    assert_true(support_json_number(j, "samples_per_s") > 0);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "complete")));
    cJSON_Delete(j);
    support_check_run_arithmetic(dir, 10000);
    const char *files[] = {"eval.csv", "steps.csv", "ps-0.json", "ps-1.json", "config.ini",
                           "log.txt"};
    for (int i = 0; i < 6; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        if (access(path, R_OK) != 0) {
            fail_msg("no %s in a threads run's folder", files[i]);
        }
    }
}

/* Each worker's last log line says where its time went: one line per
 * worker, phases that add up to no more than its whole, its minibatches
 * those summary.json counts. */
static void s_check_time_lines(const char *dir, const char *prefix, int workers)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/log.txt", dir);
    char *log = support_read_file(path);
    assert_non_null(log);
    snprintf(path, sizeof path, "%s/summary.json", dir);
    cJSON *j = support_json_file(path);
    double samples = support_json_number(j, "samples");
    cJSON_Delete(j);
    long steps = 0;
    for (int k = 0; k < workers; k++) {
        char head[64];
        snprintf(head, sizeof head, "%sworker %d: ", prefix, k);
        double pull, grad, push, all;
        long n;
        const char *at = strstr(log, head);   /* its line, not "worker K: backend" */
        while (at && sscanf(at + strlen(head), "%lf s in pulls, %lf s in gradients, %lf s in "
                            "pushes, of %lf s (%ld minibatches)", &pull, &grad, &push, &all,
                            &n) != 5) {
            at = strstr(at + 1, head);
        }
        if (!at) {
            fail_msg("no \"%s... s in pulls ...\" line in %s/log.txt", head, dir);
        }
        assert_true(pull >= 0 && grad > 0 && push >= 0);
        assert_true(pull + grad + push <= all + 1e-3);
        steps += n;
    }
    assert_true(steps * 10 == (long)samples);   /* batch 10 */
    free(log);
}

static void test_each_worker_says_where_its_time_went(void **state)
{
    support_fixture *f = *state;
    const char *batch[] = {"train.batch=10", NULL};
    char dir[4096];
    s_train(f, "hogwild", 3, batch, dir, sizeof dir);
    s_check_time_lines(dir, "threads: ", 3);
    const char *real[] = {"train.batch=10", "experiment.mode=real", "train.epochs=1", NULL};
    s_train(f, "hogwild", 2, real, dir, sizeof dir);
    s_check_time_lines(dir, "", 2);
}

static void test_what_needs_a_network_is_refused(void **state)
{
    support_fixture *f = *state;
    const char *refused[][2] = {{"algorithm.compress=fp16", "algorithm.compress"},
                                {"algorithm.prefetch=on", "algorithm.prefetch"},
                                {"cluster.drop=0.1", "cluster.drop"},
                                {"checkpoint.every=1", "checkpoint.every"},
                                {"train.algorithm=sequential", "experiment.mode"}};
    for (int i = 0; i < 5; i++) {
        const char *args[] = {"train", "/dev/null", f->out_arg, "experiment.mode=threads",
                              "data.dataset=synthetic", "train.algorithm=hogwild",
                              refused[i][0], NULL};
        support_run_asgd(&f->r, f->dir, args);
        assert_int_equal(f->r.status, 2);
        if (!strstr(f->r.err, refused[i][1])) {
            fail_msg("%s: \"%s\" does not name the key", refused[i][0], f->r.err);
        }
    }
}

/* Runs asgd with args (stdout and stderr into f->dir), failing the test
 * when it has not ended within `seconds` (it is killed then); returns
 * its exit status. */
static int s_run_within(support_fixture *f, const char *const *args, double seconds)
{
    return support_wait_within(support_spawn_asgd(f->dir, args), seconds, "asgd");
}

/* The network's and the supervision's keys mean nothing to threads mode:
 * each is "not used by this configuration", and the run's config.ini
 * leaves it out (it said auth = curve and transport = tcp, of a run with
 * neither); a value out of range is still refused. */
static void test_network_keys_are_not_a_threads_runs(void **state)
{
    support_fixture *f = *state;
    const char *args[] = {"train", "/dev/null", f->out_arg, "experiment.mode=threads",
                          "experiment.name=net", "experiment.run_id=r",
                          "data.dataset=synthetic", "data.train_size=500", "model.type=softmax",
                          "train.algorithm=hogwild", "cluster.workers=2", "cluster.auth=curve",
                          "cluster.transport=tcp", "cluster.restart=on-failure",
                          "cluster.timeout=5", "cluster.drop=0", "checkpoint.every=0", NULL};
    support_run_asgd(&f->r, f->dir, args);
    assert_int_equal(f->r.status, 0);
    const char *keys[] = {"cluster.auth=curve", "cluster.transport=tcp",
                          "cluster.restart=on-failure", "cluster.timeout=5", "cluster.drop=0",
                          "checkpoint.every=0"};
    for (int i = 0; i < 6; i++) {
        char said[128];
        snprintf(said, sizeof said, "%s: not used by this configuration", keys[i]);
        if (!strstr(f->r.err, said)) {
            fail_msg("no word of %s: %s", keys[i], f->r.err);
        }
    }
    char path[600];
    snprintf(path, sizeof path, "%s/net/r/config.ini", f->out);
    char *config = support_read_file(path);
    assert_non_null(config);
    assert_non_null(strstr(config, "workers = 2"));
    const char *gone[] = {"auth", "transport", "restart", "timeout", "drop", "[checkpoint]"};
    for (int i = 0; i < 6; i++) {
        if (strstr(config, gone[i])) {
            fail_msg("config.ini keeps %s:\n%s", gone[i], config);
        }
    }
    free(config);
    const char *bad[] = {"train", "/dev/null", f->out_arg, "experiment.mode=threads",
                         "data.dataset=synthetic", "train.algorithm=hogwild",
                         "cluster.timeout=-1", NULL};
    support_run_asgd(&f->r, f->dir, bad);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "cluster.timeout=-1: -1 is out of range"));
}

/* A run that cannot go on ends, and says why: a sync round whose workers
 * diverge (their NaN pushes refused, so the round never fills) is a
 * diverged result; without evaluations during training too. Its final
 * accuracy and loss are null, as any diverged run's, though the model it
 * keeps stayed finite (they were that model's numbers, a seed's result). */
static void test_a_stuck_run_ends(void **state)
{
    support_fixture *f = *state;
    const char *args[] = {"train", "/dev/null", f->out_arg, "experiment.mode=threads",
                          "experiment.name=wild", "experiment.run_id=r",
                          "data.dataset=synthetic", "model.type=mlp", "train.algorithm=sync",
                          "cluster.workers=3", "train.lr=1e6", "train.epochs=50",
                          "eval.every=0", NULL};
    assert_int_equal(s_run_within(f, args, 60), 0);
    char path[600];
    snprintf(path, sizeof path, "%s/wild/r/summary.json", f->out);
    cJSON *j = support_json_file(path);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "diverged")));
    cJSON_Delete(j);
    /* sagn's last test loss stays finite (3.7e25), its NaN pushes refused */
    const char *sagn[] = {"train", "/dev/null", f->out_arg, "experiment.mode=threads",
                          "experiment.name=wild", "experiment.run_id=s",
                          "data.dataset=synthetic", "data.train_size=4000", "model.type=mlp",
                          "model.hidden=128", "train.algorithm=sagn", "train.batch=10",
                          "cluster.workers=3", "train.lr=1000", "train.epochs=2",
                          "eval.every=0", NULL};
    assert_int_equal(s_run_within(f, sagn, 60), 0);
    snprintf(path, sizeof path, "%s/wild/s/summary.json", f->out);
    j = support_json_file(path);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "diverged")));
    assert_true(support_json_number(j, "nonfinite") > 0);
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, "final_test_acc")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, "final_test_loss")));
    cJSON_Delete(j);
}

/* A diverged run's last row of eval.csv is the model that diverged, as in
 * the other modes: its updates, samples and time are the summary's, its
 * loss is not finite, and the summary has no final accuracy. A refusal
 * that came during an evaluation's forward pass was blamed on that
 * evaluation's older model, and the run stopped on it (6 of 6 runs at
 * 1 ms evaluations). */
static void test_a_diverged_runs_last_row_is_the_diverged_model(void **state)
{
    support_fixture *f = *state;
    for (int i = 0; i < 5; i++) {
        char id[40];
        snprintf(id, sizeof id, "experiment.run_id=d%d", i);
        const char *args[] = {"train", "/dev/null", f->out_arg, "experiment.mode=threads",
                              "experiment.name=wild", id, "data.dataset=synthetic",
                              "model.type=mlp", "train.algorithm=sync", "cluster.workers=3",
                              "cluster.servers=2", "train.lr=1e6", "train.epochs=50",
                              "eval.every=0.001", NULL};
        assert_int_equal(s_run_within(f, args, 60), 0);
        char path[600];
        snprintf(path, sizeof path, "%s/wild/d%d/eval.csv", f->out, i);
        char *eval = support_read_file(path);
        assert_non_null(eval);
        char *last = eval;
        for (char *line = strchr(eval, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
            last = line + 1;
        }
        double t, epoch, loss, acc;
        long updates, samples;
        assert_int_equal(sscanf(last, "%lf,%lf,%ld,%ld,%lf,%lf", &t, &epoch, &updates, &samples,
                                &loss, &acc), 6);
        free(eval);
        snprintf(path, sizeof path, "%s/wild/d%d/summary.json", f->out, i);
        cJSON *j = support_json_file(path);
        assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "diverged")));
        if (support_json_number(j, "updates") != (double)updates ||
            support_json_number(j, "samples") != (double)samples ||
            fabs(support_json_number(j, "time_s") - t) > 1e-6 || isfinite(loss) ||
            !cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, "final_test_acc"))) {
            fail_msg("run %d: last row %g s, %ld updates, %ld samples, loss %g; summary %g s, "
                     "%g updates, %g samples", i, t, updates, samples, loss,
                     support_json_number(j, "time_s"), support_json_number(j, "updates"),
                     support_json_number(j, "samples"));
        }
        cJSON_Delete(j);
    }
}

static void test_sigint_stops_the_threads(void **state)
{
    support_fixture *f = *state;
    const char *args[] = {"train", "/dev/null", f->out_arg, "experiment.mode=threads",
                          "experiment.name=long", "experiment.run_id=r",
                          "data.dataset=synthetic", "model.type=mlp", "train.algorithm=sync",
                          "cluster.workers=3", "train.epochs=100000", "eval.every=0.05", NULL};
    int pid = support_spawn_asgd(f->dir, args);
    char eval[600];
    snprintf(eval, sizeof eval, "%s/long/r/eval.csv", f->out);
    if (!support_wait_lines(eval, 4, 30)) {
        kill(pid, SIGKILL);
        fail_msg("the run did not start");
    }
    kill(pid, SIGINT);
    assert_int_equal(support_wait(pid), 1);
    char path[600];
    snprintf(path, sizeof path, "%s/stderr", f->dir);
    char *err = support_read_file(path);
    assert_non_null(strstr(err, "interrupted"));
    free(err);
    snprintf(path, sizeof path, "%s/long/r/summary.json", f->out);
    cJSON *j = support_json_file(path);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(j, "complete")));
    cJSON_Delete(j);
}

/* Ctrl-C once every worker has finished its budget, while the final
 * evaluation runs (a test set of 20,000 through an MLP of 256 x 256: long
 * enough to be there), waits for the write-up: the run is complete, with
 * its final row and its model. It once killed the process, leaving the
 * placeholder summary of a run that had trained. */
static void test_sigint_during_the_write_up_waits_for_it(void **state)
{
    support_fixture *f = *state;
    const char *args[] = {"train", "/dev/null", f->out_arg, "experiment.mode=threads",
                          "experiment.name=late", "experiment.run_id=r",
                          "data.dataset=synthetic", "data.train_size=2000",
                          "data.test_size=20000", "model.type=mlp", "model.hidden=256,256",
                          "train.algorithm=hogwild", "cluster.workers=2", "train.epochs=0.5",
                          "eval.every=0", NULL};
    int pid = support_spawn_asgd(f->dir, args);
    char path[600];
    snprintf(path, sizeof path, "%s/late/r/log.txt", f->out);
    bool writing_up = false;
    for (int i = 0; i < 6000 && !writing_up && support_alive(pid); i++) {
        char *log = support_read_file(path);
        writing_up = log && strstr(log, "the final evaluation");
        free(log);
        run_sleep(0.005);
    }
    if (!writing_up) {
        kill(pid, SIGKILL);
        fail_msg("the run never reached its final evaluation");
    }
    kill(pid, SIGINT);
    assert_int_equal(support_wait(pid), 0);
    snprintf(path, sizeof path, "%s/late/r/summary.json", f->out);
    cJSON *j = support_json_file(path);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "complete")));
    assert_true(support_json_number(j, "updates") > 0);
    assert_true(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(j, "final_test_acc")));
    cJSON_Delete(j);
    snprintf(path, sizeof path, "%s/late/r/model.npy", f->out);
    assert_int_equal(access(path, R_OK), 0);
}

static int s_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* steps.csv's times, sorted, into *times; their count. */
static size_t s_step_times(const char *dir, double **times)
{
    char path[4200], line[512];
    snprintf(path, sizeof path, "%s/steps.csv", dir);
    FILE *in = fopen(path, "r");
    assert_non_null(in);
    size_t n = 0, cap = 1024;
    *times = malloc(cap * sizeof **times);
    while (fgets(line, sizeof line, in)) {
        double t;
        if (sscanf(line, "%lf,", &t) == 1 && line[0] != 't') {
            if (n == cap) {
                *times = realloc(*times, (cap *= 2) * sizeof **times);
            }
            (*times)[n++] = t;
        }
    }
    fclose(in);
    qsort(*times, n, sizeof **times, s_cmp_double);
    return n;
}

/* An eval.csv row is stamped when the centre was copied, not after the
 * test set's forward pass (which let the workers take many more steps
 * first: rows 10-20% late); the last row is the end of training, the
 * summary's time_s, and no row comes after it. */
static void test_evaluations_are_stamped_when_the_centre_is_copied(void **state)
{
    support_fixture *f = *state;
    const char *slow_eval[] = {"data.test_size=20000", "model.hidden=256,256", "train.epochs=10",
                               "eval.every=0.01", NULL};
    char dir[4096], path[4200], line[512];
    s_train(f, "hogwild", 2, slow_eval, dir, sizeof dir);
    double *steps;
    size_t nsteps = s_step_times(dir, &steps);
    snprintf(path, sizeof path, "%s/summary.json", dir);
    cJSON *j = support_json_file(path);
    double time_s = support_json_number(j, "time_s");
    /* start-up (loading the data, the initial evaluation: 20,000 examples
     * through 256-256) and training within the wall time */
    double startup_s = support_json_number(j, "startup_s");
    assert_true(startup_s > 0 && support_json_number(j, "wall_time_s") >= startup_s + time_s);
    cJSON_Delete(j);
    snprintf(path, sizeof path, "%s/eval.csv", dir);
    FILE *in = fopen(path, "r");
    assert_non_null(in);
    double t = 0, last = 0;
    int rows = 0;
    while (fgets(line, sizeof line, in)) {
        double epoch, loss, acc;
        long u, samples;
        if (sscanf(line, "%lf,%lf,%ld,%ld,%lf,%lf", &t, &epoch, &u, &samples, &loss, &acc) != 6) {
            continue;
        }
        assert_true(t >= last);
        last = t;
        /* the copy came before the steps that followed the ones it holds
         * (one more per thread, whose pushes may not have been applied) */
        size_t after = (size_t)samples / 64 + 2 + 1;   /* batch 64, 2 threads */
        if (rows++ > 0 && after <= nsteps && t > steps[after - 1]) {
            fail_msg("a row holding %ld samples is stamped %g s, after step %zu at %g s", samples,
                     t, after, steps[after - 1]);
        }
    }
    fclose(in);
    free(steps);
    assert_true(rows >= 4);
    assert_true(fabs(t - time_s) < 1e-6);
}

/* An eval.csv row's counters are those of the centre it evaluated (read at
 * the copy, not after it, when later pushes may have counted), and the last
 * row is the summary's time_s even where an evaluation came after the last
 * push: in one run, two rows with the same updates of one sync shard hold
 * one model, so one test loss. A race: several runs, each a chance. */
static void test_eval_rows_count_what_they_copied(void **state)
{
    support_fixture *f = *state;
    const char *args[] = {"algorithm.server_threads=1", "cluster.servers=2", "train.epochs=2",
                          "model.hidden=256,128", "data.test_size=500", "eval.every=0.01",
                          NULL};
    for (int run = 0; run < 4; run++) {
        char dir[4096], path[4200], line[512];
        s_train(f, "sync", 3, args, dir, sizeof dir);
        snprintf(path, sizeof path, "%s/summary.json", dir);
        cJSON *j = support_json_file(path);
        double time_s = support_json_number(j, "time_s");
        long updates = (long)support_json_number(j, "updates");
        cJSON_Delete(j);
        snprintf(path, sizeof path, "%s/eval.csv", dir);
        FILE *in = fopen(path, "r");
        assert_non_null(in);
        double t = 0, loss = 0, last_loss = -1;
        long u = -1, last_u = -1;
        while (fgets(line, sizeof line, in)) {
            double epoch, acc;
            long samples;
            if (sscanf(line, "%lf,%lf,%ld,%ld,%lf,%lf", &t, &epoch, &u, &samples, &loss, &acc) != 6) {
                continue;
            }
            if (u == last_u && loss != last_loss) {
                fail_msg("%s: two rows of %ld updates, test loss %.9g and %.9g", dir, u,
                         last_loss, loss);
            }
            last_u = u;
            last_loss = loss;
        }
        fclose(in);
        assert_int_equal(u, updates);
        if (fabs(t - time_s) > 1e-6) {
            fail_msg("%s: the last row at %.6f s, time_s %.6f s", dir, t, time_s);
        }
    }
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, support_fixture_setup, \
                                                support_fixture_teardown)
    const struct CMUnitTest tests[] = {
        T(test_one_thread_follows_sequential_exactly),
        T(test_every_rule_learns_with_three_threads),
        T(test_hogwild_threads_at_once_lose_nothing),
        T(test_evaluations_are_stamped_when_the_centre_is_copied),
        T(test_eval_rows_count_what_they_copied),
        T(test_each_worker_says_where_its_time_went),
        T(test_what_needs_a_network_is_refused),
        T(test_a_stuck_run_ends),
        T(test_a_diverged_runs_last_row_is_the_diverged_model),
        T(test_network_keys_are_not_a_threads_runs),
        T(test_sigint_stops_the_threads),
        T(test_sigint_during_the_write_up_waits_for_it),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
