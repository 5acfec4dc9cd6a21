/* test_wire.c: header round trips, the byte layout, and rejection of every
 * malformed field. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "transport/net.h"
#include "transport/wire.h"

static const wire_limits s_lim = {.shard = 2, .lo = 100, .hi = 150, .workers = 4};

static wire_header s_push(void)
{
    return (wire_header){.type = WIRE_PUSH, .worker = 3, .shard = 2, .tag = 0x1122334455667788ULL,
                         .base_version = 41, .offset = 100, .count = 50,
                         .encoding = WIRE_F32, .samples = 64, .seq = 0x0102030405060708ULL,
                         .generation = 0xdeadbeef, .job = 0x80c0ffee};
}

/* Field by field: the struct's padding bytes mean nothing. */
static void s_expect_same(const wire_header *a, const wire_header *b)
{
    assert_int_equal(a->type, b->type);
    assert_int_equal(a->worker, b->worker);
    assert_int_equal(a->shard, b->shard);
    assert_true(a->tag == b->tag);
    assert_true(a->base_version == b->base_version);
    assert_true(a->offset == b->offset);
    assert_true(a->count == b->count);
    assert_int_equal(a->encoding, b->encoding);
    assert_int_equal(a->flags, b->flags);
    assert_int_equal(a->samples, b->samples);
    assert_true(a->total == b->total);
    assert_true(a->seq == b->seq);
    assert_true(a->generation == b->generation);
    assert_true(a->job == b->job);
}

static int s_decode(const wire_header *in, int frames, size_t payload, const char **why)
{
    uint8_t buf[WIRE_HEADER_SIZE];
    wire_encode(buf, in);
    wire_header out;
    return wire_decode(&out, buf, sizeof buf, frames, payload, &s_lim, why);
}

static void test_round_trip_every_type(void **state)
{
    (void)state;
    wire_header push = s_push();
    wire_header pull = {.type = WIRE_PULL, .worker = 0, .shard = 2, .base_version = 7,
                        .encoding = WIRE_NO_PAYLOAD};
    wire_header eval = {.type = WIRE_PULL, .worker = WIRE_EVALUATOR, .shard = 2,
                        .encoding = WIRE_NO_PAYLOAD};
    wire_header done = {.type = WIRE_CONTROL, .worker = 1, .shard = 2,
                        .tag = WIRE_CONTROL_DONE, .encoding = WIRE_NO_PAYLOAD};
    const wire_header *all[] = {&push, &pull, &eval, &done};
    const int frames[] = {2, 1, 1, 1};
    const size_t payloads[] = {200, 0, 0, 0};
    for (int i = 0; i < 4; i++) {
        uint8_t buf[WIRE_HEADER_SIZE];
        wire_encode(buf, all[i]);
        wire_header out;
        const char *why = NULL;
        assert_int_equal(wire_decode(&out, buf, sizeof buf, frames[i], payloads[i], &s_lim, &why), 0);
        s_expect_same(&out, all[i]);
    }
    /* a reply, as a worker checks it */
    wire_header reply = {.type = WIRE_REPLY, .worker = 3, .shard = 2, .tag = 5, .base_version = 9,
                         .offset = 100, .count = 50, .encoding = WIRE_F32,
                         .flags = WIRE_FLAG_WORKERS_DONE, .total = 1ULL << 40};
    uint8_t buf[WIRE_HEADER_SIZE];
    wire_encode(buf, &reply);
    wire_header out;
    const char *why;
    assert_int_equal(wire_decode_reply(&out, buf, sizeof buf, 2, 200, 2, 100, 150, &why), 0);
    s_expect_same(&out, &reply);
}

static void test_layout_is_little_endian(void **state)
{
    (void)state;
    wire_header h = s_push();
    uint8_t buf[WIRE_HEADER_SIZE];
    wire_encode(buf, &h);
    assert_memory_equal(buf, "ASGD", 4);
    assert_int_equal(buf[4], WIRE_PROTOCOL);
    assert_int_equal(buf[6], WIRE_PUSH);
    assert_int_equal(buf[8], 3);
    assert_int_equal(buf[16], 0x88);      /* tag, least significant byte first */
    assert_int_equal(buf[23], 0x11);
    assert_int_equal(buf[24], 41);
    assert_int_equal(buf[32], 100);
    assert_int_equal(buf[40], 50);
    assert_int_equal(buf[52], 64);
}

