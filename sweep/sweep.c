/* sweep.c: expanding, checking, running and collecting a sweep. */
#include "sweep/sweep.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cJSON.h>

#include "core/config.h"
#include "core/experiment.h"
#include "core/run.h"
#include "core/stop.h"

#define SWEEP_MAX_KEYS 16
#define SWEEP_MAX_VALUES 64

typedef struct grid_key {
    char key[128];
    int line;
    int count;
    char *values[SWEEP_MAX_VALUES];
} grid_key;

typedef struct sweep_run {
    char id[1024];
    char dir[5400];
    char *overrides[SWEEP_MAX_KEYS + 8];
    int noverrides;
    int weight;               /* processes it starts */
    pid_t pid;
    double started;
    bool complete;
} sweep_run;

typedef struct sweep {
    const char *path;
    char base[4096];
    const char *name;
    char out[4096];
    long seeds[64];
    int nseeds;
    grid_key keys[SWEEP_MAX_KEYS];
    int nkeys;
    sweep_run *runs;
    int nruns;
    config *c;
} sweep;

static char *s_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) {
        memcpy(d, s, n);
    }
    return d;
}

static char *s_trim(char *s)
{
    while (*s == ' ' || *s == '\t') {
        s++;
    }
    char *end = s + strlen(s);
    while (end > s && (end[-1] == ' ' || end[-1] == '\t')) {
        *--end = '\0';
    }
    return s;
}

typedef struct grid_ctx {
    sweep *s;
    error *err;
} grid_ctx;

static int s_grid_entry(void *ctx, const char *key, const char *value, int line)
{
    grid_ctx *g = ctx;
    sweep *s = g->s;
    if (s->nkeys == SWEEP_MAX_KEYS) {
        return error_set(g->err, ERROR_USAGE, "%s:%d: [grid] %s: more than %d keys", s->path,
                         line, key, SWEEP_MAX_KEYS);
    }
    if (!strchr(key, '.') || key[0] == '.') {
        return error_set(g->err, ERROR_USAGE, "%s:%d: [grid] %s: expected section.key", s->path,
                         line, key);
    }
    grid_key *k = &s->keys[s->nkeys++];
    snprintf(k->key, sizeof k->key, "%s", key);
    k->line = line;
    char *copy = s_strdup(value);
    if (!copy) {
        return error_set(g->err, ERROR_RUNTIME, "out of memory");
    }
    for (char *save, *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *v = s_trim(item);
        if (*v == '\0') {
            continue;
        }
        if (k->count == SWEEP_MAX_VALUES || strchr(v, '/')) {
            free(copy);
            return error_set(g->err, ERROR_USAGE, "%s:%d: [grid] %s: %s", s->path, line, key,
                             strchr(v, '/') ? "values may not contain '/'" : "too many values");
        }
        k->values[k->count++] = s_strdup(v);
    }
    free(copy);
    if (k->count == 0) {
        return error_set(g->err, ERROR_USAGE, "%s:%d: [grid] %s: an empty list of values",
                         s->path, line, key);
    }
    return 0;
}

static void s_free(sweep *s)
{
    for (int k = 0; k < s->nkeys; k++) {
        for (int v = 0; v < s->keys[k].count; v++) {
            free(s->keys[k].values[v]);
        }
    }
    for (int r = 0; s->runs && r < s->nruns; r++) {
        for (int o = 0; o < s->runs[r].noverrides; o++) {
            free(s->runs[r].overrides[o]);
        }
    }
    free(s->runs);
    config_destroy(&s->c);
}

