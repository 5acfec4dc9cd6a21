/* report.h: `asgd report DIR... [-o OUT]`: the page a researcher attaches
 * to a lab notebook, for a sweep or any set of runs, in Markdown
 * (OUT/report.md) and HTML (OUT/report.html, self-contained but for the
 * figures beside it):
 *   - a table of the runs' summaries (rule, mode, workers, accuracy, time,
 *     samples/s, staleness, diverged), one row per complete run;
 *   - the config keys whose values differ between the runs, a column each;
 *   - figures drawn by asgd plot (convergence, time to accuracy at
 *     --target, throughput, staleness) as OUT/report-KIND.png, when
 *     gnuplot is there (the page says so when it is not);
 *   - each run's provenance: when, where, which asgd and command.
 * OUT is the first DIR unless given. */
#ifndef ASGD_REPORT_H
#define ASGD_REPORT_H

#include "core/error.h"

int report_main(int argc, char **argv, error *err);

#endif
