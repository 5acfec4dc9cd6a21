/* test_plot.c: `asgd plot` through a real gnuplot: fixture run folders
 * (a small simulated sweep) become non-empty PDF, PNG and SVG figures of
 * every kind; the .gp script left beside a figure redraws it without asgd;
 * a diverged run is marked, in legends and on bars; a run reached twice
 * counts once; a group of runs that differ in more than their seeds is
 * named; incomplete runs left out are counted and named; a missing
 * gnuplot says how to install it.
 * Where gnuplot is not installed the figures cannot be checked: those
 * tests skip, saying so. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ctype.h>
#include <glob.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cJSON.h>

#include "plots/runs.h"
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
    /* a mistyped --group, which no run has, is refused with the nearest:
     * it drew one group "(no cluster.worker)" of every run, exit 0; a key
     * asgd reads that some runs leave out is a group of its own */
    const char *typos[][2] = {{"cluster.worker", "did you mean cluster.workers?"},
                              {"algoritm", "did you mean algorithm?"}};
    for (int i = 0; i < 2; i++) {
        const char *typo[] = {"plot", s_runs, "-o", out, "--group", typos[i][0], NULL};
        support_run_asgd(&f->r, f->dir, typo);
        if (f->r.status != 2 || !strstr(f->r.err, "no run has it") ||
            !strstr(f->r.err, typos[i][1])) {
            fail_msg("--group %s: %d, \"%s\"", typos[i][0], f->r.status, f->r.err);
        }
    }
    const char *unread[] = {"plot", s_runs, "-o", out, "--group", "sim.latency", NULL};
    support_run_asgd(&f->r, f->dir, unread);
    assert_int_equal(f->r.status, 0);
    /* a summary field every run has, true or false, is a grouping */
    const char *flag[] = {"plot", s_runs, "-o", out, "--group", "diverged", NULL};
    support_run_asgd(&f->r, f->dir, flag);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "8 runs, 1 group;"));
}

/* Every data row of .dat files PREFIX-1.dat, PREFIX-2.dat...: whether
 * any has its column col (0 the first) at or below 0. */
static bool s_any_at_or_below_zero(const char *prefix, int groups, int col)
{
    bool any = false;
    for (int g = 1; g <= groups; g++) {
        char path[800], line[512];
        snprintf(path, sizeof path, "%s-%d.dat", prefix, g);
        FILE *in = fopen(path, "r");
        assert_non_null(in);
        while (fgets(line, sizeof line, in)) {
            char *p = line;
            for (int c = 0; c < col && p; c++) {
                p = strchr(p + 1, ' ');
            }
            any = any || (line[0] != '#' && p && strtod(p, NULL) <= 0);
        }
        fclose(in);
    }
    return any;
}

static char *s_plot_and_read(support_fixture *f, const char *const *args, const char *fig,
                             const char *beside);
static void s_two_sim_runs(support_fixture *f, const char *out, const char *const *common,
                           const char *first, const char *second);
static char *s_report_page(support_fixture *f, const char *const *dirs, const char *out);

/* A log axis has no place for 0: the evaluation at time 0 is left out of
 * a --logx convergence figure's data (its band was drawn from the axis'
 * edge, over values no run had), and sync's staleness of 0 out of a
 * --logy scaling one, each said on stderr (the group stayed in the legend
 * with no line, without a word). */
static void test_log_axes_leave_out_zero(void **state)
{
    support_fixture *f = *state;
    s_need_gnuplot();
    char out[700];
    snprintf(out, sizeof out, "%s/logx.png", f->dir);
    const char *logx[] = {"plot", s_runs, "-o", out, "--logx", NULL};
    support_run_asgd(&f->r, f->dir, logx);
    assert_int_equal(f->r.status, 0);
    assert_false(s_any_at_or_below_zero(out, 2, 0));
    assert_non_null(strstr(f->r.err, "sync: 1 of its"));
    assert_non_null(strstr(f->r.err, "points are at or below 0 on a log axis (--logx) and left "
                                     "out\n"));
    snprintf(out, sizeof out, "%s/logy.png", f->dir);
    const char *logy[] = {"plot", s_runs, "-o", out, "--kind", "scaling", "--y",
                          "staleness_mean", "--logy", NULL};
    support_run_asgd(&f->r, f->dir, logy);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.err, "sync: 2 of its 2 points are at or below 0 on a log axis "
                                     "(--logy) and left out: it has no line"));
    /* hogwild's 1-worker point has no staleness either; its 2-worker one stays */
    assert_non_null(strstr(f->r.err, "hogwild: 1 of its 2 points"));
    assert_false(s_any_at_or_below_zero(out, 2, 1));
    /* a scaling line from an x of 0 (a straggler fraction) has no ideal
     * line: NaN, which gnuplot skips, where its .dat read "inf" and "-nan" */
    char zero[700], fig[800];
    snprintf(zero, sizeof zero, "%s/from-zero", f->out);
    const char *two_workers[] = {"model.type=softmax", "train.algorithm=hogwild",
                                 "train.epochs=1", "cluster.workers=2", NULL};
    s_two_sim_runs(f, zero, two_workers, "sim.straggler_fraction=0",
                   "sim.straggler_fraction=0.5");
    snprintf(fig, sizeof fig, "%s/from-zero.png", f->dir);
    const char *by_fraction[] = {"plot", zero, "-o", fig, "--kind", "scaling", "--x",
                                 "sim.straggler_fraction", "--y", "time_s", NULL};
    char *dat = s_plot_and_read(f, by_fraction, fig, "-1.dat");
    assert_null(strstr(dat, "inf"));
    assert_null(strstr(dat, "nan"));
    assert_non_null(strstr(dat, "NaN"));
    free(dat);
    /* without a log axis, the zeros are points like any other */
    const char *linear[] = {"plot", s_runs, "-o", out, "--kind", "scaling", "--y",
                            "staleness_mean", NULL};
    support_run_asgd(&f->r, f->dir, linear);
    assert_int_equal(f->r.status, 0);
    assert_null(strstr(f->r.err, "log axis"));
    assert_true(s_any_at_or_below_zero(out, 2, 1));
}

/* The folder of the fixture's i-th run (in glob's order) into out. */
static void s_fixture_run(int i, char *out, size_t n)
{
    char pattern[800];
    snprintf(pattern, sizeof pattern, "%s/*/summary.json", s_runs);
    glob_t found;
    assert_int_equal(glob(pattern, 0, NULL, &found), 0);
    assert_true(found.gl_pathc > (size_t)i);
    snprintf(out, n, "%.*s", (int)(strrchr(found.gl_pathv[i], '/') - found.gl_pathv[i]),
             found.gl_pathv[i]);
    globfree(&found);
}

/* Runs deeper than the search goes are said, not left out without a
 * word (a run 5 levels down was, at a limit of 4). */
static void test_runs_too_deep_are_said(void **state)
{
    support_fixture *f = *state;
    s_need_gnuplot();
    char links[2][800], run[800], mk[900];
    snprintf(links[0], sizeof links[0], "%s/deep/run", f->dir);   /* one run at the top */
    snprintf(links[1], sizeof links[1], "%s/deep/1/2/3/4/5/6/7/8/9/run", f->dir);   /* and one
                                                                                   * 10 down */
    snprintf(mk, sizeof mk, "mkdir -p %s/deep/1/2/3/4/5/6/7/8/9", f->dir);
    assert_int_equal(system(mk), 0);
    for (int i = 0; i < 2; i++) {
        s_fixture_run(i, run, sizeof run);
        assert_int_equal(symlink(run, links[i]), 0);
    }
    char top[800], out[900];
    snprintf(top, sizeof top, "%s/deep", f->dir);
    snprintf(out, sizeof out, "%s/deep.png", f->dir);
    const char *args[] = {"plot", top, "-o", out, NULL};
    support_run_asgd(&f->r, f->dir, args);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "(1 run, 1 group;"));
    assert_non_null(strstr(f->r.err, "1 folder 8 levels down holds folders not searched"));
}

/* A seed that diverged at once ends its group's mean line at time 0 (as
 * README says: where the shortest run ends); stderr says where and why,
 * and how far the other runs go. */
static void test_a_line_cut_by_a_diverged_run_is_said(void **state)
{
    support_fixture *f = *state;
    s_need_gnuplot();
    char runs[700], fig[800];
    snprintf(runs, sizeof runs, "%s/cut", f->out);
    const char *mlp[] = {"model.type=mlp", "train.algorithm=hogwild", "train.epochs=2",
                         "eval.every=0.05", NULL};
    s_two_sim_runs(f, runs, mlp, "train.lr=0.05", "train.lr=1e6");
    snprintf(fig, sizeof fig, "%s/cut.png", f->dir);
    const char *args[] = {"plot", runs, "-o", fig, NULL};
    support_run_asgd(&f->r, f->dir, args);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.err, "hogwild: its line ends at time 0, where "));
    assert_non_null(strstr(f->r.err, " diverged; its other runs go on to "));
    /* by epoch, its line ends at epoch 0 */
    const char *by_epoch[] = {"plot", runs, "-o", fig, "--x", "epoch", NULL};
    support_run_asgd(&f->r, f->dir, by_epoch);
    assert_non_null(strstr(f->r.err, "its line ends at epoch 0, where "));
}

/* A run whose updates went back (a shard restored from its checkpoint)
 * keeps a curve that is a function of x: the rows below the last one
 * drawn are left out, and stderr says how many. */
static void test_updates_that_went_back_are_said(void **state)
{
    support_fixture *f = *state;
    s_need_gnuplot();
    char cmd[2000], run[800], first[800];
    s_fixture_run(0, first, sizeof first);
    snprintf(run, sizeof run, "%s/restored/run", f->dir);
    snprintf(cmd, sizeof cmd, "mkdir -p %s/restored && cp -r %s %s", f->dir, first, run);
    assert_int_equal(system(cmd), 0);
    char path[900];
    snprintf(path, sizeof path, "%s/eval.csv", run);
    FILE *out = fopen(path, "a");   /* back to 1 and 2 updates, far later */
    assert_non_null(out);
    fprintf(out, "100.0,0.5,1,64,2.0,0.5\n101.0,0.5,2,128,1.9,0.55\n");
    fclose(out);
    char fig[900], top[800];
    snprintf(top, sizeof top, "%s/restored", f->dir);
    snprintf(fig, sizeof fig, "%s/restored.png", f->dir);
    const char *by_updates[] = {"plot", top, "-o", fig, "--x", "updates", NULL};
    support_run_asgd(&f->r, f->dir, by_updates);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.err, "/restored/run: 2 evaluations after its updates went back "
                                     "left out"));
    /* by time they go forward, and are drawn */
    const char *by_time[] = {"plot", top, "-o", fig, NULL};
    support_run_asgd(&f->r, f->dir, by_time);
    assert_int_equal(f->r.status, 0);
    assert_null(strstr(f->r.err, "went back"));
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
    snprintf(gp, sizeof gp, "%s/redraw.png.gp", f->dir);
    snprintf(dat, sizeof dat, "%s/redraw.png-1.dat", f->dir);
    assert_true(s_size(gp) > 100);
    assert_true(s_size(dat) > 100);
    remove(out);
    pid_t pid = fork();
    if (pid == 0) {
        if (chdir(f->dir) != 0) {
            _exit(126);
        }
        execlp("gnuplot", "gnuplot", "redraw.png.gp", (char *)NULL);
        _exit(127);
    }
    int status;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_int_equal(s_size(out), size);    /* the same figure, drawn without asgd */
}

/* Two runs in out (f->out/diverging), made once: "calm" converges, "wild"
 * (learning rate 80) diverges. */
static void s_diverging(support_fixture *f, char *out, size_t n)
{
    snprintf(out, n, "%s/diverging", f->out);
    struct stat st;
    if (stat(out, &st) == 0) {
        return;
    }
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
}

/* Runs `asgd plot` with args (fig after -o), which must succeed, and
 * returns the file fig + beside (its script ".gp", its data "-1.dat"). */
static char *s_plot_and_read(support_fixture *f, const char *const *args, const char *fig,
                             const char *beside)
{
    support_run_asgd(&f->r, f->dir, args);
    assert_int_equal(f->r.status, 0);
    char path[900];
    snprintf(path, sizeof path, "%s%s", fig, beside);
    char *text = support_read_file(path);
    assert_non_null(text);
    return text;
}

/* A run that diverged is a result: plotted with the rest, and its group's
 * legend says so. */
static void test_diverged_runs_are_marked(void **state)
{
    support_fixture *f = *state;
    s_need_gnuplot();
    char out[700];
    s_diverging(f, out, sizeof out);
    char fig[800];
    snprintf(fig, sizeof fig, "%s/div.png", f->dir);
    const char *args[] = {"plot", out, "-o", fig, NULL};
    char *script = s_plot_and_read(f, args, fig, ".gp");
    assert_non_null(strstr(f->r.out, "2 runs, 2 groups"));
    assert_non_null(strstr(script, "'wild (diverged)'"));
    assert_null(strstr(script, "calm (diverged)"));
    free(script);
}

/* A convergence curve of one run is that run's own evaluations, every one
 * of them: it was a resampling on 61 even points, which drew a fall within
 * the first sixtieth of the run as a straight line to the next point. */
static void test_a_curve_is_its_runs_own_points(void **state)
{
    support_fixture *f = *state;
    s_need_gnuplot();
    char out[700], out_arg[800];
    snprintf(out, sizeof out, "%s/points", f->out);
    snprintf(out_arg, sizeof out_arg, "experiment.out=%s", out);
    const char *train[] = {"train", "/dev/null", out_arg, "data.dataset=synthetic",
                           "model.type=mlp", "model.hidden=16", "train.epochs=40",
                           "eval.every=0.001", NULL};
    support_run_asgd(&f->r, f->dir, train);
    assert_int_equal(f->r.status, 0);
    char run[4096], path[4200], fig[800];
    size_t len = strcspn(f->r.out, "\n");
    memcpy(run, f->r.out, len);
    run[len] = '\0';
    snprintf(fig, sizeof fig, "%s/points.png", f->dir);
    const char *plot[] = {"plot", out, "-o", fig, NULL};
    support_run_asgd(&f->r, f->dir, plot);
    assert_int_equal(f->r.status, 0);
    snprintf(path, sizeof path, "%s/eval.csv", run);
    char *eval = support_read_file(path), *save;
    snprintf(path, sizeof path, "%s/points.png-1.dat", f->dir);
    char *dat = support_read_file(path);
    assert_non_null(eval);
    assert_non_null(dat);
    int rows = 0;
    for (char *line = strtok_r(eval, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        double t, epoch, updates, samples, loss, acc;
        if (sscanf(line, "%lf,%lf,%lf,%lf,%lf,%lf", &t, &epoch, &updates, &samples, &loss,
                   &acc) != 6) {
            continue;
        }
        char want[128];
        snprintf(want, sizeof want, "\n%.9g %.9g ", t, acc);
        if (!strstr(dat, want)) {
            fail_msg("evaluation at %g s (accuracy %g) is not a point of the curve", t, acc);
        }
        rows++;
    }
    assert_true(rows >= 3);   /* any between the first and the last were off the grid */
    free(eval);
    free(dat);
}

/* A least-squares run has a test loss and no accuracy: its convergence
 * figure is of the loss, and asking for accuracy says so rather than
 * drawing empty axes (it wrote "nan inf -inf" rows); its report shows
 * the final loss. */
static void test_a_regression_run_plots_its_loss(void **state)
{
    support_fixture *f = *state;
    s_need_gnuplot();
    char out[700], out_arg[800];
    snprintf(out, sizeof out, "%s/regression", f->out);
    snprintf(out_arg, sizeof out_arg, "experiment.out=%s", out);
    const char *train[] = {"train", "/dev/null", out_arg, "data.dataset=regression",
                           "data.dim=20", "data.train_size=2000", "data.test_size=500",
                           "data.normalize=none", "model.type=linear", "train.epochs=2",
                           "train.lr=0.01", "eval.every=0.002", "experiment.mode=sim",
                           "train.algorithm=hogwild", "cluster.workers=2", NULL};
    support_run_asgd(&f->r, f->dir, train);
    assert_int_equal(f->r.status, 0);
    char fig[800], path[800];
    snprintf(fig, sizeof fig, "%s/regression.png", f->dir);
    const char *acc[] = {"plot", out, "-o", fig, NULL};
    support_run_asgd(&f->r, f->dir, acc);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "--y loss"));
    const char *loss[] = {"plot", out, "-o", fig, "--y", "loss", NULL};
    support_run_asgd(&f->r, f->dir, loss);
    assert_int_equal(f->r.status, 0);
    s_expect_figure(fig);
    snprintf(path, sizeof path, "%s/regression.png-1.dat", f->dir);
    char *dat = support_read_file(path), *save;
    assert_non_null(dat);
    int rows = 0;
    for (char *line = strtok_r(dat, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        double x, mean, lo, hi;
        if (line[0] != '#') {
            assert_int_equal(sscanf(line, "%lf %lf %lf %lf", &x, &mean, &lo, &hi), 4);
            assert_true(isfinite(mean) && lo <= mean && mean <= hi);
            rows++;
        }
    }
    assert_true(rows >= 3);
    free(dat);
    snprintf(path, sizeof path, "%s/report", f->dir);
    const char *report[] = {"report", out, "-o", path, NULL};
    support_run_asgd(&f->r, f->dir, report);
    assert_int_equal(f->r.status, 0);
    snprintf(path, sizeof path, "%s/report/report.md", f->dir);
    char *md = support_read_file(path);
    assert_non_null(strstr(md, "| final test loss |"));
    free(md);
}

/* A curve is a function of its x: rows of an eval.csv whose x goes back
 * (a run resumed on its own clock) are not drawn as a line doubling back. */
