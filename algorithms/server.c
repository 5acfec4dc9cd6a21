/* server.c: shard state, waiting pulls, staleness records and the
 * rule-side helpers. */
#include "algorithms/server.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/partition.h"
#include "core/run.h"

static double s_wall(void *ctx)
{
    (void)ctx;
    return run_wall();
}

server *server_new(const algorithm *alg, const void *params, const rule_info *info,
                   int shard, int shards, int workers, const float *init, uint64_t nparams)
{
    server *s = calloc(1, sizeof *s);
    if (!s) {
        return NULL;
    }
    s->alg = alg;
    s->params = params;
    s->shard = shard;
    s->shards = shards;
    s->workers = workers;
    s->clock = s_wall;
    s->stats.shard = shard;
    s->threads = info->server_threads > 1 ? info->server_threads : 1;
    partition_range(nparams, shards, shard, &s->lo, &s->hi);
    s->stats.lo = s->lo;
    s->stats.hi = s->hi;
    s->n = (size_t)(s->hi - s->lo);
    s->theta = malloc((s->n ? s->n : 1) * sizeof *s->theta);
    s->opt = optim_new(&info->server_optim, s->n);
    s->last_staleness = calloc((size_t)workers, sizeof *s->last_staleness);
    s->done = calloc((size_t)workers, sizeof *s->done);
    s->in_round = calloc((size_t)workers, sizeof *s->in_round);
    s->worker_samples = calloc((size_t)workers, sizeof *s->worker_samples);
    pthread_mutex_init(&s->stats_lock, NULL);
    if (s->threads > 1) {
        s->nstripes = s->n / SERVER_STRIPE + 1;
        s->stripes = malloc(s->nstripes * sizeof *s->stripes);
        for (size_t i = 0; s->stripes && i < s->nstripes; i++) {
            pthread_mutex_init(&s->stripes[i], NULL);
        }
    }
    if (!s->theta || !s->opt || !s->last_staleness || !s->done || !s->in_round ||
        !s->worker_samples ||
        (s->threads > 1 && !s->stripes)) {
        server_destroy(&s);
        return NULL;
    }
    memcpy(s->theta, init + s->lo, s->n * sizeof *s->theta);
    if (alg->server_init) {
        s->state = alg->server_init(s);
        if (!s->state) {
            server_destroy(&s);
            return NULL;
        }
    }
    return s;
}

void server_destroy(server **ps)
{
    server *s = *ps;
    if (!s) {
        return;
    }
    if (s->state && s->alg->server_free) {
        s->alg->server_free(s);
    } else {
        free(s->state);
    }
    free(s->theta);
    free(s->round_sum);
    optim_destroy(&s->opt);
    free(s->last_staleness);
    free(s->done);
    free(s->in_round);
    free(s->worker_samples);
    free(s->waiting);
    pthread_mutex_destroy(&s->stats_lock);
    for (size_t i = 0; s->stripes && i < s->nstripes; i++) {
        pthread_mutex_destroy(&s->stripes[i]);
    }
    free(s->stripes);
    free(s);
    *ps = NULL;
}

/* Whether every value is finite: no NaN, no infinity (exponent bits all
 * ones), checked on the bits so that the loop vectorizes. */
static bool s_all_finite(const float *values, size_t n)
{
    typedef uint32_t __attribute__((may_alias)) bits32;
    const bits32 *bits = (const bits32 *)values;
    uint32_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        bad |= (bits[i] & 0x7f800000u) == 0x7f800000u;
    }
    return bad == 0;
}

void server_stats_lock(server *s)
{
    if (s->threads > 1) {
        pthread_mutex_lock(&s->stats_lock);
    }
}

void server_stats_unlock(server *s)
{
    if (s->threads > 1) {
        pthread_mutex_unlock(&s->stats_lock);
    }
}

int server_push(server *s, const push_msg *m)
{
    if (!s_all_finite(m->values, s->n)) {   /* one such push would destroy the model */
        server_stats_lock(s);
        s->stats.nonfinite++;
        server_stats_unlock(s);
        return PUSH_LATE;   /* and, for a round's leader, not in the round */
    }
    atomic_fetch_add(&s->samples, m->samples);
    atomic_fetch_add(&s->worker_samples[m->worker], m->samples);
    if (s->threads == 1) {
        s->verdict = PUSH_UNDECIDED;
    }
    s->alg->server_on_push(s, m);
    double now = s->clock(s->clock_ctx);
    server_stats_lock(s);
    if (now > s->stats.last_push_at || s->stats.clock_of[1] != 0) {   /* a checkpoint's was
                                                                        * on another clock */
        s->stats.last_push_at = now;
        s->stats.clock_of[1] = 0;
    }
    server_stats_unlock(s);
    return s->threads == 1 ? s->verdict : PUSH_UNDECIDED;
}

