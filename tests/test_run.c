/* test_run.c: the run folder as the researcher finds it: the trained model
 * kept (model.npy and model.json, read back by asgd eval and by NumPy
 * alone), the summary's counters as the shards' add up, eval.csv cut back
 * to the checkpoint a resumed run goes on from, and what happens when its
 * files cannot be written (a file-size limit, a full tmpfs): the run
 * fails, names the file that lost data, and is never reported complete. */
#define _GNU_SOURCE   /* CPU_SET */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cJSON.h>

#include "core/proc.h"
#include "core/run.h"
#include "core/summary.h"
#include "support.h"

#define DATA_FASHION "/usr/share/datasets/fashion-mnist"

/* The four ways a run runs: the baseline, simulated, real processes,
 * threads. */
enum { MODES = 4 };
static const char *const s_modes[MODES][2] = {
    {"train.algorithm=sequential", "experiment.mode=real"},
    {"train.algorithm=hogwild", "experiment.mode=sim"},
    {"train.algorithm=hogwild", "experiment.mode=real"},
    {"train.algorithm=hogwild", "experiment.mode=threads"},
};

/* A run of mode i whose steps.csv outgrows a small file system: 1,563
 * steps of about 40 bytes each. */
static void s_long_run(support_fixture *f, int i, const char *out_arg, long file_limit)
{
    const char *args[] = {"train", "/dev/null", out_arg, s_modes[i][0], s_modes[i][1],
                          "data.dataset=synthetic", "model.type=softmax", "train.epochs=10",
                          "eval.every=0", "cluster.workers=2", NULL};
    if (file_limit > 0) {
        support_run_asgd_limited(&f->r, f->dir, args, file_limit);
    } else {
        support_run_asgd(&f->r, f->dir, args);
    }
}

/* The newest run folder under out/null (the config is /dev/null). */
static void s_newest(const char *out, char *dir, size_t n)
{
    char parent[600];
    snprintf(parent, sizeof parent, "%s/null", out);
    support_newest_subdir(parent, dir, n);
}

/* Whether a run folder's summary.json says complete (false when it has
 * none or cannot be read). */
static int s_complete(const char *dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    char *text = support_read_file(path);
    cJSON *j = text ? cJSON_Parse(text) : NULL;
    int complete = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "complete"));
    cJSON_Delete(j);
    free(text);
    return complete;
}

/* summary.json's number KEY in dir. */
static double s_summary_num(const char *dir, const char *key)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    char *text = support_read_file(path);
    cJSON *j = text ? cJSON_Parse(text) : NULL;
    cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    double x = cJSON_IsNumber(v) ? v->valuedouble : NAN;
    cJSON_Delete(j);
    free(text);
    return x;
}

/* Whether every CSV file of the run folder dir (eval.csv, steps.csv, a
 * worker's steps-K.csv) ends with a whole row (the shell names one that
 * does not): a row cut short by a failed write reads as data (a bytes
 * column of 7186 for 7186880). */
static bool s_rows_whole(const char *dir)
{
    char cmd[4400];
    snprintf(cmd, sizeof cmd, "cd '%s' && for f in *.csv; do [ ! -s \"$f\" ] || "
             "[ \"$(tail -c 1 \"$f\" | od -An -c | tr -d ' ')\" = '\\n' ] || "
             "{ echo \"$f ends with a row cut short\" >&2; exit 1; }; done", dir);
    return system(cmd) == 0;
}

/* Every file of a run limited to 8 KB: steps.csv cannot hold the run. The
 * run fails (exit 1) naming the file, and its summary never says complete;
 * threads mode stops when it finds it (it trained on to the end, then
 * named model.npy); no file ends in a row cut short. */
static void test_a_file_size_limit_fails_the_run(void **state)
{
    support_fixture *f = *state;
    for (int i = 0; i < MODES; i++) {
        s_long_run(f, i, f->out_arg, 8192);
        if (f->r.status != 1) {
            fail_msg("%s %s: exit %d, stderr %s", s_modes[i][0], s_modes[i][1], f->r.status,
                     f->r.err);
        }
        char dir[4096];
        s_newest(f->out, dir, sizeof dir);
        assert_false(s_complete(dir));
        /* which file: steps.csv, or a worker's steps-K.csv behind its failure */
        char path[4200];
        snprintf(path, sizeof path, "%s/log.txt", dir);
        char *log = support_read_file(path);
        if (!strstr(f->r.err, "steps.csv") && !(log && strstr(log, "steps-"))) {
            fail_msg("the lost file is not named: %s / %s", f->r.err, log ? log : "");
        }
        free(log);
        if (!s_rows_whole(dir)) {
            fail_msg("%s: a CSV file of %s ends with a row cut short", s_modes[i][1], dir);
        }
        /* every mode stops at the failed write (threads mode, real workers
         * and the simulator trained on to the end; the simulator then named
         * model.npy on a full disk, not the file that lost rows) */
        double updates = s_summary_num(dir, "updates");
        if (!(updates < 1563)) {
            fail_msg("%s %s: %g updates of 1,563 after steps.csv was full", s_modes[i][0],
                     s_modes[i][1], updates);
        }
        support_rmtree(f->out);
    }
}

