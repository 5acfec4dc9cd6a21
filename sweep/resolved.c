/* resolved.c: a complete run's config.ini compared with the config a sweep
 * resolves for it now, key by key. */
#include "sweep/resolved.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "core/experiment.h"
#include "core/provenance.h"
#include "core/run.h"

/* The first difference between the config a run ran with and the one
 * resolved now. */
typedef struct compare {
    const config *ran;
    const char *dir;
    error *err;
} compare;

static int s_compare(void *ctx, const char *section, const char *key, const char *value)
{
    compare *cmp = ctx;
    if (strcmp(section, "experiment") == 0 &&
        (strcmp(key, "out") == 0 || strcmp(key, "run_id") == 0)) {
        return 0;
    }
    const char *given = config_value(cmp->ran, section, key);
    char ran[512], now[512];
    experiment_value_text(section, key, given ? given : "", ran, sizeof ran);
    experiment_value_text(section, key, value, now, sizeof now);
    if (given && strcmp(ran, now) == 0) {   /* lr = 0.05 ran as 5e-2 would now */
        return 0;
    }
    char was[300];
    if (given) {
        snprintf(was, sizeof was, "has [%s] %s = %.200s", section, key, given);
    } else {
        snprintf(was, sizeof was, "has no [%s] %s", section, key);
    }
    error_set(cmp->err, ERROR_USAGE, "%s: a complete run, but the sweep's config changed "
              "since it ran: its config.ini %s, the sweep now gives %.200s; give the sweep "
              "another [sweep] out or name, or remove the folder to run it again", cmp->dir,
              was, value);
    return 1;
}

/* The resolved config as config.ini has it, read back: only the keys the
 * getters read, as config_write writes them. */
static config *s_resolved(const config *now, error *err)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) {
        error_set(err, ERROR_RUNTIME, "out of memory");
        return NULL;
    }
    config_print(now, f);
    bool bad = ferror(f) != 0;
    bad = fclose(f) != 0 || bad;
    config *c = bad ? NULL : config_parse_string(text, "the resolved config", err);
    if (bad) {
        error_set(err, ERROR_RUNTIME, "out of memory");
    }
    free(text);
    return c;
}

/* 0 when every file dir's run read (its summary's inputs) is as it was. */
static int s_inputs_match(const char *dir, error *err)
{
    char path[4096], then[64], now[64];
    if (provenance_input_changed(dir, NULL, path, sizeof path, then, now, sizeof now)) {
        return error_set(err, ERROR_USAGE, "%s: a complete run, but %.1000s changed since it "
                         "ran (%s then, %s now); give the sweep another [sweep] out or name, "
                         "or remove the folder to run it again", dir, path, then, now);
    }
    return 0;
}

/* A key the run's config.ini gives that the config now does not read, and
 * asgd reads in no configuration: a run of another build (or a key since
 * removed), whose setting this one cannot repeat. A key asgd knows that
 * this configuration does not read (a sim or threads run's [cluster]
 * host, timeout or auth, which an older build wrote out) changes nothing
 * here, whatever its value; that an older build made the run is said
 * apart (results.c). */
typedef struct extra {
    const config *now;
    const char *dir;
    error *err;
} extra;

static int s_extra(void *ctx, const char *section, const char *key, const char *value)
{
    extra *x = ctx;
    if (config_value(x->now, section, key) || experiment_knows_key(section, key)) {
        return 0;
    }
    error_set(x->err, ERROR_USAGE, "%s: a complete run, but its config.ini has [%s] %s = %.200s, "
              "a key asgd does not read (another build's run?); give the sweep "
              "another [sweep] out or name, or remove the folder to run it again", x->dir,
              section, key, value);
    return 1;
}

int sweep_resolved_matches(const char *dir, const config *now, error *err)
{
    char path[5600];
    snprintf(path, sizeof path, "%s/config.ini", dir);
    config *ran = config_load(path, err);
    if (!ran) {
        char why[sizeof err->msg];
        snprintf(why, sizeof why, "%s", err->msg);
        return error_set(err, ERROR_USAGE, "%s: a complete run whose config cannot be read "
                         "(%.300s); remove the folder to run it again", dir, why);
    }
    config *resolved = s_resolved(now, err);
    compare cmp = {.ran = ran, .dir = dir, .err = err};
    extra x = {.now = resolved, .dir = dir, .err = err};
    int rc = !resolved || config_each_entry(resolved, s_compare, &cmp) != 0 ||
                     config_each_entry(ran, s_extra, &x) != 0 || s_inputs_match(dir, err) < 0
                 ? -1 : 0;
    config_destroy(&resolved);
    config_destroy(&ran);
    return rc;
}