static void test_a_curve_goes_forward(void **state)
{
    support_fixture *f = *state;
    s_need_gnuplot();
    char out[700], out_arg[800];
    snprintf(out, sizeof out, "%s/backward", f->out);
    snprintf(out_arg, sizeof out_arg, "experiment.out=%s", out);
    const char *train[] = {"train", "/dev/null", out_arg, "data.dataset=synthetic",
                           "model.type=softmax", "train.epochs=2", "eval.every=0.1", NULL};
    support_run_asgd(&f->r, f->dir, train);
    assert_int_equal(f->r.status, 0);
    char run[4096], path[4200], fig[800];
    size_t len = strcspn(f->r.out, "\n");
    memcpy(run, f->r.out, len);
    run[len] = '\0';
    snprintf(path, sizeof path, "%s/eval.csv", run);
    FILE *csv = fopen(path, "a");
    assert_non_null(csv);
    fprintf(csv, "0.000001,0.5,1,64,9.5,0.01\n");   /* back to the start, a wild value */
    fclose(csv);
    snprintf(fig, sizeof fig, "%s/backward.png", f->dir);
    const char *plot[] = {"plot", out, "-o", fig, NULL};
    support_run_asgd(&f->r, f->dir, plot);
    assert_int_equal(f->r.status, 0);
    snprintf(path, sizeof path, "%s/backward.png-1.dat", f->dir);
    char *dat = support_read_file(path), *save;
    assert_non_null(dat);
    double last = -INFINITY;
    for (char *line = strtok_r(dat, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        double x, mean;
        if (line[0] != '#' && sscanf(line, "%lf %lf", &x, &mean) == 2) {
            assert_true(x > last);
            assert_true(mean != 0.01);
            last = x;
        }
    }
    free(dat);
}

/* `asgd plot` of folder into fig with args, which must succeed. */
static void s_plot_hand(support_fixture *f, const char *folder, const char *fig,
                        const char *const *extra)
{
    const char *args[24] = {"plot", folder, "-o", fig};
    int n = 4;
    for (int i = 0; extra && extra[i]; i++) {
        args[n++] = extra[i];
    }
    args[n] = NULL;
    support_run_asgd(&f->r, f->dir, args);
    if (f->r.status != 0) {
        fail_msg("%s: %s", fig, f->r.err);
    }
}

/* asgd plot's .gp for the fixture's runs with extra arguments (out is the
 * figure in f->dir); returns the script's text (caller frees). */
static char *s_script(support_fixture *f, const char *name, const char *const *extra)
{
    char out[700], gp[720];
    snprintf(out, sizeof out, "%s/%s", f->dir, name);
    s_plot_hand(f, s_runs, out, extra);
    snprintf(gp, sizeof gp, "%s.gp", out);
    char *text = support_read_file(gp);
    assert_non_null(text);
    return text;
}

/* fig.pdf and fig.svg keep a script and data each: the second once
 * overwrote the first's. */
static void test_each_output_keeps_its_own_script(void **state)
{
    support_fixture *f = *state;
    s_need_gnuplot();
    char *pdf = s_script(f, "fig.pdf", NULL);
    char *svg = s_script(f, "fig.svg", NULL);
    assert_non_null(strstr(pdf, "figure_file = 'fig.pdf'"));
    assert_non_null(strstr(svg, "figure_file = 'fig.svg'"));
    assert_non_null(strstr(pdf, "stem = 'fig.pdf'"));
    char dat[720];
    snprintf(dat, sizeof dat, "%s/fig.pdf-1.dat", f->dir);
    assert_true(s_size(dat) > 0);
    snprintf(dat, sizeof dat, "%s/fig.svg-1.dat", f->dir);
    assert_true(s_size(dat) > 0);
    free(pdf);
    free(svg);
    /* both redrawn in one gnuplot session, each into its own file (a name
     * set only where none was drew the second into the first's file) */
    char fig[720];
    const char *names[] = {"fig.pdf", "fig.svg"};
    for (int i = 0; i < 2; i++) {
        snprintf(fig, sizeof fig, "%s/%s", f->dir, names[i]);
        assert_int_equal(unlink(fig), 0);
    }
    const char *both[] = {"fig.pdf.gp", "fig.svg.gp", NULL};
    support_run(&f->r, f->dir, "gnuplot", both);
    assert_int_equal(f->r.status, 0);
    for (int i = 0; i < 2; i++) {
        snprintf(fig, sizeof fig, "%s/%s", f->dir, names[i]);
        s_expect_figure(fig);
    }
}

/* Axis labels and legends in words, titles that state the setting and the
 * target, groups that miss the target listed as not reached, bars best
 * first, a tick at every worker count. */
static void test_labels_titles_and_bars(void **state)
{
    support_fixture *f = *state;
    s_need_gnuplot();
    const char *const scaling[] = {"--kind", "scaling", "--y", "final_test_acc", "--group",
                                   "cluster.workers", "--x", "train.lr", "--logx", NULL};
    char *gp = s_script(f, "scaling.png", scaling);
    assert_non_null(strstr(gp, "ylabel = 'final test accuracy'"));
    assert_non_null(strstr(gp, "'workers = 1', 'workers = 2'"));
    free(gp);
    /* two fields, two labels: time_s and train_time_s (samples/s's span:
     * a distributed run's shards' first pull to last push) both read
     * "training time (s)" */
    const char *const spans[] = {"--kind", "scaling", "--y", "train_time_s", NULL};
    gp = s_script(f, "spans.png", spans);
    assert_non_null(strstr(gp, "ylabel = 'training time for samples/s (s)'"));
    free(gp);
    const char *const by_workers[] = {"--kind", "scaling", "--group", "train.algorithm",
                                      "--logx", NULL};
    gp = s_script(f, "speedup.png", by_workers);
    assert_non_null(strstr(gp, "set xtics (\"1\" 1, \"2\" 2)"));
    assert_non_null(strstr(gp, "speedup_label = 'speed-up over 1 worker'"));
    assert_non_null(strstr(gp, "xlabel = 'workers'"));
    assert_non_null(strstr(gp, "ylabel = 'samples/s'"));
    /* each point is the mean of its 2 seeds (once said 4: the group's runs) */
    assert_non_null(strstr(gp, "figure_title = 'Samples/s against workers:'.\"\\n\".'softmax on "
                               "synthetic, mean of 2 runs, simulated'"));
    free(gp);
    const char *const missed[] = {"--kind", "time-to-accuracy", "--target", "0.999", NULL};
    gp = s_script(f, "tta.png", missed);
    /* no run reaches it: no bar is a mean of any (once "mean of 4 runs") */
    assert_non_null(strstr(gp, "figure_title = 'Time to test accuracy 0.999:'.\"\\n\".'softmax on "
                               "synthetic, simulated'"));
    assert_non_null(strstr(gp, "ylabel = 'time to test accuracy 0.999 (s)'"));
    free(gp);
    char path[720];
    snprintf(path, sizeof path, "%s/tta.png-1.dat", f->dir);
    char *dat = support_read_file(path);
    assert_non_null(strstr(dat, "\"sync\" 0 0 0 0\n"));   /* listed, not reached */
    assert_non_null(strstr(dat, "\"hogwild\" 0 0 0 0\n"));
    free(dat);
    const char *const throughput[] = {"--kind", "throughput", "--group", "cluster.workers",
                                      NULL};
    gp = s_script(f, "bars.png", throughput);
    free(gp);
    snprintf(path, sizeof path, "%s/bars.png-1.dat", f->dir);
    dat = support_read_file(path);
    double before = INFINITY;
    int rows = 0;
    for (char *line = strchr(dat, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        char group[64];
        double mean;
        assert_int_equal(sscanf(line + 1, "%63s %lf", group, &mean), 2);
        assert_true(mean <= before);   /* the most samples/s first */
        before = mean;
        rows++;
    }
    assert_int_equal(rows, 2);
    free(dat);
}

/* A group of which only some runs reach the target is drawn over those,
 * and its label says how many of how many did. */
static void test_a_target_some_runs_miss(void **state)
{
    support_fixture *f = *state;
    s_need_gnuplot();
    char pattern[700];
    snprintf(pattern, sizeof pattern, "%s/*/summary.json", s_runs);
    glob_t found;
    assert_int_equal(glob(pattern, 0, NULL, &found), 0);
    double lo = INFINITY, hi = -INFINITY;   /* hogwild's runs' best accuracies */
    for (size_t i = 0; i < found.gl_pathc; i++) {
        cJSON *j = support_json_file(found.gl_pathv[i]);
        cJSON *label = cJSON_GetObjectItemCaseSensitive(j, "label");
        if (cJSON_IsString(label) && strcmp(label->valuestring, "hogwild") == 0) {
            double best = support_json_number(j, "best_test_acc");
            lo = fmin(lo, best);
            hi = fmax(hi, best);
        }
        cJSON_Delete(j);
    }
    globfree(&found);
    if (!(hi > lo)) {
        skip();   /* every hogwild run ended alike: no target splits them */
    }
    char target[32];
    snprintf(target, sizeof target, "%.6f", (lo + hi) / 2);
    const char *const tta[] = {"--kind", "time-to-accuracy", "--target", target, NULL};
    char *gp = s_script(f, "some.png", tta);
    char path[720];
    snprintf(path, sizeof path, "%s/some.png-1.dat", f->dir);
    char *dat = support_read_file(path);
    char *row = strstr(dat, "\"hogwild (");
    assert_non_null(row);
    int k, n;
    assert_int_equal(sscanf(row, "\"hogwild (%d/%d reached)\"", &k, &n), 2);
    assert_true(k > 0 && k < n && n == 4);
    /* the bar is the mean over the runs that reached it of each one's first
     * evaluation at the target (a mean over all 4 passed every test) */
    double bar, want = 0, at = strtod(target, NULL);
    int reached = 0;
    assert_int_equal(sscanf(strstr(row + 1, "\"") + 1, "%lf", &bar), 1);
    assert_int_equal(glob(pattern, 0, NULL, &found), 0);
    for (size_t i = 0; i < found.gl_pathc; i++) {
        cJSON *j = support_json_file(found.gl_pathv[i]);
        cJSON *label = cJSON_GetObjectItemCaseSensitive(j, "label");
        bool hogwild = cJSON_IsString(label) && strcmp(label->valuestring, "hogwild") == 0;
        cJSON_Delete(j);
        char evals[800];
        snprintf(evals, sizeof evals, "%.*s/eval.csv",
                 (int)(strrchr(found.gl_pathv[i], '/') - found.gl_pathv[i]), found.gl_pathv[i]);
        char *text = hogwild ? support_read_file(evals) : NULL;
        for (char *line = text ? strchr(text, '\n') : NULL; line && line[1];
             line = strchr(line + 1, '\n')) {
            double t, epoch, loss, acc;
            long updates, samples;
            if (sscanf(line + 1, "%lf,%lf,%ld,%ld,%lf,%lf", &t, &epoch, &updates, &samples,
                       &loss, &acc) == 6 && acc >= at) {
                want += t;
                reached++;
                break;
            }
        }
        free(text);
    }
    globfree(&found);
    assert_int_equal(reached, k);
    if (fabs(bar - want / reached) > 1e-8 * bar) {
        fail_msg("hogwild's bar %.9g s, its %d runs' first times at %g average %.9g s", bar, k,
                 at, want / reached);
    }
    /* the title counts the runs each bar averages, those that reached the
     * target (it once counted every run: "mean of 4 runs" over a bar of 2) */
    int fewest = k, most = k, sync = 0;
    row = strstr(dat, "\"sync");
    assert_non_null(row);
    if (sscanf(row, "\"sync (%d/4 reached)\"", &sync) != 1) {
        sync = strstr(row, "\"sync\" 0 0 0 0\n") == row ? 0 : 4;
    }
    if (sync > 0) {
        fewest = sync < k ? sync : k;
        most = sync > k ? sync : k;
    }
    char count[64];
    if (fewest < most) {
        snprintf(count, sizeof count, "mean of %d-%d runs", fewest, most);
    } else {
        snprintf(count, sizeof count, "mean of %d runs", most);
    }
    if (most > 1 ? !strstr(gp, count) : strstr(gp, "mean of") != NULL) {
        fail_msg("hogwild reached %d/4, sync %d/4; the title should say \"%s\":\n%s", k, sync,
                 count, gp);
    }
    free(gp);
    free(dat);
}

/* The staleness CDF's axis ends one past the staleness by which 99.9% of
 * any group's pushes came (it once ended one further where that was the
 * largest staleness, and at 1 for a group of none). */
static void test_staleness_axis_ends_past_the_999th_permille(void **state)
{
    support_fixture *f = *state;
    s_need_gnuplot();
    const char *const kind[] = {"--kind", "staleness", NULL};
    char *gp = s_script(f, "cdf.png", kind);
    int xmax = -1, p999[2] = {-1, -1};
    const char *at = strstr(gp, "\nxmax = ");
    assert_non_null(at);
    assert_int_equal(sscanf(at, "\nxmax = %d", &xmax), 1);
    free(gp);
    bool sync[2];
    for (int g = 0; g < 2; g++) {
        char path[720];
        snprintf(path, sizeof path, "%s/cdf.png-%d.dat", f->dir, g + 1);
        char *dat = support_read_file(path);
        assert_non_null(dat);
        sync[g] = strncmp(dat, "# sync", 6) == 0;
        for (char *line = strstr(dat, "# staleness cdf\n"); line; line = strchr(line + 1, '\n')) {
            int i;
            double cdf;
            if (sscanf(line + 1, "%d %lf", &i, &cdf) == 2 && cdf >= 0.999 && p999[g] < 0) {
                p999[g] = i;
            }
        }
        free(dat);
    }
    assert_true(sync[0] != sync[1]);
    assert_int_equal(p999[sync[0] ? 0 : 1], 0);   /* sync: every push of staleness 0 */
    int most = p999[0] > p999[1] ? p999[0] : p999[1];
    assert_true(most > 0);   /* hogwild's two workers */
    assert_int_equal(xmax, most + 1);
}

/* Up to 16 groups each have a colour of their own, and in black and white
 * a dash pattern and point type pair of their own. */
static void test_sixteen_groups_sixteen_styles(void **state)
{
    support_fixture *f = *state;
    s_need_gnuplot();
    char path[800], text[1024];
    snprintf(path, sizeof path, "%s/seeds.ini", f->dir);
    snprintf(text, sizeof text, "[sweep]\nbase = base.ini\nname = seeds\nout = %s\n"
             "seeds = 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16\n"
             "[grid]\ntrain.algorithm = hogwild\n", f->out);
    support_write_file(path, text);
    const char *sweep[] = {"sweep", path, NULL};
    support_run_asgd(&f->r, f->dir, sweep);
    assert_int_equal(f->r.status, 0);
    char runs[700], out[700];
    snprintf(runs, sizeof runs, "%s/seeds", f->out);
    snprintf(out, sizeof out, "%s/sixteen.png", f->dir);
    const char *args[] = {"plot", runs, "-o", out, "--group", "experiment.seed", NULL};
    support_run_asgd(&f->r, f->dir, args);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "16 runs, 16 groups"));
    snprintf(path, sizeof path, "%s.gp", out);
    char *gp = support_read_file(path);
    char colours[16][16], dashes[16][16];
    int n = 0;
    for (char *line = strstr(gp, "set style line "); line; line = strstr(line + 1,
                                                                         "set style line ")) {
        int g, dt, pt;
        char colour[16];
        assert_int_equal(sscanf(line, "set style line %d lc rgb \"%15[^\"]\" lw 2 dt %d pt %d",
                                &g, colour, &dt, &pt), 4);
        assert_int_equal(g, n + 1);
        assert_string_not_equal(colour, "#f0e442");   /* no yellow on white */
        snprintf(colours[n], sizeof colours[n], "%s", colour);
        snprintf(dashes[n], sizeof dashes[n], "%d/%d", dt, pt);
        n++;
    }
    assert_int_equal(n, 16);
    for (int a = 0; a < 16; a++) {
        for (int b = a + 1; b < 16; b++) {
            assert_string_not_equal(colours[a], colours[b]);
            assert_string_not_equal(dashes[a], dashes[b]);
        }
    }
    free(gp);
    /* more than 8 groups on a page: the key goes below, on a taller page
     * (beside the plot it took half the width, and the title ran off the
     * left edge); with both ends of --yrange, the bands are held inside it
     * (a band below it was drawn outside the frame) */
    const char *page[] = {"plot", runs, "-o", out, "--group", "experiment.seed", "--size", "page",
                          "--yrange", "0.25:0.75", NULL};
    support_run_asgd(&f->r, f->dir, page);
    assert_int_equal(f->r.status, 0);
    gp = support_read_file(path);
    assert_non_null(strstr(gp, "size 1400,840"));
    assert_non_null(strstr(gp, "yrange_lo = 0.25\nyrange_hi = 0.75\n"));
    free(gp);
}

/* fig is still the whole figure of size bytes an earlier plot drew, and
 * its script gp_path reads before (freed here). */
static void s_expect_kept(const char *fig, long size, const char *gp_path, char *before)
{
    assert_true(s_size(fig) == size);
    s_expect_figure(fig);
    char *after = support_read_file(gp_path);
    assert_string_equal(after, before);
    free(after);
    free(before);
}

/* No file matches pattern (a glob): nothing temporary was left. */
static void s_expect_nothing_left(const char *pattern)
{
    glob_t left;
    if (glob(pattern, 0, NULL, &left) == 0) {
        fail_msg("left behind: %s", left.gl_pathv[0]);
    }
}

/* asgd report: the page for a set of runs, in Markdown and HTML: every
 * run's summary, the keys that differ (the sweep's grid and seed), the
 * figures, the provenance; without gnuplot, the page says why it has no
 * figures. */
