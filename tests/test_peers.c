/* test_peers.c: a worker's side of the protocol (core/real/peers.c) against
 * shards the test plays itself: each a ROUTER on an ipc socket in a thread
 * of its own, which checks every request with the shard's own wire_decode
 * and answers as the test scripted (late, twice, with a probe before, not
 * at all). What the client asked is recorded, so the tests check both
 * sides: which numbers, versions and ranges went out, and what the client
 * made of the answers. Seconds, not minutes: the real shard's tests
 * (test_distributed, test_recovery) take minutes to reach these paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "core/handover.h"
#include "core/partition.h"
#include "core/real/peers.h"
#include "core/run.h"
#include "support.h"
#include "transport/senders.h"

enum { NPARAMS = 11, SHARDS = 2, SEEN_MAX = 64, SELF = 2 };

/* The test and its shards hand their state over through ZeroMQ
 * (core/handover.h): a shard takes over what the test scripted when a
 * request comes and hands over what it saw before it answers; the test
 * the other way round around each call (s_hand_over, s_take_over). */

/* One scripted shard. The test sets the script before it calls peers_*
 * and reads what the shard saw after the call returns (or after
 * s_wait_requests): the shard writes it before it answers. */
typedef struct fake_shard {
    uint32_t index;
    uint64_t lo, hi;
    char endpoint[300];
    /* the script */
    atomic_int drop;          /* requests to take and leave unanswered */
    bool silent;              /* answer nothing at all */
    atomic_int refuse;        /* requests to refuse (WIRE_FLAG_REFUSED); -1: every one */
    uint64_t refusal;         /* their tag, the reason (senders_verdict) */
    bool probe_first;         /* an empty probe frame before each answer */
    bool old_answer_first;    /* before each pull's answer, one to the request
                                 before it, its values -1 */
    uint32_t generation;      /* the answers' generation */
    uint16_t flags;           /* a pull answer's flags */
    uint64_t verdict;         /* the tag of the answer to a verdict push */
    bool workers_done;        /* control answers' WIRE_FLAG_WORKERS_DONE */
    /* what it saw */
    atomic_int requests;      /* well-formed requests, copies included */
    atomic_int malformed;     /* requests wire_decode refused */
    wire_header seen[SEEN_MAX];
    double arrived[SEEN_MAX]; /* run_now() as each came */
    float pushed[NPARAMS];    /* the last push's values, at their indices */
    uint64_t version;         /* its own: one more per push */
    /* the thread */
    void *ctx, *router;
    pthread_t thread;
    atomic_int stop;
} fake_shard;

typedef struct fixture {
    char dir[256];
    fake_shard shard[SHARDS];
    cluster_spec cs;
    peers_options o;
    peers p;
} fixture;

/* A pull's answer carries, at element i, seq * 1000 + i: which request an
 * answer answered shows in the client's theta. */
static float s_value(uint64_t seq, uint64_t i)
{
    return (float)(seq * 1000 + i);
}

static void s_answer(fake_shard *s, zmq_msg_t *id, const wire_header *req, uint64_t seq,
                     bool old)
{
    wire_header a = {.type = WIRE_REPLY, .worker = req->worker, .shard = s->index,
                     .seq = seq, .generation = s->generation, .encoding = WIRE_NO_PAYLOAD};
    float values[NPARAMS];
    const float *payload = NULL;
    size_t bytes = 0;
    if (req->type == WIRE_PULL) {
        a.encoding = WIRE_F32;
        a.offset = s->lo;
        a.count = s->hi - s->lo;
        a.base_version = s->version;
        a.tag = 3 + s->index;          /* staleness: shard 0's is 3 */
        a.total = 500 + s->index;      /* examples: shard 0's is 500 */
        a.flags = s->flags;
        for (uint64_t i = s->lo; i < s->hi; i++) {
            values[i - s->lo] = old ? -1.0f : s_value(seq, i);
        }
        payload = values;
        bytes = (size_t)a.count * sizeof(float);
    } else if (req->type == WIRE_PUSH) {
        a.tag = s->verdict;
    } else if (req->type == WIRE_CONTROL) {
        a.flags = s->workers_done ? WIRE_FLAG_WORKERS_DONE : 0;
    }
    bool probe = s->probe_first;
    HANDED_OVER(s);   /* all of s this answer reads and writes, before it goes */
    if (probe) {
        zmq_msg_t copy;
        zmq_msg_init(&copy);
        zmq_msg_copy(&copy, id);
        zmq_msg_send(&copy, s->router, ZMQ_SNDMORE);
        zmq_send(s->router, "", 0, 0);
    }
    assert_true(net_send(s->router, id, &a, payload, bytes, NULL) > 0);
}