typedef struct bad_case {
    const char *name;
    int offset;                /* byte to change in the encoded push; -1: none */
    uint8_t value;
    int frames;
    size_t payload;
    size_t header_len;
} bad_case;

static void test_rejects_every_malformed_field(void **state)
{
    (void)state;
    const bad_case cases[] = {
        {"magic", 0, 'X', 2, 200, WIRE_HEADER_SIZE},
        {"protocol", 4, 9, 2, 200, WIRE_HEADER_SIZE},
        {"type zero", 6, 0, 2, 200, WIRE_HEADER_SIZE},
        {"type unknown", 6, 77, 2, 200, WIRE_HEADER_SIZE},
        {"reply sent to a server", 6, WIRE_REPLY, 2, 200, WIRE_HEADER_SIZE},
        {"worker out of range", 8, 4, 2, 200, WIRE_HEADER_SIZE},
        {"worker 254", 8, 0xfe, 2, 200, WIRE_HEADER_SIZE},
        {"another shard", 12, 1, 2, 200, WIRE_HEADER_SIZE},
        {"offset", 32, 99, 2, 200, WIRE_HEADER_SIZE},
        {"offset high byte", 39, 1, 2, 200, WIRE_HEADER_SIZE},
        {"count", 40, 51, 2, 204, WIRE_HEADER_SIZE},
        {"count overflow", 47, 0x40, 2, 200, WIRE_HEADER_SIZE},
        {"encoding unknown", 48, 9, 2, 200, WIRE_HEADER_SIZE},
        {"encoding json on a push", 48, WIRE_JSON, 2, 200, WIRE_HEADER_SIZE},
        {"reply flags", 50, 1, 2, 200, WIRE_HEADER_SIZE},
        {"protocol high byte", 5, 1, 2, 200, WIRE_HEADER_SIZE},   /* 16-bit fields whole */
        {"type high byte", 7, 1, 2, 200, WIRE_HEADER_SIZE},
        {"encoding high byte", 49, 1, 2, 200, WIRE_HEADER_SIZE},
        {"payload short", -1, 0, 2, 196, WIRE_HEADER_SIZE},
        {"payload long", -1, 0, 2, 204, WIRE_HEADER_SIZE},
        {"payload missing", -1, 0, 1, 0, WIRE_HEADER_SIZE},
        {"extra frames", -1, 0, 3, 200, WIRE_HEADER_SIZE},
        {"no frames", -1, 0, 0, 0, WIRE_HEADER_SIZE},
        {"short header", -1, 0, 2, 200, WIRE_HEADER_SIZE - 1},
        {"long header", -1, 0, 2, 200, WIRE_HEADER_SIZE + 1},
    };
    wire_header good = s_push();
    const char *why = NULL;
    assert_int_equal(s_decode(&good, 2, 200, &why), 0);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t buf[WIRE_HEADER_SIZE + 1] = {0};
        wire_encode(buf, &good);
        if (cases[i].offset >= 0) {
            buf[cases[i].offset] = cases[i].value;
        }
        wire_header out;
        why = NULL;
        int rc = wire_decode(&out, buf, cases[i].header_len, cases[i].frames, cases[i].payload,
                             &s_lim, &why);
        if (rc != -1 || !why) {
            fail_msg("malformed %s was accepted", cases[i].name);
        }
    }
}

