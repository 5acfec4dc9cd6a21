/* results.c: a sweep's results.csv, RFC 4180: a header, then a row per
 * complete run with the grid's values, the seed, every field of the run's
 * summary.json but its seed (the union over the runs, in the order they
 * first appear; empty where a run has none; a list as its values separated
 * by spaces; whole numbers in full, others to 9 significant digits), and
 * the run's folder relative to results.csv. A field holding
 * a comma, a quote or a line break is quoted, its quotes doubled. Rows
 * that another build or host made are counted on stderr. */
#include "sweep/grid.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "core/provenance.h"
#include "core/run.h"

#define RESULTS_MAX_FIELDS 128

typedef struct columns {
    const char *names[RESULTS_MAX_FIELDS];   /* owned by the summaries */
    int count;
} columns;

/* One CSV field, quoted when it must be. */
static void s_field(FILE *f, const char *text, bool first)
{
    if (!first) {
        fputc(',', f);
    }
    if (!strpbrk(text, ",\"\r\n")) {
        fputs(text, f);
        return;
    }
    fputc('"', f);
    for (const char *p = text; *p; p++) {
        if (*p == '"') {
            fputc('"', f);
        }
        fputc(*p, f);
    }
    fputc('"', f);
}

/* A number as text: a whole one (a counter: push_bytes passes 1e9 in one
 * epoch) in full, where "%.9g" would round it; others to 9 significant
 * digits. */
static int s_number(char *out, size_t n, double d)
{
    return snprintf(out, n, d == floor(d) && fabs(d) < 0x1p53 ? "%.0f" : "%.9g", d);
}

/* A summary value as text: numbers as s_number writes them, booleans as
 * true / false, lists as their values separated by spaces. */
static void s_text(const cJSON *v, char *out, size_t n)
{
    out[0] = '\0';
    if (cJSON_IsString(v)) {
        snprintf(out, n, "%s", v->valuestring);
    } else if (cJSON_IsNumber(v)) {
        s_number(out, n, v->valuedouble);
    } else if (cJSON_IsBool(v)) {
        snprintf(out, n, "%s", cJSON_IsTrue(v) ? "true" : "false");
    } else if (cJSON_IsArray(v)) {
        size_t at = 0;
        const cJSON *item;
        cJSON_ArrayForEach(item, v) {
            if (at + 32 < n) {
                if (at) {
                    out[at++] = ' ';
                }
                at += (size_t)s_number(out + at, n - at,
                                       cJSON_IsNumber(item) ? item->valuedouble : 0);
            }
        }
    }
}

/* Whether v fits a column: a string, number or boolean, or a list of
 * numbers (the staleness histogram); not an object or a list of objects
 * (inputs, sessions: summary.json keeps them), which came out as 0s. */
static bool s_one_cell(const cJSON *v)
{
    if (cJSON_IsObject(v)) {
        return false;
    }
    if (!cJSON_IsArray(v)) {
        return true;
    }
    const cJSON *item;
    cJSON_ArrayForEach(item, v) {
        if (!cJSON_IsNumber(item)) {
            return false;
        }
    }
    return true;
}

/* The summary's fields not seen before, but its seed (the sweep's seed
 * column has it) and those that fit no cell. */
static void s_add_columns(columns *c, const cJSON *summary)
{
    const cJSON *v;
    cJSON_ArrayForEach(v, summary) {
        bool seen = strcmp(v->string, "seed") == 0 || !s_one_cell(v);
        for (int i = 0; i < c->count && !seen; i++) {
            seen = strcmp(c->names[i], v->string) == 0;
        }
        if (!seen && c->count < RESULTS_MAX_FIELDS) {
            c->names[c->count++] = v->string;
        }
    }
}

static void s_row(FILE *f, const sweep *s, const sweep_run *run, const columns *c,
                  const cJSON *summary)
{
    for (int k = 0; k < s->nkeys; k++) {
        /* the value from the run's overrides, in grid order */
        s_field(f, strchr(run->overrides[k], '=') + 1, k == 0);
    }
    s_field(f, strchr(run->overrides[s->nkeys], '=') + 1, s->nkeys == 0);   /* the seed */
    for (int i = 0; i < c->count; i++) {
        char text[4096];
        s_text(cJSON_GetObjectItemCaseSensitive(summary, c->names[i]), text, sizeof text);
        s_field(f, text, false);
    }
    s_field(f, run->id, false);
    fputc('\n', f);
}

