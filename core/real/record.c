/* record.c: a role-per-process job's run folder, completed by its
 * evaluator. */
#include "core/real/record.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cJSON.h>

#include "core/backend/backend.h"
#include "core/real/collect.h"

int record_begin(record *rec, const experiment *e, const char *dir, error *err)
{
    memset(rec, 0, sizeof *rec);
    /* read before this session's summary replaces it: an interrupted
     * session's times, which a resumed one adds to (a finished run's
     * folder reused starts anew) */
    char path[4800];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    cJSON *old = run_read_json(path);
    bool complete = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(old, "complete"));
    bool going_on = old && !complete;
    rec->going_on = going_on;
    if (going_on) {
        rec->before_resumes = (int)run_json_positive(old, "resumes");
        rec->before_wall_s = run_json_positive(old, "wall_time_s");
        rec->before_startup_s = run_json_positive(old, "startup_s");
        const cJSON *base = cJSON_GetObjectItemCaseSensitive(old, "resume_base");
        rec->base_wall_s = run_json_positive(base, "wall_time_s");
        rec->base_startup_s = run_json_positive(base, "startup_s");
    }
    run_summary *sum = &rec->sum;
    experiment_summary(e, sum);
    summary_take_sessions(sum, going_on ? old : NULL);
    cJSON_Delete(old);
    if (run_adopt(&rec->r, dir, e->c, err) < 0) {
        return -1;
    }
    /* an interrupted session's summary stays as it is until this session's
     * end replaces it (rewritten here, it lost that session's time_s,
     * updates and samples to an evaluator killed before its end) */
    sum->resumes = rec->before_resumes;
    sum->wall_time_s = rec->before_wall_s;
    sum->startup_s = rec->before_startup_s;
    sum->base_wall_s = rec->base_wall_s;
    sum->base_startup_s = rec->base_startup_s;
    backend_resolve(&e->backend, sum->device, sizeof sum->device);
    if (complete) {   /* said: its results go, replaced by this job's */
        char line[600];
        snprintf(line, sizeof line, "evaluator: %.300s held a complete run: this job's files "
                 "replace its eval.csv and summary.json (give each job its own --run_dir or "
                 "experiment.run_id to keep both)", dir);
        fprintf(stderr, "%s\n", line);
        run_log(&rec->r, "%s", line);
    }
    run_log(&rec->r, "evaluator: %s, %d workers, %d shards, started by hand or by an engine; "
            "this folder is the run's", e->algorithm_name, e->workers, e->servers);
    return going_on ? 0 : summary_write(dir, sum, err);
}

void record_eval(record *rec, double t, long updates, double loss, double acc)
{
    rec->last_eval_t = t;
    summary_add_eval(&rec->sum, updates, loss, acc);
}

/* The clocks of earlier sessions whose steps stay in steps-K.csv (a job
 * resumed by hand after its evaluator stopped before every worker was
 * done): one row each, "since,t0", in steps-clocks.csv, until a session
 * gathers them. */
#define STEPS_CLOCKS_HEADER "since,t0"

static bool s_any_steps_left(const record *rec, int workers)
{
    bool any = false;
    for (int w = 0; w < workers && !any; w++) {
        char path[4800];
        snprintf(path, sizeof path, "%s/steps-%d.csv", rec->r.dir, w);
        any = access(path, F_OK) == 0;
    }
    return any;
}

/* This session's clock kept for the one that gathers its steps. */
static void s_keep_clock(record *rec, int workers, const steps_clock *now)
{
    char path[4800];
    snprintf(path, sizeof path, "%s/steps-clocks.csv", rec->r.dir);
    error err;
    FILE *f = now->t0 > 0 && s_any_steps_left(rec, workers)
                  ? run_append_csv(path, STEPS_CLOCKS_HEADER, false, &err) : NULL;
    if (f) {
        fprintf(f, "%.6f,%.6f\n", now->since, now->t0);
    }
    if (!f || fclose(f) != 0) {
        run_log(&rec->r, "evaluator: the clock of this session's steps was not kept: a later "
                "session will place them on its own");
    }
}

/* steps-K.csv of the workers that share this folder, appended to
 * steps.csv (a resumed run's earlier steps are there already), each
 * session's rows on its clock. */
