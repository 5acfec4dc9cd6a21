/* simworker.c: the simulator's workers: coroutines running the rules'
 * worker loops, and the link that turns their primitives into events. */
#include "core/sim/simstate.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/simtime.h"
#include "transport/wire.h"

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/common_interface_defs.h>
#endif

#define SIM_PULL_BYTES WIRE_HEADER_SIZE

/* ---- coroutine switching (with AddressSanitizer's fiber annotations) ---- */

#define SIM_CANARY_WORD 0x736b636174736d69ull

/* The pattern at the bottom of sw's stack, written or checked. */
static void s_canary_set(sim_worker *sw)
{
    uint64_t *bottom = (uint64_t *)(void *)sw->stack;
    for (int i = 0; i < SIM_CANARY; i++) {
        bottom[i] = SIM_CANARY_WORD;
    }
}

static void s_canary_check(const sim_worker *sw)
{
    const uint64_t *bottom = (const uint64_t *)(const void *)sw->stack;
    for (int i = 0; i < SIM_CANARY; i++) {
        if (bottom[i] != SIM_CANARY_WORD) {
            fprintf(stderr, "asgd: sim: worker %d overflowed its %d KiB coroutine stack\n",
                    sw->w.id, SIM_STACK / 1024);
            abort();
        }
    }
}

static void s_enter(sim *s, sim_worker *sw)
{
#ifdef __SANITIZE_ADDRESS__
    void *fake = NULL;
    __sanitizer_start_switch_fiber(&fake, sw->stack, SIM_STACK);
    sim_fiber_switch(&s->main_fiber, &sw->fiber);
    __sanitizer_finish_switch_fiber(fake, NULL, NULL);
#else
    sim_fiber_switch(&s->main_fiber, &sw->fiber);
#endif
    s_canary_check(sw);
}

static void s_yield(sim_worker *sw)
{
#ifdef __SANITIZE_ADDRESS__
    sim *s = sw->s;
    __sanitizer_start_switch_fiber(&sw->fake_stack, s->main_stack_bottom, s->main_stack_size);
    sim_fiber_switch(&sw->fiber, &sw->s->main_fiber);
    __sanitizer_finish_switch_fiber(sw->fake_stack, &s->main_stack_bottom, &s->main_stack_size);
#else
    sim_fiber_switch(&sw->fiber, &sw->s->main_fiber);
#endif
}

void sim_worker_wake(sim_worker *sw)
{
    sw->waiting = WAIT_NONE;
    s_enter(sw->s, sw);
}

/* ---- the worker link ---- */

/* `work` seconds of the worker's own (its messages' calls and copies), on
 * a core; none when work is 0. */
static int s_work(sim_worker *sw, double work)
{
    if (work > 0 && !sw->failed) {
        if (sim_cpu_run(sw->s, sim_who_worker(sw), work) < 0) {
            return -1;
        }
        sw->waiting = WAIT_CPU;
        s_yield(sw);
    }
    return sw->failed ? -1 : 0;
}

/* The work of sending (or receiving) one message to (from) each shard,
 * with `bytes` of values copied in all. */
static double s_message_work(const sim_worker *sw, double bytes)
{
    const sim_spec *spec = &sw->s->e->sim;
    return sim_message_work(sw->s) * sw->s->nshards + sim_copy_time(spec, bytes);
}

void sim_worker_cpu_done(sim_worker *sw)
{
    if (sw->waiting == WAIT_CPU) {
        sim_worker_wake(sw);
    }
}

/* Sends shard k a pull request for min_version, under a new number. */
static int s_ask(sim_worker *sw, int k, uint64_t min_version)
{
    sim *s = sw->s;
    worker *w = &sw->w;
    size_t at = (size_t)w->id * s->nshards + k;
    s->answered[at] = false;
    sim_event e = {.kind = EV_ARRIVE_PULL, .worker = w->id, .shard = k,
                   .incarnation = sw->incarnation, .version = min_version,
                   .tag = ++s->asked[at], .generation = s->heard[at]};
    w->bytes += SIM_PULL_BYTES;
    return sim_send(s, e, SIM_PULL_BYTES);
}

