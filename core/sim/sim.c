/* sim.c: the discrete-event simulator's event loop, with the evaluator;
 * see sim.h. The workers are simworker.c, the shards simshard.c. */
#define _DEFAULT_SOURCE   /* MAP_ANONYMOUS, MAP_NORESERVE */
#include "core/sim/sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/export.h"
#include "core/model.h"
#include "core/partition.h"
#include "core/progress.h"
#include "core/sim/simstate.h"
#include "core/simtime.h"
#include "core/steps.h"
#include "core/stop.h"

/* ---- the evaluator ---- */

/* The centre now, evaluated: a row of eval.csv at `at` seconds from the
 * first step. */
static void s_evaluate_at(sim *s, double at)
{
    for (int k = 0; k < s->nshards; k++) {
        server *srv = s->shards[k].srv;
        pull_msg pm = {.worker = ALGORITHM_EVALUATOR};
        memcpy(s->centre + srv->lo, server_answer(srv, &pm), srv->n * sizeof(float));
    }
    server *first = s->shards[0].srv;
    double loss, acc;
    model_evaluate_host(s->m, &loss, &acc, s->centre, &s->e->test, (int)s->e->eval_batch);
    run_eval_row(s->r->eval, at, (double)first->samples / (double)s->n_train,
                 (long)first->version, (long)first->samples, loss, acc);
    s->evaluated_at = at;
    bool refused = false;   /* a worker pushed NaN or infinity: it diverged */
    for (int k = 0; k < s->nshards; k++) {
        refused = refused || s->shards[k].srv->stats.nonfinite > 0;
    }
    if (summary_add_eval(&s->sum, (long)first->version, loss, acc) || refused) {
        s->sum.diverged = true;
        s->diverged = true;   /* the run stops at this evaluation */
    }
}

static void s_evaluate(sim *s)
{
    s_evaluate_at(s, s->now - s->first_step);
}

/* When training ended, from the first step: the shards' last push, as in
 * real mode (the run's end came later by the last replies' way back: two
 * latencies more for a lockstep rule), or eval.csv's last row where one
 * came after it. */
static double s_trained_until(const sim *s)
{
    double last = 0;
    for (int k = 0; k < s->nshards; k++) {
        last = fmax(last, s->shards[k].srv->stats.last_push_at);
    }
    return fmax(last > 0 ? last - s->first_step : s->now - s->first_step, s->evaluated_at);
}

/* The evaluations during training come every eval.every from the first
 * step; with [sim] eval_cost each takes that much work on a core, and the
 * next is the first due after the last ended: those that fell due while
 * it was made are skipped, as the real evaluator skips them. */
static void s_evaluation_done(sim *s)
{
    double every = s->e->eval_every;
    if (every > 0 && s->started && (s->evaluations > 0 || s->eval_due)) {
        /* (the initial evaluation, not due: the first step scheduled the next;
         * one that ends on a due time, to rounding, is past it) */
        double since = floor((s->now - s->first_step) / every + 1e-9) + 1;
        double next = fmax(since, (double)(s->evaluations + 1));
        sim_schedule(s, (sim_event){.t = fmax(s->now, s->first_step + every * next),
                                    .kind = EV_EVAL});
    }
    s->eval_due = false;
}

/* Whether a shard is down: its part of the centre is what it lost. */
static bool s_a_shard_down(const sim *s)
{
    for (int k = 0; k < s->nshards; k++) {
        if (s->shards[k].down) {
            return true;
        }
    }
    return false;
}

/* Whether every shard holds the version shard 0 does. */
static bool s_one_round(const sim *s)
{
    for (int k = 1; k < s->nshards; k++) {
        if (s->shards[k].srv->version != s->shards[0].srv->version) {
            return false;
        }
    }
    return true;
}

static void s_eval_event(sim *s)
{
    if (s_a_shard_down(s)) {   /* as the real evaluator's pull waits for the shard's return
                                * (rows showed the updates the shard then lost) */
        s->eval_held = true;
        s->eval_waits_since = 0;   /* a wait for one round starts once it is back */
        return;
    }
    /* a lockstep rule's shards end a round one after another: looked at
     * again every 10 us until they show one round, for up to the 16 ms the
     * real evaluator pulls again for, so that the model is one round's (a
     * row paired shard 0's updates with a model of two rounds, one in five
     * with backups) */
    if (s->e->rule_info.lockstep && !s_one_round(s)) {
        if (s->eval_waits_since == 0) {
            s->eval_waits_since = s->now;
        }
        if (s->now - s->eval_waits_since < 0.016) {
            sim_schedule(s, (sim_event){.t = s->now + 1e-5, .kind = EV_EVAL});
            return;
        }
    }
    s->eval_waits_since = 0;
    double cost = s->e->sim.eval_cost;
    if (cost <= 0) {
        s_evaluate(s);
        double every = s->e->eval_every;
        if (every > 0 && s->started) {
            /* the next on the grid from the first step: one held for a down
             * shard, made when it came back, moved every later one off it */
            double k = floor((s->now - s->first_step) / every + 1e-9) + 1;
            sim_schedule(s, (sim_event){.t = s->first_step + every * k, .kind = EV_EVAL});
        }
        return;
    }
    if (s->eval_busy) {
        s->eval_due = true;
        return;
    }
    s_evaluate(s);
    s->evaluations += s->started;
    s->eval_busy = true;
    sim_cpu_run(s, sim_who_evaluator(), cost);
}

