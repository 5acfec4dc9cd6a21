/* config.c: INI parsing through libinih, typed getters, overrides, the
 * unused-key check and the resolved-config writer. */
#include "core/config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ini.h>

enum origin { FROM_FILE, FROM_COMMAND_LINE, FROM_DEFAULT };

typedef struct entry {
    char *section, *key, *value;
    enum origin origin;
    int line;       /* line in the file, for FROM_FILE */
    bool used;
} entry;

struct config {
    char *source;
    entry *entries;
    int count, cap;
    /* parse state */
    int line;
    error *parse_err;
    bool parse_failed;
};

static char *s_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) {
        memcpy(d, s, n);
    }
    return d;
}

static entry *s_find(const config *c, const char *section, const char *key)
{
    for (int i = 0; i < c->count; i++) {
        if (strcmp(c->entries[i].section, section) == 0 &&
            strcmp(c->entries[i].key, key) == 0) {
            return &c->entries[i];
        }
    }
    return NULL;
}

static entry *s_add(config *c, const char *section, const char *key,
                    const char *value, enum origin origin, int line)
{
    if (c->count == c->cap) {
        int cap = c->cap ? 2 * c->cap : 32;
        entry *e = realloc(c->entries, (size_t)cap * sizeof *e);
        if (!e) {
            return NULL;
        }
        c->entries = e;
        c->cap = cap;
    }
    entry *e = &c->entries[c->count];
    e->section = s_strdup(section);
    e->key = s_strdup(key);
    e->value = s_strdup(value);
    if (!e->section || !e->key || !e->value) {
        free(e->section);
        free(e->key);
        free(e->value);
        return NULL;
    }
    e->origin = origin;
    e->line = line;
    e->used = false;
    c->count++;
    return e;
}

/* "FILE:LINE: [section] key" or "command line: section.key=value". */
static void s_where(const config *c, const entry *e, char *buf, size_t n)
{
    switch (e->origin) {
    case FROM_FILE:
        snprintf(buf, n, "%s:%d: [%s] %s", c->source, e->line, e->section, e->key);
        break;
    case FROM_COMMAND_LINE:
        snprintf(buf, n, "command line: %s.%s=%s", e->section, e->key, e->value);
        break;
    case FROM_DEFAULT:
        snprintf(buf, n, "default: [%s] %s", e->section, e->key);
        break;
    }
}

static int s_bad(const config *c, const entry *e, error *err, const char *what)
{
    char where[512];
    s_where(c, e, where, sizeof where);
    return error_set(err, ERROR_USAGE, "%s: %s", where, what);
}

/* libinih calls its reader once per line, so counting here gives the line
 * of each handler call (inih 55 does not pass line numbers itself). */
typedef struct line_reader {
    FILE *file;
    const char *text;
    config *c;
} line_reader;

static char *s_read_line(char *str, int num, void *stream)
{
    line_reader *r = stream;
    char *got;
    if (r->file) {
        got = fgets(str, num, r->file);
    } else {
        if (*r->text == '\0') {
            return NULL;
        }
        const char *nl = strchr(r->text, '\n');
        size_t len = nl ? (size_t)(nl - r->text) + 1 : strlen(r->text);
        if (len > (size_t)num - 1) {
            len = (size_t)num - 1;
        }
        memcpy(str, r->text, len);
        str[len] = '\0';
        r->text += len;
        got = str;
    }
    if (got) {
        r->c->line++;
    }
    return got;
}

static int s_on_entry(void *user, const char *section, const char *key,
                      const char *value)
{
    config *c = user;
    if (c->parse_failed) {
        return 0;
    }
    entry *old = s_find(c, section, key);
    if (old) {
        c->parse_failed = true;
        error_set(c->parse_err, ERROR_USAGE,
                  "%s:%d: [%s] %s: duplicate key (first set on line %d)",
                  c->source, c->line, section, key, old->line);
        return 0;
    }
    if (section[0] == '\0') {
        c->parse_failed = true;
        error_set(c->parse_err, ERROR_USAGE,
                  "%s:%d: %s: key outside any [section]", c->source, c->line, key);
        return 0;
    }
    if (!s_add(c, section, key, value, FROM_FILE, c->line)) {
        c->parse_failed = true;
        error_set(c->parse_err, ERROR_RUNTIME, "%s: out of memory", c->source);
        return 0;
    }
    return 1;
}

