/* summary.c: shard counters to and from ps-K.json, and summary.json. */
#include "core/summary.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cJSON.h>

#include "core/provenance.h"
#include "core/run.h"

/* The shard's counters in ps-K.json, in this order. */
#define SHARD_COUNTERS(X) \
    X(version) X(samples) X(pushes) X(dropped) X(rejected) X(nonfinite) X(foreign) \
    X(unauthenticated) X(unread) X(duplicates) X(restarts) X(lost_updates) X(checkpoints) \
    X(checkpoint_us) X(staleness_sum) \
    X(staleness_max) X(bytes_in) X(bytes_out)
/* Counters added since: a file (or a checkpoint's counters) written before
 * them reads them as 0. */
#define SHARD_COUNTERS_SINCE(X) X(injected_drops) X(injected_duplicates) X(push_bytes) \
    X(push_messages) X(shared_pushes) X(resumes)

char *shard_stats_json(const shard_stats *st)
{
    cJSON *j = cJSON_CreateObject();
    if (!j) {
        return NULL;
    }
    cJSON_AddNumberToObject(j, "shard", st->shard);
    cJSON_AddNumberToObject(j, "lo", (double)st->lo);
    cJSON_AddNumberToObject(j, "hi", (double)st->hi);
#define ADD(name) cJSON_AddNumberToObject(j, #name, (double)st->name);
    SHARD_COUNTERS(ADD)
    SHARD_COUNTERS_SINCE(ADD)
#undef ADD
    cJSON_AddNumberToObject(j, "first_pull_at", st->first_pull_at);
    cJSON_AddNumberToObject(j, "last_push_at", st->last_push_at);
    cJSON_AddNumberToObject(j, "resumed_at", st->resumed_at);
    cJSON_AddNumberToObject(j, "trained_s", st->trained_s);
    cJSON_AddNumberToObject(j, "started_at", st->started_at);
    if (st->read_at > 0) {
        cJSON_AddNumberToObject(j, "read_at", st->read_at);
    }
    cJSON *clocks = cJSON_AddArrayToObject(j, "clock_of");
    for (int i = 0; clocks && i < SHARD_TIMES; i++) {
        cJSON_AddItemToArray(clocks, cJSON_CreateNumber(st->clock_of[i]));
    }
    cJSON *h = cJSON_AddArrayToObject(j, "staleness_histogram");
    int last = SUMMARY_STALENESS_BINS - 1;
    while (last > 0 && st->histogram[last] == 0) {
        last--;
    }
    for (int i = 0; h && i <= last; i++) {
        cJSON_AddItemToArray(h, cJSON_CreateNumber((double)st->histogram[i]));
    }
    char *text = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    return text;
}

int shard_stats_write(const char *path, const shard_stats *st, error *err)
{
    char *text = shard_stats_json(st);
    if (!text) {
        return error_set(err, ERROR_RUNTIME, "%s: out of memory", path);
    }
    int rc = run_write_atomic(path, text, strlen(text), "\n", 1, err);
    cJSON_free(text);
    return rc;
}

static bool s_number(cJSON *o, const char *key, double *out)
{
    cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0)) {
        return false;
    }
    *out = v->valuedouble;
    return true;
}

/* A counter: a whole number a uint64_t holds (2^64, as a forged message
 * can make one, does not: its conversion is undefined). */
static bool s_count(cJSON *o, const char *key, uint64_t *out)
{
    double v;
    if (!s_number(o, key, &v) || !(v < 18446744073709551616.0)) {
        return false;
    }
    *out = (uint64_t)v;
    return true;
}

