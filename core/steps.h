/* steps.h: the steps a worker took again, left out of steps.csv.
 *
 * A worker that starts again (restarted after a failure, its run resumed,
 * back from a device trace's absence) goes on from the minibatches its
 * pushes got counted for, and takes again the steps after them that it
 * had computed and written but never pushed. steps.csv keeps one row per
 * (worker, step): the last take. Real mode's launcher and the simulator
 * both keep it so. */
#ifndef ASGD_STEPS_H
#define ASGD_STEPS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"
#include "core/run.h"

/* lines: n rows of steps.csv (no header), in order of writing. kept[i] is
 * set false for a row taken again: one after which the same worker wrote
 * a row with a step as low; true for every other row (rows of workers
 * outside 0..workers-1, or without the columns, are kept). */
void steps_keep_last_takes(char *const *lines, size_t n, int workers, bool *kept);

/* Rewrites r's steps.csv (open in r->steps) with only the last takes,
 * rows in their order. 0, or -1 with err naming the file. */
int steps_drop_retaken(run *r, int workers, error *err);

#endif