static void test_report(void **state)
{
    support_fixture *f = *state;
    char out[700], path[800];
    snprintf(out, sizeof out, "%s/report", f->dir);
    const char *args[] = {"report", s_runs, "-o", out, "--target", "0.3", NULL};
    support_run_asgd(&f->r, f->dir, args);
    assert_int_equal(f->r.status, 0);
    snprintf(path, sizeof path, "%s/report.md", out);
    char *md = support_read_file(path);
    assert_non_null(md);
    assert_non_null(strstr(md, "8 complete runs in 2 groups"));
    int rows = 0;
    for (char *at = strstr(md, "\n| train.algorithm="); at; at = strstr(at + 1,
                                                                      "\n| train.algorithm=")) {
        rows++;
    }
    assert_int_equal(rows, 3 * 8);   /* each run in the summaries, differences, provenance */
    char *differs = strstr(md, "## What differs");
    assert_non_null(differs);
    char *header = strstr(differs, "\n| run |");
    assert_non_null(header);
    char line[1024];
    snprintf(line, sizeof line, "%.*s", (int)strcspn(header + 1, "\n"), header + 1);
    assert_non_null(strstr(line, "experiment.seed"));
    assert_non_null(strstr(line, "train.algorithm"));
    assert_non_null(strstr(line, "cluster.workers"));
    assert_null(strstr(line, "train.epochs"));   /* the same in every run */
    assert_null(strstr(line, "experiment.run_id"));
    assert_non_null(strstr(md, "## Provenance"));
    snprintf(path, sizeof path, "%s/report.html", out);
    char *html = support_read_file(path);
    assert_non_null(strstr(html, "<table>"));
    assert_non_null(strstr(html, "<th>final test acc</th>"));
    if (support_have("gnuplot")) {
        assert_non_null(strstr(md, "![convergence](report-convergence.png)"));
        assert_non_null(strstr(html, "<img src=\"report-convergence.png\""));
        snprintf(path, sizeof path, "%s/report-convergence.png", out);
        s_expect_figure(path);
        /* a full disk: exit 1 (it was 0, with a figure cut short and the
         * page saying "not drawn"), the last report kept whole */
        support_run_asgd_limited(&f->r, f->dir, args, 12000);
        if (f->r.status != 1 || !strstr(f->r.err, "could not write it whole")) {
            fail_msg("report on a full disk: status %d, \"%s\"", f->r.status, f->r.err);
        }
        s_expect_figure(path);
        snprintf(path, sizeof path, "%s/report.md", out);
        char *kept = support_read_file(path);
        assert_string_equal(kept, md);
        free(kept);
        char pattern[820];
        snprintf(pattern, sizeof pattern, "%s/.*.tmp*", out);
        s_expect_nothing_left(pattern);
    }
    free(md);
    free(html);
    const char *old = getenv("PATH");   /* without gnuplot: a page, and why no figures */
    char saved[4096];
    snprintf(saved, sizeof saved, "%s", old ? old : "");
    setenv("PATH", "/nonexistent", 1);
    support_run_asgd(&f->r, f->dir, args);
    setenv("PATH", saved, 1);
    assert_int_equal(f->r.status, 0);
    snprintf(path, sizeof path, "%s/report.md", out);
    md = support_read_file(path);
    assert_non_null(strstr(md, "No figures: gnuplot is not installed"));
    free(md);
    const char *no_dirs[] = {"report", NULL};
    support_run_asgd(&f->r, f->dir, no_dirs);
    assert_int_equal(f->r.status, 2);
    const char *bad_target[] = {"report", s_runs, "--target", "3", NULL};
    support_run_asgd(&f->r, f->dir, bad_target);
    assert_int_equal(f->r.status, 2);
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
    const char *bad_size[] = {"plot", s_runs, "-o", out, "--size", "poster", NULL};
    support_run_asgd(&f->r, f->dir, bad_size);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "--size poster"));
    const char *words[] = {"plot", s_runs, "-o", out, "--kind", "scaling", "--x",
                           "train.algorithm", NULL};
    support_run_asgd(&f->r, f->dir, words);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "--x train.algorithm: no run has a number there"));
    const char *empty[] = {"plot", f->dir, "-o", out, "--group", "workers", NULL};
    support_run_asgd(&f->r, "/", empty);
    assert_int_equal(f->r.status, 0);      /* the fixture's runs are under f->dir too */
    const char *nowhere[] = {"plot", s_runs, "-o", "/nonexistent/fig.png", NULL};
    support_run_asgd(&f->r, f->dir, nowhere);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "/nonexistent is no folder to write it in"));
    const char *none[] = {"plot", "/nonexistent", "-o", out, NULL};
    support_run_asgd(&f->r, f->dir, none);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "/nonexistent: no such folder"));
    /* one mistyped folder of several (its runs were dropped without a
     * word), and for the report too, which made it before it looked */
    const char *one_wrong[] = {"plot", s_runs, "/nonexistent", "-o", out, NULL};
    support_run_asgd(&f->r, f->dir, one_wrong);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "/nonexistent: no such folder"));
    char typo[700];
    snprintf(typo, sizeof typo, "%s/no-such-runs", f->dir);
    const char *report[] = {"report", typo, NULL};
    support_run_asgd(&f->r, f->dir, report);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "no-such-runs: no such folder"));
    assert_int_equal(access(typo, F_OK), -1);
}

/* Bars mark a diverged group as the line plots' legends do: its bar (of
 * time to accuracy or samples/s) was labelled as if nothing had happened. */
static void test_diverged_bars_are_marked(void **state)
{
    support_fixture *f = *state;
    s_need_gnuplot();
    char out[700];
    s_diverging(f, out, sizeof out);
    const char *kinds[] = {"throughput", "time-to-accuracy"};
    for (int k = 0; k < 2; k++) {
        char fig[800];
        snprintf(fig, sizeof fig, "%s/div-%s.png", f->dir, kinds[k]);
        const char *args[] = {"plot", out, "-o", fig, "--kind", kinds[k], "--target", "0.2",
                              NULL};
        char *dat = s_plot_and_read(f, args, fig, "-1.dat");
        assert_non_null(strstr(dat, "\n\"wild (diverged)\" "));
        assert_non_null(strstr(dat, "\n\"calm\" "));
        if (k == 0) {   /* samples over a run cut short are no throughput */
            double mean, lo, hi;
            int measured;
            assert_int_equal(sscanf(strstr(dat, "\n\"wild (diverged)\" ") + 18,
                                    "%lf %lf %lf %d", &mean, &lo, &hi, &measured), 4);
            assert_int_equal(measured, 0);
        }
        free(dat);
    }
}

/* The folder of the run under out labelled label into dir. */
static void s_labelled_run(const char *out, const char *label, char *dir, size_t n)
{
    char pattern[800];
    snprintf(pattern, sizeof pattern, "%s/*/*/summary.json", out);
    glob_t found;
    assert_int_equal(glob(pattern, 0, NULL, &found), 0);
    dir[0] = '\0';
    for (size_t i = 0; i < found.gl_pathc && !dir[0]; i++) {
        cJSON *j = support_json_file(found.gl_pathv[i]);
        const cJSON *l = cJSON_GetObjectItemCaseSensitive(j, "label");
        if (cJSON_IsString(l) && strcmp(l->valuestring, label) == 0) {
            snprintf(dir, n, "%.*s", (int)(strrchr(found.gl_pathv[i], '/') - found.gl_pathv[i]),
                     found.gl_pathv[i]);
        }
        cJSON_Delete(j);
    }
    globfree(&found);
    assert_true(dir[0] != '\0');
}

/* The first eval.csv row of s_diverging's calm run (its untrained model)
 * into v (time, epoch, updates, samples, loss, accuracy), and the time of
 * its first row of a trained model at or above target (NaN: none). */
static double s_calm_rows(support_fixture *f, double target, double v[6])
{
    char out[700], path[4200];
    s_diverging(f, out, sizeof out);
    s_labelled_run(out, "calm", path, sizeof path);
    strcat(path, "/eval.csv");
    char *text = support_read_file(path);
    double at = NAN, row[6];
    const char *line = strchr(text, '\n') + 1;
    assert_int_equal(sscanf(line, "%lf,%lf,%lf,%lf,%lf,%lf", &v[0], &v[1], &v[2], &v[3], &v[4],
                            &v[5]), 6);
    for (; line && *line && isnan(at); line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        if (sscanf(line, "%lf,%lf,%lf,%lf,%lf,%lf", &row[0], &row[1], &row[2], &row[3], &row[4],
                   &row[5]) == 6 && row[2] > 0 && row[5] >= target) {
            at = row[0];
        }
    }
    free(text);
    return at;
}

/* The untrained model's accuracy (a tenth by chance, more for some seeds)
 * reaches no target: a run whose first evaluation, at time 0 before any
 * update, was at the target had a time to accuracy of 0, and its group,
 * diverged or not, came first. */
static void test_the_untrained_model_reaches_no_target(void **state)
{
    support_fixture *f = *state;
    s_need_gnuplot();
    char out[700], fig[800], target[32];
    double first[6];
    s_diverging(f, out, sizeof out);
    s_calm_rows(f, 0, first);
    assert_true(first[0] == 0 && first[2] == 0);   /* the untrained model's row */
    snprintf(target, sizeof target, "%.9g", first[5]);
    double want = s_calm_rows(f, strtod(target, NULL), first);
    snprintf(fig, sizeof fig, "%s/untrained.png", f->dir);
    const char *args[] = {"plot", out, "-o", fig, "--kind", "time-to-accuracy", "--target",
                          target, NULL};
    char *dat = s_plot_and_read(f, args, fig, "-1.dat");
    const char *row = strstr(dat, "\n\"calm\" ");
    assert_non_null(row);
    double mean, lo, hi;
    int reached;
    assert_int_equal(sscanf(row + 8, "%lf %lf %lf %d", &mean, &lo, &hi, &reached), 4);
    if (isnan(want)) {
        assert_int_equal(reached, 0);
    } else {
        assert_int_equal(reached, 1);
        assert_true(mean == want && want > 0);
    }
    free(dat);
}

/* A scaling point of runs of which one has no number (a diverged run's
 * final loss is NaN) is the mean of the others, stderr says so, and the
 * title counts only them: the NaN made the mean NaN and the point
 * vanished without a word. */
static void test_scaling_skips_a_nan(void **state)
{
    support_fixture *f = *state;
    s_need_gnuplot();
    char out[700], fig[800], path[820];
    s_diverging(f, out, sizeof out);
    snprintf(fig, sizeof fig, "%s/div-scaling.png", f->dir);
    const char *args[] = {"plot", out, "-o", fig, "--kind", "scaling", "--x", "model.hidden",
                          "--y", "final_test_loss", "--group", "model", NULL};
    char *dat = s_plot_and_read(f, args, fig, "-1.dat");
    assert_non_null(strstr(f->r.err, "mlp: 1 of 2 runs have no finite final_test_loss"));
    char *row = strstr(dat, "\n16 ");   /* after the comments: model.hidden 16 */
    assert_non_null(row);
    double x, mean, lo, hi;
    assert_int_equal(sscanf(row + 1, "%lf %lf %lf %lf", &x, &mean, &lo, &hi), 4);
    assert_true(isfinite(mean) && mean > 0);
    assert_true(lo == mean && hi == mean);   /* the calm run's loss alone */
    free(dat);
    snprintf(path, sizeof path, "%s.gp", fig);
    char *gp = support_read_file(path);
    assert_non_null(gp);
    assert_null(strstr(gp, "mean of"));   /* the point is of one run, not of 2 */
    free(gp);
    /* how long a run took, when one diverged, is the other's: the wild
     * run's time, cut short, pulled the mean down without a word */
    args[9] = "time_s";
    dat = s_plot_and_read(f, args, fig, "-1.dat");
    assert_non_null(strstr(f->r.err, "mlp: 1 of 2 runs have no finite time_s (left out of its "
                                     "points; 1 of them diverged, and so ran short)"));
    char calm_dir[4200];
    s_labelled_run(out, "calm", calm_dir, sizeof calm_dir);
    strcat(calm_dir, "/summary.json");
    cJSON *calm = support_json_file(calm_dir);
    row = strstr(dat, "\n16 ");
    assert_non_null(row);
    assert_int_equal(sscanf(row + 1, "%lf %lf %lf %lf", &x, &mean, &lo, &hi), 4);
    double took = support_json_number(calm, "time_s");   /* to the data file's 9 digits */
    assert_true(fabs(mean - took) <= 1e-8 * took && lo == mean && hi == mean);
    cJSON_Delete(calm);
    free(dat);
}

/* A figure of one point (one run's scaling, on linear and log axes) or
 * of no bar (a target no run reaches) has ranges around it: gnuplot
 * warned of an empty range on stderr ("empty x range [16:16]") and drew
 * the point in a 2% sliver of axis. */
static void test_one_point_or_no_bar_has_a_range(void **state)
{
    support_fixture *f = *state;
    s_need_gnuplot();
    char out[700], calm[4200], fig[800];
    s_diverging(f, out, sizeof out);
    s_labelled_run(out, "calm", calm, sizeof calm);
    snprintf(fig, sizeof fig, "%s/one-point.png", f->dir);
    const char *scaling[] = {"plot", calm, "-o", fig, "--kind", "scaling", "--x", "model.hidden",
                             "--y", "final_test_loss", NULL, NULL};
    const char *logs[] = {NULL, "--logx", "--logy"};
    for (int i = 0; i < 3; i++) {
        scaling[10] = logs[i];
        char *script = s_plot_and_read(f, scaling, fig, ".gp");
        assert_null(strstr(f->r.err, "arning"));
        assert_non_null(strstr(script, "\nx_single = "));
        assert_non_null(strstr(script, "\ny_single = "));
        free(script);
    }
    const char *bars[] = {"plot", calm, "-o", fig, "--kind", "time-to-accuracy", "--target",
                          "0.999", NULL};
    char *script = s_plot_and_read(f, bars, fig, ".gp");
    assert_non_null(strstr(f->r.err, "never reaches test accuracy 0.999"));
    assert_null(strstr(f->r.err, "arning"));
    assert_non_null(strstr(script, "\nbars_none = 1\n"));
    free(script);
    /* the report's page says why a figure is not drawn in asgd plot's words,
     * not under asgd report's name ("asgd report: --kind staleness") */
    char page[800];
    snprintf(page, sizeof page, "%s/one-point-report", f->dir);
    char *md = s_report_page(f, (const char *[]){calm, NULL}, page);
    assert_non_null(strstr(md, "staleness: not drawn: --kind staleness: no run recorded"));
    free(md);
}

/* Folders that overlap (a sweep, one of its runs, the sweep again by
 * another path) reach runs more than once: each is counted, and
 * averaged, once. */
static void test_overlapping_folders_count_a_run_once(void **state)
{
    support_fixture *f = *state;
    s_need_gnuplot();
    char pattern[700];
    snprintf(pattern, sizeof pattern, "%s/*/summary.json", s_runs);
    glob_t found;
    assert_int_equal(glob(pattern, 0, NULL, &found), 0);
    char run[700], again[720], fig[800];
    snprintf(run, sizeof run, "%.*s", (int)(strrchr(found.gl_pathv[0], '/') - found.gl_pathv[0]),
             found.gl_pathv[0]);
    globfree(&found);
    snprintf(again, sizeof again, "%s/.", s_runs);
    snprintf(fig, sizeof fig, "%s/overlap.png", f->dir);
    const char *args[] = {"plot", s_runs, run, again, "-o", fig, NULL};
    support_run_asgd(&f->r, f->dir, args);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "(8 runs, 2 groups"));
}

/* The title says how many runs a line averages; when lines average
 * different numbers, the range (it said the most, as if every line had
 * as many). */
static void test_title_gives_a_range_of_runs(void **state)
{
    support_fixture *f = *state;
    s_need_gnuplot();
    char extra[700], out_arg[800], base[700];
    snprintf(extra, sizeof extra, "%s/extra", f->out);
    snprintf(out_arg, sizeof out_arg, "experiment.out=%s", extra);
    snprintf(base, sizeof base, "%s/base.ini", f->dir);
    const char *train[] = {"train", base, out_arg, "train.algorithm=hogwild",
                           "experiment.seed=3", "train.epochs=1", NULL};
    support_run_asgd(&f->r, f->dir, train);
    assert_int_equal(f->r.status, 0);
    const char *const with_extra[] = {extra, NULL};   /* hogwild: 5 runs, sync: 4 */
    char *gp = s_script(f, "range.png", with_extra);
    assert_non_null(strstr(f->r.out, "(9 runs, 2 groups"));
    assert_non_null(strstr(gp, "mean of 4-5 runs"));
    free(gp);
}

/* Two simulated runs of synthetic data into out, with the overrides
 * common (NULL-terminated, up to 6) and then first, or second. */
static void s_two_sim_runs(support_fixture *f, const char *out, const char *const *common,
                           const char *first, const char *second)
{
    char out_arg[800];
    snprintf(out_arg, sizeof out_arg, "experiment.out=%s", out);
    const char *each[2] = {first, second};
    for (int i = 0; i < 2; i++) {
        const char *args[12] = {"train", "/dev/null", out_arg, "experiment.mode=sim",
                                "data.dataset=synthetic"};
        int n = 5;
        for (int k = 0; common[k]; k++) {
            args[n++] = common[k];
        }
        args[n++] = each[i];
        args[n] = NULL;
        support_run_asgd(&f->r, f->dir, args);
        assert_int_equal(f->r.status, 0);
    }
}

/* Two simulated softmax runs of a rule into out, with the override each
 * gets. */
static void s_two_runs_of(support_fixture *f, const char *out, const char *rule,
                          const char *first, const char *second)
{
    char rule_arg[100];
    snprintf(rule_arg, sizeof rule_arg, "train.algorithm=%s", rule);
    const char *common[] = {"model.type=softmax", rule_arg, "train.epochs=1", "eval.every=0.05",
                            NULL};
    s_two_sim_runs(f, out, common, first, second);
}

/* The same with hogwild. */
static void s_two_runs(support_fixture *f, const char *out, const char *first,
                       const char *second)
{
    s_two_runs_of(f, out, "hogwild", first, second);
}

/* Groups by a number are as many as its values: "%g" made seeds 10000001
 * and 10000002 one group, "seed = 1e+07", the mean of two runs. */
static void test_groups_by_a_long_number_stay_apart(void **state)
{
    support_fixture *f = *state;
    s_need_gnuplot();
    char runs[700], fig[800];
    snprintf(runs, sizeof runs, "%s/long-seeds", f->out);
    s_two_runs(f, runs, "experiment.seed=10000001", "experiment.seed=10000002");
    snprintf(fig, sizeof fig, "%s/long.png", f->dir);
    const char *args[] = {"plot", runs, "-o", fig, "--group", "seed", NULL};
    char *script = s_plot_and_read(f, args, fig, ".gp");
    assert_non_null(strstr(f->r.out, "2 runs, 2 groups"));
    assert_non_null(strstr(script, "seed = 10000001"));
    assert_null(strstr(script, "e+07"));
    free(script);
}

/* Groups and runs come in the order of their numbers: seed 2 before 16,
 * the run in folder r2 before r16 (in string order, 16 came first, in
 * legends and in a report's rows). */
