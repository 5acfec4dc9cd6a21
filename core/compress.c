/* compress.c: the compressors and their payloads (compress.h). */
#include "core/compress.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/partition.h"

/* ---- the spec ---- */

static const char *const s_kinds[] = {"none", "fp16", "bf16", "topk", "randomk", "sign", "qsgd",
                                      NULL};

int compress_spec_configure(compress_spec *s, config *c, error *err)
{
    const char *text;
    *s = (compress_spec){.kind = COMPRESS_NONE};
    if (config_get_string(c, "algorithm", "compress", "none", &text, err) < 0 ||
        config_get_bool(c, "algorithm", "error_feedback", false, &s->error_feedback, err) < 0) {
        return -1;
    }
    size_t name_len = strcspn(text, ":");
    const char *arg = text[name_len] == ':' ? text + name_len + 1 : NULL;
    int kind = -1;
    for (int k = 0; s_kinds[k]; k++) {
        if (strlen(s_kinds[k]) == name_len && strncmp(text, s_kinds[k], name_len) == 0) {
            kind = k;
        }
    }
    bool takes_fraction = kind == COMPRESS_TOPK || kind == COMPRESS_RANDOMK;
    if (kind < 0) {
        return config_fail(c, "algorithm", "compress", err, "\"%s\" is not one of none, fp16, "
                           "bf16, topk:F, randomk:F, sign, qsgd:B", text);
    }
    if ((takes_fraction || kind == COMPRESS_QSGD) != (arg != NULL)) {
        return config_fail(c, "algorithm", "compress", err, arg ? "%s takes no argument"
                           : "%s needs its argument (topk:0.01, randomk:0.01, qsgd:4)",
                           s_kinds[kind]);
    }
    char *end = NULL;
    if (takes_fraction) {
        /* as any number a config holds: 0x.8 and a denormal were taken */
        if (!config_parse_number(arg, &s->fraction) || !(s->fraction > 0 && s->fraction <= 1)) {
            return config_fail(c, "algorithm", "compress", err, "%s's fraction \"%s\" must be "
                               "a number in (0, 1]", s_kinds[kind], arg);
        }
    } else if (kind == COMPRESS_QSGD) {
        long bits = strtol(arg, &end, 10);
        if (end == arg || *end || bits < 1 || bits > 16) {
            return config_fail(c, "algorithm", "compress", err, "qsgd's bits \"%s\" must be a "
                               "whole number from 1 to 16", arg);
        }
        s->bits = (int)bits;
    }
    s->kind = kind;
    return 0;
}

void compress_spec_name(const compress_spec *s, char *out, size_t size)
{
    if (s->kind == COMPRESS_TOPK || s->kind == COMPRESS_RANDOMK) {
        /* every digit given ("%g" named topk:0.3333333 and 0.333333 alike) */
        snprintf(out, size, "%s:%.9g", s_kinds[s->kind], s->fraction);
    } else if (s->kind == COMPRESS_QSGD) {
        snprintf(out, size, "qsgd:%d", s->bits);
    } else {
        snprintf(out, size, "%s", s_kinds[s->kind]);
    }
}

int compress_format_of(const compress_spec *s)
{
    static const int formats[] = {
        [COMPRESS_NONE] = FORMAT_F32, [COMPRESS_FP16] = FORMAT_F16,
        [COMPRESS_BF16] = FORMAT_BF16, [COMPRESS_TOPK] = FORMAT_SPARSE,
        [COMPRESS_RANDOMK] = FORMAT_SPARSE, [COMPRESS_SIGN] = FORMAT_SIGNS,
        [COMPRESS_QSGD] = FORMAT_LEVELS,
    };
    return formats[s->kind];
}

/* ---- 16-bit floats ---- */

