/* support.c: test helpers; see support.h. */
#include "support.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cJSON.h>
#include <zlib.h>

#include "core/run.h"

#ifndef ASGD_BINARY
#error "ASGD_BINARY must name the asgd executable"
#endif

void support_tempdir(char *buf, size_t n)
{
    const char *base = getenv("TMPDIR");
    snprintf(buf, n, "%s/asgd-test-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(buf)) {
        perror("mkdtemp");
        abort();
    }
}

void support_rmtree(const char *path)
{
    error ignored;   /* asgd's own remover: no `rm` to find on a PATH a test has changed */
    run_remove_dir(path, &ignored);
}

void support_write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
        perror(path);
        abort();
    }
}

char *support_read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (n + 1 == cap) {
            cap *= 2;
            buf = realloc(buf, cap);
        }
    }
    fclose(f);
    if (buf) {
        buf[n] = '\0';
    }
    return buf;
}

/* Up to cap - 1 bytes of a file, NUL-terminated (empty if missing). */
static void s_slurp_file(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, cap - 1, f) : 0;
    if (f) {
        fclose(f);
    }
    buf[n] = '\0';
}

/* Starts asgd in cwd (NULL: here), stdin from /dev/null, stdout and
 * stderr to files in dir. */
static long s_file_limit = -1;   /* RLIMIT_FSIZE for the next child, -1: none */

static int s_spawn_program(const char *dir, const char *cwd, const char *exe,
                           const char *const *args)
{
    char out[512], err[512];
    snprintf(out, sizeof out, "%s/stdout", dir);
    snprintf(err, sizeof err, "%s/stderr", dir);
    int argc = 0;
    while (args[argc]) {
        argc++;
    }
    const char **argv = calloc((size_t)argc + 2, sizeof *argv);
    argv[0] = exe;
    memcpy(argv + 1, args, (size_t)argc * sizeof *argv);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        if ((cwd && chdir(cwd) != 0) || !freopen("/dev/null", "r", stdin) ||
            !freopen(out, "w", stdout) || !freopen(err, "w", stderr)) {
            _exit(127);
        }
        if (s_file_limit >= 0) {
            /* writes past the limit fail with EFBIG, as on a full disk (asgd
             * ignores SIGXFSZ itself: the test is of that too) */
            struct rlimit lim = {(rlim_t)s_file_limit, (rlim_t)s_file_limit};
            setrlimit(RLIMIT_FSIZE, &lim);
        }
        execvp(exe, (char *const *)argv);
        _exit(127);
    }
    free(argv);
    return pid;
}

static int s_spawn(const char *dir, const char *cwd, const char *const *args)
{
    return s_spawn_program(dir, cwd, ASGD_BINARY, args);
}

void support_run(support_result *r, const char *cwd, const char *exe, const char *const *args)
{
    char dir[256];
    support_tempdir(dir, sizeof dir);
    int pid = s_spawn_program(dir, cwd, exe, args);
    r->status = support_wait(pid);
    char path[300];
    snprintf(path, sizeof path, "%s/stdout", dir);
    s_slurp_file(path, r->out, sizeof r->out);
    snprintf(path, sizeof path, "%s/stderr", dir);
    s_slurp_file(path, r->err, sizeof r->err);
    support_rmtree(dir);
}

int support_have(const char *program)
{
    const char *path = getenv("PATH");
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path ? path : "/usr/bin:/bin");
    for (char *save, *d = strtok_r(buf, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        char exe[4200];
        snprintf(exe, sizeof exe, "%s/%s", d, program);
        if (access(exe, X_OK) == 0) {
            return 1;
        }
    }
    return 0;
}

void support_run_asgd_limited(support_result *r, const char *cwd, const char *const *args,
                              long file_limit)
{
    s_file_limit = file_limit;
    support_run_asgd(r, cwd, args);
    s_file_limit = -1;
}

