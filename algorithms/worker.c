/* worker.c: the worker primitives and step metrics. */
#include "algorithms/worker.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/partition.h"
#include "core/run.h"
#include "core/stop.h"

long worker_budget(const worker_spec *spec, int id)
{
    if (spec->lockstep && spec->workers > 1) {
        /* from the unrounded share: total_steps / workers, from a total
         * already rounded up, went up to 1/2 + 1/workers of a round over;
         * one worker takes the sequential trainer's count, rounded up,
         * and so its very steps */
        long each = lround(spec->share);
        return each > 0 ? each : 1;
    }
    long total = spec->total_steps;
    return total / spec->workers + (id < total % spec->workers ? 1 : 0);
}

uint64_t worker_rounds(const worker *w, long window)
{
    return (uint64_t)((w->budget + window - 1) / window);
}

int worker_init(worker *w, const worker_spec *spec, int id, model *m, const dataset *train,
                const shard *mine, error *err)
{
    memset(w, 0, sizeof *w);
    w->alg = spec->alg;
    w->params = spec->params;
    w->id = id;
    w->workers = spec->workers;
    w->shards = spec->shards;
    w->m = m;
    w->nparams = m->nparams;
    w->batch = spec->batch;
    w->budget = worker_budget(spec, id);
    w->steps_every = spec->steps_every;
    w->round_leader = spec->round_leader;
    w->prefetch = spec->prefetch;
    rng masks = rng_derive(spec->seed, RNG_DROPOUT, (uint64_t)id);
    w->dropout_seed = rng_next(&masks);
    backend *b = m->b;
    /* host memory the rules read and write, pinned where that speeds the
     * model's copies to and from a GPU */
    w->theta = b->ops->host_alloc(b, w->nparams * sizeof *w->theta);
    w->grad = b->ops->host_alloc(b, w->nparams * sizeof *w->grad);
    w->versions = calloc((size_t)spec->shards, sizeof *w->versions);
    w->own_batch = !spec->batch_x;
    w->x = spec->batch_x ? spec->batch_x
                         : malloc((size_t)w->batch * (size_t)train->dim * sizeof *w->x);
    w->y = spec->batch_y ? spec->batch_y : malloc((size_t)w->batch * sizeof *w->y);
    w->local = optim_new(spec->local, w->nparams);
    if (!w->theta || !w->grad || !w->versions || !w->x || !w->y || !w->local ||
        sampler_init(&w->sp, train, mine, rng_derive(spec->seed, RNG_BATCH, (uint64_t)id)) < 0) {
        worker_free(w);
        return error_set(err, ERROR_RUNTIME, "worker %d: out of memory", id);
    }
    return 0;
}

void worker_free(worker *w)
{
    if (w->m) {
        backend *b = w->m->b;
        b->ops->host_release(b, w->theta);
        b->ops->host_release(b, w->grad);
    }
    free(w->versions);
    if (w->own_batch) {
        free(w->x);
        free(w->y);
    }
    optim_destroy(&w->local);
    sampler_free(&w->sp);
    w->theta = w->grad = NULL;
    w->versions = NULL;
    w->x = NULL;
    w->y = NULL;
}

/* The phase timers' clock: 0 where they are off (the simulator, whose
 * every virtual step would pay for the clock reads). */
static double s_clock(const worker *w)
{
    return w->phase_timers ? run_now() : 0;
}

int worker_pull(worker *w, uint64_t min_version)
{
    return worker_pull_into(w, w->theta, min_version);
}

int worker_pull_into(worker *w, float *dst, uint64_t min_version)
{
    worker_settle(w);   /* dst may be a buffer still being pushed (push time) */
    double t = s_clock(w);
    int rc = w->link->pull(w, dst, min_version);
    w->pull_s += s_clock(w) - t;
    return rc;
}

int worker_push(worker *w, const float *values, uint64_t tag)
{
    uint32_t samples = w->samples_since_push;
    w->samples_since_push = 0;
    double t = s_clock(w);
    int rc = w->link->push(w, values, tag, samples);
    w->push_s += s_clock(w) - t;
    return rc;
}

