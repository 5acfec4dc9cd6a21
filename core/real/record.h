/* record.h: the run folder of a job whose processes were started one by
 * one (by hand, from TF_CONFIG, or by an engine through asgd role), made
 * complete by its evaluator as the launcher makes asgd train's: config.ini,
 * log.txt and summary.json beside eval.csv, and steps.csv gathered from the
 * steps-K.csv of the workers that write into the same folder (a worker on
 * another host keeps its own). asgd plot and asgd sweep's results take it
 * as any run. */
#ifndef ASGD_RECORD_H
#define ASGD_RECORD_H

#include "core/experiment.h"
#include "core/run.h"
#include "core/summary.h"

typedef struct record {
    run r;
    run_summary sum;
    bool going_on;            /* the folder holds an interrupted session's summary */
    int before_resumes;       /* the earlier summary's (an interrupted session's) */
    double before_wall_s;     /* resumes, wall_time_s and startup_s, which a resumed */
    double before_startup_s;  /* session's add to */
    double base_wall_s;       /* and its resume_base: what its session added to (where */
    double base_startup_s;    /* this evaluator goes on with that session) */
    double last_eval_t;       /* the time of the last evaluation's row */
} record;

/* Writes dir's config.ini from e's config, opens its log, and writes a
 * summary with the run's identity (complete = false), or, where dir holds
 * an incomplete earlier summary, leaves that one until record_end and
 * carries over its resumes, wall_time_s and startup_s (a run going on with
 * asgd ps --resume adds up its sessions, as asgd train --resume does).
 * The evaluator takes in eval.csv's earlier evaluations when the job is
 * under way. */
int record_begin(record *rec, const experiment *e, const char *dir, error *err);
/* One evaluation of the centre model after `updates` updates, its row at
 * t seconds (a non-finite loss: diverged). */
void record_eval(record *rec, double t, long updates, double loss, double acc);
/* The end: the shards' last counters in, training timed from t0 (the first
 * step, Unix time; 0 if none) to the last push any shard received (or the
 * last evaluation's row, where that is later), the
 * workers' steps gathered when rc == 0 (every worker done), the summary
 * finished and written, complete when rc == 0 and no file lost data. A
 * run the shards were resumed into (their resumes) counts its resumes and
 * adds the earlier sessions' wall_time_s and startup_s; this session's
 * start-up ends at the first pull after the resume. stats NULL: the
 * shards' counters were never read: the summary's counts are unknown, and
 * an interrupted session's summary is left as it is (which session this
 * is cannot be told).
 * Returns rc, or -1 with err set. */
int record_end(record *rec, const experiment *e, const shard_stats *stats, int servers,
               double t0, int rc, error *err);

#endif