const char *support_python(void)
{
    if (access("/usr/bin/python3", X_OK) == 0) {
        return "/usr/bin/python3";
    }
    return support_have("python3") ? "python3" : NULL;
}

void support_run_asgd(support_result *r, const char *cwd, const char *const *args)
{
    char dir[256];
    support_tempdir(dir, sizeof dir);
    int pid = s_spawn(dir, cwd, args);
    r->status = support_wait(pid);
    char path[300];
    snprintf(path, sizeof path, "%s/stdout", dir);
    s_slurp_file(path, r->out, sizeof r->out);
    snprintf(path, sizeof path, "%s/stderr", dir);
    s_slurp_file(path, r->err, sizeof r->err);
    support_rmtree(dir);
}

int support_fixture_setup(void **state)
{
    support_fixture *f = calloc(1, sizeof *f);
    if (!f) {
        return -1;
    }
    support_tempdir(f->dir, sizeof f->dir);
    snprintf(f->config, sizeof f->config, "%s/exp.ini", f->dir);
    snprintf(f->out, sizeof f->out, "%s/runs", f->dir);
    snprintf(f->out_arg, sizeof f->out_arg, "experiment.out=%s", f->out);
    *state = f;
    return 0;
}

/* What a failed check left running (a shard, a launcher): asked to stop,
 * then killed, so that nothing outlives its test. */
static void s_stop_children(void)
{
    int pids[64];
    int n = support_children(getpid(), NULL, pids, 64);
    for (int i = 0; i < n; i++) {
        kill(pids[i], SIGTERM);   /* a launcher stops its own children */
    }
    for (int i = 0; i < n; i++) {
        for (int tries = 0; tries < 100 && waitpid(pids[i], NULL, WNOHANG) == 0; tries++) {
            nanosleep(&(struct timespec){.tv_nsec = 50000000}, NULL);
        }
        if (kill(pids[i], SIGKILL) == 0) {
            waitpid(pids[i], NULL, 0);
        }
    }
}

int support_fixture_teardown(void **state)
{
    support_fixture *f = *state;
    s_stop_children();
    support_rmtree(f->dir);
    free(f);
    return 0;
}

void support_write_idx(const char *path, int gz, const uint32_t *dims, int ndims,
                       const uint8_t *data)
{
    size_t count = 1;
    uint8_t header[4 + 16] = {0, 0, 0x08, (uint8_t)ndims};
    for (int i = 0; i < ndims; i++) {
        header[4 + 4 * i] = (uint8_t)(dims[i] >> 24);
        header[5 + 4 * i] = (uint8_t)(dims[i] >> 16);
        header[6 + 4 * i] = (uint8_t)(dims[i] >> 8);
        header[7 + 4 * i] = (uint8_t)dims[i];
        count *= dims[i];
    }
    size_t hlen = 4 + 4 * (size_t)ndims;
    if (gz) {
        gzFile f = gzopen(path, "wb");
        if (!f || gzwrite(f, header, (unsigned)hlen) != (int)hlen ||
            (count && gzwrite(f, data, (unsigned)count) != (int)count) || gzclose(f) != Z_OK) {
            abort();
        }
    } else {
        FILE *f = fopen(path, "wb");
        if (!f || fwrite(header, 1, hlen, f) != hlen || fwrite(data, 1, count, f) != count ||
            fclose(f) != 0) {
            abort();
        }
    }
}

int support_count_lines(const char *path)
{
    char *text = support_read_file(path);
    if (!text) {
        return 0;
    }
    int n = 0;
    for (char *p = text; *p; p++) {
        n += *p == '\n';
    }
    free(text);
    return n;
}

int support_spawn_asgd(const char *dir, const char *const *args)
{
    return s_spawn(dir, NULL, args);
}

int support_spawn(const char *dir, const char *exe, const char *const *args)
{
    return s_spawn_program(dir, NULL, exe, args);
}

