/* sim.c: the discrete-event simulator; see sim.h. */
#define _DEFAULT_SOURCE   /* MAP_ANONYMOUS, MAP_NORESERVE */
#include "core/sim/sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "algorithms/server.h"
#include "algorithms/worker.h"
#include "core/model.h"
#include "core/partition.h"
#include "core/sim/simqueue.h"
#include "core/stop.h"
#include "core/summary.h"
#include "transport/wire.h"

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/common_interface_defs.h>
#endif

#define SIM_STACK (512 * 1024)
#define SIM_PULL_BYTES WIRE_HEADER_SIZE

enum ev_kind {
    EV_RESUME = 1,       /* a worker's wait for time is over */
    EV_START,            /* a worker (re)starts */
    EV_ARRIVE_PULL,      /* a pull reaches a shard */
    EV_ARRIVE_PUSH,      /* a push reaches a shard */
    EV_ARRIVE_REPLY,     /* a pull's reply reaches a worker */
    EV_PROCESS,          /* a shard is free for its next message */
    EV_EVAL,             /* the evaluator's turn */
    EV_FAIL,             /* a worker fails */
};

enum wait_kind { WAIT_NONE, WAIT_TIME, WAIT_CORE, WAIT_REPLIES, WAIT_SETTLE };

typedef struct sim sim;

typedef struct sim_worker {
    worker w;
    sim *s;
    ucontext_t ctx;
    char *stack;
    void *fake_stack;        /* AddressSanitizer's, while switched away */
    int incarnation;
    bool running;            /* its coroutine has not returned */
    bool done;               /* its work is complete */
    bool failed;             /* failing: every primitive returns -1 */
    int rc;
    enum wait_kind waiting;
    int pending_replies, pending_pushes;
    float *pull_dst;
    rng compute_rng;
    double compute_start;    /* when its current minibatch could start */
    int restarts;
} sim_worker;

typedef struct sim_shard {
    server *srv;
    sim_event *queue;        /* messages waiting to be processed, FIFO */
    size_t head, count, cap;
    bool busy;
} sim_shard;

struct sim {
    experiment *e;
    run *r;
    simq q;
    double now;
    uint64_t events;
    sim_worker *workers;
    sim_shard *shards;
    int nworkers, nshards;
    double *link_free;       /* per (worker, shard, direction): last arrival */
    rng net_rng;
    model *m;
    shard *parts;
    ucontext_t main_ctx;
    const void *main_stack_bottom;
    size_t main_stack_size;
    int done_workers, restarts;
    /* [sim] cores: the shared cores and the workers queued for one */
    long cores_busy;
    sim_event *core_queue;
    size_t core_head, core_count, core_cap;
    bool failed;
    error *err;
    float *centre;
    run_summary sum;         /* evaluations go in as they happen */
    long n_train;
};

/* ---- coroutine switching (with AddressSanitizer's fiber annotations) ---- */

static void s_enter(sim *s, sim_worker *sw)
{
#ifdef __SANITIZE_ADDRESS__
    void *fake = NULL;
    __sanitizer_start_switch_fiber(&fake, sw->stack, SIM_STACK);
    swapcontext(&s->main_ctx, &sw->ctx);
    __sanitizer_finish_switch_fiber(fake, NULL, NULL);
#else
    swapcontext(&s->main_ctx, &sw->ctx);
#endif
}

static void s_yield(sim_worker *sw)
{
#ifdef __SANITIZE_ADDRESS__
    sim *s = sw->s;
    __sanitizer_start_switch_fiber(&sw->fake_stack, s->main_stack_bottom, s->main_stack_size);
    swapcontext(&sw->ctx, &sw->s->main_ctx);
    __sanitizer_finish_switch_fiber(sw->fake_stack, &s->main_stack_bottom, &s->main_stack_size);
#else
    swapcontext(&sw->ctx, &sw->s->main_ctx);
#endif
}

static int s_schedule(sim *s, sim_event e)
{
    if (simq_push(&s->q, e) < 0) {
        s->failed = true;
        error_set(s->err, ERROR_RUNTIME, "sim: out of memory for events");
        return -1;
    }
    return 0;
}

/* Arrival time of a message on a link, never before the link's previous
 * message (links keep their order). */
