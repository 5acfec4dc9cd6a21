/* config.h: experiment configuration, INI files parsed by libinih.
 *
 * A config is a list of `[section] key = value` entries from one file plus
 * `section.key=value` overrides from the command line. Modules read it with
 * typed getters (darknet style) that take a default and an allowed range;
 * every getter marks its key as read and records the value used, defaults
 * included, so that config_write() produces the fully resolved config and
 * config_check_unused() reports every key nothing read (a typo, usually).
 *
 * Every error names where the bad value came from: "FILE:LINE: [section]
 * key: ..." for the file, "command line: section.key=...: ..." for an
 * override. Config errors carry status ERROR_USAGE (exit 2). */
#ifndef ASGD_CONFIG_H
#define ASGD_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/error.h"

typedef struct config config;

/* Range bounds for the numeric getters: inclusive unless flagged open. */
enum { CONFIG_CLOSED = 0, CONFIG_OPEN_LO = 1, CONFIG_OPEN_HI = 2 };

/* Parses path; NULL path gives an empty config (all defaults). */
config *config_load(const char *path, error *err);
/* A config from INI text in memory, reported as coming from `name`. */
config *config_parse_string(const char *text, const char *name, error *err);
void config_destroy(config **c);

/* Whether a command-line argument is an override (section.key=value,
 * checked as one), not a path: an '=' with no '/' before it, and no file
 * of that name (a sweep's run folder, train.lr=0.1,seed=1/config.ini from
 * the sweep's folder or from anywhere, is a path). */
bool config_looks_like_override(const char *arg);
/* Applies "section.key=value" from the command line, replacing the file's
 * value or adding the key. */
int config_override(config *c, const char *arg, error *err);

/* The typed getters. On success they store the value (the default when the
 * key is absent) in *out and return 0; a malformed or out-of-range value
 * returns -1 with err naming the file, line and key. */
int config_get_int(config *c, const char *section, const char *key, long def,
                   long lo, long hi, long *out, error *err);
int config_get_double(config *c, const char *section, const char *key,
                      double def, double lo, double hi, int open,
                      double *out, error *err);
/* Whether text starts with a number as the getters take one: decimal
 * (strtod also reads 0x10), finite, within a double's range (neither
 * overflowing nor underflowing to a denormal); its value into *out and
 * *end past it. For numbers among other text ([sim] pause's 0@1-2). */
bool config_parse_number_at(const char *text, char **end, double *out);
/* The same with nothing after the number but spaces. For values a key's
 * text holds among others (topk:0.01). */
bool config_parse_number(const char *text, double *out);
/* value as the getter that reads section.key in `known` (a config every
 * getter has read) takes it, as text that is the same however it was
 * written: a number (or each of a list of them) as the shortest decimal
 * that reads back as it, a whole number in full (50e-6 and 5e-05 are
 * 5e-05, 8.0 is 8), a boolean as true or false (yes, on, 1); any other
 * key's text as it is (a label of 1.10 is not 1.1). For comparing and
 * grouping the values of run folders' config.ini files. */
void config_value_as_read(const config *known, const char *section, const char *key,
                          const char *value, char *out, size_t n);
/* Adds to `into` each key of `from` it lacks, with how from's getters read
 * it: to gather every key asgd reads from configurations read one by
 * one. -1 when out of memory. */
int config_take_keys(config *into, const config *from);
/* The returned string is owned by the config and lives as long as it. */
int config_get_string(config *c, const char *section, const char *key,
                      const char *def, const char **out, error *err);
/* A file or folder the run reads: as config_get_string, but a relative
 * path that exists here becomes absolute, in what the run uses and in
 * the resolved config it records, so that the run folder's config.ini
 * runs again from any folder (a path that does not exist here, one a
 * pod or another host will see, is kept as written). */
int config_get_path(config *c, const char *section, const char *key,
                    const char *def, const char **out, error *err);
int config_get_bool(config *c, const char *section, const char *key, bool def,
                    bool *out, error *err);
/* allowed is NULL-terminated; *out is the index of the value in it. */
int config_get_enum(config *c, const char *section, const char *key,
                    const char *def, const char *const *allowed, int *out,
                    error *err);
/* A comma-separated list of integers in [lo, hi], at most max of them;
 * an empty value gives *n = 0. */