bool server_pull_ready(server *s, const pull_msg *m)
{
    if (m->worker < (uint32_t)s->workers && s->stats.first_pull_at == 0) {
        s->stats.first_pull_at = s->clock(s->clock_ctx);
        s->stats.clock_of[0] = 0;
    }
    return s->alg->server_pull_ready(s, m);
}

const float *server_answer(server *s, const pull_msg *m)
{
    if (s->alg->server_on_pull) {
        s->alg->server_on_pull(s, m);
    }
    return s->theta;
}

__attribute__((noinline)) void server_copy_theta(float *dst, const float *theta, size_t n)
{
    memcpy(dst, theta, n * sizeof *dst);
}

int server_wait(server *s, const pull_msg *m, void *handle)
{
    if (s->nwaiting == s->waiting_cap) {
        int cap = s->waiting_cap ? 2 * s->waiting_cap : 16;
        server_waiting *q = realloc(s->waiting, (size_t)cap * sizeof *q);
        if (!q) {
            return -1;
        }
        s->waiting = q;
        s->waiting_cap = cap;
    }
    s->waiting[s->nwaiting++] = (server_waiting){.pull = *m, .handle = handle};
    return 0;
}

void server_wake(server *s, server_reply_fn reply, void *ctx)
{
    int kept = 0;
    for (int i = 0; i < s->nwaiting; i++) {
        server_waiting w = s->waiting[i];
        if (server_pull_ready(s, &w.pull)) {
            reply(ctx, &w.pull, w.handle);
        } else {
            s->waiting[kept++] = w;
        }
    }
    s->nwaiting = kept;
}

server_waiting *server_find_waiting(server *s, uint32_t worker)
{
    for (int i = 0; i < s->nwaiting; i++) {
        if (s->waiting[i].pull.worker == worker) {
            return &s->waiting[i];
        }
    }
    return NULL;
}

void server_drop_waiting(server *s, void (*release)(void *ctx, void *handle), void *ctx)
{
    for (int i = 0; release && i < s->nwaiting; i++) {
        release(ctx, s->waiting[i].handle);
    }
    s->nwaiting = 0;
}

bool server_mark_done(server *s, uint32_t worker)
{
    if (worker == ALGORITHM_EVALUATOR) {
        s->evaluator_done = true;
    } else if (worker < (uint32_t)s->workers && !s->done[worker]) {
        s->done[worker] = true;
        s->done_count++;
        if (server_workers_done(s) && s->alg->server_on_workers_done) {
            s->alg->server_on_workers_done(s);
        }
    }
    return server_workers_done(s);
}

bool server_workers_done(const server *s)
{
    return s->done_count == s->workers;
}

void *server_pulled_init(server *s, int extra)
{
    float *state = malloc(server_pulled_bytes(s, extra) + sizeof(float));   /* n may be 0 */
    if (state) {
        for (int w = 0; w < s->workers; w++) {
            memcpy(state + (size_t)w * s->n, s->theta, s->n * sizeof(float));
        }
        memset(state + (size_t)s->workers * s->n, 0, (size_t)extra * s->n * sizeof(float));
    }
    return state;
}

size_t server_pulled_bytes(const server *s, int extra)
{
    return ((size_t)s->workers + (size_t)extra) * s->n * sizeof(float);
}

float *server_pulled(server *s, uint32_t w)
{
    return (float *)s->state + (size_t)w * s->n;
}

void server_keep_pulled(server *s, const pull_msg *m)
{
    if (m->worker < (uint32_t)s->workers) {   /* the evaluator keeps no copy */
        memcpy(server_pulled(s, m->worker), s->theta, s->n * sizeof(float));
    }
}

uint64_t server_push_staleness(const server *s, const push_msg *m)
{
    uint64_t version = atomic_load(&((server *)s)->version);
    return version > m->base_version ? version - m->base_version : 0;
}

/* The histogram bin of a push's staleness: the last holds every one beyond. */
static size_t s_bin(uint64_t staleness)
{
    return staleness < SUMMARY_STALENESS_BINS ? (size_t)staleness : SUMMARY_STALENESS_BINS - 1;
}

void server_record_applied(server *s, const push_msg *m)
{
    uint64_t staleness = server_push_staleness(s, m);
    server_stats_lock(s);
    s->stats.pushes++;
    if (s->threads == 1) {   /* verdicts belong to rounds, which apply in one thread */
        s->verdict = PUSH_IN_ROUND;
    }
    s->stats.staleness_sum += staleness;
    if (staleness > s->stats.staleness_max) {
        s->stats.staleness_max = staleness;
    }
    s->stats.histogram[s_bin(staleness)]++;
    s->last_staleness[m->worker] = staleness;
    server_stats_unlock(s);
}

