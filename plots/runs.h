/* runs.h: the runs a figure draws: complete run folders found under the
 * folders given (down to PLOT_MAX_DEPTH levels, in name order, so that figures do not
 * depend on the file system's order; a run reached twice, through folders
 * that overlap or a link, once), grouped by a key, and read. */
#ifndef ASGD_PLOT_RUNS_H
#define ASGD_PLOT_RUNS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"

#define PLOT_MAX_RUNS 4096
#define PLOT_MAX_GROUPS 32
#define PLOT_MAX_DEPTH 8    /* a sweep's runs from the repository's root: 6 */

struct cJSON;

/* The command whose messages the figures' modules give: "asgd plot", or
 * "asgd report" while it draws (its warnings said "asgd plot"). */
extern const char *plot_name;

typedef struct plot_run {
    char dir[4096];           /* as reached from the folders given */
    char real[4096];          /* its realpath(): a run is collected once */
    char group[256];
    int g;                    /* index of its group */
    double x, y;              /* scaling: its --x and --y values, read once */
    struct cJSON *summary;
} plot_run;

typedef struct plot_runs {
    plot_run *runs;
    int count;
    char groups[PLOT_MAX_GROUPS][256];   /* in order of their values, as numbers
                                            where they are (2 workers before 16) */
    bool diverged[PLOT_MAX_GROUPS];      /* a run of the group diverged */
    int ngroups;
    char **left_out;          /* run folders whose summary.json is not complete, or
                                 whose eval.csv has no row to read */
    char **left_out_real;     /* their realpath()s: each counted once */
    int nleft_out;
    bool too_many;            /* a complete run was found beyond PLOT_MAX_RUNS */
    int too_deep;             /* folders PLOT_MAX_DEPTH levels down that hold folders
                                 not searched (said on stderr) */
    char too_deep_dir[4200];  /* the first of them */
} plot_runs;

/* Every complete run under dirs, once each (by real path), each in the
 * group its value of group_key names ("(no KEY)" when it has none); the
 * folders of incomplete runs (a summary.json without complete: true, or
 * an eval.csv with no row to read) are kept in left_out. ERROR_USAGE when
 * one of dirs is not a folder, when there is no complete run (naming the
 * incomplete ones), more than PLOT_MAX_RUNS complete runs (a figure of
 * the first 4096 would look like a figure of all) or more than
 * PLOT_MAX_GROUPS groups; set is freed then. */
int plot_runs_collect(plot_runs *set, const char *const *dirs, int ndirs, const char *group_key,
                      error *err);
/* "N incomplete runs left out (DIR, DIR, ...)" in out, the folders up to
 * what fits in n; false, and "" in out, when every run found was complete.
 * A figure or a page that drops runs must say so: a sweep cut short looks
 * like a smaller one. */
bool plot_runs_left_out(const plot_runs *set, char *out, size_t n);
/* Says on stderr, for each group whose runs' resolved configs differ in
 * more than their seeds, run ids and folders (and the group key, and
 * x_key, a scaling figure's x, or NULL), the first such key and two runs:
 * a group's lines and points average its runs as if they were seeds. With
 * x_key, only runs at the same x are compared, as only they are averaged
 * into one point (a key that changes with x, such as a default derived
 * from the workers, mixes nothing). And for each run that repeats an
 * earlier one of its group, the same config with the same seed (a run's
 * config.ini run again writes beside it), both: their mean counts that
 * seed twice. */
void plot_runs_warn_mixed(const plot_runs *set, const char *group_key, const char *x_key);
/* Whether some runs of set are simulated and some measured (real or
 * threads mode); groups, where not NULL, names a group of each: "sync:
 * sim, hogwild: threads". */
bool plot_runs_modes_mixed(const plot_runs *set, char *groups, size_t n);
/* The same test for group g alone: true, with "its runs differ in [S] K (A
 * and B), not only in their seeds (DIR, DIR)" in out, when it averages
 * runs of different settings. */
bool plot_runs_mixed(const plot_runs *set, int g, const char *group_key, const char *x_key,
                     char *out, size_t n);
void plot_runs_free(plot_runs *set);

/* A key's value for a run as text: a summary field (no dot in key), or
 * section.key of its config.ini; "" when it has none. */
void plot_run_value(const plot_run *r, const char *key, char *out, size_t n);
/* The same as a number; NaN when it has none. */
double plot_run_number(const plot_run *r, const char *key);
/* Whether r diverged and key is a summary field that measures how much
 * or how long a run did (time_s, epochs, samples, samples_per_s, updates,
 * ...): one cut short by its divergence is no point beside complete runs
 * (a mean with it in fell by the part it never ran). */
bool plot_run_cut_short(const plot_run *r, const char *key);

/* Columns xc and yc of the rows of a run's eval.csv (time_s 0, epoch 1,
 * updates 2, samples 3, test_loss 4, test_acc 5): the rows where the
 * loss and y are finite numbers (a regression run has no accuracy; a
 * diverged model's loss is not finite, and its accuracy is no model's)
 * and x does not go back (rows at one x, as a simulated run's periodic
 * and final evaluations can be, are all kept, in order: the last is the
 * model after both); none where the file's
 * header is not asgd's; returns their count (the caller frees xs and ys).
 * *back, where not NULL, counts the rows left out because x went back
 * (updates after a shard restored its checkpoint). */
int plot_run_eval(const plot_run *r, int xc, int yc, double **xs, double **ys, int *back);
/* The time_s of a run's first evaluation of a trained model (updates > 0:
 * an untrained model's accuracy, a tenth by chance and a little more for
 * some seeds, reaches nothing) at or above target, among its whole rows
 * with a finite loss; NaN when none is. */
double plot_run_time_to(const plot_run *r, double target);

#endif
