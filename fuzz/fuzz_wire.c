/* fuzz_wire.c: libFuzzer harness for the wire decoder, the first code a
 * hostile peer's bytes reach on a shard, a worker or the evaluator.
 *
 * Input: one mode byte (bit 0: a second frame; bit 1: decode as a reply
 * instead of a request; bit 2: the receiver is shard 1 instead of 0), the
 * payload frame's length (4 bytes, little-endian), then the header frame.
 * A message the decoder accepts must be one its callers can trust: it
 * encodes back to the same bytes, and its payload, if any, covers exactly
 * the receiver's elements. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "fuzz/common.h"
#include "transport/wire.h"

enum { LO = 100, HI = 1100, WORKERS = 4 };

/* What every accepted message promises, request or reply. */
static void s_check_accepted(const wire_header *h, const uint8_t *buf, size_t len, int frames,
                             size_t payload_len)
{
    uint8_t again[WIRE_HEADER_SIZE];
    if (len != WIRE_HEADER_SIZE) {
        fuzz_fail("accepted a header frame of the wrong size");
    }
    wire_encode(again, h);
    if (memcmp(again, buf, WIRE_HEADER_SIZE) != 0) {
        fuzz_fail("an accepted header does not encode back to its bytes");
    }
    bool floats = (h->type == WIRE_PUSH || h->type == WIRE_REPLY) && h->encoding == WIRE_F32;
    if (floats && (frames != 2 || h->offset != LO || h->count != HI - LO ||
                   payload_len != h->count * sizeof(float))) {
        fuzz_fail("accepted a float payload that is not exactly the receiver's elements");
    }
    bool attach = h->type == WIRE_CONTROL && h->tag == WIRE_CONTROL_ATTACH;
    if (attach && (frames != 2 || payload_len != WIRE_ATTACH_SIZE || h->encoding != WIRE_SHM)) {
        fuzz_fail("accepted an ATTACH that does not carry exactly one segment's name");
    }
    bool shared = (h->type == WIRE_PUSH || h->type == WIRE_REPLY) && h->encoding == WIRE_SHM;
    if (shared && (h->offset != LO || h->count != HI - LO)) {
        fuzz_fail("accepted values in a shared segment that are not the receiver's elements");
    }
    if (!floats && !attach && h->encoding != WIRE_JSON && frames != 1) {
        fuzz_fail("accepted a payload frame on a message that has none");
    }
}

/* The request-only promises: who may say what. */
static void s_check_request(const wire_header *h, uint32_t shard)
{
    /* a total is a reply's field, and a push's (its worker's examples) */
    if (h->shard != shard || h->type == WIRE_REPLY || (h->total != 0 && h->type != WIRE_PUSH)) {
        fuzz_fail("accepted a request for another shard, a reply or a reply's field");
    }
    bool worker = h->worker < WORKERS;
    if (h->type == WIRE_PUSH && !worker) {
        fuzz_fail("accepted a push from no worker");
    }
    if (h->type == WIRE_CONTROL && h->tag != WIRE_CONTROL_DONE &&
        h->tag != WIRE_CONTROL_STATS && h->tag != WIRE_CONTROL_ATTACH) {
        fuzz_fail("accepted a control message of no kind the shard knows (3: the old SHUTDOWN)");
    }
    if (h->type != WIRE_CONTROL && h->worker == WIRE_ANY) {
        fuzz_fail("accepted a pull or push from a tool");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 5) {
        return 0;
    }
    uint8_t mode = data[0];
    size_t payload_len = (size_t)data[1] | (size_t)data[2] << 8 | (size_t)data[3] << 16 |
                         (size_t)data[4] << 24;
    const uint8_t *buf = data + 5;
    size_t len = size - 5;
    int frames = mode & 1 ? 2 : 1;
    uint32_t shard = mode & 4 ? 1 : 0;
    wire_header h;
    const char *why = NULL;
    int rc;
    if (mode & 2) {
        rc = wire_decode_reply(&h, buf, len, frames, payload_len, shard, LO, HI, &why);
    } else {
        wire_limits lim = {.shard = shard, .lo = LO, .hi = HI, .workers = WORKERS};
        rc = wire_decode(&h, buf, len, frames, payload_len, &lim, &why);
        if (rc == 0) {
            s_check_request(&h, shard);
        }
    }
    if (rc == 0) {
        s_check_accepted(&h, buf, len, frames, payload_len);
    } else if (!why || !why[0]) {
        fuzz_fail("refused a message without saying why");
    }
    return 0;
}
