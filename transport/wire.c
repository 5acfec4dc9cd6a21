/* wire.c: encoding and validating message headers. */
#include "transport/wire.h"

#include "core/compress.h"

static void s_put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void s_put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) {
        p[i] = (uint8_t)(v >> (8 * i));
    }
}

static void s_put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) {
        p[i] = (uint8_t)(v >> (8 * i));
    }
}

static uint16_t s_get16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t s_get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t s_get64(const uint8_t *p)
{
    return (uint64_t)s_get32(p) | (uint64_t)s_get32(p + 4) << 32;
}

void wire_encode(uint8_t out[WIRE_HEADER_SIZE], const wire_header *h)
{
    s_put32(out + 0, WIRE_MAGIC);
    s_put16(out + 4, WIRE_PROTOCOL);
    s_put16(out + 6, h->type);
    s_put32(out + 8, h->worker);
    s_put32(out + 12, h->shard);
    s_put64(out + 16, h->tag);
    s_put64(out + 24, h->base_version);
    s_put64(out + 32, h->offset);
    s_put64(out + 40, h->count);
    s_put16(out + 48, h->encoding);
    s_put16(out + 50, h->flags);
    s_put32(out + 52, h->samples);
    s_put64(out + 56, h->total);
    s_put64(out + 64, h->seq);
    s_put32(out + 72, h->generation);
    s_put32(out + 76, h->job);
}

/* Fields common to every message: framing, magic, protocol, type. */
static int s_decode_common(wire_header *h, const uint8_t *buf, size_t len,
                           int frames, const char **why)
{
    if (frames < 1 || frames > 2) {
        *why = "wrong number of frames";
        return -1;
    }
    if (len != WIRE_HEADER_SIZE) {
        *why = "header frame of the wrong size";
        return -1;
    }
    if (s_get32(buf) != WIRE_MAGIC) {
        *why = "bad magic number";
        return -1;
    }
    if (s_get16(buf + 4) != WIRE_PROTOCOL) {
        *why = "unsupported protocol version";
        return -1;
    }
    h->type = s_get16(buf + 6);
    h->worker = s_get32(buf + 8);
    h->shard = s_get32(buf + 12);
    h->tag = s_get64(buf + 16);
    h->base_version = s_get64(buf + 24);
    h->offset = s_get64(buf + 32);
    h->count = s_get64(buf + 40);
    h->encoding = s_get16(buf + 48);
    h->flags = s_get16(buf + 50);
    h->samples = s_get32(buf + 52);
    h->total = s_get64(buf + 56);
    h->seq = s_get64(buf + 64);
    h->generation = s_get32(buf + 72);
    h->job = s_get32(buf + 76);
    if (h->type < WIRE_PULL || h->type > WIRE_CONTROL) {
        *why = "unknown message type";
        return -1;
    }
    if (h->encoding > WIRE_SHM) {
        *why = "unknown payload encoding";
        return -1;
    }
    return 0;
}

uint16_t wire_encoding_of(int format)
{
    return format == FORMAT_F32 ? WIRE_F32 : (uint16_t)(format + WIRE_F16 - FORMAT_F16);
}

int wire_format_of(uint16_t encoding)
{
    return encoding == WIRE_F32 ? FORMAT_F32
           : encoding >= WIRE_F16 && encoding <= WIRE_LEVELS ? encoding - WIRE_F16 + FORMAT_F16
           : -1;
}

/* A payload of `encoding` (its qsgd bits) covering [offset, offset +
 * count) inside [lo, hi). */
static int s_check_range(const wire_header *h, int frames, size_t payload_len,
                         uint64_t lo, uint64_t hi, uint16_t encoding, int bits,
                         const char **why)
{
    if (h->encoding != encoding) {
        *why = encoding == WIRE_F32 ? "payload encoding is not float32"
                                    : "payload encoding is not the run's compression";
        return -1;
    }
    if (frames != 2) {
        *why = "payload frame missing";
        return -1;
    }
    if (h->offset != lo || h->count != hi - lo) {
        *why = "element range is not the shard's";
        return -1;
    }
    if (!compress_size_ok(wire_format_of(encoding), bits, h->count, payload_len)) {
        *why = "payload size does not match the element count";
        return -1;
    }
    return 0;
}

/* Values in the shared segment: the header alone, covering [lo, hi). */
static int s_check_shared(const wire_header *h, int frames, uint64_t lo, uint64_t hi,
                          const char **why)
{
    if (frames != 1) {
        *why = "a payload frame with values in the shared segment";
        return -1;
    }
    if (h->offset != lo || h->count != hi - lo) {
        *why = "element range is not the shard's";
        return -1;
    }
    return 0;
}