void server_record_unapplied(server *s, uint64_t staleness)
{
    server_stats_lock(s);
    s->stats.pushes--;
    s->stats.staleness_sum -= staleness;
    s->stats.histogram[s_bin(staleness)]--;
    s->stats.dropped++;
    server_stats_unlock(s);
}

void server_record_dropped(server *s)
{
    server_stats_lock(s);
    s->stats.dropped++;
    if (s->threads == 1) {
        s->verdict = PUSH_LATE;
    }
    server_stats_unlock(s);
}

int server_round_add(server *s, const push_msg *m)
{
    if (m->tag != s->version || m->verdict == PUSH_LATE) {
        server_record_dropped(s);
        return 0;
    }
    if (s->in_round[m->worker]) {
        /* an earlier life of the worker is in the round: this push is not
         * added again, but the round's leader says the worker is in it, so
         * that a shard without the first (restored from before it) takes
         * this one, and every shard's round has the same workers */
        server_record_dropped(s);
        if (s->threads == 1) {
            s->verdict = PUSH_IN_ROUND;
        }
        return 0;
    }
    if (!s->round_sum) {
        s->round_sum = calloc(s->n ? s->n : 1, sizeof *s->round_sum);
        if (!s->round_sum) {
            abort();   /* one shard-sized buffer: nothing to continue with */
        }
    }
    server_record_applied(s, m);
    for (size_t i = 0; i < s->n; i++) {
        s->round_sum[i] += m->values[i];
    }
    s->in_round[m->worker] = true;
    return ++s->round_arrived;
}

float *server_round_sum(server *s)
{
    return s->round_sum;
}

void server_round_end(server *s)
{
    if (s->round_sum) {
        memset(s->round_sum, 0, s->n * sizeof *s->round_sum);
    }
    memset(s->in_round, 0, (size_t)s->workers * sizeof *s->in_round);
    s->round_arrived = 0;
}

void server_round_forget(server *s)
{
    for (int w = 0; w < s->workers; w++) {
        if (s->in_round[w]) {
            server_record_unapplied(s, s->last_staleness[w]);
        }
    }
    server_round_end(s);
}

bool server_version_reached(server *s, const pull_msg *m)
{
    return s->version >= m->min_version;
}

bool server_always_ready(server *s, const pull_msg *m)
{
    (void)s;
    (void)m;
    return true;
}

void server_step(server *s, const float *grad)
{
    optim_step(s->opt, s->theta, grad);
    atomic_fetch_add(&s->version, 1);
}

void server_add(server *s, const float *delta, float scale)
{
    float *theta = s->theta;
    if (s->threads == 1) {
        for (size_t i = 0; i < s->n; i++) {
            theta[i] += scale * delta[i];
        }
    }
    /* several apply threads: stripe by stripe, each under its own lock, so
     * that concurrent pushes interleave stripe by stripe and never lose an
     * element's update */
    for (size_t lo = 0; s->threads > 1 && lo < s->n; lo += SERVER_STRIPE) {
        size_t hi = lo + SERVER_STRIPE < s->n ? lo + SERVER_STRIPE : s->n;
        pthread_mutex_t *lock = &s->stripes[lo / SERVER_STRIPE];
        pthread_mutex_lock(lock);
        for (size_t i = lo; i < hi; i++) {
            theta[i] += scale * delta[i];
        }
        pthread_mutex_unlock(lock);
    }
    atomic_fetch_add(&s->version, 1);
}

void server_assign(server *s, const float *values)
{
    memcpy(s->theta, values, s->n * sizeof *s->theta);
    atomic_fetch_add(&s->version, 1);
}

uint64_t server_last_staleness(server *s, uint32_t worker)
{
    if (worker >= (uint32_t)s->workers) {
        return 0;
    }
    server_stats_lock(s);
    uint64_t staleness = s->last_staleness[worker];
    server_stats_unlock(s);
    return staleness;
}

void server_snapshot(server *s, shard_stats *out)
{
    pthread_mutex_lock(&s->stats_lock);
    *out = s->stats;
    pthread_mutex_unlock(&s->stats_lock);
    out->version = atomic_load(&s->version);
    out->samples = atomic_load(&s->samples);
}

int server_report(server *s, run_summary *sum, const char *dir, error *err)
{
    shard_stats st;
    char path[4200];
    server_snapshot(s, &st);
    summary_add_shard(sum, &st);
    snprintf(path, sizeof path, "%s/ps-%d.json", dir, s->shard);
    return shard_stats_write(path, &st, err);
}