int worker_prefetch(worker *w, uint64_t min_version)
{
    if (!w->prefetch || !w->link || !w->link->prefetch) {
        return 0;
    }
    return w->link->prefetch(w, min_version);
}

void worker_settle(worker *w)
{
    if (w->link && w->link->settle) {   /* waits for earlier pushes' bytes to go */
        double t = s_clock(w);
        w->link->settle(w);
        w->push_s += s_clock(w) - t;
    }
}

/* Sleeps in short slices, so that a stop request is seen within 0.1 s. */
static void s_replay_sleep(double until)
{
    for (double now = run_wall(); now < until && !stop_requested(); now = run_wall()) {
        run_sleep(fmin(0.1, until - now));
    }
}

float worker_gradient(worker *w)
{
    worker_settle(w);
    if (w->link && w->link->compute) {
        w->link->compute(w);
    }
    double started = 0, back;
    if (w->replay) {
        started = run_wall();
        w->replay_t0 = w->replay_t0 > 0 ? w->replay_t0 : started;
        if (trace_away(w->replay, started - w->replay_t0, &back)) {
            s_replay_sleep(w->replay_t0 + back);
            started = run_wall();
        }
    }
    float loss = 0;
    if (!w->null_compute) {
        double t = s_clock(w);
        sampler_next(&w->sp, w->x, w->y, w->batch);
        model_seed_dropout(w->m, w->dropout_seed, (uint64_t)w->steps);
        loss = model_gradient_host(w->m, w->grad, w->theta, w->x, w->y, w->batch);
        w->gradient_s += s_clock(w) - t;
    }
    if (w->replay && w->replay->speed > 1) {
        double now = run_wall();
        s_replay_sleep(now + (w->replay->speed - 1) * (now - started));
    }
    w->steps++;
    w->samples_since_push += (uint32_t)w->batch;
    if (w->steps_csv && w->steps % w->steps_every == 0) {
        double t = w->link && w->link->now ? w->link->now(w) : run_wall() - w->t0;
        run_step_row(w->steps_csv, t, w->id, w->steps, loss, (long)w->staleness,
                     w->bytes);
    }
    return loss;
}

/* One gradient's early pushes: the parts go from the last shard down,
 * each once the backward pass says it is final. */
typedef struct early_push {
    worker *w;
    uint64_t tag;
    float scale;
    uint32_t samples;
    int next;                 /* the next shard whose part goes; -1: all went */
    int rc;
} early_push;

/* Returns the seconds it spent pushing, which count as push time. */
static double s_push_parts_from(early_push *e, size_t from)
{
    worker *w = e->w;
    double t = s_clock(w), spent;
    for (; e->next >= 0 && e->rc == 0; e->next--) {
        uint64_t lo, hi;
        partition_range(w->nparams, w->shards, e->next, &lo, &hi);
        if (lo < from) {
            break;
        }
        const float scale = e->scale;   /* a local: a store to grad could change e->scale */
        for (uint64_t i = lo; scale != 1.0f && i < hi; i++) {
            w->grad[i] *= scale;
        }
        e->rc = w->link->push_part(w, e->next, w->grad, e->tag, e->samples);
    }
    spent = s_clock(w) - t;
    w->push_s += spent;
    return spent;
}

/* Inside the backward pass, so inside the gradient's time: the parts it
 * pushes are taken out of that and count as pushes only. */
static void s_part_ready(void *ctx, size_t from)
{
    early_push *e = ctx;
    e->w->gradient_s -= s_push_parts_from(e, from);
}

int worker_gradient_push(worker *w, uint64_t tag, float scale)
{
    if (!w->link || !w->link->push_part || w->round_leader || w->shards < 2 || !w->m) {
        worker_gradient(w);
        for (size_t i = 0; scale != 1.0f && i < w->nparams; i++) {
            w->grad[i] *= scale;
        }
        return worker_push(w, w->grad, tag);
    }
    early_push e = {.w = w, .tag = tag, .scale = scale, .next = w->shards - 1,
                    .samples = w->samples_since_push + (uint32_t)w->batch};
    w->m->grad_ready = s_part_ready;
    w->m->grad_ready_ctx = &e;
    worker_gradient(w);
    w->m->grad_ready = NULL;
    s_push_parts_from(&e, 0);   /* those the backward pass did not announce */
    w->samples_since_push = 0;
    return e.rc;
}

