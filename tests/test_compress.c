/* test_compress.c: the compressors against their definitions, the 16-bit
 * conversions bit by bit, error feedback's bookkeeping, every payload
 * rule a shard checks, the keys, and the wire's choice of encoding. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/compress.h"
#include "transport/wire.h"

static compress_spec s_spec(const char *text, bool feedback)
{
    char ini[128];
    snprintf(ini, sizeof ini, "[algorithm]\ncompress = %s\nerror_feedback = %s\n", text,
             feedback ? "on" : "off");
    error err = {0};
    config *c = config_parse_string(ini, "test.ini", &err);
    compress_spec s;
    if (!c || compress_spec_configure(&s, c, &err) < 0) {
        fail_msg("%s: %s", text, err.msg);
    }
    config_destroy(&c);
    return s;
}

/* One part: compresses x (n values) and returns the decoded copy. */
static const float *s_one_push(compressor *c, const float *x)
{
    return compressor_push(c, x);
}

static void test_half_floats_bit_by_bit(void **state)
{
    (void)state;
    assert_int_equal(compress_to_f16(1.0f), 0x3c00);
    assert_int_equal(compress_to_f16(-2.0f), 0xc000);
    assert_int_equal(compress_to_f16(65504.0f), 0x7bff);
    assert_int_equal(compress_to_f16(65519.0f), 0x7bff);   /* rounds down */
    assert_int_equal(compress_to_f16(1e6f), 0x7bff);       /* saturates */
    assert_int_equal(compress_to_f16(INFINITY), 0x7c00);   /* infinity stays */
    assert_int_equal(compress_to_f16(0x1p-24f), 0x0001);   /* smallest subnormal */
    assert_int_equal(compress_to_f16(0x1p-26f), 0x0000);   /* below half of it */
    assert_int_equal(compress_to_f16(1 + 0x1p-11f), 0x3c00);      /* tie: to even */
    assert_int_equal(compress_to_f16(1 + 3 * 0x1p-11f), 0x3c02);  /* tie: to even */
    assert_true(isnan(compress_from_f16(compress_to_f16(NAN))));
    assert_int_equal(compress_to_bf16(1.0f), 0x3f80);
    assert_int_equal(compress_to_bf16(1 + 0x1p-8f), 0x3f80);     /* tie: to even */
    assert_int_equal(compress_to_bf16(1 + 3 * 0x1p-8f), 0x3f82);
    assert_int_equal(compress_to_bf16(3.4e38f), 0x7f7f);         /* finite stays finite */
    assert_true(isnan(compress_from_bf16(compress_to_bf16(NAN))));
    /* every 16-bit value but NaN comes back to itself */
    for (uint32_t h = 0; h < 65536; h++) {
        float f16 = compress_from_f16((uint16_t)h), bf16 = compress_from_bf16((uint16_t)h);
        if (!isnan(f16)) {
            assert_int_equal(compress_to_f16(f16), h);
        }
        if (!isnan(bf16)) {
            assert_int_equal(compress_to_bf16(bf16), h);
        }
    }
}

static void test_topk_keeps_the_largest_in_index_order(void **state)
{
    (void)state;
    compress_spec spec = s_spec("topk:0.5", false);
    compressor *c = compressor_new(&spec, 6, 1, 1, 0, &(error){0});
    const float *d = s_one_push(c, (const float[]){0.1f, -5, 3, 0, -3, 2});
    const float want[] = {0, -5, 3, 0, -3, 0};   /* 3 and -3 tie: both fit in k = 3 */
    assert_memory_equal(d, want, sizeof want);
    assert_int_equal(c->len[0], 3 * 8);
    /* ties beyond k: the first ones */
    d = s_one_push(c, (const float[]){1, -1, 1, 1, 0, 0});
    assert_memory_equal(d, ((const float[]){1, -1, 1, 0, 0, 0}), 6 * sizeof(float));
    /* a tie taken leaves room for a larger value after the ties */
    d = s_one_push(c, (const float[]){1, 1, 1, 5, 0, 0});
    assert_memory_equal(d, ((const float[]){1, 1, 0, 5, 0, 0}), 6 * sizeof(float));
    /* NaN counts as the largest: it reaches the shard, which refuses it */
    d = s_one_push(c, (const float[]){1, NAN, 2, 3, 0, 0});
    assert_true(isnan(d[1]) && d[3] == 3 && d[2] == 2 && d[0] == 0);
    compressor_free(&c);
}

