/* checkpoint.c: saving and restoring a shard. */
#include "core/checkpoint.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <zlib.h>

#include "core/run.h"

#define CHECKPOINT_MAGIC "ASGDCKP4"

void checkpoint_path(char *buf, size_t n, const char *dir, int shard)
{
    snprintf(buf, n, "%s/checkpoints/ps-%d.ckpt", dir, shard);
}

/* A growing byte buffer; ok turns false at the first failed allocation. */
typedef struct bytes {
    uint8_t *data;
    size_t len, cap;
    bool ok;
} bytes;

static void s_put(bytes *b, const void *p, size_t n)
{
    if (!b->ok) {
        return;
    }
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n) {
            cap *= 2;
        }
        uint8_t *grown = realloc(b->data, cap);
        if (!grown) {
            b->ok = false;
            return;
        }
        b->data = grown;
        b->cap = cap;
    }
    if (n > 0) {   /* p may be NULL for nothing, as an empty rule state is */
        memcpy(b->data + b->len, p, n);
        b->len += n;
    }
}

static void s_u8(bytes *b, uint8_t v)
{
    s_put(b, &v, 1);
}

static void s_u32(bytes *b, uint32_t v)
{
    uint8_t le[4];
    for (int i = 0; i < 4; i++) {
        le[i] = (uint8_t)(v >> (8 * i));
    }
    s_put(b, le, 4);
}

static void s_u64(bytes *b, uint64_t v)
{
    s_u32(b, (uint32_t)v);
    s_u32(b, (uint32_t)(v >> 32));
}

/* Floats as little-endian bytes (the host's order on every machine asgd
 * builds for; checked at compile time below). */
static void s_floats(bytes *b, const float *v, size_t n)
{
    s_put(b, v, n * sizeof *v);
}

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "checkpoints store floats as the host does: little-endian");

/* An optional vector: a flag, then its n floats. */
static void s_maybe(bytes *b, const float *v, size_t n)
{
    s_u8(b, v != NULL);
    if (v) {
        s_floats(b, v, n);
    }
}

int checkpoint_save(const char *path, server *s, const shard_client *clients,
                    uint32_t generation, const char *settings, error *err)
{
    bytes b = {.ok = true};
    s_put(&b, CHECKPOINT_MAGIC, 8);
    s_u32(&b, (uint32_t)s->shard);
    s_u32(&b, (uint32_t)s->shards);
    s_u32(&b, (uint32_t)s->workers);
    s_u64(&b, s->lo);
    s_u64(&b, s->hi);
    size_t name_len = strlen(s->alg->name);
    s_u32(&b, (uint32_t)name_len);
    s_put(&b, s->alg->name, name_len);
    s_u32(&b, (uint32_t)s->opt->spec.kind);
    size_t settings_len = settings ? strlen(settings) : 0;
    s_u32(&b, (uint32_t)settings_len);
    s_put(&b, settings, settings_len);
    s_u32(&b, generation);
    shard_stats st;
    server_snapshot(s, &st);
    s_u64(&b, st.version);
    s_u64(&b, st.samples);
    char *json = shard_stats_json(&st);
    b.ok = b.ok && json;
    size_t json_len = json ? strlen(json) : 0;
    s_u64(&b, json_len);
    s_put(&b, json, json_len);
    free(json);
    for (int w = 0; w < s->workers; w++) {
        s_u64(&b, atomic_load(&s->worker_samples[w]));
        s_u64(&b, clients[w].push_seq);
        s_u8(&b, clients[w].verdict);
        s_u8(&b, s->done[w]);
        s_u8(&b, s->in_round[w]);
    }
    s_u8(&b, s->evaluator_done);
    s_u64(&b, (uint64_t)s->opt->t);
    s_maybe(&b, s->opt->s1, s->n);
    s_maybe(&b, s->opt->s2, s->n);
    size_t state = s->alg->server_state_bytes && s->state ? s->alg->server_state_bytes(s) : 0;
    s_u64(&b, state);
    s_put(&b, s->state, state);
    s_u64(&b, (uint64_t)s->round_arrived);
    s_maybe(&b, s->round_sum, s->n);
    s_floats(&b, s->theta, s->n);
    s_u32(&b, (uint32_t)crc32_z(0, b.data, b.len));
    if (!b.ok) {
        free(b.data);
        return error_set(err, ERROR_RUNTIME, "%s: out of memory for the checkpoint", path);
    }
    char dir[4200];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) {
        *slash = '\0';
    }
    int rc = run_make_dirs(dir, err) < 0 ? -1 : run_write_atomic(path, b.data, b.len, NULL, 0, err);
    free(b.data);
    return rc;
}