int support_wait(int pid)
{
    int status;
    if (waitpid(pid, &status, 0) != pid) {
        return -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int support_wait_within(int pid, double seconds, const char *what)
{
    for (double waited = 0; waited < seconds; waited += 0.05) {
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid) {
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        }
        nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    fail_msg("%s did not end within %g s", what, seconds);
    return -1;
}

/* The process's state letter, parent, and clock ticks of CPU time (user
 * and system) from /proc/PID/stat. */
static int s_stat_all(int pid, char *state, int *ppid, long *ticks)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) {
        return -1;
    }
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *close_paren = strrchr(buf, ')');
    long utime, stime;
    /* after the name: state, ppid, fields 5-13, then utime and stime */
    if (!close_paren || sscanf(close_paren + 2, "%c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
                               "%ld %ld", state, ppid, &utime, &stime) != 4) {
        return -1;
    }
    *ticks = utime + stime;
    return 0;
}

static int s_stat(int pid, char *state, int *ppid)
{
    long ticks;
    return s_stat_all(pid, state, ppid, &ticks);
}

long support_cpu_ticks(int pid)
{
    char state;
    int ppid;
    long ticks;
    return s_stat_all(pid, &state, &ppid, &ticks) == 0 ? ticks : -1;
}

int support_children(int parent, const char *role, int *out, int max)
{
    DIR *d = opendir("/proc");
    struct dirent *ent;
    int count = 0;
    while (d && (ent = readdir(d)) && count < max) {
        int pid = atoi(ent->d_name);
        char state;
        int ppid;
        if (pid <= 0 || s_stat(pid, &state, &ppid) < 0 || ppid != parent || state == 'Z') {
            continue;
        }
        if (role) {
            char path[64], cmd[4096];
            snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
            FILE *f = fopen(path, "r");
            size_t n = f ? fread(cmd, 1, sizeof cmd - 1, f) : 0;
            if (f) {
                fclose(f);
            }
            cmd[n] = '\0';
            size_t first = strlen(cmd) + 1;
            if (first >= n || strcmp(cmd + first, role) != 0) {
                continue;
            }
        }
        out[count++] = pid;
    }
    if (d) {
        closedir(d);
    }
    return count;
}

int support_alive(int pid)
{
    char state;
    int ppid;
    return s_stat(pid, &state, &ppid) == 0 && state != 'Z';
}

int support_wait_lines(const char *path, int lines, double seconds)
{
    for (double waited = 0; waited < seconds; waited += 0.02) {
        if (support_count_lines(path) >= lines) {
            return 1;
        }
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return 0;
}

char *support_trajectory(const char *run_dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/steps.csv", run_dir);
    char *steps = support_read_file(path);
    snprintf(path, sizeof path, "%s/summary.json", run_dir);
    char *summary = support_read_file(path);
    cJSON *j = summary ? cJSON_Parse(summary) : NULL;
    cJSON *loss = j ? cJSON_GetObjectItemCaseSensitive(j, "final_test_loss") : NULL;
    char *out = steps ? calloc(1, strlen(steps) + 64) : NULL;
    if (!out || !cJSON_IsNumber(loss)) {
        abort();
    }
    char *o = out, *save;
    /* time,worker,step,loss,...: keep the third and fourth fields */
    for (char *line = strtok_r(steps, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *c1 = strchr(line, ','), *c2 = c1 ? strchr(c1 + 1, ',') : NULL;
        char *c3 = c2 ? strchr(c2 + 1, ',') : NULL, *c4 = c3 ? strchr(c3 + 1, ',') : NULL;
        if (!c4) {
            abort();
        }
        o += sprintf(o, "%.*s\n", (int)(c4 - c2 - 1), c2 + 1);
    }
    sprintf(o, "final %.9g\n", loss->valuedouble);
    cJSON_Delete(j);
    free(summary);
    free(steps);
    return out;
}

void support_newest_subdir(const char *parent, char *out, size_t n)
{
    char best[256] = "";
    DIR *d = opendir(parent);
    struct dirent *ent;
    while (d && (ent = readdir(d))) {
        if (ent->d_name[0] != '.' && strcmp(ent->d_name, best) > 0) {
            snprintf(best, sizeof best, "%s", ent->d_name);
        }
    }
    if (d) {
        closedir(d);
    }
    if (best[0]) {
        snprintf(out, n, "%s/%s", parent, best);
    } else {
        out[0] = '\0';
    }
}

cJSON *support_json_file(const char *path)
{
    char *text = support_read_file(path);
    if (!text) {
        fail_msg("cannot read %s", path);
    }
    cJSON *j = cJSON_Parse(text);
    free(text);
    if (!j) {
        fail_msg("%s: not JSON", path);
    }
    return j;
}

double support_json_number(const cJSON *j, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    if (!cJSON_IsNumber(v)) {
        fail_msg("no number %s", key);
    }
    return v->valuedouble;
}

double support_shard_number(const char *dir, int k, const char *key)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/ps-%d.json", dir, k);
    cJSON *j = support_json_file(path);
    double x = support_json_number(j, key);
    cJSON_Delete(j);
    return x;
}

/* a and b the same to a relative 1e-9 (the JSON's 17 digits, and the
 * division done again) */
static void s_same(const char *what, double a, double b)
{
    if (!(fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)))) {
        fail_msg("%s: %.17g against %.17g", what, a, b);
    }
}