/* Takes one request from the ROUTER and answers it as scripted. */
static void s_serve_one(fake_shard *s)
{
    zmq_msg_t frames[3];
    int n = 0;
    int more = 1;
    while (more) {
        zmq_msg_t part;
        zmq_msg_init(&part);
        if (zmq_msg_recv(&part, s->router, 0) < 0) {
            zmq_msg_close(&part);
            break;
        }
        more = zmq_msg_more(&part);
        if (n < 3) {
            frames[n++] = part;
        } else {
            zmq_msg_close(&part);
        }
    }
    TAKEN_OVER(s);
    wire_limits lim = {.shard = s->index, .lo = s->lo, .hi = s->hi, .workers = 4,
                       .push_encoding = WIRE_F32};
    wire_header h;
    const char *why;
    if (n < 2 || wire_decode(&h, zmq_msg_data(&frames[1]), zmq_msg_size(&frames[1]), n - 1,
                             n > 2 ? zmq_msg_size(&frames[2]) : 0, &lim, &why) < 0) {
        atomic_fetch_add(&s->malformed, 1);
    } else {
        if (h.type == WIRE_PUSH) {
            memcpy(s->pushed + h.offset, zmq_msg_data(&frames[2]), h.count * sizeof(float));
            s->version++;
        }
        int at = atomic_load(&s->requests);
        if (at < SEEN_MAX) {
            s->seen[at] = h;
            s->arrived[at] = run_now();
        }
        atomic_fetch_add(&s->requests, 1);
        bool asks = h.type != WIRE_PUSH || (h.flags & (WIRE_FLAG_VERDICT | WIRE_FLAG_ACK));
        if (atomic_load(&s->drop) > 0) {
            atomic_fetch_sub(&s->drop, 1);
        } else if (atomic_load(&s->refuse) != 0) {
            if (atomic_load(&s->refuse) > 0) {
                atomic_fetch_sub(&s->refuse, 1);
            }
            wire_header no = {.type = WIRE_REPLY, .worker = h.worker, .shard = s->index,
                              .seq = h.seq, .generation = s->generation, .tag = s->refusal,
                              .encoding = WIRE_NO_PAYLOAD, .flags = WIRE_FLAG_REFUSED};
            HANDED_OVER(s);
            assert_true(net_send(s->router, &frames[0], &no, NULL, 0, NULL) > 0);
        } else if (asks && !s->silent) {
            if (h.type == WIRE_PULL && s->old_answer_first && h.seq > 1) {
                s_answer(s, &frames[0], &h, h.seq - 1, true);
            }
            s_answer(s, &frames[0], &h, h.seq, false);
        }
    }
    for (int i = 0; i < n; i++) {
        zmq_msg_close(&frames[i]);
    }
}

static void *s_shard_main(void *arg)
{
    fake_shard *s = arg;
    while (!atomic_load(&s->stop)) {
        zmq_pollitem_t item = {.socket = s->router, .events = ZMQ_POLLIN};
        if (zmq_poll(&item, 1, 10) > 0) {
            s_serve_one(s);
        }
    }
    return NULL;
}

static int s_setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    support_tempdir(f->dir, sizeof f->dir);
    f->cs.servers = SHARDS;
    for (int k = 0; k < SHARDS; k++) {
        fake_shard *s = &f->shard[k];
        s->index = (uint32_t)k;
        partition_range(NPARAMS, SHARDS, k, &s->lo, &s->hi);
        s->version = 40 + (uint64_t)k;
        s->generation = 0x700 + (uint32_t)k;
        snprintf(s->endpoint, sizeof s->endpoint, "ipc://%s/ps%d", f->dir, k);
        snprintf(f->cs.ps[k], sizeof f->cs.ps[k], "%s", s->endpoint);
        s->ctx = zmq_ctx_new();
        s->router = zmq_socket(s->ctx, ZMQ_ROUTER);
        assert_int_equal(zmq_bind(s->router, s->endpoint), 0);
    }
    f->o = (peers_options){.timeout = 60, .resend = 30, .seed = 1};   /* no resends unless asked */
    *state = f;
    return 0;
}

/* The shards start once the test has scripted them. */
static void s_start(fixture *f)
{
    for (int k = 0; k < SHARDS; k++) {
        assert_int_equal(pthread_create(&f->shard[k].thread, NULL, s_shard_main, &f->shard[k]),
                         0);
    }
    error err = {0};
    assert_int_equal(peers_open(&f->p, &f->cs, NPARAMS, SELF, &f->o, &err), 0);
}

static int s_teardown(void **state)
{
    fixture *f = *state;
    peers_close(&f->p);
    for (int k = 0; k < SHARDS; k++) {
        fake_shard *s = &f->shard[k];
        atomic_store(&s->stop, 1);
        if (s->thread) {
            pthread_join(s->thread, NULL);
        }
        zmq_close(s->router);
        zmq_ctx_term(s->ctx);
        assert_int_equal(atomic_load(&s->malformed), 0);
    }
    support_rmtree(f->dir);
    free(f);
    return 0;
}

/* Waits (up to 10 s) until shard s has taken n requests: for pushes,
 * which nothing answers. */