/* ---- the run ---- */

static void s_handle(sim *s, const sim_event *e)
{
    switch (e->kind) {
    case EV_START:
        if (s->now < s->workers[e->worker].away_until) {   /* its device is away */
            sim_schedule(s, (sim_event){.t = s->workers[e->worker].away_until,
                                        .kind = EV_START, .worker = e->worker});
        } else if (sim_worker_start(s, e->worker) < 0) {
            s->failed = true;
        }
        break;
    case EV_AWAY:
        sim_worker_away(s, e->worker, e->back);
        break;
    case EV_CPU:
        if (!sim_cpu_turn_ended(s, e)) {
            break;
        }
        if (e->io) {
            sim_event m = *e;
            if (sim_io_done(s, &m)) {
                s_handle(s, &m);   /* the message itself, delivered now */
            }
        } else if (e->worker >= 0) {
            sim_worker_cpu_done(&s->workers[e->worker]);
        } else if (e->shard >= 0) {
            sim_shard_cpu_done(s, e->shard);
        } else {
            s->eval_busy = false;
            s_evaluation_done(s);
        }
        sim_cpu_release(s);
        break;
    case EV_IO_ARRIVE:
        sim_cpu_io(s, *e, s->e->sim.message_cpu / 2);
        break;
    case EV_BALANCE:
        sim_cpu_balance(s, e);
        break;
    case EV_RESUME:
        sim_cpu_resume(s, e);
        break;
    case EV_ARRIVE_PULL:
    case EV_ARRIVE_PUSH:
        sim_shard_arrive(s, e);
        break;
    case EV_ARRIVE_REPLY: {
        sim_worker *sw = &s->workers[e->worker];
        size_t at = (size_t)e->worker * s->nshards + e->shard;
        if (!sim_worker_alive(s, e->worker, e->incarnation)) {
            break;
        }
        sw->w.bytes += (long)e->bytes;
        if (e->tag != s->asked[at]) {
            break;   /* the answer to a request asked again since */
        }
        uint32_t before = s->heard[at];
        s->heard[at] = e->generation;
        s->answered[at] = true;
        bool went_back = before != 0 && before != e->generation;
        sw->retaking = sw->retaking || (went_back && e->shard > 0);
        if (went_back && e->version < sw->pull_min) {
            sim_worker_pull_lower(sw, e->version);   /* the shard went back */
        }
        if (--sw->pending_replies == 0 && sw->waiting == WAIT_REPLIES) {
            sim_worker_wake(sw);
        }
        break;
    }
    case EV_ARRIVE_VERDICT: {
        sim_worker *sw = &s->workers[e->worker];
        if (!sim_worker_alive(s, e->worker, e->incarnation)) {
            break;
        }
        /* its generation is not noted: the worker holds the parameters of
         * the one it last pulled from (core/real/peers.c's s_answer) */
        sw->w.bytes += (long)e->bytes;
        if (sw->waiting == WAIT_VERDICT) {
            sw->verdict = e->verdict;
            sim_worker_wake(sw);
        }
        break;
    }
    case EV_SHARD_BACK:
        sim_shard_back(s, e->shard);
        if (s->eval_held && !s_a_shard_down(s)) {
            s->eval_held = false;
            sim_schedule(s, (sim_event){.t = s->now, .kind = EV_EVAL});
        }
        break;
    case EV_CHECKPOINT:
        sim_checkpoint_all(s);
        sim_schedule(s, (sim_event){.t = s->now + s->e->checkpoint_every, .kind = EV_CHECKPOINT});
        break;
    case EV_EVAL:
        s_eval_event(s);
        break;
    case EV_FAIL:
        if (e->shard >= 0) {
            sim_shard_fail(s, e->shard, e->back);
        } else {
            sim_worker_fail(s, e->worker, e->back);
        }
        break;
    default:
        break;
    }
}

