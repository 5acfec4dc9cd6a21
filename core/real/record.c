/* record.c: a role-per-process job's run folder, completed by its
 * evaluator. */
#include "core/real/record.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/backend/backend.h"
#include "core/real/collect.h"

int record_begin(record *rec, const experiment *e, const char *dir, error *err)
{
    memset(rec, 0, sizeof *rec);
    if (run_adopt(&rec->r, dir, e->c, err) < 0) {
        return -1;
    }
    run_summary *sum = &rec->sum;
    experiment_summary(e, sum);
    backend_resolve(&e->backend, sum->device, sizeof sum->device);
    run_log(&rec->r, "evaluator: %s, %d workers, %d shards, started by hand or by an engine; "
            "this folder is the run's", e->algorithm_name, e->workers, e->servers);
    return summary_write(dir, sum, err);
}

void record_eval(record *rec, long updates, double loss, double acc)
{
    summary_add_eval(&rec->sum, updates, loss, acc);
}

/* steps-K.csv of the workers that share this folder, appended to
 * steps.csv (a resumed run's earlier steps are there already). */
static void s_gather_steps(record *rec, int workers, double t0)
{
    bool any = false;
    for (int w = 0; w < workers && !any; w++) {
        char path[4800];
        snprintf(path, sizeof path, "%s/steps-%d.csv", rec->r.dir, w);
        any = access(path, F_OK) == 0;
    }
    char path[4800];
    snprintf(path, sizeof path, "%s/steps.csv", rec->r.dir);
    error ignored;   /* no steps.csv: the workers' own files stay */
    if (any && (rec->r.steps = run_append_csv(path, RUN_STEPS_HEADER, false, &ignored))) {
        collect_steps(&rec->r, workers, t0);
    }
}

int record_end(record *rec, const experiment *e, const shard_stats *stats, int servers,
               double t0, int rc, error *err)
{
    run_summary *sum = &rec->sum;
    double end = t0;
    for (int k = 0; k < servers; k++) {
        summary_add_shard(sum, &stats[k]);
        end = fmax(end, stats[k].last_push_at);
    }
    if (rc == 0) {   /* every worker is done: their files are whole */
        s_gather_steps(rec, e->workers, t0);
    }
    sum->time_s = t0 > 0 ? end - t0 : 0;
    sum->startup_s = t0 > 0 ? fmax(0, t0 - sum->started_at) : 0;
    sum->wall_time_s = run_wall() - sum->started_at;
    summary_finish(sum, e->n_train);
    rc = summary_end(sum, &rec->r, rc, err);
    run_log(&rec->r, "%s: test accuracy %.4f, %ld updates, staleness mean %.2f max %ld, "
            "%ld dropped, %ld rejected", rc == 0 ? "finished" : "failed", sum->final_test_acc,
            sum->updates, sum->staleness_mean, sum->staleness_max, sum->dropped,
            sum->rejected);
    error ignored;
    if (summary_write(rec->r.dir, sum, rc == 0 ? err : &ignored) < 0) {
        rc = -1;
    }
    run_close(&rec->r);
    return rc;
}
