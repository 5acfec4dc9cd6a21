/* sim.c: the discrete-event simulator's event loop, with the shards and
 * the evaluator; see sim.h. The workers are simworker.c. */
#include "core/sim/sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/export.h"
#include "core/model.h"
#include "core/partition.h"
#include "core/sim/simstate.h"
#include "core/simtime.h"
#include "core/stop.h"
#include "transport/wire.h"

/* ---- shards ---- */

/* A shard and the simulator, as a reply's context. */
typedef struct sim_replier {
    sim *s;
    int shard;
} sim_replier;

/* server_reply_fn: the shard's parameters to the worker now, arriving
 * after the link's delay; handle is the pull's worker incarnation. A pull
 * from a worker that has since failed gets nothing. */
static void s_reply(void *ctx, const pull_msg *m, void *handle)
{
    sim_replier *rp = ctx;
    sim *s = rp->s;
    int k = rp->shard, worker = (int)m->worker, incarnation = (int)(intptr_t)handle;
    if (!sim_worker_alive(s, worker, incarnation)) {
        return;
    }
    sim_worker *sw = &s->workers[worker];
    server *srv = s->shards[k].srv;
    memcpy(sw->pull_dst + srv->lo, server_answer(srv, m), srv->n * sizeof(float));
    sw->w.versions[k] = srv->version;
    if (k == 0) {
        sw->w.staleness = srv->last_staleness[worker];
    }
    double bytes = WIRE_HEADER_SIZE + (double)srv->n * sizeof(float);
    sim_schedule(s, (sim_event){.t = sim_arrival(s, worker, k, 0, bytes), .kind = EV_ARRIVE_REPLY,
                              .worker = worker, .shard = k, .incarnation = incarnation});
}

/* The first training step, the first worker pull any shard sees: time
 * starts, and the evaluations follow it every eval.every. */
static void s_first_step(sim *s)
{
    if (s->started) {
        return;
    }
    s->started = true;
    s->first_step = s->now;
    if (s->e->eval_every > 0) {
        sim_schedule(s, (sim_event){.t = s->now + s->e->eval_every, .kind = EV_EVAL});
    }
}

/* Processes queued messages until the shard is busy or idle. */
static void s_process(sim *s, int k)
{
    sim_shard *sh = &s->shards[k];
    sh->busy = false;
    while (sh->count > 0 && !sh->busy) {
        sim_event m = sh->queue[sh->head++];
        sh->count--;
        if (sh->count == 0) {
            sh->head = 0;
        }
        if (!sim_worker_alive(s, m.worker, m.incarnation)) {
            continue;   /* from a worker that has since failed */
        }
        sim_replier rp = {.s = s, .shard = k};
        void *handle = (void *)(intptr_t)m.incarnation;
        if (m.kind == EV_ARRIVE_PULL) {
            s_first_step(s);   /* as in real mode: a shard's first worker pull */
            pull_msg pm = {.worker = (uint32_t)m.worker, .min_version = m.version};
            if (server_pull_ready(sh->srv, &pm)) {
                s_reply(&rp, &pm, handle);
            } else if (server_wait(sh->srv, &pm, handle) < 0) {
                s->failed = true;
                error_set(s->err, ERROR_RUNTIME, "sim: out of memory");
            }
            continue;
        }
        push_msg pm = {.worker = (uint32_t)m.worker, .tag = m.tag, .base_version = m.version,
                       .samples = m.samples, .verdict = m.verdict, .values = m.values};
        int verdict = server_push(sh->srv, &pm);
        if (m.ask) {   /* the round's leader answers with its verdict */
            sim_schedule(s, (sim_event){.t = sim_arrival(s, m.worker, k, 0, WIRE_HEADER_SIZE),
                                        .kind = EV_ARRIVE_VERDICT, .worker = m.worker,
                                        .shard = k, .incarnation = m.incarnation,
                                        .verdict = verdict});
        }
        sim_worker *sw = &s->workers[m.worker];
        if (--sw->pending_pushes == 0 && sw->waiting == WAIT_SETTLE) {
            sim_worker_wake(sw);
        }
        server_wake(sh->srv, s_reply, &rp);
        if (s->e->sim.apply > 0) {
            sh->busy = true;
            sim_schedule(s, (sim_event){.t = s->now + s->e->sim.apply, .kind = EV_PROCESS, .shard = k});
        }
    }
}