static void test_parts_follow_the_shards(void **state)
{
    (void)state;
    /* 7 values over 2 shards ([0, 3) and [3, 7)): each part its own top 1 */
    compress_spec spec = s_spec("topk:0.25", false);
    compressor *c = compressor_new(&spec, 7, 2, 1, 0, &(error){0});
    const float *d = s_one_push(c, (const float[]){1, 2, 9, 3, 8, 1, 7});
    assert_memory_equal(d, ((const float[]){0, 0, 9, 0, 8, 0, 0}), 7 * sizeof(float));
    assert_int_equal(c->lo[1], 3);
    compressor_free(&c);
}

static void test_randomk_is_unbiased_and_distinct(void **state)
{
    (void)state;
    enum { N = 10, DRAWS = 20000 };
    compress_spec spec = s_spec("randomk:0.3", false);
    compressor *c = compressor_new(&spec, N, 1, 7, 2, &(error){0});
    float x[N];
    double mean[N] = {0};
    for (int i = 0; i < N; i++) {
        x[i] = (float)(i + 1);
    }
    for (int t = 0; t < DRAWS; t++) {
        const float *d = s_one_push(c, x);
        int kept = 0;
        for (int i = 0; i < N; i++) {
            kept += d[i] != 0;
            if (d[i] != 0) {
                assert_float_equal(d[i], x[i] * (float)N / 3, 1e-5);   /* scaled n / k */
            }
            mean[i] += d[i] / DRAWS;
        }
        assert_int_equal(kept, 3);
    }
    for (int i = 0; i < N; i++) {   /* a fixed stream: the same numbers every run */
        assert_float_equal(mean[i], x[i], 0.05 * x[i] + 0.05);
    }
    compressor_free(&c);
}

