/* threads.c: worker threads over one parameter vector in one process, the
 * shards' handlers run in place, the main thread evaluating; see
 * threads.h. */
#include "core/threads/threads.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "algorithms/server.h"
#include "algorithms/worker.h"
#include "core/export.h"
#include "core/model.h"
#include "core/partition.h"
#include "core/progress.h"
#include "core/stop.h"

/* A shard and what orders the threads around it: pulls always hold the
 * lock (the rule's readiness and on-pull hook are no concurrent code);
 * pushes hold it unless the rule applies them at once (server_threads >
 * 1); every push and every finished worker wakes the waiting pulls. */
typedef struct tshard {
    server *srv;
    pthread_mutex_t lock;
    pthread_cond_t changed;
} tshard;

typedef struct threads_run threads_run;

/* One worker thread. */
typedef struct tworker {
    threads_run *t;
    int id;
    worker w;
    backend *b;
    model *m;
    pthread_t thread;
    bool started;
    int rc;
    error err;
} tworker;

struct threads_run {
    experiment *e;
    run *r;
    error *err;
    int nworkers, nshards;
    tshard *shards;
    tworker *workers;
    shard *parts;
    backend *eval_b;
    model *eval_m;            /* the evaluator's */
    float *centre;
    double t0;                /* run_now() when the threads start */
    _Atomic double first_step;   /* run_now() of the first worker pull; 0 before */
    atomic_bool stopping;     /* diverged, failed or interrupted: every primitive fails */
    atomic_int finished;      /* worker threads that have returned */
    atomic_int failed;        /* of those, the ones whose loop failed */
    atomic_int waiting;       /* worker threads waiting in a pull */
    double evaluated_at;      /* eval.csv's last row's time */
    run_summary sum;
};

static double s_elapsed(const threads_run *t)
{
    double first = atomic_load(&t->first_step);
    return first > 0 ? run_now() - first : 0;
}

/* ---- the link ---- */

static int s_link_pull(worker *w, float *dst, uint64_t min_version)
{
    tworker *tw = w->link_state;
    threads_run *t = tw->t;
    double zero = 0;
    atomic_compare_exchange_strong(&t->first_step, &zero, run_now());
    for (int k = 0; k < t->nshards; k++) {
        tshard *sh = &t->shards[k];
        server *srv = sh->srv;
        pull_msg pm = {.worker = (uint32_t)w->id, .min_version = min_version};
        pthread_mutex_lock(&sh->lock);
        bool counted = false;
        while (!server_pull_ready(srv, &pm)) {
            if (!counted) {   /* the main thread's deadlock watch counts it */
                atomic_fetch_add(&t->waiting, 1);
                counted = true;
            }
            if (atomic_load(&t->stopping) || stop_requested()) {
                atomic_fetch_sub(&t->waiting, 1);
                pthread_mutex_unlock(&sh->lock);
                return -1;
            }
            struct timespec until;
            clock_gettime(CLOCK_MONOTONIC, &until);
            until.tv_nsec += 100000000;   /* and look at stopping again in 0.1 s */
            if (until.tv_nsec >= 1000000000) {
                until.tv_sec++;
                until.tv_nsec -= 1000000000;
            }
            pthread_cond_timedwait(&sh->changed, &sh->lock, &until);
        }
        if (counted) {
            atomic_fetch_sub(&t->waiting, 1);
        }
        /* the version first: pushes applied at once may land during the
         * copy, so the copy is at least this new (staleness never short) */
        w->versions[k] = atomic_load(&srv->version);
        server_copy_theta(dst + srv->lo, server_answer(srv, &pm), srv->n);
        if (k == 0) {
            w->staleness = server_last_staleness(srv, (uint32_t)w->id);
        }
        pthread_mutex_unlock(&sh->lock);
    }
    return atomic_load(&t->stopping) || stop_requested() ? -1 : 0;
}