/* The evaluator's model.npy outgrows the file limit: the job's error says
 * why it failed, as a worker's does (the launcher looked for "asgd
 * evaluator 0:", which the evaluator never says, and said only its exit
 * status). */
static void test_the_evaluators_failure_is_said(void **state)
{
    support_fixture *f = *state;
    const char *args[] = {"train", "/dev/null", f->out_arg, "train.algorithm=hogwild",
                          "data.dataset=synthetic", "model.type=mlp", "model.hidden=256,256",
                          "train.epochs=1", "eval.every=0", "eval.steps_every=100000",
                          "cluster.workers=2", NULL};
    support_run_asgd_limited(&f->r, f->dir, args, 100000);
    assert_int_equal(f->r.status, 1);
    if (!strstr(f->r.err, "evaluator 0 exited with status 1: ") ||
        !strstr(f->r.err, "model.npy: cannot write: File too large")) {
        fail_msg("the evaluator's reason is not said: %s", f->r.err);
    }
}

/* experiment.out on a 48 KB tmpfs, as a full disk: the run fails and is
 * not complete. Needs mount(2) (root); skips where it cannot mount. */
static void test_a_full_disk_fails_the_run(void **state)
{
    support_fixture *f = *state;
    char disk[400], out_arg[500];
    snprintf(disk, sizeof disk, "%s/disk", f->dir);
    mkdir(disk, 0755);
    if (mount("tmpfs", disk, "tmpfs", 0, "size=48k") != 0) {
        fprintf(stderr, "cannot mount a tmpfs here (%s): skipped\n", strerror(errno));
        skip();
    }
    snprintf(out_arg, sizeof out_arg, "experiment.out=%s", disk);
    for (int i = 0; i < MODES; i++) {
        s_long_run(f, i, out_arg, 0);
        int status = f->r.status;
        char dir[4096];
        s_newest(disk, dir, sizeof dir);
        int complete = s_complete(dir);
        bool whole = s_rows_whole(dir);
        char sub[4200];
        snprintf(sub, sizeof sub, "%s/null", disk);
        support_rmtree(sub);
        if (status != 1 || complete || !whole) {
            umount(disk);
            fail_msg("%s %s on a full disk: exit %d, complete %d, rows whole %d: %s",
                     s_modes[i][0], s_modes[i][1], status, complete, whole, f->r.err);
        }
    }
    assert_int_equal(umount(disk), 0);
}


/* Every run keeps its trained model: asgd eval evaluates model.npy to the
 * recorded accuracy, and NumPy alone, from model.npy and model.json,
 * computes the same accuracy on the test set (in float64: a near tie may
 * flip an example or two), the run's 1,000 test examples of the file's
 * 10,000 (model.json's test_examples: all were read, 0.7773 against a
 * run's 0.796). */