static void s_gather_steps(record *rec, int workers, const steps_clock *now)
{
    char path[4800], clocks_path[4800];
    snprintf(path, sizeof path, "%s/steps.csv", rec->r.dir);
    snprintf(clocks_path, sizeof clocks_path, "%s/steps-clocks.csv", rec->r.dir);
    error ignored;   /* no steps.csv: the workers' own files stay */
    if (!s_any_steps_left(rec, workers) ||
        !(rec->r.steps = run_append_csv(path, RUN_STEPS_HEADER, false, &ignored))) {
        return;
    }
    enum { MAX_CLOCKS = 64 };
    steps_clock clocks[MAX_CLOCKS] = {*now};
    int n = 1;
    char *text = run_read_file(clocks_path), *save = NULL;
    for (char *line = text ? strtok_r(text, "\n", &save) : NULL; line && n < MAX_CLOCKS;
         line = strtok_r(NULL, "\n", &save)) {
        n += sscanf(line, "%lf,%lf", &clocks[n].since, &clocks[n].t0) == 2;
    }
    free(text);
    collect_steps(&rec->r, workers, clocks, n);
    if (!s_any_steps_left(rec, workers)) {   /* gathered, every session's */
        remove(clocks_path);
    }
}

int record_end(record *rec, const experiment *e, const shard_stats *stats, int servers,
               double t0, int rc, error *err)
{
    run_summary *sum = &rec->sum;
    double end = t0, resumed_at = 0, started = sum->started_at;
    uint64_t resumes = 0;
    if (!stats && rec->going_on) {
        /* whether the shards were resumed is in their counters: guessed,
         * the earlier sessions' times were lost (an evaluator stopped
         * before its first look wrote its own session's alone) */
        run_log(&rec->r, "evaluator: the shards' counters were never read; summary.json stays "
                "the earlier sessions'");
        run_close(&rec->r);
        return rc;
    }
    if (!stats) {   /* never read: unknown (null), not 0 updates and 0 samples */
        sum->shards_missing = servers;
        sum->uncounted = true;
    }
    for (int k = 0; stats && k < servers; k++) {
        summary_add_shard(sum, &stats[k]);
        end = fmax(end, stats[k].last_push_at);
        if (stats[k].started_at > 0) {   /* a shard started before this evaluator */
            started = fmin(started, stats[k].started_at);
        }
        resumes = stats[k].resumes > resumes ? stats[k].resumes : resumes;
        if (stats[k].resumed_at > 0 && (resumed_at == 0 || stats[k].resumed_at < resumed_at)) {
            resumed_at = stats[k].resumed_at;
        }
    }
    steps_clock now = {.since = started, .t0 = t0};
    if (rc == 0) {   /* every worker is done: their files are whole */
        s_gather_steps(rec, e->workers, &now);
    } else {
        s_keep_clock(rec, e->workers, &now);
    }
    /* the session began when its first process did, the evaluator or a
     * shard (a restored shard holds no worker for the evaluator, so the
     * training may start before it). The shards were resumed (asgd ps
     * --resume) since the earlier summary was written: this session goes
     * on from that one's times. t0, from the shards' clocks, already
     * leaves out the time between sessions, and so lies before this
     * session's start: its start-up ends at the first pull after the
     * resume (it was always 0, and wall_time_s this session's alone). An
     * evaluator restarted in a resumed session (the earlier summary is its
     * predecessor's, of this session) goes on from what that one added to
     * (it added none, and the earlier sessions' times were lost) */
    sum->resumes = (int)resumes;
    bool later = (int)resumes > rec->before_resumes;
    bool same = !later && resumes > 0;
    sum->base_wall_s = later ? rec->before_wall_s : same ? rec->base_wall_s : 0;
    sum->base_startup_s = later ? rec->before_startup_s : same ? rec->base_startup_s : 0;
    double first = resumes > 0 && resumed_at > 0 ? resumed_at : t0;
    sum->time_s = t0 > 0 ? fmax(end - t0, rec->last_eval_t) : 0;   /* eval.csv's last row */
    sum->startup_s = sum->base_startup_s + (first > 0 ? fmax(0, first - started) : 0);
    sum->wall_time_s = sum->base_wall_s + run_wall() - started;
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