/* Shard k applies values (nparams) on this thread; returns its verdict. */
static int s_push_to(threads_run *t, worker *w, int k, const float *values, uint64_t tag,
                     uint32_t samples, int verdict)
{
    tshard *sh = &t->shards[k];
    server *srv = sh->srv;
    push_msg m = {.worker = (uint32_t)w->id, .tag = tag, .base_version = w->versions[k],
                  .samples = samples, .verdict = verdict, .values = values + srv->lo};
    bool locked = srv->threads == 1;
    if (locked) {
        pthread_mutex_lock(&sh->lock);
    }
    int taken = server_push(srv, &m);
    if (!locked) {
        pthread_mutex_lock(&sh->lock);
    }
    pthread_cond_broadcast(&sh->changed);
    pthread_mutex_unlock(&sh->lock);
    return taken;
}

static int s_link_push(worker *w, const float *values, uint64_t tag, uint32_t samples)
{
    tworker *tw = w->link_state;
    threads_run *t = tw->t;
    if (run_files_failing(t->r)) {   /* a step's row was lost: s_summarise names the file */
        atomic_store(&t->stopping, true);
    }
    if (atomic_load(&t->stopping) || stop_requested()) {
        return -1;
    }
    int first = 0, verdict = PUSH_UNDECIDED;
    if (w->round_leader && t->nshards > 1) {   /* shard 0 first; the others follow it */
        verdict = s_push_to(t, w, 0, values, tag, samples, PUSH_UNDECIDED);
        first = 1;
    }
    for (int k = first; k < t->nshards; k++) {
        s_push_to(t, w, k, values, tag, samples, verdict);
    }
    return 0;
}

static double s_link_now(worker *w)
{
    return s_elapsed(((tworker *)w->link_state)->t);
}

static const worker_link s_threads_link = {
    .pull = s_link_pull,
    .push = s_link_push,
    .now = s_link_now,
};

/* ---- the workers ---- */

static void *s_worker_thread(void *arg)
{
    tworker *tw = arg;
    threads_run *t = tw->t;
    backend_use_here(tw->b);   /* its GPU, where there are several */
    double began = run_now();
    tw->rc = t->e->alg->worker_run(&tw->w);
    if (tw->rc == 0) {   /* where its time went, as a real worker logs it */
        run_log(t->r, "threads: worker %d: %.3f s in pulls, %.3f s in gradients, %.3f s in "
                "pushes, of %.3f s (%ld minibatches)", tw->id, tw->w.pull_s, tw->w.gradient_s,
                tw->w.push_s, run_now() - began, tw->w.steps);
    }
    /* failed alone: the run stops (not when the signal stopped it) */
    if (tw->rc < 0 && !atomic_load(&t->stopping) && !stop_requested()) {
        atomic_fetch_add(&t->failed, 1);
        atomic_store(&t->stopping, true);
    }
    for (int k = 0; k < t->nshards; k++) {   /* the rounds and pulls waiting on it go on */
        tshard *sh = &t->shards[k];
        pthread_mutex_lock(&sh->lock);
        if (tw->rc == 0) {
            server_mark_done(sh->srv, (uint32_t)tw->id);
        }
        pthread_cond_broadcast(&sh->changed);
        pthread_mutex_unlock(&sh->lock);
    }
    atomic_fetch_add(&t->finished, 1);
    return NULL;
}

/* run_now as the shards' clock. */
static double s_monotonic(void *ctx)
{
    (void)ctx;
    return run_now();
}

/* The backend every thread makes for itself: one BLAS thread unless
 * backend.threads says otherwise (the workers are the parallelism); on a
 * GPU, ordinal mod the visible GPUs (worker k on GPU k, as in real mode). */
static backend *s_backend(const experiment *e, int ordinal, error *err)
{
    backend_spec spec = experiment_backend_spec(e, ordinal);
    return backend_new(&spec, err);
}

