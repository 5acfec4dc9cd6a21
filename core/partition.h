/* partition.h: splitting a training set into worker shards, and drawing
 * seeded minibatches within a shard.
 *
 * Shards are lists of example indices. iid deals a shuffled permutation
 * into near-equal parts; label-skew gives each class's examples to workers
 * in proportions drawn from Dirichlet(alpha), the usual way to make
 * non-iid federated splits (small alpha: each worker sees few classes).
 * Either way the shards are disjoint and together hold every example;
 * only with more workers than examples (a simulator of 65,536 devices over
 * Fashion-MNIST's 60,000) does iid give each worker one example, dealing the
 * permutation round again, so that some examples are in two shards. */
#ifndef ASGD_PARTITION_H
#define ASGD_PARTITION_H

#include <stddef.h>
#include <stdint.h>

#include "core/data.h"
#include "core/error.h"
#include "core/rng.h"

enum partition_kind { PARTITION_IID, PARTITION_LABEL_SKEW };

typedef struct shard {
    uint32_t *idx;
    size_t n;
} shard;

/* Fills shards[0..workers). Fails (ERROR_USAGE) if a shard would be empty. */
int partition_make(shard *shards, int workers, const dataset *d, int kind,
                   double alpha, uint64_t seed, error *err);
void partition_free(shard *shards, int workers);
/* Shard `id` alone of the same partition (every process that asks with
 * the same seed gets the same, disjoint shards). */
int partition_take(shard *mine, int workers, int id, const dataset *d, int kind,
                   double alpha, uint64_t seed, error *err);

/* The parameter vector's split among server shards: balanced contiguous
 * ranges, shard k of s over n elements gets [k n / s, (k + 1) n / s);
 * sizes differ by at most one, none is lost. */
void partition_range(uint64_t n, int shards, int k, uint64_t *lo, uint64_t *hi);

/* Draws minibatches from one shard: a fresh seeded permutation per pass,
 * each example once per pass; a batch that runs past the end of a pass
 * continues into the next. */
typedef struct sampler {
    const dataset *d;
    size_t n;          /* examples in the shard */
    uint32_t *order;   /* the shard's indices, in this pass's order */
    size_t pos;
    uint64_t passes;   /* completed passes over the shard */
    rng r;
} sampler;

/* Copies the shard's indices: the shard may be freed afterwards. */
int sampler_init(sampler *sp, const dataset *d, const shard *s, rng r);
void sampler_free(sampler *sp);
/* Goes on as if sampler_next had drawn `examples` examples: a worker that
 * takes up its share after a restart or a resume draws the minibatches it
 * had not reached, not its first ones again. */
void sampler_skip(sampler *sp, uint64_t examples);
/* Copies the next `batch` examples into x (batch x dim) and y (batch). */
void sampler_next(sampler *sp, float *x, int32_t *y, int batch);

#endif