static void test_sign_and_qsgd(void **state)
{
    (void)state;
    compress_spec sign = s_spec("sign", false);
    compressor *c = compressor_new(&sign, 5, 1, 1, 0, &(error){0});
    const float *d = s_one_push(c, (const float[]){1, -2, 3, -4, 0});
    assert_memory_equal(d, ((const float[]){2, -2, 2, -2, 2}), 5 * sizeof(float));
    assert_int_equal(c->len[0], 4 + 1);
    compressor_free(&c);

    /* qsgd:2, 3 levels of the norm 5 for (3, -4): every draw is a level,
     * and the mean over many is the value itself */
    enum { DRAWS = 20000 };
    compress_spec q = s_spec("qsgd:2", false);
    c = compressor_new(&q, 2, 1, 3, 0, &(error){0});
    double mean[2] = {0};
    for (int t = 0; t < DRAWS; t++) {
        d = s_one_push(c, (const float[]){3, -4});
        for (int i = 0; i < 2; i++) {
            float level = fabsf(d[i]) / 5 * 3;
            assert_float_equal(level, roundf(level), 1e-5);
            mean[i] += d[i] / DRAWS;
        }
        assert_true(d[0] >= 0 && d[1] <= 0);
    }
    assert_float_equal(mean[0], 3, 0.05);
    assert_float_equal(mean[1], -4, 0.05);
    assert_int_equal(c->len[0], 8 + 1);   /* 2 fields of 3 bits */
    compressor_free(&c);

    /* values near FLT_MAX, whose norm a float cannot hold: still finite
     * and unbiased levels (the norm became infinite and every value NaN,
     * a finite push refused as diverged, its residual lost) */
    q = s_spec("qsgd:2", true);
    c = compressor_new(&q, 4, 1, 3, 0, &(error){0});
    const float big[4] = {3e38f, -3e38f, 1, 0};
    double sum[4] = {0};
    for (int t = 0; t < DRAWS; t++) {
        compressor_reset(c);
        d = compressor_push(c, big);
        for (int i = 0; i < 4; i++) {
            assert_true(isfinite(d[i]) && isfinite(c->residual[i]));
            sum[i] += d[i];
        }
    }
    assert_float_equal(sum[0] / DRAWS / 3e38, 1, 0.05);
    assert_float_equal(sum[1] / DRAWS / 3e38, -1, 0.05);
    assert_true(d[3] == 0);
    compressor_free(&c);
    /* a diverged push stays one: an infinite value, or a NaN with its
     * sign bit set (x86's 0/0), decodes to values that are not finite,
     * for the shard to refuse (the infinite one was clamped to a finite
     * 2e37 step; the NaN's norm, -NaN, was refused by the push's own
     * decode, and the worker aborted) */
    const float diverged[2][4] = {{1, INFINITY, 3, 4}, {1, copysignf(NAN, -1), 3, 4}};
    for (int k = 0; k < 2; k++) {
        for (int sign = 0; sign < 2; sign++) {
            compress_spec spec = s_spec(sign ? "sign" : "qsgd:4", false);
            c = compressor_new(&spec, 4, 1, 3, 0, &(error){0});
            d = compressor_push(c, diverged[k]);
            bool finite = true;
            for (int i = 0; i < 4; i++) {
                finite = finite && isfinite(d[i]);
            }
            if (finite) {
                fail_msg("%s of a push with %s: every value finite", sign ? "sign" : "qsgd",
                         k ? "-NaN" : "inf");
            }
            compressor_free(&c);
        }
    }
}

/* With error feedback nothing is lost for good: what the shards took plus
 * the residual is what was pushed, over any number of pushes. */
static void test_error_feedback_keeps_what_was_dropped(void **state)
{
    (void)state;
    enum { N = 64, PUSHES = 50 };
    const char *kinds[] = {"topk:0.05", "sign", "fp16", "randomk:0.1", "qsgd:3"};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        compress_spec spec = s_spec(kinds[k], true);
        compressor *c = compressor_new(&spec, N, 3, 5, 1, &(error){0});
        double pushed[N] = {0}, taken[N] = {0};
        rng r = rng_derive(9, RNG_DATA, k);
        for (int t = 0; t < PUSHES; t++) {
            float x[N];
            for (int i = 0; i < N; i++) {
                x[i] = (float)rng_normal(&r);
                pushed[i] += x[i];
            }
            const float *d = compressor_push(c, x);
            for (int i = 0; i < N; i++) {
                taken[i] += d[i];
            }
        }
        for (int i = 0; i < N; i++) {
            if (fabs(taken[i] + c->residual[i] - pushed[i]) > 1e-3) {
                fail_msg("%s: %g + %g != %g", kinds[k], taken[i], (double)c->residual[i], pushed[i]);
            }
        }
        compressor_free(&c);
    }
    /* randomk under error feedback sends the values unscaled */
    compress_spec ef = s_spec("randomk:0.5", true);
    compressor *r = compressor_new(&ef, 4, 1, 1, 0, &(error){0});
    const float *d = compressor_push(r, (const float[]){1, 2, 3, 4});
    for (int i = 0; i < 4; i++) {
        assert_true(d[i] == 0 || d[i] == (float)(i + 1));
        assert_true(r->residual[i] == (d[i] == 0 ? (float)(i + 1) : 0));
    }
    compressor_free(&r);
    /* without it, topk's dropped values are gone */
    compress_spec spec = s_spec("topk:0.5", false);
    compressor *c = compressor_new(&spec, 2, 1, 1, 0, &(error){0});
    assert_null(c->residual);
    compressor_free(&c);
}

