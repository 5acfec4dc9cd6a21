/* sweep.h: `asgd sweep SWEEP.ini [-j N]`, a grid of runs, resumable.
 *
 * A sweep file names a base config and lists values for any keys:
 *
 *   [sweep]
 *   base = ../../configs/mlp.ini    ; relative to the sweep file
 *   name = rules                    ; runs go to OUT/NAME/ (default: file name)
 *   seeds = 1,2,3                   ; each point is repeated per seed (default 1,2,3)
 *   out = runs                      ; relative to the sweep file (default: runs)
 *   [grid]
 *   train.algorithm = sync, hogwild
 *   cluster.workers = 2, 4
 *
 * The runs are the Cartesian product of the [grid] lists times the seeds;
 * each gets the folder OUT/NAME/key=value,...,seed=S/. A run whose
 * summary.json says complete is skipped, so a sweep resumes after an
 * interruption; an incomplete one is run again from scratch. A complete
 * run whose config.ini differs from the config the sweep resolves for it
 * now (its base config was edited) stops the sweep before anything runs,
 * naming the folder and the key; its results are kept. Every run is
 * checked before any starts: a bad key or value, a value or seed listed
 * twice, a [grid] key of several values that no run reads (its values
 * would be copies of one run), or a [grid] key the sweep sets itself
 * (experiment.seed, name, out, run_id) names the sweep file, its line and
 * key (exit 2). -j runs several
 * at a time, counting a real distributed run as its number of processes,
 * never more than the cores. At the end OUT/NAME/results.csv has a row per
 * complete run: the keys that vary, the seed, then the summary's other
 * fields. */
#ifndef ASGD_SWEEP_H
#define ASGD_SWEEP_H

#include "core/error.h"

int sweep_main(const char *path, long jobs, error *err);

#endif
