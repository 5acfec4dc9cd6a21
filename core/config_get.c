/* config_get.c: the typed getters, each with a default and a range. */
#define _XOPEN_SOURCE 700   /* realpath */
#include "core/config.h"
#include "core/config_entry.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    entry *e = config_lookup(c, section, key, text, err);
    if (!e) {
        return -1;
    }
    long v;
    if (s_parse_long(e->value, &v) < 0) {
        char what[256];
        snprintf(what, sizeof what, "expected an integer, got \"%s\"", e->value);
        return config_bad(c, e, err, what);
    }
    if (v < lo || v > hi) {
        char what[256];
        snprintf(what, sizeof what, "%ld is out of range [%ld, %ld]", v, lo, hi);
        return config_bad(c, e, err, what);
    }
    char canonical[32];
    snprintf(canonical, sizeof canonical, "%ld", v);
    config_set_canonical(e, canonical);
    e->read_as = 'n';
    *out = v;
    return 0;
}

int config_get_double(config *c, const char *section, const char *key,
                      double def, double lo, double hi, int open,
                      double *out, error *err)
{
    char text[64];
    snprintf(text, sizeof text, "%.17g", def);
    entry *e = config_lookup(c, section, key, text, err);
    if (!e) {
        return -1;
    }
    if (e->origin == FROM_DEFAULT) {
        /* a short default reads better in the resolved config */
        snprintf(text, sizeof text, "%g", def);
        if (strtod(text, NULL) == def) {
            config_set_text(e, text);
        }
    }
    char *end;
    double v;
    bool number = config_parse_number_at(e->value, &end, &v);
    int digits = (int)(end - e->value);   /* the number as written */
    while (number && isspace((unsigned char)*end)) {
        end++;
    }
    if (!number || *end != '\0') {
        char what[256];
        snprintf(what, sizeof what, "expected a number, got \"%s\"", e->value);
        return config_bad(c, e, err, what);
    }
    bool below = (open & CONFIG_OPEN_LO) ? v <= lo : v < lo;
    bool above = (open & CONFIG_OPEN_HI) ? v >= hi : v > hi;
    if (below || above) {
        char what[256];
        /* as written: "%g" made 1000000.4 "1e+06 is out of range (0, 1e+06]" */
        snprintf(what, sizeof what, "%.*s is out of range %c%g, %g%c", digits, e->value,
                 (open & CONFIG_OPEN_LO) ? '(' : '[', lo, hi,
                 (open & CONFIG_OPEN_HI) ? ')' : ']');
        return config_bad(c, e, err, what);
    }
    char canonical[32];
    snprintf(canonical, sizeof canonical, "%.17g", v);
    config_set_canonical(e, canonical);
    e->read_as = 'n';
    *out = v;
    return 0;
}

int config_get_string(config *c, const char *section, const char *key,
                      const char *def, const char **out, error *err)
{
    entry *e = config_lookup(c, section, key, def, err);
    if (!e) {
        return -1;
    }
    *out = e->value;
    return 0;
}

int config_get_path(config *c, const char *section, const char *key,
                    const char *def, const char **out, error *err)
{
    entry *e = config_lookup(c, section, key, def, err);
    if (!e) {
        return -1;
    }
    e->path = true;
    char *full = e->value[0] && e->value[0] != '/' ? realpath(e->value, NULL) : NULL;
    if (full && !config_unwritable(key, full)) {   /* a line too long keeps it as written */
        config_set_text(e, full);
    }
    free(full);
    *out = e->value;
    return 0;
}

/* A boolean's words: false ones at even places, true ones at odd. */
static const char *const s_bool_words[] = {"false", "true", "no", "yes", "0", "1", "off", "on",
                                           NULL};

int config_get_bool(config *c, const char *section, const char *key, bool def,
                    bool *out, error *err)
{
    int i;
    if (config_get_enum(c, section, key, def ? "true" : "false", s_bool_words, &i, err) < 0) {
        return -1;
    }
    *out = i % 2 == 1;
    entry *e = config_lookup(c, section, key, NULL, err);   /* read: it is there */
    if (e) {
        config_set_canonical(e, *out ? "true" : "false");
        e->read_as = 'b';
    }
    return 0;
}

int config_get_enum(config *c, const char *section, const char *key,
                    const char *def, const char *const *allowed, int *out,
                    error *err)
{
    entry *e = config_lookup(c, section, key, def, err);
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
    return config_bad(c, e, err, what);
}