static double s_arrival(sim *s, int worker, int shard, int to_shard, double bytes)
{
    double *last = &s->link_free[((size_t)worker * (size_t)s->nshards + (size_t)shard) * 2 +
                                 (size_t)to_shard];
    double t = s->now + sim_message_time(&s->e->sim, bytes, &s->net_rng);
    if (t < *last) {
        t = *last;
    }
    *last = t;
    return t;
}

static void s_wake(sim_worker *sw)
{
    sw->waiting = WAIT_NONE;
    s_enter(sw->s, sw);
}

/* ---- the worker link ---- */

static int s_link_pull(worker *w, float *dst, uint64_t min_version)
{
    sim_worker *sw = w->link_state;
    sim *s = sw->s;
    if (sw->failed) {
        return -1;
    }
    sw->pull_dst = dst;
    sw->pending_replies = s->nshards;
    for (int k = 0; k < s->nshards; k++) {
        sim_event e = {.t = s_arrival(s, w->id, k, 1, SIM_PULL_BYTES), .kind = EV_ARRIVE_PULL,
                       .worker = w->id, .shard = k, .incarnation = sw->incarnation,
                       .version = min_version};
        if (s_schedule(s, e) < 0) {
            return -1;
        }
    }
    sw->waiting = WAIT_REPLIES;
    s_yield(sw);
    return sw->failed ? -1 : 0;
}

