/* partition.c: iid and Dirichlet label-skew shards, and the minibatch
 * sampler. */
#include "core/partition.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int s_iid(shard *shards, int workers, const dataset *d, rng *r,
                 uint32_t *perm)
{
    for (int i = 0; i < d->n; i++) {
        perm[i] = (uint32_t)i;
    }
    rng_shuffle(r, perm, (size_t)d->n);
    if (workers > d->n) {   /* one example each, the permutation dealt round and round */
        for (int w = 0; w < workers; w++) {
            if (!(shards[w].idx = malloc(sizeof(uint32_t)))) {
                return -1;
            }
            shards[w].idx[0] = perm[w % d->n];
            shards[w].n = 1;
        }
        return 0;
    }
    size_t base = (size_t)d->n / (size_t)workers, extra = (size_t)d->n % (size_t)workers;
    size_t at = 0;
    for (int w = 0; w < workers; w++) {
        size_t n = base + ((size_t)w < extra ? 1 : 0);
        shards[w].idx = malloc((n ? n : 1) * sizeof(uint32_t));
        if (!shards[w].idx) {
            return -1;
        }
        memcpy(shards[w].idx, perm + at, n * sizeof(uint32_t));
        shards[w].n = n;
        at += n;
    }
    return 0;
}

/* take[w] = worker w's share of count examples in proportions p (summing
 * to sum), by largest remainders so that every example is given and each
 * worker gets at most one beyond its floor. p is used up. */
static void s_apportion(size_t *take, size_t count, double *p, double sum, int workers)
{
    size_t given = 0;
    for (int w = 0; w < workers; w++) {
        take[w] = (size_t)((double)count * p[w] / sum);
        given += take[w];
    }
    while (given < count) {
        int best = 0;
        double best_rem = -1;
        for (int w = 0; w < workers; w++) {
            double rem = (double)count * p[w] / sum - (double)take[w];
            if (rem > best_rem) {
                best_rem = rem;
                best = w;
            }
        }
        take[best]++;
        given++;
        p[best] = 0;   /* each worker gets at most one extra */
    }
}

static int s_label_skew(shard *shards, int workers, const dataset *d,
                        double alpha, rng *r, uint32_t *perm)
{
    /* Examples grouped by class, each group shuffled; take[k * workers + w]
     * is worker w's count of class k, so each shard is allocated once at
     * its size (not n examples per worker: 14 GB for 60,000 workers) */
    size_t *start = calloc((size_t)d->classes + 1, sizeof *start);
    size_t *fill = calloc((size_t)d->classes, sizeof *fill);
    double *p = malloc((size_t)workers * sizeof *p);
    size_t *take = malloc((size_t)d->classes * (size_t)workers * sizeof *take);
    int rc = -1;
    if (!start || !fill || !p || !take) {
        goto out;
    }
    for (int i = 0; i < d->n; i++) {
        start[d->y[i] + 1]++;
    }
    for (int k = 0; k < d->classes; k++) {
        start[k + 1] += start[k];
    }
    for (int i = 0; i < d->n; i++) {
        int k = d->y[i];
        perm[start[k] + fill[k]++] = (uint32_t)i;
    }
    for (int k = 0; k < d->classes; k++) {
        size_t count = start[k + 1] - start[k];
        rng_shuffle(r, perm + start[k], count);
        /* Dirichlet(alpha) shares from Gamma draws, taken as logarithms and
         * scaled by the largest: for alpha far below 1 the draws themselves
         * underflow (all to 0 gave NaN shares and wrote past a shard; some
         * to denormals split a class that belongs to one worker) */
        double top = -INFINITY, sum = 0;
        for (int w = 0; w < workers; w++) {
            p[w] = rng_log_gamma(r, alpha);
            top = fmax(top, p[w]);
        }
        if (top == -INFINITY) {   /* alpha near DBL_MIN: even the logarithms of every
                                   * draw overflow (NaN shares wrote past a shard); such
                                   * a Dirichlet gives the class whole to one worker */
            int one = (int)rng_below(r, (uint64_t)workers);
            for (int w = 0; w < workers; w++) {
                p[w] = w == one ? 0 : -INFINITY;
            }
            top = 0;
        }
        for (int w = 0; w < workers; w++) {
            p[w] = exp(p[w] - top);
            sum += p[w];
        }
        s_apportion(take + (size_t)k * (size_t)workers, count, p, sum, workers);
    }
    for (int w = 0; w < workers; w++) {
        size_t n = 0;
        for (int k = 0; k < d->classes; k++) {
            n += take[(size_t)k * (size_t)workers + (size_t)w];
        }
        if (!(shards[w].idx = malloc((n ? n : 1) * sizeof(uint32_t)))) {
            goto out;
        }
    }
    for (int k = 0; k < d->classes; k++) {
        size_t at = start[k];
        for (int w = 0; w < workers; w++) {
            size_t t = take[(size_t)k * (size_t)workers + (size_t)w];
            memcpy(shards[w].idx + shards[w].n, perm + at, t * sizeof(uint32_t));
            shards[w].n += t;
            at += t;
        }
    }
    rc = 0;
out:
    free(start);
    free(fill);
    free(p);
    free(take);
    return rc;
}

