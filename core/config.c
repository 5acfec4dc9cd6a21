/* config.c: INI parsing through libinih, overrides, the unused-key check
 * and the resolved-config writer; the typed getters are config_get.c. */
#include "core/config.h"
#include "core/config_entry.h"
#include "core/suggest.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <ini.h>

_Static_assert(INI_MAX_LINE == 200, "the messages say a line holds 198 characters");

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
    e->section = strdup(section);
    e->key = strdup(key);
    e->value = strdup(value);
    if (!e->section || !e->key || !e->value) {
        free(e->section);
        free(e->key);
        free(e->value);
        return NULL;
    }
    e->origin = origin;
    e->line = line;
    e->used = false;
    e->path = false;
    e->canonical = NULL;
    e->list = false;
    e->read_as = 0;
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
        if (e->value[0]) {
            snprintf(buf, n, "%s: [%s] %s = %s (the default)", c->source, e->section, e->key,
                     e->value);
        } else {
            snprintf(buf, n, "%s: [%s] %s (not given)", c->source, e->section, e->key);
        }
        break;
    }
}

int config_bad(const config *c, const entry *e, error *err, const char *what)
{
    char where[512];
    s_where(c, e, where, sizeof where);
    /* inih ends a value at " ;" only: "epochs = 5  # five" is the value
     * "5  # five", which a user of other INI readers does not expect */
    bool hash = e->origin != FROM_DEFAULT && (strstr(e->value, " #") || strstr(e->value, "\t#"));
    return error_set(err, ERROR_USAGE, "%s: %s%s", where, what,
                     hash ? " (a comment after a value starts with ';', not '#')" : "");
}

/* libinih calls its reader once per line, so counting here gives the line
 * of each handler call (inih 55 does not pass line numbers itself). The
 * reader takes whole lines and refuses what inih would misread: a line
 * longer than its buffer (inih would take the rest as a line of its own),
 * a NUL byte (inih would stop reading the line there) or another control
 * character (a binary file). */
typedef struct line_reader {
    FILE *file;
    const char *text;
    config *c;
    char buf[INI_MAX_LINE + 1];   /* a file's line, one byte past what inih takes */
} line_reader;

/* What is wrong with a line of len bytes for inih's buffer of num, or NULL. */
static const char *s_line_problem(const char *line, size_t len, int num, char *why, size_t n)
{
    if (len > (size_t)num - 1) {
        snprintf(why, n, "line longer than %d characters", num - 2);
        return why;
    }
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)line[i];
        if ((ch < 0x20 && ch != '\t' && ch != '\r' && ch != '\n') || ch == 0x7f) {
            snprintf(why, n, "byte 0x%02x at column %zu: not a text file", ch, i + 1);
            return why;
        }
    }
    return NULL;
}

static char *s_fail_line(line_reader *r, const char *why)
{
    r->c->parse_failed = true;
    error_set(r->c->parse_err, ERROR_USAGE, "%s:%d: %s", r->c->source, r->c->line, why);
    return NULL;
}

static char *s_read_line(char *str, int num, void *stream)
{
    line_reader *r = stream;
    const char *line;
    size_t len;
    if (r->c->parse_failed) {
        return NULL;
    }
    if (r->file) {
        /* at most one byte past the longest line inih takes: a file with no
         * newline (/dev/zero) is refused there, not read whole first */
        size_t got = 0, most = (size_t)num < sizeof r->buf ? (size_t)num : sizeof r->buf;
        int ch = 0;
        while (got < most && (ch = getc(r->file)) != EOF) {
            r->buf[got++] = (char)ch;
            if (ch == '\n') {
                break;
            }
        }
        if (got == 0) {
            if (ferror(r->file)) {
                r->c->line++;
                return s_fail_line(r, strerror(errno));
            }
            return NULL;
        }
        line = r->buf;
        len = got;
    } else {
        if (*r->text == '\0') {
            return NULL;
        }
        const char *nl = strchr(r->text, '\n');
        line = r->text;
        len = nl ? (size_t)(nl - r->text) + 1 : strlen(r->text);
        r->text += len;
    }
    r->c->line++;
    /* a CRLF's CR took a byte of the line's length; the whole line, its
     * indentation too, is checked (a file's longer one was cut at inih's
     * length, and its tail read as a line of its own) */
    bool crlf = len >= 2 && line[len - 2] == '\r' && line[len - 1] == '\n';
    len -= crlf;
    char why[96];
    if (s_line_problem(line, len, num, why, sizeof why)) {
        return s_fail_line(r, why);
    }
    /* an indented line is the line: inih took it for the previous key's
     * value going on (a duplicate of that key, at the next key's line) */
    while (len > 0 && (*line == ' ' || *line == '\t')) {
        line++;
        len--;
    }
    memcpy(str, line, len);
    if (crlf) {
        str[len - 1] = '\n';
    }
    str[len] = '\0';
    return str;
}