static int s_setup(threads_run *t)
{
    experiment *e = t->e;
    error *err = t->err;
    t->shards = calloc((size_t)t->nshards, sizeof *t->shards);
    t->workers = calloc((size_t)t->nworkers, sizeof *t->workers);
    t->parts = calloc((size_t)t->nworkers, sizeof *t->parts);
    if (!t->shards || !t->workers || !t->parts) {
        return error_set(err, ERROR_RUNTIME, "threads: out of memory");
    }
    if (!(t->eval_b = s_backend(e, 0, err)) ||
        !(t->eval_m = model_new(&e->model, t->eval_b, e->train.dim, e->train.classes, err)) ||
        !(t->centre = malloc(t->eval_m->nparams * sizeof *t->centre)) ||
        partition_make(t->parts, t->nworkers, &e->train, e->partition, e->partition_alpha,
                       e->seed, err) < 0) {
        return t->centre || !t->eval_m ? -1 : error_set(err, ERROR_RUNTIME, "out of memory");
    }
    size_t n = t->eval_m->nparams;
    model_init_host(t->eval_m, t->centre, e->seed);
    for (int k = 0; k < t->nshards; k++) {
        tshard *sh = &t->shards[k];
        sh->srv = server_new(e->alg, e->rule, &e->rule_info, k, t->nshards, t->nworkers,
                             t->centre, n);
        if (!sh->srv) {
            return error_set(err, ERROR_RUNTIME, "threads: out of memory");
        }
        sh->srv->clock = s_monotonic;   /* its stamps on eval.csv's clock, which the wall
                                         * clock's steps (NTP, a resumed VM) do not move */
        pthread_condattr_t monotonic;   /* its waits on the clock every time here is on */
        pthread_condattr_init(&monotonic);
        pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
        pthread_mutex_init(&sh->lock, NULL);
        pthread_cond_init(&sh->changed, &monotonic);
        pthread_condattr_destroy(&monotonic);
    }
    worker_spec spec = experiment_worker_spec(e, e->train.n);
    for (int k = 0; k < t->nworkers; k++) {
        tworker *tw = &t->workers[k];
        tw->t = t;
        tw->id = k;
        if (!(tw->b = s_backend(e, k, err)) ||
            !(tw->m = model_new(&e->model, tw->b, e->train.dim, e->train.classes, err)) ||
            worker_init(&tw->w, &spec, k, tw->m, &e->train, &t->parts[k], err) < 0) {
            return -1;
        }
        tw->w.link = &s_threads_link;
        tw->w.phase_timers = true;
        tw->w.link_state = tw;
        tw->w.steps_csv = t->r->steps;
    }
    return 0;
}

static void s_free(threads_run *t)
{
    for (int k = 0; t->workers && k < t->nworkers; k++) {
        tworker *tw = &t->workers[k];
        if (tw->b) {
            backend_use_here(tw->b);   /* its buffers are its GPU's */
        }
        if (tw->m) {
            worker_free(&tw->w);
        }
        model_destroy(&tw->m);
        backend_destroy(&tw->b);
    }
    for (int k = 0; t->shards && k < t->nshards; k++) {
        if (t->shards[k].srv) {
            server_destroy(&t->shards[k].srv);
            pthread_mutex_destroy(&t->shards[k].lock);
            pthread_cond_destroy(&t->shards[k].changed);
        }
    }
    if (t->parts) {
        partition_free(t->parts, t->nworkers);
    }
    free(t->parts);
    free(t->workers);
    free(t->shards);
    free(t->centre);
    if (t->eval_b) {
        backend_use_here(t->eval_b);
    }
    model_destroy(&t->eval_m);
    backend_destroy(&t->eval_b);
}

/* ---- the evaluator ---- */

/* Training's length once it is over: the shards' first pull to their last
 * push, the summary's train_time_s (as sim.c's last row; shard 0's alone
 * was short of it with two shards). */
static double s_trained(const threads_run *t)
{
    double first = 0, last = 0;
    for (int k = 0; k < t->nshards; k++) {
        const shard_stats *st = &t->shards[k].srv->stats;
        if (st->first_pull_at > 0 && (first == 0 || st->first_pull_at < first)) {
            first = st->first_pull_at;
        }
        last = st->last_push_at > last ? st->last_push_at : last;
    }
    return last > first ? last - first : 0;
}

/* Whether every shard has ended the same round, all their locks held (a
 * round ends on shard 0 first, then on the others as the leader's parts
 * reach them); always for rules without rounds. */
static bool s_same_round(const threads_run *t)
{
    for (int k = 1; t->e->rule_info.lockstep && k < t->nshards; k++) {
        if (atomic_load(&t->shards[k].srv->version) != atomic_load(&t->shards[0].srv->version)) {
            return false;
        }
    }
    return true;
}