static config *s_new(const char *source)
{
    config *c = calloc(1, sizeof *c);
    if (c) {
        c->source = s_strdup(source);
        if (!c->source) {
            free(c);
            return NULL;
        }
    }
    return c;
}

static config *s_parse(config *c, line_reader *r, error *err)
{
    c->parse_err = err;
    int rc = ini_parse_stream(s_read_line, r, s_on_entry, c);
    if (c->parse_failed) {
        config_destroy(&c);
        return NULL;
    }
    if (rc > 0) {
        error_set(err, ERROR_USAGE, "%s:%d: not an INI line (expected "
                  "[section] or key = value)", c->source, rc);
        config_destroy(&c);
        return NULL;
    }
    if (rc < 0) {
        error_set(err, ERROR_RUNTIME, "%s: cannot parse (out of memory)", c->source);
        config_destroy(&c);
        return NULL;
    }
    return c;
}

config *config_load(const char *path, error *err)
{
    config *c = s_new(path ? path : "(defaults)");
    if (!c) {
        error_set(err, ERROR_RUNTIME, "config: out of memory");
        return NULL;
    }
    if (!path) {
        return c;
    }
    FILE *f = fopen(path, "r");
    if (!f) {
        error_set(err, ERROR_USAGE, "%s: cannot open config: %s", path, strerror(errno));
        config_destroy(&c);
        return NULL;
    }
    line_reader r = {.file = f, .c = c};
    c = s_parse(c, &r, err);
    fclose(f);
    return c;
}

config *config_parse_string(const char *text, const char *name, error *err)
{
    config *c = s_new(name);
    if (!c) {
        error_set(err, ERROR_RUNTIME, "config: out of memory");
        return NULL;
    }
    line_reader r = {.text = text, .c = c};
    return s_parse(c, &r, err);
}

void config_destroy(config **pc)
{
    config *c = *pc;
    if (!c) {
        return;
    }
    for (int i = 0; i < c->count; i++) {
        free(c->entries[i].section);
        free(c->entries[i].key);
        free(c->entries[i].value);
    }
    free(c->entries);
    free(c->source);
    free(c);
    *pc = NULL;
}

int config_override(config *c, const char *arg, error *err)
{
    const char *eq = strchr(arg, '=');
    const char *dot = strchr(arg, '.');
    if (!eq || !dot || dot > eq || dot == arg || dot + 1 == eq) {
        return error_set(err, ERROR_USAGE, "command line: %s: expected "
                         "section.key=value", arg);
    }
    char section[128], key[128];
    size_t sn = (size_t)(dot - arg), kn = (size_t)(eq - dot - 1);
    if (sn >= sizeof section || kn >= sizeof key) {
        return error_set(err, ERROR_USAGE, "command line: %s: name too long", arg);
    }
    memcpy(section, arg, sn);
    section[sn] = '\0';
    memcpy(key, dot + 1, kn);
    key[kn] = '\0';
    const char *value = eq + 1;

    entry *e = s_find(c, section, key);
    if (e) {
        char *v = s_strdup(value);
        if (!v) {
            return error_set(err, ERROR_RUNTIME, "config: out of memory");
        }
        free(e->value);
        e->value = v;
        e->origin = FROM_COMMAND_LINE;
        return 0;
    }
    if (!s_add(c, section, key, value, FROM_COMMAND_LINE, 0)) {
        return error_set(err, ERROR_RUNTIME, "config: out of memory");
    }
    return 0;
}

/* The entry for section.key, created from the default when absent. */
static entry *s_lookup(config *c, const char *section, const char *key,
                       const char *def, error *err)
{
    entry *e = s_find(c, section, key);
    if (!e) {
        e = s_add(c, section, key, def, FROM_DEFAULT, 0);
        if (!e) {
            error_set(err, ERROR_RUNTIME, "config: out of memory");
            return NULL;
        }
    }
    e->used = true;
    return e;
}

static void s_replace_value(entry *e, const char *text)
{
    char *v = s_strdup(text);
    if (v) {
        free(e->value);
        e->value = v;
    }
}

static int s_parse_long(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || errno == ERANGE) {
        return -1;
    }
    while (isspace((unsigned char)*end)) {
        end++;
    }
    if (*end != '\0') {
        return -1;
    }
    *out = v;
    return 0;
}