static void test_rejects_bad_pulls_and_controls(void **state)
{
    (void)state;
    const char *why;
    wire_header pull = {.type = WIRE_PULL, .worker = 0, .shard = 2, .encoding = WIRE_NO_PAYLOAD};
    assert_int_equal(s_decode(&pull, 1, 0, &why), 0);
    wire_header bad = pull;
    bad.count = 5;
    assert_int_equal(s_decode(&bad, 1, 0, &why), -1);
    bad = pull;
    assert_int_equal(s_decode(&bad, 2, 8, &why), -1);          /* payload on a pull */
    bad = pull;
    bad.samples = 3;
    assert_int_equal(s_decode(&bad, 1, 0, &why), -1);
    bad = pull;
    bad.worker = 9;
    assert_int_equal(s_decode(&bad, 1, 0, &why), -1);
    bad = pull;
    bad.encoding = WIRE_F32;                                      /* values it does not carry */
    assert_int_equal(s_decode(&bad, 1, 0, &why), -1);
    bad = pull;
    bad.offset = 1;
    assert_int_equal(s_decode(&bad, 1, 0, &why), -1);
    /* a total is a reply's, and a push's (its worker's examples so far) */
    bad = pull;
    bad.total = 1;
    assert_int_equal(s_decode(&bad, 1, 0, &why), -1);
    assert_string_equal(why, "reply-only fields set");
    wire_header counted = s_push();
    counted.total = 1ULL << 40;
    assert_int_equal(s_decode(&counted, 2, 200, &why), 0);
    assert_int_equal(counted.total, 1ULL << 40);
    /* a worker's control names one the shard knows (every other tag was
     * taken as DONE) */
    wire_header worker_ctl = {.type = WIRE_CONTROL, .worker = 0, .shard = 2,
                              .tag = WIRE_CONTROL_DONE, .encoding = WIRE_NO_PAYLOAD};
    assert_int_equal(s_decode(&worker_ctl, 1, 0, &why), 0);
    worker_ctl.tag = 0;
    assert_int_equal(s_decode(&worker_ctl, 1, 0, &why), -1);
    worker_ctl.tag = WIRE_CONTROL_ATTACH + 1;
    assert_int_equal(s_decode(&worker_ctl, 1, 0, &why), -1);
    wire_header ctl = {.type = WIRE_CONTROL, .worker = WIRE_ANY, .shard = 2,
                       .tag = WIRE_CONTROL_STATS, .encoding = WIRE_NO_PAYLOAD};
    assert_int_equal(s_decode(&ctl, 1, 0, &why), 0);
    ctl.tag = 0;
    assert_int_equal(s_decode(&ctl, 1, 0, &why), -1);
    ctl.tag = 99;
    assert_int_equal(s_decode(&ctl, 1, 0, &why), -1);
    ctl.tag = WIRE_CONTROL_DONE;                                  /* a tool is not a worker */
    assert_int_equal(s_decode(&ctl, 1, 0, &why), -1);
    ctl.tag = 3;   /* SHUTDOWN once, which nothing sent: no one may stop a shard */
    const uint32_t anyone[] = {WIRE_ANY, 0, WIRE_EVALUATOR};
    for (int i = 0; i < 3; i++) {
        ctl.worker = anyone[i];
        assert_int_equal(s_decode(&ctl, 1, 0, &why), -1);
        assert_string_equal(why, "unknown control message");
    }
    ctl.tag = WIRE_CONTROL_DONE;                                  /* the evaluator's done */
    assert_int_equal(s_decode(&ctl, 1, 0, &why), 0);
    bad = pull;
    bad.worker = WIRE_ANY;                                        /* a tool may not pull */
    assert_int_equal(s_decode(&bad, 1, 0, &why), -1);
    /* in a job without an evaluator, a message as the evaluator is a
     * stranger's: its slot, never taken, let anyone end the shard's wait
     * for it or pull the model */
    wire_limits none = s_lim;
    none.no_evaluator = true;
    uint8_t buf[WIRE_HEADER_SIZE];
    wire_header out, eval_pull = pull;
    eval_pull.worker = WIRE_EVALUATOR;
    const wire_header *as_evaluator[] = {&ctl, &eval_pull};
    for (int i = 0; i < 2; i++) {
        wire_encode(buf, as_evaluator[i]);
        assert_int_equal(wire_decode(&out, buf, sizeof buf, 1, 0, &s_lim, &why), 0);
        assert_int_equal(wire_decode(&out, buf, sizeof buf, 1, 0, &none, &why), -1);
        assert_string_equal(why, "the job has no evaluator");
    }
    wire_encode(buf, &pull);                                      /* its workers still may */
    assert_int_equal(wire_decode(&out, buf, sizeof buf, 1, 0, &none, &why), 0);
}