/* Sends a pull for min_version to every shard, the replies to go to dst,
 * versions and staleness. */
static int s_ask_pull(sim_worker *sw, float *dst, uint64_t *versions, uint64_t *staleness,
                      uint64_t min_version)
{
    sim *s = sw->s;
    if (s_work(sw, s_message_work(sw, 0)) < 0) {
        return -1;
    }
    sw->pull_dst = dst;
    sw->pull_versions = versions;
    sw->pull_staleness = staleness;
    sw->pull_min = min_version;
    sw->pending_replies = s->nshards;
    for (int k = 0; k < s->nshards; k++) {
        if (s_ask(sw, k, min_version) < 0) {
            return -1;
        }
    }
    return 0;
}

void sim_worker_pull_lower(sim_worker *sw, uint64_t version)
{
    sim *s = sw->s;
    sw->pull_min = version;
    for (int k = 0; k < s->nshards; k++) {
        if (!s->answered[(size_t)sw->w.id * s->nshards + k] && s_ask(sw, k, version) < 0) {
            s->failed = true;
            error_set(s->err, ERROR_RUNTIME, "sim: out of memory");
            return;
        }
    }
}

/* Until every reply asked for has come, and the worker has taken the
 * parameters out of them. */
static int s_wait_replies(sim_worker *sw)
{
    if (sw->pending_replies > 0 && !sw->failed) {
        sw->waiting = WAIT_REPLIES;
        s_yield(sw);
    }
    return s_work(sw, s_message_work(sw, (double)sw->w.nparams * sizeof(float)));
}

static int s_link_pull(worker *w, float *dst, uint64_t min_version)
{
    sim_worker *sw = w->link_state;
    if (sw->failed) {
        return -1;
    }
    if (sw->prefetched) {   /* its replies, once all have come */
        sw->prefetched = false;
        if (s_wait_replies(sw) < 0) {
            return -1;
        }
        if (min_version <= sw->prefetch_min) {
            memcpy(dst, sw->prefetch, w->nparams * sizeof *dst);
            memcpy(w->versions, sw->prefetch_versions, (size_t)w->shards * sizeof *w->versions);
            w->staleness = sw->prefetch_staleness;
            return 0;
        }
    }
    if (s_ask_pull(sw, dst, w->versions, &w->staleness, min_version) < 0) {
        return -1;
    }
    return s_wait_replies(sw);
}

static int s_link_prefetch(worker *w, uint64_t min_version)
{
    sim_worker *sw = w->link_state;
    if (sw->failed) {
        return -1;
    }
    if (!sw->prefetch) {
        sw->prefetch = malloc(w->nparams * sizeof *sw->prefetch);
        sw->prefetch_versions = calloc((size_t)w->shards, sizeof *sw->prefetch_versions);
        if (!sw->prefetch || !sw->prefetch_versions) {
            return error_set(sw->s->err, ERROR_RUNTIME, "sim: out of memory");
        }
    }
    sw->prefetched = true;
    sw->prefetch_min = min_version;
    return s_ask_pull(sw, sw->prefetch, sw->prefetch_versions, &sw->prefetch_staleness,
                      min_version);
}

/* A push of values to shard k, with the round leader's verdict, or asking
 * for it. */
static int s_push_to(sim_worker *sw, int k, const float *values, uint64_t tag, uint32_t samples,
                     uint64_t total, int verdict, bool ask)
{
    sim *s = sw->s;
    worker *w = &sw->w;
    server *srv = s->shards[k].srv;
    uint64_t bytes = WIRE_HEADER_SIZE + (sw->compress ? sw->compress->len[k]
                                                      : srv->n * sizeof(float));
    sim_event e = {.kind = EV_ARRIVE_PUSH, .worker = w->id, .shard = k,
                   .incarnation = sw->incarnation, .tag = tag, .version = w->versions[k],
                   .samples = samples, .total = total, .verdict = verdict, .ask = ask,
                   .values = values + srv->lo,
                   .generation = s->heard[(size_t)w->id * s->nshards + k]};
    if (sim_send(s, e, (double)bytes) < 0) {
        return -1;
    }
    w->bytes += (long)bytes;
    sw->pending_pushes++;
    return 0;
}