/* Whether a worker pushed NaN or infinity (a shard refused it): the run
 * has diverged, and a round may wait forever for it. `holding`: the
 * caller holds every shard's lock. */
static bool s_refused_as(const threads_run *t, bool holding)
{
    for (int k = 0; k < t->nshards; k++) {
        server *srv = t->shards[k].srv;
        /* the counter's lock: the apply threads', or the shard's own */
        pthread_mutex_t *lock = srv->threads > 1 ? &srv->stats_lock
                                : holding       ? NULL
                                                : &t->shards[k].lock;
        if (lock) {
            pthread_mutex_lock(lock);
        }
        bool refused = srv->stats.nonfinite > 0;
        if (lock) {
            pthread_mutex_unlock(lock);
        }
        if (refused) {
            return true;
        }
    }
    return false;
}

static bool s_refused(const threads_run *t)
{
    return s_refused_as(t, false);
}

/* The centre now, evaluated; a row of eval.csv, at the time of the copy
 * (the last, `final`, at the end of training), not after the forward pass.
 * The copy is taken with every shard's lock held: a push applied at once
 * may be half in it, as a Hogwild reader sees it, and a lockstep rule's
 * shards are all at one round (shard 0 could be a round ahead, two rows of
 * one `updates` holding different models). A diverged model stops the
 * run: one whose loss is not finite, or one copied after a shard refused a
 * push (a refusal during the forward pass is the next evaluation's, of the
 * model then: this one's row is older than the divergence). */
static void s_evaluate(threads_run *t, bool final)
{
    uint64_t samples = 0, version = 0;
    double copied = 0;
    bool refused = false;
    /* no thread holds two locks: taking them in order cannot deadlock; a
     * round left half done (a stuck run, which the main loop ends) is
     * copied as it is after a second, or at once after a refusal (the
     * round waits for good) */
    for (double given_up = run_now() + 1;;) {
        for (int k = 0; k < t->nshards; k++) {
            pthread_mutex_lock(&t->shards[k].lock);
        }
        refused = s_refused_as(t, true);
        if (refused || s_same_round(t) || atomic_load(&t->stopping) || stop_requested() ||
            run_now() > given_up) {
            break;
        }
        for (int k = t->nshards - 1; k >= 0; k--) {
            pthread_mutex_unlock(&t->shards[k].lock);
        }
        sched_yield();   /* the round's last parts are on their way */
    }
    /* the row's counters and time are those of the copy: read before it
     * (pushes applied one at a time wait; applied at once, the copy is at
     * least this new), not after, when later pushes may have counted */
    version = atomic_load(&t->shards[0].srv->version);
    samples = atomic_load(&t->shards[0].srv->samples);
    copied = s_elapsed(t);
    for (int k = 0; k < t->nshards; k++) {
        tshard *sh = &t->shards[k];
        pull_msg pm = {.worker = ALGORITHM_EVALUATOR};
        server_copy_theta(t->centre + sh->srv->lo, server_answer(sh->srv, &pm), sh->srv->n);
    }
    for (int k = t->nshards - 1; k >= 0; k--) {
        pthread_mutex_unlock(&t->shards[k].lock);
    }
    double at = final ? fmax(s_trained(t), t->evaluated_at) : copied;
    t->evaluated_at = at;
    double loss, acc;
    backend_use_here(t->eval_b);   /* the last worker's backend opened after it */
    model_evaluate_host(t->eval_m, &loss, &acc, t->centre, &t->e->test, (int)t->e->eval_batch);
    run_eval_row(t->r->eval, at, (double)samples / (double)t->e->train.n,
                 (long)version, (long)samples, loss, acc);
    fflush(t->r->eval);
    if (summary_add_eval(&t->sum, (long)version, loss, acc) || refused) {
        t->sum.diverged = true;
        atomic_store(&t->stopping, true);
    }
}

