/* run.h: the run folder, runs/<experiment.name>/<run-id>/, which describes
 * a run by itself:
 *   config.ini    the resolved config
 *   eval.csv      time_s,epoch,updates,samples,test_loss,test_acc
 *   steps.csv     time_s,worker,step,loss,staleness,bytes
 *   summary.json  the run's figures, with "complete": true once it
 *                 finished (core/summary.h)
 *   log.txt       what happened, with times
 *   inputs/       a copy of each file that describes the cluster, as the
 *                 run read it: SECTION.KEY-NAME for [sim] profile, [sim]
 *                 trace and [cluster] trace (up to RUN_INPUT_MAX bytes
 *                 each; a larger one is named only by its checksum in
 *                 summary.json's inputs) */
#ifndef ASGD_RUN_H
#define ASGD_RUN_H

#include <stdbool.h>
#include <stdio.h>

#include "core/config.h"
#include "core/error.h"

#define RUN_INPUT_MAX (16L << 20)

typedef struct run {
    char dir[4608];
    FILE *eval, *steps, *log;
} run;

/* Reads [experiment] out and run_id (default: a timestamp) from c. */
int run_configure(config *c, const char **out_root, const char **run_id, error *err);

/* Creates <out_root>/<name>/<run_id>/ (a fresh suffix if it exists),
 * writes config.ini and inputs/ and opens the metric files. It and
 * run_reopen hold the folder's log.txt locked until run_close: a folder
 * another asgd holds is refused (ERROR_USAGE). */
int run_create(run *r, const config *c, const char *out_root, const char *name,
               const char *run_id, error *err);
/* Opens an existing run folder to go on with it (asgd train --resume):
 * its metric files for appending, nothing rewritten. */
int run_reopen(run *r, const char *dir, error *err);
/* A CSV at path opened for appending (close-on-exec), with header written
 * first when the file is new or empty; a last line without its newline (a
 * writer killed mid-row) is cut off first. line_buffered: each row reaches
 * the file when its newline is written, so that a process killed by
 * SIGKILL loses at most the row it was writing (a worker's steps-K.csv).
 * NULL with err naming the path. */
FILE *run_append_csv(const char *path, const char *header, bool line_buffered, error *err);
/* Makes dir, where processes started one by one write their own files, a
 * run folder: config.ini and inputs/ written from c, log.txt opened for
 * appending;
 * eval.csv and steps.csv are left to their writers (r's stay NULL). */
int run_adopt(run *r, const char *dir, const config *c, error *err);
void run_close(run *r);
/* Closes a file of the run's, checking that every write reached it:
 * 0, or -1 with err naming the file (in dir) that lost data, say on a full
 * disk, which is then cut after its last whole line. *f is NULL
 * afterwards. */
int run_close_file(FILE **f, const char *dir, const char *name, error *err);
/* Cuts the file at path after its last newline (to nothing without one):
 * a write that failed part way leaves no row cut short that a reader
 * would take for a whole one. Truncating needs no space on a full disk;
 * a file that cannot be opened or read is left as it is. */
void run_trim_to_whole_lines(const char *path);
/* Whether a write to eval.csv or steps.csv has failed (a full disk): a
 * trainer stops there rather than train on without its records. */
bool run_files_failing(const run *r);
/* The end of a run's metrics: eval.csv and steps.csv closed and checked
 * (log.txt stays open until run_close). */
int run_finish(run *r, error *err);

void run_log(run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* One row of eval.csv / steps.csv (every process writes the same format;
 * losses with 9 significant digits, enough to tell float32 values apart). */
#define RUN_EVAL_HEADER "time_s,epoch,updates,samples,test_loss,test_acc"
#define RUN_EVAL_LOSS "%.9g"   /* eval.csv's test loss and accuracy, as the summary */
#define RUN_EVAL_ACC "%.6f"    /* takes them too (summary_add_eval) */
#define RUN_STEPS_HEADER "time_s,worker,step,loss,staleness,bytes"
void run_eval_row(FILE *f, double time_s, double epoch, long updates, long samples,
                  double test_loss, double test_acc);
/* The same row as text, newline included (a NaN loss reads "nan"). */
void run_eval_text(char *buf, size_t n, double time_s, double epoch, long updates,
                   long samples, double test_loss, double test_acc);
void run_step_row(FILE *f, double time_s, int worker, long step, double loss,
                  long staleness, long bytes);

/* A whole file as text, NUL-terminated (caller frees), or NULL when it
 * cannot be read. */
char *run_read_file(const char *path);
/* Writes a then b (blen may be 0) to path.tmp, flushes it to the disk and
 * renames it to path, every step checked, then flushes its folder (the
 * rename, through a power loss): path is afterwards either whole and new
 * or as it was. Errors name the path. */
int run_write_atomic(const char *path, const void *a, size_t alen, const void *b, size_t blen,
                     error *err);
/* A whole JSON file parsed (cJSON_Delete it), or NULL when it is missing
 * or malformed. */
struct cJSON *run_read_json(const char *path);
/* A positive number of a JSON object (an earlier session's summary, say);
 * 0 when j is NULL or the key is missing, not a number or not positive. */
double run_json_positive(const struct cJSON *j, const char *key);

/* mkdir -p; a part that is there and not a folder is an error (ERROR_USAGE) */
int run_make_dirs(const char *path, error *err);
/* rm -rf: path and everything under it (links are removed, never
 * followed); 0 also when it did not exist. */
int run_remove_dir(const char *path, error *err);

/* Monotonic seconds. */
double run_now(void);
/* Unix time in seconds: comparable across processes (and, clocks
 * permitting, hosts). */
double run_wall(void);
/* Sleeps for `seconds` (returns early on a signal). */
void run_sleep(double seconds);

#endif