int config_get_int(config *c, const char *section, const char *key, long def,
                   long lo, long hi, long *out, error *err)
{
    char text[32];
    snprintf(text, sizeof text, "%ld", def);
    entry *e = s_lookup(c, section, key, text, err);
    if (!e) {
        return -1;
    }
    long v;
    if (s_parse_long(e->value, &v) < 0) {
        char what[256];
        snprintf(what, sizeof what, "expected an integer, got \"%s\"", e->value);
        return s_bad(c, e, err, what);
    }
    if (v < lo || v > hi) {
        char what[256];
        snprintf(what, sizeof what, "%ld is out of range [%ld, %ld]", v, lo, hi);
        return s_bad(c, e, err, what);
    }
    *out = v;
    return 0;
}

int config_get_double(config *c, const char *section, const char *key,
                      double def, double lo, double hi, int open,
                      double *out, error *err)
{
    char text[64];
    snprintf(text, sizeof text, "%.17g", def);
    entry *e = s_lookup(c, section, key, text, err);
    if (!e) {
        return -1;
    }
    if (e->origin == FROM_DEFAULT) {
        /* a short default reads better in the resolved config */
        snprintf(text, sizeof text, "%g", def);
        if (strtod(text, NULL) == def) {
            s_replace_value(e, text);
        }
    }
    char *end;
    errno = 0;
    double v = strtod(e->value, &end);
    while (end != e->value && isspace((unsigned char)*end)) {
        end++;
    }
    if (end == e->value || *end != '\0' || errno == ERANGE || !isfinite(v)) {
        char what[256];
        snprintf(what, sizeof what, "expected a number, got \"%s\"", e->value);
        return s_bad(c, e, err, what);
    }
    bool below = (open & CONFIG_OPEN_LO) ? v <= lo : v < lo;
    bool above = (open & CONFIG_OPEN_HI) ? v >= hi : v > hi;
    if (below || above) {
        char what[256];
        snprintf(what, sizeof what, "%g is out of range %c%g, %g%c", v,
                 (open & CONFIG_OPEN_LO) ? '(' : '[', lo, hi,
                 (open & CONFIG_OPEN_HI) ? ')' : ']');
        return s_bad(c, e, err, what);
    }
    *out = v;
    return 0;
}

int config_get_string(config *c, const char *section, const char *key,
                      const char *def, const char **out, error *err)
{
    entry *e = s_lookup(c, section, key, def, err);
    if (!e) {
        return -1;
    }
    *out = e->value;
    return 0;
}

int config_get_bool(config *c, const char *section, const char *key, bool def,
                    bool *out, error *err)
{
    static const char *const values[] = {"false", "true", "no", "yes", "0", "1",
                                         "off", "on", NULL};
    int i;
    if (config_get_enum(c, section, key, def ? "true" : "false", values, &i, err) < 0) {
        return -1;
    }
    *out = i % 2 == 1;
    return 0;
}

int config_get_enum(config *c, const char *section, const char *key,
                    const char *def, const char *const *allowed, int *out,
                    error *err)
{
    entry *e = s_lookup(c, section, key, def, err);
    if (!e) {
        return -1;
    }
    for (int i = 0; allowed[i]; i++) {
        if (strcmp(e->value, allowed[i]) == 0) {
            *out = i;
            return 0;
        }
    }
    char what[512];
    int n = snprintf(what, sizeof what, "\"%s\" is not one of", e->value);
    for (int i = 0; allowed[i] && n < (int)sizeof what; i++) {
        n += snprintf(what + n, sizeof what - (size_t)n, "%s %s",
                      i ? "," : "", allowed[i]);
    }
    return s_bad(c, e, err, what);
}

/* Walks a comma-separated list, calling parse on each trimmed item. */
static int s_get_list(config *c, const char *section, const char *key,
                      const char *def, int max, int *n, error *err,
                      int (*parse)(const char *item, void *out, int i, const void *range,
                                   char *what, size_t wn),
                      void *out, const void *range)
{
    entry *e = s_lookup(c, section, key, def, err);
    if (!e) {
        return -1;
    }
    *n = 0;
    const char *p = e->value;
    while (isspace((unsigned char)*p)) {
        p++;
    }
    if (*p == '\0') {
        return 0;
    }
    for (;;) {
        char item[64], what[256];
        size_t len = strcspn(p, ",");
        if (len >= sizeof item) {
            return s_bad(c, e, err, "list item too long");
        }
        memcpy(item, p, len);
        item[len] = '\0';
        if (*n == max) {
            snprintf(what, sizeof what, "more than %d items", max);
            return s_bad(c, e, err, what);
        }
        if (parse(item, out, *n, range, what, sizeof what) < 0) {
            return s_bad(c, e, err, what);
        }
        (*n)++;
        p += len;
        if (*p == '\0') {
            return 0;
        }
        p++;
    }
}