/* Why "key = value" would not read back as value, or NULL: inih strips
 * the spaces around a value and takes ';' at its start or after a space
 * for a comment, a line ends it, and its lines are INI_MAX_LINE - 2
 * characters at most. config_write must give back what was read. */
const char *config_unwritable(const char *key, const char *value)
{
    size_t n = strlen(value);
    if (value[0] == ';') {
        return "a value may not start with ';' (config.ini would read it as a comment)";
    }
    if (n > 0 && (isspace((unsigned char)value[0]) || isspace((unsigned char)value[n - 1]))) {
        return "a value may not start or end with a space";
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)value[i];
        if ((ch < 0x20 && ch != '\t') || ch == 0x7f) {
            return "a value may not hold a control character";
        }
        if (ch == ';' && isspace((unsigned char)value[i - 1])) {
            return "a value may not hold a ';' after a space (config.ini would read a comment)";
        }
    }
    if (strlen(key) + 1 + n > INI_MAX_LINE - 2) {
        return "too long for a line of config.ini (198 characters with its key and '=')";
    }
    return NULL;
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
    const char *bad = config_unwritable(key, value);
    if (bad) {
        c->parse_failed = true;
        error_set(c->parse_err, ERROR_USAGE, "%s:%d: [%s] %s: %s", c->source, c->line, section,
                  key, bad);
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
        c->source = strdup(source);
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
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        error_set(err, ERROR_USAGE, "%s: is a directory, not a config file", path);
        fclose(f);
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
        free(c->entries[i].canonical);
    }
    free(c->entries);
    free(c->source);
    free(c);
    *pc = NULL;
}

bool config_looks_like_override(const char *arg)
{
    size_t name = strcspn(arg, "=");
    return arg[name] == '=' && !memchr(arg, '/', name) && access(arg, F_OK) != 0;
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
    const char *bad = config_unwritable(key, value);
    if (bad) {
        return error_set(err, ERROR_USAGE, "command line: %s.%s: %s", section, key, bad);
    }

    entry *e = s_find(c, section, key);
    if (e) {
        char *v = strdup(value);
        if (!v) {
            return error_set(err, ERROR_RUNTIME, "config: out of memory");
        }
        free(e->value);
        e->value = v;
        config_set_canonical(e, NULL);
        e->origin = FROM_COMMAND_LINE;
        return 0;
    }
    if (!s_add(c, section, key, value, FROM_COMMAND_LINE, 0)) {
        return error_set(err, ERROR_RUNTIME, "config: out of memory");
    }
    return 0;
}

const entry *config_find(const config *c, const char *section, const char *key)
{
    return s_find(c, section, key);
}

int config_take_keys(config *into, const config *from)
{
    for (int i = 0; i < from->count; i++) {
        const entry *e = &from->entries[i];
        entry *mine = s_find(into, e->section, e->key);
        if (!mine && !(mine = s_add(into, e->section, e->key, e->value, FROM_DEFAULT, 0))) {
            return -1;
        }
        mine->read_as = mine->read_as ? mine->read_as : e->read_as;
        mine->list = mine->list || e->list;
    }
    return 0;
}

entry *config_lookup(config *c, const char *section, const char *key, const char *def,
                     error *err)
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

void config_set_text(entry *e, const char *text)
{
    char *v = strdup(text);
    if (v) {
        free(e->value);
        e->value = v;
        config_set_canonical(e, NULL);
    }
}