static void test_numbers_in_order(void **state)
{
    support_fixture *f = *state;
    s_need_gnuplot();
    char runs[700], fig[800];
    snprintf(runs, sizeof runs, "%s/in-order", f->out);
    s_two_runs(f, runs, "experiment.seed=16", "experiment.seed=2");
    snprintf(fig, sizeof fig, "%s/in-order.png", f->dir);
    const char *args[] = {"plot", runs, "-o", fig, "--group", "seed", NULL};
    char *script = s_plot_and_read(f, args, fig, ".gp");
    const char *two = strstr(script, "seed = 2'"), *sixteen = strstr(script, "seed = 16'");
    assert_true(two && sixteen && two < sixteen);
    free(script);
    snprintf(runs, sizeof runs, "%s/in-order-ids", f->out);
    s_two_runs(f, runs, "experiment.run_id=r16", "experiment.run_id=r2");
    char out[800], path[900];
    snprintf(out, sizeof out, "%s/in-order-report", f->dir);
    const char *report[] = {"report", runs, "-o", out, NULL};
    support_run_asgd(&f->r, f->dir, report);
    assert_int_equal(f->r.status, 0);
    snprintf(path, sizeof path, "%s/report.md", out);
    char *md = support_read_file(path);
    two = strstr(md, "r2 |");
    sixteen = strstr(md, "r16 |");
    if (!two || !sixteen || two > sixteen) {
        fail_msg("r2 and r16 out of order in %s", md);
    }
    free(md);
}

/* A number is one value however it is written: config.ini keeps a value
 * as given (sim.latency = 50e-6) or as the default is printed (5e-05), and
 * the two made two groups, "runs differ in [sim] latency", and no word of
 * one config run twice; nor does the comment naming the base file count
 * (a byte-identical copy elsewhere hid the seed run twice). */
static void test_a_number_however_written_is_one_value(void **state)
{
    support_fixture *f = *state;
    s_need_gnuplot();
    char runs[700], fig[800], pattern[800];
    snprintf(runs, sizeof runs, "%s/spelled", f->out);
    s_two_runs(f, runs, "sim.latency=50e-6", "sim.latency=5e-05");
    snprintf(pattern, sizeof pattern, "%s/*/*/config.ini", runs);
    glob_t found;
    assert_int_equal(glob(pattern, 0, NULL, &found), 0);
    assert_int_equal(found.gl_pathc, 2);
    char *text = support_read_file(found.gl_pathv[0]);
    assert_non_null(strstr(text, "50e-6") ? text : strstr(text, "5e-05"));
    char *moved = malloc(strlen(text) + 64);
    sprintf(moved, "# From /elsewhere/base.ini\n%s", text);   /* another base path */
    support_write_file(found.gl_pathv[0], moved);
    free(moved);
    free(text);
    globfree(&found);
    snprintf(fig, sizeof fig, "%s/spelled.png", f->dir);
    const char *const by_latency[] = {"--group", "sim.latency", NULL};
    s_plot_hand(f, runs, fig, by_latency);
    if (!strstr(f->r.out, "2 runs, 1 group")) {
        fail_msg("50e-6 and 5e-05 as two groups: \"%s\"", f->r.out);
    }
    assert_null(strstr(f->r.err, "differ"));
    if (!strstr(f->r.err, "are one config with seed 1, run twice")) {
        fail_msg("no word of the seed run twice: \"%s\"", f->r.err);
    }
    /* a label is text, not a number: 1.10 and 1.1 are two groups (they were
     * one, "one config run twice") */
    snprintf(runs, sizeof runs, "%s/labels", f->out);
    s_two_runs(f, runs, "experiment.label=1.10", "experiment.label=1.1");
    s_plot_hand(f, runs, fig, NULL);
    if (!strstr(f->r.out, "2 runs, 2 groups") || strstr(f->r.err, "run twice")) {
        fail_msg("labels 1.10 and 1.1: \"%s\" \"%s\"", f->r.out, f->r.err);
    }
}

/* One config run twice with one seed (a run folder's config.ini run
 * again writes beside it) is said: the group's mean counts the seed
 * twice, as if it were two (runs of two seeds are not). */
static void test_a_seed_run_twice_is_said(void **state)
{
    support_fixture *f = *state;
    s_need_gnuplot();
    char runs[700], fig[800];
    snprintf(runs, sizeof runs, "%s/twice", f->out);
    s_two_runs(f, runs, "experiment.run_id=a", "experiment.run_id=a-2");
    snprintf(fig, sizeof fig, "%s/twice.png", f->dir);
    s_plot_hand(f, runs, fig, NULL);
    if (!strstr(f->r.err, "are one config with seed 1, run twice")) {
        fail_msg("no word of the seed run twice: \"%s\"", f->r.err);
    }
    snprintf(runs, sizeof runs, "%s/two-seeds", f->out);
    s_two_runs(f, runs, "experiment.seed=1", "experiment.seed=2");
    s_plot_hand(f, runs, fig, NULL);
    assert_null(strstr(f->r.err, "run twice"));
}

/* Nothing a run folder or an option holds is run by gnuplot: in double
 * quotes gnuplot runs what is between backquotes, and a label of
 * x`touch FILE` in a run's config.ini ran when its folder was plotted or
 * reported (so did --title). Quotes in a label are drawn as they are. */
static void test_nothing_in_a_label_is_run(void **state)
{
    support_fixture *f = *state;
    s_need_gnuplot();
    char runs[700], fig[800], ran[800], label[900], title[900], page[800];
    snprintf(runs, sizeof runs, "%s/hostile", f->out);
    snprintf(ran, sizeof ran, "%s/ran", f->dir);
    snprintf(label, sizeof label, "experiment.label=it's `touch %s`", ran);
    snprintf(title, sizeof title, "a `touch %s` \"b\"", ran);
    s_two_runs(f, runs, label, "experiment.label=plain");
    snprintf(fig, sizeof fig, "%s/hostile.png", f->dir);
    const char *args[] = {"plot", runs, "-o", fig, "--title", title, NULL};
    char *script = s_plot_and_read(f, args, fig, ".gp");
    assert_int_equal(access(ran, F_OK), -1);
    assert_non_null(strstr(script, "'it''s `touch "));
    free(script);
    snprintf(page, sizeof page, "%s/hostile-report", f->dir);
    const char *report[] = {"report", runs, "-o", page, NULL};
    support_run_asgd(&f->r, f->dir, report);
    assert_int_equal(f->r.status, 0);
    assert_int_equal(access(ran, F_OK), -1);
}

/* A plot that fails leaves the figure, script and data an earlier one
 * made as they were, and no file of its own: gnuplot refusing a range
 * (the figure was left at 0 bytes), a full disk (gnuplot exits 0 after a
 * failed write: a figure cut short, and exit 0), a wrong option (the
 * script was cut to a piece before the refusal). */
static void test_a_failed_plot_keeps_the_last_one(void **state)
{
    support_fixture *f = *state;
    s_need_gnuplot();
    char fig[800], gp_path[820];
    char *before = s_script(f, "kept.png", NULL);
    snprintf(fig, sizeof fig, "%s/kept.png", f->dir);
    snprintf(gp_path, sizeof gp_path, "%s.gp", fig);
    long size = s_size(fig);
    const char *wrong[][3] = {{"--xrange", "5:1", NULL}, {"--target", "abc", NULL},
                              {"--kind", "scaling", "--x"}, {"--y", "bogus", NULL}};
    for (int i = 0; i < 4; i++) {
        const char *args[] = {"plot", s_runs, "-o", fig, wrong[i][0], wrong[i][1], wrong[i][2],
                              wrong[i][2] ? "bogus" : NULL, NULL};
        support_run_asgd(&f->r, f->dir, args);
        if (f->r.status != 2 || (i != 2 && strchr(f->r.err, '\n') !=   /* one line */
                                                f->r.err + strlen(f->r.err) - 1)) {
            fail_msg("%s %s: status %d, \"%s\"", wrong[i][0], wrong[i][1], f->r.status,
                     f->r.err);
        }
    }
    /* the figure (45 KB) past the limit, its script and data within */
    const char *args[] = {"plot", s_runs, "-o", fig, NULL};
    support_run_asgd_limited(&f->r, f->dir, args, 12000);
    if (f->r.status != 1 || !strstr(f->r.err, "kept.png: gnuplot could not write it whole")) {
        fail_msg("full disk: status %d, \"%s\"", f->r.status, f->r.err);
    }
    s_expect_kept(fig, size, gp_path, before);
    char pattern[820];
    snprintf(pattern, sizeof pattern, "%s/.kept.png.*", f->dir);
    s_expect_nothing_left(pattern);
    /* an option without its value, or unknown, is said as such */
    const char *last[] = {"plot", s_runs, "-o", fig, "--bogus", NULL};
    support_run_asgd(&f->r, f->dir, last);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "unknown option --bogus"));
    /* an option given twice, or one the figure does not read, is refused
     * (the last -o alone was written; --x updates drew against time) */
    const char *twice[] = {"plot", s_runs, "-o", fig, "-o", "other.png", NULL};
    support_run_asgd(&f->r, f->dir, twice);
    if (f->r.status != 2 || !strstr(f->r.err, "-o given twice")) {
        fail_msg("-o twice: status %d, \"%s\"", f->r.status, f->r.err);
    }
    const char *unread[] = {"plot", s_runs, "-o", fig, "--kind", "time-to-accuracy", "--x",
                            "updates", NULL};
    support_run_asgd(&f->r, f->dir, unread);
    if (f->r.status != 2 || !strstr(f->r.err, "--x: only convergence and scaling figures")) {
        fail_msg("--x of a time-to-accuracy figure: status %d, \"%s\"", f->r.status,
                 f->r.err);
    }
}

/* Ctrl-C while a figure is drawn: exit 130, the figure and script of an
 * earlier plot as they were, and none of the temporary files (each was
 * left, hidden, beside the figure); SIGTERM to asgd alone the same,
 * gnuplot stopped by asgd. The signal comes from a gnuplot in PATH that
 * sends it to its asgd and then runs the real gnuplot, so it lands while
 * the figure is drawn, every time. */
static void test_ctrl_c_leaves_no_temporary_files(void **state)
{
    support_fixture *f = *state;
    s_need_gnuplot();
    char *before = s_script(f, "stopped.png", NULL);
    char fig[800], gp_path[820], shim[800], shim_gnuplot[820];
    snprintf(fig, sizeof fig, "%s/stopped.png", f->dir);
    snprintf(gp_path, sizeof gp_path, "%s.gp", fig);
    long size = s_size(fig);
    const char *old = getenv("PATH");
    char saved[4096], path[5000];
    snprintf(saved, sizeof saved, "%s", old ? old : "");
    snprintf(shim, sizeof shim, "%s/interrupting", f->dir);
    assert_int_equal(mkdir(shim, 0755), 0);
    snprintf(shim_gnuplot, sizeof shim_gnuplot, "%s/gnuplot", shim);
    char text[5000];
    snprintf(text, sizeof text,
             "#!/bin/sh\n"
             "p=$PPID\n"
             "while [ \"$p\" -gt 1 ] && [ \"$(cat /proc/$p/comm)\" != asgd ]; do\n"
             "    s=$(cat /proc/$p/stat); s=${s##*) }; set -- $s; p=$2\n"
             "done\n"
             "[ \"$p\" -gt 1 ] || exit 1\n"
             "kill -\"$INTERRUPT_WITH\" \"$p\"\n"
             "PATH='%s' exec gnuplot \"$@\"\n", saved);
    support_write_file(shim_gnuplot, text);
    assert_int_equal(chmod(shim_gnuplot, 0755), 0);
    snprintf(path, sizeof path, "%s:%s", shim, saved);
    setenv("PATH", path, 1);
    const char *args[] = {"plot", s_runs, "-o", fig, NULL};
    /* SIGTERM to asgd alone (a launcher's, timeout's): gnuplot, which it
     * does not reach, is stopped by asgd (the wait went on meanwhile) */
    setenv("INTERRUPT_WITH", "TERM", 1);
    support_run_asgd(&f->r, f->dir, args);
    if (f->r.status != 128 + SIGTERM || !strstr(f->r.err, "stopped.png: interrupted")) {
        fail_msg("plot, SIGTERM: status %d, \"%s\"", f->r.status, f->r.err);
    }
    setenv("INTERRUPT_WITH", "INT", 1);
    support_run_asgd(&f->r, f->dir, args);
    char page[800];
    snprintf(page, sizeof page, "%s/stopped-report", f->dir);
    support_result report;
    const char *report_args[] = {"report", s_runs, "-o", page, NULL};
    support_run_asgd(&report, f->dir, report_args);
    setenv("PATH", saved, 1);
    unsetenv("INTERRUPT_WITH");
    if (f->r.status != 130 || !strstr(f->r.err, "stopped.png: interrupted")) {
        fail_msg("plot: status %d, \"%s\"", f->r.status, f->r.err);
    }
    s_expect_kept(fig, size, gp_path, before);
    if (report.status != 130 || !strstr(report.err, "interrupted")) {
        fail_msg("report: status %d, \"%s\"", report.status, report.err);
    }
    const char *patterns[] = {"%s/.stopped.png.*", "%s/stopped-report/.[!.]*",
                              "%s/stopped-report/*"};
    for (int i = 0; i < 3; i++) {
        char pattern[900];
        snprintf(pattern, sizeof pattern, patterns[i], f->dir);
        s_expect_nothing_left(pattern);
    }
}

/* Staleness past the histogram's last bin (63 and above): the axis says
 * so and gives the run's largest staleness (the label said plain
 * "staleness (updates)" when 99.9% of pushes fell in that bin, and the
 * CDF reached 1 at 63 for a run whose largest was over 100). */
static void test_staleness_beyond_the_last_bin_is_said(void **state)
{
    support_fixture *f = *state;
    s_need_gnuplot();
    char out[700], fig[720], sum[800];
    snprintf(out, sizeof out, "%s/stale-runs", f->dir);
    snprintf(fig, sizeof fig, "%s/stale.png", f->dir);
    s_two_runs(f, out, "cluster.workers=100", "cluster.workers=120");
    const char *args[] = {"plot", out, "-o", fig, "--kind", "staleness", NULL};
    support_run_asgd(&f->r, f->dir, args);
    assert_int_equal(f->r.status, 0);
    snprintf(sum, sizeof sum, "%s.gp", fig);
    char *gp = support_read_file(sum);
    assert_non_null(gp);
    char want[120];
    snprintf(want, sizeof want, "xlabel = 'staleness (updates; 63: 63 or more; max %d)'",
             119);   /* hogwild: the pushes of the 119 others */
    if (!strstr(gp, want)) {
        const char *at = strstr(gp, "xlabel");
        fail_msg("want %s; the script says %.100s", want, at ? at : "(no xlabel)");
    }
    free(gp);
}

/* samples_per_s of the one run under root of `rule` with `workers`. */
static double s_samples_per_s(const char *root, const char *rule, int workers)
{
    char pattern[800];
    snprintf(pattern, sizeof pattern, "%s/*/*/summary.json", root);
    glob_t found;
    assert_int_equal(glob(pattern, 0, NULL, &found), 0);
    double sps = NAN;
    for (size_t i = 0; i < found.gl_pathc; i++) {
        cJSON *j = support_json_file(found.gl_pathv[i]);
        if (strcmp(cJSON_GetObjectItemCaseSensitive(j, "algorithm")->valuestring, rule) == 0 &&
            support_json_number(j, "workers") == workers) {
            sps = support_json_number(j, "samples_per_s");
        }
        cJSON_Delete(j);
    }
    globfree(&found);
    assert_true(isfinite(sps));
    return sps;
}

/* Where the groups' fewest workers differ, each group's speed-up has its
 * own ideal line, over its own fewest: one line drawn for all (the first
 * group's) put a group of 1, 2, 4 workers beside the ideal of one of 2, 4,
 * 8, at twice it. */
static void test_each_group_has_its_own_ideal_line(void **state)
{
    support_fixture *f = *state;
    s_need_gnuplot();
    char runs[700], fig[800];
    snprintf(runs, sizeof runs, "%s/own-ideal", f->out);
    s_two_runs_of(f, runs, "hogwild", "cluster.workers=1", "cluster.workers=2");
    s_two_runs_of(f, runs, "sync", "cluster.workers=2", "cluster.workers=4");
    snprintf(fig, sizeof fig, "%s/own-ideal.png", f->dir);
    const char *args[] = {"plot", runs, "-o", fig, "--kind", "scaling", NULL};
    char *gp = s_plot_and_read(f, args, fig, ".gp");
    s_expect_figure(fig);
    assert_non_null(strstr(gp, "one_ideal = 0"));
    assert_non_null(strstr(gp, "speedup_label = 'speed-up over each group''s fewest workers'"));
    free(gp);
    int seen = 0;
    for (int g = 1; g <= 2; g++) {   /* x mean min max speedup ideal, the ideal over its first x */
        char dat[900];
        snprintf(dat, sizeof dat, "%s-%d.dat", fig, g);
        char *text = support_read_file(dat);
        assert_non_null(text);
        bool sync = strncmp(text, "# sync", 6) == 0;
        double x[2], mean[2], ideal[2], speedup[2];
        char *line = strstr(text, "# x mean min max speedup ideal\n");
        assert_non_null(line);
        line = strchr(line, '\n') + 1;
        for (int i = 0; i < 2; i++) {
            double lo, hi;
            assert_int_equal(sscanf(line, "%lf %lf %lf %lf %lf %lf", &x[i], &mean[i], &lo, &hi,
                                    &speedup[i], &ideal[i]), 6);
            line = strchr(line, '\n') + 1;
        }
        assert_true(x[0] == (sync ? 2 : 1) && x[1] == (sync ? 4 : 2));
        assert_true(ideal[0] == 1 && ideal[1] == 2);
        /* the speed-up is over the group's fewest workers (the column a
         * mutation turned upside down passed) */
        assert_true(speedup[0] == 1);
        if (fabs(speedup[1] - mean[1] / mean[0]) > 1e-8 * speedup[1]) {
            fail_msg("speed-up %.9g, the means give %.9g", speedup[1], mean[1] / mean[0]);
        }
        for (int i = 0; i < 2; i++) {   /* each point is its one run's samples/s, every digit */
            double sps = s_samples_per_s(runs, sync ? "sync" : "hogwild", (int)x[i]);
            if (fabs(mean[i] - sps) > 1e-8 * sps) {   /* once 6 digits: 55556.3 */
                fail_msg("%s at %g workers: %.9g, its run's samples/s %.9g",
                         sync ? "sync" : "hogwild", x[i], mean[i], sps);
            }
        }
        seen |= sync ? 1 : 2;
        free(text);
    }
    assert_int_equal(seen, 3);
    const char *same[] = {"--kind", "scaling", NULL};   /* the fixture's groups share 1 worker */
    gp = s_script(f, "one-ideal.png", same);
    assert_non_null(strstr(gp, "one_ideal = 1"));
    free(gp);
}

