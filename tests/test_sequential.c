/* test_sequential.c: end-to-end runs of `asgd train` with the sequential
 * baseline, as real processes: the loss falls on synthetic data and on a
 * Fashion-MNIST subset, the run folder is complete and reproducible, and
 * Ctrl-C leaves an incomplete but readable folder. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cJSON.h>

#include "support.h"

/* The run folder printed on stdout, without its newline. */
static void s_run_dir(const support_fixture *f, char *buf, size_t n)
{
    size_t len = strcspn(f->r.out, "\n");
    assert_true(len < n);
    memcpy(buf, f->r.out, len);
    buf[len] = '\0';
}

static cJSON *s_summary(const char *run_dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/summary.json", run_dir);
    char *text = support_read_file(path);
    assert_non_null(text);
    cJSON *j = cJSON_Parse(text);
    free(text);
    assert_non_null(j);
    return j;
}

static double s_number(cJSON *j, const char *key)
{
    cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    if (!cJSON_IsNumber(v)) {
        fail_msg("summary.json lacks the number %s", key);
    }
    return v->valuedouble;
}

/* Test loss and accuracy of the first and last rows of eval.csv. */
static int s_eval_ends(const char *run_dir, double *first_loss, double *last_loss,
                       double *last_acc)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/eval.csv", run_dir);
    FILE *in = fopen(path, "r");
    assert_non_null(in);
    char line[512];
    assert_non_null(fgets(line, sizeof line, in));
    assert_string_equal(line, "time_s,epoch,updates,samples,test_loss,test_acc\n");
    int rows = 0;
    double t, epoch, loss, acc;
    long updates, samples;
    while (fgets(line, sizeof line, in)) {
        assert_int_equal(sscanf(line, "%lf,%lf,%ld,%ld,%lf,%lf", &t, &epoch, &updates,
                                &samples, &loss, &acc), 6);
        if (rows++ == 0) {
            *first_loss = loss;
        }
        *last_loss = loss;
        *last_acc = acc;
    }
    fclose(in);
    return rows;
}

static void s_check_run(support_fixture *f, const char *model_type, double min_acc,
                        long n_train)
{
    if (f->r.status != 0) {
        fail_msg("asgd train failed (%d): %s", f->r.status, f->r.err);
    }
    char dir[4096];
    s_run_dir(f, dir, sizeof dir);
    const char *files[] = {"config.ini", "eval.csv", "steps.csv", "summary.json", "log.txt"};
    for (int i = 0; i < 5; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        assert_true(support_count_lines(path) > 0);
    }
    double first, last, acc;
    assert_true(s_eval_ends(dir, &first, &last, &acc) >= 2);
    if (!(last < 0.7 * first)) {
        fail_msg("test loss did not fall: %g -> %g", first, last);
    }
    cJSON *j = s_summary(dir);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "complete")));
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(j, "algorithm")->valuestring, "sequential");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(j, "model")->valuestring, model_type);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(j, "mode")->valuestring, "real");
    assert_true(s_number(j, "workers") == 1);
    assert_true(s_number(j, "final_test_acc") == acc);
    assert_true(s_number(j, "best_test_acc") >= acc);
    if (acc < min_acc) {
        fail_msg("final test accuracy %g < %g", acc, min_acc);
    }
    assert_true(s_number(j, "samples_per_s") > 0);
    support_check_run_arithmetic(dir, n_train);
    assert_true(s_number(j, "time_s") > 0);
    /* start-up is loading the data (it was 0), and the wall time holds it */
    assert_true(s_number(j, "startup_s") > 0);
    assert_true(s_number(j, "wall_time_s") >= s_number(j, "startup_s") + s_number(j, "time_s"));
    assert_true(s_number(j, "staleness_mean") == 0);
    const char *keys[] = {"final_test_loss", "updates", "staleness_max", NULL};
    for (int i = 0; keys[i]; i++) {
        s_number(j, keys[i]);
    }
    /* steps.csv: a header and one row per update */
    char path[4200];
    snprintf(path, sizeof path, "%s/steps.csv", dir);
    assert_int_equal(support_count_lines(path), (int)s_number(j, "updates") + 1);
    cJSON_Delete(j);
    /* time 0 is the initial evaluation's, and a step's row comes when its
     * gradient is done, as a worker's (step 1 was stamped with the initial
     * evaluation, a few microseconds in) */
    char *steps = support_read_file(path);
    snprintf(path, sizeof path, "%s/eval.csv", dir);
    char *evals = support_read_file(path);
    double step1 = strtod(strchr(steps, '\n') + 1, NULL);
    double eval0 = strtod(strchr(evals, '\n') + 1, NULL);
    if (!(eval0 == 0 && step1 > 0)) {
        fail_msg("the initial evaluation at %.6f s, step 1 at %.6f s", eval0, step1);
    }
    free(steps);
    free(evals);
}

