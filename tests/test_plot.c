/* test_plot.c: `asgd plot` through a real gnuplot: fixture run folders
 * (a small simulated sweep) become non-empty PDF, PNG and SVG figures of
 * every kind; the .gp script left beside a figure redraws it without asgd;
 * a diverged run is marked; a missing gnuplot says how to install it.
 * Where gnuplot is not installed the figures cannot be checked: those
 * tests skip, saying so. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support.h"

static support_fixture *s_f;
static char s_runs[600];

/* The fixture: 2 rules x 2 worker counts x 2 seeds, simulated. */
static int s_setup(void **state)
{
    support_fixture_setup((void **)&s_f);
    char path[600];
    snprintf(path, sizeof path, "%s/base.ini", s_f->dir);
    support_write_file(path, "[data]\ndataset = synthetic\n[model]\ntype = softmax\n[train]\n"
                             "epochs = 2\n[experiment]\nmode = sim\n[eval]\nevery = 0.01\n");
    char text[1024];
    snprintf(text, sizeof text, "[sweep]\nbase = base.ini\nname = fixture\nseeds = 1,2\nout = %s\n"
             "[grid]\ntrain.algorithm = sync, hogwild\ncluster.workers = 1, 2\n", s_f->out);
    snprintf(path, sizeof path, "%s/grid.ini", s_f->dir);
    support_write_file(path, text);
    const char *args[] = {"sweep", path, NULL};
    support_run_asgd(&s_f->r, s_f->dir, args);
    snprintf(s_runs, sizeof s_runs, "%s/fixture", s_f->out);
    *state = s_f;
    return s_f->r.status;
}

static int s_teardown(void **state)
{
    (void)state;
    return support_fixture_teardown((void **)&s_f);
}

static long s_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static void s_expect_figure(const char *path)
{
    char *text = support_read_file(path);
    if (!text || s_size(path) < 1000) {
        fail_msg("%s is missing or too small", path);
    }
    const char *ext = strrchr(path, '.');
    if (strcmp(ext, ".png") == 0) {
        assert_memory_equal(text, "\x89PNG", 4);
    } else if (strcmp(ext, ".pdf") == 0) {
        assert_memory_equal(text, "%PDF", 4);
    } else {
        assert_non_null(strstr(text, "<svg"));
    }
    free(text);
}

/* Figures need a real gnuplot. */
static void s_need_gnuplot(void)
{
    if (!support_have("gnuplot")) {
        fprintf(stderr, "gnuplot is not installed: no figure can be drawn to check\n");
        skip();
    }
}

static void test_every_kind_in_every_format(void **state)
{
    support_fixture *f = *state;
    s_need_gnuplot();
    const char *kinds[] = {"convergence", "scaling", "staleness", "time-to-accuracy",
                           "throughput"};
    const char *exts[] = {"pdf", "png", "svg"};
    for (int k = 0; k < 5; k++) {
        for (int e = 0; e < 3; e++) {
            char out[700];
            snprintf(out, sizeof out, "%s/%s.%s", f->dir, kinds[k], exts[e]);
            const char *args[] = {"plot", s_runs, "-o", out, "--kind", kinds[k], "--target",
                                  "0.3", "--title", "a test", NULL};
            support_run_asgd(&f->r, f->dir, args);
            if (f->r.status != 0) {
                fail_msg("%s.%s: %s", kinds[k], exts[e], f->r.err);
            }
            assert_non_null(strstr(f->r.out, "8 runs, 2 groups"));
            s_expect_figure(out);
        }
    }
    /* options: another grouping, another axis, log scales */
    char out[700];
    snprintf(out, sizeof out, "%s/by-workers.png", f->dir);
    const char *args[] = {"plot", s_runs, "-o", out, "--group", "workers", "--x", "updates",
                          "--y", "loss", "--logy", NULL};
    support_run_asgd(&f->r, f->dir, args);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "8 runs, 2 groups"));
    s_expect_figure(out);
}