/* Walks a comma-separated list, calling parse on each trimmed item. */
static int s_get_list(config *c, const char *section, const char *key,
                      const char *def, int max, int *n, error *err,
                      int (*parse)(const char *item, void *out, int i, const void *range,
                                   char *what, size_t wn),
                      void *out, const void *range)
{
    entry *e = config_lookup(c, section, key, def, err);
    if (!e) {
        return -1;
    }
    e->list = true;
    e->read_as = 'n';   /* the lists are of numbers */
    *n = 0;
    const char *p = e->value;
    while (isspace((unsigned char)*p)) {
        p++;
    }
    if (*p == '\0') {
        return 0;
    }
    char canonical[2048] = "";   /* each item as a number, for config_fingerprint */
    size_t used = 0;
    for (;;) {
        char item[64], what[256];
        size_t len = strcspn(p, ",");
        if (len >= sizeof item) {
            return config_bad(c, e, err, "list item too long");
        }
        memcpy(item, p, len);
        item[len] = '\0';
        if (*n == max) {
            snprintf(what, sizeof what, "more than %d item%s", max, max == 1 ? "" : "s");
            return config_bad(c, e, err, what);
        }
        if (parse(item, out, *n, range, what, sizeof what) < 0) {
            return config_bad(c, e, err, what);
        }
        if (used < sizeof canonical) {
            used += (size_t)snprintf(canonical + used, sizeof canonical - used, "%s%.17g",
                                     *n ? "," : "", strtod(item, NULL));
        }
        (*n)++;
        p += len;
        if (*p == '\0') {
            config_set_canonical(e, used < sizeof canonical ? canonical : NULL);
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

bool config_parse_number_at(const char *text, char **end, double *out)
{
    errno = 0;
    double v = strtod(text, end);
    size_t n = (size_t)(*end - text);
    if (n == 0 || errno == ERANGE || !isfinite(v) || memchr(text, 'x', n) ||
        memchr(text, 'X', n)) {
        return false;
    }
    *out = v;
    return true;
}

bool config_parse_number(const char *text, double *out)
{
    char *end;
    if (!config_parse_number_at(text, &end, out)) {
        return false;
    }
    while (isspace((unsigned char)*end)) {
        end++;
    }
    return *end == '\0';
}

/* A number as the shortest decimal that reads back as it, a whole number
 * in full; false (out untouched) when text is no number. */
static bool s_number_text(const char *text, char *out, size_t n)
{
    double v;
    if (!config_parse_number(text, &v)) {
        return false;
    }
    if (v == floor(v) && fabs(v) < 0x1p53) {
        snprintf(out, n, "%.0f", v == 0 ? 0.0 : v);   /* -0 is 0 */
        return true;
    }
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(out, n, "%.*g", digits, v);
        if (strtod(out, NULL) == v) {
            break;
        }
    }
    return true;
}

void config_value_as_read(const config *known, const char *section, const char *key,
                          const char *value, char *out, size_t n)
{
    const entry *e = config_find(known, section, key);
    snprintf(out, n, "%s", value);
    if (e && e->read_as == 'b') {
        for (int i = 0; s_bool_words[i]; i++) {
            if (strcmp(value, s_bool_words[i]) == 0) {
                snprintf(out, n, "%s", i % 2 ? "true" : "false");
            }
        }
        return;
    }
    if (!e || e->read_as != 'n') {
        return;
    }
    size_t used = 0;   /* each item of a list, as a number */
    for (const char *p = value; used < n;) {
        char item[64], number[32];
        size_t len = strcspn(p, ",");
        snprintf(item, sizeof item, "%.*s", (int)(len < sizeof item ? len : sizeof item - 1), p);
        if (len >= sizeof item || !s_number_text(item, number, sizeof number)) {
            snprintf(out, n, "%s", value);   /* not all numbers: as written */
            return;
        }
        used += (size_t)snprintf(out + used, n - used, "%s%s", p == value ? "" : ",", number);
        if (p[len] == '\0') {
            return;
        }
        p += len + 1;
    }
}

static int s_parse_double_item(const char *item, void *out, int i, const void *range,
                               char *what, size_t wn)
{
    const double *lim = range;
    double v;
    if (!config_parse_number(item, &v)) {
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