static void s_free(sim *s)
{
    for (int k = 0; s->workers && k < s->nworkers; k++) {
        sim_worker_free(&s->workers[k]);
    }
    for (int k = 0; s->shards && k < s->nshards; k++) {
        server_destroy(&s->shards[k].srv);
        free(s->shards[k].queue);
        free(s->shards[k].outbox);
        free(s->shards[k].clients);
        free(s->shards[k].io.waiting.buf);
    }
    if (s->parts) {
        partition_free(s->parts, s->nworkers);
    }
    free(s->parts);
    free(s->workers);
    free(s->shards);
    free(s->link_free);
    free(s->shard_link);
    free(s->heard);
    free(s->asked);
    free(s->answered);
    free(s->centre);
    free(s->batch_x);
    free(s->batch_y);
    if (s->stacks) {
        munmap(s->stacks, (size_t)s->nworkers * SIM_STACK);
    }
    sim_cpu_free(s);
    simq_free(&s->q);
    model_destroy(&s->m);
}

/* Virtual time as the shards' clock. */
static double s_clock(void *ctx)
{
    return ((sim *)ctx)->now;
}

/* The model, the workers' shards of the data and the server shards. */
static int s_setup(sim *s)
{
    experiment *e = s->e;
    error *err = s->err;
    size_t n = s->m->nparams;
    s->workers = calloc((size_t)s->nworkers, sizeof *s->workers);
    s->shards = calloc((size_t)s->nshards, sizeof *s->shards);
    s->parts = calloc((size_t)s->nworkers, sizeof *s->parts);
    s->link_free = calloc((size_t)s->nworkers * (size_t)s->nshards * 2, sizeof *s->link_free);
    s->shard_link = calloc((size_t)s->nshards * 2, sizeof *s->shard_link);
    s->heard = calloc((size_t)s->nworkers * (size_t)s->nshards, sizeof *s->heard);
    s->asked = calloc((size_t)s->nworkers * (size_t)s->nshards, sizeof *s->asked);
    s->answered = calloc((size_t)s->nworkers * (size_t)s->nshards, sizeof *s->answered);
    s->centre = malloc(n * sizeof *s->centre);
    s->batch_x = malloc((size_t)e->batch * (size_t)e->train.dim * sizeof *s->batch_x);
    s->batch_y = malloc((size_t)e->batch * sizeof *s->batch_y);
    if (!s->workers || !s->shards || !s->parts || !s->link_free || !s->shard_link ||
        !s->heard || !s->asked || !s->answered || !s->centre ||
        !s->batch_x || !s->batch_y || sim_cpu_init(s) < 0) {
        return error_set(err, ERROR_RUNTIME, "sim: out of memory");
    }
    void *stacks = mmap(NULL, (size_t)s->nworkers * SIM_STACK, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (stacks == MAP_FAILED) {
        return error_set(err, ERROR_RUNTIME, "sim: no address space for %d workers' stacks "
                         "(%d KiB each)", s->nworkers, SIM_STACK / 1024);
    }
    s->stacks = stacks;
    if (partition_make(s->parts, s->nworkers, &e->train, e->partition, e->partition_alpha,
                       e->seed, err) < 0) {
        return -1;
    }
    model_init_host(s->m, s->centre, e->seed);
    for (int k = 0; k < s->nshards; k++) {
        server *srv = server_new(e->alg, e->rule, &e->rule_info, k, s->nshards, s->nworkers,
                                 s->centre, n);
        if (!srv) {
            return error_set(err, ERROR_RUNTIME, "sim: out of memory");
        }
        srv->clock = s_clock;
        srv->clock_ctx = s;
        s->shards[k].srv = srv;
        s->shards[k].generation = 1;
        s->shards[k].clients = calloc((size_t)s->nworkers, sizeof *s->shards[k].clients);
        if (!s->shards[k].clients) {
            return error_set(err, ERROR_RUNTIME, "sim: out of memory");
        }
    }
    s->net_rng = rng_derive(e->seed, RNG_SIM, 0x6e6574);
    for (int k = 0; k < s->nworkers; k++) {
        s->workers[k].compute_rng = rng_derive(e->seed, RNG_SIM, 1 + (uint64_t)k);
    }
    return 0;
}

/* The initial evaluation first, then every worker at its start-up time,
 * the failures [sim] fail lists, the times each worker's device is away
 * (sim.trace) and, with [checkpoint] every, the
 * checkpoints from time 0 on, as a real shard writes one when it starts. */
static void s_schedule_start(sim *s)
{
    const experiment *e = s->e;
    sim_schedule(s, (sim_event){.t = 0, .kind = EV_EVAL});
    rng startup = rng_derive(e->seed, RNG_SIM, 0x7374617274);
    for (int k = 0; k < s->nworkers; k++) {
        sim_schedule(s, (sim_event){.t = sim_startup_time(&e->sim, &startup), .kind = EV_START,
                                  .worker = k});
    }
    for (int i = 0; i < e->sim.nfailures; i++) {
        const sim_window *f = &e->sim.failures[i];
        sim_schedule(s, (sim_event){.t = f->from, .kind = EV_FAIL,
                                  .worker = f->shard ? -1 : f->index,
                                  .shard = f->shard ? f->index : -1, .back = f->to});
    }
    for (int k = 0; e->sim.trace.n > 0 && k < s->nworkers; k++) {
        const trace_device *d = trace_device_of(&e->sim.trace, k);
        for (int i = 0; i < d->noff; i++) {
            sim_schedule(s, (sim_event){.t = d->off_from[i], .kind = EV_AWAY, .worker = k,
                                        .back = d->off_to[i]});
        }
    }
    if (e->checkpoint_every > 0) {
        sim_schedule(s, (sim_event){.t = 0, .kind = EV_CHECKPOINT});
    }
}

/* Where the simulation stands: epochs, simulated and wall time. */
static void s_progress(const sim *s, progress *p, bool final)
{
    if (!progress_due(p, final)) {
        return;
    }
    double epoch = (double)s->shards[0].srv->samples / (double)s->n_train;
    char accuracy[16] = "-";
    if (!isnan(s->sum.final_test_acc)) {
        snprintf(accuracy, sizeof accuracy, "%.4f", s->sum.final_test_acc);
    }
    progress_say(p, final, epoch / s->e->epochs, "%s: %s simulated, %d workers | epoch %.2f/%g "
                 "| %.2f s simulated | test acc %s | %.2fM events", s->e->name,
                 s->e->algorithm_name, s->nworkers, epoch, s->e->epochs, s->now, accuracy,
                 (double)s->events * 1e-6);
}

/* Processes events until every worker is done; 0 when the run completed. */
static int s_run(sim *s, progress *p)
{
    sim_event ev;
    while (!s->failed && !s->diverged && s->done_workers < s->nworkers && !stop_requested() &&
           simq_pop(&s->q, &ev)) {
        s->now = ev.t;
        s->events++;
        if ((s->events & 4095) == 0) {
            s_progress(s, p, false);
            if (run_files_failing(s->r)) {   /* a row lost: s_summarise names the file (it
                                              * simulated on to the end, then named model.npy) */
                break;
            }
        }
        s->queued_work -= !sim_periodic(&ev);
        s_handle(s, &ev);
        for (; s->workers_finished > 0; s->workers_finished--) {
            for (int k = 0; k < s->nshards && !s->failed; k++) {   /* at a DONE, as a real
                                                                      * shard does */
                if (s->e->checkpoint_every > 0 && !s->shards[k].down) {
                    sim_checkpoint_shard(s, k);
                }
                sim_shard_wake(s, k);
            }
        }
        if (sim_periodic(&ev) && s->queued_work == 0 && s->started) {
            break;   /* only evaluations and checkpoints are left: nothing will move again */
        }
    }
    int stopped = stop_requested();
    for (int k = 0; k < s->nworkers; k++) {
        sim_worker_stop(s, k);   /* those still running unwind their loops */
    }
    if (s->failed || run_files_failing(s->r)) {
        return -1;
    }
    if (s->diverged) {
        return 0;
    }
    if (stopped && s->done_workers < s->nworkers) {   /* after every budget: complete */
        return error_set(s->err, ERROR_RUNTIME, "interrupted at %.3f simulated s; %s is "
                         "incomplete", s->now, s->r->dir);
    }
    if (s->done_workers < s->nworkers) {
        s_evaluate(s);   /* a worker that diverged leaves its round waiting forever */
        s->evaluated_at_end = true;
        if (s->diverged) {
            return 0;
        }
        return error_set(s->err, ERROR_RUNTIME, "sim: deadlock at %.3f s: %d of %d workers "
                         "wait for messages that will never come", s->now,
                         s->nworkers - s->done_workers, s->nworkers);
    }
    return 0;
}

/* Which workers [sim] straggler_fraction made slow (its fraction of the
 * workers rounded up, chosen by the seed), in log.txt: the config says
 * how many only roughly, and not which. */
static void s_log_stragglers(sim *s)
{
    const sim_spec *spec = &s->e->sim;
    if (spec->straggler_fraction <= 0) {
        return;
    }
    char list[512] = "";
    size_t len = 0;
    int slow = 0, listed = 0;
    for (int k = 0; k < s->nworkers; k++) {
        if (spec->speed[k] == 1.0) {
            continue;
        }
        if (len < sizeof list - 16) {
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%d", slow ? ", " : "", k);
            listed++;
        }
        slow++;
    }
    run_log(s->r, "sim: straggler_fraction %g (rounded up), with [sim] speed: %d of %d workers "
            "not at speed 1: %s%s", spec->straggler_fraction, slow, s->nworkers, list,
            listed < slow ? ", ..." : "");
}

/* The final evaluation, and the shards' counters into the summary. */
static int s_summarise(sim *s, int rc, double wall0)
{
    run_summary *sum = &s->sum;
    double end = s->evaluated_at_end ? s->evaluated_at : s_trained_until(s);
    /* the final model; none for a run interrupted (as in real and threads
     * mode: an extra row of an incomplete run, seconds of a CNN's test set
     * that a second Ctrl-C, waiting for the write-up, could not stop) */
    bool lost = run_files_failing(s->r);   /* a row not written: no more, nor a model */
    if (!lost && !sum->diverged && !s->evaluated_at_end && !(rc < 0 && stop_requested())) {
        s_evaluate_at(s, end);
    }
    if (lost) {   /* the file is named, before any other write fails on a full disk */
        error named = {0};
        if (run_finish(s->r, &named) < 0) {
            *s->err = named;
        }
        rc = -1;
    }
    if (rc == 0) {   /* the centre as evaluated last */
        rc = export_model(s->m, s->centre, &s->e->test, s->r->dir, s->err);
    }
    /* eval.csv's last row (train_time_s: shard 0's first pull to last push) */
    sum->time_s = sum->diverged ? s->evaluated_at : end;
    sum->startup_s = s->first_step;
    /* each shard's counters, in ps-K.json as in real mode */
    for (int k = 0; k < s->nshards; k++) {
        error ignored;
        if (server_report(s->shards[k].srv, sum, s->r->dir, rc == 0 ? s->err : &ignored) < 0) {
            rc = -1;
        }
    }
    summary_finish(sum, s->n_train);
    sum->restarts = s->restarts;
    sum->sim_events = (long)s->events;
    error dropped;
    if (s->retaken && !lost &&
        steps_drop_retaken(s->r, s->nworkers, rc == 0 ? s->err : &dropped) < 0) {
        rc = -1;
    }
    rc = summary_end(sum, s->r, rc, s->err);
    sum->wall_time_s = run_now() - wall0;
    run_log(s->r, "sim: %s at %.6f s: test accuracy %.4f, %ld updates, %llu events in %.2f s "
            "of wall time%s%s", rc == 0 ? "finished" : "stopped", s->now, sum->final_test_acc,
            sum->updates, (unsigned long long)s->events, sum->wall_time_s,
            rc < 0 ? ": " : sum->diverged ? ": diverged" : "", rc < 0 ? s->err->msg : "");
    if (sum->diverged) {
        summary_say_diverged(sum, s->r->dir);
    }
    error ignored;
    return summary_write(s->r->dir, sum, rc == 0 ? s->err : &ignored) < 0 ? -1 : rc;
}

int sim_train(experiment *e, run *r, error *err)
{
    double wall0 = run_now();
    sim s = {.e = e, .r = r, .err = err, .nworkers = e->workers, .nshards = e->servers,
             .n_train = e->train.n};
    backend *b = backend_new(&e->backend, err);
    int rc = -1;
    if (!b || !(s.m = model_new(&e->model, b, e->train.dim, e->train.classes, err)) ||
        s_setup(&s) < 0) {
        goto done;
    }
    experiment_summary(e, &s.sum);
    snprintf(s.sum.device, sizeof s.sum.device, "%s", backend_describe(b));
    if (summary_write(r->dir, &s.sum, err) < 0) {
        goto done;
    }
    run_log(r, "sim: %s, %d workers, %d shards, %zu parameters", e->algorithm_name, s.nworkers,
            s.nshards, s.m->nparams);
    s_log_stragglers(&s);
    s_schedule_start(&s);
    if (e->sim.compute == SIM_MEASURED && sim_calibrate(&s) < 0) {
        goto done;
    }
    progress p;
    progress_start(&p);
    stop_install();   /* through the write-up: a signal then waits for it */
    rc = s_summarise(&s, s_run(&s, &p), wall0);
    stop_uninstall();
    s_progress(&s, &p, true);
done:
    s_free(&s);
    backend_destroy(&b);
    return rc;
}