static void test_the_trained_model_is_kept(void **state)
{
    support_fixture *f = *state;
    struct stat st;
    if (stat(DATA_FASHION, &st) != 0) {
        fprintf(stderr, "Fashion-MNIST is not installed: skipped\n");
        skip();
    }
    for (int i = 0; i < MODES; i++) {
        support_rmtree(f->out);
        const char *args[] = {"train", "/dev/null", f->out_arg, s_modes[i][0], s_modes[i][1],
                              "model.type=mlp", "model.hidden=32", "data.train_size=3000",
                              "data.test_size=1000", "train.epochs=1", "cluster.workers=2",
                              NULL};
        support_run_asgd(&f->r, f->dir, args);
        if (f->r.status != 0) {
            fail_msg("%s %s: %s", s_modes[i][0], s_modes[i][1], f->r.err);
        }
        char dir[4096];
        s_newest(f->out, dir, sizeof dir);
        double recorded = s_summary_num(dir, "final_test_acc");
        const char *eval[] = {"eval", dir, NULL};
        support_run_asgd(&f->r, f->dir, eval);
        assert_int_equal(f->r.status, 0);
        double again;
        assert_int_equal(sscanf(strstr(f->r.out, "test_acc "), "test_acc %lf", &again), 1);
        assert_true(fabs(again - recorded) < 1e-9);
        const char *python = support_python();
        if (!python || access("/usr/lib/python3/dist-packages/numpy", F_OK) != 0) {
            continue;   /* the NumPy half needs Debian's python3-numpy */
        }
        char script[600];
        snprintf(script, sizeof script, "%s/tests/eval_npy.py", ASGD_SOURCE_DIR);
        const char *py[] = {script, dir, DATA_FASHION, NULL};
        support_run(&f->r, f->dir, python, py);
        if (f->r.status != 0) {
            fail_msg("eval_npy.py: %s", f->r.err);
        }
        double numpy = strtod(f->r.out, NULL);
        if (fabs(numpy - recorded) > 0.0025) {   /* two examples of the 1,000 */
            fail_msg("%s %s: NumPy says %g, the run %g", s_modes[i][0], s_modes[i][1], numpy,
                     recorded);
        }
    }
    /* a threads run with backend.threads = 0 evaluated with one BLAS
     * thread, as its threads compute: asgd eval does too, and gives its
     * loss to the digit (it took OpenBLAS's default, and the last digit
     * moved) */
    char config[600];
    snprintf(config, sizeof config, "%s/experiments/cnn/config.ini", ASGD_SOURCE_DIR);
    const char *cnn[] = {"train", config, f->out_arg, "experiment.mode=threads",
                         "train.algorithm=hogwild", "train.optimizer=sgd", "train.epochs=0.3",
                         "cluster.workers=2", "model.channels=8,16", "model.hidden=64",
                         "data.train_size=3000", "data.test_size=1000", "eval.every=0",
                         "backend.threads=0", NULL};
    support_run_asgd(&f->r, f->dir, cnn);
    assert_int_equal(f->r.status, 0);
    char dir[4096];
    snprintf(dir, sizeof dir, "%.4000s", f->r.out);   /* the run's folder */
    dir[strcspn(dir, "\n")] = '\0';
    const char *eval[] = {"eval", dir, NULL};
    support_run_asgd(&f->r, f->dir, eval);
    assert_int_equal(f->r.status, 0);
    char now[32], then[32];
    const char *was = strstr(f->r.out, "(recorded: test_loss ");
    if (sscanf(f->r.out, "test_loss %31s", now) != 1 || !was ||
        sscanf(was, "(recorded: test_loss %31s", then) != 1 || strcmp(now, then) != 0) {
        fail_msg("a threads run's loss evaluated again: \"%s\"", f->r.out);
    }
}

/* A short simulated run of 300 test examples, for asgd eval; its folder
 * into dir. */
static void s_run_to_evaluate(support_fixture *f, char *dir, size_t n)
{
    const char *args[] = {"train", "/dev/null", f->out_arg, "experiment.mode=sim",
                          "data.dataset=synthetic", "data.test_size=300", "model.type=softmax",
                          "train.algorithm=hogwild", "train.epochs=0.5", NULL};
    support_run_asgd(&f->r, f->dir, args);
    assert_int_equal(f->r.status, 0);
    s_newest(f->out, dir, n);
}

/* asgd eval says what it evaluated (the test examples and the data set)
 * beside the run's recorded loss and accuracy; a model of NaN parameters
 * is said, and has no accuracy (it printed an argmax's 0.11 beside a NaN
 * loss); an input file changed since the run is said (the evaluation is
 * not the run's). */
static void test_eval_says_what_it_evaluated(void **state)
{
    support_fixture *f = *state;
    char dir[4096], path[4200];
    s_run_to_evaluate(f, dir, sizeof dir);
    const char *eval[] = {"eval", dir, NULL};
    support_run_asgd(&f->r, f->dir, eval);
    assert_int_equal(f->r.status, 0);
    if (!strstr(f->r.out, "over 300 test examples of synthetic (recorded: test_loss ")) {
        fail_msg("asgd eval said \"%s\"", f->r.out);
    }
    /* a NaN in the model */
    snprintf(path, sizeof path, "%s/model.npy", dir);
    FILE *npy = fopen(path, "r+b");
    assert_non_null(npy);
    assert_int_equal(fseek(npy, -4, SEEK_END), 0);
    float nan = NAN;
    assert_int_equal(fwrite(&nan, sizeof nan, 1, npy), 1);
    fclose(npy);
    support_run_asgd(&f->r, f->dir, eval);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.err, "model.npy holds NaN or infinite parameters (its "
                                     "summary.json does not say it diverged"));
    assert_non_null(strstr(f->r.out, "test_loss nan test_acc nan over 300"));
    /* overrides of the run's config: another test set, a bad key named */
    const char *other[] = {"eval", dir, "data.test_size=100", NULL};
    support_run_asgd(&f->r, f->dir, other);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "over 100 test examples"));
    /* an override eval does not follow is said (it was taken in silence) */
    const char *train[] = {"eval", dir, "train.lr=5", NULL};
    support_run_asgd(&f->r, f->dir, train);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.err, "train.lr=5: not used by asgd eval"));
    const char *typo[] = {"eval", dir, "data.test_sise=100", NULL};
    support_run_asgd(&f->r, f->dir, typo);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "did you mean [data] test_size"));
    /* without model.json's mean and std, the data's own are taken: said
     * (in silence, an override's other training set normalised the test
     * set otherwise than the model took it) */
    snprintf(path, sizeof path, "%s/model.json", dir);
    assert_int_equal(unlink(path), 0);
    support_run_asgd(&f->r, f->dir, other);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.err, "model.json gives no input mean and std"));
}

