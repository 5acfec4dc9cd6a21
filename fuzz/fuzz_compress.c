/* fuzz_compress.c: libFuzzer harness for the compressed-push decoder,
 * which a shard of a compressed run hands a hostile peer's payload.
 *
 * Input: the format (1 byte, taken modulo the formats), the qsgd bits (1
 * byte), the part's value count (2 bytes, little-endian), then the
 * payload. What the decoder accepts must be what its format promises: a
 * sparse payload sets at most its pairs' values, a sign payload only
 * plus or minus one scale, and 16-bit payloads encode back to their own
 * bytes (NaN aside). */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/compress.h"
#include "fuzz/common.h"

static void s_check_accepted(int format, const uint8_t *payload, size_t len, size_t count,
                             const float *out)
{
    size_t set = 0;
    for (size_t i = 0; i < count; i++) {
        set += out[i] != 0;
    }
    if (format == FORMAT_SPARSE && set > len / 8) {
        fuzz_fail("a sparse payload set more values than it has pairs");
    }
    for (size_t i = 0; format == FORMAT_SIGNS && i < count; i++) {
        if (fabsf(out[i]) != fabsf(out[0]) && !isnan(out[i])) {
            fuzz_fail("a sign payload gave values of more than one magnitude");
        }
    }
    for (size_t i = 0; (format == FORMAT_F16 || format == FORMAT_BF16) && i < count; i++) {
        uint16_t h = format == FORMAT_F16 ? compress_to_f16(out[i]) : compress_to_bf16(out[i]);
        if (!isnan(out[i]) && (payload[2 * i] != (uint8_t)h || payload[2 * i + 1] != h >> 8)) {
            fuzz_fail("a 16-bit value does not encode back to its bytes");
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4) {
        return 0;
    }
    int format = data[0] % (FORMAT_LEVELS + 1), bits = data[1];
    size_t count = (size_t)data[2] | (size_t)data[3] << 8;
    const uint8_t *payload = data + 4;
    size_t len = size - 4;
    float *out = malloc((count ? count : 1) * sizeof *out);
    if (!out) {
        return 0;
    }
    const char *why = NULL;
    if (compress_decode(format, bits, payload, len, count, out, &why) == 0) {
        s_check_accepted(format, payload, len, count, out);
    } else if (!why || !why[0]) {
        fuzz_fail("refused a payload without saying why");
    }
    free(out);
    return 0;
}