/* Every field of ps-K.json from its parsed JSON. */
static int s_stats_from(cJSON *j, shard_stats *st)
{
    memset(st, 0, sizeof *st);
    double v;
    bool ok = j && s_number(j, "shard", &v) && (st->shard = (int)v, true) &&
              s_count(j, "lo", &st->lo) && s_count(j, "hi", &st->hi) &&
              s_number(j, "first_pull_at", &st->first_pull_at) &&
              s_number(j, "last_push_at", &st->last_push_at) &&
              s_number(j, "resumed_at", &st->resumed_at) &&
              s_number(j, "trained_s", &st->trained_s);
#define GET(name) ok = ok && s_count(j, #name, &st->name);
    SHARD_COUNTERS(GET)
#undef GET
#define GET_SINCE(name) \
    ok = ok && (!cJSON_GetObjectItemCaseSensitive(j, #name) || \
                s_count(j, #name, &st->name));
    SHARD_COUNTERS_SINCE(GET_SINCE)
#undef GET_SINCE
    ok = ok && (!cJSON_GetObjectItemCaseSensitive(j, "started_at") ||   /* added since */
                s_number(j, "started_at", &st->started_at));
    ok = ok && (!cJSON_GetObjectItemCaseSensitive(j, "read_at") ||   /* a STATS reply's */
                s_number(j, "read_at", &st->read_at));
    cJSON *clocks = j ? cJSON_GetObjectItemCaseSensitive(j, "clock_of") : NULL;   /* added
                                                                                 * since */
    ok = ok && (!clocks || (cJSON_IsArray(clocks) && cJSON_GetArraySize(clocks) == SHARD_TIMES));
    for (int i = 0; ok && clocks && i < SHARD_TIMES; i++) {
        cJSON *g = cJSON_GetArrayItem(clocks, i);
        ok = cJSON_IsNumber(g) && g->valuedouble >= 0 && g->valuedouble < 4294967296.0;
        st->clock_of[i] = ok ? (uint32_t)g->valuedouble : 0;
    }
    cJSON *h = j ? cJSON_GetObjectItemCaseSensitive(j, "staleness_histogram") : NULL;
    ok = ok && cJSON_IsArray(h) && cJSON_GetArraySize(h) <= SUMMARY_STALENESS_BINS;
    for (int i = 0; ok && i < cJSON_GetArraySize(h); i++) {
        cJSON *bin = cJSON_GetArrayItem(h, i);
        ok = cJSON_IsNumber(bin) && bin->valuedouble >= 0 &&
             bin->valuedouble < 18446744073709551616.0;
        st->histogram[i] = ok ? (uint64_t)bin->valuedouble : 0;
    }
    return ok ? 0 : -1;
}

int shard_stats_read(const char *path, shard_stats *st, error *err)
{
    cJSON *j = run_read_json(path);
    int rc = s_stats_from(j, st);
    cJSON_Delete(j);
    return rc == 0 ? 0 : error_set(err, ERROR_RUNTIME, "%s: missing, or a counter is missing "
                                   "or malformed", path);
}

int shard_stats_parse(const char *text, size_t len, shard_stats *st, error *err)
{
    cJSON *j = cJSON_ParseWithLength(text, len);
    int rc = s_stats_from(j, st);
    cJSON_Delete(j);
    return rc == 0 ? 0 : error_set(err, ERROR_RUNTIME, "shard counters: malformed");
}

void summary_init(run_summary *s)
{
    memset(s, 0, sizeof *s);
    s->final_test_acc = s->best_test_acc = s->final_test_loss = NAN;
    s->started_at = run_wall();
    snprintf(s->device, sizeof s->device, "cpu");
}

/* x as eval.csv's row writes it (fmt), read back: the summary's figures
 * are its last row's in every mode (a launcher reads them from that row,
 * the simulator, threads mode and a job started role by role had them to
 * the last bit: 1.1327842546403408 beside a row's 1.13278425) */
static double s_as_written(const char *fmt, double x)
{
    char text[64];
    snprintf(text, sizeof text, fmt, x);
    return isfinite(x) ? strtod(text, NULL) : x;
}

bool summary_add_eval(run_summary *s, long updates, double loss, double acc)
{
    loss = s_as_written(RUN_EVAL_LOSS, loss);
    acc = s_as_written(RUN_EVAL_ACC, acc);
    s->final_test_loss = loss;
    /* a diverged model's accuracy is unknown (null), as its best is: its
     * parameters NaN, 0.107 read as a number beside 0.672 and was
     * averaged into a figure */
    s->final_test_acc = isfinite(loss) ? acc : NAN;
    /* the best of a trained model, not the initial one's, nor a diverged
     * one's (its parameters NaN, its accuracy whatever argmax makes of them) */
    if (updates > 0 && isfinite(loss) && (isnan(s->best_test_acc) || acc > s->best_test_acc)) {
        s->best_test_acc = acc;
    }
    if (!isfinite(loss)) {
        s->diverged = true;
    }
    return s->diverged;
}

/* text's whole lines: cut after its last newline; NULL without one */
static char *s_whole_lines(char *text)
{
    char *end = text ? strrchr(text, '\n') : NULL;   /* a row cut short is no row */
    if (end) {
        end[1] = '\0';
    }
    return end ? text : NULL;
}

void summary_take_evals(run_summary *s, const char *eval_csv)
{
    s->final_test_acc = s->best_test_acc = s->final_test_loss = NAN;
    char *text = run_read_file(eval_csv), *save = NULL;
    for (char *line = s_whole_lines(text) ? strtok_r(text, "\n", &save) : NULL; line;
         line = strtok_r(NULL, "\n", &save)) {
        double t, epoch, loss, acc;
        long updates, samples;
        if (sscanf(line, "%lf,%lf,%ld,%ld,%lf,%lf", &t, &epoch, &updates, &samples, &loss,
                   &acc) == 6) {
            summary_add_eval(s, updates, loss, acc);
        }
    }
    free(text);
}

bool summary_evals_last_row(const char *eval_csv, double *time_s, long *updates, long *samples)
{
    char *text = run_read_file(eval_csv), *save = NULL;
    bool found = false;
    for (char *line = s_whole_lines(text) ? strtok_r(text, "\n", &save) : NULL; line;
         line = strtok_r(NULL, "\n", &save)) {
        double t, epoch;
        long u, n;
        if (sscanf(line, "%lf,%lf,%ld,%ld,", &t, &epoch, &u, &n) == 4 && u >= 0 && n >= 0) {
            *time_s = t;
            *updates = u;
            *samples = n;
            found = true;
        }
    }
    free(text);
    return found;
}

uint64_t summary_evals_last_updates(const char *eval_csv)
{
    double t;
    long updates, samples;
    return summary_evals_last_row(eval_csv, &t, &updates, &samples) ? (uint64_t)updates : 0;
}

long summary_evals_cut(const char *eval_csv, uint64_t updates, double t, error *err)
{
    char *text = run_read_file(eval_csv);
    if (!text) {
        return 0;
    }
    long cut = 0;
    const char *from = NULL;
    for (const char *line = text, *end; (end = strchr(line, '\n')); line = end + 1) {
        double row_t, epoch;
        long row_updates;
        if (!from && sscanf(line, "%lf,%lf,%ld,", &row_t, &epoch, &row_updates) == 3 &&
            (row_updates > (long)updates || row_t > t + 1e-6)) {
            from = line;
        }
        cut += from != NULL;
    }
    if (!from) {   /* nothing past the checkpoint; a partial last row is run_append_csv's */
        cut = 0;
    } else if (truncate(eval_csv, (off_t)(from - text)) != 0) {
        cut = error_set(err, ERROR_RUNTIME, "%s: cannot cut the rows after the checkpoint: %s",
                        eval_csv, strerror(errno));
    }
    free(text);
    return cut;
}

void summary_say_diverged(const run_summary *s, const char *dir)
{
    char why[96];
    if (isfinite(s->final_test_loss)) {
        snprintf(why, sizeof why, "workers pushed NaN or infinite values (%ld refused)",
                 s->nonfinite);
    } else {
        snprintf(why, sizeof why, "the test loss became %s",
                 isnan(s->final_test_loss) ? "nan" : "infinite");
    }
    fprintf(stderr, "asgd: %s diverged: %s after %ld updates; the run stopped there and is "
            "complete with \"diverged\": true (%s)\n", s->algorithm, why, s->updates, dir);
}

void summary_add_shard(run_summary *s, const shard_stats *st)
{
    s->pushes += (long)st->pushes;
    s->push_bytes += (double)st->push_bytes;
    s->push_messages += (long)st->push_messages;
    s->shared_pushes += (long)st->shared_pushes;
    if (st->push_messages > 0) {
        s->bytes_per_push += (double)st->push_bytes / (double)st->push_messages;
    }
    s->staleness_sum += (double)st->staleness_sum;
    if ((long)st->staleness_max > s->staleness_max) {
        s->staleness_max = (long)st->staleness_max;
    }
    s->rejected += (long)st->rejected;
    s->foreign += (long)st->foreign;
    s->shard_restarts += (long)st->restarts;
    s->duplicates += (long)st->duplicates;
    s->injected_drops += (long)st->injected_drops;
    s->injected_duplicates += (long)st->injected_duplicates;
    s->checkpoints += (long)st->checkpoints;
    s->checkpoint_s += (double)st->checkpoint_us * 1e-6;
    if ((long)st->lost_updates > s->lost_updates) {
        s->lost_updates = (long)st->lost_updates;
    }
    s->unauthenticated += (long)st->unauthenticated;
    s->unread += (long)st->unread;
    if ((long)st->nonfinite > s->nonfinite) {   /* a push refused by several shards, once */
        s->nonfinite = (long)st->nonfinite;
    }
    for (int i = 0; i < SUMMARY_STALENESS_BINS; i++) {
        s->staleness_histogram[i] += (long)st->histogram[i];
    }
    if (st->shard == 0) {
        s->updates = (long)st->version;
        s->samples = (long)st->samples;
        s->dropped = (long)st->dropped;
    }
    if (st->first_pull_at > 0 && (s->first_pull_at == 0 || st->first_pull_at < s->first_pull_at)) {
        s->first_pull_at = st->first_pull_at;
    }
    s->last_push_at = fmax(s->last_push_at, st->last_push_at);
    if (st->first_pull_at == 0) {
        s->stopped_trained_s = fmax(s->stopped_trained_s, st->trained_s);
    }
}

void summary_finish(run_summary *s, long n_train)
{
    s->staleness_mean = s->pushes > 0 ? s->staleness_sum / (double)s->pushes : 0;
    s->epochs = n_train > 0 ? (double)s->samples / (double)n_train : 0;
    if (s->train_time_s == 0 && s->first_pull_at > 0 && s->last_push_at > s->first_pull_at) {
        s->train_time_s = s->last_push_at - s->first_pull_at;
    } else if (s->train_time_s == 0 && s->first_pull_at == 0) {
        /* resumed after every worker had finished: 0, and samples/s 0 with it */
        s->train_time_s = s->stopped_trained_s;
    }
    s->samples_per_s = s->train_time_s > 0 ? (double)s->samples / s->train_time_s : 0;
}

/* The run's identity and where it ran. */
/* What made one session of a run. */
static cJSON *s_session(const char *started, const provenance *p)
{
    cJSON *one = cJSON_CreateObject();
    cJSON_AddStringToObject(one, "started", started);
    cJSON_AddStringToObject(one, "command", p->command);
    cJSON_AddStringToObject(one, "git_commit", p->commit);
    cJSON_AddBoolToObject(one, "git_dirty", p->dirty);
    cJSON_AddStringToObject(one, "host", p->host);
    return one;
}

void summary_take_sessions(run_summary *s, const cJSON *old)
{
    s->sessions_before[0] = '\0';
    if (!old) {
        return;
    }
    cJSON *list = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(old, "sessions"), true);
    if (!cJSON_IsArray(list)) {   /* a summary from before sessions were kept */
        cJSON_Delete(list);
        list = cJSON_CreateArray();
        cJSON *one = cJSON_CreateObject();
        const char *keys[] = {"started", "command", "git_commit", "git_dirty", "host"};
        for (int k = 0; k < 5; k++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(old, keys[k]);
            if (v) {
                cJSON_AddItemToObject(one, keys[k], cJSON_Duplicate(v, true));
            }
        }
        cJSON_AddItemToArray(list, one);
    }
    /* past what the summary holds, the sessions after the first go, the
     * oldest first: the first's command and commit are what it keeps */
    char *text = cJSON_PrintUnformatted(list);
    while (text && strlen(text) >= sizeof s->sessions_before && cJSON_GetArraySize(list) > 1) {
        cJSON_DeleteItemFromArray(list, 1);
        free(text);
        text = cJSON_PrintUnformatted(list);
    }
    if (text && strlen(text) < sizeof s->sessions_before) {
        snprintf(s->sessions_before, sizeof s->sessions_before, "%s", text);
    }
    free(text);
    cJSON_Delete(list);
}

static void s_add_identity(cJSON *j, const run_summary *s)
{
    provenance p;
    provenance_get(&p);
    cJSON_AddStringToObject(j, "algorithm", s->algorithm);
    cJSON_AddStringToObject(j, "label", s->label ? s->label : s->algorithm);
    cJSON_AddStringToObject(j, "model", s->model);
    cJSON_AddNumberToObject(j, "workers", s->workers);
    cJSON_AddStringToObject(j, "mode", s->mode);
    cJSON_AddStringToObject(j, "dataset", s->dataset);
    cJSON_AddStringToObject(j, "data_path", s->data_path ? s->data_path : "");
    cJSON_AddNumberToObject(j, "params", (double)s->params);
    cJSON_AddNumberToObject(j, "seed", (double)s->seed);
    cJSON_AddNumberToObject(j, "epochs_target", s->epochs_target);
    cJSON_AddStringToObject(j, "device", s->device);
    cJSON_AddNumberToObject(j, "blas_threads", s->blas_threads);
    char started[64];
    time_t t = (time_t)s->started_at;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(started, sizeof started, "%Y-%m-%dT%H:%M:%SZ", &tm);
    cJSON_AddStringToObject(j, "started", started);
    cJSON_AddStringToObject(j, "asgd_version", p.version);
    cJSON_AddStringToObject(j, "git_commit", p.commit);
    cJSON_AddBoolToObject(j, "git_dirty", p.dirty);
    cJSON_AddStringToObject(j, "host", p.host);
    cJSON_AddStringToObject(j, "cpu", p.cpu);
    cJSON_AddNumberToObject(j, "cores", (double)p.cores);
    cJSON_AddStringToObject(j, "command", p.command);
    cJSON_AddStringToObject(j, "build", p.build);
    cJSON_AddStringToObject(j, "compiler", p.compiler);
    cJSON_AddStringToObject(j, "blas", p.blas);
    cJSON_AddStringToObject(j, "zmq", p.zmq);
    cJSON_AddStringToObject(j, "environment", p.environment);
    cJSON *inputs = s->inputs[0] ? cJSON_Parse(s->inputs) : NULL;
    cJSON_AddItemToObject(j, "inputs", cJSON_IsObject(inputs) ? inputs : cJSON_CreateObject());
    if (!cJSON_IsObject(inputs)) {
        cJSON_Delete(inputs);
    }
    cJSON *sessions = s->sessions_before[0] ? cJSON_Parse(s->sessions_before) : NULL;
    if (!cJSON_IsArray(sessions)) {
        cJSON_Delete(sessions);
        sessions = cJSON_CreateArray();
    }
    cJSON_AddItemToArray(sessions, s_session(started, &p));
    cJSON_AddItemToObject(j, "sessions", sessions);
}

int summary_end(run_summary *s, run *r, int rc, error *err)
{
    error lost = {0};
    if (run_finish(r, &lost) < 0 && rc == 0) {
        *err = lost;
        rc = -1;
    }
    s->complete = rc == 0;
    snprintf(s->error, sizeof s->error, "%s", rc == 0 ? "" : err->msg);
    return rc;
}

/* The length of the UTF-8 sequence at p (1 to 4), or 0 where it is not
 * one (a stray or overlong byte, a surrogate, past U+10FFFF). */
static int s_utf8_length(const unsigned char *p)
{
    if (p[0] < 0x80) {
        return 1;
    }
    int n = p[0] >= 0xc2 && p[0] <= 0xdf ? 2 : p[0] >= 0xe0 && p[0] <= 0xef ? 3
            : p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : 0;
    unsigned char lo = p[0] == 0xe0 ? 0xa0 : p[0] == 0xf0 ? 0x90 : 0x80;
    unsigned char hi = p[0] == 0xed ? 0x9f : p[0] == 0xf4 ? 0x8f : 0xbf;
    for (int i = 1; i < n; i++) {
        if (p[i] < (i == 1 ? lo : 0x80) || p[i] > (i == 1 ? hi : 0xbf)) {
            return 0;
        }
    }
    return n;
}

/* JSON text whose strings hold bytes that are not UTF-8 (a label or a
 * command line in Latin-1) with each such byte as \ufffd, the
 * replacement character: cJSON writes them as they are, and Python's
 * json.load refused the summary. NULL when out of memory. */
static char *s_as_utf8(const char *text)
{
    size_t len = strlen(text);
    char *out = malloc(6 * len + 1), *o = out;
    for (const unsigned char *p = (const unsigned char *)text; out && *p;) {
        int n = s_utf8_length(p);
        if (n == 0) {
            memcpy(o, "\\ufffd", 6);
            o += 6;
            p++;
        } else {
            memcpy(o, p, (size_t)n);
            o += n;
            p += n;
        }
    }
    if (out) {
        *o = '\0';
    }
    return out;
}

int summary_write(const char *dir, const run_summary *s, error *err)
{
    cJSON *j = cJSON_CreateObject();
    if (!j) {
        return error_set(err, ERROR_RUNTIME, "summary: out of memory");
    }
    s_add_identity(j, s);
    /* a diverged run's final numbers are no result (null), also where its
     * model stayed finite because the shards refused the NaN pushes: the
     * accuracy of a model the rule had stopped moving (0.102 at a loss of
     * 2e27) read as a seed's result beside the others' */
    cJSON_AddNumberToObject(j, "final_test_acc", s->diverged ? NAN : s->final_test_acc);
    cJSON_AddNumberToObject(j, "best_test_acc", s->best_test_acc);
    cJSON_AddNumberToObject(j, "final_test_loss", s->diverged ? NAN : s->final_test_loss);
    cJSON_AddBoolToObject(j, "diverged", s->diverged);
    cJSON_AddNumberToObject(j, "time_s", s->time_s);
    cJSON_AddNumberToObject(j, "startup_s", s->startup_s);
    cJSON_AddNumberToObject(j, "train_time_s", s->train_time_s);
    cJSON_AddNumberToObject(j, "wall_time_s", s->wall_time_s);
    if (s->uncounted) {
        cJSON_AddNullToObject(j, "epochs");
        cJSON_AddNullToObject(j, "samples");
        cJSON_AddNullToObject(j, "samples_per_s");
        cJSON_AddNullToObject(j, "updates");
    } else {
        cJSON_AddNumberToObject(j, "epochs", s->epochs);
        cJSON_AddNumberToObject(j, "samples", (double)s->samples);
        cJSON_AddNumberToObject(j, "samples_per_s", s->samples_per_s);
        cJSON_AddNumberToObject(j, "updates", (double)s->updates);
    }
    cJSON_AddNumberToObject(j, "pushes", (double)s->pushes);
    cJSON_AddNumberToObject(j, "staleness_mean", s->staleness_mean);
    cJSON_AddNumberToObject(j, "staleness_max", (double)s->staleness_max);
    if (s->servers > 0) {
        cJSON_AddNumberToObject(j, "servers", s->servers);
        if (s->shards_missing > 0) {
            cJSON_AddNumberToObject(j, "shards_missing", s->shards_missing);
        }
        cJSON_AddStringToObject(j, "compress", s->compress[0] ? s->compress : "none");
        cJSON_AddNumberToObject(j, "push_bytes", s->push_bytes);
        cJSON_AddNumberToObject(j, "bytes_per_push", s->bytes_per_push);
        cJSON_AddNumberToObject(j, "push_messages", (double)s->push_messages);
        cJSON_AddNumberToObject(j, "shared_pushes", (double)s->shared_pushes);
        cJSON_AddNumberToObject(j, "dropped", (double)s->dropped);
        cJSON_AddNumberToObject(j, "rejected", (double)s->rejected);
        cJSON_AddNumberToObject(j, "foreign", (double)s->foreign);
        cJSON_AddNumberToObject(j, "unauthenticated", (double)s->unauthenticated);
        cJSON_AddNumberToObject(j, "unread", (double)s->unread);
        cJSON_AddNumberToObject(j, "nonfinite", (double)s->nonfinite);
        cJSON_AddNumberToObject(j, "restarts", s->restarts);
        cJSON_AddNumberToObject(j, "resumes", s->resumes);
        if (s->resumes > 0) {
            cJSON *base = cJSON_AddObjectToObject(j, "resume_base");
            cJSON_AddNumberToObject(base, "wall_time_s", s->base_wall_s);
            cJSON_AddNumberToObject(base, "startup_s", s->base_startup_s);
        }
        cJSON_AddNumberToObject(j, "shard_restarts", (double)s->shard_restarts);
        cJSON_AddNumberToObject(j, "lost_updates", (double)s->lost_updates);
        cJSON_AddNumberToObject(j, "duplicates", (double)s->duplicates);
        cJSON_AddNumberToObject(j, "injected_drops", (double)s->injected_drops);
        cJSON_AddNumberToObject(j, "injected_duplicates", (double)s->injected_duplicates);
        cJSON_AddNumberToObject(j, "checkpoints", (double)s->checkpoints);
        cJSON_AddNumberToObject(j, "checkpoint_s", s->checkpoint_s);
    }
    if (strcmp(s->mode, "sim") == 0) {
        cJSON_AddNumberToObject(j, "sim_events", (double)s->sim_events);
    }
    int last = SUMMARY_STALENESS_BINS - 1;
    while (last > 0 && s->staleness_histogram[last] == 0) {
        last--;
    }
    cJSON *h = cJSON_AddArrayToObject(j, "staleness_histogram");
    for (int i = 0; h && i <= last; i++) {
        cJSON_AddItemToArray(h, cJSON_CreateNumber((double)s->staleness_histogram[i]));
    }
    if (!s->complete && s->error[0]) {
        cJSON_AddStringToObject(j, "error", s->error);
    }
    cJSON_AddBoolToObject(j, "complete", s->complete);
    char *printed = cJSON_Print(j);
    cJSON_Delete(j);
    char *text = printed ? s_as_utf8(printed) : NULL;
    cJSON_free(printed);
    if (!text) {
        return error_set(err, ERROR_RUNTIME, "summary: out of memory");
    }
    char path[4800];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    int rc = run_write_atomic(path, text, strlen(text), "\n", 1, err);
    free(text);
    return rc;
}