uint16_t compress_to_f16(float x)
{
    uint32_t f;
    memcpy(&f, &x, sizeof f);
    uint16_t sign = (uint16_t)((f >> 16) & 0x8000);
    uint32_t a = f & 0x7fffffff;
    if (a > 0x7f800000) {
        return sign | 0x7e00;                 /* NaN */
    }
    if (a == 0x7f800000) {
        return sign | 0x7c00;                 /* infinity stays, to be refused */
    }
    if (a >= 0x477ff000) {
        return sign | 0x7bff;                 /* would round to infinity: 65504 */
    }
    if (a < 0x38800000) {                     /* below 2^-14: a subnormal half */
        float magnitude;
        memcpy(&magnitude, &a, sizeof magnitude);
        return sign | (uint16_t)lrintf(magnitude * 0x1p24f);
    }
    uint32_t v = a - 0x38000000;              /* exponent bias 127 -> 15 */
    v += 0xfff + ((v >> 13) & 1);             /* round the 13 dropped bits to even */
    return sign | (uint16_t)(v >> 13);
}

float compress_from_f16(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    float x;
    if (e == 0) {
        x = (float)m * 0x1p-24f;
        return sign ? -x : x;
    }
    uint32_t bits = sign | (e == 31 ? 0x7f800000 | m << 13 : (e + 112) << 23 | m << 13);
    memcpy(&x, &bits, sizeof x);
    return x;
}

uint16_t compress_to_bf16(float x)
{
    uint32_t f;
    memcpy(&f, &x, sizeof f);
    uint32_t a = f & 0x7fffffff;
    if (a > 0x7f800000) {
        return (uint16_t)(f >> 16) | 0x40;    /* a quiet NaN */
    }
    uint16_t h = (uint16_t)((f + 0x7fff + ((f >> 16) & 1)) >> 16);
    if ((h & 0x7fff) == 0x7f80 && a != 0x7f800000) {
        h--;                                  /* a finite value stays finite */
    }
    return h;
}

float compress_from_bf16(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float x;
    memcpy(&x, &bits, sizeof x);
    return x;
}

/* ---- payload layout ---- */

static void s_put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) {
        p[i] = (uint8_t)(v >> (8 * i));
    }
}

static uint32_t s_get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void s_put_float(uint8_t *p, float x)
{
    uint32_t v;
    memcpy(&v, &x, sizeof v);
    s_put32(p, v);
}

static float s_get_float(const uint8_t *p)
{
    uint32_t v = s_get32(p);
    float x;
    memcpy(&x, &v, sizeof x);
    return x;
}

static uint64_t s_packed_bytes(uint64_t count, int width)
{
    return (count * (uint64_t)width + 7) / 8;
}

bool compress_size_ok(int format, int bits, uint64_t count, size_t len)
{
    if (count > (1ull << 40)) {
        return false;
    }
    switch (format) {
    case FORMAT_F32:
        return len == count * 4;
    case FORMAT_F16:
    case FORMAT_BF16:
        return len == count * 2;
    case FORMAT_SPARSE:
        return len % 8 == 0 && len / 8 <= count;
    case FORMAT_SIGNS:
        return len == 4 + s_packed_bytes(count, 1);
    case FORMAT_LEVELS:
        return bits >= 1 && bits <= 16 && len == 8 + s_packed_bytes(count, bits + 1);
    default:
        return false;
    }
}

/* Bits [at, at + width) of a packed little-endian bit string. */
static uint32_t s_get_bits(const uint8_t *p, uint64_t at, int width)
{
    uint32_t v = 0;
    for (int i = 0; i < width; i++, at++) {
        v |= (uint32_t)(p[at / 8] >> (at % 8) & 1) << i;
    }
    return v;
}

static void s_put_bits(uint8_t *p, uint64_t at, int width, uint32_t v)
{
    for (int i = 0; i < width; i++, at++) {
        p[at / 8] |= (uint8_t)((v >> i & 1) << (at % 8));
    }
}

/* Whether the bits after the last field, up to the end of the payload, are 0. */
static bool s_padding_clear(const uint8_t *p, uint64_t used_bits, size_t bytes)
{
    for (uint64_t at = used_bits; at < (uint64_t)bytes * 8; at++) {
        if (p[at / 8] >> (at % 8) & 1) {
            return false;
        }
    }
    return true;
}