static int s_read(sweep *s, error *err)
{
    s->c = config_load(s->path, err);
    if (!s->c) {
        return -1;
    }
    const char *base, *out;
    char default_name[256];
    const char *slash = strrchr(s->path, '/');
    const char *file = slash ? slash + 1 : s->path;
    snprintf(default_name, sizeof default_name, "%.*s",
             (int)(strrchr(file, '.') && strrchr(file, '.') != file ? strrchr(file, '.') - file
                                                                    : (long)strlen(file)), file);
    if (config_get_string(s->c, "sweep", "base", "", &base, err) < 0 ||
        config_get_string(s->c, "sweep", "name", default_name, &s->name, err) < 0 ||
        config_get_string(s->c, "sweep", "out", "runs", &out, err) < 0 ||
        config_get_int_list(s->c, "sweep", "seeds", "1,2,3", 0, 0x7fffffffL, s->seeds, 64,
                            &s->nseeds, err) < 0) {
        return -1;
    }
    if (!base[0]) {
        return error_set(err, ERROR_USAGE, "%s: [sweep] base: the base config is missing",
                         s->path);
    }
    if (s->nseeds == 0) {
        return config_error(s->c, "sweep", "seeds", err, "an empty list of values");
    }
    /* base and out are relative to the sweep file */
    const char *paths[2] = {base, out};
    char *dest[2] = {s->base, s->out};
    for (int i = 0; i < 2; i++) {
        if (paths[i][0] == '/' || !slash) {
            snprintf(dest[i], sizeof s->base, "%s", paths[i]);
        } else {
            snprintf(dest[i], sizeof s->base, "%.*s/%s", (int)(slash - s->path), s->path, paths[i]);
        }
    }
    grid_ctx g = {.s = s, .err = err};
    if (config_each(s->c, "grid", s_grid_entry, &g) != 0) {
        return -1;
    }
    return config_check_unused(s->c, err);
}

/* "command line: KEY=VALUE: why" from a grid override, as the sweep file's line. */
static int s_blame(const sweep *s, error *err)
{
    const char *prefix = "command line: ";
    if (strncmp(err->msg, prefix, strlen(prefix)) != 0) {
        return -1;
    }
    const char *arg = err->msg + strlen(prefix);
    for (int k = 0; k < s->nkeys; k++) {
        size_t len = strlen(s->keys[k].key);
        if (strncmp(arg, s->keys[k].key, len) == 0 && arg[len] == '=') {
            const char *why = strstr(arg, ": ");
            char msg[sizeof err->msg];
            snprintf(msg, sizeof msg, "%s:%d: [grid] %s: %s", s->path, s->keys[k].line,
                     s->keys[k].key, why ? why + 2 : "bad value");
            snprintf(err->msg, sizeof err->msg, "%s", msg);
            err->status = ERROR_USAGE;
            return -1;
        }
    }
    return -1;
}

static bool s_complete(const char *dir)
{
    char path[5600];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    cJSON *j = run_read_json(path);
    bool done = j && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "complete"));
    cJSON_Delete(j);
    return done;
}

/* The product of the grid times the seeds, each run checked. */
static int s_expand(sweep *s, error *err)
{
    int total = s->nseeds;
    for (int k = 0; k < s->nkeys; k++) {
        total *= s->keys[k].count;
    }
    s->runs = calloc((size_t)total, sizeof *s->runs);
    if (!s->runs) {
        return error_set(err, ERROR_RUNTIME, "out of memory");
    }
    s->nruns = total;
    for (int r = 0; r < total; r++) {
        sweep_run *run = &s->runs[r];
        int rest = r, len = 0;
        char arg[4400];
        /* seed varies fastest, then the last key, ..., the first key slowest */
        long seed = s->seeds[rest % s->nseeds];
        rest /= s->nseeds;
        int pick[SWEEP_MAX_KEYS];
        for (int k = s->nkeys - 1; k >= 0; k--) {
            pick[k] = rest % s->keys[k].count;
            rest /= s->keys[k].count;
        }
        for (int k = 0; k < s->nkeys; k++) {
            const char *v = s->keys[k].values[pick[k]];
            len += snprintf(run->id + len, sizeof run->id - (size_t)len, "%s=%s,",
                            s->keys[k].key, v);
            snprintf(arg, sizeof arg, "%s=%s", s->keys[k].key, v);
            run->overrides[run->noverrides++] = s_strdup(arg);
        }
        snprintf(run->id + len, sizeof run->id - (size_t)len, "seed=%ld", seed);
        const char *fixed[4] = {"experiment.seed", "experiment.name", "experiment.out",
                                "experiment.run_id"};
        char values[4][4200];
        snprintf(values[0], sizeof values[0], "%ld", seed);
        snprintf(values[1], sizeof values[1], "%s", s->name);
        snprintf(values[2], sizeof values[2], "%s", s->out);
        snprintf(values[3], sizeof values[3], "%s", run->id);
        for (int i = 0; i < 4; i++) {
            snprintf(arg, sizeof arg, "%s=%.4200s", fixed[i], values[i]);
            run->overrides[run->noverrides++] = s_strdup(arg);
        }
        snprintf(run->dir, sizeof run->dir, "%s/%s/%s", s->out, s->name, run->id);
        experiment e;
        if (experiment_configure(&e, s->base, run->noverrides, run->overrides, err) < 0) {
            s_blame(s, err);
            return -1;
        }
        run->weight = e.alg && e.mode == MODE_REAL ? e.workers + e.servers + 1 : 1;
        experiment_destroy(&e);
        run->complete = s_complete(run->dir);
    }
    return 0;
}