/* `asgd report` of the run folders dirs (NULL-terminated, at most 4) into
 * out, which must succeed; its report.md (caller frees). */
static char *s_report_page(support_fixture *f, const char *const *dirs, const char *out)
{
    const char *args[8] = {"report"};
    int k = 1;
    for (; dirs[k - 1] && k < 5; k++) {
        args[k] = dirs[k - 1];
    }
    args[k++] = "-o";
    args[k++] = out;
    args[k] = NULL;
    support_run_asgd(&f->r, f->dir, args);
    assert_int_equal(f->r.status, 0);
    char path[800];
    snprintf(path, sizeof path, "%s/report.md", out);
    char *md = support_read_file(path);
    assert_non_null(md);
    return md;
}

/* The report's rule column names the rule that ran, and a label given
 * to it beside (it showed the label alone: a sync run labelled hogwild
 * read as hogwild). */
static void test_report_names_the_rule_that_ran(void **state)
{
    support_fixture *f = *state;
    char runs[700], out[700];
    snprintf(runs, sizeof runs, "%s/labelled", f->out);
    snprintf(out, sizeof out, "%s/labelled-report", f->dir);
    s_two_runs_of(f, runs, "sync", "experiment.label=hogwild", "experiment.label=sync");
    const char *dirs[] = {runs, NULL};
    char *md = s_report_page(f, dirs, out);
    assert_non_null(strstr(md, "| sync (hogwild) | sim |"));
    assert_non_null(strstr(md, "| sync | sim |"));
    assert_null(strstr(md, "| hogwild | sim |"));
    /* a simulated run's training time, a hundredth of a second or so, in
     * four digits (it read "0.01" for one run and the next alike) */
    char *row = strstr(md, "| sync | sim |") + strlen("| sync | sim |");
    for (int bar = 0; bar < 4; bar++) {   /* workers, final and best acc, loss */
        row = strchr(row, '|') + 1;
    }
    double shown = strtod(row, NULL);
    char pattern[800];   /* the two runs differ in their labels alone */
    snprintf(pattern, sizeof pattern, "%s/*/*/summary.json", runs);
    glob_t found;
    assert_int_equal(glob(pattern, 0, NULL, &found), 0);
    cJSON *j = support_json_file(found.gl_pathv[0]);
    globfree(&found);
    double time_s = support_json_number(j, "time_s");
    /* and the final accuracy to four decimals, as the summary has it */
    char cell[64], *final = strstr(md, "| sync | sim |") + strlen("| sync | sim |");
    final = strchr(final, '|') + 1;   /* past the workers */
    snprintf(cell, sizeof cell, " %.4f |", support_json_number(j, "final_test_acc"));
    if (strncmp(final, cell, strlen(cell)) != 0) {
        fail_msg("final accuracy shown as \"%.12s\", not \"%s\"", final, cell);
    }
    cJSON_Delete(j);
    if (!(time_s < 1) || fabs(shown - time_s) > 5e-4 * time_s) {
        fail_msg("training time %g s shown as %g", time_s, shown);
    }
    free(md);
}

/* A group whose runs differ in more than their seeds (here the workers)
 * is averaged as if they were seeds: plot says which key differs; runs
 * that differ by seed alone, or in a scaling figure's x, are as meant. */
static void test_a_group_of_different_settings_is_named(void **state)
{
    support_fixture *f = *state;
    s_need_gnuplot();
    char seeds[700], workers[700], fig[800];
    snprintf(seeds, sizeof seeds, "%s/mixed-seeds", f->out);
    snprintf(workers, sizeof workers, "%s/mixed-workers", f->out);
    s_two_runs(f, seeds, "experiment.seed=1", "experiment.seed=2");
    s_two_runs(f, workers, "cluster.workers=1", "cluster.workers=2");
    snprintf(fig, sizeof fig, "%s/mixed.png", f->dir);
    const char *by_seed[] = {"plot", seeds, "-o", fig, NULL};
    support_run_asgd(&f->r, f->dir, by_seed);
    assert_int_equal(f->r.status, 0);
    assert_null(strstr(f->r.err, "differ in"));
    const char *by_workers[] = {"plot", workers, "-o", fig, NULL};
    support_run_asgd(&f->r, f->dir, by_workers);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.err, "hogwild: its runs differ in [cluster] workers (1 and 2)"));
    const char *scaling[] = {"plot", workers, "-o", fig, "--kind", "scaling", NULL};
    support_run_asgd(&f->r, f->dir, scaling);
    assert_int_equal(f->r.status, 0);
    assert_null(strstr(f->r.err, "differ in"));
    /* aeasgd's alpha defaults to 0.9 / N: its resolved configs differ in
     * alpha as in the workers, yet each point of a scaling figure averages
     * the runs of one worker count alone (experiments/hermans-agn-aeasgd
     * was told its lines and points averaged alpha 0.09 and 0.045) */
    char elastic[700];
    snprintf(elastic, sizeof elastic, "%s/mixed-alpha", f->out);
    s_two_runs_of(f, elastic, "aeasgd", "cluster.workers=1", "cluster.workers=2");
    scaling[1] = elastic;
    support_run_asgd(&f->r, f->dir, scaling);
    assert_int_equal(f->r.status, 0);
    assert_null(strstr(f->r.err, "differ in"));
    /* two runs at one x that differ in more than their seeds still mix */
    char one_x[700];
    snprintf(one_x, sizeof one_x, "%s/mixed-one-x", f->out);
    s_two_runs(f, one_x, "train.lr=0.05", "train.lr=0.1");
    scaling[1] = one_x;
    support_run_asgd(&f->r, f->dir, scaling);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.err, "hogwild: its runs differ in [train] lr (0.05 and 0.1)"));
    /* a simulated run at 1 worker and a threads-mode one at 2: each point
     * one run, but the speed-up divided simulated by wall samples/s (263x
     * against an ideal 4x, without a word) */
    char modes[700], out_arg[800];
    snprintf(modes, sizeof modes, "%s/mixed-modes", f->out);
    snprintf(out_arg, sizeof out_arg, "experiment.out=%s", modes);
    const char *mode_of[2][2] = {{"experiment.mode=sim", "cluster.workers=1"},
                                 {"experiment.mode=threads", "cluster.workers=2"}};
    for (int i = 0; i < 2; i++) {
        const char *args[] = {"train", "/dev/null", out_arg, "data.dataset=synthetic",
                              "model.type=softmax", "train.algorithm=hogwild", "train.epochs=1",
                              "eval.every=0", mode_of[i][0], mode_of[i][1], NULL};
        support_run_asgd(&f->r, f->dir, args);
        assert_int_equal(f->r.status, 0);
    }
    scaling[1] = modes;
    support_run_asgd(&f->r, f->dir, scaling);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.err, "hogwild: its points differ in [experiment] mode (sim and "
                                     "threads), not only in workers"));
    /* and its rates: simulated samples/s beside measured ones */
    assert_non_null(strstr(f->r.err, "simulated and measured runs share its time axis or rates "
                                     "(hogwild: sim, hogwild: threads)"));
    /* an accuracy against updates has no time on it */
    const char *updates[] = {"plot", modes, "-o", fig, "--x", "updates", NULL};
    support_run_asgd(&f->r, f->dir, updates);
    assert_int_equal(f->r.status, 0);
    assert_null(strstr(f->r.err, "simulated and measured"));
    /* the report's page says it too (its stderr is not the page) */
    char report[800];
    snprintf(report, sizeof report, "%s/modes-report", f->dir);
    const char *dirs[] = {modes, NULL};
    char *md = s_report_page(f, dirs, report);
    assert_non_null(strstr(md, "Simulated and measured runs share the time axes and rates below "
                                "(hogwild: sim, hogwild: threads)"));
    free(md);
}

/* A run folder for results.py: its summary, built by `commit` (dirty or
 * not), and an eval.csv that reaches 0.85 at 1 s. */
static void s_results_run(const char *root, const char *name, const char *commit, bool dirty,
                          bool diverged)
{
    char path[900], text[1500];
    snprintf(path, sizeof path, "%s/%s", root, name);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/%s/summary.json", root, name);
    const char *seed = strstr(name, "-seed");
    snprintf(text, sizeof text,
             "{\"seed\": %s, \"algorithm\": \"hogwild\", \"label\": \"hogwild\", \"model\": \"mlp\", "
             "\"workers\": 4, \"dataset\": \"fashion-mnist\", \"epochs_target\": 3, "
             "\"final_test_acc\": %s, \"samples_per_s\": 40000, \"staleness_mean\": 2, "
             "\"host\": \"vm\", \"cpu\": \"AMD EPYC\", \"cores\": 2, \"asgd_version\": "
             "\"0.1.0\", \"git_commit\": \"%s\", \"git_dirty\": %s, \"diverged\": %s, "
             "\"complete\": true}\n", seed ? seed + 5 : "1", diverged ? "null" : "0.87", commit,
             dirty ? "true" : "false", diverged ? "true" : "false");
    support_write_file(path, text);
    snprintf(path, sizeof path, "%s/%s/eval.csv", root, name);
    support_write_file(path, "time_s,epoch,updates,samples,test_loss,test_acc\n"
                             "0,0,0,0,2.3,0.1\n1,3,100,6400,0.4,0.87\n");
}

/* The default job's table (experiments/compare-rules/results.py) names
 * every build its runs came from: run.sh keeps complete runs of earlier
 * calls, and the table named the first run's commit alone (the committed
 * results.md says 5f0705d for gapaware's runs, a rule added after it). */
static void test_results_md_names_every_build(void **state)
{
    support_fixture *f = *state;
    if (!support_python()) {
        skip();
    }
    char root[700], script[600];
    snprintf(root, sizeof root, "%s/kept", f->out);
    mkdir(root, 0755);
    s_results_run(root, "hogwild-seed1", "1111111111111111111111111111111111111111", false,
                  false);
    s_results_run(root, "hogwild-seed2", "2222222222222222222222222222222222222222", true,
                  false);
    snprintf(script, sizeof script, "%s/experiments/compare-rules/results.py", ASGD_SOURCE_DIR);
    char one[800], two[800];
    snprintf(one, sizeof one, "%s/hogwild-seed1", root);
    snprintf(two, sizeof two, "%s/hogwild-seed2", root);
    const char *py[] = {script, "0.85", "2", one, two, NULL};
    support_run(&f->r, f->dir, support_python(), py);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "at 111111111111 (1 run)"));
    assert_non_null(strstr(f->r.out, "at 222222222222 with uncommitted changes (1 run)"));
    assert_non_null(strstr(f->r.out, "| hogwild | 0.8700 ± 0.0000 | 1.00 ± 0.00 | 2/2 |"));
    /* one seed of two reaches the target: no time is given, a mean of the
     * seeds that reached it (1.00) flattering a rule that missed it on
     * the others (it ranked such rules ahead of those that always got
     * there); the reached column says how many did */
    char path[900];
    snprintf(path, sizeof path, "%s/hogwild-seed2/eval.csv", root);
    support_write_file(path, "time_s,epoch,updates,samples,test_loss,test_acc\n"
                             "0,0,0,0,2.3,0.1\n1,3,100,6400,0.4,0.84\n");
    support_run(&f->r, f->dir, support_python(), py);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "| 0.8700 ± 0.0000 | - | 1/2 |"));
}

/* The default job's table is of the run folders given, this call's (the
 * figures are of the same): a third seed, or any complete run, kept in the
 * folder from an earlier call (of another config) was averaged in, under
 * "over 3 seeds" where 2 were asked for; a rule with fewer complete says
 * so, and one with none is a row that says so (it vanished). */
static void test_results_md_is_of_the_seeds_asked_for(void **state)
{
    support_fixture *f = *state;
    if (!support_python()) {
        skip();
    }
    char root[700], script[600], path[900];
    const char *commit = "1111111111111111111111111111111111111111";
    snprintf(root, sizeof root, "%s/more-seeds", f->out);
    mkdir(root, 0755);
    s_results_run(root, "hogwild-seed1", commit, false, false);
    s_results_run(root, "hogwild-seed2", commit, false, false);
    s_results_run(root, "hogwild-seed3", commit, false, false);
    snprintf(path, sizeof path, "%s/hogwild-seed3/summary.json", root);
    char *text = support_read_file(path);
    char *acc = strstr(text, "0.87");
    memcpy(acc, "0.51", 4);   /* the earlier call's run, of another config */
    support_write_file(path, text);
    free(text);
    snprintf(script, sizeof script, "%s/experiments/compare-rules/results.py", ASGD_SOURCE_DIR);
    char runs[5][800];
    const char *names[] = {"hogwild-seed1", "hogwild-seed2", "hogwild-seed3", "hogwild-seed4",
                           "sagn-seed1"};
    for (int i = 0; i < 5; i++) {
        snprintf(runs[i], sizeof runs[i], "%s/%s", root, names[i]);
    }
    const char *two[] = {script, "0.85", "2", runs[0], runs[1], NULL};
    support_run(&f->r, f->dir, support_python(), two);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "over 2 seeds"));
    assert_non_null(strstr(f->r.out, "| hogwild | 0.8700 ± 0.0000 |"));
    const char *four[] = {script, "0.85", "4", runs[0], runs[1], runs[2], runs[3], runs[4],
                          NULL};
    support_run(&f->r, f->dir, support_python(), four);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "over 4 seeds"));
    assert_non_null(strstr(f->r.out, "| hogwild (3 of 4 seeds complete) | 0.7500 ± 0.2078 |"));
    assert_non_null(strstr(f->r.out, "| sagn (none of 4 seeds complete) | - |"));
}

/* A rule of which a seed diverged says so on its row of the default job's
 * table, as the figures mark "(diverged)": the diverged seed's accuracy
 * (of a NaN model) was averaged in without a word; null now, unknown, it
 * is left out of the mean, which the row says is the others' (the table
 * stopped at a traceback), and so are its samples/s (of the steps before
 * it stopped: 900,000 were averaged in) and its staleness. */
static void test_results_md_marks_a_diverged_seed(void **state)
{
    support_fixture *f = *state;
    if (!support_python()) {
        skip();
    }
    char root[700], script[600];
    const char *commit = "1111111111111111111111111111111111111111";
    snprintf(root, sizeof root, "%s/diverged-seed", f->out);
    mkdir(root, 0755);
    s_results_run(root, "hogwild-seed1", commit, false, false);
    s_results_run(root, "hogwild-seed2", commit, false, true);
    /* the diverged seed's last row: a NaN model, whose argmax happens to
     * read 0.9 (it reached the target at 0.5 s: the time's mean was 0.75) */
    char path[900];
    snprintf(path, sizeof path, "%s/hogwild-seed2/eval.csv", root);
    support_write_file(path, "time_s,epoch,updates,samples,test_loss,test_acc\n"
                             "0,0,0,0,2.3,0.1\n0.5,1,50,3200,nan,0.9\n");
    snprintf(path, sizeof path, "%s/hogwild-seed2/summary.json", root);
    char *text = support_read_file(path);
    memcpy(strstr(text, "40000"), "90000", 5);
    support_write_file(path, text);
    free(text);
    snprintf(script, sizeof script, "%s/experiments/compare-rules/results.py", ASGD_SOURCE_DIR);
    char one[800], two[800];
    snprintf(one, sizeof one, "%s/hogwild-seed1", root);
    snprintf(two, sizeof two, "%s/hogwild-seed2", root);
    const char *py[] = {script, "0.85", "2", one, two, NULL};
    support_run(&f->r, f->dir, support_python(), py);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "\n| hogwild (1 of 2 diverged: the others' numbers) | "
                                     "0.8700 (one run) | 1.00 (one run) | 1/1 | "
                                     "40000 (one run) | 2.00 (one run) |"));
}

/* Two folders given to asgd report may each hold a run of the same name
 * (runs/compare-rules/3e/hogwild-seed1 and .../1e/hogwild-seed1): each
 * row names its run by as many of its folder's last parts as tell it
 * apart (the page had two rows "same", with different numbers). */
static void test_report_names_each_run_apart(void **state)
{
    support_fixture *f = *state;
    char dirs[2][400], out[700];
    const char *epochs[2] = {"train.epochs=1", "train.epochs=2"};
    for (int i = 0; i < 2; i++) {
        snprintf(dirs[i], sizeof dirs[i], "%s/apart-%d", f->out, i);
        char out_arg[1000];
        snprintf(out_arg, sizeof out_arg, "experiment.out=%s", dirs[i]);
        const char *args[] = {"train", "/dev/null", out_arg, "experiment.mode=sim",
                              "experiment.name=n", "experiment.run_id=same",
                              "data.dataset=synthetic", "model.type=softmax",
                              "train.algorithm=hogwild", epochs[i], NULL};
        support_run_asgd(&f->r, f->dir, args);
        assert_int_equal(f->r.status, 0);
    }
    snprintf(out, sizeof out, "%s/apart-report", f->dir);
    char *md = s_report_page(f, (const char *[]){dirs[0], dirs[1], NULL}, out);
    assert_null(strstr(md, "\n| same |"));
    for (int i = 0; i < 2; i++) {
        char row[64];
        snprintf(row, sizeof row, "\n| apart-%d/n/same | hogwild |", i);   /* the summaries */
        assert_non_null(strstr(md, row));
        snprintf(row, sizeof row, "\n| apart-%d/n/same | %d |", i, i + 1);   /* train.epochs */
        assert_non_null(strstr(md, row));
    }
    free(md);
}

/* A group of runs that differ in more than their seeds is one line or bar
 * of the report's figures all the same: the page says so, as asgd plot
 * does on stderr (the page said nothing). */