int compress_decode(int format, int bits, const uint8_t *payload, size_t len, uint64_t count,
                    float *out, const char **why)
{
    if (!compress_size_ok(format, bits, count, len)) {
        *why = "payload size does not match its encoding";
        return -1;
    }
    switch (format) {
    case FORMAT_F32:
        for (uint64_t i = 0; i < count; i++) {
            out[i] = s_get_float(payload + 4 * i);
        }
        return 0;
    case FORMAT_F16:
    case FORMAT_BF16:
        for (uint64_t i = 0; i < count; i++) {
            uint16_t h = (uint16_t)(payload[2 * i] | payload[2 * i + 1] << 8);
            out[i] = format == FORMAT_F16 ? compress_from_f16(h) : compress_from_bf16(h);
        }
        return 0;
    case FORMAT_SPARSE: {
        memset(out, 0, count * sizeof *out);
        for (size_t k = 0, pairs = len / 8; k < pairs; k++) {
            uint32_t index = s_get32(payload + 8 * k);
            if (index >= count || (k > 0 && index <= s_get32(payload + 8 * (k - 1)))) {
                *why = "sparse indices out of range or not increasing";
                return -1;
            }
            out[index] = s_get_float(payload + 8 * k + 4);
        }
        return 0;
    }
    case FORMAT_SIGNS: {
        float scale = s_get_float(payload);
        if (signbit(scale) && !isnan(scale)) {   /* a mean magnitude: below 0 it turned
                                                  * every sign over (a NaN's sign bit is
                                                  * x86's 0/0: a diverged push, refused
                                                  * by the shard as such) */
            *why = "sign payload's scale is negative";
            return -1;
        }
        if (!s_padding_clear(payload + 4, count, len - 4)) {
            *why = "sign payload has bits set past its values";
            return -1;
        }
        for (uint64_t i = 0; i < count; i++) {
            out[i] = s_get_bits(payload + 4, i, 1) ? -scale : scale;
        }
        return 0;
    }
    default: {   /* FORMAT_LEVELS */
        float norm = s_get_float(payload);
        int width = bits + 1;
        if (s_get32(payload + 4) != (uint32_t)bits) {
            *why = "qsgd payload states other bits than the run's";
            return -1;
        }
        if (signbit(norm) && !isnan(norm)) {   /* an L2 norm: below 0 it turned every
                                                * sign over (a NaN's: as the scale's) */
            *why = "qsgd payload's norm is negative";
            return -1;
        }
        if (!s_padding_clear(payload + 8, count * (uint64_t)width, len - 8)) {
            *why = "qsgd payload has bits set past its values";
            return -1;
        }
        float levels = (float)((1u << bits) - 1);
        for (uint64_t i = 0; i < count; i++) {
            uint32_t field = s_get_bits(payload + 8, i * (uint64_t)width, width);
            float x = norm * ((float)(field >> 1) / levels);
            out[i] = field & 1 ? -x : x;
        }
        return 0;
    }
    }
}

/* ---- the compressors ---- */

/* |x| for selection, NaN as the largest of all. */
static float s_magnitude(float x)
{
    return isnan(x) ? INFINITY : fabsf(x);
}

/* The k-th smallest of a[0..n) (k from 0), reordering a (Wirth). */
static float s_kth_smallest(float *a, long n, long k)
{
    long l = 0, m = n - 1;
    while (l < m) {
        float x = a[k];
        long i = l, j = m;
        do {
            while (a[i] < x) {
                i++;
            }
            while (x < a[j]) {
                j--;
            }
            if (i <= j) {
                float t = a[i];
                a[i++] = a[j];
                a[j--] = t;
            }
        } while (i <= j);
        if (j < k) {
            l = i;
        }
        if (k < i) {
            m = j;
        }
    }
    return a[k];
}

static size_t s_keep(double fraction, uint64_t count)
{
    double k = round(fraction * (double)count);
    return count == 0 ? 0 : k < 1 ? 1 : k > (double)count ? (size_t)count : (size_t)k;
}

static size_t s_topk(compressor *c, const float *x, uint64_t count, uint8_t *out)
{
    size_t k = s_keep(c->spec.fraction, count);
    if (k == 0) {
        return 0;
    }
    for (uint64_t i = 0; i < count; i++) {
        c->scratch[i] = s_magnitude(x[i]);
    }
    float t = s_kth_smallest(c->scratch, (long)count, (long)(count - k));
    size_t above = 0;
    for (uint64_t i = 0; i < count; i++) {
        above += s_magnitude(x[i]) > t;
    }
    size_t ties = k - above, pairs = 0;   /* values equal to t, first ones first */
    for (uint64_t i = 0; i < count && pairs < k; i++) {
        float m = s_magnitude(x[i]);
        if (m > t || (m == t && ties > 0)) {
            ties -= m == t;
            s_put32(out + 8 * pairs, (uint32_t)i);
            s_put_float(out + 8 * pairs + 4, x[i]);
            pairs++;
        }
    }
    return 8 * pairs;
}

