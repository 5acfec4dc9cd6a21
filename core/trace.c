/* trace.c: reading device traces (trace.h). */
#include "core/trace.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"

#define TRACE_HEADER "device,speed,bandwidth,latency,off"
#define TRACE_MAX_LINE 65536

static int s_bad(error *err, const char *path, long line, int column, const char *what)
{
    return error_set(err, ERROR_USAGE, "%s:%ld: column %d: %s", path, line, column, what);
}

/* A number filling [p, end) exactly; false when it is not one. */
static bool s_number(const char *p, const char *end, double *out)
{
    char buf[64];
    size_t n = (size_t)(end - p);
    if (n == 0 || n >= sizeof buf) {
        return false;
    }
    memcpy(buf, p, n);
    buf[n] = '\0';
    return config_parse_number(buf, out);   /* as a config's: no hex (0x10 was 16) */
}

/* The off column: FROM-TO intervals separated by spaces. */
static int s_intervals(trace_device *d, const char *p, const char *path, long line,
                       error *err)
{
    int cap = 0;
    double last = -INFINITY;
    while (*p) {
        while (*p == ' ') {
            p++;
        }
        if (!*p) {
            break;
        }
        const char *end = strchr(p, ' ');
        end = end ? end : p + strlen(p);
        /* FROM ends where strtod stops (5e-05-0.5 is 5e-05 to 0.5) */
        char *dash;
        errno = 0;
        double from = strtod(p, &dash), to;
        if (dash == p || dash >= end || *dash != '-' || errno != 0 || !isfinite(from) ||
            !s_number(dash + 1, end, &to) || from < 0) {
            return s_bad(err, path, line, 5, "off: expected FROM-TO intervals in seconds, "
                         "separated by spaces");
        }
        if (to <= from || from < last) {
            return s_bad(err, path, line, 5, "off: each interval must end after it starts, "
                         "and come after the one before");
        }
        if (d->noff == cap) {
            cap = cap ? 2 * cap : 4;
            double *f = realloc(d->off_from, (size_t)cap * sizeof *f);
            double *t = f ? realloc(d->off_to, (size_t)cap * sizeof *t) : NULL;
            if (f) {
                d->off_from = f;
            }
            if (!t) {
                return error_set(err, ERROR_RUNTIME, "%s: out of memory", path);
            }
            d->off_to = t;
        }
        d->off_from[d->noff] = from;
        d->off_to[d->noff++] = to;
        last = to;
        p = end;
    }
    return 0;
}

/* One row: device,speed,bandwidth,latency,off. */
static int s_row(trace *t, char *text, const char *path, long line, error *err)
{
    char *field[5];
    int n = 0;
    for (char *p = text; n < 5; n++) {
        field[n] = p;
        char *comma = strchr(p, ',');
        if (!comma) {
            n++;
            break;
        }
        *comma = '\0';
        p = comma + 1;
        if (n == 4) {
            return s_bad(err, path, line, 6, "more than 5 columns");
        }
    }
    if (n != 5) {
        return s_bad(err, path, line, n + 1, "expected device,speed,bandwidth,latency,off");
    }
    double device;
    if (!s_number(field[0], field[0] + strlen(field[0]), &device) || device != t->n) {
        char what[64];
        snprintf(what, sizeof what, "device: expected %d (rows in order from 0)", t->n);
        return s_bad(err, path, line, 1, what);
    }
    trace_device *grown = realloc(t->devices, (size_t)(t->n + 1) * sizeof *grown);
    if (!grown) {
        return error_set(err, ERROR_RUNTIME, "%s: out of memory", path);
    }
    t->devices = grown;
    trace_device *d = &t->devices[t->n++];
    *d = (trace_device){.latency = -1};
    if (!s_number(field[1], field[1] + strlen(field[1]), &d->speed) || d->speed < 1e-6 ||
        d->speed > 1e6) {   /* as [sim] speed: 1e300 made a run that would never end */
        return s_bad(err, path, line, 2, "speed: expected a number from 1e-06 to 1e+06");
    }
    if (field[2][0] && (!s_number(field[2], field[2] + strlen(field[2]), &d->bandwidth) ||
                        d->bandwidth < 1)) {   /* as [sim] bandwidth: 1e-300 never ended */
        return s_bad(err, path, line, 3, "bandwidth: expected bytes per second, at least 1, "
                     "or nothing");
    }
    if (field[3][0] && (!s_number(field[3], field[3] + strlen(field[3]), &d->latency) ||
                        d->latency < 0)) {
        return s_bad(err, path, line, 4, "latency: expected seconds, 0 or more, or nothing");
    }
    return s_intervals(d, field[4], path, line, err);
}

int trace_load(trace *t, const char *path, error *err)
{
    memset(t, 0, sizeof *t);
    FILE *f = fopen(path, "r");
    if (!f) {
        return error_set(err, ERROR_USAGE, "%s: cannot read the trace: %s", path,
                         strerror(errno));
    }
    char *text = malloc(TRACE_MAX_LINE);
    int rc = text ? 0 : error_set(err, ERROR_RUNTIME, "%s: out of memory", path);
    bool header = false;
    long line = 0;
    while (rc == 0 && fgets(text, TRACE_MAX_LINE, f)) {
        line++;
        size_t len = strlen(text);
        if (len == TRACE_MAX_LINE - 1 && text[len - 1] != '\n') {
            rc = s_bad(err, path, line, 1, "line too long");
            break;
        }
        text[strcspn(text, "\r\n")] = '\0';
        if (text[0] == '#' || text[0] == '\0') {
            continue;
        }
        if (!header) {
            header = true;
            if (strcmp(text, TRACE_HEADER) != 0) {
                rc = s_bad(err, path, line, 1, "expected the header " TRACE_HEADER);
            }
            continue;
        }
        rc = s_row(t, text, path, line, err);
    }
    if (rc == 0 && ferror(f)) {
        rc = error_set(err, ERROR_USAGE, "%s: cannot read the trace", path);
    }
    if (rc == 0 && t->n == 0) {
        rc = error_set(err, ERROR_USAGE, "%s: the trace has no device", path);
    }
    free(text);
    fclose(f);
    if (rc < 0) {
        trace_free(t);
    }
    return rc;
}

void trace_free(trace *t)
{
    for (int i = 0; t->devices && i < t->n; i++) {
        free(t->devices[i].off_from);
        free(t->devices[i].off_to);
    }
    free(t->devices);
    memset(t, 0, sizeof *t);
}

const trace_device *trace_device_of(const trace *t, int k)
{
    return &t->devices[k % t->n];
}

bool trace_away(const trace_device *d, double at, double *until)
{
    bool away = false;
    *until = at;
    for (int i = 0; i < d->noff; i++) {   /* each interval taken moves *until: look again */
        if (*until >= d->off_from[i] && *until < d->off_to[i]) {
            *until = d->off_to[i];
            away = true;
            i = -1;
        }
    }
    return away;
}