/* An IDX data set of 60 training and 20 test images of h x w (four
 * pixels: 2 x 2, 4 x 1), labels i % 3, into dir. */
static void s_small_idx(const char *dir, uint32_t h, uint32_t w)
{
    static const char *const stems[4] = {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                                         "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"};
    uint8_t px[60 * 4], labels[60];
    for (int i = 0; i < 60 * 4; i++) {
        px[i] = (uint8_t)(i * 37 % 251);
    }
    for (int i = 0; i < 60; i++) {
        labels[i] = (uint8_t)(i % 3);
    }
    assert_true(h * w == 4);
    const uint32_t dims[2][3] = {{60, h, w}, {20, h, w}};
    mkdir(dir, 0755);
    for (int set = 0; set < 2; set++) {
        char path[900];
        snprintf(path, sizeof path, "%s/%s", dir, stems[2 * set]);
        support_write_idx(path, 0, dims[set], 3, px);
        snprintf(path, sizeof path, "%s/%s", dir, stems[2 * set + 1]);
        support_write_idx(path, 0, dims[set], 1, labels);
    }
}

/* Data that moved since the run, named by an override, is checked where
 * it is now: its files are the run's (it said the recorded path's were
 * "unreadable now": not the evaluation the run made), and a file changed
 * there is named. */
static void test_eval_of_data_that_moved(void **state)
{
    support_fixture *f = *state;
    char before[600], after[600], path_arg[700], cmd[1400];
    snprintf(before, sizeof before, "%s/data-before", f->dir);
    snprintf(after, sizeof after, "%s/data-after", f->dir);
    s_small_idx(before, 2, 2);
    snprintf(path_arg, sizeof path_arg, "data.path=%s", before);
    const char *args[] = {"train", "/dev/null", f->out_arg, "experiment.mode=sim",
                          "data.dataset=idx", path_arg, "data.cache=off", "model.type=softmax",
                          "train.algorithm=hogwild", "train.epochs=1", "train.batch=4", NULL};
    support_run_asgd(&f->r, f->dir, args);
    assert_int_equal(f->r.status, 0);
    char dir[4096];
    s_newest(f->out, dir, sizeof dir);
    assert_int_equal(rename(before, after), 0);
    snprintf(path_arg, sizeof path_arg, "data.path=%s", after);
    const char *eval[] = {"eval", dir, path_arg, NULL};
    support_run_asgd(&f->r, f->dir, eval);
    assert_int_equal(f->r.status, 0);
    if (strstr(f->r.err, "changed since the run")) {
        fail_msg("moved data taken for changed: %s", f->r.err);
    }
    assert_non_null(strstr(f->r.out, "over 20 test examples"));
    snprintf(cmd, sizeof cmd, "printf '\\001' | dd of=%s/t10k-images-idx3-ubyte bs=1 seek=20 "
             "conv=notrunc status=none", after);
    assert_int_equal(system(cmd), 0);
    support_run_asgd(&f->r, f->dir, eval);
    assert_int_equal(f->r.status, 0);
    char want[800];
    snprintf(want, sizeof want, "%s/t10k-images-idx3-ubyte changed since the run", after);
    assert_non_null(strstr(f->r.err, want));
}

/* asgd eval with a training set of another size (data.train_size, whose
 * mean and std standardise the test set) evaluates the test set as the
 * run's model takes it, with the run's mean and std, and says so: it
 * evaluated inputs standardised otherwise, another accuracy over the same
 * test examples, without a word. */