void config_set_canonical(entry *e, const char *text)
{
    free(e->canonical);
    e->canonical = text ? strdup(text) : NULL;   /* no memory: the value stands for it */
}

bool config_read_as_list(const config *c, const char *section, const char *key)
{
    const entry *e = s_find((config *)c, section, key);
    return e && e->list;
}

void config_mark_list(config *c, const char *section, const char *key)
{
    entry *e = s_find(c, section, key);
    if (e) {
        e->list = true;
    }
}

/* Orders "section\nkey" pairs. */
static int s_by_name(const void *a, const void *b)
{
    const entry *x = *(const entry *const *)a, *y = *(const entry *const *)b;
    int by_section = strcmp(x->section, y->section);
    return by_section ? by_section : strcmp(x->key, y->key);
}

static uint64_t s_fnv(uint64_t h, const char *text)
{
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        h = (h ^ *p) * 1099511628211u;
    }
    return (h ^ 0xff) * 1099511628211u;   /* the end of one field */
}

/* Whether list (NULL-terminated: "section" or "section.key") names e. */
static bool s_named(const char *const *list, const entry *e)
{
    size_t len = strlen(e->section);
    for (int k = 0; list && list[k]; k++) {
        bool section = strncmp(list[k], e->section, len) == 0;
        if (section && (list[k][len] == '\0' ||
                        (list[k][len] == '.' && strcmp(list[k] + len + 1, e->key) == 0))) {
            return true;
        }
    }
    return false;
}

/* The entries read, in order of their names: of those `only` names (NULL:
 * all) those skip does not, into *n; NULL when out of memory (the caller
 * frees the list). */
static const entry **s_read_by_name(const config *c, const char *const *only,
                                    const char *const *skip, int *n)
{
    const entry **read = malloc((size_t)(c->count ? c->count : 1) * sizeof *read);
    *n = 0;
    for (int i = 0; read && i < c->count; i++) {
        const entry *e = &c->entries[i];
        if (e->used && (!only || s_named(only, e)) && !s_named(skip, e)) {
            read[(*n)++] = e;
        }
    }
    if (read) {
        qsort(read, (size_t)*n, sizeof *read, s_by_name);
    }
    return read;
}

static const char *s_as_read(const entry *e)
{
    return e->canonical ? e->canonical : e->value;
}

uint64_t config_fingerprint(const config *c, const char *skip_section, const char *skip_key)
{
    char skipped[256];
    snprintf(skipped, sizeof skipped, "%s.%s", skip_section, skip_key);
    const char *skip[] = {skipped, NULL};
    int n;
    const entry **read = s_read_by_name(c, NULL, skip, &n);
    if (!read) {
        return 0;
    }
    uint64_t h = 14695981039346656037u;
    for (int i = 0; i < n; i++) {
        h = s_fnv(h, read[i]->section);
        h = s_fnv(h, read[i]->key);
        h = s_fnv(h, s_as_read(read[i]));
    }
    free(read);
    return h;
}

