/* run.c: creating a run folder and writing its files. */
#define _XOPEN_SOURCE 700   /* nftw */
#include "core/run.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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

char *run_read_file(const char *path)
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
    if (text) {
        text[got] = '\0';
    }
    return text;
}

int run_write_atomic(const char *path, const void *a, size_t alen, const void *b, size_t blen,
                     error *err)
{
    char tmp[4800];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp) {
        return error_set(err, ERROR_RUNTIME, "%s: path too long", path);
    }
    FILE *f = fopen(tmp, "wb");
    bool ok = f && fwrite(a, 1, alen, f) == alen && (blen == 0 || fwrite(b, 1, blen, f) == blen);
    if (f) {
        ok = fflush(f) == 0 && fsync(fileno(f)) == 0 && ok;
        ok = fclose(f) == 0 && ok;
    }
    if (!ok || rename(tmp, path) != 0) {
        int saved = errno;
        remove(tmp);
        return error_set(err, ERROR_RUNTIME, "%s: cannot write: %s", path, strerror(saved));
    }
    /* the rename itself on the disk: after a power loss the folder could
     * still name the file before it (a checkpoint older than the one a
     * restart was told of) */
    char *slash = strrchr(tmp, '/');
    if (slash) {
        *slash = '\0';
    }
    int dir = open(slash ? (slash == tmp ? "/" : tmp) : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir >= 0) {
        fsync(dir);
        close(dir);
    }
    return 0;
}

cJSON *run_read_json(const char *path)
{
    char *text = run_read_file(path);
    if (!text) {
        return NULL;
    }
    cJSON *j = cJSON_Parse(text);
    free(text);
    return j;
}

double run_json_positive(const cJSON *j, const char *key)
{
    const cJSON *v = j ? cJSON_GetObjectItemCaseSensitive(j, key) : NULL;
    return cJSON_IsNumber(v) && v->valuedouble > 0 ? v->valuedouble : 0;
}

int run_configure(config *c, const char **out_root, const char **run_id, error *err)
{
    if (config_get_string(c, "experiment", "out", "runs", out_root, err) < 0 ||
        config_get_string(c, "experiment", "run_id", "", run_id, err) < 0) {
        return -1;
    }
    struct stat st;
    if (!(*out_root)[0]) {   /* "" + "/NAME" would be a folder at the root */
        return config_fail(c, "experiment", "out", err, "must name a folder (\".\" for this "
                           "one)");
    }
    /* the nearest part of it that exists must be a folder: asgd train
     * makes the rest (/dev/null/x failed there, late) */
    char part[4096];
    snprintf(part, sizeof part, "%s", *out_root);
    char *cut;
    while (stat(part, &st) != 0 && (cut = strrchr(part, '/')) && cut != part) {
        *cut = '\0';
    }
    if (stat(part, &st) == 0 && !S_ISDIR(st.st_mode)) {
        return config_fail(c, "experiment", "out", err, "%s is not a folder", part);
    }
    if ((*run_id)[0] && (strchr(*run_id, '/') || strcmp(*run_id, ".") == 0 ||
                         strcmp(*run_id, "..") == 0)) {
        return config_fail(c, "experiment", "run_id", err, "\"%s\" must be a plain folder name",
                           *run_id);
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
            struct stat st;
            if (mkdir(buf, 0755) != 0 && errno != EEXIST) {
                return error_set(err, errno == ENOTDIR ? ERROR_USAGE : ERROR_RUNTIME,
                                 "%s: cannot create: %s", buf, strerror(errno));
            }
            if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode)) {
                /* a file there "existed": asgd ps --run_dir=FILE served a
                 * whole job before it failed to write anything */
                return error_set(err, ERROR_USAGE, "%s: not a folder", buf);
            }
            *p = saved;
            if (saved == '\0') {
                return 0;
            }
        }
    }
}

static int s_remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    return type == FTW_DP ? rmdir(path) : unlink(path);
}

int run_remove_dir(const char *path, error *err)
{
    struct stat st;
    if (lstat(path, &st) != 0 && errno == ENOENT) {
        return 0;
    }
    if (nftw(path, s_remove_one, 16, FTW_DEPTH | FTW_PHYS) != 0) {
        return error_set(err, ERROR_RUNTIME, "%s: cannot remove: %s", path, strerror(errno));
    }
    return 0;
}