static void test_eval_normalises_as_the_run(void **state)
{
    support_fixture *f = *state;
    char data[600], path_arg[700];
    snprintf(data, sizeof data, "%s/data-norm", f->dir);
    s_small_idx(data, 2, 2);
    snprintf(path_arg, sizeof path_arg, "data.path=%s", data);
    const char *args[] = {"train", "/dev/null", f->out_arg, "experiment.mode=sim",
                          "data.dataset=idx", path_arg, "model.type=softmax",
                          "train.algorithm=hogwild", "train.epochs=1", "train.batch=4", NULL};
    support_run_asgd(&f->r, f->dir, args);
    assert_int_equal(f->r.status, 0);
    char dir[4096];
    s_newest(f->out, dir, sizeof dir);
    const char *eval[] = {"eval", dir, "data.train_size=30", NULL};
    support_run_asgd(&f->r, f->dir, eval);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.err, "the test set normalised as the run's model takes it"));
    double loss, acc, was_loss, was_acc;
    const char *at = strstr(f->r.out, "test_loss ");
    assert_non_null(at);
    assert_int_equal(sscanf(at, "test_loss %lf test_acc %lf", &loss, &acc), 2);
    at = strstr(f->r.out, "(recorded: test_loss ");
    assert_non_null(at);
    assert_int_equal(sscanf(at, "(recorded: test_loss %lf test_acc %lf", &was_loss, &was_acc), 2);
    if (!(fabs(loss - was_loss) <= 1e-5 * fabs(was_loss)) || acc != was_acc) {
        fail_msg("evaluated again: loss %.9g, accuracy %g; recorded %.9g, %g", loss, acc,
                 was_loss, was_acc);
    }
    /* the same data: nothing to say, also where the data's mean and std
     * do not come back from 15 digits (cJSON's, in model.json: one run in
     * nine said it normalised otherwise, and did, by an ulp) */
    const char *reg[] = {"train", "/dev/null", f->out_arg, "data.dataset=regression",
                         "model.type=linear", "train.epochs=1", "eval.every=0", NULL};
    support_run_asgd(&f->r, f->dir, reg);
    assert_int_equal(f->r.status, 0);
    s_newest(f->out, dir, sizeof dir);
    char json[4200];
    snprintf(json, sizeof json, "%s/model.json", dir);
    char *text = support_read_file(json);
    assert_non_null(text);
    double mean;
    const char *m = strstr(text, "\"mean\":");
    assert_non_null(m);
    assert_int_equal(sscanf(m + 7, "%lf", &mean), 1);
    char fifteen[32];
    snprintf(fifteen, sizeof fifteen, "%.15g", mean);
    assert_true(strtod(fifteen, NULL) != mean);   /* the case this checks */
    free(text);
    const char *again[] = {"eval", dir, NULL};
    support_run_asgd(&f->r, f->dir, again);
    if (f->r.status != 0 || strstr(f->r.err, "normalised")) {
        fail_msg("the run's own data: status %d, \"%s\"", f->r.status, f->r.err);
    }
}

/* A cnn on images that are not square (4 x 1: four pixels, as a 2 x 2
 * image has) is refused, naming the shape to give: it took them for 2 x 2
 * images, rows cut and joined anew, without a word. */
static void test_a_cnn_on_images_not_square_is_told_their_shape(void **state)
{
    support_fixture *f = *state;
    char data[600], path_arg[700];
    snprintf(data, sizeof data, "%s/data-tall", f->dir);
    s_small_idx(data, 4, 1);
    snprintf(path_arg, sizeof path_arg, "data.path=%s", data);
    const char *args[] = {"train", "/dev/null", f->out_arg, "data.dataset=idx", path_arg,
                          "model.type=cnn", "model.channels=2", "model.kernel=1",
                          "model.pool=1", "model.hidden=", "train.batch=4", NULL};
    support_run_asgd(&f->r, f->dir, args);
    if (f->r.status != 2 || !strstr(f->r.err, "the data's images are 4 x 1 x 1") ||
        !strstr(f->r.err, "give [model] image = 4,1,1")) {
        fail_msg("a cnn on 4 x 1 images: status %d, \"%s\"", f->r.status, f->r.err);
    }
    const char *told[] = {"train", "/dev/null", f->out_arg, "data.dataset=idx", path_arg,
                          "model.type=cnn", "model.channels=2", "model.kernel=1",
                          "model.pool=1", "model.hidden=", "model.image=4,1,1", "train.batch=4",
                          "train.epochs=0.1", NULL};
    support_run_asgd(&f->r, f->dir, told);
    if (f->r.status != 0) {
        fail_msg("a cnn told the images' shape: %s", f->r.err);
    }
}

/* A run trained on a GPU, evaluated again where there is none: the error
 * says how to evaluate it on the CPU, and that works (it was exit 2 with
 * nothing to do but edit the run's config.ini). */
static void test_eval_of_a_gpu_run_without_a_gpu(void **state)
{
    support_fixture *f = *state;
    char dir[4096], path[4200], cmd[8600];
    s_run_to_evaluate(f, dir, sizeof dir);
    snprintf(path, sizeof path, "%s/config.ini", dir);
    snprintf(cmd, sizeof cmd, "sed -i 's/^device = .*/device = cuda/' %s", path);
    assert_int_equal(system(cmd), 0);
    const char *eval[] = {"eval", dir, NULL};
    support_run_asgd(&f->r, f->dir, eval);
    if (f->r.status == 0) {
        fprintf(stderr, "this host has a GPU: the run evaluates on it\n");
        skip();
    }
    assert_int_equal(f->r.status, 2);
    char hint[4400];
    snprintf(hint, sizeof hint, "`asgd eval %s backend.device=cpu` evaluates it on the CPU", dir);
    assert_non_null(strstr(f->r.err, hint));
    const char *cpu[] = {"eval", dir, "backend.device=cpu", NULL};
    support_run_asgd(&f->r, f->dir, cpu);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "over 300 test examples"));
}

/* A CSV its writer was killed in mid-row (SIGKILL with half its buffer
 * flushed) is cut back to its last whole row before the next writer (a
 * restarted worker) appends: its first row once ran on from the cut one,
 * a step at 1.8e17 s in steps.csv. A file holding no whole line starts
 * again from its header. */