static size_t s_randomk(compressor *c, const float *x, uint64_t count, uint8_t *out)
{
    size_t k = s_keep(c->spec.fraction, count), pairs = 0;
    /* unbiased on its own; with error feedback, the residual carries what
     * was not sent, and the scaled form would not shrink it (it is not a
     * contraction): unscaled, as Stich et al.'s sparsified SGD with memory */
    float scale = c->residual ? 1.0f : (float)count / (float)k;
    /* selection sampling (Knuth's algorithm S): k of count, in order */
    for (uint64_t i = 0; i < count && pairs < k; i++) {
        if (rng_below(&c->r, count - i) < k - pairs) {
            s_put32(out + 8 * pairs, (uint32_t)i);
            s_put_float(out + 8 * pairs + 4, x[i] * scale);
            pairs++;
        }
    }
    return 8 * pairs;
}

static size_t s_signs(const float *x, uint64_t count, uint8_t *out)
{
    double sum = 0;
    for (uint64_t i = 0; i < count; i++) {
        sum += fabs((double)x[i]);
    }
    size_t len = 4 + (size_t)s_packed_bytes(count, 1);
    memset(out, 0, len);
    s_put_float(out, count ? (float)(sum / (double)count) : 0);
    for (uint64_t i = 0; i < count; i++) {
        s_put_bits(out + 4, i, 1, x[i] < 0);
    }
    return len;
}

static size_t s_levels(compressor *c, const float *x, uint64_t count, uint8_t *out)
{
    int bits = c->spec.bits, width = bits + 1;
    double sum = 0;
    for (uint64_t i = 0; i < count; i++) {
        sum += (double)x[i] * (double)x[i];
    }
    /* past a float's range (values near FLT_MAX) the norm is taken as
     * FLT_MAX, still at least every |x|: each value stays unbiased, where
     * an infinite norm decoded as NaN, a finite push refused as diverged */
    double l2 = sqrt(sum);   /* infinite only for an infinite value: a diverged push, left so */
    float norm = isfinite(l2) && l2 > FLT_MAX ? FLT_MAX : (float)l2;
    size_t len = 8 + (size_t)s_packed_bytes(count, width);
    memset(out, 0, len);
    s_put_float(out, norm);
    s_put32(out + 4, (uint32_t)bits);
    uint32_t top = (1u << bits) - 1;
    for (uint64_t i = 0; norm > 0 && isfinite(norm) && i < count; i++) {
        double r = fabs((double)x[i]) / norm * top;
        uint32_t level = (uint32_t)floor(r);
        level += rng_uniform(&c->r) < r - level;
        level = level > top ? top : level;
        s_put_bits(out + 8, i * (uint64_t)width, width, level << 1 | (x[i] < 0));
    }
    return len;
}

static size_t s_halves(int format, const float *x, uint64_t count, uint8_t *out)
{
    for (uint64_t i = 0; i < count; i++) {
        uint16_t h = format == FORMAT_F16 ? compress_to_f16(x[i]) : compress_to_bf16(x[i]);
        out[2 * i] = (uint8_t)h;
        out[2 * i + 1] = (uint8_t)(h >> 8);
    }
    return 2 * count;
}

/* The largest payload of a part of count values. */
static size_t s_capacity(const compress_spec *s, uint64_t count)
{
    return 8 + (size_t)(count * 8 > s_packed_bytes(count, s->bits + 1) ? count * 8
                        : s_packed_bytes(count, s->bits + 1));
}

