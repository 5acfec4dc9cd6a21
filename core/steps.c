/* steps.c: the steps a worker took again, left out of steps.csv. */
#include "core/steps.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The worker and step columns of a row (false when it has none). */
static bool s_worker_step(const char *line, long *worker, long *step)
{
    const char *c = strchr(line, ',');
    *worker = c ? strtol(c + 1, NULL, 10) : -1;
    c = c ? strchr(c + 1, ',') : NULL;
    *step = c ? strtol(c + 1, NULL, 10) : -1;
    return c != NULL && *worker >= 0;
}

void steps_keep_last_takes(char *const *lines, size_t n, int workers, bool *kept)
{
    long *lowest = malloc((size_t)workers * sizeof *lowest);
    for (int w = 0; lowest && w < workers; w++) {
        lowest[w] = -1;   /* none yet */
    }
    for (size_t i = n; i-- > 0;) {
        long w, step;
        kept[i] = true;
        if (lowest && s_worker_step(lines[i], &w, &step) && w < workers) {
            kept[i] = lowest[w] < 0 || step < lowest[w];
            lowest[w] = kept[i] ? step : lowest[w];
        }
    }
    free(lowest);
}

/* The rows of text (a steps.csv: a header, then rows) in lines; their number. */
static size_t s_split_rows(char *text, char **lines)
{
    size_t n = 0;
    char *save, *line = strtok_r(text, "\n", &save);   /* the header */
    for (line = line ? strtok_r(NULL, "\n", &save) : NULL; line;
         line = strtok_r(NULL, "\n", &save)) {
        lines[n++] = line;
    }
    return n;
}

int steps_drop_retaken(run *r, int workers, error *err)
{
    char path[4800];
    snprintf(path, sizeof path, "%s/steps.csv", r->dir);
    char *text = fflush(r->steps) == 0 ? run_read_file(path) : NULL;
    size_t most = 1;   /* rows at most: the lines */
    for (const char *c = text; c && (c = strchr(c, '\n')); c++) {
        most++;
    }
    char **lines = text ? calloc(most, sizeof *lines) : NULL;
    bool *kept = lines ? malloc(most * sizeof *kept) : NULL;
    bool written = false;
    if (kept) {
        size_t n = s_split_rows(text, lines);
        steps_keep_last_takes(lines, n, workers, kept);
        written = ftruncate(fileno(r->steps), 0) == 0 &&
                  fprintf(r->steps, "%s\n", RUN_STEPS_HEADER) > 0;
        for (size_t i = 0; written && i < n; i++) {
            written = !kept[i] || fprintf(r->steps, "%s\n", lines[i]) > 0;
        }
        written = written && fflush(r->steps) == 0;
    }
    int why = errno;
    free(kept);
    free(lines);
    free(text);
    return written ? 0 : error_set(err, ERROR_RUNTIME, "%s: cannot leave out the steps taken "
                                   "again: %s", path, strerror(why));
}