static void test_a_row_cut_short_is_dropped_before_appending(void **state)
{
    support_fixture *f = *state;
    char path[4200];
    snprintf(path, sizeof path, "%s/steps-1.csv", f->dir);
    support_write_file(path, "time_s,worker,step\n1795665110.5,1,1\n17956651");
    error err = {0};
    FILE *csv = run_append_csv(path, "time_s,worker,step", false, &err);
    assert_non_null(csv);
    fprintf(csv, "1795665111.2,1,2\n");
    fclose(csv);
    char *text = support_read_file(path);
    assert_string_equal(text, "time_s,worker,step\n1795665110.5,1,1\n1795665111.2,1,2\n");
    free(text);
    support_write_file(path, "time_s,wor");
    csv = run_append_csv(path, "time_s,worker,step", false, &err);
    assert_non_null(csv);
    fclose(csv);
    text = support_read_file(path);
    assert_string_equal(text, "time_s,worker,step\n");
    free(text);
}

/* What the last session's evaluator last saw: the updates of eval.csv's
 * last whole row, not the most any row holds (a killed session's 685,
 * counted as lost when the next began, would be counted again after that
 * one was stopped at 600), and not a row cut short. */
static void test_the_last_evaluation_seen(void **state)
{
    support_fixture *f = *state;
    char path[4200];
    snprintf(path, sizeof path, "%s/eval.csv", f->dir);
    support_write_file(path, RUN_EVAL_HEADER "\n0.0,0,0,0,2.3,0.1\n1.0,1,685,4000,1.1,0.6\n"
                       "1.0,1,542,3000,1.2,0.6\n2.0,1,600,3500,1.1,0.6\n2.5,1,6");
    assert_true(summary_evals_last_updates(path) == 600);
    support_write_file(path, RUN_EVAL_HEADER "\n");
    assert_true(summary_evals_last_updates(path) == 0);
    snprintf(path, sizeof path, "%s/none.csv", f->dir);
    assert_true(summary_evals_last_updates(path) == 0);
}

/* A summary says what made it: asgd's version and commit, the host, its
 * CPU and cores, the device, the command line and the start, the build,
 * the libraries (another BLAS kernel changes a model's last digits), the
 * environment that picks kernels and threads, and the BLAS threads that
 * backend.threads = 0 came to; and asgd --version says the same version
 * and commit. */
static void test_provenance(void **state)
{
    support_fixture *f = *state;
    const char *args[] = {"train", "/dev/null", f->out_arg, "data.dataset=synthetic",
                          "model.type=softmax", "train.epochs=0.2", "backend.threads=0", NULL};
    setenv("OPENBLAS_NUM_THREADS", "1", 1);   /* OpenBLAS caps it at the cores */
    support_run_asgd(&f->r, f->dir, args);
    unsetenv("OPENBLAS_NUM_THREADS");
    assert_int_equal(f->r.status, 0);
    char dir[4096], path[4200];
    s_newest(f->out, dir, sizeof dir);
    snprintf(path, sizeof path, "%s/summary.json", dir);
    char *text = support_read_file(path);
    cJSON *j = cJSON_Parse(text);
    free(text);
    const char *strings[] = {"asgd_version", "git_commit", "host", "cpu", "device", "command",
                             "started", "dataset", "build", "compiler", "blas", "zmq", NULL};
    for (int i = 0; strings[i]; i++) {
        cJSON *v = cJSON_GetObjectItemCaseSensitive(j, strings[i]);
        if (!cJSON_IsString(v) || !v->valuestring[0]) {
            fail_msg("summary.json has no %s", strings[i]);
        }
    }
    const char *commit = cJSON_GetObjectItemCaseSensitive(j, "git_commit")->valuestring;
    assert_true(strlen(commit) == 40 || strcmp(commit, "unknown") == 0);
    assert_true(cJSON_IsBool(cJSON_GetObjectItemCaseSensitive(j, "git_dirty")));
    assert_true(cJSON_GetObjectItemCaseSensitive(j, "cores")->valuedouble >= 1);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(j, "device")->valuestring, "cpu");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(j, "dataset")->valuestring, "synthetic");
    assert_non_null(strstr(cJSON_GetObjectItemCaseSensitive(j, "blas")->valuestring, "OpenBLAS"));
    assert_non_null(strstr(cJSON_GetObjectItemCaseSensitive(j, "environment")->valuestring,
                           "OPENBLAS_NUM_THREADS=1"));
    assert_true(cJSON_GetObjectItemCaseSensitive(j, "blas_threads")->valuedouble == 1);
    assert_non_null(strstr(cJSON_GetObjectItemCaseSensitive(j, "command")->valuestring,
                           "train /dev/null"));
    const char *started = cJSON_GetObjectItemCaseSensitive(j, "started")->valuestring;
    assert_int_equal(strlen(started), 20);   /* 2026-11-23T12:34:56Z */
    assert_int_equal(started[10], 'T');
    const char *version[] = {"--version", NULL};
    support_run_asgd(&f->r, f->dir, version);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, commit));
    assert_non_null(strstr(f->r.out,
                           cJSON_GetObjectItemCaseSensitive(j, "asgd_version")->valuestring));
    cJSON_Delete(j);
}

