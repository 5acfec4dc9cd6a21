/* rng.h: seeded random numbers (xoshiro256**), so that every random choice
 * in a run flows from experiment.seed and runs are reproducible.
 *
 * Streams are derived, not shared: rng_derive(seed, purpose, index) gives an
 * independent generator for, say, worker 3's minibatch order, so adding a
 * worker or a consumer never shifts another's sequence. */
#ifndef ASGD_RNG_H
#define ASGD_RNG_H

#include <stddef.h>
#include <stdint.h>

typedef struct rng {
    uint64_t s[4];
} rng;

/* Well-known purposes for rng_derive; add new ones at the end. */
enum rng_purpose {
    RNG_INIT = 1,      /* model initialisation */
    RNG_DATA,          /* synthetic data generation */
    RNG_PARTITION,     /* splitting the training set into shards */
    RNG_BATCH,         /* minibatch order, one stream per worker */
    RNG_SIM,           /* the simulator: stragglers, compute and network times */
    RNG_DROPOUT,       /* dropout masks' seed, one per worker */
    RNG_FAULTS,        /* injected message faults, one stream per sender and shard */
    RNG_COMPRESS,      /* randomk's choices and qsgd's rounding, one stream per worker */
};

void rng_seed(rng *r, uint64_t seed);
rng rng_derive(uint64_t seed, uint64_t purpose, uint64_t index);

uint64_t rng_next(rng *r);
/* Uniform in [0, 1). */
double rng_uniform(rng *r);
/* Uniform integer in [0, n), n > 0, without modulo bias. */
uint64_t rng_below(rng *r, uint64_t n);
/* Standard normal (Box-Muller, both values used). */
double rng_normal(rng *r);
/* Gamma(shape, 1), shape > 0 (Marsaglia-Tsang). */
double rng_gamma(rng *r, double shape);
/* The logarithm of a Gamma(shape) draw, which stays finite where the draw
 * itself underflows to 0 (shape far below 1: U^(1/shape)). */
double rng_log_gamma(rng *r, double shape);
/* Fisher-Yates shuffle of n indices. */
void rng_shuffle(rng *r, uint32_t *v, size_t n);

#endif