static int s_parse_long_item(const char *item, void *out, int i, const void *range,
                             char *what, size_t wn)
{
    const long *lim = range;
    long v;
    if (s_parse_long(item, &v) < 0) {
        snprintf(what, wn, "expected a comma-separated list of integers, got \"%s\"", item);
        return -1;
    }
    if (v < lim[0] || v > lim[1]) {
        snprintf(what, wn, "%ld is out of range [%ld, %ld]", v, lim[0], lim[1]);
        return -1;
    }
    ((long *)out)[i] = v;
    return 0;
}

static int s_parse_double_item(const char *item, void *out, int i, const void *range,
                               char *what, size_t wn)
{
    const double *lim = range;
    char *end;
    errno = 0;
    double v = strtod(item, &end);
    while (end != item && isspace((unsigned char)*end)) {
        end++;
    }
    if (end == item || *end != '\0' || errno == ERANGE || !isfinite(v)) {
        snprintf(what, wn, "expected a comma-separated list of numbers, got \"%s\"", item);
        return -1;
    }
    if (v < lim[0] || v > lim[1]) {
        snprintf(what, wn, "%g is out of range [%g, %g]", v, lim[0], lim[1]);
        return -1;
    }
    ((double *)out)[i] = v;
    return 0;
}

int config_get_int_list(config *c, const char *section, const char *key,
                        const char *def, long lo, long hi, long *out, int max,
                        int *n, error *err)
{
    const long range[2] = {lo, hi};
    return s_get_list(c, section, key, def, max, n, err, s_parse_long_item, out, range);
}

int config_get_double_list(config *c, const char *section, const char *key,
                           const char *def, double lo, double hi, double *out,
                           int max, int *n, error *err)
{
    const double range[2] = {lo, hi};
    return s_get_list(c, section, key, def, max, n, err, s_parse_double_item, out, range);
}

int config_each(config *c, const char *section,
                int (*fn)(void *ctx, const char *key, const char *value, int line),
                void *ctx)
{
    for (int i = 0; i < c->count; i++) {
        entry *e = &c->entries[i];
        if (strcmp(e->section, section) == 0) {
            e->used = true;
            int rc = fn(ctx, e->key, e->value, e->line);
            if (rc) {
                return rc;
            }
        }
    }
    return 0;
}

int config_error(const config *c, const char *section, const char *key, error *err,
                 const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    const entry *e = s_find(c, section, key);
    if (!e) {
        return error_set(err, ERROR_USAGE, "%s: [%s] %s: %s", c->source, section, key, what);
    }
    return s_bad(c, e, err, what);
}

int config_check_unused(const config *c, error *err)
{
    for (int i = 0; i < c->count; i++) {
        const entry *e = &c->entries[i];
        if (!e->used) {
            return s_bad(c, e, err, "unknown key (nothing reads it; see "
                         "`asgd help config`)");
        }
    }
    return 0;
}

int config_write(const config *c, const char *path, error *err)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        return error_set(err, ERROR_RUNTIME, "%s: cannot write: %s", path, strerror(errno));
    }
    fprintf(f, "# Resolved config (from %s): every key asgd read, defaults "
            "included.\n", c->source);
    /* sections in order of first appearance */
    for (int i = 0; i < c->count; i++) {
        const entry *e = &c->entries[i];
        bool first = true;
        for (int j = 0; j < i; j++) {
            if (c->entries[j].used && strcmp(c->entries[j].section, e->section) == 0) {
                first = false;
                break;
            }
        }
        if (!e->used || !first) {
            continue;
        }
        fprintf(f, "\n[%s]\n", e->section);
        for (int j = i; j < c->count; j++) {
            const entry *k = &c->entries[j];
            if (k->used && strcmp(k->section, e->section) == 0) {
                fprintf(f, "%s = %s\n", k->key, k->value);
            }
        }
    }
    if (fclose(f) != 0) {
        return error_set(err, ERROR_RUNTIME, "%s: cannot write: %s", path, strerror(errno));
    }
    return 0;
}

const char *config_source(const config *c)
{
    return c->source;
}