/* summary.json is UTF-8 whatever bytes a label or the command line holds:
 * a Latin-1 label (caf\xe9) was written as it was, and Python's json.load
 * refused the file. Each such byte is U+FFFD; UTF-8 stays as it is. */
static void test_the_summary_is_utf8(void **state)
{
    support_fixture *f = *state;
    if (!support_python()) {
        skip();
    }
    const char *args[] = {"train", "/dev/null", f->out_arg, "data.dataset=synthetic",
                          "model.type=softmax", "train.epochs=0.1",
                          "experiment.label=caf\xe9\xff \xc3\xa9t\xc3\xa9", NULL};
    support_run_asgd(&f->r, f->dir, args);
    assert_int_equal(f->r.status, 0);
    char dir[4096], path[4200];
    s_newest(f->out, dir, sizeof dir);
    snprintf(path, sizeof path, "%s/summary.json", dir);
    const char *py[] = {"-c", "import json, sys; print(json.load(open(sys.argv[1], "
                        "encoding='utf-8'))['label'].encode('unicode_escape').decode())",
                        path, NULL};
    support_run(&f->r, f->dir, support_python(), py);
    if (f->r.status != 0 || !strstr(f->r.out, "caf\\ufffd\\ufffd \\xe9t\\xe9")) {
        fail_msg("python read summary.json: status %d, \"%s\" \"%s\"", f->r.status,
                 f->r.out, f->r.err);
    }
}

/* The summary's counters from two shards' ps-K.json, added as the README
 * says: pushes, bytes and the staleness histogram counted at every shard;
 * bytes_per_push one worker push, its parts at both shards together;
 * updates, samples and dropped shard 0's, whichever shard comes last;
 * lost_updates and nonfinite the most any shard counted (one update or
 * push seen by both); the training time from the first pull any shard
 * saw (0: none) to the last push. */
static void test_shards_add_up_to_the_summary(void **state)
{
    (void)state;
    shard_stats one = {
        .shard = 1, .version = 7, .samples = 640, .pushes = 10, .dropped = 3, .rejected = 2,
        .nonfinite = 1, .foreign = 1, .unread = 4, .duplicates = 5, .restarts = 1,
        .lost_updates = 9, .checkpoints = 2, .checkpoint_us = 250000, .staleness_sum = 30,
        .staleness_max = 8, .push_bytes = 4000, .push_messages = 10, .shared_pushes = 6,
        .injected_drops = 2, .injected_duplicates = 1, .first_pull_at = 0, .last_push_at = 112.5,
    };
    shard_stats zero = {
        .shard = 0, .version = 12, .samples = 768, .pushes = 12, .dropped = 1, .rejected = 1,
        .nonfinite = 2, .unauthenticated = 3, .duplicates = 1, .lost_updates = 4,
        .checkpoints = 1, .checkpoint_us = 500000, .staleness_sum = 18, .staleness_max = 5,
        .push_bytes = 6000, .push_messages = 12, .first_pull_at = 100, .last_push_at = 110,
    };
    one.histogram[0] = 4, one.histogram[3] = 6;
    zero.histogram[0] = 10, zero.histogram[63] = 2;
    run_summary s;
    summary_init(&s);
    summary_add_shard(&s, &zero);
    summary_add_shard(&s, &one);   /* last: its updates or first pull (none) do not count */
    summary_finish(&s, 320);
    assert_int_equal(s.pushes, 22);
    assert_int_equal(s.push_messages, 22);
    assert_int_equal(s.shared_pushes, 6);
    assert_true(s.push_bytes == 10000);
    assert_true(s.bytes_per_push == 400 + 500);
    assert_true(s.staleness_mean == 48.0 / 22);
    assert_int_equal(s.staleness_max, 8);
    assert_int_equal(s.staleness_histogram[0], 14);
    assert_int_equal(s.staleness_histogram[3], 6);
    assert_int_equal(s.staleness_histogram[63], 2);
    assert_int_equal(s.updates, 12);
    assert_int_equal(s.samples, 768);
    assert_int_equal(s.dropped, 1);
    assert_int_equal(s.rejected, 3);
    assert_int_equal(s.foreign, 1);
    assert_int_equal(s.unauthenticated, 3);
    assert_int_equal(s.unread, 4);
    assert_int_equal(s.duplicates, 6);
    assert_int_equal(s.shard_restarts, 1);
    assert_int_equal(s.lost_updates, 9);
    assert_int_equal(s.nonfinite, 2);
    assert_int_equal(s.injected_drops, 2);
    assert_int_equal(s.injected_duplicates, 1);
    assert_int_equal(s.checkpoints, 3);
    assert_true(fabs(s.checkpoint_s - 0.75) < 1e-12);
    assert_true(s.first_pull_at == 100);
    assert_true(s.last_push_at == 112.5);
    assert_true(s.train_time_s == 12.5);
    assert_true(s.samples_per_s == 768 / 12.5);
    assert_true(s.epochs == 768.0 / 320);
}