static pid_t s_start(const sweep *s, sweep_run *run, int log_fd)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        return -1;
    }
    exe[n] = '\0';
    const char *argv[SWEEP_MAX_KEYS + 12];
    int argc = 0;
    argv[argc++] = exe;
    argv[argc++] = "train";
    argv[argc++] = s->base;
    for (int i = 0; i < run->noverrides; i++) {
        argv[argc++] = run->overrides[i];
    }
    argv[argc] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        /* an incomplete folder from an interrupted sweep is started afresh */
        pid_t rmpid = fork();
        if (rmpid == 0) {
            execlp("rm", "rm", "-rf", run->dir, (char *)NULL);
            _exit(127);
        }
        waitpid(rmpid, NULL, 0);
        int devnull = open("/dev/null", O_RDWR);
        dup2(devnull, STDIN_FILENO);
        dup2(devnull, STDOUT_FILENO);
        dup2(log_fd, STDERR_FILENO);
        execv(exe, (char *const *)argv);
        _exit(127);
    }
    return pid;
}

static const char *const s_fields[] = {"algorithm", "model", "workers", "mode",
    "final_test_acc", "best_test_acc", "final_test_loss", "time_s", "samples_per_s", "updates",
    "staleness_mean", "staleness_max", "complete", NULL};

static int s_results(const sweep *s, error *err)
{
    char path[5600];
    snprintf(path, sizeof path, "%s/%s/results.csv", s->out, s->name);
    FILE *f = fopen(path, "w");
    if (!f) {
        return error_set(err, ERROR_RUNTIME, "%s: cannot write: %s", path, strerror(errno));
    }
    for (int k = 0; k < s->nkeys; k++) {
        fprintf(f, "%s,", s->keys[k].key);
    }
    fprintf(f, "seed");
    for (int i = 0; s_fields[i]; i++) {
        fprintf(f, ",%s", s_fields[i]);
    }
    fprintf(f, ",run_dir\n");
    for (int r = 0; r < s->nruns; r++) {
        const sweep_run *run = &s->runs[r];
        if (!run->complete) {
            continue;
        }
        char sp[5600];
        snprintf(sp, sizeof sp, "%s/summary.json", run->dir);
        cJSON *j = run_read_json(sp);
        if (!j) {
            continue;
        }
        for (int k = 0; k < s->nkeys; k++) {
            /* the value from the run's overrides, in grid order */
            fprintf(f, "%s,", strchr(run->overrides[k], '=') + 1);
        }
        fprintf(f, "%s", strchr(run->overrides[s->nkeys], '=') + 1);
        for (int i = 0; s_fields[i]; i++) {
            cJSON *v = cJSON_GetObjectItemCaseSensitive(j, s_fields[i]);
            if (cJSON_IsString(v)) {
                fprintf(f, ",%s", v->valuestring);
            } else if (cJSON_IsNumber(v)) {
                fprintf(f, ",%.9g", v->valuedouble);
            } else if (cJSON_IsBool(v)) {
                fprintf(f, ",%s", cJSON_IsTrue(v) ? "true" : "false");
            } else {
                fprintf(f, ",");
            }
        }
        fprintf(f, ",%s\n", run->dir);
        cJSON_Delete(j);
    }
    return fclose(f) == 0 ? 0 : error_set(err, ERROR_RUNTIME, "%s: cannot write", path);
}