/* Reading back: a cursor over the file; fail() records the first problem. */
typedef struct reader {
    const uint8_t *p, *end;
    const char *problem;
    char said[400];           /* a problem that names what the file holds */
    bool other_job;           /* the problem: another job's settings */
} reader;

static const uint8_t *s_take(reader *r, size_t n)
{
    if (r->problem || (size_t)(r->end - r->p) < n) {
        r->problem = r->problem ? r->problem : "cut short";
        return NULL;
    }
    const uint8_t *at = r->p;
    r->p += n;
    return at;
}

static uint8_t s_get8(reader *r)
{
    const uint8_t *p = s_take(r, 1);
    return p ? *p : 0;
}

static uint32_t s_get32(reader *r)
{
    const uint8_t *p = s_take(r, 4);
    return p ? (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                   (uint32_t)p[3] << 24 : 0;
}

static uint64_t s_get64(reader *r)
{
    uint64_t lo = s_get32(r);
    return lo | (uint64_t)s_get32(r) << 32;
}

static void s_expect(reader *r, uint64_t got, uint64_t want, const char *what)
{
    if (!r->problem && got != want) {
        r->problem = what;
    }
}

/* As s_expect, of the job's shape: a checkpoint of another job (exit 2,
 * as other settings are: "of another number of workers" was exit 1, with
 * a hint that a restart might help). */
static void s_expect_job(reader *r, uint64_t got, uint64_t want, const char *what)
{
    if (!r->problem && got != want) {
        r->problem = what;
        r->other_job = true;
    }
}

/* n floats into out, or (out NULL) skipped. */
static void s_get_floats(reader *r, float *out, size_t n)
{
    const uint8_t *p = s_take(r, n * sizeof(float));
    if (p && out) {
        memcpy(out, p, n * sizeof(float));
    }
}

/* An optional vector saved by s_maybe into out, which must exist exactly
 * when the saved one did. */
static void s_get_maybe(reader *r, float *out, size_t n, const char *what)
{
    uint8_t has = s_get8(r);
    s_expect(r, has, out != NULL, what);
    if (has) {
        s_get_floats(r, out, n);
    }
}

/* Skips an optional vector; want: whether it must be there (-1: either). */
static void s_skip_maybe(reader *r, size_t n, int want, const char *what)
{
    uint8_t has = s_get8(r);
    if (want >= 0) {
        s_expect(r, has, (uint64_t)want, what);
    }
    if (has) {
        s_take(r, n * sizeof(float));
    }
}

static uint8_t *s_read_whole(const char *path, size_t *len, error *err)
{
    FILE *f = fopen(path, "rb");
    struct stat st;
    if (!f || fstat(fileno(f), &st) != 0) {
        error_set(err, ERROR_RUNTIME, "%s: cannot read: %s", path, strerror(errno));
        if (f) {
            fclose(f);
        }
        return NULL;
    }
    uint8_t *data = malloc(st.st_size > 0 ? (size_t)st.st_size : 1);
    *len = data ? fread(data, 1, (size_t)st.st_size, f) : 0;
    fclose(f);
    if (!data || *len != (size_t)st.st_size) {
        free(data);
        error_set(err, ERROR_RUNTIME, "%s: cannot read", path);
        return NULL;
    }
    return data;
}

/* The next line of text (up to end) at *at, its length in *len; false
 * past the end. */
static bool s_next_line(const char **at, const char *end, const char **line, size_t *len)
{
    if (*at >= end) {
        return false;
    }
    const char *nl = memchr(*at, '\n', (size_t)(end - *at));
    *line = *at;
    *len = nl ? (size_t)(nl - *at) : (size_t)(end - *at);
    *at += *len + (nl != NULL);
    return true;
}

/* Orders two "section.key = value" lines by their keys. */
static int s_by_key(const char *a, size_t a_len, const char *b, size_t b_len)
{
    const char *a_eq = memchr(a, ' ', a_len), *b_eq = memchr(b, ' ', b_len);
    size_t a_key = a_eq ? (size_t)(a_eq - a) : a_len, b_key = b_eq ? (size_t)(b_eq - b) : b_len;
    int order = memcmp(a, b, a_key < b_key ? a_key : b_key);
    return order ? order : (a_key > b_key) - (a_key < b_key);
}

/* Says in r where the settings a checkpoint holds (len bytes at kept)
 * and this job's differ: the first line, in order of their keys, that one
 * has and the other has not. */
static void s_settings_differ(reader *r, const char *kept, size_t len, const char *mine)
{
    const char *a = kept, *a_end = kept + len, *b = mine, *b_end = mine + strlen(mine);
    const char *x = NULL, *y = NULL;
    size_t x_len = 0, y_len = 0;
    bool more_x = s_next_line(&a, a_end, &x, &x_len), more_y = s_next_line(&b, b_end, &y, &y_len);
    while (more_x && more_y && x_len == y_len && memcmp(x, y, x_len) == 0) {
        more_x = s_next_line(&a, a_end, &x, &x_len);
        more_y = s_next_line(&b, b_end, &y, &y_len);
    }
    int order = !more_x ? 1 : !more_y ? -1 : s_by_key(x, x_len, y, y_len);
    if (order == 0) {
        snprintf(r->said, sizeof r->said, "of a job of other settings (%.*s in it, %.*s here)",
                 (int)x_len, x, (int)y_len, y);
    } else if (order < 0) {
        snprintf(r->said, sizeof r->said, "of a job of other settings (%.*s in it, unset "
                 "here)", (int)x_len, x);
    } else {
        snprintf(r->said, sizeof r->said, "of a job of other settings (%.*s here, unset in "
                 "it)", (int)y_len, y);
    }
    r->problem = r->said;
    r->other_job = true;
}

/* The checks and the counters; per-client and vector data follow. With s
 * NULL, whose shard it is goes unchecked; with settings NULL, whose job. */
static void s_read_head(reader *r, const server *s, const char *settings, uint32_t *generation,
                        shard_stats *st)
{
    const uint8_t *magic = s_take(r, 8);
    if (magic && memcmp(magic, CHECKPOINT_MAGIC, 8) != 0) {
        r->problem = "not an asgd checkpoint (or of another format version)";
    }
    uint32_t shard = s_get32(r), shards = s_get32(r), workers = s_get32(r);
    uint64_t lo = s_get64(r), hi = s_get64(r);
    if (s) {
        s_expect(r, shard, (uint64_t)s->shard, "another shard's");
        s_expect_job(r, shards, (uint64_t)s->shards, "of a job with another number of shards");
        s_expect_job(r, workers, (uint64_t)s->workers, "of a job with another number of "
                     "workers");
        s_expect_job(r, lo, s->lo, "of another model (range)");
        s_expect_job(r, hi, s->hi, "of another model (range)");
    }
    uint32_t name_len = s_get32(r);
    const uint8_t *name = s_take(r, name_len <= 64 ? name_len : (size_t)-1);
    uint32_t kind = s_get32(r);
    if (s && name && !r->problem) {   /* the rule and the shard's optimizer it ran */
        if (name_len != strlen(s->alg->name) || memcmp(name, s->alg->name, name_len) != 0) {
            snprintf(r->said, sizeof r->said, "of another rule (%.*s, not %s)", (int)name_len,
                     (const char *)name, s->alg->name);
            r->problem = r->said;
            r->other_job = true;
        } else if (kind != (uint32_t)s->opt->spec.kind) {
            const char *was = optim_kind_name((int)kind);
            snprintf(r->said, sizeof r->said, "of another optimizer of the shard (%s, not %s)",
                     was ? was : "unknown", optim_kind_name(s->opt->spec.kind));
            r->problem = r->said;
            r->other_job = true;
        }
    }
    uint32_t settings_len = s_get32(r);
    const uint8_t *kept = s_take(r, settings_len);
    if (settings && kept && !r->problem &&
        (settings_len != strlen(settings) || memcmp(kept, settings, settings_len) != 0)) {
        s_settings_differ(r, (const char *)kept, settings_len, settings);
    }
    *generation = s_get32(r);
    uint64_t version = s_get64(r), samples = s_get64(r);
    uint64_t json_len = s_get64(r);
    const uint8_t *json = s_take(r, json_len);
    error why;
    if (json && shard_stats_parse((const char *)json, json_len, st, &why) < 0) {
        r->problem = "its counters do not parse";
    }
    s_expect(r, st->version, version, "its counters disagree");
    s_expect(r, st->samples, samples, "its counters disagree");
}

/* A reader of a whole checkpoint's len bytes at data, up to its checksum,
 * which it checks. */
static reader s_reader(const uint8_t *data, size_t len)
{
    reader r = {.p = data, .end = len >= 8 + 4 ? data + len - 4 : data};
    if (len < 8 + 4) {
        r.problem = "cut short";
    } else if (crc32_z(0, data, len - 4) !=
                       (uLong)(data[len - 4] | data[len - 3] << 8 | data[len - 2] << 16 |
                               (uLong)data[len - 1] << 24)) {
        r.problem = "corrupt (its checksum does not match)";
    }
    return r;
}

/* The checkpoint at path read whole (the caller frees it), *r past its
 * head, whoever's shard it is, st its counters; NULL (err set) where it
 * cannot be read. */
static uint8_t *s_read_headed(const char *path, reader *r, shard_stats *st, error *err)
{
    size_t len;
    uint8_t *data = s_read_whole(path, &len, err);
    if (data) {
        *r = s_reader(data, len);
        uint32_t generation;
        s_read_head(r, NULL, NULL, &generation, st);
    }
    return data;
}

int checkpoint_stats(const char *path, shard_stats *st, error *err)
{
    reader r;
    uint8_t *data = s_read_headed(path, &r, st, err);
    if (!data) {
        return -1;
    }
    free(data);
    return r.problem ? error_set(err, ERROR_RUNTIME, "%s: cannot read: %s", path, r.problem) : 0;
}

int checkpoint_workers_done(const char *path, int workers, bool *all_done, bool *evaluator_done,
                            error *err)
{
    reader r;
    shard_stats st;
    uint8_t *data = s_read_headed(path, &r, &st, err);
    if (!data) {
        return -1;
    }
    bool all = true;
    for (int w = 0; w < workers; w++) {
        s_take(&r, 8 + 8 + 1);
        all = all && s_get8(&r) != 0;
        s_take(&r, 1);
    }
    bool evaluator = s_get8(&r) != 0;
    free(data);
    *all_done = all && !r.problem;
    if (evaluator_done) {
        *evaluator_done = evaluator && !r.problem;
    }
    return r.problem ? error_set(err, ERROR_RUNTIME, "%s: cannot read: %s", path, r.problem) : 0;
}

int checkpoint_load(const char *path, server *s, shard_client *clients, uint32_t *generation,
                    const char *settings, error *err)
{
    size_t len;
    uint8_t *data = s_read_whole(path, &len, err);
    if (!data) {
        return -1;
    }
    reader r = s_reader(data, len);
    shard_stats st;
    s_read_head(&r, s, settings, generation, &st);
    /* read everything before changing s: a bad file leaves it as it was */
    reader scan = r;
    for (int w = 0; w < s->workers; w++) {
        s_take(&scan, 8 + 8 + 1 + 1 + 1);
    }
    s_take(&scan, 1 + 8);
    s_skip_maybe(&scan, s->n, s->opt->s1 != NULL, "of another optimizer");
    s_skip_maybe(&scan, s->n, s->opt->s2 != NULL, "of another optimizer");
    size_t state = s->alg->server_state_bytes && s->state ? s->alg->server_state_bytes(s) : 0;
    s_expect(&scan, s_get64(&scan), state, "of another rule, or of another version of this rule's state (its size)");
    s_take(&scan, state + 8);
    s_skip_maybe(&scan, s->n, -1, "");
    s_take(&scan, s->n * sizeof(float));
    if (!scan.problem && scan.p != scan.end) {
        scan.problem = "longer than its shard";
    }
    if (r.other_job) {   /* another job's folder: no damage, and nothing to take up */
        free(data);
        return error_set(err, ERROR_USAGE, "%s: cannot restore: it is %s; a job takes up "
                         "only its own checkpoints: give it another run folder, or move "
                         "that job's away", path, r.problem);
    }
    if (r.problem || scan.problem) {
        free(data);
        return error_set(err, ERROR_RUNTIME, "%s: cannot restore: %s", path,
                         r.problem ? r.problem : scan.problem);
    }
    s->stats = st;
    atomic_store(&s->version, st.version);
    atomic_store(&s->samples, st.samples);
    s->done_count = 0;
    for (int w = 0; w < s->workers; w++) {
        atomic_store(&s->worker_samples[w], s_get64(&r));
        clients[w].push_seq = s_get64(&r);
        clients[w].verdict = s_get8(&r);
        s->done[w] = s_get8(&r) != 0;
        s->done_count += s->done[w];
        s->in_round[w] = s_get8(&r) != 0;
    }
    s->evaluator_done = s_get8(&r) != 0;
    s->opt->t = (long)s_get64(&r);
    s_get_maybe(&r, s->opt->s1, s->n, "");
    s_get_maybe(&r, s->opt->s2, s->n, "");
    s_get64(&r);
    if (state) {
        memcpy(s->state, s_take(&r, state), state);
    }
    s->round_arrived = (int)s_get64(&r);
    if (s_get8(&r)) {
        if (!s->round_sum && !(s->round_sum = calloc(s->n ? s->n : 1, sizeof *s->round_sum))) {
            free(data);
            return error_set(err, ERROR_RUNTIME, "%s: out of memory", path);
        }
        s_get_floats(&r, s->round_sum, s->n);
    }
    s_get_floats(&r, s->theta, s->n);
    free(data);
    return 0;
}
