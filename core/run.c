/* run.c: creating a run folder and writing its files. */
#include "core/run.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <cJSON.h>

double run_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double run_wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void run_sleep(double seconds)
{
    struct timespec ts = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    nanosleep(&ts, NULL);
}

cJSON *run_read_json(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *text = n >= 0 ? malloc((size_t)n + 1) : NULL;
    size_t got = text ? fread(text, 1, (size_t)n, f) : 0;
    fclose(f);
    if (!text) {
        return NULL;
    }
    text[got] = '\0';
    cJSON *j = cJSON_Parse(text);
    free(text);
    return j;
}

int run_configure(config *c, const char **out_root, const char **run_id, error *err)
{
    if (config_get_string(c, "experiment", "out", "runs", out_root, err) < 0 ||
        config_get_string(c, "experiment", "run_id", "", run_id, err) < 0) {
        return -1;
    }
    if ((*run_id)[0] && (strchr(*run_id, '/') || strcmp(*run_id, ".") == 0 ||
                         strcmp(*run_id, "..") == 0)) {
        return error_set(err, ERROR_USAGE, "%s: [experiment] run_id: \"%s\" must "
                         "be a plain folder name", config_source(c), *run_id);
    }
    return 0;
}

int run_make_dirs(const char *path, error *err)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
        return error_set(err, ERROR_USAGE, "%s: path too long", path);
    }
    for (char *p = buf + 1; ; p++) {
        if (*p == '/' || *p == '\0') {
            char saved = *p;
            *p = '\0';
            if (mkdir(buf, 0755) != 0 && errno != EEXIST) {
                return error_set(err, ERROR_RUNTIME, "%s: cannot create: %s", buf,
                                 strerror(errno));
            }
            *p = saved;
            if (saved == '\0') {
                return 0;
            }
        }
    }
}

static FILE *s_open(run *r, const char *file, const char *header, error *err)
{
    char path[4800];
    snprintf(path, sizeof path, "%s/%s", r->dir, file);
    FILE *f = fopen(path, "a");   /* O_APPEND: other processes write here too */
    if (!f) {
        error_set(err, ERROR_RUNTIME, "%s: cannot write: %s", path, strerror(errno));
        return NULL;
    }
    if (header) {
        fprintf(f, "%s\n", header);
        fflush(f);
    }
    return f;
}

int run_create(run *r, const config *c, const char *out_root, const char *name,
               const char *run_id, error *err)
{
    memset(r, 0, sizeof *r);
    char parent[4096];
    snprintf(parent, sizeof parent, "%s/%s", out_root, name);
    if (run_make_dirs(parent, err) < 0) {
        return -1;
    }
    char id[256];
    if (run_id[0]) {
        snprintf(id, sizeof id, "%s", run_id);
    } else {
        time_t now = time(NULL);
        struct tm tm;
        localtime_r(&now, &tm);
        strftime(id, sizeof id, "%Y%m%d-%H%M%S", &tm);
    }
    /* never reuse a folder: a second run in the same second gets -2, -3 ... */
    for (int attempt = 1; ; attempt++) {
        if (attempt == 1) {
            snprintf(r->dir, sizeof r->dir, "%s/%s", parent, id);
        } else {
            snprintf(r->dir, sizeof r->dir, "%s/%s-%d", parent, id, attempt);
        }
        if (mkdir(r->dir, 0755) == 0) {
            break;
        }
        if (errno != EEXIST || attempt > 1000) {
            return error_set(err, ERROR_RUNTIME, "%s: cannot create: %s", r->dir,
                             strerror(errno));
        }
    }
    char path[4800];
    snprintf(path, sizeof path, "%s/config.ini", r->dir);
    if (config_write(c, path, err) < 0) {
        return -1;
    }
    r->log = s_open(r, "log.txt", NULL, err);   /* appended to by child processes too */
    r->eval = s_open(r, "eval.csv", RUN_EVAL_HEADER, err);
    r->steps = s_open(r, "steps.csv", RUN_STEPS_HEADER, err);
    if (!r->log || !r->eval || !r->steps) {
        run_close(r);
        return -1;
    }
    return 0;
}

void run_close(run *r)
{
    FILE **files[3] = {&r->eval, &r->steps, &r->log};
    for (int i = 0; i < 3; i++) {
        if (*files[i]) {
            fclose(*files[i]);
            *files[i] = NULL;
        }
    }
}

