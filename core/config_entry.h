/* config_entry.h: a config's entries, shared by config.c (parsing,
 * overrides, checks and the resolved config) and config_get.c (the typed
 * getters). No other module includes it. */
#ifndef ASGD_CONFIG_ENTRY_H
#define ASGD_CONFIG_ENTRY_H

#include <stdbool.h>

#include "core/error.h"

typedef struct config config;

enum origin { FROM_FILE, FROM_COMMAND_LINE, FROM_DEFAULT };

typedef struct entry {
    char *section, *key, *value;
    enum origin origin;
    int line;       /* line in the file, for FROM_FILE */
    bool used;
    bool path;      /* read by config_get_path: a file or folder the run reads */
    char *canonical;   /* the value as its getter took it, where it has other
                          spellings (a number, a boolean, a list of numbers);
                          NULL: value */
    bool list;         /* read as a list (config_read_as_list) */
    char read_as;      /* 'n': a number or a list of them, 'b': a boolean, 0: text
                          (config_value_as_read) */
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

/* The entry for section.key, created from the default when absent, and
 * marked read. NULL (err set) when there is no memory. */
entry *config_lookup(config *c, const char *section, const char *key, const char *def,
                     error *err);
/* The entry for section.key, or NULL; reads nothing (not marked read). */
const entry *config_find(const config *c, const char *section, const char *key);
/* -1 with err naming where e came from: "FILE:LINE: [section] key: what". */
int config_bad(const config *c, const entry *e, error *err, const char *what);
/* Replaces e's text (the resolved config records the value used). */
void config_set_text(entry *e, const char *text);
/* Records the value as e's getter took it (config_fingerprint's). */
void config_set_canonical(entry *e, const char *text);
/* Why "key = value" would not read back from config.ini as value, or NULL. */
const char *config_unwritable(const char *key, const char *value);

#endif
