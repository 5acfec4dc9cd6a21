/* test_run.c: the run folder as the researcher finds it: what the summary
 * records of where and how a run was made, and what happens when its files
 * cannot be written (a file-size limit, a full tmpfs): the run fails,
 * names the file that lost data, and is never reported complete. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include <cJSON.h>

#include "support.h"

/* The three ways a run runs: the baseline, simulated, real processes. */
static const char *const s_modes[3][2] = {
    {"train.algorithm=sequential", "experiment.mode=real"},
    {"train.algorithm=hogwild", "experiment.mode=sim"},
    {"train.algorithm=hogwild", "experiment.mode=real"},
};

/* A run of mode i whose steps.csv outgrows a small file system: 1,563
 * steps of about 40 bytes each. */
static void s_long_run(support_fixture *f, int i, const char *out_arg, long file_limit)
{
    const char *args[] = {"train", "/dev/null", out_arg, s_modes[i][0], s_modes[i][1],
                          "data.dataset=synthetic", "model.type=softmax", "train.epochs=10",
                          "eval.every=0.05", "cluster.workers=2", NULL};
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

/* Every file of a run limited to 8 KB: steps.csv cannot hold the run. The
 * run fails (exit 1) naming the file, and its summary never says complete. */
static void test_a_file_size_limit_fails_the_run(void **state)
{
    support_fixture *f = *state;
    for (int i = 0; i < 3; i++) {
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
        support_rmtree(f->out);
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
    for (int i = 0; i < 3; i++) {
        s_long_run(f, i, out_arg, 0);
        int status = f->r.status;
        char dir[4096];
        s_newest(disk, dir, sizeof dir);
        int complete = s_complete(dir);
        char sub[4200];
        snprintf(sub, sizeof sub, "%s/null", disk);
        support_rmtree(sub);
        if (status != 1 || complete) {
            umount(disk);
            fail_msg("%s %s on a full disk: exit %d, complete %d: %s", s_modes[i][0],
                     s_modes[i][1], status, complete, f->r.err);
        }
    }
    assert_int_equal(umount(disk), 0);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, support_fixture_setup, support_fixture_teardown)
    const struct CMUnitTest tests[] = {
        T(test_a_file_size_limit_fails_the_run),
        T(test_a_full_disk_fails_the_run),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