static void s_wait_requests(fake_shard *s, int n)
{
    for (int i = 0; i < 10000 && atomic_load(&s->requests) < n; i++) {
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    assert_int_equal(atomic_load(&s->requests), n);
}

static void s_hand_over(fixture *f)
{
    for (int k = 0; k < SHARDS; k++) {
        HANDED_OVER(&f->shard[k]);
    }
}

static int s_take_over(fixture *f, int rc)
{
    for (int k = 0; k < SHARDS; k++) {
        TAKEN_OVER(&f->shard[k]);
    }
    return rc;
}

/* peers_* calls, the shards' state handed over around them. */
#define CALL(f, call) (s_hand_over(f), s_take_over(f, (call)))

static int s_pull(fixture *f, float *theta, uint64_t min_version, uint64_t *versions,
                  uint16_t *flags, uint64_t *staleness, uint64_t *total, error *err)
{
    return CALL(f, peers_pull(&f->p, theta, min_version, versions, flags, staleness, total,
                              err));
}

static int s_push(fixture *f, const float *values, uint64_t tag, const uint64_t *versions,
                  uint32_t samples, bool leader, error *err)
{
    return CALL(f, peers_push(&f->p, values, tag, versions, samples, leader, err));
}

/* theta holds the answers to request seq of every shard. */
static void s_expect_answer(const float *theta, uint64_t seq)
{
    for (uint64_t i = 0; i < NPARAMS; i++) {
        assert_true(theta[i] == s_value(seq, i));
    }
}

/* A pull puts each shard's answer at its own range, takes each shard's
 * version and flags, and shard 0's staleness and examples; its requests
 * carry their numbers, the minimum version, the version and generation
 * each shard last answered with, and who asks. */
static void test_a_pull_assembles_every_shards_part(void **state)
{
    fixture *f = *state;
    f->shard[1].flags = WIRE_FLAG_WORKERS_DONE;
    s_start(f);
    float theta[NPARAMS];
    uint64_t versions[SHARDS], staleness = 0, total = 0;
    uint16_t flags[SHARDS];
    error err = {0};
    assert_int_equal(s_pull(f, theta, 3, versions, flags, &staleness, &total, &err), 0);
    s_expect_answer(theta, 1);
    assert_true(versions[0] == 40 && versions[1] == 41);
    assert_true(flags[0] == 0 && flags[1] == WIRE_FLAG_WORKERS_DONE);
    assert_true(staleness == 3 && total == 500);
    f->shard[0].version = 45;
    assert_int_equal(s_pull(f, theta, 7, versions, NULL, NULL, NULL, &err), 0);
    s_expect_answer(theta, 2);
    assert_true(versions[0] == 45 && versions[1] == 41);
    for (int k = 0; k < SHARDS; k++) {
        const fake_shard *s = &f->shard[k];
        assert_int_equal(atomic_load(&s->requests), 2);
        const wire_header *first = &s->seen[0], *second = &s->seen[1];
        assert_int_equal(first->type, WIRE_PULL);
        assert_int_equal(first->worker, SELF);
        assert_true(first->seq == 1 && second->seq == 2);
        assert_true(first->base_version == 3 && second->base_version == 7);
        assert_true(first->tag == 0 && second->tag == 40 + (uint64_t)k);
        assert_true(first->generation == 0 && second->generation == 0x700 + (uint32_t)k);
    }
    assert_int_equal(f->p.restarts, 0);
    assert_int_equal(f->p.resent, 0);
}

/* An answer to an earlier request (a copy's, late) and a shard's liveness
 * probes are passed over: the values are those of the answer to this
 * request. */
static void test_a_pull_passes_over_old_answers_and_probes(void **state)
{
    fixture *f = *state;
    for (int k = 0; k < SHARDS; k++) {
        f->shard[k].old_answer_first = true;
        f->shard[k].probe_first = true;
    }
    s_start(f);
    float theta[NPARAMS];
    uint64_t versions[SHARDS];
    error err = {0};
    for (uint64_t seq = 1; seq <= 3; seq++) {
        assert_int_equal(s_pull(f, theta, 0, versions, NULL, NULL, NULL, &err), 0);
        s_expect_answer(theta, seq);
    }
}

/* A request left unanswered goes again under the same number, after
 * [cluster] resend, and is counted as resent; its answer is taken. */
static void test_a_lost_request_is_sent_again_under_its_number(void **state)
{
    fixture *f = *state;
    atomic_store(&f->shard[1].drop, 1);
    f->o.resend = 0.05;
    s_start(f);
    float theta[NPARAMS];
    uint64_t versions[SHARDS];
    error err = {0};
    assert_int_equal(s_pull(f, theta, 0, versions, NULL, NULL, NULL, &err), 0);
    s_expect_answer(theta, 1);
    /* a busy host may have the client send shard 0's request again too */
    int copies = atomic_load(&f->shard[1].requests);
    assert_true(copies >= 2);
    assert_true(f->p.resent >= copies - 1);
    for (int i = 0; i < copies; i++) {
        assert_true(f->shard[1].seen[i].seq == 1);
    }
}

/* A shard that never answers fails the pull at [cluster] timeout, naming
 * it, after requests sent again at resend, then twice as long each time:
 * with resend 0.05 s and timeout 0.3 s, at 0.05 and 0.15 s (the next
 * would be at 0.35 s). The client counts its waits, not the clock, so the
 * count is exact on a busy host too. */
static void test_a_silent_shard_fails_at_the_timeout(void **state)
{
    fixture *f = *state;
    f->shard[0].silent = true;
    f->o.timeout = 0.3;
    f->o.resend = 0.05;
    s_start(f);
    float theta[NPARAMS];
    uint64_t versions[SHARDS];
    error err = {0};
    assert_int_equal(s_pull(f, theta, 0, versions, NULL, NULL, NULL, &err), -1);
    assert_non_null(strstr(err.msg, "ps 0 did not answer within 0.3 s"));
    assert_int_equal(f->p.resent, 2);
    /* never heard from, it may not have started: another try may succeed */
    assert_int_equal(err.status, ERROR_RETRYABLE);
    assert_non_null(strstr(err.msg, "nor ever before"));
}

/* A shard that refuses this process as another, still connected, holds
 * its index (two processes given one rank, or a restarted worker's
 * predecessor not yet seen gone) is asked again at each resend, and its
 * refusals are no answer: one that refuses only the first requests
 * answers the next, and the pull succeeds; one that refuses every one
 * fails the pull at the timeout, saying so, retryable (138: the
 * predecessor's half-open connection outlives no later try). A refusal of
 * this process's key (another worker's) fails it at once: exit 2. */
static void test_a_refused_process_fails_at_the_timeout(void **state)
{
    fixture *f = *state;
    f->shard[0].refuse = 2;
    f->shard[0].refusal = SENDERS_HELD;
    f->o.timeout = 0.3;
    f->o.resend = 0.05;
    s_start(f);
    float theta[NPARAMS];
    uint64_t versions[SHARDS];
    error err = {0};
    assert_int_equal(s_pull(f, theta, 0, versions, NULL, NULL, NULL, &err), 0);
    assert_int_equal(f->p.refused, 0);
    f->shard[0].refuse = -1;
    assert_int_equal(s_pull(f, theta, 0, versions, NULL, NULL, NULL, &err), -1);
    assert_non_null(strstr(err.msg, "ps 0 refused every request for 0.3 s ([cluster] timeout): "
                                    "another process, still connected, is worker 2"));
    assert_int_equal(err.status, ERROR_RETRYABLE);
    assert_true(f->p.refused >= 2);   /* the first request and each sent again */
    f->shard[0].refusal = SENDERS_OTHER_KEY;
    f->p.o.timeout = 600;   /* at the first refusal: waiting would take this long */
    assert_int_equal(s_pull(f, theta, 0, versions, NULL, NULL, NULL, &err), -1);
    assert_non_null(strstr(err.msg, "ps 0 refused worker 2: this process's CURVE key is not "
                                    "that one's"));
    assert_int_equal(err.status, ERROR_USAGE);
}

/* A shard that answered and then went silent fails the client at the
 * timeout, retryable too (138): it may come back, a pod made anew from its
 * checkpoint, later than the timeout (exit 1 failed the whole job for
 * good), and one that cannot ends the job by its own failure. Its message
 * is not that of one never heard from. */
static void test_a_shard_silent_after_answering_fails_retryable(void **state)
{
    fixture *f = *state;
    f->o.timeout = 0.3;
    f->o.resend = 0.05;
    s_start(f);
    float theta[NPARAMS];
    uint64_t versions[SHARDS];
    error err = {0};
    assert_int_equal(s_pull(f, theta, 0, versions, NULL, NULL, NULL, &err), 0);
    f->shard[0].silent = true;
    assert_int_equal(s_pull(f, theta, 0, versions, NULL, NULL, NULL, &err), -1);
    assert_non_null(strstr(err.msg, "ps 0 did not answer within 0.3 s"));
    assert_int_equal(err.status, ERROR_RETRYABLE);
    assert_null(strstr(err.msg, "nor ever before"));
}

/* A shard restored from a checkpoint says so once: the client counts it,
 * and its new generation goes with the next request. */
static void test_a_restored_shard_is_counted(void **state)
{
    fixture *f = *state;
    f->shard[0].flags = WIRE_FLAG_RESTARTED;
    s_start(f);
    float theta[NPARAMS];
    uint64_t versions[SHARDS];
    uint16_t flags[SHARDS];
    error err = {0};
    assert_int_equal(s_pull(f, theta, 0, versions, flags, NULL, NULL, &err), 0);
    assert_int_equal(f->p.restarts, 1);
    assert_int_equal(flags[0], WIRE_FLAG_RESTARTED);
    f->shard[0].flags = 0;
    f->shard[0].generation = 0x901;
    assert_int_equal(s_pull(f, theta, 0, versions, flags, NULL, NULL, &err), 0);
    assert_int_equal(s_pull(f, theta, 0, versions, flags, NULL, NULL, &err), 0);
    assert_int_equal(f->p.restarts, 1);
    assert_true(f->shard[0].seen[2].generation == 0x901);
    assert_true(f->shard[1].seen[2].generation == 0x701);
}

/* A shard that went back below the pull's minimum (restored from an older
 * checkpoint, answering at once): the shards that have not answered are
 * asked again, under a new number, for its version. Shard 0 here keeps
 * the first pull waiting, as a lockstep rule's shard does for a round
 * that only workers retaking shard 1's rounds could close: the pull
 * waited there for good (its replies were taken in shard order). */
static void test_a_shard_gone_back_lowers_the_pull(void **state)
{
    fixture *f = *state;
    atomic_store(&f->shard[0].drop, 1);
    f->shard[1].flags = WIRE_FLAG_RESTARTED;
    f->shard[1].version = 2;
    f->o.timeout = 5;
    s_start(f);
    float theta[NPARAMS];
    uint64_t versions[SHARDS];
    error err = {0};
    if (s_pull(f, theta, 5, versions, NULL, NULL, NULL, &err) < 0) {
        fail_msg("%s", err.msg);
    }
    assert_true(versions[0] == 40 && versions[1] == 2);
    const fake_shard *s0 = &f->shard[0];
    assert_int_equal(atomic_load(&s0->requests), 2);
    assert_true(s0->seen[0].seq == 1 && s0->seen[0].base_version == 5);
    assert_true(s0->seen[1].seq == 2 && s0->seen[1].base_version == 2);
    for (uint64_t i = s0->lo; i < s0->hi; i++) {   /* the second request's answer */
        assert_true(theta[i] == s_value(2, i));
    }
    assert_int_equal(atomic_load(&f->shard[1].requests), 1);
    assert_int_equal(f->p.restarts, 1);
}

/* A push gives each shard its own range of the values, the version it
 * computed on from that shard, the round and the examples behind it; no
 * verdict is asked and none awaited. */
static void test_a_push_sends_each_shard_its_part(void **state)
{
    fixture *f = *state;
    s_start(f);
    float values[NPARAMS];
    for (int i = 0; i < NPARAMS; i++) {
        values[i] = 0.5f * (float)i - 1.0f;
    }
    uint64_t versions[SHARDS] = {17, 23};
    error err = {0};
    assert_int_equal(s_push(f, values, 9, versions, 64, false, &err), 0);
    for (int k = 0; k < SHARDS; k++) {
        fake_shard *s = &f->shard[k];
        s_wait_requests(s, 1);
        const wire_header *h = &s->seen[0];
        assert_int_equal(h->type, WIRE_PUSH);
        assert_true(h->offset == s->lo && h->count == s->hi - s->lo);
        assert_true(h->base_version == versions[k] && h->tag == 9);
        assert_int_equal(h->samples, 64);
        assert_int_equal(h->flags, 0);
        assert_true(h->seq == 1);
        assert_memory_equal(s->pushed + s->lo, values + s->lo, h->count * sizeof(float));
    }
    /* one shard's part alone */
    values[NPARAMS - 1] = 99;
    assert_int_equal(CALL(f, peers_push_part(&f->p, 1, values, 10, versions, 32, &err)), 0);
    s_wait_requests(&f->shard[1], 2);
    assert_true(f->shard[1].pushed[NPARAMS - 1] == 99);
    assert_true(f->shard[1].seen[1].seq == 2 && f->shard[1].seen[1].samples == 32);
    assert_int_equal(atomic_load(&f->shard[0].requests), 1);
}

/* With a round's leader, shard 0 is asked for its verdict first and the
 * other shards are told it, so each shard's round has the same pushes; an
 * answer that is no verdict fails the push. */
static void test_the_leaders_verdict_goes_to_the_other_shards(void **state)
{
    fixture *f = *state;
    f->shard[0].verdict = PEERS_LATE;
    s_start(f);
    float values[NPARAMS] = {0};
    uint64_t versions[SHARDS] = {1, 1};
    error err = {0};
    assert_int_equal(s_push(f, values, 4, versions, 8, true, &err), 0);
    s_wait_requests(&f->shard[1], 1);
    assert_int_equal(f->shard[0].seen[0].flags, WIRE_FLAG_VERDICT);
    assert_int_equal(f->shard[1].seen[0].flags, WIRE_FLAG_LATE);
    f->shard[0].verdict = PEERS_IN_ROUND;
    assert_int_equal(s_push(f, values, 5, versions, 8, true, &err), 0);
    s_wait_requests(&f->shard[1], 2);
    assert_int_equal(f->shard[1].seen[1].flags, WIRE_FLAG_IN_ROUND);
    assert_true(f->shard[1].seen[1].tag == 5);
    /* a verdict awaited passes over a prefetch's answer: the next pull
     * asks again */
    float theta[NPARAMS];
    assert_int_equal(CALL(f, peers_prefetch(&f->p, 0, &err)), 0);
    assert_int_equal(s_push(f, values, 6, versions, 8, true, &err), 0);
    assert_int_equal(s_pull(f, theta, 0, versions, NULL, NULL, NULL, &err), 0);
    s_expect_answer(theta, 5);   /* shard 0: pushes 1, 2 and 4, the prefetch 3 */
    assert_int_equal(f->p.resent, 0);
    f->shard[0].verdict = 3;
    assert_int_equal(s_push(f, values, 7, versions, 8, true, &err), -1);
    assert_non_null(strstr(err.msg, "no verdict"));
    s_wait_requests(&f->shard[1], 5);
}

/* A shard restored from its checkpoint, seen through a leader's rounds:
 * - shard 1 behind (restarted, version 2 against shard 0's 40): the
 *   rounds shard 0 has closed go to both shards without a verdict (shard
 *   0 judged them late, and shard 1 never moved), until the push's round
 *   reaches shard 0's version, whose verdict is asked again;
 * - a verdict from shard 0 in a new life leaves the generation the worker
 *   heard as it was: its next pull says the one before, so the shard
 *   answers it at once (flagged restarted) where it waited for a round the
 *   shard had lost. */
static void test_a_restored_shard_under_a_leader(void **state)
{
    fixture *f = *state;
    s_start(f);
    float theta[NPARAMS], values[NPARAMS] = {0};
    uint64_t versions[SHARDS];
    error err = {0};
    assert_int_equal(s_pull(f, theta, 0, versions, NULL, NULL, NULL, &err), 0);
    f->shard[1].flags = WIRE_FLAG_RESTARTED;
    f->shard[1].version = 2;
    f->shard[1].generation = 0x801;
    assert_int_equal(s_pull(f, theta, 0, versions, NULL, NULL, NULL, &err), 0);
    assert_true(versions[0] == 40 && versions[1] == 2);
    f->shard[1].flags = 0;
    assert_int_equal(s_push(f, values, 2, versions, 8, true, &err), 0);   /* retaken */
    s_wait_requests(&f->shard[0], 3);
    s_wait_requests(&f->shard[1], 3);
    assert_int_equal(f->shard[0].seen[2].flags, 0);
    assert_int_equal(f->shard[1].seen[2].flags, 0);
    versions[1] = 40;
    f->shard[0].verdict = PEERS_IN_ROUND;
    assert_int_equal(s_push(f, values, 40, versions, 8, true, &err), 0);   /* led again */
    s_wait_requests(&f->shard[1], 4);
    assert_int_equal(f->shard[0].seen[3].flags, WIRE_FLAG_VERDICT);
    assert_int_equal(f->shard[1].seen[3].flags, WIRE_FLAG_IN_ROUND);
    /* shard 0 in a new life gives a verdict: the next pull still says the
     * generation the worker pulled from */
    f->shard[0].generation = 0x901;
    assert_int_equal(s_push(f, values, 41, versions, 8, true, &err), 0);
    s_wait_requests(&f->shard[1], 5);
    assert_int_equal(s_pull(f, theta, 0, versions, NULL, NULL, NULL, &err), 0);
    assert_true(f->shard[0].seen[5].type == WIRE_PULL &&
                f->shard[0].seen[5].generation == 0x700);
    assert_true(f->shard[1].seen[5].generation == 0x801);
}

/* A prefetch's answers serve the next pull that wants no newer version,
 * with no request of its own; a pull that wants a newer one asks again
 * and passes over the prefetch's answers. */
static void test_a_prefetch_serves_the_next_pull(void **state)
{
    fixture *f = *state;
    s_start(f);
    float theta[NPARAMS];
    uint64_t versions[SHARDS];
    error err = {0};
    assert_int_equal(CALL(f, peers_prefetch(&f->p, 5, &err)), 0);
    assert_int_equal(s_pull(f, theta, 5, versions, NULL, NULL, NULL, &err), 0);
    s_expect_answer(theta, 1);
    assert_int_equal(atomic_load(&f->shard[0].requests), 1);
    assert_int_equal(CALL(f, peers_prefetch(&f->p, 5, &err)), 0);
    assert_int_equal(s_pull(f, theta, 6, versions, NULL, NULL, NULL, &err), 0);
    s_expect_answer(theta, 3);
    for (int k = 0; k < SHARDS; k++) {
        assert_int_equal(atomic_load(&f->shard[k].requests), 3);
        assert_true(f->shard[k].seen[2].base_version == 6);
    }
    /* a prefetch is used once */
    assert_int_equal(s_pull(f, theta, 0, versions, NULL, NULL, NULL, &err), 0);
    s_expect_answer(theta, 4);
}

/* Every worker is done only when every shard says so. */
static void test_workers_are_done_when_every_shard_says_so(void **state)
{
    fixture *f = *state;
    f->shard[0].workers_done = true;
    s_start(f);
    bool done = true;
    error err = {0};
    assert_int_equal(CALL(f, peers_control(&f->p, WIRE_CONTROL_DONE, &done, NULL, &err)), 0);
    assert_false(done);
    f->shard[0].workers_done = false;
    f->shard[1].workers_done = true;
    assert_int_equal(CALL(f, peers_control(&f->p, WIRE_CONTROL_DONE, &done, NULL, &err)), 0);
    assert_false(done);
    f->shard[0].workers_done = true;
    assert_int_equal(CALL(f, peers_control(&f->p, WIRE_CONTROL_DONE, &done, NULL, &err)), 0);
    assert_true(done);
    for (int k = 0; k < SHARDS; k++) {
        assert_int_equal(f->shard[k].seen[0].type, WIRE_CONTROL);
        assert_true(f->shard[k].seen[2].tag == WIRE_CONTROL_DONE);
    }
}

/* With faults injected, every message sent twice: pushes ask to be
 * acknowledged (a lost one goes again), a copy's answer is passed over,
 * and DONE tells each shard how many messages to it went twice. */
static void test_injected_faults_are_acknowledged_and_reported(void **state)
{
    fixture *f = *state;
    f->o.faults.duplicate = 1;
    s_start(f);
    float theta[NPARAMS], values[NPARAMS] = {0};
    uint64_t versions[SHARDS] = {0};
    error err = {0};
    assert_int_equal(s_pull(f, theta, 0, versions, NULL, NULL, NULL, &err), 0);
    s_expect_answer(theta, 1);
    assert_int_equal(s_push(f, values, 1, versions, 8, false, &err), 0);
    assert_int_equal(s_pull(f, theta, 0, versions, NULL, NULL, NULL, &err), 0);
    s_expect_answer(theta, 3);
    assert_int_equal(CALL(f, peers_control(&f->p, WIRE_CONTROL_DONE, NULL, NULL, &err)), 0);
    for (int k = 0; k < SHARDS; k++) {
        const fake_shard *s = &f->shard[k];
        assert_int_equal(atomic_load(&s->requests), 7);   /* 3 doubled, DONE once */
        assert_true(s->seen[2].type == WIRE_PUSH && (s->seen[2].flags & WIRE_FLAG_ACK));
        assert_true(s->seen[2].seq == 2 && s->seen[3].seq == 2);
        const wire_header *done = &s->seen[6];
        assert_true(done->type == WIRE_CONTROL && done->tag == WIRE_CONTROL_DONE);
        assert_int_equal(done->samples, 3);
        assert_true(done->base_version == 0);
    }
}

/* With faults injected (here only a microsecond's latency), a push is
 * acknowledged: one whose acknowledgement does not come goes again under
 * its number. */
static void test_a_push_under_faults_goes_again_until_acknowledged(void **state)
{
    fixture *f = *state;
    f->o.faults.latency = 1e-6;
    f->o.resend = 0.05;
    atomic_store(&f->shard[1].drop, 1);
    s_start(f);
    float values[NPARAMS] = {0};
    uint64_t versions[SHARDS] = {0};
    error err = {0};
    assert_int_equal(s_push(f, values, 1, versions, 8, false, &err), 0);
    const fake_shard *s = &f->shard[1];
    int copies = atomic_load(&s->requests);
    assert_true(copies >= 2);
    assert_true(f->p.resent >= copies - 1);
    for (int i = 0; i < copies; i++) {
        assert_true(s->seen[i].seq == 1 && (s->seen[i].flags & WIRE_FLAG_ACK));
    }
}

/* Injected latency holds the messages of one exchange side by side, as
 * on links of their own ([sim] latency's meaning): a pull's requests to
 * both shards go out together a latency after it began, and so do a
 * push's (acknowledged under faults); each exchange ends a latency after
 * its last answer came. Held one shard after another, as they were, the
 * second shard's pull came a latency after the first's, its push two
 * latencies and a round trip after, and each exchange took a latency each
 * way per shard. */
static void test_injected_latency_holds_each_shards_messages_side_by_side(void **state)
{
    fixture *f = *state;
    const double latency = 0.2;
    f->o.faults.latency = latency;
    s_start(f);
    float theta[NPARAMS], values[NPARAMS] = {0};
    uint64_t versions[SHARDS] = {0};
    error err = {0};
    double began = run_now();
    assert_int_equal(s_pull(f, theta, 0, versions, NULL, NULL, NULL, &err), 0);
    double pulled = run_now();
    assert_int_equal(s_push(f, values, 1, versions, 8, false, &err), 0);
    double pushed = run_now();
    double start[2] = {began, pulled};
    for (int i = 0; i < 2; i++) {   /* the pull's requests, then the push's */
        const fake_shard *a = &f->shard[0], *b = &f->shard[1];
        assert_int_equal(a->seen[i].type, i == 0 ? WIRE_PULL : WIRE_PUSH);
        assert_true(a->arrived[i] - start[i] >= latency && b->arrived[i] - start[i] >= latency);
        if (!(fabs(a->arrived[i] - b->arrived[i]) < latency / 2)) {
            fail_msg("%s: shard 0's came %.3f s in, shard 1's %.3f s", i ? "push" : "pull",
                     a->arrived[i] - start[i], b->arrived[i] - start[i]);
        }
    }
    assert_true(pulled - began >= 2 * latency && pushed - pulled >= 2 * latency);
    s_expect_answer(theta, 1);
}

/* A push sent without copying (64 KiB and more) that its shard never
 * takes in (here a listener that accepts and never speaks: the bytes stay
 * queued, as at a shard stopped, or on a host frozen, in the middle of a
 * push) is waited for up to [cluster] timeout, no longer: then the
 * connections are dropped, which lets go of the buffer, and every later
 * exchange fails, saying why. The worker waited for good before (its
 * pulls' timeout never came); closing it waits for nothing. */
static void test_a_push_never_taken_in_fails_at_the_timeout(void **state)
{
    fixture *f = *state;
    struct sockaddr_un at = {.sun_family = AF_UNIX};
    int len = snprintf(at.sun_path, sizeof at.sun_path, "%s/mute", f->dir);
    assert_true(len > 0 && len < (int)sizeof at.sun_path);
    int mute = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_int_equal(bind(mute, (struct sockaddr *)&at, sizeof at), 0);
    assert_int_equal(listen(mute, 4), 0);
    cluster_spec cs = {.servers = 1};
    snprintf(cs.ps[0], sizeof cs.ps[0], "ipc://%s", at.sun_path);
    enum { N = 1 << 16 };   /* 256 KiB: sent without copying */
    float *values = calloc(N, sizeof *values);
    assert_non_null(values);
    peers p;
    peers_options o = {.timeout = 0.3, .resend = 30, .seed = 1};
    error err = {0};
    assert_int_equal(peers_open(&p, &cs, N, SELF, &o, &err), 0);
    uint64_t versions[1] = {0};
    assert_int_equal(peers_push(&p, values, 0, versions, 64, false, &err), 0);
    double t0 = run_now();
    assert_int_equal(peers_settle(&p, &err), -1);
    double waited = run_now() - t0;
    assert_non_null(strstr(err.msg, "a shard had not taken in a whole push 0.3 s later "
                                     "([cluster] timeout)"));
    assert_true(waited >= 0.3 && waited < 10);
    assert_int_equal(p.pending.count, 0);   /* the buffer is free again */
    err = (error){0};
    float theta[N];
    assert_int_equal(peers_pull(&p, theta, 0, versions, NULL, NULL, NULL, &err), -1);
    assert_non_null(strstr(err.msg, "had not taken in a whole push"));
    err = (error){0};
    assert_int_equal(peers_push(&p, values, 0, versions, 64, false, &err), -1);
    assert_non_null(strstr(err.msg, "had not taken in a whole push"));
    peers_close(&p);
    free(values);
    close(mute);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_a_pull_assembles_every_shards_part, s_setup,
                                        s_teardown),
        cmocka_unit_test_setup_teardown(test_a_pull_passes_over_old_answers_and_probes,
                                        s_setup, s_teardown),
        cmocka_unit_test_setup_teardown(test_a_lost_request_is_sent_again_under_its_number,
                                        s_setup, s_teardown),
        cmocka_unit_test_setup_teardown(test_a_silent_shard_fails_at_the_timeout, s_setup,
                                        s_teardown),
        cmocka_unit_test_setup_teardown(test_a_shard_silent_after_answering_fails_retryable,
                                        s_setup, s_teardown),
        cmocka_unit_test_setup_teardown(test_a_refused_process_fails_at_the_timeout, s_setup,
                                        s_teardown),
        cmocka_unit_test_setup_teardown(test_a_shard_gone_back_lowers_the_pull, s_setup,
                                        s_teardown),
        cmocka_unit_test_setup_teardown(test_a_restored_shard_under_a_leader, s_setup,
                                        s_teardown),
        cmocka_unit_test_setup_teardown(test_a_restored_shard_is_counted, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown(test_a_push_sends_each_shard_its_part, s_setup,
                                        s_teardown),
        cmocka_unit_test_setup_teardown(test_the_leaders_verdict_goes_to_the_other_shards,
                                        s_setup, s_teardown),
        cmocka_unit_test_setup_teardown(test_a_push_under_faults_goes_again_until_acknowledged,
                                        s_setup, s_teardown),
        cmocka_unit_test_setup_teardown(test_a_prefetch_serves_the_next_pull, s_setup,
                                        s_teardown),
        cmocka_unit_test_setup_teardown(test_workers_are_done_when_every_shard_says_so, s_setup,
                                        s_teardown),
        cmocka_unit_test_setup_teardown(test_a_push_never_taken_in_fails_at_the_timeout, s_setup,
                                        s_teardown),
        cmocka_unit_test_setup_teardown(test_injected_faults_are_acknowledged_and_reported,
                                        s_setup, s_teardown),
        cmocka_unit_test_setup_teardown(
            test_injected_latency_holds_each_shards_messages_side_by_side, s_setup, s_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