static void s_progress(threads_run *t, progress *p, bool final)
{
    if (!progress_due(p, final)) {
        return;
    }
    double epoch = (double)atomic_load(&t->shards[0].srv->samples) / (double)t->e->train.n;
    char accuracy[16] = "-";
    if (!isnan(t->sum.final_test_acc)) {
        snprintf(accuracy, sizeof accuracy, "%.4f", t->sum.final_test_acc);
    }
    progress_say(p, final, epoch / t->e->epochs, "%s: %s, %d threads | epoch %.2f/%g | test "
                 "acc %s", t->e->name, t->e->algorithm_name, t->nworkers, epoch, t->e->epochs,
                 accuracy);
}

/* Shard 0's version and the finished workers: what moves while any
 * worker can still move. */
static uint64_t s_progress_mark(const threads_run *t)
{
    return atomic_load(&t->shards[0].srv->version) + (uint64_t)atomic_load(&t->finished);
}

/* Starts the workers and evaluates until they have all returned; 0 when
 * every one finished its budget (or the run diverged). Every unfinished
 * worker waiting in a pull for half a second without anything moving is a
 * deadlock (a round that waits for a worker that has stopped pushing), as
 * the simulator finds it. */
static int s_run(threads_run *t, progress *p)
{
    s_evaluate(t, false);   /* the initial model, at time 0 */
    t->t0 = run_now();
    for (int k = 0; k < t->nworkers && !stop_requested(); k++) {   /* none once stopped */
        tworker *tw = &t->workers[k];
        if (pthread_create(&tw->thread, NULL, s_worker_thread, tw) != 0) {
            atomic_store(&t->stopping, true);
            error_set(t->err, ERROR_RUNTIME, "threads: cannot start worker %d", k);
            break;
        }
        tw->started = true;
    }
    double next = t->e->eval_every, stuck_since = 0;
    uint64_t mark = s_progress_mark(t);
    while (atomic_load(&t->finished) < t->nworkers && !atomic_load(&t->stopping)) {
        if (stop_requested()) {
            atomic_store(&t->stopping, true);
            break;
        }
        double every = t->e->eval_every;   /* an evaluation due sooner, on time */
        run_sleep(every > 0 && atomic_load(&t->first_step) > 0
                  ? fmin(0.01, fmax(next - s_elapsed(t), 0.0005)) : 0.01);
        s_progress(t, p, false);
        if (s_refused(t)) {
            s_evaluate(t, false);   /* diverged: marked, and the run stops */
            break;
        }
        if (run_files_failing(t->r)) {   /* s_summarise names the file */
            atomic_store(&t->stopping, true);
            break;
        }
        int unfinished = t->nworkers - atomic_load(&t->finished);
        uint64_t now_mark = s_progress_mark(t);
        if (atomic_load(&t->waiting) < unfinished || now_mark != mark) {
            stuck_since = 0;
            mark = now_mark;
        } else if (stuck_since == 0) {
            stuck_since = run_now();
        } else if (run_now() - stuck_since > 0.5) {
            atomic_store(&t->stopping, true);
            error_set(t->err, ERROR_RUNTIME, "threads: deadlock: %d of %d workers wait for "
                      "pushes that will never come", unfinished, t->nworkers);
            break;
        }
        if (t->e->eval_every > 0 && atomic_load(&t->first_step) > 0 && s_elapsed(t) >= next &&
            atomic_load(&t->finished) < t->nworkers) {   /* after the last push: the final one */
            s_evaluate(t, false);
            double at = s_elapsed(t);   /* those that fell due meanwhile are skipped, not
                                         * made one per pass */
            next += every;
            next = next > at ? next : (floor(at / every) + 1) * every;
        }
    }
    atomic_store(&t->stopping, atomic_load(&t->stopping) || t->err->msg[0]);
    for (int k = 0; k < t->nshards; k++) {   /* the waiting pulls see it at once */
        pthread_mutex_lock(&t->shards[k].lock);
        pthread_cond_broadcast(&t->shards[k].changed);
        pthread_mutex_unlock(&t->shards[k].lock);
    }
    for (int k = 0; k < t->nworkers; k++) {
        if (t->workers[k].started) {
            pthread_join(t->workers[k].thread, NULL);
        }
    }
    int rc = t->err->msg[0] ? -1 : 0;
    /* interrupted before failed: a worker that saw the signal first has
     * returned -1 too, and that is no failure of its own */
    bool budgets_done = true;   /* a signal after every budget leaves a complete run */
    for (int k = 0; k < t->nworkers; k++) {
        budgets_done = budgets_done && t->workers[k].started && t->workers[k].rc == 0;
    }
    if (stop_requested() && !t->sum.diverged && rc == 0 && !budgets_done) {
        rc = error_set(t->err, ERROR_RUNTIME, "interrupted; %s is incomplete", t->r->dir);
    }
    for (int k = 0; rc == 0 && atomic_load(&t->failed) > 0 && k < t->nworkers; k++) {
        if (t->workers[k].rc < 0) {
            rc = error_set(t->err, ERROR_RUNTIME, "threads: worker %d failed", k);
        }
    }
    return rc;
}