void support_check_run_arithmetic(const char *run_dir, long n_train)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/summary.json", run_dir);
    cJSON *j = support_json_file(path);
    double samples = support_json_number(j, "samples");
    s_same("samples_per_s", support_json_number(j, "samples_per_s"),
           samples / support_json_number(j, "train_time_s"));
    s_same("epochs", support_json_number(j, "epochs"), samples / (double)n_train);
    const cJSON *hist = cJSON_GetObjectItemCaseSensitive(j, "staleness_histogram");
    double pushes = support_json_number(j, "pushes"), count = 0, sum = 0;
    int bins = cJSON_GetArraySize(hist);
    for (int i = 0; i < bins; i++) {
        double n = cJSON_GetArrayItem(hist, i)->valuedouble;
        count += n;
        sum += n * i;
    }
    s_same("the staleness histogram's pushes", count, pushes);
    if (pushes > 0 && support_json_number(j, "staleness_max") < bins) {
        s_same("staleness_mean", support_json_number(j, "staleness_mean"), sum / pushes);
    }
    snprintf(path, sizeof path, "%s/eval.csv", run_dir);
    char *eval = support_read_file(path);
    assert_non_null(eval);
    double loss = NAN, acc = NAN;
    for (char *line = strchr(eval, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        double t, epoch;
        long updates, rows_samples;
        assert_int_equal(sscanf(line + 1, "%lf,%lf,%ld,%ld,%lf,%lf", &t, &epoch, &updates,
                                &rows_samples, &loss, &acc), 6);
        double want = (double)rows_samples / (double)n_train;
        if (!(fabs(epoch - want) <= 5.01e-7)) {   /* written to 6 decimals */
            fail_msg("eval.csv's epoch %.6f after %ld samples of %ld: %.9f", epoch,
                     rows_samples, n_train, want);
        }
    }
    free(eval);
    /* the summary's final figures are the last row's, to the bit, in every
     * mode (a job started role by role kept every digit of its double) */
    const cJSON *final = cJSON_GetObjectItemCaseSensitive(j, "final_test_loss");
    if (isfinite(loss) && (!cJSON_IsNumber(final) || final->valuedouble != loss ||
                           support_json_number(j, "final_test_acc") != acc)) {
        fail_msg("summary.json's final test loss %.17g and accuracy %.17g, eval.csv's last "
                 "row %.17g and %.17g", cJSON_IsNumber(final) ? final->valuedouble : NAN,
                 support_json_number(j, "final_test_acc"), loss, acc);
    }
    cJSON_Delete(j);
}