static void test_script_redraws_the_figure(void **state)
{
    support_fixture *f = *state;
    s_need_gnuplot();
    char out[700], gp[700], dat[700];
    snprintf(out, sizeof out, "%s/redraw.png", f->dir);
    const char *args[] = {"plot", s_runs, "-o", out, NULL};
    support_run_asgd(&f->r, f->dir, args);
    assert_int_equal(f->r.status, 0);
    long size = s_size(out);
    snprintf(gp, sizeof gp, "%s/redraw.gp", f->dir);
    snprintf(dat, sizeof dat, "%s/redraw-1.dat", f->dir);
    assert_true(s_size(gp) > 100);
    assert_true(s_size(dat) > 100);
    remove(out);
    pid_t pid = fork();
    if (pid == 0) {
        if (chdir(f->dir) != 0) {
            _exit(126);
        }
        execlp("gnuplot", "gnuplot", "redraw.gp", (char *)NULL);
        _exit(127);
    }
    int status;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_int_equal(s_size(out), size);    /* the same figure, drawn without asgd */
}

/* A run that diverged is a result: plotted with the rest, and its group's
 * legend says so. */
static void test_diverged_runs_are_marked(void **state)
{
    support_fixture *f = *state;
    s_need_gnuplot();
    char out[700];
    snprintf(out, sizeof out, "%s/diverging", f->out);
    const char *lrs[2] = {"train.lr=0.05", "train.lr=80"};
    const char *labels[2] = {"experiment.label=calm", "experiment.label=wild"};
    for (int i = 0; i < 2; i++) {
        char out_arg[800];
        snprintf(out_arg, sizeof out_arg, "experiment.out=%s", out);
        const char *args[] = {"train", "/dev/null", out_arg, "data.dataset=synthetic",
                              "model.type=mlp", "model.hidden=16", "train.epochs=5",
                              "eval.every=0.01", lrs[i], labels[i], NULL};
        support_run_asgd(&f->r, f->dir, args);
        assert_int_equal(f->r.status, 0);
    }
    char fig[800], gp[800];
    snprintf(fig, sizeof fig, "%s/div.png", f->dir);
    const char *args[] = {"plot", out, "-o", fig, NULL};
    support_run_asgd(&f->r, f->dir, args);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "2 runs, 2 groups"));
    snprintf(gp, sizeof gp, "%s/div.gp", f->dir);
    char *script = support_read_file(gp);
    assert_non_null(strstr(script, "\"wild (diverged)\""));
    assert_null(strstr(script, "calm (diverged)"));
    free(script);
}

static void test_errors(void **state)
{
    support_fixture *f = *state;
    char out[700];
    snprintf(out, sizeof out, "%s/x.png", f->dir);
    const char *old = getenv("PATH");
    char saved[4096];
    snprintf(saved, sizeof saved, "%s", old ? old : "");
    setenv("PATH", "/nonexistent", 1);
    const char *args[] = {"plot", s_runs, "-o", out, NULL};
    support_run_asgd(&f->r, f->dir, args);
    setenv("PATH", saved, 1);
    assert_int_equal(f->r.status, 1);
    s_need_gnuplot();   /* the rest draws */
    assert_non_null(strstr(f->r.err, "apt-get install gnuplot-nox"));
    const char *bad_ext[] = {"plot", s_runs, "-o", "fig.jpg", NULL};
    support_run_asgd(&f->r, f->dir, bad_ext);
    assert_int_equal(f->r.status, 2);
    const char *bad_kind[] = {"plot", s_runs, "-o", out, "--kind", "pie", NULL};
    support_run_asgd(&f->r, f->dir, bad_kind);
    assert_int_equal(f->r.status, 2);
    const char *empty[] = {"plot", f->dir, "-o", out, "--group", "x", NULL};
    support_run_asgd(&f->r, "/", empty);
    assert_int_equal(f->r.status, 0);      /* the fixture's runs are under f->dir too */
    const char *none[] = {"plot", "/nonexistent", "-o", out, NULL};
    support_run_asgd(&f->r, f->dir, none);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "no complete run folders"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_kind_in_every_format),
        cmocka_unit_test(test_script_redraws_the_figure),
        cmocka_unit_test(test_diverged_runs_are_marked),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, s_setup, s_teardown);
}
