/* support.h: helpers shared by the tests: temporary folders, running the
 * real asgd binary as a child process, reading files back. */
#ifndef ASGD_TEST_SUPPORT_H
#define ASGD_TEST_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

/* A fresh folder under $TMPDIR (or /tmp); the caller removes it. */
void support_tempdir(char *buf, size_t n);
void support_rmtree(const char *path);

/* Writes text to path; aborts the test on failure. */
void support_write_file(const char *path, const char *text);
/* The whole file, NUL-terminated (caller frees), or NULL. */
char *support_read_file(const char *path);

typedef struct support_result {
    int status;            /* exit status, or 128 + signal */
    char out[65536];       /* stdout */
    char err[65536];       /* stderr */
} support_result;

/* Runs asgd with the given arguments (NULL-terminated) in folder cwd and
 * waits for it. */
void support_run_asgd(support_result *r, const char *cwd, const char *const *args);
/* support_run_asgd with every file the run writes limited to file_limit
 * bytes (RLIMIT_FSIZE): writes beyond fail as on a full disk. */
void support_run_asgd_limited(support_result *r, const char *cwd, const char *const *args,
                              long file_limit);
/* The same for any program, found on the PATH. */
void support_run(support_result *r, const char *cwd, const char *exe, const char *const *args);
/* Whether program is on the PATH. */
int support_have(const char *program);
/* Debian's python3 (/usr/bin/python3, which has python3-numpy) where it is
 * installed, else any python3 on the PATH; NULL when there is none. */
const char *support_python(void);

/* A cmocka fixture: a fresh temporary folder (dir), a config path inside
 * it (config, not created), a run output folder (out, not created) and the
 * override that sends runs there (out_arg); removed again on teardown. */
typedef struct support_fixture {
    char dir[256];
    char config[300];
    char out[300];
    char out_arg[320];
    support_result r;
} support_fixture;

int support_fixture_setup(void **state);
int support_fixture_teardown(void **state);

/* Starts asgd in the background with stdout and stderr to files in dir
 * (stdout, stderr); returns its pid. */
int support_spawn_asgd(const char *dir, const char *const *args);
/* The same for another program (found on the PATH). */
int support_spawn(const char *dir, const char *exe, const char *const *args);
/* Waits for pid; its exit status, or 128 + signal. */
int support_wait(int pid);
/* Waits for pid at most `seconds`: its exit status, or 128 + signal; past
 * them it is killed and the test fails, naming `what`. */
int support_wait_within(int pid, double seconds, const char *what);
/* Children of parent whose argv[1] is role ("ps", "worker", ...; NULL:
 * any); up to max pids into out; returns the count. */
int support_children(int parent, const char *role, int *out, int max);
/* Whether the process exists (and is not a zombie). */
int support_alive(int pid);
/* Clock ticks of CPU time the process has used, or -1 once it is gone. */
long support_cpu_ticks(int pid);
/* Waits up to `seconds` until path has at least `lines` lines. */
int support_wait_lines(const char *path, int lines, double seconds);

/* A run's trajectory for exact comparisons: "step,loss" of every row of
 * steps.csv, then "final LOSS" from summary.json (caller frees). */
char *support_trajectory(const char *run_dir);

/* Writes an IDX file of unsigned bytes, gzip-compressed when gz is set. */
void support_write_idx(const char *path, int gz, const uint32_t *dims, int ndims,
                       const uint8_t *data);

/* parent/NAME for the greatest NAME among parent's entries (run ids sort
 * by time); "" when there is none. */
void support_newest_subdir(const char *parent, char *out, size_t n);

/* A JSON file parsed (cJSON_Delete it); fails the test when it cannot be
 * read or parsed. */
struct cJSON *support_json_file(const char *path);
/* The number j[key]; fails the test when there is none. */
double support_json_number(const struct cJSON *j, const char *key);
/* A number in the run folder dir's ps-K.json (the test fails without one). */
double support_shard_number(const char *dir, int k, const char *key);

/* A complete run folder's numbers agree with each other, as README says
 * they are made: samples_per_s is samples over train_time_s, epochs is
 * samples over the n_train training examples, and so is each eval.csv
 * row's epoch; the staleness histogram holds every push once and, where no
 * push was staler than its last bin, staleness_mean is its mean. Fails the
 * test naming the number that does not. */
void support_check_run_arithmetic(const char *run_dir, long n_train);

/* Lines in a text file (0 if missing). */
int support_count_lines(const char *path);

#endif