int config_get_int_list(config *c, const char *section, const char *key,
                        const char *def, long lo, long hi, long *out, int max,
                        int *n, error *err);

/* The same for numbers in [lo, hi]. */
int config_get_double_list(config *c, const char *section, const char *key,
                           const char *def, double lo, double hi, double *out,
                           int max, int *n, error *err);

/* Calls fn for every key of `section` in file order, marking each read;
 * stops at and returns fn's first nonzero result. */
int config_each(config *c, const char *section,
                int (*fn)(void *ctx, const char *key, const char *value, int line),
                void *ctx);

/* Calls fn(ctx, section, key, value) for every path config_get_path read,
 * not empty, and still used (not in a section config_forget_section left:
 * a real run's [sim] profile), in order: the files a run reads, for its
 * record (a resume refused a run whose unused profile had changed). */
void config_each_path(const config *c,
                      void (*fn)(void *ctx, const char *section, const char *key,
                                 const char *path),
                      void *ctx);
/* Calls fn for every entry, every section, in order (nothing is marked
 * read): for tools that compare whole configs. */
int config_each_entry(const config *c,
                      int (*fn)(void *ctx, const char *section, const char *key,
                                const char *value),
                      void *ctx);

/* For values a module parses itself: -1 with err set to "WHERE: [section]
 * key: MESSAGE", WHERE being the file and line or the command line. */
int config_error(const config *c, const char *section, const char *key, error *err,
                 const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* -1 naming the first key (in file order) that no getter read: an unknown
 * key, with "did you mean" where `known` has a close one. `known` (may be
 * NULL) is a config whose getters were run for every variant (every model,
 * rule, optimizer...): a key it has that no getter of c read is one asgd
 * knows but this configuration does not use, and is no error: warn(ctx,
 * "WHERE: [section] key: not used by this configuration (ignored)") is
 * called for it (warn may be NULL). */
int config_check_unused(const config *c, const config *known,
                        void (*warn)(void *ctx, const char *msg), void *ctx, error *err);
/* Writes every key read, with its resolved value, grouped by section,
 * each line one that the reader takes back as it is: to f (the caller
 * checks ferror), or to the file path. */
void config_print(const config *c, FILE *f);
int config_write(const config *c, const char *path, error *err);
/* A 64-bit hash of every key read and its value as the getter took it
 * (0.01 and 1e-2 one number, no and off one boolean, "64, 32" and "64,32"
 * one list of numbers; other strings as written), skip_section.skip_key
 * aside: two configs with one fingerprint run the same. */
uint64_t config_fingerprint(const config *c, const char *skip_section, const char *skip_key);
/* The same keys and values as text, one "section.key = value" line each
 * in order of their names: those that `only` names (NULL-terminated
 * "section" or "section.key" items; NULL: every key) but skip does not;
 * NULL when out of memory (the caller frees it). */
char *config_settings(const config *c, const char *const *only, const char *const *skip);
/* Whether a getter read section.key as a list (model.hidden = 256,128). */
bool config_read_as_list(const config *c, const char *section, const char *key);
/* Says that a key read as a string is a comma-separated list, parsed by
 * its reader (sim.pause = 0@1-2,1@3-4): config_read_as_list then says so,
 * and a sweep grid does not take its commas for runs in silence. */
void config_mark_list(config *c, const char *section, const char *key);
/* Marks every key of section unread: a section this configuration reads
 * to check it but does not use (the simulator's in a real run), so that
 * a key given there is "not used by this configuration" and the resolved
 * config (config_print) leaves the section out. */
void config_forget_section(config *c, const char *section);
/* The same for one key. */
void config_forget_key(config *c, const char *section, const char *key);
/* section.key's value as given, or NULL where c has none (nothing is
 * marked read): for tools that compare whole configs. */
const char *config_value(const config *c, const char *section, const char *key);
/* Whether a getter read section.key (a key given but never read is "not
 * used by this configuration"). */
bool config_used(const config *c, const char *section, const char *key);
/* The file the config came from ("(defaults)" when none). */
const char *config_source(const config *c);
/* -1 with err naming where section.key came from (file and line, the
 * command line, or its default) followed by the printf-style message:
 * for values that the getters accept but that do not fit the rest of the
 * configuration. */
int config_fail(config *c, const char *section, const char *key, error *err, const char *fmt,
                ...) __attribute__((format(printf, 5, 6)));

#endif