void run_log(run *r, const char *fmt, ...)
{
    if (!r->log) {
        return;
    }
    time_t now = time(NULL);
    struct tm tm;
    char stamp[32];
    localtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", &tm);
    fprintf(r->log, "%s ", stamp);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(r->log, fmt, ap);
    va_end(ap);
    fputc('\n', r->log);
    fflush(r->log);
}

void run_eval_row(FILE *f, double time_s, double epoch, long updates, long samples,
                  double test_loss, double test_acc)
{
    fprintf(f, "%.6f,%.6f,%ld,%ld,%.9g,%.6f\n", time_s, epoch, updates, samples,
            test_loss, test_acc);
    fflush(f);
}

void run_step_row(FILE *f, double time_s, int worker, long step, double loss,
                  long staleness, long bytes)
{
    fprintf(f, "%.6f,%d,%ld,%.9g,%ld,%ld\n", time_s, worker, step, loss, staleness, bytes);
}

int run_write_summary(run *r, const run_summary *s, error *err)
{
    cJSON *j = cJSON_CreateObject();
    if (!j) {
        return error_set(err, ERROR_RUNTIME, "summary: out of memory");
    }
    cJSON_AddStringToObject(j, "algorithm", s->algorithm);
    cJSON_AddStringToObject(j, "model", s->model);
    cJSON_AddNumberToObject(j, "workers", s->workers);
    cJSON_AddStringToObject(j, "mode", s->mode);
    cJSON_AddStringToObject(j, "dataset", s->dataset);
    cJSON_AddNumberToObject(j, "params", (double)s->params);
    cJSON_AddNumberToObject(j, "seed", (double)s->seed);
    cJSON_AddNumberToObject(j, "final_test_acc", s->final_test_acc);
    cJSON_AddNumberToObject(j, "best_test_acc", s->best_test_acc);
    cJSON_AddNumberToObject(j, "final_test_loss", s->final_test_loss);
    cJSON_AddNumberToObject(j, "time_s", s->time_s);
    cJSON_AddNumberToObject(j, "train_time_s", s->train_time_s);
    cJSON_AddNumberToObject(j, "wall_time_s", s->wall_time_s);
    cJSON_AddNumberToObject(j, "epochs", s->epochs);
    cJSON_AddNumberToObject(j, "samples", (double)s->samples);
    cJSON_AddNumberToObject(j, "samples_per_s", s->samples_per_s);
    cJSON_AddNumberToObject(j, "updates", (double)s->updates);
    cJSON_AddNumberToObject(j, "staleness_mean", s->staleness_mean);
    cJSON_AddNumberToObject(j, "staleness_max", (double)s->staleness_max);
    if (s->servers > 0) {
        cJSON_AddNumberToObject(j, "servers", s->servers);
        cJSON_AddNumberToObject(j, "dropped", (double)s->dropped);
        cJSON_AddNumberToObject(j, "rejected", (double)s->rejected);
        cJSON_AddNumberToObject(j, "restarts", s->restarts);
    }
    if (strcmp(s->mode, "sim") == 0) {
        cJSON_AddNumberToObject(j, "sim_events", (double)s->sim_events);
    }
    int last = 63;
    while (last > 0 && s->staleness_histogram[last] == 0) {
        last--;
    }
    cJSON *h = cJSON_AddArrayToObject(j, "staleness_histogram");
    for (int i = 0; i <= last; i++) {
        cJSON_AddItemToArray(h, cJSON_CreateNumber((double)s->staleness_histogram[i]));
    }
    cJSON_AddBoolToObject(j, "complete", s->complete);
    char *text = cJSON_Print(j);
    cJSON_Delete(j);
    if (!text) {
        return error_set(err, ERROR_RUNTIME, "summary: out of memory");
    }
    /* write then rename, so a reader never sees half a summary */
    char tmp[4800], path[4800];
    snprintf(tmp, sizeof tmp, "%s/summary.json.tmp", r->dir);
    snprintf(path, sizeof path, "%s/summary.json", r->dir);
    FILE *f = fopen(tmp, "w");
    int rc = 0;
    if (f) {
        bool written = fprintf(f, "%s\n", text) >= 0;
        if (fclose(f) != 0 || !written || rename(tmp, path) != 0) {
            f = NULL;
        }
    }
    if (!f) {
        rc = error_set(err, ERROR_RUNTIME, "%s: cannot write: %s", path, strerror(errno));
    }
    cJSON_free(text);
    return rc;
}