static void test_decode_refuses_broken_payloads(void **state)
{
    (void)state;
    float out[16];
    const char *why;
    uint8_t sparse[16] = {3, 0, 0, 0, 0, 0, 0x80, 0x3f, 2, 0, 0, 0, 0, 0, 0x80, 0x3f};
    assert_int_equal(compress_decode(FORMAT_SPARSE, 0, sparse, 16, 8, out, &why), -1);
    sparse[8] = 3;   /* the same index twice */
    assert_int_equal(compress_decode(FORMAT_SPARSE, 0, sparse, 16, 8, out, &why), -1);
    sparse[8] = 9;   /* past the part */
    assert_int_equal(compress_decode(FORMAT_SPARSE, 0, sparse, 16, 8, out, &why), -1);
    sparse[8] = 7;
    assert_int_equal(compress_decode(FORMAT_SPARSE, 0, sparse, 16, 8, out, &why), 0);
    assert_true(out[3] == 1 && out[7] == 1 && out[0] == 0);
    assert_int_equal(compress_decode(FORMAT_SPARSE, 0, sparse, 12, 8, out, &why), -1);
    assert_int_equal(compress_decode(FORMAT_SPARSE, 0, sparse, 16, 1, out, &why), -1);
    /* signs: 5 values use 5 bits of their byte; the rest must be 0 */
    uint8_t signs[5] = {0, 0, 0x80, 0x3f, 0x1f};
    assert_int_equal(compress_decode(FORMAT_SIGNS, 0, signs, 5, 5, out, &why), 0);
    assert_true(out[0] == -1 && out[4] == -1);
    signs[4] = 0x20;
    assert_int_equal(compress_decode(FORMAT_SIGNS, 0, signs, 5, 5, out, &why), -1);
    assert_int_equal(compress_decode(FORMAT_SIGNS, 0, signs, 5, 9, out, &why), -1);
    /* a scale below 0 (-1 here, or -0) would turn every sign over */
    uint8_t negative[5] = {0, 0, 0x80, 0xbf, 0x1f}, minus_zero[5] = {0, 0, 0, 0x80, 0};
    assert_int_equal(compress_decode(FORMAT_SIGNS, 0, negative, 5, 5, out, &why), -1);
    assert_string_equal(why, "sign payload's scale is negative");
    assert_int_equal(compress_decode(FORMAT_SIGNS, 0, minus_zero, 5, 5, out, &why), -1);
    /* levels: the bits it states must be the run's, padding 0 */
    uint8_t levels[9] = {0, 0, 0x80, 0x3f, 2, 0, 0, 0, 0x06};   /* 1: level 3 of 3 */
    assert_int_equal(compress_decode(FORMAT_LEVELS, 2, levels, 9, 2, out, &why), 0);
    assert_true(out[0] == 1 && out[1] == 0);
    assert_int_equal(compress_decode(FORMAT_LEVELS, 3, levels, 9, 2, out, &why), -1);
    levels[8] = 0x46;
    assert_int_equal(compress_decode(FORMAT_LEVELS, 2, levels, 9, 2, out, &why), -1);
    levels[8] = 0x06;   /* the norm -1 */
    levels[3] = 0xbf;
    assert_int_equal(compress_decode(FORMAT_LEVELS, 2, levels, 9, 2, out, &why), -1);
    assert_string_equal(why, "qsgd payload's norm is negative");
    /* sizes */
    assert_true(compress_size_ok(FORMAT_F16, 0, 8, 16));
    assert_false(compress_size_ok(FORMAT_F16, 0, 8, 15));
    assert_false(compress_size_ok(FORMAT_BF16, 0, 8, 32));
    assert_false(compress_size_ok(FORMAT_LEVELS, 0, 8, 8));
    assert_false(compress_size_ok(FORMAT_LEVELS, 17, 8, 8 + 18));
    assert_false(compress_size_ok(99, 0, 8, 32));
}

