/* rng.c: xoshiro256** (Blackman and Vigna), seeded through splitmix64, with
 * the few distributions asgd needs. */
#include "core/rng.h"

#include <assert.h>
#include <math.h>

static const double s_pi = 3.14159265358979323846;

static uint64_t s_splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t s_rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

void rng_seed(rng *r, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) {
        r->s[i] = s_splitmix64(&x);
    }
}

rng rng_derive(uint64_t seed, uint64_t purpose, uint64_t index)
{
    uint64_t x = seed;
    uint64_t mixed = s_splitmix64(&x);
    x = mixed ^ (purpose * 0xd1342543de82ef95ULL);
    mixed = s_splitmix64(&x);
    x = mixed ^ (index * 0xa0761d6478bd642fULL);
    rng r;
    rng_seed(&r, s_splitmix64(&x));
    return r;
}

uint64_t rng_next(rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = s_rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = s_rotl(s[3], 45);
    return result;
}

double rng_uniform(rng *r)
{
    return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

uint64_t rng_below(rng *r, uint64_t n)
{
    assert(n > 0);
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do {
        x = rng_next(r);
    } while (x >= limit);
    return x % n;
}

double rng_normal(rng *r)
{
    double u1;
    do {
        u1 = rng_uniform(r);
    } while (u1 <= 0.0);
    double u2 = rng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(2.0 * s_pi * u2);
}

double rng_gamma(rng *r, double shape)
{
    assert(shape > 0);
    if (shape < 1.0) {
        /* Boost: Gamma(a) = Gamma(a + 1) * U^(1/a). */
        double u;
        do {
            u = rng_uniform(r);
        } while (u <= 0.0);
        return rng_gamma(r, shape + 1.0) * pow(u, 1.0 / shape);
    }
    double d = shape - 1.0 / 3.0;
    double c = 1.0 / sqrt(9.0 * d);
    for (;;) {
        double x = rng_normal(r);
        double v = 1.0 + c * x;
        if (v <= 0.0) {
            continue;
        }
        v = v * v * v;
        double u = rng_uniform(r);
        if (u < 1.0 - 0.0331 * x * x * x * x ||
            log(u) < 0.5 * x * x + d * (1.0 - v + log(v))) {
            return d * v;
        }
    }
}

double rng_log_gamma(rng *r, double shape)
{
    assert(shape > 0);
    if (shape < 1.0) {   /* the boost of rng_gamma, in logarithms: U^(1/a) cannot underflow */
        double u;
        do {
            u = rng_uniform(r);
        } while (u <= 0.0);
        return rng_log_gamma(r, shape + 1.0) + log(u) / shape;
    }
    return log(rng_gamma(r, shape));
}

void rng_shuffle(rng *r, uint32_t *v, size_t n)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)rng_below(r, i);
        uint32_t t = v[i - 1];
        v[i - 1] = v[j];
        v[j] = t;
    }
}