static void s_link_settle(worker *w);

static int s_link_push(worker *w, const float *values, uint64_t tag, uint32_t samples)
{
    sim_worker *sw = w->link_state;
    sim *s = sw->s;
    if (sw->failed) {
        return -1;
    }
    if (sw->compress) {   /* the shards take what they decode; the last push is read first */
        s_link_settle(w);
        if (sw->failed) {
            return -1;
        }
        values = compressor_push(sw->compress, values);
    }
    double bytes = 0;
    for (int k = 0; k < s->nshards; k++) {
        bytes += sw->compress ? (double)sw->compress->len[k]
                              : (double)s->shards[k].srv->n * sizeof(float);
    }
    /* sending it, and compressing it first */
    if (s_work(sw, s_message_work(sw, bytes) + (sw->compress ? s->e->sim.compress_cpu : 0)) < 0) {
        return -1;
    }
    /* counted as a real worker's are, so a shard takes a step once */
    uint64_t total = s->e->rule_info.lockstep ? 0 : (sw->examples += samples);
    int first = 0, verdict = PUSH_UNDECIDED;
    bool leader = w->round_leader;
    if (leader && sw->retaking) {   /* a round shard 0 closed, retaken: none to judge */
        leader = tag >= w->versions[0];
        sw->retaking = !leader;
    }
    if (leader && s->nshards > 1) {   /* shard 0 first, then its verdict */
        if (s_push_to(sw, 0, values, tag, samples, total, PUSH_UNDECIDED, true) < 0) {
            return -1;
        }
        sw->waiting = WAIT_VERDICT;
        s_yield(sw);
        /* taking the verdict is a message's work, as taking a reply is */
        if (sw->failed || s_work(sw, sim_message_work(s)) < 0) {
            return -1;
        }
        verdict = sw->verdict;
        first = 1;
    }
    for (int k = first; k < s->nshards; k++) {
        if (s_push_to(sw, k, values, tag, samples, total, verdict, false) < 0) {
            return -1;
        }
    }
    return 0;
}

static void s_link_settle(worker *w)
{
    sim_worker *sw = w->link_state;
    if (sw->pending_pushes > 0 && !sw->failed) {
        sw->waiting = WAIT_SETTLE;
        s_yield(sw);
    }
}

static void s_link_compute(worker *w)
{
    sim_worker *sw = w->link_state;
    sim *s = sw->s;
    if (sw->failed) {
        return;
    }
    sw->compute_start = s->now;
    if (sim_cpu_run(s, sim_who_worker(sw), -1) < 0) {
        return;
    }
    sw->waiting = WAIT_CPU;
    s_yield(sw);
}

/* Virtual time from the first training step. */
static double s_link_now(worker *w)
{
    sim *s = ((sim_worker *)w->link_state)->s;
    return s->now - s->first_step;
}

static const worker_link s_sim_link = {
    .pull = s_link_pull,
    .prefetch = s_link_prefetch,
    .push = s_link_push,
    .settle = s_link_settle,
    .compute = s_link_compute,
    .now = s_link_now,
};

/* ---- workers' lives ---- */

/* A worker that started again takes up its share, as a real worker does:
 * the examples its pushes carried, as the shard that counted fewest
 * counts them, in whole minibatches; the shards that counted more take
 * those steps once (s_push in simshard.c). As a real worker's first pull,
 * it waits for the shards that are down, and reads the counts they came
 * back with. */