static void test_bad_keys(void **state)
{
    (void)state;
    const char *bad[] = {"topk", "topk:0", "topk:1.5", "topk:x", "randomk:", "qsgd:0",
                         "qsgd:17", "qsgd:2.5", "sign:1", "fp16:2", "zip", "",
                         /* a number as no other key takes one: hex, a denormal
                          * (a fraction of nothing), not finite */
                         "topk:0x.8", "topk:1e-320", "randomk:nan", "topk:0.1x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char ini[128];
        snprintf(ini, sizeof ini, "[algorithm]\ncompress = %s\n", bad[i]);
        error err = {0};
        config *c = config_parse_string(ini, "bad.ini", &err);
        compress_spec s;
        assert_int_equal(compress_spec_configure(&s, c, &err), -1);
        assert_int_equal(err.status, ERROR_USAGE);
        assert_non_null(strstr(err.msg, "bad.ini:2"));
        assert_non_null(strstr(err.msg, "compress"));
        config_destroy(&c);
    }
    error err = {0};
    config *c = config_parse_string("[algorithm]\nerror_feedback = maybe\n", "bad.ini", &err);
    compress_spec s;
    assert_int_equal(compress_spec_configure(&s, c, &err), -1);
    assert_non_null(strstr(err.msg, "error_feedback"));
    config_destroy(&c);
    char name[32];
    compress_spec_name(&(compress_spec){.kind = COMPRESS_TOPK, .fraction = 0.01}, name,
                       sizeof name);
    assert_string_equal(name, "topk:0.01");
    /* every digit given: "%g" named 0.3333333 and 0.333333 alike */
    compress_spec_name(&(compress_spec){.kind = COMPRESS_RANDOMK, .fraction = 0.3333333}, name,
                       sizeof name);
    assert_string_equal(name, "randomk:0.3333333");
}

/* A shard takes pushes in its run's encoding only, at the size that
 * encoding gives its range. */
static void test_the_wire_takes_the_runs_encoding(void **state)
{
    (void)state;
    wire_limits lim = {.shard = 0, .lo = 0, .hi = 10, .workers = 2,
                       .push_encoding = WIRE_SPARSE};
    wire_header h = {.type = WIRE_PUSH, .worker = 1, .shard = 0, .offset = 0, .count = 10,
                     .encoding = WIRE_SPARSE};
    uint8_t buf[WIRE_HEADER_SIZE];
    wire_header out;
    const char *why;
    wire_encode(buf, &h);
    assert_int_equal(wire_decode(&out, buf, sizeof buf, 2, 24, &lim, &why), 0);
    assert_int_equal(wire_decode(&out, buf, sizeof buf, 2, 20, &lim, &why), -1);
    assert_int_equal(wire_decode(&out, buf, sizeof buf, 2, 88, &lim, &why), -1);   /* > 10 pairs */
    h.encoding = WIRE_F32;   /* plain floats to a shard of a compressed run */
    wire_encode(buf, &h);
    assert_int_equal(wire_decode(&out, buf, sizeof buf, 2, 40, &lim, &why), -1);
    lim.push_encoding = WIRE_LEVELS;
    lim.push_bits = 4;
    h.encoding = WIRE_LEVELS;
    wire_encode(buf, &h);
    assert_int_equal(wire_decode(&out, buf, sizeof buf, 2, 8 + 7, &lim, &why), 0);
    assert_int_equal(wire_decode(&out, buf, sizeof buf, 2, 8 + 8, &lim, &why), -1);
    for (int f = FORMAT_F32; f <= FORMAT_LEVELS; f++) {
        assert_int_equal(wire_format_of(wire_encoding_of(f)), f);
    }
    assert_int_equal(wire_format_of(WIRE_JSON), -1);
}

/* 16-bit pushes decode to each entry's 16-bit value through the payload's
 * byte order (error feedback's bookkeeping holds whatever the decoder
 * gives, so it cannot tell); 65520, which would round to infinity, goes as
 * 65504, and a subnormal half rounds to nearest, ties to even. */