static void test_report_says_a_group_mixes_settings(void **state)
{
    support_fixture *f = *state;
    s_need_gnuplot();
    char runs[700], out[700];
    snprintf(runs, sizeof runs, "%s/report-mixed", f->out);
    s_two_runs(f, runs, "cluster.workers=1", "cluster.workers=2");
    snprintf(out, sizeof out, "%s/mixed-report", f->dir);
    char *md = s_report_page(f, (const char *[]){runs, NULL}, out);
    char *figures = strstr(md, "## Figures");
    assert_non_null(figures);
    assert_non_null(strstr(figures, "hogwild: its runs differ in [cluster] workers (1 and 2), "
                                    "not only in their seeds"));
    free(md);
    snprintf(runs, sizeof runs, "%s/seeds-only", f->out);   /* grid points: no word */
    s_two_runs(f, runs, "experiment.seed=1", "experiment.seed=2");
    md = s_report_page(f, (const char *[]){runs, NULL}, out);
    assert_null(strstr(md, "differ in"));
    free(md);
}

/* Marks the run under folder whose name holds `part` incomplete, as an
 * interrupted run leaves it; returns its folder in out. */
static void s_mark_incomplete(const char *folder, const char *part, char *out, size_t n)
{
    char pattern[900];
    snprintf(pattern, sizeof pattern, "%s/*/*%s*/summary.json", folder, part);
    glob_t found;
    assert_int_equal(glob(pattern, 0, NULL, &found), 0);
    assert_int_equal((int)found.gl_pathc, 1);
    cJSON *j = support_json_file(found.gl_pathv[0]);
    assert_non_null(j);
    cJSON_ReplaceItemInObjectCaseSensitive(j, "complete", cJSON_CreateFalse());
    char *text = cJSON_Print(j);
    support_write_file(found.gl_pathv[0], text);
    free(text);
    cJSON_Delete(j);
    snprintf(out, n, "%.*s", (int)(strrchr(found.gl_pathv[0], '/') - found.gl_pathv[0]),
             found.gl_pathv[0]);
    globfree(&found);
}

/* Incomplete runs are left out of figures and pages, and both say how many
 * and which (they were dropped without a word: a sweep cut short looked
 * like a smaller one); with nothing complete, the error names them. */
static void test_incomplete_runs_left_out_are_named(void **state)
{
    support_fixture *f = *state;
    char runs[700], cut[900], fig[800], out[700];
    snprintf(runs, sizeof runs, "%s/cut-short", f->out);
    s_two_runs(f, runs, "experiment.run_id=done", "experiment.run_id=stopped");
    s_mark_incomplete(runs, "stopped", cut, sizeof cut);
    char said[1200];
    snprintf(said, sizeof said, "1 incomplete run left out (%s)", cut);
    snprintf(out, sizeof out, "%s/cut-report", f->dir);
    char *md = s_report_page(f, (const char *[]){runs, NULL}, out);
    assert_non_null(strstr(md, "1 complete run in 1 group under"));
    assert_non_null(strstr(f->r.out, "(1 run)\n"));
    /* its warnings are its own, not asgd plot's, which draws its figures */
    assert_null(strstr(f->r.err, "asgd plot"));
    if (!strstr(md, said)) {
        fail_msg("the page does not say \"%s\"", said);
    }
    free(md);
    const char *only[] = {"plot", cut, "-o", "never.png", NULL};   /* nothing to draw */
    support_run_asgd(&f->r, f->dir, only);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "no complete run folders"));
    assert_non_null(strstr(f->r.err, said));
    s_need_gnuplot();
    snprintf(fig, sizeof fig, "%s/cut.png", f->dir);
    const char *plot[] = {"plot", runs, "-o", fig, NULL};
    support_run_asgd(&f->r, f->dir, plot);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "(1 run, 1 group;"));
    if (!strstr(f->r.err, said)) {
        fail_msg("asgd plot's stderr \"%s\" does not say \"%s\"", f->r.err, said);
    }
    /* a run whose summary.json was never written (a full disk) is one too:
     * it was passed over without a word */
    char path[1000];
    snprintf(path, sizeof path, "%s/summary.json", cut);
    assert_int_equal(unlink(path), 0);
    support_run_asgd(&f->r, f->dir, plot);
    assert_int_equal(f->r.status, 0);
    if (!strstr(f->r.err, said)) {
        fail_msg("without its summary: asgd plot's stderr \"%s\" does not say \"%s\"",
                 f->r.err, said);
    }
    /* nor one whose summary says complete beside an eval.csv with no row
     * to read: it was drawn as a run of no points, without a word */
    glob_t found;
    char pattern[900];
    snprintf(pattern, sizeof pattern, "%s/*/done/eval.csv", runs);
    assert_int_equal(glob(pattern, 0, NULL, &found), 0);
    support_write_file(found.gl_pathv[0], "time_s,epoch,updates,samples,test_loss,test_acc\n"
                       "garbage\n");
    support_run_asgd(&f->r, f->dir, plot);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "2 incomplete runs left out"));
    globfree(&found);
    support_run_asgd(&f->r, f->dir, (const char *[]){"plot", s_runs, "-o", fig, NULL});
    assert_int_equal(f->r.status, 0);
    assert_null(strstr(f->r.err, "incomplete"));   /* every run complete: no word */
}

/* More complete runs than asgd plot holds (PLOT_MAX_RUNS) are refused,
 * naming the limit: the runs beyond it were dropped without a word, and a
 * figure of the first 4,096 looked like one of all. */
static void test_more_runs_than_a_figure_holds_are_refused(void **state)
{
    support_fixture *f = *state;
    char one[700], many[700], cmd[2400], fig[800];
    snprintf(one, sizeof one, "%s/one-run", f->out);
    snprintf(many, sizeof many, "%s/many-runs", f->out);
    s_two_runs(f, one, "experiment.run_id=r", "experiment.run_id=s");
    /* run r (under its experiment's name) in 4,097 folders of their own */
    snprintf(cmd, sizeof cmd, "set -e; cd '%s'/*/r; for i in $(seq 0 %d); do "
             "mkdir -p '%s'/r$i; cp summary.json config.ini eval.csv '%s'/r$i/; done",
             one, PLOT_MAX_RUNS, many, many);
    assert_int_equal(system(cmd), 0);
    snprintf(fig, sizeof fig, "%s/many.png", f->dir);
    const char *plot[] = {"plot", many, "--kind", "throughput", "-o", fig, NULL};
    support_run_asgd(&f->r, f->dir, plot);
    assert_int_equal(f->r.status, 2);
    if (!strstr(f->r.err, "more than 4096 complete runs")) {
        fail_msg("asgd plot's stderr \"%s\" does not refuse 4,097 runs", f->r.err);
    }
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", many, one);   /* the other tests plot f->dir */
    assert_int_equal(system(cmd), 0);
}

/* The default job keeps a complete run only when it is of the config it
 * would run now (experiments/compare-rules/kept.py, given `asgd help config
 * CONFIG OVERRIDES`): a run of an edited experiments/RULE/config.ini was
 * kept, and results.md mixed it with runs of the new config. */
static void test_compare_rules_keeps_only_runs_of_the_config_now(void **state)
{
    support_fixture *f = *state;
    if (!support_python()) {
        skip();
    }
    char config[700], out_arg[800], run[800], resolved[700], script[600];
    snprintf(config, sizeof config, "%s/rule.ini", f->dir);
    snprintf(out_arg, sizeof out_arg, "experiment.out=%s/kept-config", f->out);
    snprintf(run, sizeof run, "%s/kept-config/cr/hogwild-seed1", f->out);
    snprintf(resolved, sizeof resolved, "%s/resolved.ini", f->dir);
    snprintf(script, sizeof script, "%s/experiments/compare-rules/kept.py", ASGD_SOURCE_DIR);
    const char *overrides[] = {out_arg, "experiment.name=cr", "experiment.run_id=hogwild-seed1",
                               "train.algorithm=hogwild", "experiment.seed=1",
                               "experiment.mode=sim", "eval.every=0.05"};
    enum { NOVERRIDES = sizeof overrides / sizeof overrides[0] };
    const char *train[4 + NOVERRIDES] = {"train", config};
    const char *help[5 + NOVERRIDES] = {"help", "config", config};
    for (int i = 0; i < NOVERRIDES; i++) {
        train[2 + i] = overrides[i];
        help[3 + i] = overrides[i];
    }
    support_write_file(config, "[data]\ndataset = synthetic\n[model]\ntype = softmax\n"
                               "[train]\nepochs = 1\nlr = 0.05\n");
    support_run_asgd(&f->r, f->dir, train);
    assert_int_equal(f->r.status, 0);
    const char *py[] = {script, run, resolved, NULL};
    for (int edited = 0; edited < 2; edited++) {
        if (edited) {
            support_write_file(config, "[data]\ndataset = synthetic\n[model]\ntype = softmax\n"
                                       "[train]\nepochs = 1\nlr = 0.04\n");
        }
        support_run_asgd(&f->r, f->dir, help);
        assert_int_equal(f->r.status, 0);
        assert_non_null(strstr(f->r.out, "algorithm = hogwild"));   /* the overrides count */
        support_write_file(resolved, f->r.out);
        support_run(&f->r, f->dir, support_python(), py);
        if (f->r.status != edited) {
            fail_msg("kept.py: exit %d (%s) for %s config", f->r.status, f->r.out,
                     edited ? "an edited" : "the same");
        }
    }
    assert_non_null(strstr(f->r.out, "[train] lr = 0.05, the config now gives 0.04"));
}

/* Makes dir and the folders above it. */
static void s_make_dirs(const char *dir)
{
    char path[900];
    snprintf(path, sizeof path, "%s", dir);
    for (char *p = path + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            mkdir(path, 0755);
            *p = '/';
        }
    }
    mkdir(path, 0755);
}

/* A complete run folder made by hand in dir (and the folders above it):
 * config.ini with [experiment] label (the default grouping) and more, the
 * fields of summary.json (what goes between its braces; "complete" added),
 * and eval.csv's rows (after its header); more and rows may be NULL. */
static void s_hand_run(const char *dir, const char *label, const char *more,
                       const char *summary, const char *rows)
{
    char path[1000], text[16384];
    s_make_dirs(dir);
    snprintf(path, sizeof path, "%s/config.ini", dir);
    snprintf(text, sizeof text, "[experiment]\nlabel = %s\nmode = sim\n%s", label,
             more ? more : "");
    support_write_file(path, text);
    snprintf(path, sizeof path, "%s/summary.json", dir);
    snprintf(text, sizeof text, "{\"label\": \"%s\", \"mode\": \"sim\", %s, \"complete\": true}",
             label, summary);
    support_write_file(path, text);
    snprintf(path, sizeof path, "%s/eval.csv", dir);
    snprintf(text, sizeof text, "time_s,epoch,updates,samples,test_loss,test_acc\n%s",
             rows ? rows : "1,0.1,4,64,1,0.5\n");
    support_write_file(path, text);
}

/* The rows of fig's data file g (STEM-g.dat) that are numbers, cols of
 * them each, into rows (at most max); their count. */
static int s_dat_rows(const char *fig, int g, int cols, double rows[][6], int max)
{
    char path[900];
    snprintf(path, sizeof path, "%s-%d.dat", fig, g);
    char *text = support_read_file(path), *save;
    assert_non_null(text);
    int n = 0;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#') {
            continue;
        }
        double *v = rows[n < max ? n : max - 1];
        int got = sscanf(line, "%lf %lf %lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3], &v[4],
                         &v[5]);
        if (got != cols) {
            fail_msg("%s: \"%s\" is not %d numbers", path, line, cols);
        }
        n++;
    }
    free(text);
    return n;
}

/* Each row of fig's data file g is the one expected (to 1e-9). */
static void s_expect_dat(const char *fig, int g, int cols, const double want[][6], int n)
{
    double got[64][6];
    int rows = s_dat_rows(fig, g, cols, got, 64);
    if (rows != n) {
        fail_msg("%s-%d.dat: %d rows, expected %d", fig, g, rows, n);
    }
    for (int i = 0; i < n; i++) {
        for (int c = 0; c < cols; c++) {
            if (!(fabs(got[i][c] - want[i][c]) <= 1e-9 * fmax(1, fabs(want[i][c])))) {
                fail_msg("%s-%d.dat row %d column %d: %.9g, expected %.9g", fig, g, i + 1,
                         c + 1, got[i][c], want[i][c]);
            }
        }
    }
}

/* Runs of three groups in root whose curves test_a_curve_is_the_mean_of_its_runs
 * gives: a (two seeds of different times and lengths), b (one run) and c
 * (one run of one evaluation). */
static void s_hand_curves(const char *root)
{
    char dir[800];
    /* columns proportional: time t, epoch t/10, updates 4t, samples 64t */
    snprintf(dir, sizeof dir, "%s/a1", root);
    s_hand_run(dir, "a", NULL, "\"seed\": 1", "1,0.1,4,64,1,0.2\n2,0.2,8,128,1,0.6\n"
               "2,0.2,8,128,1,0.1\n3,0.3,12,192,1,0.7\n");
    snprintf(dir, sizeof dir, "%s/x/y/z/a2", root);   /* four levels down */
    s_hand_run(dir, "a", NULL, "\"seed\": 2", "1.25,0.125,5,80,1,0.3\n2,0.2,8,128,1,0.42\n"
               "2.5,0.25,10,160,1,0.5\n");
    snprintf(dir, sizeof dir, "%s/b1", root);
    s_hand_run(dir, "b", NULL, "\"seed\": 1", "1,0.1,4,64,1,0.9\n2,0.2,8,128,1,0.95\n");
    snprintf(dir, sizeof dir, "%s/c1", root);   /* one evaluation: a point */
    s_hand_run(dir, "c", NULL, "\"seed\": 1", "1.5,0.15,6,96,1,0.8\n");
}

/* A last eval.csv row cut short (a crash, a full disk: "0.2" of 0.25) is
 * no evaluation, as summary.json's final accuracy does not count it: the
 * figure ended on it, at an accuracy the run never had. */
static void test_a_row_cut_short_is_no_point(void **state)
{
    support_fixture *f = *state;
    s_need_gnuplot();
    char root[700], dir[800], fig[800];
    snprintf(root, sizeof root, "%s/hand-cut", f->dir);
    snprintf(dir, sizeof dir, "%s/cut", root);
    s_hand_run(dir, "cut", NULL, "\"seed\": 1", "1,0.1,4,64,1,0.5\n2,0.2,8,128,1,0.2");
    snprintf(fig, sizeof fig, "%s/hand-cut.png", f->dir);
    s_plot_hand(f, root, fig, NULL);
    const double whole[1][6] = {{1, 0.5, 0.5, 0.5}};
    s_expect_dat(fig, 1, 4, whole, 1);
}

/* A convergence line is, at each x where one of its runs was evaluated up
 * to the shortest run's end, the mean, min and max of its runs, each read
 * between its own points; against time, epochs or updates alike, each from
 * its own column; where a run has two rows at one x, the later; a run
 * four folders down is found; another group's runs are not in the mean. */
static void test_a_curve_is_the_mean_of_its_runs(void **state)
{
    support_fixture *f = *state;
    s_need_gnuplot();
    char root[700], dir[800], fig[800];
    snprintf(root, sizeof root, "%s/hand-curves", f->dir);
    s_hand_curves(root);
    /* group a at t: a1 between its points (at t = 2, of its two rows the
     * last), a2 held at its first value before it, up to a2's end at 2.5 */
    const double a[4][6] = {{1, 0.25, 0.2, 0.3}, {1.25, 0.3, 0.3, 0.3}, {2, 0.26, 0.1, 0.42},
                            {2.5, 0.45, 0.4, 0.5}};
    const double b[2][6] = {{1, 0.9, 0.9, 0.9}, {2, 0.95, 0.95, 0.95}};
    const char *xs[] = {"time", "epoch", "updates"};
    const double scale[] = {1, 0.1, 4};
    for (int k = 0; k < 3; k++) {
        snprintf(fig, sizeof fig, "%s/hand-%s.png", f->dir, xs[k]);
        const char *const extra[] = {"--x", xs[k], NULL};
        s_plot_hand(f, root, fig, extra);
        assert_non_null(strstr(f->r.out, "4 runs, 3 groups"));
        double want_a[4][6], want_b[2][6];
        memcpy(want_a, a, sizeof a);
        memcpy(want_b, b, sizeof b);
        for (int i = 0; i < 4; i++) {
            want_a[i][0] *= scale[k];
        }
        for (int i = 0; i < 2; i++) {
            want_b[i][0] *= scale[k];
        }
        s_expect_dat(fig, 1, 4, (const double (*)[6])want_a, 4);
        s_expect_dat(fig, 2, 4, (const double (*)[6])want_b, 2);
        const double want_c[1][6] = {{1.5 * scale[k], 0.8, 0.8, 0.8}};
        s_expect_dat(fig, 3, 4, want_c, 1);
    }
    /* a run of more points than a curve holds is thinned evenly, its last
     * point kept: the line ends where the run did */
    snprintf(root, sizeof root, "%s/hand-long", f->dir);
    snprintf(dir, sizeof dir, "%s/long", root);
    s_hand_run(dir, "long", NULL, "\"seed\": 1", NULL);   /* its eval.csv replaced: */
    char *text = malloc(4001 * 48), *at = text, path[900];
    assert_non_null(text);
    at += sprintf(at, "time_s,epoch,updates,samples,test_loss,test_acc\n");
    for (int t = 1; t <= 4001; t++) {
        at += sprintf(at, "%d,%g,%d,%d,1,0.5\n", t, t / 1000.0, t, 64 * t);
    }
    snprintf(path, sizeof path, "%s/eval.csv", dir);
    support_write_file(path, text);
    free(text);
    snprintf(fig, sizeof fig, "%s/hand-long.png", f->dir);
    s_plot_hand(f, root, fig, NULL);
    static double got[2100][6];
    int n = s_dat_rows(fig, 1, 4, got, 2100);
    assert_true(n > 1000 && n <= 2000);
    assert_true(got[0][0] == 1);
    assert_true(got[n - 1][0] == 4001);
}

/* A simulated run's final evaluation can share its time with a periodic
 * one (its last update landing on an evaluation's tick): the curve ends at
 * the final row, and a target only it reaches is reached then (the later
 * row was dropped: "never reaches 0.7", the line ending at 0.6). */