static int s_take_up(sim_worker *sw)
{
    sim *s = sw->s;
    for (int k = 0; k < s->nshards && !sw->failed; k++) {
        while (s->shards[k].down && !sw->failed) {
            sw->waiting = WAIT_SHARD_BACK;
            s_yield(sw);
        }
    }
    if (sw->failed) {
        return -1;
    }
    const server *first = s->shards[0].srv;
    uint64_t least = atomic_load(&first->worker_samples[sw->w.id]);
    for (int k = 1; k < s->nshards; k++) {
        uint64_t counted = atomic_load(&s->shards[k].srv->worker_samples[sw->w.id]);
        least = counted < least ? counted : least;
    }
    long done = (long)(least / (uint64_t)sw->w.batch);
    worker_take_up(&sw->w, done);
    sw->examples = (uint64_t)done * (uint64_t)sw->w.batch;
    uint64_t mine = atomic_load(&first->worker_samples[sw->w.id]);
    for (int k = 1; k < s->nshards; k++) {   /* a shard behind: retaken (peers_take_up) */
        const server *srv = s->shards[k].srv;
        sw->retaking = sw->retaking ||
                       (srv->version < first->version &&
                        atomic_load(&srv->worker_samples[sw->w.id]) < mine);
    }
    s->retaken |= sw->w.steps < sw->written;
    return 0;
}

/* A worker's coroutine: its rule's loop, then its end, switching away for
 * good (sim_worker_start makes it anew for a restart). */
static void s_trampoline(void *arg)
{
    sim_worker *sw = arg;
    sim *s = sw->s;
#ifdef __SANITIZE_ADDRESS__
    __sanitizer_finish_switch_fiber(NULL, &s->main_stack_bottom, &s->main_stack_size);
#endif
    /* a process's start-up (loading the data, making the model) is work */
    sw->rc = s_work(sw, s->e->sim.startup_cpu) < 0 || (sw->incarnation > 1 && s_take_up(sw) < 0)
             ? -1 : s->e->alg->worker_run(&sw->w);
    s_link_settle(&sw->w);
    sw->running = false;
    if (sw->rc == 0 && !sw->failed) {
        sw->done = true;
        s->done_workers++;
        for (int k = 0; k < s->nshards; k++) {
            server_mark_done(s->shards[k].srv, (uint32_t)sw->w.id);
        }
        s->workers_finished++;   /* the loop has the shards checkpoint and ask their pulls
                                    again, as at a real worker's DONE */
    }
#ifdef __SANITIZE_ADDRESS__
    __sanitizer_start_switch_fiber(NULL, s->main_stack_bottom, s->main_stack_size);
#endif
    sim_fiber_switch(&sw->fiber, &s->main_fiber);
}

int sim_worker_start(sim *s, int k)
{
    sim_worker *sw = &s->workers[k];
    error *err = s->err;
    if (sw->w.steps > sw->written) {   /* the furthest any life wrote (one that failed
                                        * before taking up its share wrote from 0) */
        sw->written = sw->w.steps;
    }
    if (sw->incarnation > 0) {
        worker_free(&sw->w);
    }
    sw->stack = s->stacks + (size_t)k * SIM_STACK;
    s_canary_set(sw);
    worker_spec spec = experiment_worker_spec(s->e, s->n_train);
    spec.batch_x = s->batch_x;
    spec.batch_y = s->batch_y;
    if (worker_init(&sw->w, &spec, k, s->m, &s->e->train, &s->parts[k], err) < 0) {
        return -1;
    }
    if (sw->compress) {
        compressor_reset(sw->compress);   /* a restarted worker has lost its residual */
    } else if (s->e->compress.kind != COMPRESS_NONE &&
               !(sw->compress = compressor_new(&s->e->compress, sw->w.nparams, s->nshards,
                                               s->e->seed, k, err))) {
        return -1;
    }
    sw->w.link = &s_sim_link;
    sw->w.link_state = sw;
    sw->w.steps_csv = s->r->steps;
    sw->w.null_compute = s->e->sim.compute == SIM_NULL;
    sw->s = s;
    sw->failed = false;
    sw->running = true;
    sw->pending_replies = sw->pending_pushes = 0;
    sw->prefetched = false;
    sw->retaking = false;   /* a new process knows of no restart */
    sw->incarnation++;
    memset(&s->heard[(size_t)k * s->nshards], 0, (size_t)s->nshards * sizeof *s->heard);
    sim_fiber_make(&sw->fiber, sw->stack, SIM_STACK, s_trampoline, sw);
    sw->waiting = WAIT_NONE;
    s_enter(s, sw);
    return 0;
}