/* ---- the evaluator ---- */

static void s_evaluate(sim *s)
{
    for (int k = 0; k < s->nshards; k++) {
        server *srv = s->shards[k].srv;
        pull_msg pm = {.worker = ALGORITHM_EVALUATOR};
        memcpy(s->centre + srv->lo, server_answer(srv, &pm), srv->n * sizeof(float));
    }
    server *first = s->shards[0].srv;
    double loss, acc;
    model_evaluate_host(s->m, &loss, &acc, s->centre, &s->e->test, (int)s->e->eval_batch);
    run_eval_row(s->r->eval, s->now - s->first_step, (double)first->samples / (double)s->n_train,
                 (long)first->version, (long)first->samples, loss, acc);
    bool refused = false;   /* a worker pushed NaN or infinity: it diverged */
    for (int k = 0; k < s->nshards; k++) {
        refused = refused || s->shards[k].srv->stats.nonfinite > 0;
    }
    if (summary_add_eval(&s->sum, loss, acc) || refused) {
        s->sum.diverged = true;
        s->diverged = true;   /* the run stops at this evaluation */
    }
}

/* ---- the run ---- */

static void s_handle(sim *s, const sim_event *e)
{
    switch (e->kind) {
    case EV_START:
        if (sim_worker_start(s, e->worker) < 0) {
            s->failed = true;
        }
        break;
    case EV_RESUME: {
        sim_worker *sw = &s->workers[e->worker];
        sim_core_release(s);   /* every EV_RESUME ends a minibatch on a core */
        if (sw->incarnation == e->incarnation && sw->waiting == WAIT_TIME) {
            sim_worker_wake(sw);
        }
        break;
    }
    case EV_ARRIVE_PULL:
    case EV_ARRIVE_PUSH: {
        sim_shard *sh = &s->shards[e->shard];
        if (sim_queue_add(&sh->queue, &sh->count, &sh->cap, &sh->head, *e) < 0) {
            s->failed = true;
            error_set(s->err, ERROR_RUNTIME, "sim: out of memory");
            break;
        }
        if (!sh->busy) {
            s_process(s, e->shard);
        }
        break;
    }
    case EV_ARRIVE_REPLY: {
        sim_worker *sw = &s->workers[e->worker];
        if (sim_worker_alive(s, e->worker, e->incarnation) && --sw->pending_replies == 0 &&
            sw->waiting == WAIT_REPLIES) {
            sim_worker_wake(sw);
        }
        break;
    }
    case EV_ARRIVE_VERDICT: {
        sim_worker *sw = &s->workers[e->worker];
        if (sim_worker_alive(s, e->worker, e->incarnation) && sw->waiting == WAIT_VERDICT) {
            sw->verdict = e->verdict;
            sim_worker_wake(sw);
        }
        break;
    }
    case EV_PROCESS:
        s_process(s, e->shard);
        break;
    case EV_EVAL:
        s_evaluate(s);
        if (s->e->eval_every > 0 && s->started) {   /* the next, counted from the first step */
            sim_schedule(s, (sim_event){.t = s->now + s->e->eval_every, .kind = EV_EVAL});
        }
        break;
    case EV_FAIL:
        sim_worker_fail(s, e->worker, e->back);
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
    }
    if (s->parts) {
        partition_free(s->parts, s->nworkers);
    }
    free(s->parts);
    free(s->workers);
    free(s->shards);
    free(s->link_free);
    free(s->centre);
    free(s->core_queue);
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
    s->centre = malloc(n * sizeof *s->centre);
    if (!s->workers || !s->shards || !s->parts || !s->link_free || !s->centre) {
        return error_set(err, ERROR_RUNTIME, "sim: out of memory");
    }
    if (partition_make(s->parts, s->nworkers, &e->train, e->partition, e->partition_alpha,
                       e->seed, err) < 0) {
        return -1;
    }
    model_init_params(s->m, s->centre, e->seed);
    for (int k = 0; k < s->nshards; k++) {
        server *srv = server_new(e->alg, e->rule, &e->rule_info, k, s->nshards, s->nworkers,
                                 s->centre, n);
        if (!srv) {
            return error_set(err, ERROR_RUNTIME, "sim: out of memory");
        }
        srv->clock = s_clock;
        srv->clock_ctx = s;
        s->shards[k].srv = srv;
    }
    s->net_rng = rng_derive(e->seed, RNG_SIM, 0x6e6574);
    for (int k = 0; k < s->nworkers; k++) {
        s->workers[k].compute_rng = rng_derive(e->seed, RNG_SIM, 1 + (uint64_t)k);
    }
    return 0;
}