static void test_halves_decode_to_the_values_pushed(void **state)
{
    (void)state;
    assert_int_equal(compress_to_f16(65520.0f), 0x7bff);
    assert_int_equal(compress_to_f16(-65520.0f), 0xfbff);
    assert_int_equal(compress_to_f16(3 * 0x1p-25f), 0x0002);   /* 1.5 of the smallest: up */
    assert_int_equal(compress_to_f16(5 * 0x1p-25f), 0x0002);   /* 2.5: to even */
    const float x[] = {1, -2, 0.5f, 65520, 3 * 0x1p-25f, 1 + 0x1p-9f};
    const float want[2][6] = {{1, -2, 0.5f, 65504, 2 * 0x1p-24f, 1 + 0x1p-9f},
                              {1, -2, 0.5f, 65536, 3 * 0x1p-25f, 1}};
    const char *kinds[2] = {"fp16", "bf16"};
    for (int k = 0; k < 2; k++) {
        compress_spec spec = s_spec(kinds[k], false);
        compressor *c = compressor_new(&spec, 6, 2, 1, 0, &(error){0});
        const float *d = s_one_push(c, x);
        for (int i = 0; i < 6; i++) {
            if (d[i] != want[k][i]) {
                fail_msg("%s: entry %d decodes to %g, not %g", kinds[k], i, d[i], want[k][i]);
            }
        }
        assert_int_equal(c->len[0] + c->len[1], 2 * 6);
        compressor_free(&c);
    }
}

/* A sparse payload may name every index of its part (topk:1 sends them
 * all) but none past it: index count is one beyond the part, where the
 * shard would write outside its range. */
static void test_sparse_indices_stay_in_the_part(void **state)
{
    (void)state;
    uint8_t sparse[24] = {0, 0, 0, 0, 0, 0, 0x80, 0x3f, 1, 0, 0, 0, 0, 0, 0x80, 0x3f,
                          2, 0, 0, 0, 0, 0, 0x80, 0x3f};
    float out[4] = {0, 0, 0, 7};
    const char *why;
    assert_true(compress_size_ok(FORMAT_SPARSE, 0, 3, 24));
    assert_int_equal(compress_decode(FORMAT_SPARSE, 0, sparse, 24, 3, out, &why), 0);
    assert_true(out[0] == 1 && out[1] == 1 && out[2] == 1 && out[3] == 7);
    sparse[16] = 3;   /* the last pair at index 3 of a part of 3 */
    assert_int_equal(compress_decode(FORMAT_SPARSE, 0, sparse, 24, 3, out, &why), -1);
    assert_true(out[3] == 7);
    /* topk:1 sends the whole vector, every entry as it is */
    compress_spec spec = s_spec("topk:1", false);
    compressor *c = compressor_new(&spec, 5, 1, 1, 0, &(error){0});
    const float x[] = {0.5f, -1, 0, 3, -0.25f};
    assert_memory_equal(s_one_push(c, x), x, sizeof x);
    assert_int_equal(c->len[0], 5 * 8);
    compressor_free(&c);
}

/* How many entries top-k keeps: fraction x count to the nearest, and at
 * least one: 0.6 of 6 is 4 (not 3), 0.01 of 10 still sends the largest. */
static void test_topk_keeps_the_rounded_share(void **state)
{
    (void)state;
    compress_spec spec = s_spec("topk:0.6", false);
    compressor *c = compressor_new(&spec, 6, 1, 1, 0, &(error){0});
    const float *d = s_one_push(c, (const float[]){6, 1, 5, 2, 4, 3});
    assert_memory_equal(d, ((const float[]){6, 0, 5, 0, 4, 3}), 6 * sizeof(float));
    assert_int_equal(c->len[0], 4 * 8);
    compressor_free(&c);
    spec = s_spec("topk:0.01", false);
    c = compressor_new(&spec, 10, 1, 1, 0, &(error){0});
    d = s_one_push(c, (const float[]){1, 2, 3, -9, 4, 5, 6, 7, 8, 0});
    assert_memory_equal(d, ((const float[]){0, 0, 0, -9, 0, 0, 0, 0, 0, 0}),
                        10 * sizeof(float));
    assert_int_equal(c->len[0], 8);
    compressor_free(&c);
}