/* A summary's build and host, "asgd 0.1.0, commit 1a2b3c4, Release, on
 * host", into out; with summary NULL, those of a run this process (p)
 * would make. */
static void s_made_by(const cJSON *summary, const provenance *p, char *out, size_t n)
{
    const char *keys[] = {"asgd_version", "git_commit", "build", "host"};
    const char *mine[] = {p->version, p->commit, p->build, p->host};
    const char *v[4];
    for (int i = 0; i < 4; i++) {
        const cJSON *j = summary ? cJSON_GetObjectItemCaseSensitive(summary, keys[i]) : NULL;
        v[i] = !summary ? mine[i] : cJSON_IsString(j) ? j->valuestring : "?";
    }
    bool dirty = summary ? cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(summary, "git_dirty"))
                         : p->dirty;
    snprintf(out, n, "asgd %s, commit %.7s%s, %s, on %s", v[0], v[1],
             dirty ? " with uncommitted changes" : "", v[2], v[3]);
}

/* Says on stderr how many of the runs in results.csv another build, or
 * another host, made (complete runs a sweep keeps from an earlier call):
 * their times and results are that build's, beside this one's rows. Two
 * builds of one commit, both with uncommitted changes, cannot be told
 * apart, and are not. */
static void s_say_other_builds(const sweep *s, cJSON *const *summaries)
{
    char here[800], first[800] = "", made[800];
    provenance p;
    provenance_get(&p);
    s_made_by(NULL, &p, here, sizeof here);
    int others = 0, rows = 0;
    const char *dir = "";
    for (int r = 0; r < s->nruns; r++) {
        if (!summaries[r]) {
            continue;
        }
        rows++;
        s_made_by(summaries[r], &p, made, sizeof made);
        if (strcmp(made, here) != 0 && others++ == 0) {
            snprintf(first, sizeof first, "%s", made);
            dir = s->runs[r].id;
        }
    }
    if (others > 0) {
        fprintf(stderr, "asgd sweep: %d of the %d runs in results.csv %s made by another "
                "build or host than this one (%s: %s; this one: %s): their times and results "
                "are that build's; remove their folders to run them again with this one\n",
                others, rows, others > 1 ? "were" : "was", dir, first, here);
    }
}

int sweep_results(const sweep *s, error *err)
{
    cJSON **summaries = calloc((size_t)s->nruns, sizeof *summaries);
    if (!summaries) {
        return error_set(err, ERROR_RUNTIME, "out of memory");
    }
    columns c = {0};
    for (int r = 0; r < s->nruns; r++) {
        char path[5600];
        snprintf(path, sizeof path, "%s/summary.json", s->runs[r].dir);
        summaries[r] = s->runs[r].complete ? run_read_json(path) : NULL;
        if (summaries[r]) {
            s_add_columns(&c, summaries[r]);
        }
    }
    char path[5600];
    snprintf(path, sizeof path, "%s/%s/results.csv", s->out, s->name);
    /* made in memory and written whole (run_write_atomic): written in place,
     * a full disk cut it mid-row, a run of empty fields to csv readers, and
     * truncated the last whole one first */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    int rc = 0;
    if (f) {
        for (int k = 0; k < s->nkeys; k++) {
            s_field(f, s->keys[k].key, k == 0);
        }
        s_field(f, "seed", s->nkeys == 0);
        for (int i = 0; i < c.count; i++) {
            s_field(f, c.names[i], false);
        }
        s_field(f, "run_dir", false);
        fputc('\n', f);
        for (int r = 0; r < s->nruns; r++) {
            if (summaries[r]) {
                s_row(f, s, &s->runs[r], &c, summaries[r]);
            }
        }
    }
    bool bad = !f;
    if (f) {
        bad = ferror(f) != 0;
        bad = fclose(f) != 0 || bad;
    }
    if (bad) {
        rc = error_set(err, ERROR_RUNTIME, "%s: out of memory", path);
    } else {
        rc = run_write_atomic(path, text, len, NULL, 0, err);
    }
    free(text);
    if (rc == 0) {
        s_say_other_builds(s, summaries);
    }
    for (int r = 0; r < s->nruns; r++) {
        cJSON_Delete(summaries[r]);
    }
    free(summaries);
    return rc;
}