static int s_link_push(worker *w, const float *values, uint64_t tag, uint32_t samples)
{
    sim_worker *sw = w->link_state;
    sim *s = sw->s;
    if (sw->failed) {
        return -1;
    }
    for (int k = 0; k < s->nshards; k++) {
        server *srv = s->shards[k].srv;
        double bytes = WIRE_HEADER_SIZE + (double)srv->n * sizeof(float);
        sim_event e = {.t = s_arrival(s, w->id, k, 1, bytes), .kind = EV_ARRIVE_PUSH,
                       .worker = w->id, .shard = k, .incarnation = sw->incarnation, .tag = tag,
                       .version = w->versions[k], .samples = samples,
                       .values = values + srv->lo};
        if (s_schedule(s, e) < 0) {
            return -1;
        }
        sw->pending_pushes++;
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

/* Starts worker sw's minibatch on a core: its compute time passes, then
 * EV_RESUME (which frees the core when cores are shared). */
static void s_compute_on_core(sim *s, sim_worker *sw)
{
    double start = sim_after_pauses(&s->e->sim, sw->w.id, fmax(s->now, sw->compute_start));
    double t = start + sim_compute_time(&s->e->sim, sw->w.id, &sw->compute_rng);
    s_schedule(s, (sim_event){.t = t, .kind = EV_RESUME, .worker = sw->w.id,
                              .incarnation = sw->incarnation});
    sw->waiting = WAIT_TIME;
}

static int s_queue_add(sim_event **buf, size_t *count, size_t *cap, size_t head, sim_event e);

static void s_link_compute(worker *w)
{
    sim_worker *sw = w->link_state;
    sim *s = sw->s;
    if (sw->failed) {
        return;
    }
    sw->compute_start = s->now;
    long cores = s->e->sim.cores;
    if (cores > 0 && s->cores_busy == cores) {
        sim_event wait = {.worker = w->id, .incarnation = sw->incarnation};
        if (s_queue_add(&s->core_queue, &s->core_count, &s->core_cap, s->core_head, wait) < 0) {
            s->failed = true;
            error_set(s->err, ERROR_RUNTIME, "sim: out of memory");
            return;
        }
        sw->waiting = WAIT_CORE;
    } else {
        s->cores_busy++;
        s_compute_on_core(s, sw);
    }
    s_yield(sw);
}

/* A minibatch has ended: its core goes to the next worker in line. */
static void s_release_core(sim *s)
{
    while (s->core_count > 0) {
        sim_event next = s->core_queue[s->core_head++];
        if (--s->core_count == 0) {
            s->core_head = 0;
        }
        sim_worker *sw = &s->workers[next.worker];
        if (sw->incarnation == next.incarnation && sw->running && !sw->failed &&
            sw->waiting == WAIT_CORE) {
            s_compute_on_core(s, sw);   /* the core passes on; cores_busy is unchanged */
            return;
        }
    }
    s->cores_busy--;
}

static double s_link_now(worker *w)
{
    return ((sim_worker *)w->link_state)->s->now;
}

static const worker_link s_sim_link = {
    .pull = s_link_pull,
    .push = s_link_push,
    .settle = s_link_settle,
    .compute = s_link_compute,
    .now = s_link_now,
};

/* ---- workers' lives ---- */

static sim *s_current;   /* makecontext passes no pointers portably */
static int s_current_worker;

static void s_trampoline(void)
{
    sim *s = s_current;
    sim_worker *sw = &s->workers[s_current_worker];
#ifdef __SANITIZE_ADDRESS__
    __sanitizer_finish_switch_fiber(NULL, &s->main_stack_bottom, &s->main_stack_size);
#endif
    sw->rc = s->e->alg->worker_run(&sw->w);
    s_link_settle(&sw->w);
    sw->running = false;
    if (sw->rc == 0 && !sw->failed) {
        sw->done = true;
        s->done_workers++;
        for (int k = 0; k < s->nshards; k++) {
            server_mark_done(s->shards[k].srv, (uint32_t)sw->w.id);
        }
    }
#ifdef __SANITIZE_ADDRESS__
    __sanitizer_start_switch_fiber(NULL, s->main_stack_bottom, s->main_stack_size);
#endif
    /* returning resumes main_ctx through uc_link */
}

static int s_start_worker(sim *s, int k)
{
    sim_worker *sw = &s->workers[k];
    error *err = s->err;
    if (sw->stack == NULL) {
        sw->stack = mmap(NULL, SIM_STACK, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (sw->stack == MAP_FAILED) {
            sw->stack = NULL;
            return error_set(err, ERROR_RUNTIME, "sim: no memory for worker %d's stack", k);
        }
    } else {
        worker_free(&sw->w);
    }
    worker_spec spec = experiment_worker_spec(s->e, s->n_train);
    if (worker_init(&sw->w, &spec, k, s->m, &s->e->train, &s->parts[k], err) < 0) {
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
    sw->incarnation++;
    getcontext(&sw->ctx);
    sw->ctx.uc_stack.ss_sp = sw->stack;
    sw->ctx.uc_stack.ss_size = SIM_STACK;
    sw->ctx.uc_link = &s->main_ctx;
    makecontext(&sw->ctx, s_trampoline, 0);
    s_current = s;
    s_current_worker = k;
    sw->waiting = WAIT_NONE;
    s_enter(s, sw);
    return 0;
}

/* A worker fails: its loop unwinds (every primitive now returns -1); the
 * restart policy decides the rest, as the launcher does for processes. */
static void s_fail_worker(sim *s, int k, double back)
{
    sim_worker *sw = &s->workers[k];
    if (!sw->running) {
        return;
    }
    sw->failed = true;
    sw->pending_pushes = sw->pending_replies = 0;
    run_log(s->r, "sim: worker %d failed at %.6f s", k, s->now);
    while (sw->running) {
        s_wake(sw);   /* runs to the end of its loop */
    }
    const experiment *e = s->e;
    bool restart = e->restart != RESTART_NEVER && s->restarts < e->backoff_limit;
    if (!restart) {
        s->failed = true;
        error_set(s->err, ERROR_RUNTIME, "worker %d failed at %.3f s (simulated)%s; the run "
                  "failed", k, s->now, e->restart == RESTART_NEVER ? " ([cluster] restart = never)"
                  : " (no restart left under [cluster] backoff_limit)");
        return;
    }
    double at = back >= 0 ? back : s->now + fmin(0.1 * pow(2, s->restarts), 5.0);
    s->restarts++;
    run_log(s->r, "sim: worker %d restarts at %.6f s", k, at);
    s_schedule(s, (sim_event){.t = at, .kind = EV_START, .worker = k});
}

/* ---- shards ---- */

static bool s_alive(const sim *s, int worker, int incarnation)
{
    const sim_worker *sw = &s->workers[worker];
    return sw->incarnation == incarnation && sw->running && !sw->failed;
}

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
    if (!s_alive(s, worker, incarnation)) {
        return;
    }
    sim_worker *sw = &s->workers[worker];
    server *srv = s->shards[k].srv;
    memcpy(sw->pull_dst + srv->lo, srv->theta, srv->n * sizeof(float));
    sw->w.versions[k] = srv->version;
    if (k == 0) {
        sw->w.staleness = srv->last_staleness[worker];
    }
    double bytes = WIRE_HEADER_SIZE + (double)srv->n * sizeof(float);
    s_schedule(s, (sim_event){.t = s_arrival(s, worker, k, 0, bytes), .kind = EV_ARRIVE_REPLY,
                              .worker = worker, .shard = k, .incarnation = incarnation});
}

static int s_queue_add(sim_event **buf, size_t *count, size_t *cap, size_t head, sim_event e)
{
    if (head + *count == *cap) {
        size_t ncap = *cap ? 2 * *cap : 64;
        sim_event *b = realloc(*buf, ncap * sizeof *b);
        if (!b) {
            return -1;
        }
        *buf = b;
        *cap = ncap;
    }
    (*buf)[head + (*count)++] = e;
    return 0;
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
        if (!s_alive(s, m.worker, m.incarnation)) {
            continue;   /* from a worker that has since failed */
        }
        sim_replier rp = {.s = s, .shard = k};
        void *handle = (void *)(intptr_t)m.incarnation;
        if (m.kind == EV_ARRIVE_PULL) {
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
                       .samples = m.samples, .values = m.values};
        server_push(sh->srv, &pm);
        sim_worker *sw = &s->workers[m.worker];
        if (--sw->pending_pushes == 0 && sw->waiting == WAIT_SETTLE) {
            s_wake(sw);
        }
        server_wake(sh->srv, s_reply, &rp);
        if (s->e->sim.apply > 0) {
            sh->busy = true;
            s_schedule(s, (sim_event){.t = s->now + s->e->sim.apply, .kind = EV_PROCESS, .shard = k});
        }
    }
}

/* ---- the evaluator ---- */

static void s_evaluate(sim *s)
{
    for (int k = 0; k < s->nshards; k++) {
        server *srv = s->shards[k].srv;
        memcpy(s->centre + srv->lo, srv->theta, srv->n * sizeof(float));
    }
    server *first = s->shards[0].srv;
    double loss, acc;
    model_evaluate_host(s->m, &loss, &acc, s->centre, &s->e->test, (int)s->e->eval_batch);
    run_eval_row(s->r->eval, s->now, (double)first->samples / (double)s->n_train,
                 (long)first->version, (long)first->samples, loss, acc);
    summary_add_eval(&s->sum, loss, acc);
}

/* ---- the run ---- */

static void s_handle(sim *s, const sim_event *e)
{
    switch (e->kind) {
    case EV_START:
        s_start_worker(s, e->worker);
        break;
    case EV_RESUME: {
        sim_worker *sw = &s->workers[e->worker];
        s_release_core(s);   /* every EV_RESUME ends a minibatch on a core */
        if (sw->incarnation == e->incarnation && sw->waiting == WAIT_TIME) {
            s_wake(sw);
        }
        break;
    }
    case EV_ARRIVE_PULL:
    case EV_ARRIVE_PUSH: {
        sim_shard *sh = &s->shards[e->shard];
        if (s_queue_add(&sh->queue, &sh->count, &sh->cap, sh->head, *e) < 0) {
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
        if (s_alive(s, e->worker, e->incarnation) && --sw->pending_replies == 0 &&
            sw->waiting == WAIT_REPLIES) {
            s_wake(sw);
        }
        break;
    }
    case EV_PROCESS:
        s_process(s, e->shard);
        break;
    case EV_EVAL:
        s_evaluate(s);
        if (s->e->eval_every > 0) {
            s_schedule(s, (sim_event){.t = s->now + s->e->eval_every, .kind = EV_EVAL});
        }
        break;
    case EV_FAIL:
        s_fail_worker(s, e->worker, e->back);
        break;
    default:
        break;
    }
}

/* compute = measured: real gradients of this model and batch, timed on a
 * scratch worker with worker 0's shard. */
static int s_calibrate(sim *s)
{
    experiment *e = s->e;
    worker w;
    worker_spec spec = experiment_worker_spec(e, s->n_train);
    if (worker_init(&w, &spec, 0, s->m, &e->train, &s->parts[0], s->err) < 0) {
        return -1;
    }
    model_init_params(s->m, w.theta, e->seed);
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

static void s_free(sim *s)
{
    for (int k = 0; s->workers && k < s->nworkers; k++) {
        worker_free(&s->workers[k].w);
        if (s->workers[k].stack) {
            munmap(s->workers[k].stack, SIM_STACK);
        }
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
    s_schedule(s, (sim_event){.t = 0, .kind = EV_EVAL});
    rng startup = rng_derive(e->seed, RNG_SIM, 0x7374617274);
    for (int k = 0; k < s->nworkers; k++) {
        s_schedule(s, (sim_event){.t = sim_startup_time(&e->sim, &startup), .kind = EV_START,
                                  .worker = k});
    }
    for (int i = 0; i < e->sim.nfailures; i++) {
        const sim_window *f = &e->sim.failures[i];
        s_schedule(s, (sim_event){.t = f->from, .kind = EV_FAIL, .worker = f->worker,
                                  .back = f->to});
    }
}

/* Processes events until every worker is done; 0 when the run completed. */
static int s_run(sim *s)
{
    stop_install();
    sim_event ev;
    while (!s->failed && s->done_workers < s->nworkers && !stop_requested() &&
           simq_pop(&s->q, &ev)) {
        s->now = ev.t;
        s->events++;
        s_handle(s, &ev);
    }
    int stopped = stop_requested();
    stop_uninstall();
    if (s->failed) {
        return -1;
    }
    if (stopped) {
        return error_set(s->err, ERROR_RUNTIME, "interrupted at %.3f simulated s; %s is "
                         "incomplete", s->now, s->r->dir);
    }
    if (s->done_workers < s->nworkers) {
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
    s_evaluate(s);
    sum->time_s = sum->train_time_s = s->now;
    for (int k = 0; k < s->nshards; k++) {
        shard_stats st;
        server_snapshot(s->shards[k].srv, &st);
        summary_add_shard(sum, &st);
    }
    summary_finish(sum, s->n_train);
    sum->restarts = s->restarts;
    sum->sim_events = (long)s->events;
    sum->complete = rc == 0;
    fflush(s->r->steps);
    sum->wall_time_s = run_now() - wall0;
    run_log(s->r, "sim: %s at %.6f s: test accuracy %.4f, %ld updates, %llu events in %.2f s "
            "of wall time", rc == 0 ? "finished" : "stopped", s->now, sum->final_test_acc,
            sum->updates, (unsigned long long)s->events, sum->wall_time_s);
    error ignored;
    return summary_write(s->r->dir, sum, rc == 0 ? s->err : &ignored) < 0 ? -1 : rc;
}

int sim_train(experiment *e, run *r, error *err)
{
    if (!e->alg) {
        return error_set(err, ERROR_USAGE, "%s: [experiment] mode = sim needs a distributed "
                         "rule; the sequential baseline is sync with one worker",
                         config_source(e->c));
    }
    double wall0 = run_now();
    sim s = {.e = e, .r = r, .err = err, .nworkers = e->workers, .nshards = e->servers,
             .n_train = e->train.n};
    summary_init(&s.sum);
    backend *b = backend_new(&e->backend, err);
    int rc = -1;
    if (!b || !(s.m = model_new(&e->model, b, e->train.dim, e->train.classes, err)) ||
        s_setup(&s) < 0) {
        goto done;
    }
    s.sum.algorithm = e->algorithm_name;
    s.sum.model = model_type_name(e->model.type);
    s.sum.mode = "sim";
    s.sum.dataset = e->data.source == DATA_SYNTHETIC ? "synthetic" : e->data.path;
    s.sum.workers = s.nworkers;
    s.sum.servers = s.nshards;
    s.sum.seed = e->seed;
    s.sum.params = (long)s.m->nparams;
    if (summary_write(r->dir, &s.sum, err) < 0) {
        goto done;
    }
    run_log(r, "sim: %s, %d workers, %d shards, %zu parameters", e->algorithm_name, s.nworkers,
            s.nshards, s.m->nparams);
    s_schedule_start(&s);
    if (e->sim.compute == SIM_MEASURED && s_calibrate(&s) < 0) {
        goto done;
    }
    rc = s_summarise(&s, s_run(&s), wall0);
done:
    s_free(&s);
    backend_destroy(&b);
    return rc;
}