/* The final evaluation, the model, and the shards' counters into the
 * summary (as sim.c's). */
static int s_summarise(threads_run *t, int rc, double wall0)
{
    run_summary *sum = &t->sum;
    if (!sum->diverged && !(rc < 0 && stop_requested())) {   /* interrupted: no row, as in
                                                               * real mode */
        if (rc == 0) {
            run_log(t->r, "threads: every worker finished %.2f s after the first step; the "
                    "final evaluation", s_trained(t));
        }
        s_evaluate(t, true);
    }
    if (rc == 0) {   /* a file that lost rows is named before the model is saved */
        rc = run_finish(t->r, t->err) < 0
                 ? -1 : export_model(t->eval_m, t->centre, &t->e->test, t->r->dir, t->err);
    }
    for (int k = 0; k < t->nshards; k++) {
        error ignored;
        if (server_report(t->shards[k].srv, sum, t->r->dir, rc == 0 ? t->err : &ignored) < 0) {
            rc = -1;
        }
    }
    double first = atomic_load(&t->first_step);
    /* the shards' first pull to their last push, or the last evaluation's
     * time where one came after it (a row taken after the last push, before
     * the workers returned): eval.csv's last row, as in real mode (it read
     * train_time_s before summary_finish set it: 0) */
    sum->time_s = fmax(s_trained(t), t->evaluated_at);
    /* loading the data, the initial evaluation and starting the threads,
     * as a real run's start-up holds its processes' */
    sum->startup_s = t->e->load_s + (first > 0 ? first - wall0 : t->t0 - wall0);
    summary_finish(sum, t->e->train.n);
    rc = summary_end(sum, t->r, rc, t->err);
    sum->wall_time_s = t->e->load_s + run_now() - wall0;
    run_log(t->r, "threads: %s: test accuracy %.4f, %ld updates, %.0f samples/s%s%s",
            rc == 0 ? "finished" : "stopped", sum->final_test_acc, sum->updates,
            sum->samples_per_s, rc < 0 ? ": " : sum->diverged ? ": diverged" : "",
            rc < 0 ? t->err->msg : "");
    if (sum->diverged) {
        summary_say_diverged(sum, t->r->dir);
    }
    error ignored;
    return summary_write(t->r->dir, sum, rc == 0 ? t->err : &ignored) < 0 ? -1 : rc;
}

int threads_train(experiment *e, run *r, error *err)
{
    double wall0 = run_now();
    threads_run t = {.e = e, .r = r, .err = err, .nworkers = e->workers,
                     .nshards = e->servers};
    int rc = -1;
    if (s_setup(&t) == 0) {
        experiment_summary(e, &t.sum);
        snprintf(t.sum.device, sizeof t.sum.device, "%s", backend_describe(t.eval_b));
        if (summary_write(r->dir, &t.sum, err) == 0) {
            run_log(r, "threads: %s, %d worker threads, %d shards, %zu parameters",
                    e->algorithm_name, t.nworkers, t.nshards, t.eval_m->nparams);
            progress p;
            progress_start(&p);
            stop_install();   /* through the write-up: a signal then waits for it */
            rc = s_run(&t, &p);
            rc = s_summarise(&t, rc, wall0);
            stop_uninstall();
            s_progress(&t, &p, true);
        }
    }
    s_free(&t);
    return rc;
}