compressor *compressor_new(const compress_spec *spec, size_t n, int parts, uint64_t seed,
                           int worker, error *err)
{
    if (spec->kind == COMPRESS_NONE || n / (size_t)parts >= UINT32_MAX) {
        error_set(err, ERROR_USAGE, "compression: %s", spec->kind == COMPRESS_NONE
                  ? "nothing to compress with (compress = none)"
                  : "a shard's part of the parameters is too long for 32-bit indices");
        return NULL;
    }
    compressor *c = calloc(1, sizeof *c);
    bool ok = c != NULL;
    if (ok) {
        *c = (compressor){.spec = *spec, .n = n, .parts = parts, .seed = seed,
                          .worker = worker,
                          .r = rng_derive(seed, RNG_COMPRESS, (uint64_t)worker)};
        c->lo = calloc((size_t)parts, sizeof *c->lo);
        c->hi = calloc((size_t)parts, sizeof *c->hi);
        c->payload = calloc((size_t)parts, sizeof *c->payload);
        c->len = calloc((size_t)parts, sizeof *c->len);
        c->decoded = malloc(n * sizeof *c->decoded);
        c->input = malloc(n * sizeof *c->input);
        c->residual = spec->error_feedback ? calloc(n, sizeof *c->residual) : NULL;
        ok = c->lo && c->hi && c->payload && c->len && c->decoded && c->input &&
             (c->residual || !spec->error_feedback);
    }
    size_t largest = 0;
    for (int k = 0; ok && k < parts; k++) {
        partition_range(n, parts, k, &c->lo[k], &c->hi[k]);
        size_t count = (size_t)(c->hi[k] - c->lo[k]);
        largest = count > largest ? count : largest;
        ok = (c->payload[k] = malloc(s_capacity(spec, count))) != NULL;
    }
    if (ok) {
        c->scratch = malloc((largest ? largest : 1) * sizeof *c->scratch);
        ok = c->scratch != NULL;
    }
    if (!ok) {
        compressor_free(&c);
        error_set(err, ERROR_RUNTIME, "compression: out of memory");
    }
    return c;
}

void compressor_free(compressor **cp)
{
    compressor *c = *cp;
    if (!c) {
        return;
    }
    for (int k = 0; c->payload && k < c->parts; k++) {
        free(c->payload[k]);
    }
    free(c->payload);
    free(c->lo);
    free(c->hi);
    free(c->len);
    free(c->decoded);
    free(c->input);
    free(c->residual);
    free(c->scratch);
    free(c);
    *cp = NULL;
}

void compressor_reset(compressor *c)
{
    if (c->residual) {
        memset(c->residual, 0, c->n * sizeof *c->residual);
    }
    c->r = rng_derive(c->seed, RNG_COMPRESS, (uint64_t)c->worker);
}

const float *compressor_push(compressor *c, const float *values)
{
    const float *x = values;
    if (c->residual) {
        for (size_t i = 0; i < c->n; i++) {
            c->input[i] = values[i] + c->residual[i];
        }
        x = c->input;
    }
    int format = compress_format_of(&c->spec);
    for (int k = 0; k < c->parts; k++) {
        uint64_t lo = c->lo[k], count = c->hi[k] - lo;
        uint8_t *out = c->payload[k];
        switch (c->spec.kind) {
        case COMPRESS_TOPK:
            c->len[k] = s_topk(c, x + lo, count, out);
            break;
        case COMPRESS_RANDOMK:
            c->len[k] = s_randomk(c, x + lo, count, out);
            break;
        case COMPRESS_SIGN:
            c->len[k] = s_signs(x + lo, count, out);
            break;
        case COMPRESS_QSGD:
            c->len[k] = s_levels(c, x + lo, count, out);
            break;
        default:
            c->len[k] = s_halves(format, x + lo, count, out);
            break;
        }
        c->bytes += c->len[k];
        const char *why;
        /* what the shard will decode, by the shard's own code */
        if (compress_decode(format, c->spec.bits, out, c->len[k], count, c->decoded + lo,
                            &why) < 0) {
            abort();   /* an encoder that breaks its own format is a bug here */
        }
    }
    if (c->residual) {
        for (size_t i = 0; i < c->n; i++) {
            float left = x[i] - c->decoded[i];
            /* a NaN or an infinity was sent (the shard refuses the push) or
             * dropped: kept, it would spoil every push after */
            c->residual[i] = isfinite(left) ? left : 0;
        }
    }
    return c->decoded;
}