/* A resumed run's eval.csv loses the rows after shard 0's checkpoint
 * (version 20 at 1.0 s of training): from the first past either, to its
 * end, a partial row included; a row written at the checkpoint's time,
 * rounded up to the microsecond, stays. */
static void test_a_resume_cuts_the_evaluations_it_lost(void **state)
{
    support_fixture *f = *state;
    char path[4200];
    snprintf(path, sizeof path, "%s/eval.csv", f->dir);
    const char *kept = RUN_EVAL_HEADER "\n0.000000,0,0,0,2.3,0.1\n0.500000,0.5,10,640,1,0.6\n"
                       "1.000000,1,20,1280,0.8,0.7\n";
    char text[512];
    snprintf(text, sizeof text, "%s1.200000,1.2,24,1536,0.7,0.8\n0.900000,1.4,22,1792,0.6,0.9\n"
             "1.6", kept);
    support_write_file(path, text);
    error err = {0};
    assert_int_equal(summary_evals_cut(path, 20, 0.9999996, &err), 2);
    char *now = support_read_file(path);
    assert_string_equal(now, kept);
    free(now);
    assert_int_equal(summary_evals_cut(path, 20, 0.9999996, &err), 0);   /* nothing past */
    assert_int_equal(summary_evals_cut(path, 100, 0.7, &err), 1);        /* the time alone */
    now = support_read_file(path);
    assert_non_null(strstr(now, "0.500000,0.5,10,640,1,0.6\n"));
    assert_null(strstr(now, "1.000000"));
    free(now);
    snprintf(path, sizeof path, "%s/none.csv", f->dir);
    assert_int_equal(summary_evals_cut(path, 0, 0, &err), 0);
}

/* The cores a process may keep busy are those taskset leaves it, not the
 * host's: asgd calibrate wrote the host's 2 into a profile made under
 * taskset -c 0, and a sweep's -j took both. */
static void test_cores_are_those_the_process_may_use(void **state)
{
    cpu_set_t was, one;
    assert_int_equal(sched_getaffinity(0, sizeof was, &was), 0);
    int first = 0;
    while (!CPU_ISSET(first, &was)) {
        first++;
    }
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    assert_int_equal(sched_setaffinity(0, sizeof one, &one), 0);
    long cores = proc_cores();
    assert_int_equal(sched_setaffinity(0, sizeof was, &was), 0);
    assert_int_equal(cores, 1);
    long all = proc_cores();
    assert_true(all >= 1 && all <= CPU_COUNT(&was));
    /* a container's quota (cgroup v2's cpu.max): the tightest of its
     * cgroup's and those above; 128 CPUs' quota has 8 digits (read as 7,
     * it was dropped) */
    support_fixture *f = *state;
    char mount[400], path[600];
    snprintf(mount, sizeof mount, "%s/cgroup", f->dir);
    assert_int_equal(mkdir(mount, 0755), 0);
    snprintf(path, sizeof path, "%s/pod", mount);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(path, sizeof path, "%s/pod/box", mount);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(path, sizeof path, "%s/pod/cpu.max", mount);
    support_write_file(path, "12800000 100000\n");
    assert_int_equal(proc_quota_cores(mount, "/pod", true), 128);
    snprintf(path, sizeof path, "%s/pod/box/cpu.max", mount);
    support_write_file(path, "150000 100000\n");
    assert_int_equal(proc_quota_cores(mount, "/pod/box", true), 2);
    support_write_file(path, "max 100000\n");
    assert_int_equal(proc_quota_cores(mount, "/pod/box", true), 128);
    assert_int_equal(proc_quota_cores(mount, "/elsewhere", true), 0);   /* the root's: none */
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, support_fixture_setup, support_fixture_teardown)
    const struct CMUnitTest tests[] = {
        T(test_a_file_size_limit_fails_the_run),
        T(test_cores_are_those_the_process_may_use),
        T(test_eval_says_what_it_evaluated),
        T(test_eval_of_a_gpu_run_without_a_gpu),
        T(test_eval_of_data_that_moved),
        T(test_eval_normalises_as_the_run),
        T(test_a_cnn_on_images_not_square_is_told_their_shape),
        T(test_a_full_disk_fails_the_run),
        T(test_the_evaluators_failure_is_said),
        T(test_the_trained_model_is_kept),
        T(test_a_row_cut_short_is_dropped_before_appending),
        T(test_the_last_evaluation_seen),
        T(test_provenance),
        T(test_the_summary_is_utf8),
        cmocka_unit_test(test_shards_add_up_to_the_summary),
        T(test_a_resume_cuts_the_evaluations_it_lost),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
