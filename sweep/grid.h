/* grid.h: a sweep file read, its grid expanded into runs, each checked.
 *
 * The runs are the Cartesian product of the [grid] lists times the seeds,
 * in order: the seed varies fastest, then the last key, the first key
 * slowest. Each run is `asgd train BASE` with its grid values and
 * experiment.seed, name, out and run_id as overrides; its folder is
 * OUT/NAME/key=value,...,seed=S/. Every run's config is checked when the
 * grid is expanded, so a bad value stops the sweep before anything runs,
 * naming the sweep file's line and key; so do a value or a seed listed
 * twice and a [grid] key the sweep sets itself. A run is complete when its
 * summary says so; a complete run whose config.ini is not the config
 * resolved for it now stops the expansion (sweep_resolved_matches). */
#ifndef ASGD_SWEEP_GRID_H
#define ASGD_SWEEP_GRID_H

#include <stdbool.h>
#include <sys/types.h>

#include "core/config.h"
#include "core/error.h"
#include "core/proc.h"

#define SWEEP_MAX_KEYS 16
#define SWEEP_MAX_VALUES 64
#define SWEEP_MAX_RUNS 100000

typedef struct grid_key {
    char key[128];
    int line;
    bool bars;                /* its values are between '|' (lists), not commas */
    int count;
    char *values[SWEEP_MAX_VALUES];
} grid_key;

typedef struct sweep_run {
    char id[1024];
    char dir[5400];
    char *overrides[SWEEP_MAX_KEYS + 8];
    int noverrides;
    int weight;               /* the slots of -j it takes: its processes or threads */
    proc p;
    bool complete;
} sweep_run;

typedef struct sweep {
    const char *path;
    char base[4096];
    const char *name;
    char out[4096];
    long seeds[64];
    int nseeds;
    grid_key keys[SWEEP_MAX_KEYS];
    int nkeys;
    sweep_run *runs;
    int nruns;
    config *c;
} sweep;

/* Reads the sweep file at path and expands its grid: -1 with err
 * (ERROR_USAGE) for a bad sweep file or a complete run of another config. */
int sweep_read(sweep *s, const char *path, error *err);
void sweep_free(sweep *s);
/* Whether dir holds a finished run (its summary says complete). */
bool sweep_complete(const char *dir);
/* OUT/NAME/results.csv: a row per complete run. */
int sweep_results(const sweep *s, error *err);

#endif