char *config_settings(const config *c, const char *const *only, const char *const *skip)
{
    int n;
    const entry **read = s_read_by_name(c, only, skip, &n);
    size_t len = 1;
    for (int i = 0; read && i < n; i++) {
        len += strlen(read[i]->section) + strlen(read[i]->key) + strlen(s_as_read(read[i])) + 5;
    }
    char *text = read ? malloc(len) : NULL;
    size_t at = 0;
    for (int i = 0; text && i < n; i++) {
        at += (size_t)snprintf(text + at, len - at, "%s.%s = %s\n", read[i]->section,
                               read[i]->key, s_as_read(read[i]));
    }
    if (text) {
        text[at] = '\0';
    }
    free(read);
    return text;
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

void config_each_path(const config *c,
                      void (*fn)(void *ctx, const char *section, const char *key,
                                 const char *path),
                      void *ctx)
{
    for (int i = 0; i < c->count; i++) {
        const entry *e = &c->entries[i];
        if (e->path && e->used && e->value[0]) {
            fn(ctx, e->section, e->key, e->value);
        }
    }
}

int config_each_entry(const config *c,
                      int (*fn)(void *ctx, const char *section, const char *key,
                                const char *value),
                      void *ctx)
{
    for (int i = 0; i < c->count; i++) {
        const entry *e = &c->entries[i];
        int rc = fn(ctx, e->section, e->key, e->value);
        if (rc) {
            return rc;
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
    return config_bad(c, e, err, what);
}

/* "unknown key", with the closest known key when there is a close one: in
 * the same section within a few edits, or the same name in another. */
static void s_unknown(const config *known, const entry *e, char *what, size_t n)
{
    const entry *best = NULL;
    int best_d = 3;
    for (int i = 0; known && i < known->count; i++) {
        const entry *k = &known->entries[i];
        int same = strcmp(k->section, e->section) == 0;
        int d = same ? suggest_distance(e->key, k->key) : strcmp(e->key, k->key) == 0 ? 1 : 99;
        int limit = strlen(e->key) <= 4 ? 1 : 2;
        if (d <= limit && d < best_d) {
            best = k;
            best_d = d;
        }
    }
    if (best) {
        snprintf(what, n, "unknown key; did you mean [%s] %s?", best->section, best->key);
    } else {
        snprintf(what, n, "unknown key (nothing reads it; see `asgd help config`)");
    }
}

void config_forget_section(config *c, const char *section)
{
    for (int i = 0; i < c->count; i++) {
        if (strcmp(c->entries[i].section, section) == 0) {
            c->entries[i].used = false;
        }
    }
}

const char *config_value(const config *c, const char *section, const char *key)
{
    const entry *e = s_find(c, section, key);
    return e ? e->value : NULL;
}

void config_forget_key(config *c, const char *section, const char *key)
{
    entry *e = s_find(c, section, key);
    if (e) {
        e->used = false;
    }
}

bool config_used(const config *c, const char *section, const char *key)
{
    const entry *e = s_find(c, section, key);
    return e && e->used;
}

int config_check_unused(const config *c, const config *known,
                        void (*warn)(void *ctx, const char *msg), void *ctx, error *err)
{
    for (int i = 0; i < c->count; i++) {
        const entry *e = &c->entries[i];
        if (e->used || e->origin == FROM_DEFAULT) {   /* a default of a forgotten section */
            continue;
        }
        if (known && s_find(known, e->section, e->key)) {
            if (warn) {
                char where[512], msg[700];
                s_where(c, e, where, sizeof where);
                snprintf(msg, sizeof msg, "%s: not used by this configuration (ignored)", where);
                warn(ctx, msg);
            }
            continue;
        }
        char what[256];
        s_unknown(known, e, what, sizeof what);
        return config_bad(c, e, err, what);
    }
    return 0;
}

void config_print(const config *c, FILE *f)
{
    /* every line must read back: within inih's buffer, the source's tail */
    size_t skip = strlen(c->source) > 150 ? strlen(c->source) - 150 : 0;
    fprintf(f, "# Resolved config: every key asgd read, defaults included.\n# From %s",
            skip ? "..." : "");
    for (const char *p = c->source + skip; *p; p++) {
        fputc((unsigned char)*p < 0x20 || *p == 0x7f ? '?' : *p, f);
    }
    fputc('\n', f);
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
                bool spaced = strlen(k->key) + 3 + strlen(k->value) <= INI_MAX_LINE - 2;
                fprintf(f, spaced ? "%s = %s\n" : "%s=%s\n", k->key, k->value);
            }
        }
    }
}

int config_write(const config *c, const char *path, error *err)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        return error_set(err, ERROR_RUNTIME, "%s: cannot write: %s", path, strerror(errno));
    }
    config_print(c, f);
    bool lost = ferror(f) != 0;
    if (fclose(f) != 0 || lost) {
        return error_set(err, ERROR_RUNTIME, "%s: cannot write: %s", path, strerror(errno));
    }
    return 0;
}

const char *config_source(const config *c)
{
    return c->source;
}

int config_fail(config *c, const char *section, const char *key, error *err, const char *fmt,
                ...)
{
    char what[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    entry *e = config_lookup(c, section, key, "", err);
    return e ? config_bad(c, e, err, what) : -1;
}