/* A worker fails: its loop unwinds (every primitive now returns -1); the
 * restart policy decides the rest, as the launcher does for processes. */
void sim_worker_stop(sim *s, int k)
{
    sim_worker *sw = &s->workers[k];
    if (!sw->running) {
        return;
    }
    sw->failed = true;
    sw->pending_pushes = sw->pending_replies = 0;
    while (sw->running) {
        sim_worker_wake(sw);   /* runs to the end of its loop */
    }
}

void sim_worker_fail(sim *s, int k, double back)
{
    sim_worker *sw = &s->workers[k];
    /* down already, or done: nothing to fail; a process still starting up
     * (its first start pending) fails as one that runs (its failure was
     * dropped, and it trained through the window) */
    bool starting = sw->incarnation == 0;
    if (!sw->running && !starting) {
        return;
    }
    run_log(s->r, "sim: worker %d failed at %.6f s%s", k, s->now,
            starting ? ", before its first step" : "");
    sim_worker_stop(s, k);
    const experiment *e = s->e;
    bool restart = e->restart != RESTART_NEVER && s->restarts < e->backoff_limit;
    if (!restart) {
        s->failed = true;
        error_set(s->err, ERROR_RUNTIME, "worker %d failed at %.3f s (simulated)%s; the run "
                  "failed", k, s->now, e->restart == RESTART_NEVER ? " ([cluster] restart = never)"
                  : " (no restart left under [cluster] backoff_limit)");
        return;
    }
    double at = back >= 0 ? back : s->now + sim_restart_delay(s);
    s->restarts++;
    run_log(s->r, "sim: worker %d restarts at %.6f s", k, at);
    if (starting) {   /* its pending first start waits until then */
        sw->away_until = fmax(sw->away_until, at);
    } else {
        sim_schedule(s, (sim_event){.t = at, .kind = EV_START, .worker = k});
    }
}

void sim_worker_away(sim *s, int k, double back)
{
    sim_worker *sw = &s->workers[k];
    if (sw->done) {
        return;
    }
    sw->away_until = back;
    if (!sw->running) {
        return;
    }
    run_log(s->r, "sim: worker %d away at %.6f s, back at %.6f s (trace)", k, s->now, back);
    sim_worker_stop(s, k);
    sim_schedule(s, (sim_event){.t = back, .kind = EV_START, .worker = k});
}

/* compute = measured: real gradients of this model and batch, timed on a
 * scratch worker with worker 0's shard. */
int sim_calibrate(sim *s)
{
    experiment *e = s->e;
    worker w;
    worker_spec spec = experiment_worker_spec(e, s->n_train);
    if (worker_init(&w, &spec, 0, s->m, &e->train, &s->parts[0], s->err) < 0) {
        return -1;
    }
    model_init_host(s->m, w.theta, e->seed);
    const int runs = 20;
    double sum = 0, sq = 0;
    for (int i = -3; i < runs; i++) {
        double t0 = run_now();
        worker_gradient(&w);
        double t = run_now() - t0;
        if (i >= 0) {
            sum += t;
            sq += t * t;
        }
    }
    worker_free(&w);
    e->sim.compute_mean = sum / runs;
    e->sim.compute_sd = sqrt(fmax(0, sq / runs - e->sim.compute_mean * e->sim.compute_mean));
    run_log(s->r, "sim: measured compute %.6f s per minibatch (sd %.6f)", e->sim.compute_mean,
            e->sim.compute_sd);
    return 0;
}

void sim_worker_free(sim_worker *sw)
{
    worker_free(&sw->w);
    compressor_free(&sw->compress);
    free(sw->prefetch);
    free(sw->prefetch_versions);
    free(sw->io.waiting.buf);
    sw->io = (sim_io_thread){0};
    sw->prefetch = NULL;
    sw->prefetch_versions = NULL;
    sw->stack = NULL;   /* in sim.stacks */
}