/* Error feedback carries no NaN or infinity: one that is pushed is sent
 * (the shard refuses that push) and forgotten; carried, it would make
 * every later push NaN. */
static void test_error_feedback_drops_what_is_not_finite(void **state)
{
    (void)state;
    compress_spec spec = s_spec("topk:0.5", true);
    compressor *c = compressor_new(&spec, 4, 1, 1, 0, &(error){0});
    const float *d = compressor_push(c, (const float[]){NAN, INFINITY, 1, 0.5f});
    assert_true(isnan(d[0]) && isinf(d[1]) && d[2] == 0 && d[3] == 0);
    assert_true(c->residual[0] == 0 && c->residual[1] == 0);
    assert_true(c->residual[2] == 1 && c->residual[3] == 0.5f);
    d = compressor_push(c, (const float[]){1, 1, 1, 1});   /* input 1, 1, 2, 1.5 */
    assert_memory_equal(d, ((const float[]){0, 0, 2, 1.5f}), 4 * sizeof(float));
    for (int i = 0; i < 4; i++) {
        assert_true(isfinite(c->residual[i]));
    }
    compressor_free(&c);
}

/* compressor_reset makes it a fresh compressor: no residual, and its seeded
 * stream from the start (a restarted worker has lost both); each worker
 * has a stream of its own, so that random-k workers do not all send the
 * same entries. */
static void test_reset_is_a_fresh_compressor_and_workers_differ(void **state)
{
    (void)state;
    enum { N = 16 };
    compress_spec spec = s_spec("randomk:0.25", true);
    compressor *used = compressor_new(&spec, N, 1, 3, 1, &(error){0});
    compressor *fresh = compressor_new(&spec, N, 1, 3, 1, &(error){0});
    float x[N];
    for (int i = 0; i < N; i++) {
        x[i] = (float)(i + 1);
    }
    for (int t = 0; t < 3; t++) {
        compressor_push(used, x);
    }
    compressor_reset(used);
    const float *a = compressor_push(used, x), *b = compressor_push(fresh, x);
    assert_memory_equal(a, b, N * sizeof(float));
    assert_memory_equal(used->residual, fresh->residual, N * sizeof(float));
    /* workers 1 and 2 of the same seed send other entries */
    compressor *w1 = compressor_new(&spec, N, 1, 3, 1, &(error){0});
    compressor *w2 = compressor_new(&spec, N, 1, 3, 2, &(error){0});
    bool differ = false;
    for (int t = 0; t < 4; t++) {
        const float *d1 = compressor_push(w1, x), *d2 = compressor_push(w2, x);
        differ |= memcmp(d1, d2, N * sizeof(float)) != 0;
    }
    assert_true(differ);
    compressor_free(&used);
    compressor_free(&fresh);
    compressor_free(&w1);
    compressor_free(&w2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_half_floats_bit_by_bit),
        cmocka_unit_test(test_topk_keeps_the_largest_in_index_order),
        cmocka_unit_test(test_parts_follow_the_shards),
        cmocka_unit_test(test_randomk_is_unbiased_and_distinct),
        cmocka_unit_test(test_sign_and_qsgd),
        cmocka_unit_test(test_error_feedback_keeps_what_was_dropped),
        cmocka_unit_test(test_decode_refuses_broken_payloads),
        cmocka_unit_test(test_bad_keys),
        cmocka_unit_test(test_the_wire_takes_the_runs_encoding),
        cmocka_unit_test(test_halves_decode_to_the_values_pushed),
        cmocka_unit_test(test_sparse_indices_stay_in_the_part),
        cmocka_unit_test(test_topk_keeps_the_rounded_share),
        cmocka_unit_test(test_error_feedback_drops_what_is_not_finite),
        cmocka_unit_test(test_reset_is_a_fresh_compressor_and_workers_differ),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
