/* wire.h: the asgd wire format.
 *
 * A message is one header frame and, for pushes and pull replies, one
 * payload frame: raw little-endian float32 values, or for a push under
 * [algorithm] compress one of the compressed payloads of core/compress.h. The header is a fixed
 * 80-byte little-endian struct, encoded field by field so that it means
 * the same on any host:
 *
 *   off size field         meaning
 *     0   4  magic         WIRE_MAGIC ("ASGD")
 *     4   2  protocol      WIRE_PROTOCOL
 *     6   2  type          enum wire_type
 *     8   4  worker        sender's worker index (WIRE_EVALUATOR, WIRE_ANY)
 *    12   4  shard         the shard the message is for / from
 *    16   8  tag           push: round or clock; control: enum wire_control;
 *                          pull: the shard's version in the sender's last
 *                          reply from it; reply: staleness of the worker's
 *                          last push
 *    24   8  base_version  push: version computed on; pull: minimum version
 *                          wanted; reply: the shard's version; done: the
 *                          messages to this shard that the sender's fault
 *                          injection dropped (core/faults.h)
 *    32   8  offset        first element of the payload in the full vector
 *    40   8  count         elements in the payload
 *    48   2  encoding      enum wire_encoding
 *    50   2  flags         enum wire_flags (a push's verdict; reply flags)
 *    52   4  samples       push: examples behind this push; done: the
 *                          messages to this shard it sent twice
 *    56   8  total         reply: examples pushed so far, to the evaluator
 *                          by every worker, to a worker by that worker;
 *                          push: the examples of every push this worker
 *                          sent the shard, this one's included, counted
 *                          across its processes (0: not counted, as a
 *                          lockstep rule's rounds are not), so that a
 *                          step the shard has already is taken once
 *    64   8  seq           request: its number from this sender to this
 *                          shard (1, 2, ...; a resent request keeps its
 *                          number); reply: the number of the request it
 *                          answers
 *    72   4  generation    request: the shard's generation the sender last
 *                          heard (0: none yet); reply: the shard's own
 *                          (drawn at random by each process of it, a
 *                          restored one's never its checkpoint's)
 *    76   4  job           a hash of the job's settings that every process of
 *                          it must share (experiment_job: [data] but where
 *                          its files are, [model], [train], [algorithm] and
 *                          the seed); request: the sender's, reply: the
 *                          shard's (0: none given, as a tool's; unchecked)
 *
 * A client on the shard's host may attach a shared segment (shm.h) and
 * then send pushes, and receive replies, whose values are in it: encoding
 * WIRE_SHM, the header alone.
 *
 * wire_decode() validates every field against the receiving shard before
 * anything touches parameters; a message that fails is rejected whole.
 * A shard's empty single-frame message is a liveness probe (senders.h),
 * which clients skip. */
#ifndef ASGD_WIRE_H
#define ASGD_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WIRE_MAGIC 0x44475341u     /* "ASGD" read as little-endian bytes */
#define WIRE_PROTOCOL 5
#define WIRE_HEADER_SIZE 80
#define WIRE_EVALUATOR 0xfffffffeu /* worker field of the evaluator */
#define WIRE_ANY 0xffffffffu       /* worker field of a tool: it may only ask for counters */

enum wire_type { WIRE_PULL = 1, WIRE_PUSH, WIRE_REPLY, WIRE_CONTROL };
enum wire_encoding {
    WIRE_F32 = 0, WIRE_NO_PAYLOAD = 1, WIRE_JSON = 2,
    /* compressed pushes (core/compress.h's formats) */
    WIRE_F16 = 3, WIRE_BF16 = 4, WIRE_SPARSE = 5, WIRE_SIGNS = 6, WIRE_LEVELS = 7,
    /* float32 values in the shared segment of the client and the shard
     * (transport/shm.h), no payload frame: a push's in the push area, a
     * reply's in the reply area; an ATTACH's payload names the segment */
    WIRE_SHM = 8,
};
enum wire_control {
    WIRE_CONTROL_DONE = 1,     /* this worker / the evaluator has finished */
    WIRE_CONTROL_STATS,        /* reply carries the shard's counters as JSON */
    /* 3 was SHUTDOWN, "stop serving now", which no asgd process sent: a
     * forged one as the evaluator stopped a shard, exit 0 (refused now as
     * an unknown control message) */
    WIRE_CONTROL_ATTACH = 4,   /* take this shared segment (payload: WIRE_ATTACH_SIZE
                                  bytes, encoding WIRE_SHM); reply tag 1: taken */
};
#define WIRE_ATTACH_SIZE 80        /* a segment's path (64 bytes) and token (16) */
enum wire_flags {
    WIRE_FLAG_WORKERS_DONE = 1,   /* reply: every worker has finished */
    WIRE_FLAG_VERDICT = 2,        /* push to shard 0, the round's leader: reply
                                     with whether it made the round (tag 1) or
                                     was late (tag 2) */
    WIRE_FLAG_IN_ROUND = 4,       /* push to another shard: the leader took it */
    WIRE_FLAG_LATE = 8,           /* push to another shard: the leader dropped it */
    WIRE_FLAG_RESTARTED = 16,     /* reply: the shard was restored from a checkpoint
                                     since the sender last heard from it; its
                                     parameters and version went back */
    WIRE_FLAG_ACK = 32,           /* push: reply once it is taken (with faults
                                     injected, a lost push is sent again) */
    WIRE_FLAG_REFUSED = 64,       /* reply, no payload: the shard took nothing, as
                                     the sender does not speak for its index; the tag
                                     says why (senders.h: 1, another process still
                                     there holds it; 2, the sender's CURVE key is
                                     another's; 3, no such index) */
};

typedef struct wire_header {
    uint16_t type;
    uint32_t worker;
    uint32_t shard;
    uint64_t tag;
    uint64_t base_version;
    uint64_t offset;
    uint64_t count;
    uint16_t encoding;
    uint16_t flags;
    uint32_t samples;
    uint64_t total;
    uint64_t seq;
    uint32_t generation;
    uint32_t job;
} wire_header;

/* What the receiver accepts: its shard index and element range, how many
 * workers may speak to it, and the one encoding its pushes come in (the
 * run's compression; 0 is float32). */
typedef struct wire_limits {
    uint32_t shard;
    uint64_t lo, hi;           /* the shard owns elements [lo, hi) */
    uint32_t workers;
    uint16_t push_encoding;    /* enum wire_encoding */
    int push_bits;             /* WIRE_LEVELS: the run's qsgd bits */
    bool no_evaluator;         /* the job has none: a message as WIRE_EVALUATOR is a
                                  stranger's (its slot would be open all run long) */
} wire_limits;

/* The wire encoding of a compress.h payload format, and back (-1: none). */
uint16_t wire_encoding_of(int format);
int wire_format_of(uint16_t encoding);

void wire_encode(uint8_t out[WIRE_HEADER_SIZE], const wire_header *h);

/* Decodes and validates a message of `frames` frames whose header frame is
 * (buf, len) and whose payload frame, if any, is payload_len bytes. On a
 * bad message returns -1 and sets *why to a static description. */
int wire_decode(wire_header *h, const uint8_t *buf, size_t len, int frames,
                size_t payload_len, const wire_limits *lim, const char **why);

/* The same checks for a reply received by a worker or the evaluator. */
int wire_decode_reply(wire_header *h, const uint8_t *buf, size_t len, int frames,
                      size_t payload_len, uint32_t shard, uint64_t lo, uint64_t hi,
                      const char **why);

#endif