static void s_progress(const sweep *s, int done, int total, int running, double elapsed,
                       int finished_here, bool final)
{
    if (!isatty(STDERR_FILENO)) {
        return;
    }
    fprintf(stderr, "\rsweep %s: %d/%d runs done, %d running", s->name, done, total, running);
    if (finished_here > 0 && done < total) {
        double eta = elapsed / finished_here * (total - done);
        fprintf(stderr, ", ETA %.0f s", eta);
    }
    fprintf(stderr, "    %s", final ? "\n" : "");
    fflush(stderr);
}

int sweep_main(const char *path, long jobs, error *err)
{
    sweep s = {.path = path};
    int rc = -1;
    if (s_read(&s, err) < 0 || s_expand(&s, err) < 0) {
        goto done;
    }
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/%s", s.out, s.name);
    if (run_make_dirs(dir, err) < 0) {
        goto done;
    }
    char log_path[4300];
    snprintf(log_path, sizeof log_path, "%s/sweep.log", dir);
    int log_fd = open(log_path, O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (log_fd < 0) {
        error_set(err, ERROR_RUNTIME, "%s: cannot write: %s", log_path, strerror(errno));
        goto done;
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    long capacity = jobs < cores ? jobs : cores;
    if (capacity < 1) {
        capacity = 1;
    }
    int done_count = 0, skipped = 0, failed = 0, finished_here = 0, running = 0, weight = 0;
    for (int r = 0; r < s.nruns; r++) {
        done_count += s.runs[r].complete;
    }
    skipped = done_count;
    stop_install();
    double start = run_now();
    int next = 0;
    for (;;) {
        while (!stop_requested() && next < s.nruns) {
            sweep_run *run = &s.runs[next];
            if (run->complete) {
                next++;
                continue;
            }
            if (weight > 0 && weight + run->weight > capacity) {
                break;
            }
            run->pid = s_start(&s, run, log_fd);
            run->started = run_now();
            weight += run->weight;
            running++;
            next++;
        }
        if (running == 0) {
            break;
        }
        int status;
        pid_t pid = waitpid(-1, &status, 0);
        if (pid < 0) {
            if (errno == EINTR && stop_requested()) {
                for (int r = 0; r < s.nruns; r++) {
                    if (s.runs[r].pid > 0) {
                        kill(s.runs[r].pid, SIGINT);
                    }
                }
            }
            continue;
        }
        for (int r = 0; r < s.nruns; r++) {
            sweep_run *run = &s.runs[r];
            if (run->pid != pid) {
                continue;
            }
            run->pid = 0;
            running--;
            weight -= run->weight;
            run->complete = WIFEXITED(status) && WEXITSTATUS(status) == 0 && s_complete(run->dir);
            if (run->complete) {
                done_count++;
                finished_here++;
            } else if (!stop_requested()) {
                failed++;
                dprintf(log_fd, "sweep: run %s failed (status %d)\n", run->id, status);
            }
        }
        s_progress(&s, done_count, s.nruns, running, run_now() - start, finished_here, false);
    }
    int stopped = stop_requested();
    stop_uninstall();
    close(log_fd);
    s_progress(&s, done_count, s.nruns, 0, run_now() - start, finished_here, true);
    if (s_results(&s, err) < 0) {
        goto done;
    }
    printf("%s/results.csv: %d runs, %d ran now, %d already complete, %d failed\n", dir,
           s.nruns, finished_here, skipped, failed);
    if (stopped) {
        error_set(err, ERROR_RUNTIME, "interrupted: %d of %d runs complete; run the same "
                  "command again to finish the rest", done_count, s.nruns);
    } else if (failed) {
        error_set(err, ERROR_RUNTIME, "%d of %d runs failed; see %s", failed, s.nruns, log_path);
    } else {
        rc = 0;
    }
done:
    s_free(&s);
    return rc;
}