static int s_no_payload(const wire_header *h, int frames, const char **why)
{
    if (frames != 1 || h->encoding != WIRE_NO_PAYLOAD || h->count != 0 || h->offset != 0) {
        *why = "unexpected payload";
        return -1;
    }
    return 0;
}

int wire_decode(wire_header *h, const uint8_t *buf, size_t len, int frames,
                size_t payload_len, const wire_limits *lim, const char **why)
{
    if (s_decode_common(h, buf, len, frames, why) < 0) {
        return -1;
    }
    if (h->shard != lim->shard) {
        *why = "message for another shard";
        return -1;
    }
    if (h->total != 0 && h->type != WIRE_PUSH) {
        *why = "reply-only fields set";
        return -1;
    }
    /* pushes may carry one of the round leader's flags: the request to
     * shard 0, or its verdict to the others */
    uint16_t verdicts = WIRE_FLAG_VERDICT | WIRE_FLAG_IN_ROUND | WIRE_FLAG_LATE;
    uint16_t verdict = h->flags & verdicts;
    if (h->flags != 0 && (h->type != WIRE_PUSH || (h->flags & ~(verdicts | WIRE_FLAG_ACK)) ||
                          (verdict & (verdict - 1)))) {
        *why = "flags this message may not carry";
        return -1;
    }
    if ((verdict == WIRE_FLAG_VERDICT) != (verdict != 0 && lim->shard == 0)) {
        *why = "a verdict is asked of shard 0 and given to the others";
        return -1;
    }
    bool is_worker = h->worker < lim->workers;
    if (h->worker == WIRE_EVALUATOR && lim->no_evaluator) {
        *why = "the job has no evaluator";
        return -1;
    }
    switch (h->type) {
    case WIRE_PULL:
        if (!is_worker && h->worker != WIRE_EVALUATOR) {
            *why = "unknown worker";
            return -1;
        }
        if (h->samples != 0) {
            *why = "push-only fields set on a pull";
            return -1;
        }
        return s_no_payload(h, frames, why);
    case WIRE_PUSH:
        if (!is_worker) {
            *why = "unknown worker";
            return -1;
        }
        if (h->encoding == WIRE_SHM) {
            if (lim->push_encoding != WIRE_F32) {
                *why = "payload encoding is not the run's compression";
                return -1;
            }
            return s_check_shared(h, frames, lim->lo, lim->hi, why);
        }
        return s_check_range(h, frames, payload_len, lim->lo, lim->hi, lim->push_encoding,
                             lim->push_bits, why);
    case WIRE_CONTROL:
        if (h->tag != WIRE_CONTROL_DONE && h->tag != WIRE_CONTROL_STATS &&
            h->tag != WIRE_CONTROL_ATTACH) {
            *why = "unknown control message";
            return -1;
        }
        if (!is_worker && h->worker != WIRE_EVALUATOR &&
            (h->worker != WIRE_ANY || h->tag != WIRE_CONTROL_STATS)) {
            *why = "unknown worker (a tool may only ask for the counters)";
            return -1;
        }
        if (h->tag == WIRE_CONTROL_ATTACH) {
            if (h->worker == WIRE_ANY || h->encoding != WIRE_SHM || frames != 2 ||
                payload_len != WIRE_ATTACH_SIZE || h->offset != 0 || h->count != 0) {
                *why = "malformed attach";
                return -1;
            }
            return 0;
        }
        return s_no_payload(h, frames, why);
    default:
        *why = "a server accepts no replies";
        return -1;
    }
}

int wire_decode_reply(wire_header *h, const uint8_t *buf, size_t len, int frames,
                      size_t payload_len, uint32_t shard, uint64_t lo, uint64_t hi,
                      const char **why)
{
    if (s_decode_common(h, buf, len, frames, why) < 0) {
        return -1;
    }
    if (h->type != WIRE_REPLY) {
        *why = "not a reply";
        return -1;
    }
    if (h->shard != shard) {
        *why = "reply from another shard";
        return -1;
    }
    if (h->encoding == WIRE_F32) {
        return s_check_range(h, frames, payload_len, lo, hi, WIRE_F32, 0, why);
    }
    if (h->encoding == WIRE_SHM) {
        return s_check_shared(h, frames, lo, hi, why);
    }
    if (h->encoding == WIRE_JSON) {
        if (frames != 2) {
            *why = "payload frame missing";
            return -1;
        }
        return 0;
    }
    return s_no_payload(h, frames, why);
}