/* A push may ask to be acknowledged, alone or beside the leader's verdict
 * (this shard, 2, is not the leader); nothing else carries the flag, and
 * a push carries one verdict at most. A DONE tells the faults injected. */
static void test_acknowledged_pushes_and_fault_counts(void **state)
{
    (void)state;
    const char *why;
    wire_header push = s_push();
    const uint16_t good[] = {WIRE_FLAG_ACK, WIRE_FLAG_ACK | WIRE_FLAG_IN_ROUND,
                             WIRE_FLAG_ACK | WIRE_FLAG_LATE, WIRE_FLAG_LATE};
    for (int i = 0; i < 4; i++) {
        push.flags = good[i];
        assert_int_equal(s_decode(&push, 2, 200, &why), 0);
    }
    const uint16_t bad[] = {WIRE_FLAG_ACK | WIRE_FLAG_VERDICT, WIRE_FLAG_IN_ROUND | WIRE_FLAG_LATE,
                            WIRE_FLAG_ACK | WIRE_FLAG_IN_ROUND | WIRE_FLAG_LATE, 64,
                            WIRE_FLAG_ACK | WIRE_FLAG_RESTARTED};
    for (int i = 0; i < 5; i++) {
        push.flags = bad[i];
        assert_int_equal(s_decode(&push, 2, 200, &why), -1);
    }
    wire_header pull = {.type = WIRE_PULL, .worker = 0, .shard = 2, .encoding = WIRE_NO_PAYLOAD,
                        .flags = WIRE_FLAG_ACK};
    assert_int_equal(s_decode(&pull, 1, 0, &why), -1);
    wire_header done = {.type = WIRE_CONTROL, .worker = 1, .shard = 2, .tag = WIRE_CONTROL_DONE,
                        .encoding = WIRE_NO_PAYLOAD, .base_version = 17, .samples = 3};
    assert_int_equal(s_decode(&done, 1, 0, &why), 0);
}

static void test_reply_checks(void **state)
{
    (void)state;
    const char *why;
    wire_header reply = {.type = WIRE_REPLY, .worker = 0, .shard = 2, .offset = 100,
                         .count = 50, .encoding = WIRE_F32};
    uint8_t buf[WIRE_HEADER_SIZE];
    wire_header out;
    wire_encode(buf, &reply);
    assert_int_equal(wire_decode_reply(&out, buf, sizeof buf, 2, 200, 2, 100, 150, &why), 0);
    assert_int_equal(wire_decode_reply(&out, buf, sizeof buf, 2, 200, 3, 100, 150, &why), -1);
    assert_int_equal(wire_decode_reply(&out, buf, sizeof buf, 2, 200, 2, 100, 151, &why), -1);
    assert_int_equal(wire_decode_reply(&out, buf, sizeof buf, 2, 100, 2, 100, 150, &why), -1);
    reply.type = WIRE_PUSH;
    wire_encode(buf, &reply);
    assert_int_equal(wire_decode_reply(&out, buf, sizeof buf, 2, 200, 2, 100, 150, &why), -1);
}

/* Values in a shared segment (transport/shm.h): a push and a reply of the
 * shard's whole range with the header alone, an ATTACH with its 80-byte
 * name from a worker or the evaluator; anything else of the kind refused. */
