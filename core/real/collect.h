/* collect.h: what a distributed job's processes leave in its run folder,
 * gathered once they have stopped: every shard's counters (ps-K.json)
 * into the summary, every worker's steps (steps-K.csv, in Unix time) into
 * the run's steps.csv. */
#ifndef ASGD_COLLECT_H
#define ASGD_COLLECT_H

#include "core/run.h"
#include "core/summary.h"

/* Adds ps-0.json .. ps-(servers-1).json to sum (one that cannot be read is
 * logged, left out and counted in sum->shards_missing; without shard 0's,
 * sum->uncounted); returns the first training step, the earliest
 * worker pull any shard saw (Unix time; 0 when none did); in *resumed_at
 * the earliest first pull after a shard's restoration (0: none was
 * restored), and in *last_push the last push any shard took (0: none). */
double collect_shards(run *r, int servers, run_summary *sum, double *resumed_at,
                      double *last_push);

/* The clock of one session's rows in steps-K.csv: those written since
 * `since` (Unix time; the session's first process) are counted from t0
 * (its first step, Unix time; 0: from its earliest row, when no shard said
 * when training began). */
typedef struct steps_clock {
    double since, t0;
} steps_clock;

/* steps-K.csv of every worker into r's steps.csv, in time order, each row
 * on the clock of the latest of clocks[0 .. nclocks-1] (at least one)
 * whose `since` is not after it (the earliest where none is: the
 * sessions of a job resumed by hand whose earlier sessions' evaluators
 * could not gather them), with the rows steps.csv has already (a resumed
 * run's);
 * the parts are removed once steps.csv holds them all (a full disk keeps
 * them where they are). A last line without its newline (a worker killed
 * mid-write) is left out, and so is a step that a worker's next process
 * took again (restarted, or resumed: the step its predecessor computed
 * but never pushed): one row per worker and step, the last taken. */
void collect_steps(run *r, int workers, const steps_clock *clocks, int nclocks);

#endif