/* The initial evaluation first, then every worker at its start-up time,
 * and the failures [sim] fail lists. */
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
        sim_schedule(s, (sim_event){.t = f->from, .kind = EV_FAIL, .worker = f->worker,
                                  .back = f->to});
    }
}

/* Processes events until every worker is done; 0 when the run completed. */
static int s_run(sim *s)
{
    stop_install();
    sim_event ev;
    while (!s->failed && !s->diverged && s->done_workers < s->nworkers && !stop_requested() &&
           simq_pop(&s->q, &ev)) {
        s->now = ev.t;
        s->events++;
        s->queued_work -= ev.kind != EV_EVAL;
        s_handle(s, &ev);
        if (ev.kind == EV_EVAL && s->queued_work == 0 && s->started) {
            break;   /* only evaluations are left: nothing will ever move again */
        }
    }
    int stopped = stop_requested();
    stop_uninstall();
    for (int k = 0; k < s->nworkers; k++) {
        sim_worker_stop(s, k);   /* those still running unwind their loops */
    }
    if (s->failed) {
        return -1;
    }
    if (s->diverged) {
        return 0;
    }
    if (stopped) {
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

/* The final evaluation, and the shards' counters into the summary. */
static int s_summarise(sim *s, int rc, double wall0)
{
    run_summary *sum = &s->sum;
    if (!sum->diverged && !s->evaluated_at_end) {
        s_evaluate(s);   /* the final model */
    }
    if (rc == 0) {   /* the centre as evaluated last */
        rc = export_model(s->m, s->centre, &s->e->test, s->r->dir, s->err);
    }
    sum->time_s = s->now - s->first_step;   /* train_time_s: shard 0's first pull to last push */
    sum->startup_s = s->first_step;
    /* each shard's counters, in ps-K.json as in real mode */
    for (int k = 0; k < s->nshards; k++) {
        shard_stats st;
        char path[4800];
        error ignored;
        server_snapshot(s->shards[k].srv, &st);
        summary_add_shard(sum, &st);
        snprintf(path, sizeof path, "%s/ps-%d.json", s->r->dir, k);
        if (shard_stats_write(path, &st, rc == 0 ? s->err : &ignored) < 0) {
            rc = -1;
        }
    }
    summary_finish(sum, s->n_train);
    sum->restarts = s->restarts;
    sum->sim_events = (long)s->events;
    rc = summary_end(sum, s->r, rc, s->err);
    sum->wall_time_s = run_now() - wall0;
    run_log(s->r, "sim: %s at %.6f s: test accuracy %.4f, %ld updates, %llu events in %.2f s "
            "of wall time", rc == 0 ? "finished" : "stopped", s->now, sum->final_test_acc,
            sum->updates, (unsigned long long)s->events, sum->wall_time_s);
    if (sum->diverged) {
        summary_say_diverged(sum, s->r->dir);
    }
    error ignored;
    return summary_write(s->r->dir, sum, rc == 0 ? s->err : &ignored) < 0 ? -1 : rc;
}

int sim_train(experiment *e, run *r, error *err)
{
    if (!e->alg) {
        return config_fail(e->c, "experiment", "mode", err, "sim needs a distributed rule; "
                           "the sequential baseline is sync with one worker");
    }
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
    s_schedule_start(&s);
    if (e->sim.compute == SIM_MEASURED && sim_calibrate(&s) < 0) {
        goto done;
    }
    rc = s_summarise(&s, s_run(&s), wall0);
done:
    s_free(&s);
    backend_destroy(&b);
    return rc;
}