static FILE *s_open(run *r, const char *file, const char *header, error *err)
{
    char path[4800];
    snprintf(path, sizeof path, "%s/%s", r->dir, file);
    /* O_APPEND: other processes write here too; close-on-exec: children
     * open their own */
    FILE *f = fopen(path, "ae");
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

/* The files that describe the cluster a run simulated or replayed, kept in
 * its folder: a profile and traces are small, made for the experiment and
 * edited between runs. The data (Debian's, named by its checksum in the
 * summary) and the CURVE keys (secrets) are not copied. */
static const char *const s_kept[][2] = {{"sim", "profile"}, {"sim", "trace"},
                                         {"cluster", "trace"}};

typedef struct keeping {
    run *r;
    error *err;
    int rc;
} keeping;

/* Copies one input of the run into its inputs/ folder (see run.h). */
static void s_keep_input(void *ctx, const char *section, const char *key, const char *path)
{
    keeping *k = ctx;
    bool wanted = false;
    for (size_t i = 0; i < sizeof s_kept / sizeof s_kept[0]; i++) {
        wanted = wanted || (strcmp(section, s_kept[i][0]) == 0 && strcmp(key, s_kept[i][1]) == 0);
    }
    struct stat st;
    if (!wanted || k->rc < 0 || stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
        return;   /* a path that is not there fails where it is read */
    }
    if (st.st_size > RUN_INPUT_MAX) {
        run_log(k->r, "%s: %lld bytes, not copied into inputs/ (over %ld); summary.json's "
                "inputs give its checksum", path, (long long)st.st_size, RUN_INPUT_MAX);
        return;
    }
    char folder[4800], copy[5200];
    const char *base = strrchr(path, '/');
    snprintf(folder, sizeof folder, "%s/inputs", k->r->dir);
    snprintf(copy, sizeof copy, "%s/%s.%s-%s", folder, section, key, base ? base + 1 : path);
    FILE *f = fopen(path, "rbe");
    char *bytes = malloc((size_t)st.st_size + 1);
    size_t got = f && bytes ? fread(bytes, 1, (size_t)st.st_size + 1, f) : 0;
    if (!f || !bytes || ferror(f) || got != (size_t)st.st_size) {
        k->rc = error_set(k->err, ERROR_RUNTIME, "%s: cannot read it to keep a copy in %s "
                          "(it changed while read, or %s)", path, folder,
                          f ? "was cut short" : strerror(errno));
    } else if (run_make_dirs(folder, k->err) < 0 ||
               run_write_atomic(copy, bytes, got, NULL, 0, k->err) < 0) {
        k->rc = -1;
    }
    if (f) {
        fclose(f);
    }
    free(bytes);
}

/* Every input s_kept names, copied into r's inputs/ (r's log open). */
static int s_keep_inputs(run *r, const config *c, error *err)
{
    keeping k = {.r = r, .err = err};
    config_each_path(c, s_keep_input, &k);
    return k.rc;
}

/* Holds r's log.txt locked while this process runs the job (children,
 * which open their own, do not hold it): a second `asgd train --resume`
 * of a run under way started a second job's processes in its folder, and
 * the two wrote over each other's checkpoints and rows. A file system
 * without locks lets the job go on, undefended. */
static int s_lock(run *r, error *err)
{
    if (flock(fileno(r->log), LOCK_EX | LOCK_NB) == 0) {
        return 0;
    }
    if (errno == ENOSYS || errno == EOPNOTSUPP || errno == ENOLCK) {
        fprintf(stderr, "asgd: %s/log.txt: cannot lock (%s): a second job in this run folder "
                "would not be noticed\n", r->dir, strerror(errno));
        return 0;
    }
    return errno == EWOULDBLOCK
               ? error_set(err, ERROR_USAGE, "%s: the run is under way (another asgd holds its "
                           "log.txt); wait for it to end, or stop it first", r->dir)
               : error_set(err, ERROR_RUNTIME, "%s/log.txt: cannot lock: %s", r->dir,
                           strerror(errno));
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
    r->eval = r->log && s_lock(r, err) == 0 ? s_open(r, "eval.csv", RUN_EVAL_HEADER, err) : NULL;
    r->steps = r->eval ? s_open(r, "steps.csv", RUN_STEPS_HEADER, err) : NULL;
    if (!r->steps || s_keep_inputs(r, c, err) < 0) {
        run_close(r);
        return -1;
    }
    return 0;
}

int run_reopen(run *r, const char *dir, error *err)
{
    memset(r, 0, sizeof *r);
    if (strlen(dir) >= sizeof r->dir) {
        return error_set(err, ERROR_USAGE, "%s: path too long", dir);
    }
    snprintf(r->dir, sizeof r->dir, "%s", dir);
    r->log = s_open(r, "log.txt", NULL, err);
    r->eval = r->log && s_lock(r, err) == 0 ? s_open(r, "eval.csv", NULL, err) : NULL;
    r->steps = r->eval ? s_open(r, "steps.csv", NULL, err) : NULL;
    if (!r->steps) {
        run_close(r);
        return -1;
    }
    return 0;
}

/* The size of path without a last line cut short (0 when it holds no
 * whole line): a writer killed mid-row (SIGKILL, with its buffer half
 * flushed) leaves one, and the next writer's first row would run on from
 * it (a restarted worker's step at 1.8e17 s). */
static off_t s_whole_lines(const char *path, off_t size)
{
    FILE *f = fopen(path, "rbe");
    char buf[4096];
    off_t end = size;
    while (f && end > 0) {
        size_t n = end < (off_t)sizeof buf ? (size_t)end : sizeof buf;
        if (fseeko(f, end - (off_t)n, SEEK_SET) != 0 || fread(buf, 1, n, f) != n) {
            end = size;   /* unreadable: left as it is */
            break;
        }
        size_t i = n;
        while (i > 0 && buf[i - 1] != '\n') {
            i--;
        }
        end -= (off_t)(n - i);
        if (i > 0) {
            break;
        }
    }
    if (f) {
        fclose(f);
    }
    return end;
}

FILE *run_append_csv(const char *path, const char *header, bool line_buffered, error *err)
{
    struct stat st;
    off_t size = stat(path, &st) == 0 ? st.st_size : 0;
    off_t whole = size > 0 ? s_whole_lines(path, size) : 0;
    if (whole < size && truncate(path, whole) != 0) {
        error_set(err, ERROR_RUNTIME, "%s: cannot cut its last, partial row: %s", path,
                  strerror(errno));
        return NULL;
    }
    bool fresh = whole == 0;
    FILE *f = fopen(path, "ae");
    if (!f) {
        error_set(err, ERROR_RUNTIME, "%s: cannot write: %s", path, strerror(errno));
        return NULL;
    }
    if (line_buffered) {   /* before any output, as setvbuf must be */
        setvbuf(f, NULL, _IOLBF, 0);
    }
    if (fresh) {
        fprintf(f, "%s\n", header);
    }
    return f;
}

int run_adopt(run *r, const char *dir, const config *c, error *err)
{
    memset(r, 0, sizeof *r);
    if (strlen(dir) >= sizeof r->dir) {
        return error_set(err, ERROR_USAGE, "%s: path too long", dir);
    }
    snprintf(r->dir, sizeof r->dir, "%s", dir);
    char path[4800];
    snprintf(path, sizeof path, "%s/config.ini", r->dir);
    if (config_write(c, path, err) < 0) {
        return -1;
    }
    r->log = s_open(r, "log.txt", NULL, err);
    if (!r->log || s_keep_inputs(r, c, err) < 0) {
        run_close(r);
        return -1;
    }
    return 0;
}

void run_trim_to_whole_lines(const char *path)
{
    int fd = open(path, O_RDWR | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        if (fd >= 0) {
            close(fd);
        }
        return;
    }
    off_t keep = 0;
    char buf[4096];
    for (off_t end = st.st_size; end > 0 && keep == 0;) {
        off_t from = end > (off_t)sizeof buf ? end - (off_t)sizeof buf : 0;
        ssize_t got = pread(fd, buf, (size_t)(end - from), from);
        if (got != end - from) {
            close(fd);
            return;   /* unreadable: left as it is */
        }
        for (ssize_t i = got - 1; i >= 0 && keep == 0; i--) {
            keep = buf[i] == '\n' ? from + i + 1 : 0;
        }
        end = from;
    }
    if (keep < st.st_size && ftruncate(fd, keep) != 0) {
        keep = st.st_size;   /* nothing more to do about it */
    }
    close(fd);
}

int run_close_file(FILE **f, const char *dir, const char *name, error *err)
{
    if (!*f) {
        return 0;
    }
    int why = fflush(*f) != 0 ? errno : 0;
    bool lost = why != 0 || ferror(*f) != 0;   /* an earlier write failed too */
    if (fclose(*f) != 0) {
        lost = true;
        why = why ? why : errno;
    }
    *f = NULL;
    if (!lost) {
        return 0;
    }
    char path[4800];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    run_trim_to_whole_lines(path);
    return error_set(err, ERROR_RUNTIME, "%s/%s: data was lost: %s", dir, name,
                     why ? strerror(why) : "a write failed (is the disk full?)");
}

bool run_files_failing(const run *r)
{
    return (r->eval && ferror(r->eval)) || (r->steps && ferror(r->steps));
}

int run_finish(run *r, error *err)
{
    int eval = run_close_file(&r->eval, r->dir, "eval.csv", err);
    error second;
    int steps = run_close_file(&r->steps, r->dir, "steps.csv", eval < 0 ? &second : err);
    return eval < 0 || steps < 0 ? -1 : 0;
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
    flockfile(r->log);   /* one line whole, when threads log at once */
    fprintf(r->log, "%s ", stamp);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(r->log, fmt, ap);
    va_end(ap);
    fputc('\n', r->log);
    fflush(r->log);
    funlockfile(r->log);
}

void run_eval_text(char *buf, size_t n, double time_s, double epoch, long updates,
                   long samples, double test_loss, double test_acc)
{
    /* NaN's sign is noise: "nan", never "-nan" */
    snprintf(buf, n, "%.6f,%.6f,%ld,%ld," RUN_EVAL_LOSS "," RUN_EVAL_ACC "\n", time_s, epoch,
             updates, samples,
             isnan(test_loss) ? fabs(test_loss) : test_loss, test_acc);
}

void run_eval_row(FILE *f, double time_s, double epoch, long updates, long samples,
                  double test_loss, double test_acc)
{
    char row[256];
    run_eval_text(row, sizeof row, time_s, epoch, updates, samples, test_loss, test_acc);
    fputs(row, f);
    fflush(f);
}

void run_step_row(FILE *f, double time_s, int worker, long step, double loss,
                  long staleness, long bytes)
{
    fprintf(f, "%.6f,%d,%ld,%.9g,%ld,%ld\n", time_s, worker, step, loss, staleness, bytes);
}