static void test_a_final_row_at_a_periodic_ones_time_counts(void **state)
{
    support_fixture *f = *state;
    s_need_gnuplot();
    char root[700], dir[800], fig[800];
    snprintf(root, sizeof root, "%s/hand-tie", f->dir);
    snprintf(dir, sizeof dir, "%s/t1", root);
    s_hand_run(dir, "t", NULL, "\"seed\": 1",
               "1,0.1,4,64,1,0.5\n2,0.2,8,128,1,0.6\n2,0.2,9,144,1,0.71\n");
    snprintf(fig, sizeof fig, "%s/tie.png", f->dir);
    s_plot_hand(f, root, fig, NULL);
    const double curve[2][6] = {{1, 0.5, 0.5, 0.5}, {2, 0.71, 0.71, 0.71}};
    s_expect_dat(fig, 1, 4, curve, 2);
    snprintf(fig, sizeof fig, "%s/tie-tta.png", f->dir);
    const char *const tta[] = {"--kind", "time-to-accuracy", "--target", "0.7", NULL};
    s_plot_hand(f, root, fig, tta);
    char path[900];
    snprintf(path, sizeof path, "%s-1.dat", fig);
    char *dat = support_read_file(path);
    assert_non_null(dat);
    double bar = 0;
    char *row = strstr(dat, "\"t\" ");
    assert_non_null(row);
    assert_int_equal(sscanf(row + 4, "%lf", &bar), 1);
    if (bar != 2) {
        fail_msg("time to 0.7: %g, expected 2 (%s)", bar, dat);
    }
    free(dat);
}

/* Runs in root of samples/s at 1 to 4 workers, in two groups of different
 * fewest workers (b's folders first), one run without a number. */
static void s_hand_scaling(const char *root)
{
    char dir[800], summary[200];
    const struct { const char *name, *label; int workers; const char *sps; } runs[] = {
        {"p-a-2", "a", 2, "300"}, {"p-a-4", "a", 4, "900"},
        {"q-b-1-s1", "b", 1, "100"}, {"q-b-1-s2", "b", 1, "200"},
        {"q-b-4-s1", "b", 4, "500"}, {"q-b-4-s2", "b", 4, "700"},
        {"r-b-2", "b", 2, "null"},   /* no number: no point at 2 */
    };
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        snprintf(dir, sizeof dir, "%s/%s", root, runs[i].name);
        snprintf(summary, sizeof summary, "\"seed\": %zu, \"workers\": %d, \"samples_per_s\": %s",
                 i, runs[i].workers, runs[i].sps);
        s_hand_run(dir, runs[i].label, NULL, summary, NULL);
    }
}

/* A scaling point is the mean, min and max of its group's runs at that x
 * alone, with a finite value (one without is left out and said); the
 * speed-up is each point's mean over the group's first, beside the ideal
 * x over the first x; groups of different fewest workers have each their
 * own ideal line (here the group of more workers first). */
static void test_scaling_points_are_means_over_seeds(void **state)
{
    support_fixture *f = *state;
    s_need_gnuplot();
    char root[700], fig[800];
    snprintf(root, sizeof root, "%s/hand-scaling", f->dir);
    s_hand_scaling(root);
    snprintf(fig, sizeof fig, "%s/hand-scaling.png", f->dir);
    const char *const extra[] = {"--kind", "scaling", NULL};
    s_plot_hand(f, root, fig, extra);
    assert_non_null(strstr(f->r.err, "b: 1 of 5 runs have no finite samples_per_s"));
    /* x mean min max speedup ideal */
    const double a[2][6] = {{2, 300, 300, 300, 1, 1}, {4, 900, 900, 900, 3, 2}};
    const double b[2][6] = {{1, 150, 100, 200, 1, 1}, {4, 600, 500, 700, 4, 4}};
    s_expect_dat(fig, 1, 6, a, 2);
    s_expect_dat(fig, 2, 6, b, 2);
    char path[900];
    snprintf(path, sizeof path, "%s.gp", fig);
    char *gp = support_read_file(path);
    assert_non_null(gp);
    assert_non_null(strstr(gp, "one_ideal = 0"));
    free(gp);
}

/* A 64-bin staleness histogram as JSON, n pushes in bin 63 (63 and more). */
static void s_open_histogram(char *out, size_t size, int n)
{
    int at = snprintf(out, size, "[");
    for (int i = 0; i < 64; i++) {
        at += snprintf(out + at, size - (size_t)at, "%s%d", i ? ", " : "", i == 63 ? n : 0);
    }
    snprintf(out + at, size - (size_t)at, "]");
}

/* A staleness CDF pools its group's runs' histograms (only theirs) and
 * runs one point past the last staleness with pushes; 99.9% reached
 * exactly counts as reached, and the axis ends one past the staleness
 * where the slowest group reached it; the label's largest staleness is
 * the largest of every run, not the last one read. */
static void test_staleness_cdf_pools_a_groups_runs(void **state)
{
    support_fixture *f = *state;
    s_need_gnuplot();
    char root[700], dir[800], fig[800], path[900];
    snprintf(root, sizeof root, "%s/hand-staleness", f->dir);
    snprintf(dir, sizeof dir, "%s/s1-a", root);
    s_hand_run(dir, "a", NULL, "\"seed\": 1, \"staleness_max\": 2, "
               "\"staleness_histogram\": [0, 500, 1]", NULL);
    snprintf(dir, sizeof dir, "%s/s2-a", root);
    s_hand_run(dir, "a", NULL, "\"seed\": 2, \"staleness_max\": 1, "
               "\"staleness_histogram\": [0, 499]", NULL);
    snprintf(dir, sizeof dir, "%s/s3-b", root);
    s_hand_run(dir, "b", NULL, "\"seed\": 1, \"staleness_max\": 0, "
               "\"staleness_histogram\": [10]", NULL);
    snprintf(fig, sizeof fig, "%s/hand-staleness.png", f->dir);
    const char *const extra[] = {"--kind", "staleness", NULL};
    s_plot_hand(f, root, fig, extra);
    const double a[4][6] = {{0, 0}, {1, 0.999}, {2, 1}, {3, 1}};   /* 999 of 1000 by 1 */
    const double b[2][6] = {{0, 1}, {1, 1}};
    s_expect_dat(fig, 1, 2, a, 4);
    s_expect_dat(fig, 2, 2, b, 2);
    snprintf(path, sizeof path, "%s.gp", fig);
    char *gp = support_read_file(path);
    assert_non_null(gp);
    assert_non_null(strstr(gp, "\nxmax = 2\n"));
    assert_non_null(strstr(gp, "xlabel = 'staleness (updates; 99.9% shown; max 2)'"));
    free(gp);
    /* two runs past the last bin: the larger of their largest, read first */
    char summary[600], histogram[400];
    snprintf(root, sizeof root, "%s/hand-open", f->dir);
    s_open_histogram(histogram, sizeof histogram, 5);
    snprintf(summary, sizeof summary, "\"seed\": 1, \"staleness_max\": 150, "
             "\"staleness_histogram\": %s", histogram);
    snprintf(dir, sizeof dir, "%s/o1", root);
    s_hand_run(dir, "c", NULL, summary, NULL);
    s_open_histogram(histogram, sizeof histogram, 1);
    snprintf(summary, sizeof summary, "\"seed\": 2, \"staleness_max\": 70, "
             "\"staleness_histogram\": %s", histogram);
    snprintf(dir, sizeof dir, "%s/o2", root);
    s_hand_run(dir, "c", NULL, summary, NULL);
    snprintf(fig, sizeof fig, "%s/hand-open.png", f->dir);
    s_plot_hand(f, root, fig, extra);
    snprintf(path, sizeof path, "%s.gp", fig);
    gp = support_read_file(path);
    assert_non_null(gp);
    assert_non_null(strstr(gp, "max 150)'"));
    free(gp);
}

/* Runs in root of four groups for bars at test accuracy 0.5: fast (both
 * reach it, one exactly), slow (one of two), lucky (one of two, before
 * fast), never. */
static void s_hand_bars(const char *root)
{
    char dir[800], summary[200];
    const struct { const char *name, *label, *rows; int sps; } runs[] = {
        {"g1-r1", "slow", "1,0.1,4,64,1,0.2\n10,1,40,640,1,0.5\n", 50},
        {"g1-r2", "slow", "1,0.1,4,64,1,0.2\n10,1,40,640,1,0.4\n", 70},
        {"g2-r1", "fast", "1,0.1,4,64,1,0.3\n2,0.2,8,128,1,0.5\n3,0.3,12,192,1,0.7\n", 100},
        {"g2-r2", "fast", "1,0.1,4,64,1,0.3\n4,0.4,16,256,1,0.6\n", 300},
        {"g3-r1", "never", "1,0.1,4,64,1,0.1\n", 1000},
        {"g4-r1", "lucky", "1,0.1,4,64,1,0.6\n", 500},
        {"g4-r2", "lucky", "1,0.1,4,64,1,0.2\n", 500},
    };
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        snprintf(dir, sizeof dir, "%s/%s", root, runs[i].name);
        snprintf(summary, sizeof summary, "\"seed\": %zu, \"samples_per_s\": %d", i,
                 runs[i].sps);
        s_hand_run(dir, runs[i].label, NULL, summary, runs[i].rows);
    }
}

/* A bar is the mean of its group's runs' values with their min and max:
 * time to the target is the first evaluation at it or above (exactly at
 * it counts); a group some of whose runs miss says how many of its own
 * runs reached it; the least time first of the groups whose every run
 * reached it, then those of which some did (lucky's 1 s, of one run of
 * two, came ahead of fast, which always got there), groups that never
 * reach it last; samples/s the most first. */
static void test_bars_are_means_over_seeds(void **state)
{
    support_fixture *f = *state;
    s_need_gnuplot();
    char root[700], fig[800], path[900];
    snprintf(root, sizeof root, "%s/hand-bars", f->dir);
    s_hand_bars(root);
    snprintf(fig, sizeof fig, "%s/hand-tta.png", f->dir);
    const char *const tta[] = {"--kind", "time-to-accuracy", "--target", "0.5", NULL};
    s_plot_hand(f, root, fig, tta);
    snprintf(path, sizeof path, "%s-1.dat", fig);
    char *dat = support_read_file(path);
    assert_non_null(dat);
    assert_string_equal(dat, "# group mean min max reached\n\"fast\" 3 2 4 1\n"
                             "\"lucky (1/2 reached)\" 1 1 1 1\n"
                             "\"slow (1/2 reached)\" 10 10 10 1\n\"never\" 0 0 0 0\n");
    free(dat);
    snprintf(fig, sizeof fig, "%s/hand-throughput.png", f->dir);
    const char *const throughput[] = {"--kind", "throughput", NULL};
    s_plot_hand(f, root, fig, throughput);
    snprintf(path, sizeof path, "%s-1.dat", fig);
    dat = support_read_file(path);
    assert_non_null(dat);
    assert_string_equal(dat, "# group mean min max reached\n\"never\" 1000 1000 1000 1\n"
                             "\"lucky\" 500 500 500 1\n\"fast\" 200 100 300 1\n"
                             "\"slow\" 60 50 70 1\n");
    free(dat);
    /* runs without samples/s are said to be so, not to miss a target */
    snprintf(root, sizeof root, "%s/hand-unmeasured", f->dir);
    const char *const unmeasured[][3] = {{"a1", "a", "100"}, {"a2", "a", "null"},
                                         {"b1", "b", "null"}};
    for (int i = 0; i < 3; i++) {
        char dir[800], summary[100];
        snprintf(dir, sizeof dir, "%s/%s", root, unmeasured[i][0]);
        snprintf(summary, sizeof summary, "\"seed\": %d, \"samples_per_s\": %s", i,
                 unmeasured[i][2]);
        s_hand_run(dir, unmeasured[i][1], NULL, summary, NULL);
    }
    s_plot_hand(f, root, fig, throughput);
    dat = support_read_file(path);
    assert_non_null(dat);
    assert_string_equal(dat, "# group mean min max reached\n\"a (1/2 measured)\" 100 100 100 1\n"
                             "\"b\" 0 0 0 0\n");
    free(dat);
    assert_non_null(strstr(f->r.err, "b has no samples/s in any run (shown as not measured)"));
    assert_null(strstr(f->r.err, "reach"));
}

/* The report's table of runs gives each column its own summary field, to
 * its own digits (a time, a loss and samples/s under 1000 to 4
 * significant ones, a staleness under 100 to 3: a least-squares run's loss
 * of 5.06e-05 read 0.0001, and 3e-5 read 0.0000, as if every rule had
 * fitted exactly); its table of differences lists a key in which any run
 * differs from the first. */
static void test_report_tables_hold_each_runs_numbers(void **state)
{
    support_fixture *f = *state;
    char root[700], dir[800], out[800];
    snprintf(root, sizeof root, "%s/hand-report", f->dir);
    const char *common = "\"algorithm\": \"hogwild\", \"workers\": 4, \"diverged\": false, "
                         "\"best_test_acc\": 0.9, \"final_test_loss\": 0.345678, "
                         "\"train_time_s\": 100, \"staleness_max\": 7";
    char summary[600];
    snprintf(summary, sizeof summary, "%s, \"seed\": 1, \"final_test_acc\": 0.81234, "
             "\"time_s\": 123.456, \"samples_per_s\": 1234.56, \"staleness_mean\": 1.5", common);
    snprintf(dir, sizeof dir, "%s/r1", root);
    s_hand_run(dir, "hogwild", "[train]\nlr = 0.05\n", summary, NULL);
    snprintf(summary, sizeof summary, "%s, \"seed\": 1, \"final_test_acc\": 0.5, "
             "\"time_s\": 0.0115, \"samples_per_s\": 99.5, \"staleness_mean\": 0.125", common);
    snprintf(dir, sizeof dir, "%s/r2", root);
    s_hand_run(dir, "hogwild", "[train]\nlr = 0.1\n", summary, NULL);
    snprintf(dir, sizeof dir, "%s/r3", root);
    s_hand_run(dir, "hogwild", "[train]\nlr = 0.05\n", summary, NULL);
    snprintf(summary, sizeof summary, "\"algorithm\": \"hogwild\", \"workers\": 4, "
             "\"diverged\": false, \"best_test_acc\": 0.9, \"final_test_loss\": 5.0578e-05, "
             "\"seed\": 1, \"final_test_acc\": 0.5, \"time_s\": 2, \"samples_per_s\": 0.4, "
             "\"staleness_mean\": 0.004");
    snprintf(dir, sizeof dir, "%s/r4", root);
    s_hand_run(dir, "hogwild", "[train]\nlr = 0.05\n", summary, NULL);
    /* a loss of 8.8e65 was printed in 66 digits */
    snprintf(summary, sizeof summary, "\"algorithm\": \"hogwild\", \"workers\": 4, "
             "\"diverged\": false, \"best_test_acc\": 0.9, \"final_test_loss\": 8.79572507e+65, "
             "\"seed\": 1, \"final_test_acc\": 0.5, \"time_s\": 2, \"samples_per_s\": 12345678.9, "
             "\"staleness_mean\": 0.004");
    snprintf(dir, sizeof dir, "%s/r5", root);
    s_hand_run(dir, "hogwild", "[train]\nlr = 0.05\n", summary, NULL);
    snprintf(out, sizeof out, "%s/hand-report-page", f->dir);
    const char *const dirs[] = {root, NULL};
    char *md = s_report_page(f, dirs, out);
    const char *want[] = {
        "| r1 | hogwild | sim | 4 | 0.8123 | 0.9000 | 0.3457 | 123.5 | 1235 | 1.5 | no |\n",
        "| r2 | hogwild | sim | 4 | 0.5000 | 0.9000 | 0.3457 | 0.0115 | 99.5 | 0.125 | no |\n",
        "| r4 | hogwild | sim | 4 | 0.5000 | 0.9000 | 5.058e-05 | 2 | 0.4 | 0.004 | no |\n",
        "| r5 | hogwild | sim | 4 | 0.5000 | 0.9000 | 8.79573e+65 | 2 | 12345679 | 0.004 | no "
        "|\n",
    };
    for (int i = 0; i < 4; i++) {
        if (!strstr(md, want[i])) {
            fail_msg("no row %s in\n%s", want[i], md);
        }
    }
    char *differs = strstr(md, "## What differs");
    assert_non_null(differs);
    assert_non_null(strstr(differs, "| run | train.lr |"));
    assert_non_null(strstr(differs, "| r2 | 0.1 |"));
    free(md);
}

/* What gnuplot draws from the script beside f->dir/fig (its points, as
 * `set table` writes them: every curve in drawing order); caller frees. */
static char *s_drawn(support_fixture *f, const char *fig)
{
    char table[900], set[1000], script[900];
    snprintf(table, sizeof table, "%s.table", fig);
    snprintf(set, sizeof set, "set table '%s'", table);
    snprintf(script, sizeof script, "%s.gp", fig);
    const char *args[] = {"-e", set, script, NULL};
    support_run(&f->r, f->dir, "gnuplot", args);
    assert_int_equal(f->r.status, 0);
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", f->dir, table);
    char *text = support_read_file(path);
    assert_non_null(text);
    return text;
}

/* Curve nth (from 0) of a table, counted across its plots (a multiplot's
 * second counts from 0 again): its "# Curve K of N" line; NULL without. */
static const char *s_curve_at(const char *table, int nth)
{
    int k = -1;
    for (const char *at = strstr(table, "# Curve "); at; at = strstr(at + 1, "# Curve ")) {
        if (isdigit((unsigned char)at[8]) && ++k == nth) {   /* not "# Curve title" */
            return at;
        }
    }
    return NULL;
}

/* The first n points of curve nth (from 0) of a table, cols numbers each,
 * are as want (to 1e-9). */
static void s_expect_curve(const char *table, int nth, int cols, const double want[][6], int n)
{
    const char *at = s_curve_at(table, nth);
    if (!at) {
        fail_msg("no curve %d in the table:\n%s", nth, table);
    }
    int rows = 0;
    for (at = strchr(at, '\n'); at && at[1] && !(strncmp(at + 1, "# Curve ", 8) == 0 &&
                                                  isdigit((unsigned char)at[9]));
         at = strchr(at + 1, '\n')) {
        double v[6];
        char *end;
        const char *p = at + 1;
        if (*p == '#' || *p == '\n') {
            continue;
        }
        for (int c = 0; c < cols; c++, p = end) {
            v[c] = strtod(p, &end);
            assert_true(end != p);
        }
        if (rows == n) {
            break;
        }
        for (int c = 0; c < cols; c++) {
            double w = want[rows][c];
            if (!(fabs(v[c] - w) <= 1e-9 * fmax(1, fabs(w)))) {
                fail_msg("curve %d point %d column %d: %.9g, expected %.9g", nth, rows + 1,
                         c + 1, v[c], w);
            }
        }
        rows++;
    }
    if (rows < n) {
        fail_msg("curve %d has %d points, expected %d:\n%s", nth, rows, n, table);
    }
}