static void test_synthetic_softmax_and_mlp_learn(void **state)
{
    support_fixture *f = *state;
    const char *args[] = {"train", "/dev/null", f->out_arg, "experiment.name=syn",
                          "data.dataset=synthetic", "model.type=softmax",
                          "train.epochs=3", NULL};
    support_run_asgd(&f->r, f->dir, args);
    s_check_run(f, "softmax", 0.5, 10000);
    const char *mlp[] = {"train", "/dev/null", f->out_arg, "experiment.name=syn",
                         "data.dataset=synthetic", "model.type=mlp", "model.hidden=64",
                         "train.epochs=3", "train.optimizer=momentum", "train.lr=0.02", NULL};
    support_run_asgd(&f->r, f->dir, mlp);
    s_check_run(f, "mlp", 0.6, 10000);
}

static void test_fashion_mnist_subset_learns(void **state)
{
    support_fixture *f = *state;
    const char *args[] = {"train", ASGD_SOURCE_DIR "/configs/softmax.ini", f->out_arg,
                          "data.train_size=6000", "data.test_size=2000",
                          "train.epochs=2", NULL};
    support_run_asgd(&f->r, f->dir, args);
    s_check_run(f, "softmax", 0.72, 6000);
}

/* Everything but the time column of a CSV. */
static char *s_without_time(const char *path)
{
    char *text = support_read_file(path);
    assert_non_null(text);
    char *out = malloc(strlen(text) + 1), *o = out;
    for (char *line = text; *line;) {
        char *end = strchr(line, '\n');
        char *comma = strchr(line, ',');
        char *from = comma && comma < end ? comma : line;
        size_t n = (size_t)(end - from) + 1;
        memcpy(o, from, n);
        o += n;
        line = end + 1;
    }
    *o = '\0';
    free(text);
    return out;
}

static void test_same_seed_same_run_from_resolved_config(void **state)
{
    support_fixture *f = *state;
    const char *args[] = {"train", "/dev/null", f->out_arg, "data.dataset=synthetic",
                          "model.type=mlp", "model.hidden=32,16", "train.epochs=1",
                          "experiment.seed=7", NULL};
    support_run_asgd(&f->r, f->dir, args);
    assert_int_equal(f->r.status, 0);
    char first[4096], second[4096], config[4200], a[4200], b[4200];
    s_run_dir(f, first, sizeof first);
    /* the resolved config alone reproduces the run */
    snprintf(config, sizeof config, "%s/config.ini", first);
    const char *again[] = {"train", config, NULL};
    support_run_asgd(&f->r, f->dir, again);
    assert_int_equal(f->r.status, 0);
    s_run_dir(f, second, sizeof second);
    assert_string_not_equal(first, second);
    snprintf(a, sizeof a, "%s/steps.csv", first);
    snprintf(b, sizeof b, "%s/steps.csv", second);
    char *sa = s_without_time(a), *sb = s_without_time(b);
    assert_true(strlen(sa) > 100);
    assert_string_equal(sa, sb);
    free(sa);
    free(sb);
    /* a different seed gives a different trajectory */
    const char *other[] = {"train", config, "experiment.seed=8", NULL};
    support_run_asgd(&f->r, f->dir, other);
    assert_int_equal(f->r.status, 0);
    s_run_dir(f, second, sizeof second);
    snprintf(b, sizeof b, "%s/steps.csv", second);
    sa = s_without_time(a);
    sb = s_without_time(b);
    assert_string_not_equal(sa, sb);
    free(sa);
    free(sb);
}

static void test_sigint_leaves_an_incomplete_folder(void **state)
{
    support_fixture *f = *state;
    char out_path[300], err_path[300];
    snprintf(out_path, sizeof out_path, "%s/stdout", f->dir);
    snprintf(err_path, sizeof err_path, "%s/stderr", f->dir);
    char run_id[64] = "experiment.run_id=interrupted";
    pid_t pid = fork();
    if (pid == 0) {
        if (!freopen(out_path, "w", stdout) || !freopen(err_path, "w", stderr)) {
            _exit(127);
        }
        execl(ASGD_BINARY, ASGD_BINARY, "train", "/dev/null", f->out_arg, run_id,
              "experiment.name=long", "data.dataset=synthetic", "model.type=mlp",
              "train.epochs=100000", (char *)NULL);
        _exit(127);
    }
    /* wait until training is under way: the first steps are recorded */
    char steps[400];
    snprintf(steps, sizeof steps, "%s/runs/long/interrupted/steps.csv", f->dir);
    for (int i = 0; i < 200 && support_count_lines(steps) < 2; i++) {
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    assert_int_equal(kill(pid, SIGINT), 0);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 1);
    char *err = support_read_file(err_path);
    assert_non_null(strstr(err, "interrupted"));
    free(err);
    char dir[400];
    snprintf(dir, sizeof dir, "%s/runs/long/interrupted", f->dir);
    cJSON *j = s_summary(dir);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(j, "complete")));
    assert_true(s_number(j, "updates") > 0);
    cJSON_Delete(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_synthetic_softmax_and_mlp_learn, support_fixture_setup, support_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_fashion_mnist_subset_learns, support_fixture_setup, support_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_same_seed_same_run_from_resolved_config, support_fixture_setup, support_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_sigint_leaves_an_incomplete_folder, support_fixture_setup, support_fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
