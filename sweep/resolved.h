/* resolved.h: whether a complete run folder was made from the config a
 * sweep would give it now.
 *
 * A run folder's config.ini holds every key its run read, resolved
 * (defaults included). A sweep resumes only runs of the same config: when
 * its base config or the build's defaults changed since a run completed,
 * the run's results are another experiment's, so the sweep stops instead
 * of reporting them or removing them. */
#ifndef ASGD_SWEEP_RESOLVED_H
#define ASGD_SWEEP_RESOLVED_H

#include "core/config.h"
#include "core/error.h"

/* 0 when dir/config.ini gives every key that `now` resolves (the keys
 * read by its getters, as config_write writes them) the same value,
 * experiment.out and experiment.run_id aside (where the folder is, not
 * what ran). Otherwise -1 with err (ERROR_USAGE) naming the folder, the
 * first key that differs with both values, and what to do. Nor may the
 * folder's config.ini give a key the config now does not read (another
 * build's run, whose setting this one cannot repeat), nor a file the run read
 * have changed since (summary.json's inputs, checksums): a trace edited
 * after the run gives another experiment under the same config. */
int sweep_resolved_matches(const char *dir, const config *now, error *err);

#endif
