/* collect.c: a job's per-process metrics gathered into its run folder. */
#include "core/real/collect.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/steps.h"

typedef struct step_row {
    double t;
    char *line;
    bool before;              /* an earlier session's, in steps.csv already */
    bool kept;
} step_row;

static int s_cmp_rows(const void *a, const void *b)
{
    const step_row *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t;
}

/* Appends the data rows of text (a steps-K.csv) to rows; a last line
 * without its newline (a worker killed mid-write) is left out. */
static int s_add_rows(char *text, step_row **rows, size_t *n, size_t *cap)
{
    char *end = strrchr(text, '\n');
    if (end) {
        end[1] = '\0';
    }
    char *save, *line = strtok_r(text, "\n", &save);   /* the header */
    for (line = strtok_r(NULL, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (*n == *cap) {
            size_t grown_cap = *cap ? 2 * *cap : 4096;
            step_row *grown = realloc(*rows, grown_cap * sizeof **rows);
            if (!grown) {
                return -1;
            }
            *rows = grown;
            *cap = grown_cap;
        }
        (*rows)[*n] = (step_row){.t = strtod(line, NULL), .line = line, .kept = true};
        (*n)++;
    }
    return 0;
}

/* Marks the rows (in order of writing) that a worker took again. */
static void s_keep_last_takes(step_row *rows, size_t n, int workers)
{
    char **lines = calloc(n ? n : 1, sizeof *lines);
    bool *kept = malloc((n ? n : 1) * sizeof *kept);
    for (size_t i = 0; lines && kept && i < n; i++) {
        lines[i] = rows[i].line;
    }
    if (lines && kept) {
        steps_keep_last_takes(lines, n, workers, kept);
        for (size_t i = 0; i < n; i++) {
            rows[i].kept = kept[i];
        }
    }
    free(kept);
    free(lines);
}

/* The clock of a row written at Unix time t: the latest whose session
 * had begun, or the earliest where none had. */
static const steps_clock *s_clock_of(double t, const steps_clock *clocks, int nclocks)
{
    const steps_clock *latest = NULL, *earliest = &clocks[0];
    for (int i = 0; i < nclocks; i++) {
        if (clocks[i].since <= t && (!latest || clocks[i].since > latest->since)) {
            latest = &clocks[i];
        }
        if (clocks[i].since < earliest->since) {
            earliest = &clocks[i];
        }
    }
    return latest ? latest : earliest;
}

void collect_steps(run *r, int workers, const steps_clock *clocks, int nclocks)
{
    step_row *rows = NULL;
    size_t n = 0, cap = 0;
    char **texts = calloc((size_t)workers, sizeof *texts);
    bool whole = texts != NULL;   /* every part read in full */
    /* a resumed run's steps.csv has the earlier sessions' rows: read back,
     * they are written again with this session's, in time order */
    char *before = NULL;
    size_t n_before;
    char path_before[4800];
    snprintf(path_before, sizeof path_before, "%s/steps.csv", r->dir);
    if (texts && fflush(r->steps) == 0 && (before = run_read_file(path_before)) &&
        s_add_rows(before, &rows, &n, &cap) < 0) {
        whole = false;
    }
    n_before = n;
    for (size_t i = 0; i < n_before; i++) {
        rows[i].before = true;
    }
    for (int w = 0; texts && w < workers; w++) {
        char path[4800];
        snprintf(path, sizeof path, "%s/steps-%d.csv", r->dir, w);
        texts[w] = run_read_file(path);
        if (texts[w] && s_add_rows(texts[w], &rows, &n, &cap) < 0) {
            whole = false;
        }
    }
    /* Unix time to the run's; a clock without t0 (a shard was killed
     * before it told) starts at its earliest row */
    double *earliest = calloc((size_t)nclocks, sizeof *earliest);
    for (size_t i = n_before; earliest && i < n; i++) {
        size_t k = (size_t)(s_clock_of(rows[i].t, clocks, nclocks) - clocks);
        earliest[k] = earliest[k] == 0 || rows[i].t < earliest[k] ? rows[i].t : earliest[k];
    }
    for (size_t i = n_before; i < n; i++) {
        const steps_clock *c = s_clock_of(rows[i].t, clocks, nclocks);
        double t0 = c->t0 > 0 || !earliest ? c->t0 : earliest[c - clocks];
        rows[i].t = fmax(0, rows[i].t - t0);
    }
    free(earliest);
    s_keep_last_takes(rows, n, workers);
    if (n > 0) {
        qsort(rows, n, sizeof *rows, s_cmp_rows);
    }
    /* the earlier rows are written again with these, or (steps.csv cannot
     * be cut) left as they were, these after them */
    bool again = n_before > 0 && whole && ftruncate(fileno(r->steps), 0) == 0 &&
                 fprintf(r->steps, "%s\n", RUN_STEPS_HEADER) > 0;
    for (size_t i = 0; i < n; i++) {
        const char *rest = strchr(rows[i].line, ',');
        if (rows[i].kept && (!rows[i].before || again)) {
            fprintf(r->steps, "%.6f%s\n", rows[i].t, rest ? rest : "");
        }
    }
    bool written = whole && fflush(r->steps) == 0 && !ferror(r->steps);
    for (int w = 0; texts && w < workers; w++) {
        char path[4800];
        snprintf(path, sizeof path, "%s/steps-%d.csv", r->dir, w);
        if (written) {
            remove(path);
        } else {   /* kept as the record: without a row a killed worker cut short */
            run_trim_to_whole_lines(path);
        }
    }
    for (int w = 0; texts && w < workers; w++) {
        free(texts[w]);
    }
    free(texts);
    free(before);
    free(rows);
}

double collect_shards(run *r, int servers, run_summary *sum, double *resumed_at,
                      double *last_push)
{
    double first_step = 0;
    *resumed_at = 0;
    *last_push = 0;
    for (int k = 0; k < servers; k++) {
        char path[4800];
        snprintf(path, sizeof path, "%s/ps-%d.json", r->dir, k);
        shard_stats st;
        error why;
        if (shard_stats_read(path, &st, &why) == 0) {
            summary_add_shard(sum, &st);
            if (st.first_pull_at > 0 && (first_step == 0 || st.first_pull_at < first_step)) {
                first_step = st.first_pull_at;
            }
            if (st.resumed_at > 0 && (*resumed_at == 0 || st.resumed_at < *resumed_at)) {
                *resumed_at = st.resumed_at;
            }
            *last_push = fmax(*last_push, st.last_push_at);
        } else {
            run_log(r, "launcher: %s", why.msg);
            sum->shards_missing++;
            sum->uncounted |= k == 0;
        }
    }
    return first_step;
}