void worker_local_step(worker *w)
{
    worker_settle(w);
    optim_step(w->local, w->theta, w->grad);
}

long worker_local_window(worker *w, float *delta, long window)
{
    long left = w->budget > w->steps ? w->budget - w->steps : 0;
    return worker_local_steps(w, delta, window < left ? window : left);
}

long worker_local_steps(worker *w, float *delta, long steps)
{
    const float lr = (float)w->local->spec.lr;
    for (long s = 0; s < steps; s++) {
        worker_gradient(w);
        for (size_t i = 0; i < w->nparams; i++) {
            float step = lr * w->grad[i];
            w->theta[i] -= step;
            delta[i] -= step;
        }
    }
    return steps;
}

void worker_elastic(float *x, float *elastic, const float *centre, float alpha, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        elastic[i] = alpha * (x[i] - centre[i]);
        x[i] -= elastic[i];
    }
}

bool worker_done(const worker *w)
{
    return w->steps >= w->budget;
}

void worker_take_up(worker *w, long done)
{
    w->steps = done < w->budget ? done : w->budget;
    sampler_skip(&w->sp, (uint64_t)w->steps * (uint64_t)w->batch);
}

uint64_t worker_version(const worker *w)
{
    uint64_t v = w->versions[0];
    for (int k = 1; k < w->shards; k++) {
        if (w->versions[k] < v) {
            v = w->versions[k];
        }
    }
    return v;
}

int worker_run_gradients(worker *w)
{
    while (!worker_done(w)) {
        if (worker_pull(w, 0) < 0 || (w->steps + 1 < w->budget && worker_prefetch(w, 0) < 0)) {
            return -1;
        }
        worker_gradient(w);
        if (worker_push(w, w->grad, 0) < 0) {
            return -1;
        }
    }
    return 0;
}

int worker_run_windows(worker *w, long window, bool mean)
{
    float *delta = malloc(w->nparams * sizeof *delta);
    int rc = delta ? 0 : -1;
    while (rc == 0 && !worker_done(w)) {
        if ((rc = worker_pull(w, 0)) < 0) {
            break;
        }
        memset(delta, 0, w->nparams * sizeof *delta);
        /* the next window's pull goes out before this one's last step */
        long steps = worker_local_window(w, delta, window - 1);
        if (w->steps + 1 < w->budget && (rc = worker_prefetch(w, 0)) < 0) {
            break;
        }
        steps += worker_local_window(w, delta, 1);
        for (size_t i = 0; mean && i < w->nparams; i++) {
            delta[i] /= (float)steps;
        }
        rc = worker_push(w, delta, 0);   /* carries the pulled versions */
    }
    worker_settle(w);
    free(delta);
    return rc;
}

int worker_run_elastic(worker *w, float *x, float alpha, long window,
                       void (*local_step)(worker *w, float *x, void *ctx), void *ctx)
{
    float *centre = malloc(w->nparams * sizeof *centre);
    float *elastic = malloc(w->nparams * sizeof *elastic);
    int rc = centre && elastic ? worker_pull_into(w, x, 0) : -1;   /* start at the centre */
    while (rc == 0 && !worker_done(w)) {
        for (long k = 0; k < window && !worker_done(w); k++) {
            /* the pull that ends the window goes out before its last step */
            if ((k + 1 == window || w->steps + 1 == w->budget) &&
                (rc = worker_prefetch(w, 0)) < 0) {
                break;
            }
            local_step(w, x, ctx);
        }
        if (rc < 0) {
            break;
        }
        if ((rc = worker_pull_into(w, centre, 0)) < 0) {
            break;
        }
        worker_elastic(x, elastic, centre, alpha, w->nparams);
        rc = worker_push(w, elastic, 0);
    }
    worker_settle(w);
    free(centre);
    free(elastic);
    return rc;
}
