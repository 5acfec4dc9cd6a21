/* compress.h: gradient compression, for any rule's pushes.
 *
 * [algorithm] keys, read by the skeleton for every rule:
 *   compress        none | fp16 | bf16 | topk:F | randomk:F | sign | qsgd:B
 *   error_feedback  on | off (default off)
 *
 * What a worker pushes is cut into the shards' ranges and each part is
 * compressed on its own (as BytePS and ps-lite compress per partition):
 *   fp16, bf16   each value as a 16-bit float (round to nearest even; a
 *                finite value stays finite: fp16 saturates at +-65504,
 *                bf16 at its largest)
 *   topk:F       the round(F n) values of largest magnitude (at least 1),
 *                as (index, value) pairs in index order; NaN counts as
 *                the largest, so the shard still refuses it
 *   randomk:F    as many values at indices drawn without replacement from
 *                the worker's stream, each scaled by n / k so that the
 *                mean is unbiased; with error feedback unscaled (Stich,
 *                Cordonnier, Jaggi, "Sparsified SGD with Memory", 2018):
 *                error feedback needs a compressor whose error is smaller
 *                than its input, and the scaled one's is not
 *   sign         one bit per value and one scale, the mean magnitude
 *                (signSGD with a scale, 1-bit SGD)
 *   qsgd:B       the L2 norm and, per value, a sign and a level l in
 *                0..2^B - 1, rounded at random so that norm * l / (2^B - 1)
 *                is unbiased (Alistarh et al., NeurIPS 2017)
 * With error feedback the worker keeps what compression lost, e = x - C(x),
 * and adds it to its next push (Seide et al. 2014; Karimireddy et al.
 * 2019). Its analysis asks |x - C(x)| < |x|: true of fp16, bf16, topk,
 * sign and unscaled randomk, not of qsgd on a long vector (one part of n
 * values at 2^B - 1 levels errs by up to sqrt(n) / (2^B - 1) times its
 * norm), whose residual then grows without bound; asgd runs it as asked,
 * and says so where sqrt(n) / (2^B - 1) reaches 1.
 * The residual assumes each push is applied: a push the shard drops (late
 * in a round, or refused) takes its part of the residual with it, and a
 * NaN or an infinity is never kept in the residual. Values are not
 * checked on the worker: topk sends a NaN first, so that the shard
 * refuses the push as it would a float32 one; randomk may not pick it.
 *
 * Payloads, all little-endian (the wire's encoding field says which):
 *   F16, BF16   count 16-bit values
 *   SPARSE      pairs of (uint32 index within the part, float32 value),
 *               indices strictly increasing, at most count pairs
 *   SIGNS       float32 scale, then ceil(count / 8) bytes, bit i & 7 of
 *               byte i / 8 set for a negative value; unused bits 0
 *   LEVELS      float32 norm, uint32 B, then count fields of B + 1 bits
 *               packed from the low bit up (the sign, then the level);
 *               unused bits 0
 * compress_decode checks all of it: a payload that breaks any rule is
 * refused whole, before a value is used. */
#ifndef ASGD_COMPRESS_H
#define ASGD_COMPRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "core/error.h"
#include "core/rng.h"

enum compress_kind {
    COMPRESS_NONE, COMPRESS_FP16, COMPRESS_BF16, COMPRESS_TOPK, COMPRESS_RANDOMK,
    COMPRESS_SIGN, COMPRESS_QSGD,
};

/* How a part is laid out on the wire. */
enum compress_format {
    FORMAT_F32, FORMAT_F16, FORMAT_BF16, FORMAT_SPARSE, FORMAT_SIGNS, FORMAT_LEVELS,
};

typedef struct compress_spec {
    int kind;                 /* enum compress_kind */
    double fraction;          /* topk, randomk: F in (0, 1] */
    int bits;                 /* qsgd: B in 1..16 */
    bool error_feedback;
} compress_spec;

/* Reads [algorithm] compress and error_feedback; a bad value is a config
 * error naming the key (ERROR_USAGE). */
int compress_spec_configure(compress_spec *s, config *c, error *err);
/* The compress value as a config writes it: "none", "topk:0.01", ... */
void compress_spec_name(const compress_spec *s, char *out, size_t size);
/* The payload format of the spec's parts. */
int compress_format_of(const compress_spec *s);

/* Whether len bytes can be a payload of `format` for count values (LEVELS:
 * with `bits`), the size check a receiver makes first. */
bool compress_size_ok(int format, int bits, uint64_t count, size_t len);
/* Checks a payload of `format` (LEVELS: with `bits`, which it must state)
 * for count values whole, and writes the values into out (count floats);
 * -1 and *why on a payload that breaks its format. Values may be NaN or
 * infinite as in a float32 payload: the shard refuses those pushes. */
int compress_decode(int format, int bits, const uint8_t *payload, size_t len, uint64_t count,
                    float *out, const char **why);

/* One worker's compressor over its pushes of n values, cut into `parts`
 * shards' ranges (partition_range). */
typedef struct compressor {
    compress_spec spec;
    size_t n;
    int parts;
    uint64_t *lo, *hi;        /* each part's range */
    uint8_t **payload;        /* each part's last payload */
    size_t *len;              /* and its size in bytes */
    float *decoded;           /* what the shards take from the last push (n) */
    float *residual;          /* error feedback: what compression lost (n), or NULL */
    float *input;             /* the push plus the residual (n) */
    float *scratch;           /* topk's magnitudes (largest part) */
    uint32_t *picked;         /* randomk's indices (largest part) */
    rng r;                    /* randomk's choices and qsgd's rounding */
    uint64_t seed;            /* and where that stream starts */
    int worker;
    uint64_t bytes;           /* payload bytes of every push so far */
} compressor;

/* NULL with err set when out of memory, for kind none, or for a part
 * longer than 32-bit indices reach. seed and worker pick the stream. */
compressor *compressor_new(const compress_spec *spec, size_t n, int parts, uint64_t seed,
                           int worker, error *err);
void compressor_free(compressor **c);
/* Forgets the residual and starts the stream again, as a restarted worker
 * does. */
void compressor_reset(compressor *c);
/* Compresses values (n): fills each part's payload and returns what the
 * shards will decode, part by part (c->decoded), bit for bit. */
const float *compressor_push(compressor *c, const float *values);

/* IEEE half and bfloat16 conversions (round to nearest even). */
uint16_t compress_to_f16(float x);
float compress_from_f16(uint16_t h);
uint16_t compress_to_bf16(float x);
float compress_from_bf16(uint16_t h);

#endif