int partition_make(shard *shards, int workers, const dataset *d, int kind,
                   double alpha, uint64_t seed, error *err)
{
    memset(shards, 0, (size_t)workers * sizeof *shards);
    if (workers > d->n && kind != PARTITION_IID) {
        return error_set(err, ERROR_USAGE, "partition: %d workers but only %d training "
                         "examples: label-skew needs one each (iid deals them round again)",
                         workers, d->n);
    }
    uint32_t *perm = malloc((size_t)d->n * sizeof *perm);
    if (!perm) {
        return error_set(err, ERROR_RUNTIME, "partition: out of memory");
    }
    rng r = rng_derive(seed, RNG_PARTITION, 0);
    int rc = kind == PARTITION_IID ? s_iid(shards, workers, d, &r, perm)
                                   : s_label_skew(shards, workers, d, alpha, &r, perm);
    free(perm);
    if (rc < 0) {
        partition_free(shards, workers);
        return error_set(err, ERROR_RUNTIME, "partition: out of memory");
    }
    for (int w = 0; w < workers; w++) {
        if (shards[w].n == 0) {
            partition_free(shards, workers);
            return error_set(err, ERROR_USAGE, "partition: label-skew left worker "
                             "%d with no examples; raise [data] alpha or use fewer "
                             "workers", w);
        }
    }
    return 0;
}

void partition_free(shard *shards, int workers)
{
    for (int w = 0; w < workers; w++) {
        free(shards[w].idx);
        shards[w].idx = NULL;
        shards[w].n = 0;
    }
}

int sampler_init(sampler *sp, const dataset *d, const shard *s, rng r)
{
    sp->d = d;
    sp->n = s->n;
    sp->r = r;
    sp->pos = 0;
    sp->passes = 0;
    sp->order = malloc(s->n * sizeof *sp->order);
    if (!sp->order) {
        return -1;
    }
    memcpy(sp->order, s->idx, s->n * sizeof *sp->order);
    rng_shuffle(&sp->r, sp->order, s->n);
    return 0;
}

void sampler_free(sampler *sp)
{
    free(sp->order);
    sp->order = NULL;
}

void sampler_skip(sampler *sp, uint64_t examples)
{
    while (examples > 0) {
        if (sp->pos == sp->n) {
            rng_shuffle(&sp->r, sp->order, sp->n);
            sp->pos = 0;
            sp->passes++;
        }
        size_t step = sp->n - sp->pos < examples ? sp->n - sp->pos : (size_t)examples;
        sp->pos += step;
        examples -= step;
    }
}

void sampler_next(sampler *sp, float *x, int32_t *y, int batch)
{
    size_t dim = (size_t)sp->d->dim;
    for (int b = 0; b < batch; b++) {
        if (sp->pos == sp->n) {
            rng_shuffle(&sp->r, sp->order, sp->n);
            sp->pos = 0;
            sp->passes++;
        }
        uint32_t i = sp->order[sp->pos++];
        memcpy(x + (size_t)b * dim, sp->d->x + (size_t)i * dim, dim * sizeof *x);
        y[b] = sp->d->y[i];
    }
}

int partition_take(shard *mine, int workers, int id, const dataset *d, int kind,
                   double alpha, uint64_t seed, error *err)
{
    shard *all = calloc((size_t)workers, sizeof *all);
    if (!all) {
        return error_set(err, ERROR_RUNTIME, "worker %d: out of memory", id);
    }
    int rc = partition_make(all, workers, d, kind, alpha, seed, err);
    if (rc == 0) {
        *mine = all[id];
        all[id] = (shard){0};
    }
    partition_free(all, workers);
    free(all);
    return rc;
}

void partition_range(uint64_t n, int shards, int k, uint64_t *lo, uint64_t *hi)
{
    /* n * k fits: n < 2^40 elements and k < 2^20 shards */
    *lo = n * (uint64_t)k / (uint64_t)shards;
    *hi = n * (uint64_t)(k + 1) / (uint64_t)shards;
}