/* The figures draw the columns their data files hold as their templates
 * say: a convergence line its mean and its band min to max; the speed-up
 * panel each group's speed-up and its ideal; a bar its mean, and its
 * whisker from its min up by max - min (what gnuplot draws, read back
 * through `set table`: the .dat files can be right and the figure not). */
static void test_figures_draw_their_columns(void **state)
{
    support_fixture *f = *state;
    s_need_gnuplot();
    char root[700], fig[800];
    snprintf(root, sizeof root, "%s/hand-curves", f->dir);
    s_hand_curves(root);
    snprintf(fig, sizeof fig, "%s/drawn-curves.png", f->dir);
    s_plot_hand(f, root, fig, NULL);
    char *table = s_drawn(f, "drawn-curves.png");
    /* the bands (x min max), then the lines (x mean), of a, b and c */
    const double band[4][6] = {{1, 0.2, 0.3}, {1.25, 0.3, 0.3}, {2, 0.1, 0.42}, {2.5, 0.4, 0.5}};
    const double line[4][6] = {{1, 0.25}, {1.25, 0.3}, {2, 0.26}, {2.5, 0.45}};
    s_expect_curve(table, 0, 3, band, 4);
    s_expect_curve(table, 3, 2, line, 4);
    free(table);
    snprintf(root, sizeof root, "%s/hand-scaling", f->dir);
    s_hand_scaling(root);
    snprintf(fig, sizeof fig, "%s/drawn-scaling.png", f->dir);
    const char *const scaling[] = {"--kind", "scaling", NULL};
    s_plot_hand(f, root, fig, scaling);
    table = s_drawn(f, "drawn-scaling.png");
    /* samples/s of a and b, their speed-ups, their ideal lines */
    const double a_sps[2][6] = {{2, 300}, {4, 900}}, b_sps[2][6] = {{1, 150}, {4, 600}};
    const double a_up[2][6] = {{2, 1}, {4, 3}}, b_up[2][6] = {{1, 1}, {4, 4}};
    const double a_ideal[2][6] = {{2, 1}, {4, 2}};
    s_expect_curve(table, 0, 2, a_sps, 2);
    s_expect_curve(table, 1, 2, b_sps, 2);
    s_expect_curve(table, 2, 2, a_up, 2);
    s_expect_curve(table, 3, 2, b_up, 2);
    s_expect_curve(table, 4, 2, a_ideal, 2);
    s_expect_curve(table, 5, 2, b_up, 2);
    free(table);
    snprintf(root, sizeof root, "%s/hand-bars", f->dir);
    s_hand_bars(root);
    snprintf(fig, sizeof fig, "%s/drawn-bars.png", f->dir);
    const char *const tta[] = {"--kind", "time-to-accuracy", "--target", "0.5", NULL};
    s_plot_hand(f, root, fig, tta);
    table = s_drawn(f, "drawn-bars.png");
    /* fast 3 (2 to 4), lucky 1, slow 10, never: no bar; fast's whisker
     * (x y dx dy) */
    const double boxes[4][6] = {{0, 3}, {1, 1}, {2, 10}, {3, 0}};
    const double whisker[1][6] = {{0, 2, 0, 2}};
    s_expect_curve(table, 0, 2, boxes, 4);
    s_expect_curve(table, 1, 4, whisker, 1);
    free(table);
}

/* Where every group has the same fewest workers, the one ideal line runs
 * as far as any group's workers: it was drawn through the first group's
 * points alone, so a first group of one worker count drew no line at all
 * beside a legend saying "ideal", and a shorter one cut it short. */
static void test_the_one_ideal_line_spans_every_group(void **state)
{
    support_fixture *f = *state;
    s_need_gnuplot();
    char root[700], dir[800], fig[800], summary[200];
    snprintf(root, sizeof root, "%s/hand-one-ideal", f->dir);
    const struct { const char *name, *label; int workers, sps; } runs[] = {
        {"a-1", "a", 1, 100}, {"b-1", "b", 1, 50}, {"b-2", "b", 2, 90}, {"b-4", "b", 4, 160},
    };
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        snprintf(dir, sizeof dir, "%s/%s", root, runs[i].name);
        snprintf(summary, sizeof summary, "\"seed\": %zu, \"workers\": %d, \"samples_per_s\": %d",
                 i, runs[i].workers, runs[i].sps);
        s_hand_run(dir, runs[i].label, NULL, summary, NULL);
    }
    snprintf(fig, sizeof fig, "%s/one-ideal-spans.png", f->dir);
    const char *const scaling[] = {"--kind", "scaling", NULL};
    s_plot_hand(f, root, fig, scaling);
    char *table = s_drawn(f, "one-ideal-spans.png");
    /* samples/s of a and b, their speed-ups, then the black ideal: 1 to 4 */
    const double ideal[3][6] = {{1, 1}, {2, 2}, {4, 4}};
    s_expect_curve(table, 4, 2, ideal, 3);
    free(table);
}

/* A staleness CDF is of the pushes its runs recorded: a group whose runs
 * have no histogram (or one of no pushes: sequential) has no line and is
 * said (it drew a CDF of 1 from 0, every push fresh, for a hogwild run
 * of mean staleness 3 and largest 9), nor counts in the axis or the
 * title's count; a figure with no pushes at all is refused. */
static void test_a_staleness_cdf_needs_recorded_pushes(void **state)
{
    support_fixture *f = *state;
    s_need_gnuplot();
    char root[700], dir[800], fig[800], path[900];
    snprintf(root, sizeof root, "%s/hand-no-histogram", f->dir);
    snprintf(dir, sizeof dir, "%s/h1", root);
    s_hand_run(dir, "hogwild", NULL, "\"seed\": 1, \"staleness_mean\": 3, \"staleness_max\": 9",
               NULL);
    snprintf(dir, sizeof dir, "%s/q1", root);
    s_hand_run(dir, "sequential", NULL, "\"seed\": 1, \"staleness_max\": 0, "
               "\"staleness_histogram\": [0]", NULL);
    snprintf(fig, sizeof fig, "%s/no-histogram.png", f->dir);
    const char *args[] = {"plot", root, "-o", fig, "--kind", "staleness", NULL};
    support_run_asgd(&f->r, f->dir, args);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "no run recorded the staleness of a push"));
    snprintf(dir, sizeof dir, "%s/s1", root);   /* a group with pushes, two seeds */
    s_hand_run(dir, "sync", NULL, "\"seed\": 1, \"staleness_max\": 0, "
               "\"staleness_histogram\": [4]", NULL);
    snprintf(dir, sizeof dir, "%s/s2", root);
    s_hand_run(dir, "sync", NULL, "\"seed\": 2, \"staleness_max\": 1, "
               "\"staleness_histogram\": [3, 1]", NULL);
    snprintf(dir, sizeof dir, "%s/h2", root);   /* hogwild's other seed recorded its pushes */
    s_hand_run(dir, "hogwild", NULL, "\"seed\": 2, \"staleness_max\": 2, "
               "\"staleness_histogram\": [1, 0, 1]", NULL);
    const char *const extra[] = {"--kind", "staleness", NULL};
    s_plot_hand(f, root, fig, extra);
    assert_non_null(strstr(f->r.err, "hogwild: 1 of 2 runs recorded no pushes' staleness "
                                     "(left out of its line)"));
    assert_non_null(strstr(f->r.err, "sequential: 1 of 1 runs recorded no pushes' staleness "
                                     "(no line)"));
    char *gp = support_read_file((snprintf(path, sizeof path, "%s.gp", fig), path));
    assert_non_null(gp);
    assert_non_null(strstr(gp, "runs pooled"));   /* 1 run in hogwild's line, 2 in sync's */
    assert_non_null(strstr(gp, "1-2 runs pooled"));
    assert_non_null(strstr(gp, "xlabel = 'staleness (updates)'"));   /* the seed left out: 9 */
    free(gp);
    const double hogwild[4][6] = {{0, 0.5}, {1, 0.5}, {2, 1}, {3, 1}};
    const double sync[3][6] = {{0, 0.875}, {1, 1}, {2, 1}};
    int g_hogwild = 0, g_sync = 0, g_sequential = 0;
    for (int g = 1; g <= 3; g++) {
        snprintf(path, sizeof path, "%s-%d.dat", fig, g);
        char *dat = support_read_file(path);
        assert_non_null(dat);
        g_hogwild = strncmp(dat, "# hogwild", 9) == 0 ? g : g_hogwild;
        g_sync = strncmp(dat, "# sync", 6) == 0 ? g : g_sync;
        g_sequential = strncmp(dat, "# sequential", 12) == 0 ? g : g_sequential;
        free(dat);
    }
    assert_true(g_hogwild && g_sync && g_sequential);
    s_expect_dat(fig, g_hogwild, 2, hogwild, 4);
    s_expect_dat(fig, g_sync, 2, sync, 3);
    s_expect_dat(fig, g_sequential, 2, NULL, 0);
}

/* A row whose test loss is not finite is of a diverged model, whose
 * accuracy is whatever argmax makes of NaN parameters: it is no point of
 * a curve, and reaches no target (a NaN-loss row at 0.95 made a run the
 * fastest to 0.85; summary.json's best_test_acc already left it out). */
static void test_a_diverged_models_rows_are_not_points(void **state)
{
    support_fixture *f = *state;
    s_need_gnuplot();
    char root[700], dir[800], fig[800];
    snprintf(root, sizeof root, "%s/hand-nan-rows", f->dir);
    snprintf(dir, sizeof dir, "%s/c1", root);
    s_hand_run(dir, "c", NULL, "\"seed\": 1, \"diverged\": true",
               "1,0.1,4,64,0.9,0.5\n2,0.2,8,128,nan,0.95\n3,0.3,12,192,inf,0.9\n");
    snprintf(dir, sizeof dir, "%s/d1", root);
    s_hand_run(dir, "d", NULL, "\"seed\": 1", "1,0.1,4,64,0.9,0.5\n4,0.4,16,256,0.4,0.86\n");
    snprintf(fig, sizeof fig, "%s/nan-rows.png", f->dir);
    s_plot_hand(f, root, fig, NULL);
    const double c[1][6] = {{1, 0.5, 0.5, 0.5}};
    s_expect_dat(fig, 1, 4, c, 1);
    snprintf(fig, sizeof fig, "%s/nan-rows-tta.png", f->dir);
    const char *const tta[] = {"--kind", "time-to-accuracy", "--target", "0.85", NULL};
    s_plot_hand(f, root, fig, tta);
    char path[900];
    snprintf(path, sizeof path, "%s-1.dat", fig);
    char *dat = support_read_file(path);
    assert_non_null(dat);
    assert_non_null(strstr(dat, "\"c (diverged)\" 0 0 0 0\n"));
    assert_non_null(strstr(dat, "\"d\" 4 4 4 1\n"));
    free(dat);
}

/* eval.csv is read by its columns' names: a file whose header is not
 * asgd's (columns in another order) is no run to draw (its loss was drawn
 * as accuracy), and is named among those left out. */
static void test_an_eval_csv_of_other_columns_is_left_out(void **state)
{
    support_fixture *f = *state;
    char root[700], dir[800], fig[800], path[900];
    snprintf(root, sizeof root, "%s/hand-columns", f->dir);
    snprintf(dir, sizeof dir, "%s/ours", root);
    s_hand_run(dir, "a", NULL, "\"seed\": 1", "1,0.1,4,64,0.3,0.9\n");
    snprintf(dir, sizeof dir, "%s/theirs", root);
    s_hand_run(dir, "a", NULL, "\"seed\": 2", NULL);
    snprintf(path, sizeof path, "%s/eval.csv", dir);
    support_write_file(path, "time_s,epoch,updates,samples,test_acc,test_loss\n"
                             "0,0,0,0,0.1,2.3\n1,0.1,4,64,0.9,0.3\n");
    snprintf(fig, sizeof fig, "%s/columns.png", f->dir);
    const char *args[] = {"plot", root, "-o", fig, NULL};
    support_run_asgd(&f->r, f->dir, args);
    if (!support_have("gnuplot")) {
        return;   /* the figure cannot be drawn; what is left out is said before */
    }
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "1 run, 1 group;"));
    assert_non_null(strstr(f->r.err, "1 incomplete run left out ("));
    assert_non_null(strstr(f->r.err, "theirs"));
    const double a[1][6] = {{1, 0.9, 0.9, 0.9}};
    s_expect_dat(fig, 1, 4, a, 1);
}

/* A run whose config.ini cannot be read has no value of a config key to
 * group by: it is grouped as "(no KEY)", and said (two such runs of
 * different rules were averaged as one line without a word); the title
 * counts the runs a line draws, not every run of its group. */
static void test_runs_without_a_config_are_said(void **state)
{
    support_fixture *f = *state;
    s_need_gnuplot();
    char root[700], dir[800], fig[800], path[900];
    snprintf(root, sizeof root, "%s/hand-no-config", f->dir);
    snprintf(dir, sizeof dir, "%s/n1", root);
    s_hand_run(dir, "sync", NULL, "\"seed\": 1", NULL);
    snprintf(path, sizeof path, "%s/config.ini", dir);
    unlink(path);
    snprintf(dir, sizeof dir, "%s/t1", root);   /* a run with no point: not in the count */
    s_hand_run(dir, "two", NULL, "\"seed\": 1", "1,0.1,4,64,1,0.5\n");
    snprintf(dir, sizeof dir, "%s/t2", root);
    s_hand_run(dir, "two", NULL, "\"seed\": 2", "1,0.1,4,64,1,nan\n");
    snprintf(fig, sizeof fig, "%s/no-config.png", f->dir);
    s_plot_hand(f, root, fig, NULL);
    assert_non_null(strstr(f->r.err, "n1: "));
    assert_non_null(strstr(f->r.err, "grouped as \"(no experiment.label)\""));
    snprintf(path, sizeof path, "%s.gp", fig);
    char *gp = support_read_file(path);
    assert_non_null(gp);
    assert_null(strstr(gp, "mean of"));   /* one run behind each line drawn */
    free(gp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_kind_in_every_format),
        cmocka_unit_test(test_script_redraws_the_figure),
        cmocka_unit_test(test_log_axes_leave_out_zero),
        cmocka_unit_test(test_runs_too_deep_are_said),
        cmocka_unit_test(test_a_line_cut_by_a_diverged_run_is_said),
        cmocka_unit_test(test_updates_that_went_back_are_said),
        cmocka_unit_test(test_a_number_however_written_is_one_value),
        cmocka_unit_test(test_a_final_row_at_a_periodic_ones_time_counts),
        cmocka_unit_test(test_diverged_runs_are_marked),
        cmocka_unit_test(test_diverged_bars_are_marked),
        cmocka_unit_test(test_the_untrained_model_reaches_no_target),
        cmocka_unit_test(test_numbers_in_order),
        cmocka_unit_test(test_a_row_cut_short_is_no_point),
        cmocka_unit_test(test_scaling_skips_a_nan),
        cmocka_unit_test(test_one_point_or_no_bar_has_a_range),
        cmocka_unit_test(test_each_group_has_its_own_ideal_line),
        cmocka_unit_test(test_report_names_the_rule_that_ran),
        cmocka_unit_test(test_groups_by_a_long_number_stay_apart),
        cmocka_unit_test(test_a_seed_run_twice_is_said),
        cmocka_unit_test(test_nothing_in_a_label_is_run),
        cmocka_unit_test(test_a_failed_plot_keeps_the_last_one),
        cmocka_unit_test(test_staleness_axis_ends_past_the_999th_permille),
        cmocka_unit_test(test_staleness_beyond_the_last_bin_is_said),
        cmocka_unit_test(test_overlapping_folders_count_a_run_once),
        cmocka_unit_test(test_title_gives_a_range_of_runs),
        cmocka_unit_test(test_a_curve_is_its_runs_own_points),
        cmocka_unit_test(test_a_regression_run_plots_its_loss),
        cmocka_unit_test(test_a_curve_goes_forward),
        cmocka_unit_test(test_each_output_keeps_its_own_script),
        cmocka_unit_test(test_labels_titles_and_bars),
        cmocka_unit_test(test_a_target_some_runs_miss),
        cmocka_unit_test(test_sixteen_groups_sixteen_styles),
        cmocka_unit_test(test_a_group_of_different_settings_is_named),
        cmocka_unit_test(test_report),
        cmocka_unit_test(test_results_md_names_every_build),
        cmocka_unit_test(test_results_md_marks_a_diverged_seed),
        cmocka_unit_test(test_results_md_is_of_the_seeds_asked_for),
        cmocka_unit_test(test_report_names_each_run_apart),
        cmocka_unit_test(test_report_says_a_group_mixes_settings),
        cmocka_unit_test(test_incomplete_runs_left_out_are_named),
        cmocka_unit_test(test_more_runs_than_a_figure_holds_are_refused),
        cmocka_unit_test(test_compare_rules_keeps_only_runs_of_the_config_now),
        cmocka_unit_test(test_ctrl_c_leaves_no_temporary_files),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_a_curve_is_the_mean_of_its_runs),
        cmocka_unit_test(test_scaling_points_are_means_over_seeds),
        cmocka_unit_test(test_staleness_cdf_pools_a_groups_runs),
        cmocka_unit_test(test_bars_are_means_over_seeds),
        cmocka_unit_test(test_report_tables_hold_each_runs_numbers),
        cmocka_unit_test(test_figures_draw_their_columns),
        cmocka_unit_test(test_the_one_ideal_line_spans_every_group),
        cmocka_unit_test(test_a_staleness_cdf_needs_recorded_pushes),
        cmocka_unit_test(test_a_diverged_models_rows_are_not_points),
        cmocka_unit_test(test_an_eval_csv_of_other_columns_is_left_out),
        cmocka_unit_test(test_runs_without_a_config_are_said),
    };
    return cmocka_run_group_tests(tests, s_setup, s_teardown);
}