static void test_shared_segment_messages(void **state)
{
    (void)state;
    const char *why;
    wire_header push = s_push();
    push.encoding = WIRE_SHM;
    assert_int_equal(s_decode(&push, 1, 0, &why), 0);
    assert_int_equal(s_decode(&push, 2, 200, &why), -1);   /* and a payload frame */
    push.count = 49;
    assert_int_equal(s_decode(&push, 1, 0, &why), -1);
    push.count = 50;
    wire_limits compressed = s_lim;
    compressed.push_encoding = WIRE_SPARSE;   /* a compressed run's pushes are compressed */
    uint8_t buf[WIRE_HEADER_SIZE];
    wire_header out;
    wire_encode(buf, &push);
    assert_int_equal(wire_decode(&out, buf, sizeof buf, 1, 0, &compressed, &why), -1);

    wire_header attach = {.type = WIRE_CONTROL, .worker = 1, .shard = 2,
                          .tag = WIRE_CONTROL_ATTACH, .encoding = WIRE_SHM};
    assert_int_equal(s_decode(&attach, 2, WIRE_ATTACH_SIZE, &why), 0);
    attach.worker = WIRE_EVALUATOR;
    assert_int_equal(s_decode(&attach, 2, WIRE_ATTACH_SIZE, &why), 0);
    assert_int_equal(s_decode(&attach, 2, WIRE_ATTACH_SIZE - 1, &why), -1);
    assert_int_equal(s_decode(&attach, 1, 0, &why), -1);
    assert_int_equal(s_decode(&attach, 3, WIRE_ATTACH_SIZE, &why), -1);
    for (int field = 0; field < 2; field++) {   /* an ATTACH carries no range */
        wire_header ranged = attach;
        *(field ? &ranged.count : &ranged.offset) = 1;
        assert_int_equal(s_decode(&ranged, 2, WIRE_ATTACH_SIZE, &why), -1);
    }
    attach.worker = WIRE_ANY;   /* a tool shares nothing */
    assert_int_equal(s_decode(&attach, 2, WIRE_ATTACH_SIZE, &why), -1);
    attach.worker = 1;
    attach.encoding = WIRE_NO_PAYLOAD;
    assert_int_equal(s_decode(&attach, 2, WIRE_ATTACH_SIZE, &why), -1);

    wire_header reply = {.type = WIRE_REPLY, .worker = 3, .shard = 2, .base_version = 9,
                         .offset = 100, .count = 50, .encoding = WIRE_SHM};
    wire_encode(buf, &reply);
    assert_int_equal(wire_decode_reply(&out, buf, sizeof buf, 1, 0, 2, 100, 150, &why), 0);
    assert_int_equal(wire_decode_reply(&out, buf, sizeof buf, 2, 200, 2, 100, 150, &why), -1);
    reply.offset = 101;
    wire_encode(buf, &reply);
    assert_int_equal(wire_decode_reply(&out, buf, sizeof buf, 1, 0, 2, 100, 150, &why), -1);
}

/* The endpoints an address names: a bind of a host name takes every
 * interface, an IP address its own (an IPv6 one without its brackets once
 * took every interface, IPv4 only); localhost is 127.0.0.1 both ways (with
 * IPv6 on, a connect to localhost could reach ::1, where no shard bound). */
static void test_endpoints(void **state)
{
    (void)state;
    struct {
        const char *address, *bind, *connect;
    } cases[] = {
        {"localhost:2222", "tcp://127.0.0.1:2222", "tcp://127.0.0.1:2222"},
        {"node0:2222", "tcp://*:2222", "tcp://node0:2222"},
        {"10.0.0.1:2222", "tcp://10.0.0.1:2222", "tcp://10.0.0.1:2222"},
        {"[::1]:2222", "tcp://[::1]:2222", "tcp://[::1]:2222"},
        {"[fd00::5]:2222", "tcp://[fd00::5]:2222", "tcp://[fd00::5]:2222"},
        {"ipc:///tmp/x", "ipc:///tmp/x", "ipc:///tmp/x"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[256];
        net_endpoint(buf, sizeof buf, cases[i].address, true);
        assert_string_equal(buf, cases[i].bind);
        net_endpoint(buf, sizeof buf, cases[i].address, false);
        assert_string_equal(buf, cases[i].connect);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_every_type),
        cmocka_unit_test(test_layout_is_little_endian),
        cmocka_unit_test(test_rejects_every_malformed_field),
        cmocka_unit_test(test_rejects_bad_pulls_and_controls),
        cmocka_unit_test(test_acknowledged_pushes_and_fault_counts),
        cmocka_unit_test(test_reply_checks),
        cmocka_unit_test(test_shared_segment_messages),
        cmocka_unit_test(test_endpoints),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
