/* test_security.c: a shard on an open network, tried as an attacker would
 * over real sockets: malformed frames, messages for a worker from a peer
 * that does not speak for it (forged pushes, pulls and DONE), CURVE
 * keys the shard does not know, and a job that must complete through all
 * of it. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cJSON.h>
#include <zmq.h>

#include "core/experiment.h"
#include "core/model.h"
#include "core/summary.h"
#include "transport/auth.h"
#include "transport/senders.h"
#include "transport/shm.h"
#include "transport/wire.h"
#include "support.h"
#include "wire_client.h"

/* A shard of a 2-worker softmax (6 features, 3 classes: 21 parameters). */
static const char s_small[] =
    "[data]\ndataset = synthetic\ndim = 6\nclasses = 3\n"
    "[model]\ntype = softmax\n[train]\nalgorithm = hogwild\n[cluster]\nworkers = 2\n";

/* s_small with another rule into text; returns text. */
static const char *s_small_of(char *text, size_t n, const char *rule)
{
    const char *hogwild = strstr(s_small, "hogwild");
    snprintf(text, n, "%.*s%s%s", (int)(hogwild - s_small), s_small, rule,
             hogwild + strlen("hogwild"));
    return text;
}

/* The initial parameters every shard of f->config starts from (n of them;
 * caller frees). */
static float *s_initial(support_fixture *f, size_t *n)
{
    experiment e;
    error err = {0};
    assert_int_equal(experiment_configure(&e, f->config, 0, NULL, NULL, &err), 0);
    backend *b = backend_new(&e.backend, &err);
    model *m = model_new(&e.model, b, 6, 3, &err);
    *n = m->nparams;
    float *init = malloc(*n * sizeof *init);
    model_init_host(m, init, e.seed);
    model_destroy(&m);
    backend_destroy(&b);
    experiment_destroy(&e);
    return init;
}

/* `asgd ps` for f->config on port, with extra flags (NULL-terminated). */
static int s_start_ps(support_fixture *f, int port, int evaluator, const char *const *extra)
{
    static char hosts[64], run_dir[400];
    snprintf(hosts, sizeof hosts, "--ps_hosts=127.0.0.1:%d", port);
    snprintf(run_dir, sizeof run_dir, "--run_dir=%s", f->dir);
    const char *args[16] = {"ps", f->config, hosts, "--worker_hosts=a,b", "--task_index=0",
                            evaluator ? "--evaluator=1" : "--evaluator=0", run_dir};
    int n = 7;
    for (int i = 0; extra && extra[i]; i++) {
        args[n++] = extra[i];
    }
    args[n] = NULL;
    return support_spawn_asgd(f->dir, args);
}

/* A shard of config `text` started by `asgd ps` on a free port, a raw
 * client of it, and the initial parameters it holds (n of them). */
typedef struct raw_shard {
    int ps, port;
    size_t n;
    float *init;
    void *ctx, *sock;
} raw_shard;

static void s_raw_shard(support_fixture *f, const char *text, raw_shard *r)
{
    support_write_file(f->config, text);
    r->port = wire_client_free_port();
    r->ps = s_start_ps(f, r->port, 0, NULL);
    r->init = s_initial(f, &r->n);
    r->ctx = zmq_ctx_new();
    r->sock = wire_client_open(r->ctx, r->port, NULL);
}

/* Its operator stops the shard (SIGTERM before its workers are done: it
 * exits 128 + SIGTERM, as a process killed so, which a launcher retries;
 * it exited 0, and a PyTorchJob whose master it is succeeded) and the
 * client closes. */
static void s_raw_shard_close(raw_shard *r)
{
    kill(r->ps, SIGTERM);
    assert_int_equal(support_wait(r->ps), ERROR_SIGNALLED(SIGTERM));
    zmq_close(r->sock);
    zmq_ctx_term(r->ctx);
    free(r->init);
}

/* A reply that must come (within 10 s); its payload's bytes. */
static size_t s_receive(void *sock, wire_header *h, void *buf, size_t cap, uint64_t hi)
{
    long got = wire_client_receive(sock, h, buf, cap, hi, 10000);
    assert_true(got >= 0);
    return (size_t)got;
}

/* Sends h with its payload and receives the reply, as s_receive. */
static size_t s_exchange(void *sock, const wire_header *h, const void *payload, size_t bytes,
                         wire_header *reply, void *buf, size_t cap, uint64_t hi)
{
    wire_client_send(sock, h, payload, bytes);
    return s_receive(sock, reply, buf, cap, hi);
}

/* Sends h (no payload) and returns whether any reply came within ms. */
static bool s_answered(void *sock, const wire_header *h, size_t n, long ms)
{
    wire_client_send(sock, h, NULL, 0);
    float buf[64];
    wire_header reply;
    return wire_client_receive(sock, &reply, buf, sizeof buf, n, ms) >= 0 &&
           !(reply.flags & WIRE_FLAG_REFUSED);
}

/* Whether the next reply on sock, within 10 s, is the refusal of a message
 * numbered seq from a peer that does not speak for its index, for the
 * reason why (senders.h's verdict, the tag): no values, nothing else to
 * read in it. */
static bool s_refusal_came(void *sock, uint64_t seq, size_t n, senders_verdict why)
{
    float buf[64];
    wire_header reply;
    return wire_client_receive(sock, &reply, buf, sizeof buf, n, 10000) == 0 &&
           reply.flags == WIRE_FLAG_REFUSED && reply.encoding == WIRE_NO_PAYLOAD &&
           reply.seq == seq && reply.tag == why && reply.base_version == 0 &&
           reply.total == 0;
}

/* Sends h (and payload, when not NULL) over sock, each copy after the
 * last one's reply (a refusal comes at once; 10 s at most for any) and
 * 0.1 s apart, until the shard takes it: once it sees the peer that held
 * h's index gone (for up to 10 s); whether it did, its reply in *reply.
 * One reply a copy: none is left for the next read (a copy sent again
 * before a slow reply left one, which a later read took for its own). */
static bool s_taken_once_gone(void *sock, const wire_header *h, const void *payload,
                              size_t bytes, size_t n, wire_header *reply)
{
    float got[64];
    for (int i = 0; i < 100; i++) {
        wire_client_send(sock, h, payload, bytes);
        if (wire_client_receive(sock, reply, got, sizeof got, n, 10000) < 0) {
            return false;
        }
        if (!(reply->flags & WIRE_FLAG_REFUSED)) {
            return true;
        }
        nanosleep(&(struct timespec){.tv_nsec = 100000000}, NULL);
    }
    return false;
}

/* Sends h over sock: whether the shard refused it, for the reason why, as
 * from a peer that does not speak for its index. */
static bool s_refused(void *sock, const wire_header *h, size_t n, senders_verdict why)
{
    wire_client_send(sock, h, NULL, 0);
    return s_refusal_came(sock, h->seq, n, why);
}

/* The shard's counters, asked as a tool (WIRE_ANY) over sock. */
static cJSON *s_stats(void *sock, size_t n)
{
    wire_header h = {.type = WIRE_CONTROL, .worker = WIRE_ANY, .tag = WIRE_CONTROL_STATS,
                     .encoding = WIRE_NO_PAYLOAD};
    wire_client_send(sock, &h, NULL, 0);
    char json[4096] = {0};
    wire_header reply;
    s_receive(sock, &reply, json, sizeof json - 1, n);
    cJSON *j = cJSON_Parse(json);
    assert_non_null(j);
    return j;
}

/* The shard stopped by its operator (SIGTERM: it writes its checkpoint)
 * and started again on its port with `how` (--resume or --restore); the
 * client reconnects and returns once the shard answers (restored: one
 * stopped before then would leave its predecessor's checkpoint). */
static void s_raw_shard_back(support_fixture *f, raw_shard *r, const char *how)
{
    kill(r->ps, SIGTERM);
    assert_int_equal(support_wait(r->ps), ERROR_SIGNALLED(SIGTERM));
    zmq_close(r->sock);
    const char *extra[] = {how, NULL};
    r->ps = s_start_ps(f, r->port, 0, extra);
    r->sock = wire_client_open(r->ctx, r->port, NULL);
    cJSON_Delete(s_stats(r->sock, r->n));
}

/* Pulls as worker over sock and checks the shard still holds init at
 * version 0. */
/* The reply to a pull sent over sock: init at version 0. */
static void s_expect_initial_reply(void *sock, const float *init, size_t n)
{
    float got[64];
    wire_header reply;
    assert_int_equal(s_receive(sock, &reply, got, sizeof got, n), n * sizeof(float));
    assert_int_equal(reply.base_version, 0);
    assert_memory_equal(got, init, n * sizeof *got);
}

static void s_expect_untouched(void *sock, uint32_t worker, const float *init, size_t n)
{
    wire_header h = {.type = WIRE_PULL, .worker = worker, .encoding = WIRE_NO_PAYLOAD};
    wire_client_send(sock, &h, NULL, 0);
    s_expect_initial_reply(sock, init, n);
}

/* Sends a shard of n parameters every kind of malformed message; returns
 * how many. */
static int s_send_garbage(void *sock, size_t n)
{
    uint8_t noise[64];
    for (int i = 0; i < 64; i++) {
        noise[i] = (uint8_t)(i * 151 + 7);
    }
    float payload[64] = {1e30f, -1e30f};
    wire_header good = {.type = WIRE_PUSH, .worker = 0, .shard = 0, .offset = 0,
                        .count = n, .encoding = WIRE_F32};
    int sent = 0;
    wire_client_frames(sock, (const void *const[]){"hello"}, (const size_t[]){5}, 1), sent++;
    wire_client_frames(sock, (const void *const[]){noise}, (const size_t[]){64}, 1), sent++;
    wire_client_frames(sock, (const void *const[]){""}, (const size_t[]){0}, 1), sent++;
    wire_header h = good;
    h.offset = 1;                                         /* outside the shard */
    wire_client_send(sock, &h, payload, n * sizeof(float)), sent++;
    wire_client_send(sock, &good, payload, n * sizeof(float) - 4), sent++;   /* short payload */
    h = good;
    h.worker = 7;                                         /* no such worker */
    wire_client_send(sock, &h, payload, n * sizeof(float)), sent++;
    h = good;
    h.shard = 3;
    wire_client_send(sock, &h, payload, n * sizeof(float)), sent++;
    uint8_t head[WIRE_HEADER_SIZE];
    wire_encode(head, &good);
    head[4] = 99;                                         /* protocol version */
    wire_client_frames(sock, (const void *const[]){head, payload}, (const size_t[]){64, n * 4}, 2), sent++;
    wire_encode(head, &good);                             /* four frames */
    wire_client_frames(sock, (const void *const[]){head, payload, payload},
                  (const size_t[]){64, n * 4, 8}, 3), sent++;
    h = (wire_header){.type = WIRE_PULL, .worker = 0, .encoding = WIRE_NO_PAYLOAD};
    wire_client_send(sock, &h, payload, 8), sent++;                 /* a pull with a payload */
    return sent;
}

static void test_server_survives_garbage(void **state)
{
    support_fixture *f = *state;
    raw_shard r;
    s_raw_shard(f, s_small, &r);
    size_t n = r.n;
    void *sock = r.sock;

    int sent = s_send_garbage(sock, n);
    /* well-formed pushes holding a NaN and an infinity: refused, counted */
    float *bad = calloc(n, sizeof *bad);
    wire_header push = {.type = WIRE_PUSH, .worker = 0, .shard = 0, .offset = 0, .count = n,
                        .encoding = WIRE_F32};
    bad[n / 2] = NAN;
    wire_client_send(sock, &push, bad, n * sizeof(float));
    bad[n / 2] = INFINITY;
    wire_client_send(sock, &push, bad, n * sizeof(float));
    free(bad);

    s_expect_untouched(sock, 0, r.init, n);   /* still serving */
    cJSON *stats = s_stats(sock, n);
    assert_true(support_json_number(stats, "rejected") == sent);
    assert_true(support_json_number(stats, "nonfinite") == 2);
    assert_true(support_json_number(stats, "pushes") == 0);
    cJSON_Delete(stats);

    s_raw_shard_close(&r);   /* a tool may not stop a shard: its operator may */
    char path[600];
    snprintf(path, sizeof path, "%s/ps-0.json", f->dir);
    cJSON *final = support_json_file(path);
    assert_true(support_json_number(final, "rejected") == sent);
    cJSON_Delete(final);
}

/* One sparse pair of a compressed push: index and value, little-endian. */
static void s_pair(uint8_t *at, uint32_t index, float value)
{
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    for (int i = 0; i < 4; i++) {
        at[i] = (uint8_t)(index >> (8 * i));
        at[4 + i] = (uint8_t)(bits >> (8 * i));
    }
}

/* A shard of a run with compress = topk takes sparse pushes only, and
 * checks each whole before it touches a parameter: plain floats, indices
 * out of range, repeated or out of order, too many pairs and a ragged
 * payload are refused and counted; a NaN is refused as in any push; a
 * good pair moves exactly its parameter. */
static void test_a_compressed_shard_checks_every_payload(void **state)
{
    support_fixture *f = *state;
    char config[512];
    snprintf(config, sizeof config, "%s[algorithm]\ncompress = topk:0.5\n", s_small);
    raw_shard r;
    s_raw_shard(f, config, &r);
    size_t n = r.n;
    float *init = r.init;
    void *sock = r.sock;
    wire_header push = {.type = WIRE_PUSH, .worker = 0, .shard = 0, .offset = 0, .count = n,
                        .encoding = WIRE_SPARSE};
    uint8_t pairs[8 * 32];
    float plain[64] = {0};
    wire_header f32 = push;
    f32.encoding = WIRE_F32;
    int refused = 0;
    wire_client_send(sock, &f32, plain, n * sizeof(float)), refused++;
    s_pair(pairs, (uint32_t)n, 1);                           /* past the shard's range */
    wire_client_send(sock, &push, pairs, 8), refused++;
    s_pair(pairs, 5, 1);
    s_pair(pairs + 8, 5, 1);                                 /* the same index twice */
    wire_client_send(sock, &push, pairs, 16), refused++;
    s_pair(pairs + 8, 2, 1);                                 /* out of order */
    wire_client_send(sock, &push, pairs, 16), refused++;
    for (uint32_t i = 0; i < n + 1; i++) {                   /* more pairs than values */
        s_pair(pairs + 8 * i, i, 1);
    }
    wire_client_send(sock, &push, pairs, 8 * (n + 1)), refused++;
    wire_client_send(sock, &push, pairs, 12), refused++;     /* half a pair */
    s_pair(pairs, 1, NAN);
    wire_client_send(sock, &push, pairs, 8);                 /* well formed, not finite */
    s_expect_untouched(sock, 0, init, n);
    cJSON *stats = s_stats(sock, n);
    assert_true(support_json_number(stats, "rejected") == refused);
    assert_true(support_json_number(stats, "nonfinite") == 1);
    assert_true(support_json_number(stats, "pushes") == 0);
    cJSON_Delete(stats);

    s_pair(pairs, 3, 2);   /* a good push: parameter 3 takes lr * 2, the rest stay */
    wire_client_send(sock, &push, pairs, 8);
    wire_header pull = {.type = WIRE_PULL, .worker = 0, .encoding = WIRE_NO_PAYLOAD};
    wire_client_send(sock, &pull, NULL, 0);
    float got[64];
    wire_header reply;
    assert_int_equal(s_receive(sock, &reply, got, sizeof got, n), n * sizeof(float));
    assert_int_equal(reply.base_version, 1);
    init[3] -= 0.05f * 2;
    assert_memory_equal(got, init, n * sizeof *got);
    s_raw_shard_close(&r);
}

/* A shard injecting faults ([cluster] drop) loses some of its replies on
 * purpose, and counts each one it lost: the pulls' replies that came, and
 * those it counted dropped, are every pull (its counters, asked after them
 * on the same pipe, are answered after every reply it sent them). */
static void test_a_shards_own_dropped_replies_are_counted(void **state)
{
    support_fixture *f = *state;
    char text[600];   /* s_small ends in [cluster] */
    snprintf(text, sizeof text, "%sdrop = 0.5\n", s_small);
    raw_shard r;
    s_raw_shard(f, text, &r);
    size_t n = r.n;
    enum { PULLS = 40 };
    for (int i = 1; i <= PULLS; i++) {
        wire_header pull = {.type = WIRE_PULL, .worker = 0, .encoding = WIRE_NO_PAYLOAD,
                            .seq = (uint64_t)i};
        wire_client_send(r.sock, &pull, NULL, 0);
    }
    wire_header stats = {.type = WIRE_CONTROL, .worker = WIRE_ANY, .tag = WIRE_CONTROL_STATS,
                         .encoding = WIRE_NO_PAYLOAD};
    wire_client_send(r.sock, &stats, NULL, 0);
    char buf[4096] = {0};
    wire_header reply;
    int came = 0;
    for (;;) {
        size_t got = s_receive(r.sock, &reply, buf, sizeof buf - 1, n);
        if (reply.encoding == WIRE_JSON) {
            buf[got] = '\0';
            break;
        }
        came++;
    }
    cJSON *st = cJSON_Parse(buf);
    assert_non_null(st);
    double dropped = support_json_number(st, "injected_drops");
    assert_true(came > 0 && dropped > 0);
    assert_true(came + dropped == PULLS);
    cJSON_Delete(st);
    s_raw_shard_close(&r);
}

/* Sends worker's ATTACH naming payload; returns the shard's verdict (1:
 * taken) and its generation, which the client's later messages carry (a
 * message without one is a new process, whose predecessor's segment the
 * shard forgets). */
static uint64_t s_attach(void *sock, uint32_t worker, const uint8_t *payload, size_t n,
                         uint32_t *generation)
{
    wire_header h = {.type = WIRE_CONTROL, .worker = worker, .tag = WIRE_CONTROL_ATTACH,
                     .encoding = WIRE_SHM};
    wire_client_send(sock, &h, payload, WIRE_ATTACH_SIZE);
    wire_header reply;
    float buf[64];
    assert_int_equal(s_receive(sock, &reply, buf, sizeof buf, n), 0);
    *generation = reply.generation;
    return reply.tag;
}

/* A shared segment is taken only as its maker made it: a path that is not
 * /proc/PID/fd/FD (the right one through a link among them), a regular
 * file, a memfd that is not sealed, another user's (where root runs the
 * test), one of
 * another size (made so, or cut short), or the right one with another
 * token are refused, and the
 * shard goes on through the socket (a pull's reply carries its values);
 * the right one is taken: replies land in its reply area, a push in its
 * push area is applied (as a float32 push would be) and released, counted
 * as shared, once when it is sent again. A push in a segment from a
 * worker that attached none is refused and changes nothing, and so is one
 * that carries a payload too. */
static void test_shared_segments_are_checked(void **state)
{
    support_fixture *f = *state;
    raw_shard r;
    s_raw_shard(f, s_small, &r);
    size_t n = r.n;
    void *sock = r.sock;
    error err;
    uint8_t payload[WIRE_ATTACH_SIZE];
    uint32_t generation;

    shm_segment other, seg;
    assert_int_equal(shm_create(&seg, n, &err), 0);
    memset(payload, 0, sizeof payload);
    snprintf((char *)payload, SHM_PATH_MAX, "/etc/passwd");
    assert_int_equal(s_attach(sock, 0, payload, n, &generation), 0);
    /* the right segment by another name: only /proc/PID/fd/FD is opened (a
     * path of the sender's choosing could name a FIFO, which blocks) */
    char link[600];
    shm_attach_payload(&seg, payload);
    snprintf(link, sizeof link, "/tmp/asgd-segment-link-%d", (int)getpid());   /* short */
    remove(link);
    assert_int_equal(symlink((const char *)payload, link), 0);
    memset(payload, 0, SHM_PATH_MAX);
    memcpy(payload, link, strlen(link));
    assert_int_equal(s_attach(sock, 0, payload, n, &generation), 0);
    remove(link);
    /* a regular file and an unsealed memfd, each the right size and holding
     * seg's very header, named with seg's token: refused for their seals */
    char path[600];
    snprintf(path, sizeof path, "%s/plain", f->dir);
    int fds[2] = {open(path, O_RDWR | O_CREAT, 0600), memfd_create("unsealed", MFD_CLOEXEC)};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(pwrite(fds[i], seg.base, shm_bytes(n), 0), (ssize_t)shm_bytes(n));
        shm_attach_payload(&seg, payload);
        memset(payload, 0, SHM_PATH_MAX);
        snprintf((char *)payload, SHM_PATH_MAX, "/proc/%d/fd/%d", (int)getpid(), fds[i]);
        assert_int_equal(s_attach(sock, 0, payload, n, &generation), 0);
        close(fds[i]);
    }
    assert_int_equal(shm_create(&other, n + 1, &err), 0);
    shm_attach_payload(&other, payload);
    assert_int_equal(s_attach(sock, 0, payload, n, &generation), 0);
    shm_close(&other);
    /* another user's, where this test may make one (root, 65534 mapped in
     * its user namespace): refused */
    assert_int_equal(shm_create(&other, n, &err), 0);
    if (geteuid() == 0 && fchown(other.fd, 65534, 65534) == 0) {
        shm_attach_payload(&other, payload);
        assert_int_equal(s_attach(sock, 0, payload, n, &generation), 0);
    } else {
        fprintf(stderr, "test_shared_segments_are_checked: another user's segment not "
                "tried (not root, or uid 65534 not mapped here)\n");
    }
    shm_close(&other);
    /* sealed, seg's header and token, cut short: mapped whole, the shard
     * would read and write past its end (SIGBUS past the last page) */
    int short_fd = memfd_create("short", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    assert_int_equal(pwrite(short_fd, seg.base, 64, 0), 64);
    assert_int_equal(fcntl(short_fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL), 0);
    shm_attach_payload(&seg, payload);
    memset(payload, 0, SHM_PATH_MAX);
    snprintf((char *)payload, SHM_PATH_MAX, "/proc/%d/fd/%d", (int)getpid(), short_fd);
    assert_int_equal(s_attach(sock, 0, payload, n, &generation), 0);
    close(short_fd);
    shm_attach_payload(&seg, payload);
    payload[SHM_PATH_MAX] ^= 1;   /* another token */
    assert_int_equal(s_attach(sock, 0, payload, n, &generation), 0);
    s_expect_untouched(sock, 0, r.init, n);   /* refused: the values come in the reply */

    payload[SHM_PATH_MAX] ^= 1;
    assert_int_equal(s_attach(sock, 0, payload, n, &generation), 1);
    wire_header pull = {.type = WIRE_PULL, .worker = 0, .encoding = WIRE_NO_PAYLOAD,
                        .seq = 1, .generation = generation}, reply;
    float got[64];
    wire_client_send(sock, &pull, NULL, 0);
    assert_int_equal(s_receive(sock, &reply, got, sizeof got, n), 0);
    assert_int_equal(reply.encoding, WIRE_SHM);
    assert_memory_equal(seg.reply, r.init, n * sizeof(float));

    /* a push in the segment from a worker that attached none, and one with
     * a payload frame besides: refused */
    wire_header push = {.type = WIRE_PUSH, .worker = 1, .offset = 0, .count = n,
                        .encoding = WIRE_SHM, .seq = 1, .generation = generation};
    wire_client_send(sock, &push, NULL, 0);
    push.worker = 0;
    wire_client_send(sock, &push, seg.push, n * sizeof(float));
    s_expect_untouched(sock, 1, r.init, n);

    experiment e;
    assert_int_equal(experiment_configure(&e, f->config, 0, NULL, NULL, &err), 0);
    float lr = (float)e.optim.lr;
    experiment_destroy(&e);
    for (size_t i = 0; i < n; i++) {
        seg.push[i] = (float)i - 10.0f;
    }
    shm_pushed(&seg);
    push.seq = 2;
    wire_client_send(sock, &push, NULL, 0);
    pull.seq = 3;
    s_exchange(sock, &pull, NULL, 0, &reply, got, sizeof got, n);
    assert_int_equal(reply.encoding, WIRE_SHM);
    assert_int_equal(reply.base_version, 1);
    for (size_t i = 0; i < n; i++) {
        assert_float_equal(seg.reply[i], r.init[i] - lr * seg.push[i], 1e-6);
    }
    assert_int_equal(shm_wait_released(&seg, 1, &err), 0);
    /* the push sent again (its acknowledgement lost): taken and released
     * once, or the segment's count of releases runs one ahead of its pushes */
    wire_client_send(sock, &push, NULL, 0);
    cJSON *stats = s_stats(sock, n);
    assert_true(support_json_number(stats, "rejected") == 2);
    assert_true(support_json_number(stats, "pushes") == 1);
    assert_true(support_json_number(stats, "shared_pushes") == 1);
    assert_true(support_json_number(stats, "duplicates") == 1);
    cJSON_Delete(stats);
    assert_int_equal(atomic_load(seg.released), 1);
    s_raw_shard_close(&r);
    shm_close(&seg);
}

/* A worker's new process (its first message of generation 0) is answered
 * through the socket: the segment its predecessor attached is let go, not
 * named in a reply to a process that never mapped it. */
static void test_a_new_process_is_not_answered_through_an_old_segment(void **state)
{
    support_fixture *f = *state;
    raw_shard r;
    s_raw_shard(f, s_small, &r);
    size_t n = r.n;
    shm_segment seg;
    error err;
    assert_int_equal(shm_create(&seg, n, &err), 0);
    uint8_t payload[WIRE_ATTACH_SIZE];
    shm_attach_payload(&seg, payload);
    uint32_t generation;
    assert_int_equal(s_attach(r.sock, 0, payload, n, &generation), 1);
    float got[64];
    wire_header pull = {.type = WIRE_PULL, .worker = 0, .encoding = WIRE_NO_PAYLOAD, .seq = 2,
                        .generation = generation},
                reply;
    wire_client_send(r.sock, &pull, NULL, 0);
    assert_int_equal(s_receive(r.sock, &reply, got, sizeof got, n), 0);
    assert_int_equal(reply.encoding, WIRE_SHM);
    assert_memory_equal(seg.reply, r.init, n * sizeof(float));
    pull = (wire_header){.type = WIRE_PULL, .worker = 0, .encoding = WIRE_NO_PAYLOAD, .seq = 1};
    wire_client_send(r.sock, &pull, NULL, 0);
    assert_int_equal(s_receive(r.sock, &reply, got, sizeof got, n), n * sizeof(float));
    assert_int_equal(reply.encoding, WIRE_F32);
    assert_memory_equal(got, r.init, n * sizeof(float));
    shm_close(&seg);
    s_raw_shard_close(&r);
}

/* A pull sent twice (duplicated on the network, or sent again after its
 * reply was lost) is told the same answer at the same version, even after
 * another worker's push: DC-ASGD keeps what each worker pulled, and the
 * second answer once replaced it with the newer centre while the worker
 * went on from the first. A new pull sees the push. A pull numbered 0
 * (by a client of its own) is answered afresh: it was told the heap's
 * leftovers as the parameters. */
static void test_a_pull_sent_again_gets_the_same_answer(void **state)
{
    support_fixture *f = *state;
    char text[512];
    raw_shard r;
    s_raw_shard(f, s_small_of(text, sizeof text, "dcasgd"), &r);
    size_t n = r.n;
    float first[64], again[64], later[64], grad[64];
    wire_header unnumbered = {.type = WIRE_PULL, .worker = 1, .encoding = WIRE_NO_PAYLOAD};
    wire_client_send(r.sock, &unnumbered, NULL, 0);
    s_expect_initial_reply(r.sock, r.init, n);
    wire_header pull = {.type = WIRE_PULL, .worker = 0, .encoding = WIRE_NO_PAYLOAD, .seq = 1},
                reply, reply_again;
    s_exchange(r.sock, &pull, NULL, 0, &reply, first, sizeof first, n);
    pull.generation = reply.generation;   /* no longer a new process */
    pull.seq = 2;
    wire_client_send(r.sock, &pull, NULL, 0);
    assert_int_equal(s_receive(r.sock, &reply, first, sizeof first, n), n * sizeof(float));
    for (size_t i = 0; i < n; i++) {
        grad[i] = 1.0f + (float)i;
    }
    wire_header push = {.type = WIRE_PUSH, .worker = 1, .offset = 0, .count = n,
                        .encoding = WIRE_F32, .seq = 1};
    wire_client_send(r.sock, &push, grad, n * sizeof(float));
    wire_header pull1 = {.type = WIRE_PULL, .worker = 1, .encoding = WIRE_NO_PAYLOAD, .seq = 2};
    s_exchange(r.sock, &pull1, NULL, 0, &reply_again, later, sizeof later, n);
    assert_int_equal(reply_again.base_version, reply.base_version + 1);   /* applied */

    wire_client_send(r.sock, &pull, NULL, 0);   /* worker 0's pull 2 again */
    assert_int_equal(s_receive(r.sock, &reply_again, again, sizeof again, n), n * sizeof(float));
    assert_int_equal(reply_again.base_version, reply.base_version);
    assert_memory_equal(again, first, n * sizeof(float));
    pull.seq = 3;
    s_exchange(r.sock, &pull, NULL, 0, &reply_again, again, sizeof again, n);
    assert_int_equal(reply_again.base_version, reply.base_version + 1);
    assert_memory_equal(again, later, n * sizeof(float));
    /* one older than the last answered is awaited no more: answered, it
     * would set what the rule keeps back to what the worker no longer holds */
    pull.seq = 2;
    assert_false(s_answered(r.sock, &pull, n, 300));
    s_raw_shard_close(&r);
}

/* A push computed on another generation of the shard (before its
 * restart) is dropped, told late and counted, not applied; a DONE sent
 * again (its reply lost) adds the faults it reports once. */
static void test_a_push_from_another_generation_is_dropped(void **state)
{
    support_fixture *f = *state;
    char text[600];   /* faults on: s_small ends in [cluster] */
    snprintf(text, sizeof text, "%slatency = 0.001\n", s_small);
    raw_shard r;
    s_raw_shard(f, text, &r);
    size_t n = r.n;
    float got[64], grad[64];
    wire_header pull = {.type = WIRE_PULL, .worker = 0, .encoding = WIRE_NO_PAYLOAD, .seq = 1},
                reply;
    s_exchange(r.sock, &pull, NULL, 0, &reply, got, sizeof got, n);
    assert_true(reply.generation != 0);
    for (size_t i = 0; i < n; i++) {
        grad[i] = 1.0f;
    }
    wire_header push = {.type = WIRE_PUSH, .worker = 0, .count = n, .encoding = WIRE_F32,
                        .seq = 1, .generation = reply.generation ^ 2, .flags = WIRE_FLAG_ACK};
    s_exchange(r.sock, &push, grad, n * sizeof(float), &reply, got, sizeof got, n);
    assert_int_equal(reply.tag, PUSH_LATE);
    s_expect_untouched(r.sock, 1, r.init, n);
    wire_header done = {.type = WIRE_CONTROL, .worker = 0, .tag = WIRE_CONTROL_DONE,
                        .encoding = WIRE_NO_PAYLOAD, .base_version = 3, .samples = 1, .seq = 2};
    for (int i = 0; i < 2; i++) {
        s_exchange(r.sock, &done, NULL, 0, &reply, got, sizeof got, n);
    }
    cJSON *st = s_stats(r.sock, n);
    assert_true(support_json_number(st, "dropped") == 1);
    assert_true(support_json_number(st, "version") == 0);
    assert_true(support_json_number(st, "injected_drops") == 3);
    assert_true(support_json_number(st, "injected_duplicates") == 1);
    cJSON_Delete(st);
    s_raw_shard_close(&r);
}

/* A worker that has said DONE pushes no new step: a push of one is
 * refused, counted and answered late (a sender waiting for a verdict does
 * not wait for good), from its own peer or from a stranger that took its
 * place once it left (without auth): such pushes, 26 of them acknowledged
 * after a worker left, went into the final model, a run at 0.11 reported
 * as complete and not diverged. A step the shard has is a duplicate, as
 * before. */
static void test_no_push_after_done(void **state)
{
    support_fixture *f = *state;
    raw_shard r;
    s_raw_shard(f, s_small, &r);
    size_t n = r.n;
    float got[64], grad[64];
    for (size_t i = 0; i < n; i++) {
        grad[i] = 1.0f;
    }
    wire_header reply,
        push = {.type = WIRE_PUSH, .worker = 0, .count = n, .encoding = WIRE_F32, .seq = 1,
                .samples = 4, .total = 4, .flags = WIRE_FLAG_ACK},
        done = {.type = WIRE_CONTROL, .worker = 0, .tag = WIRE_CONTROL_DONE,
                .encoding = WIRE_NO_PAYLOAD, .seq = 2};
    s_exchange(r.sock, &push, grad, n * sizeof(float), &reply, got, sizeof got, n);
    s_exchange(r.sock, &done, NULL, 0, &reply, got, sizeof got, n);
    push.seq = 3;   /* a step the shard has, redone by a new process (a resumed job's
                     * take-up at another shard's lower count): a duplicate, as before */
    s_exchange(r.sock, &push, grad, n * sizeof(float), &reply, got, sizeof got, n);
    assert_int_equal(reply.tag, PUSH_LATE);
    push.seq = 4;
    push.total = 8;   /* a new step: refused, answered not to wait for good */
    s_exchange(r.sock, &push, grad, n * sizeof(float), &reply, got, sizeof got, n);
    assert_int_equal(reply.tag, PUSH_LATE);
    zmq_close(r.sock);   /* the worker leaves; a stranger takes its place */
    r.sock = wire_client_open(r.ctx, r.port, NULL);
    push.seq = 1;
    push.total = 12;
    assert_true(s_taken_once_gone(r.sock, &push, grad, n * sizeof(float), n, &reply));
    assert_int_equal(reply.tag, PUSH_LATE);
    cJSON *st = s_stats(r.sock, n);
    assert_true(support_json_number(st, "pushes") == 1);
    assert_true(support_json_number(st, "samples") == 4);
    assert_true(support_json_number(st, "rejected") == 2);
    assert_true(support_json_number(st, "duplicates") == 1);
    cJSON_Delete(st);
    s_raw_shard_close(&r);
}

/* A peer turned away for another job's settings holds no worker's place:
 * it took it, and the job's own worker was refused until it failed. Nor
 * does a message for a worker that has said DONE tell of updates an
 * earlier life of the shard lost: a stranger in the place of one that had
 * left (without auth) planted 10^12 in the summary. */
static void test_a_stranger_holds_no_place_and_plants_no_count(void **state)
{
    support_fixture *f = *state;
    raw_shard r;
    s_raw_shard(f, s_small, &r);
    size_t n = r.n;
    float got[64];
    wire_header reply,
        pull = {.type = WIRE_PULL, .worker = 0, .encoding = WIRE_NO_PAYLOAD, .seq = 1,
                .job = 0xdeadbeef};
    void *stranger = wire_client_open(r.ctx, r.port, NULL);
    wire_client_send(stranger, &pull, NULL, 0);
    s_receive(stranger, &reply, got, sizeof got, n);   /* told: another job's */
    assert_true(reply.job != 0xdeadbeef);
    s_expect_untouched(r.sock, 0, r.init, n);   /* the worker's place is its own */
    wire_header done = {.type = WIRE_CONTROL, .worker = 1, .tag = WIRE_CONTROL_DONE,
                        .encoding = WIRE_NO_PAYLOAD, .seq = 1};
    void *worker = wire_client_open(r.ctx, r.port, NULL);
    s_exchange(worker, &done, NULL, 0, &reply, got, sizeof got, n);
    zmq_close(worker);   /* worker 1 leaves, done; a stranger takes its place */
    wire_header old = {.type = WIRE_PULL, .worker = 1, .encoding = WIRE_NO_PAYLOAD, .seq = 1,
                       .generation = 7, .tag = 1000000000000};
    assert_true(s_taken_once_gone(stranger, &old, NULL, 0, n, &reply));
    cJSON *st = s_stats(r.sock, n);
    assert_true(support_json_number(st, "lost_updates") == 0);
    cJSON_Delete(st);
    zmq_close(stranger);
    s_raw_shard_close(&r);
}

/* A shard started with --restore that finds no checkpoint (a pod made
 * anew, its emptyDir empty) fails, saying why, when the evaluator of its
 * earlier life speaks to it, as when a worker of it does: with the workers
 * done, the job waited for good, and with new workers beside the old
 * evaluator it trained anew under the old rows of eval.csv, complete. */
static void test_the_evaluator_of_an_earlier_life_tells_of_lost_state(void **state)
{
    support_fixture *f = *state;
    support_write_file(f->config, s_small);
    int port = wire_client_free_port();
    const char *extra[] = {"--restore", NULL};
    int ps = s_start_ps(f, port, 1, extra);
    void *ctx = zmq_ctx_new();
    void *evaluator = wire_client_open(ctx, port, NULL);
    wire_header pull = {.type = WIRE_PULL, .worker = WIRE_EVALUATOR,
                        .encoding = WIRE_NO_PAYLOAD, .seq = 9, .generation = 0x5eed};
    wire_client_send(evaluator, &pull, NULL, 0);
    assert_int_equal(support_wait_within(ps, 30, "the shard"), 1);
    char path[700];
    snprintf(path, sizeof path, "%s/stderr", f->dir);
    char *err = support_read_file(path);
    if (!err || !strstr(err, "no checkpoint to come back from")) {
        fail_msg("\"%s\"", err ? err : "");
    }
    free(err);
    zmq_close(evaluator);
    zmq_ctx_term(ctx);
}

/* A job's last checkpoint says it completed (every worker and the
 * evaluator done): a new job started with --restore over it starts anew.
 * A run resumed from it (--resume: a launcher killed in its write-up) is
 * a new session, whose evaluator has yet to say it is done: a restart of
 * its shard in that session (--restore) restores, where it took the
 * checkpoint for a completed job's and started anew, the model lost. */
static void test_a_resumed_sessions_shard_restarts_from_its_checkpoint(void **state)
{
    support_fixture *f = *state;
    char text[600], path[700];
    snprintf(text, sizeof text, "%s[checkpoint]\nevery = 100\n", s_small);
    support_write_file(f->config, text);
    int port = wire_client_free_port();
    int ps = s_start_ps(f, port, 1, NULL);
    size_t n;
    float *init = s_initial(f, &n);
    void *ctx = zmq_ctx_new();
    void *sock = wire_client_open(ctx, port, NULL);
    const uint32_t who[] = {0, 1, WIRE_EVALUATOR};
    for (int i = 0; i < 3; i++) {   /* a peer of its own for each place */
        void *peer = wire_client_open(ctx, port, NULL);
        wire_header done = {.type = WIRE_CONTROL, .worker = who[i], .tag = WIRE_CONTROL_DONE,
                            .encoding = WIRE_NO_PAYLOAD, .seq = 1};
        assert_true(s_answered(peer, &done, n, 5000));
        zmq_close(peer);
    }
    assert_int_equal(support_wait_within(ps, 30, "the shard of a job done"), 0);
    zmq_close(sock);
    const char *resume[] = {"--resume", NULL}, *restore[] = {"--restore", NULL};
    ps = s_start_ps(f, port, 1, resume);
    sock = wire_client_open(ctx, port, NULL);
    cJSON_Delete(s_stats(sock, n));   /* serving */
    kill(ps, SIGTERM);   /* its checkpoint of this session */
    support_wait(ps);
    zmq_close(sock);
    ps = s_start_ps(f, port, 1, restore);
    sock = wire_client_open(ctx, port, NULL);
    cJSON *st = s_stats(sock, n);
    assert_true(support_json_number(st, "restarts") == 1);   /* restored */
    cJSON_Delete(st);
    kill(ps, SIGTERM);
    support_wait(ps);
    snprintf(path, sizeof path, "%s/stderr", f->dir);
    char *err = support_read_file(path);
    if (!err || strstr(err, "starts anew")) {
        fail_msg("the resumed session's shard restarted anew: %s", err ? err : "");
    }
    free(err);
    zmq_close(sock);
    zmq_ctx_term(ctx);
    free(init);
}

/* A pull's reply says what its sender needs: the examples that worker's
 * pushes carried (every worker's, to the evaluator), the staleness of its
 * last push; a sender that last heard from an earlier generation of the
 * shard is told it restarted, and the version that sender had seen counts
 * the updates the restart lost (this life began at version 0). */
static void test_a_reply_says_what_its_sender_needs(void **state)
{
    support_fixture *f = *state;
    raw_shard r;   /* a job with an evaluator, whose first pull opens the workers' gate */
    support_write_file(f->config, s_small);
    r.port = wire_client_free_port();
    r.ps = s_start_ps(f, r.port, 1, NULL);
    r.init = s_initial(f, &r.n);
    r.ctx = zmq_ctx_new();
    r.sock = wire_client_open(r.ctx, r.port, NULL);
    size_t n = r.n;
    float got[64], grad[64] = {0};
    wire_header pull = {.type = WIRE_PULL, .worker = WIRE_EVALUATOR,
                        .encoding = WIRE_NO_PAYLOAD, .seq = 1},
                reply;
    s_exchange(r.sock, &pull, NULL, 0, &reply, got, sizeof got, n);
    pull.worker = 0;
    s_exchange(r.sock, &pull, NULL, 0, &reply, got, sizeof got, n);
    uint32_t generation = reply.generation;
    const uint32_t samples[2] = {10, 5};
    for (uint32_t w = 0; w < 2; w++) {   /* on version 0: worker 1's is 1 stale */
        wire_header push = {.type = WIRE_PUSH, .worker = w, .count = n, .encoding = WIRE_F32,
                            .samples = samples[w], .seq = 1, .generation = generation,
                            .flags = WIRE_FLAG_ACK};
        s_exchange(r.sock, &push, grad, n * sizeof(float), &reply, got, sizeof got, n);
    }
    const uint32_t askers[3] = {0, 1, WIRE_EVALUATOR};
    const uint64_t totals[3] = {10, 5, 15}, stale[3] = {0, 1, 0};
    for (int i = 0; i < 3; i++) {
        pull = (wire_header){.type = WIRE_PULL, .worker = askers[i],
                             .encoding = WIRE_NO_PAYLOAD, .seq = 2, .generation = generation};
        s_exchange(r.sock, &pull, NULL, 0, &reply, got, sizeof got, n);
        if (reply.total != totals[i] || (i < 2 && reply.tag != stale[i])) {
            fail_msg("asker %u: total %llu (%llu), staleness %llu (%llu)", askers[i],
                     (unsigned long long)reply.total, (unsigned long long)totals[i],
                     (unsigned long long)reply.tag, (unsigned long long)stale[i]);
        }
        assert_int_equal(reply.flags & WIRE_FLAG_RESTARTED, 0);
    }
    /* a worker of an earlier life of the shard, which had seen version 7 */
    pull = (wire_header){.type = WIRE_PULL, .worker = 1, .encoding = WIRE_NO_PAYLOAD,
                         .seq = 3, .generation = generation ^ 2, .tag = 7};
    s_exchange(r.sock, &pull, NULL, 0, &reply, got, sizeof got, n);
    assert_true(reply.flags & WIRE_FLAG_RESTARTED);
    assert_int_equal(reply.generation, generation);
    /* worker 0 starts again: its first pull, of generation 0, says it is
     * a new process, whose pushes are numbered from 1 again (taken, not
     * dropped as sent twice) */
    pull = (wire_header){.type = WIRE_PULL, .worker = 0, .encoding = WIRE_NO_PAYLOAD,
                         .seq = 1};
    s_exchange(r.sock, &pull, NULL, 0, &reply, got, sizeof got, n);
    wire_header push = {.type = WIRE_PUSH, .worker = 0, .count = n, .encoding = WIRE_F32,
                        .samples = 1, .seq = 1, .generation = generation,
                        .flags = WIRE_FLAG_ACK};
    s_exchange(r.sock, &push, grad, n * sizeof(float), &reply, got, sizeof got, n);
    cJSON *st = s_stats(r.sock, n);
    assert_true(support_json_number(st, "lost_updates") == 7);   /* from version 0 */
    assert_true(support_json_number(st, "version") == 3);
    assert_true(support_json_number(st, "duplicates") == 0);
    cJSON_Delete(st);
    s_raw_shard_close(&r);
}

/* The updates a restart lost go into the shard's checkpoint: a shard that
 * learns of 7 lost ones and is stopped before anyone asks its counters
 * keeps them, and its next life, restored from that checkpoint, still
 * counts them (a checkpoint without them left the next life at 0, seen
 * only after a second failure). */
static void test_lost_updates_outlive_the_shards_life(void **state)
{
    support_fixture *f = *state;
    raw_shard r;
    s_raw_shard(f, s_small, &r);
    size_t n = r.n;
    float got[64];
    wire_header pull = {.type = WIRE_PULL, .worker = 0, .encoding = WIRE_NO_PAYLOAD, .seq = 1},
                reply;
    s_exchange(r.sock, &pull, NULL, 0, &reply, got, sizeof got, n);
    pull = (wire_header){.type = WIRE_PULL, .worker = 1, .encoding = WIRE_NO_PAYLOAD,
                         .seq = 1, .generation = reply.generation ^ 2, .tag = 7};
    s_exchange(r.sock, &pull, NULL, 0, &reply, got, sizeof got, n);
    assert_true(reply.flags & WIRE_FLAG_RESTARTED);
    s_raw_shard_back(f, &r, "--restore");
    cJSON *st = s_stats(r.sock, n);
    assert_true(support_json_number(st, "restarts") == 1);
    assert_true(support_json_number(st, "lost_updates") == 7);
    cJSON_Delete(st);
    s_raw_shard_close(&r);
}

/* A shard's ps-K.json is its own life's: one an earlier process left goes
 * when the shard starts (a shard killed in a resumed session writes none,
 * and the launcher summed the last session's counters as this one's, no
 * shard missing), and the shard writes its own when it stops. */
static void test_a_shards_counters_are_its_own_lifes(void **state)
{
    support_fixture *f = *state;
    char path[4200];
    snprintf(path, sizeof path, "%s/ps-0.json", f->dir);
    support_write_file(path, "{\"shard\": 0, \"version\": 99}\n");
    raw_shard r;
    s_raw_shard(f, s_small, &r);
    cJSON_Delete(s_stats(r.sock, r.n));   /* serving */
    assert_int_equal(access(path, F_OK), -1);
    s_raw_shard_close(&r);
    shard_stats st;
    error err = {0};
    assert_int_equal(shard_stats_read(path, &st, &err), 0);
    assert_int_equal(st.version, 0);
}

/* A worker's pull to the shard; its clock as the counters say then. */
typedef struct shard_clock {
    double first_pull_at, resumed_at, trained_s, started_at;
} shard_clock;

static shard_clock s_pull_and_clock(raw_shard *r, uint64_t seq)
{
    float got[64];
    wire_header pull = {.type = WIRE_PULL, .worker = 0, .encoding = WIRE_NO_PAYLOAD,
                        .seq = seq}, reply;
    s_exchange(r->sock, &pull, NULL, 0, &reply, got, sizeof got, r->n);
    cJSON *st = s_stats(r->sock, r->n);
    shard_clock c = {support_json_number(st, "first_pull_at"),
                     support_json_number(st, "resumed_at"), support_json_number(st, "trained_s"),
                     support_json_number(st, "started_at")};
    cJSON_Delete(st);
    return c;
}

/* A shard restarted after a failure within a resumed session keeps that
 * session's clock: its first pull (where start-up ended; the restart's
 * took its place, and start-up took in the training before the failure)
 * and its origin. Restarted before the session's first pull, it still
 * counts the training before the interruption from that pull (it was
 * dropped: the time axis went back to 0, samples/s over the last part).
 * Its session began when the session's first life did (a resume begins
 * one): every pod made anew, wall_time_s was 6.5 s against a time_s of
 * 11.3 s. */
static void test_a_restart_keeps_the_resumed_sessions_clock(void **state)
{
    support_fixture *f = *state;
    raw_shard r;
    s_raw_shard(f, s_small, &r);
    float got[64], grad[64] = {0};
    wire_header pull = {.type = WIRE_PULL, .worker = 0, .encoding = WIRE_NO_PAYLOAD, .seq = 1},
                reply;
    s_exchange(r.sock, &pull, NULL, 0, &reply, got, sizeof got, r.n);
    nanosleep(&(struct timespec){.tv_nsec = 50000000}, NULL);   /* 50 ms of training */
    wire_header push = {.type = WIRE_PUSH, .worker = 0, .count = r.n, .encoding = WIRE_F32,
                        .samples = 1, .seq = 2, .generation = reply.generation,
                        .flags = WIRE_FLAG_ACK};
    s_exchange(r.sock, &push, grad, r.n * sizeof(float), &reply, got, sizeof got, r.n);
    s_raw_shard_back(f, &r, "--resume");
    shard_clock resumed = s_pull_and_clock(&r, 1);
    assert_true(resumed.trained_s >= 0.05 && resumed.resumed_at > 0);
    assert_true(fabs(resumed.resumed_at - resumed.first_pull_at - resumed.trained_s) < 1e-4);
    s_raw_shard_back(f, &r, "--restore");
    shard_clock restarted = s_pull_and_clock(&r, 1);
    if (restarted.started_at != resumed.started_at) {
        fail_msg("restarted: the session began at %.6f, not %.6f", restarted.started_at,
                 resumed.started_at);
    }
    if (fabs(restarted.resumed_at - resumed.resumed_at) > 1e-4 ||
        fabs(restarted.first_pull_at - resumed.first_pull_at) > 1e-4) {
        fail_msg("restarted: first pull at %.6f, resumed at %.6f; before: %.6f, %.6f",
                 restarted.first_pull_at, restarted.resumed_at, resumed.first_pull_at,
                 resumed.resumed_at);
    }
    s_raw_shard_back(f, &r, "--resume");   /* and restarted before any pull */
    s_raw_shard_back(f, &r, "--restore");
    shard_clock early = s_pull_and_clock(&r, 1);
    if (fabs(early.trained_s - resumed.trained_s) > 1e-4 ||   /* no push since */
        fabs(early.resumed_at - early.first_pull_at - early.trained_s) > 1e-4) {
        fail_msg("restarted before the first pull: %.6f s trained (%.6f before), first pull "
                 "at %.6f, resumed at %.6f", early.trained_s, resumed.trained_s,
                 early.first_pull_at, early.resumed_at);
    }
    s_raw_shard_close(&r);
}

/* A sender has one pull waiting, the last it sent: sync's worker 0 asks
 * for version 2, then for version 1, and is answered once the first round
 * makes version 1. A pull from a sender that heard from an earlier life
 * of the shard is answered at once, whatever it asks for: it must learn
 * of the restart. */
static void test_a_waiting_pull_is_the_senders_last(void **state)
{
    support_fixture *f = *state;
    char text[512];
    raw_shard r;
    s_raw_shard(f, s_small_of(text, sizeof text, "sync"), &r);
    size_t n = r.n;
    float got[64], grad[64] = {0};
    wire_header pull = {.type = WIRE_PULL, .worker = 0, .encoding = WIRE_NO_PAYLOAD, .seq = 1,
                        .base_version = 2},
                reply;
    assert_false(s_answered(r.sock, &pull, n, 300));
    pull.seq = 2;
    pull.base_version = 1;
    assert_false(s_answered(r.sock, &pull, n, 300));
    for (uint32_t w = 0; w < 2; w++) {   /* round 0 */
        wire_header push = {.type = WIRE_PUSH, .worker = w, .count = n, .encoding = WIRE_F32,
                            .samples = 8, .seq = w == 0 ? 3 : 1};
        wire_client_send(r.sock, &push, grad, n * sizeof(float));
    }
    s_receive(r.sock, &reply, got, sizeof got, n);
    assert_true(reply.seq == 2 && reply.base_version == 1);
    pull = (wire_header){.type = WIRE_PULL, .worker = 1, .encoding = WIRE_NO_PAYLOAD,
                         .seq = 2, .base_version = 5, .generation = reply.generation ^ 2};
    s_exchange(r.sock, &pull, NULL, 0, &reply, got, sizeof got, n);
    assert_true(reply.seq == 2 && reply.base_version == 1);
    assert_true(reply.flags & WIRE_FLAG_RESTARTED);
    s_raw_shard_close(&r);
}

/* A job's first evaluation is of the initial model, however its processes
 * were started: a shard that expects an evaluator holds the workers' pulls
 * until the evaluator's first, then answers them at version 0. */
static void test_workers_begin_after_the_first_evaluation(void **state)
{
    support_fixture *f = *state;
    support_write_file(f->config, s_small);
    int port = wire_client_free_port();
    int ps = s_start_ps(f, port, 1, NULL);
    size_t n;
    float *init = s_initial(f, &n);
    void *ctx = zmq_ctx_new();
    void *worker = wire_client_open(ctx, port, NULL);
    void *evaluator = wire_client_open(ctx, port, NULL);
    wire_header pull = {.type = WIRE_PULL, .worker = 1, .encoding = WIRE_NO_PAYLOAD};
    assert_false(s_answered(worker, &pull, n, 500));   /* held */
    /* and told once a second that the shard is there (an empty message),
     * so that it does not reach its timeout */
    zmq_pollitem_t item = {.socket = worker, .events = ZMQ_POLLIN};
    char probe[8];
    assert_int_equal(zmq_poll(&item, 1, 3000), 1);
    assert_int_equal(zmq_recv(worker, probe, sizeof probe, 0), 0);
    s_expect_untouched(evaluator, WIRE_EVALUATOR, init, n);
    s_expect_initial_reply(worker, init, n);   /* the held pull, answered now */
    kill(ps, SIGTERM);
    assert_int_equal(support_wait(ps), ERROR_SIGNALLED(SIGTERM));
    zmq_close(worker);
    zmq_close(evaluator);
    zmq_ctx_term(ctx);
    free(init);
}

/* A worker that an earlier life of the shard answered (its pull carries
 * another generation) shows a job under way: the gate for the first
 * evaluation opens for every worker, as the evaluator has long passed it. */
static void test_a_job_under_way_passes_the_gate(void **state)
{
    support_fixture *f = *state;
    support_write_file(f->config, s_small);
    int port = wire_client_free_port();
    int ps = s_start_ps(f, port, 1, NULL);
    size_t n;
    float *init = s_initial(f, &n);
    void *ctx = zmq_ctx_new();
    void *sock = wire_client_open(ctx, port, NULL);
    wire_header pull = {.type = WIRE_PULL, .worker = 1, .encoding = WIRE_NO_PAYLOAD, .seq = 4,
                        .generation = 0x5eed};
    float got[64];
    wire_header reply;
    s_exchange(sock, &pull, NULL, 0, &reply, got, sizeof got, n);
    assert_true(reply.flags & WIRE_FLAG_RESTARTED);   /* answered at once, and told */
    pull = (wire_header){.type = WIRE_PULL, .worker = 0, .encoding = WIRE_NO_PAYLOAD, .seq = 1};
    assert_true(s_answered(sock, &pull, n, 5000));   /* a new worker 0: not held */
    kill(ps, SIGTERM);
    assert_int_equal(support_wait(ps), ERROR_SIGNALLED(SIGTERM));
    zmq_close(sock);
    zmq_ctx_term(ctx);
    free(init);
}

/* Without CURVE, worker 0 and the evaluator belong to the peers that first
 * spoke for them: another peer's push, DONE or pull for them is
 * answered with a refusal alone (to that peer: a second process given the
 * same index learns why it is not served), changes nothing, and is counted
 * as foreign. Once worker 0's peer has gone, a new one (a restarted
 * worker) takes its place. */
static void test_messages_speak_only_for_their_sender(void **state)
{
    support_fixture *f = *state;
    support_write_file(f->config, s_small);
    int port = wire_client_free_port();
    int ps = s_start_ps(f, port, 1, NULL);
    size_t n;
    float *init = s_initial(f, &n);
    void *ctx = zmq_ctx_new();
    void *worker = wire_client_open(ctx, port, NULL);
    void *evaluator = wire_client_open(ctx, port, NULL);
    void *forger = wire_client_open(ctx, port, NULL);
    s_expect_untouched(evaluator, WIRE_EVALUATOR, init, n);   /* workers wait for it */
    s_expect_untouched(worker, 0, init, n);

    float *huge = malloc(n * sizeof *huge);
    for (size_t i = 0; i < n; i++) {
        huge[i] = i % 2 ? 1e30f : -1e30f;
    }
    wire_header push = {.type = WIRE_PUSH, .worker = 0, .count = n, .encoding = WIRE_F32,
                        .samples = 4000000};
    wire_client_send(forger, &push, huge, n * sizeof(float));
    assert_true(s_refusal_came(forger, push.seq, n, SENDERS_HELD));
    free(huge);
    const wire_header forged[] = {
        {.type = WIRE_CONTROL, .worker = 0, .tag = WIRE_CONTROL_DONE, .encoding = WIRE_NO_PAYLOAD},
        {.type = WIRE_CONTROL, .worker = WIRE_EVALUATOR, .tag = WIRE_CONTROL_DONE,
         .encoding = WIRE_NO_PAYLOAD},
        {.type = WIRE_PULL, .worker = WIRE_EVALUATOR, .encoding = WIRE_NO_PAYLOAD},
    };
    for (int i = 0; i < 3; i++) {
        wire_header numbered = forged[i];
        numbered.seq = 100 + (uint64_t)i;
        assert_true(s_refused(forger, &numbered, n, SENDERS_HELD));
    }
    /* control 3, SHUTDOWN once (which nothing sent), stops no shard: it
     * is no message, from anyone */
    wire_header stop = {.type = WIRE_CONTROL, .worker = WIRE_EVALUATOR, .tag = 3,
                        .encoding = WIRE_NO_PAYLOAD};
    assert_false(s_answered(forger, &stop, n, 300));
    assert_false(s_answered(evaluator, &stop, n, 300));
    s_expect_untouched(worker, 0, init, n);
    cJSON *stats = s_stats(forger, n);   /* counters: anyone may ask */
    assert_true(support_json_number(stats, "foreign") == 4);
    assert_true(support_json_number(stats, "rejected") == 2);
    assert_true(support_json_number(stats, "pushes") == 0);
    assert_true(support_json_number(stats, "samples") == 0);
    cJSON_Delete(stats);
    assert_true(support_alive(ps));

    /* a flood of forged pulls as worker 0: each refused, and the real
     * worker asked whether it is still there at most every 0.1 s, not once
     * per forgery (each ask an empty message it had to read and skip) */
    wire_header forged_pull = {.type = WIRE_PULL, .worker = 0, .encoding = WIRE_NO_PAYLOAD};
    nanosleep(&(struct timespec){.tv_nsec = 150000000}, NULL);   /* past the last probe's
                                                                   * 0.1 s: the first probes */
    for (int batch = 0; batch < 200; batch++) {   /* refused to the forger alone, each:
                                                    * 5 at a time, well within the 64
                                                    * replies a peer may leave unread
                                                    * (ZeroMQ may take up to 90% fewer),
                                                    * past which they are dropped */
        for (int i = 0; i < 5; i++) {
            wire_client_send(forger, &forged_pull, NULL, 0);
        }
        for (int i = 0; i < 5; i++) {
            assert_true(s_refusal_came(forger, 0, n, SENDERS_HELD));
        }
    }
    stats = s_stats(forger, n);
    assert_true(support_json_number(stats, "foreign") == 1004);
    cJSON_Delete(stats);
    int probes = 0;
    for (zmq_msg_t msg; zmq_msg_init(&msg) == 0 && zmq_msg_recv(&msg, worker, ZMQ_DONTWAIT) >= 0;
         zmq_msg_close(&msg)) {
        probes += zmq_msg_size(&msg) == 0;
    }
    if (probes < 1 || probes > 100) {
        fail_msg("worker 0 was probed %d times for 1,000 forged pulls", probes);
    }

    /* worker 0's peer goes; its successor is answered once the shard sees
     * it gone (refused and asking again every 0.1 s until then, as a worker
     * resends; for up to 10 s) */
    zmq_close(worker);
    worker = wire_client_open(ctx, port, NULL);
    wire_header pull = {.type = WIRE_PULL, .worker = 0, .encoding = WIRE_NO_PAYLOAD}, reply;
    assert_true(s_taken_once_gone(worker, &pull, NULL, 0, n, &reply));

    /* the shard ends when the workers and the evaluator say DONE */
    void *second = wire_client_open(ctx, port, NULL);
    wire_header done = {.type = WIRE_CONTROL, .worker = 0, .tag = WIRE_CONTROL_DONE,
                        .encoding = WIRE_NO_PAYLOAD};
    assert_true(s_answered(worker, &done, n, 5000));
    done.worker = 1;
    assert_true(s_answered(second, &done, n, 5000));
    done.worker = WIRE_EVALUATOR;
    assert_true(s_answered(evaluator, &done, n, 5000));
    assert_int_equal(support_wait(ps), 0);
    zmq_close(worker);
    zmq_close(second);
    zmq_close(evaluator);
    zmq_close(forger);
    zmq_ctx_term(ctx);
    free(init);
}

/* A job without an evaluator has no one to speak as it: a stranger's
 * DONE as the evaluator is refused and counted, and the shard goes on, as
 * is its pull of the model. */
static void test_no_one_speaks_as_a_missing_evaluator(void **state)
{
    support_fixture *f = *state;
    raw_shard r;
    s_raw_shard(f, s_small, &r);
    wire_header done = {.type = WIRE_CONTROL, .worker = WIRE_EVALUATOR,
                        .tag = WIRE_CONTROL_DONE, .encoding = WIRE_NO_PAYLOAD},
                pull = {.type = WIRE_PULL, .worker = WIRE_EVALUATOR, .encoding = WIRE_NO_PAYLOAD};
    assert_false(s_answered(r.sock, &done, r.n, 300));
    assert_false(s_answered(r.sock, &pull, r.n, 300));
    assert_true(support_alive(r.ps));
    cJSON *stats = s_stats(r.sock, r.n);
    assert_true(support_json_number(stats, "rejected") == 2);
    cJSON_Delete(stats);
    s_raw_shard_close(&r);
}

/* The soft limit of open files process pid runs under, from
 * /proc/PID/limits. */
static long s_soft_file_limit(int pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/limits", pid);
    FILE *in = fopen(path, "r");
    assert_non_null(in);
    long soft = -1;
    while (fgets(line, sizeof line, in)) {
        if (strncmp(line, "Max open files", 14) == 0) {
            soft = strtol(line + 14, NULL, 10);
        }
    }
    fclose(in);
    return soft;
}

/* A shard raises its soft limit of open files to the hard one: a flood of
 * idle connections, which CURVE cannot refuse before their handshake, used
 * up the usual 1,024, and a restarted worker could not connect nor the
 * checkpoint at its end be written. */
static void test_a_shard_takes_every_file_it_may(void **state)
{
    support_fixture *f = *state;
    struct rlimit was, low;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &was), 0);
    if (was.rlim_max <= 256) {
        fprintf(stderr, "a hard limit of %ld open files: nothing to raise\n",
                (long)was.rlim_max);
        skip();
    }
    low = (struct rlimit){.rlim_cur = 256, .rlim_max = was.rlim_max};
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);   /* inherited by the shard */
    raw_shard r;
    s_raw_shard(f, s_small, &r);
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &was), 0);
    wire_header pull = {.type = WIRE_PULL, .worker = 0, .encoding = WIRE_NO_PAYLOAD, .seq = 1};
    assert_true(s_answered(r.sock, &pull, r.n, 10000));   /* set up, limit raised */
    long soft = s_soft_file_limit(r.ps);
    if (soft != (long)was.rlim_max) {
        fail_msg("the shard's soft limit is %ld open files, its hard one %ld", soft,
                 (long)was.rlim_max);
    }
    s_raw_shard_close(&r);
}

/* Peak resident memory of process pid, in kB (VmHWM). */
static long s_peak_kb(int pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    FILE *f = fopen(path, "r");
    long kb = -1;
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, "VmHWM:", 6) == 0) {
            kb = strtol(line + 6, NULL, 10);
        }
    }
    if (f) {
        fclose(f);
    }
    assert_true(kb > 0);
    return kb;
}

/* Over a raw TCP connection to port: a ZMTP 3.0 greeting for mechanism
 * (the first thing a peer sends, before any key is checked), then one
 * command frame announcing `bytes`, and as many of them as the shard
 * takes. */
static void s_send_oversized_command(int port, const char *mechanism, uint64_t bytes)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in at = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(connect(fd, (struct sockaddr *)&at, sizeof at), 0);
    uint8_t greeting[64] = {0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 3, 0};
    memcpy(greeting + 12, mechanism, strlen(mechanism));
    assert_int_equal(send(fd, greeting, sizeof greeting, MSG_NOSIGNAL), 64);
    uint8_t head[9] = {0x06};   /* a command, with an 8-byte size */
    for (int i = 0; i < 8; i++) {
        head[1 + i] = (uint8_t)(bytes >> (56 - 8 * i));
    }
    send(fd, head, sizeof head, MSG_NOSIGNAL);
    static uint8_t zeros[1 << 20];
    for (uint64_t sent = 0; sent < bytes;) {
        ssize_t n = send(fd, zeros, sizeof zeros, MSG_NOSIGNAL);
        if (n <= 0) {
            break;   /* the shard hung up: what a shard should do */
        }
        sent += (uint64_t)n;
    }
    close(fd);
}

/* A frame larger than any a shard takes is refused before it is read
 * whole, by a peer that has a key or not: a shard held every frame in
 * memory before checking it, 1.5 GB for one CURVE handshake command sent
 * before any key was checked. Here 256 MB, as a handshake's command
 * (without CURVE and with it) and as a message: the shard's peak memory
 * grows by less than 16 MB, and it goes on answering. */
static void test_oversized_frames_are_never_held(void **state)
{
    support_fixture *f = *state;
    const uint64_t huge = 256u << 20;
    for (int curve = 0; curve < 2; curve++) {
        support_write_file(f->config, s_small);
        char keys[400], keys_arg[420];
        snprintf(keys, sizeof keys, "%s/keys", f->dir);
        snprintf(keys_arg, sizeof keys_arg, "--keys=%s", keys);
        const char *make[] = {"keys", keys, "--workers", "2", NULL};
        net_auth ev;
        error err = {0};
        if (curve) {
            support_run_asgd(&f->r, f->dir, make);
            assert_int_equal(f->r.status, 0);
            assert_int_equal(auth_load(&ev, keys, "evaluator", &err), 0);
        }
        int port = wire_client_free_port();
        const char *extra[] = {"cluster.auth=curve", keys_arg, NULL};
        int ps = s_start_ps(f, port, 0, curve ? extra : NULL);
        void *ctx = zmq_ctx_new();
        void *tool = wire_client_open(ctx, port, curve ? &ev : NULL);
        size_t n;
        float *init = s_initial(f, &n);
        cJSON_Delete(s_stats(tool, n));   /* it is up */
        long before = s_peak_kb(ps);
        s_send_oversized_command(port, curve ? "CURVE" : "NULL", huge);
        if (!curve) {   /* and as a message, after the handshake */
            void *big = wire_client_open(ctx, port, NULL);
            uint8_t *payload = calloc(1, huge);
            assert_non_null(payload);
            wire_header h = {.type = WIRE_PUSH, .worker = 0, .count = n,
                             .encoding = WIRE_F32, .samples = 1};
            wire_client_send(big, &h, payload, huge);
            free(payload);
            cJSON_Delete(s_stats(tool, n));
            zmq_close(big);
        }
        cJSON *stats = s_stats(tool, n);
        assert_true(support_json_number(stats, "pushes") == 0);
        cJSON_Delete(stats);
        long grew = s_peak_kb(ps) - before;
        if (grew > 16 * 1024) {
            fail_msg("%s: the shard's peak memory grew by %ld kB", curve ? "curve" : "plain",
                     grew);
        }
        kill(ps, SIGTERM);
        assert_int_equal(support_wait(ps), ERROR_SIGNALLED(SIGTERM));
        zmq_close(tool);
        zmq_ctx_term(ctx);
        free(init);
        if (curve) {
            auth_free(&ev);
        }
    }
}

/* A sender has one pull waiting at a shard: 100,000 pulls that can never
 * be ready (each a new request) leave one waiting, and the shard answers
 * at once. Each once waited, so that a peer grew the shard's memory
 * without end (about 400 bytes a pull) and every push scanned them all.
 * A DONE's fault counts are read only when the job injects faults: one
 * set injected_drops to 2^64 in ps-0.json, which no reader could take
 * back. */
static void test_a_peer_cannot_pile_up_pulls(void **state)
{
    support_fixture *f = *state;
#ifdef __SANITIZE_ADDRESS__
    /* AddressSanitizer keeps freed memory aside (its quarantine), which the
     * peak would count: none for the shard measured here */
    const char *asan = getenv("ASAN_OPTIONS");
    char options[1024];
    snprintf(options, sizeof options, "%s%squarantine_size_mb=0", asan ? asan : "",
             asan && *asan ? ":" : "");
    char *was = asan ? strdup(asan) : NULL;
    setenv("ASAN_OPTIONS", options, 1);
#endif
    raw_shard r;
    s_raw_shard(f, "[data]\ndataset = synthetic\ndim = 6\nclasses = 3\n[model]\n"
                   "type = softmax\n[train]\nalgorithm = sync\n[cluster]\nworkers = 2\n", &r);
#ifdef __SANITIZE_ADDRESS__
    if (was) {   /* the other tests' processes keep it */
        setenv("ASAN_OPTIONS", was, 1);
        free(was);
    } else {
        unsetenv("ASAN_OPTIONS");
    }
#endif
    cJSON_Delete(s_stats(r.sock, r.n));   /* it is up */
    long before = s_peak_kb(r.ps);
    for (uint64_t seq = 1; seq <= 100000; seq++) {
        wire_header pull = {.type = WIRE_PULL, .worker = 0, .base_version = UINT64_MAX,
                            .encoding = WIRE_NO_PAYLOAD, .seq = seq};
        assert_true(wire_client_send(r.sock, &pull, NULL, 0));
    }
    cJSON_Delete(s_stats(r.sock, r.n));   /* after all of them, on the same pipe */
    long grew = s_peak_kb(r.ps) - before;
#ifdef ASGD_TSAN
    long limit = 8192;   /* ThreadSanitizer's shadow of what the shard allocates */
#else
    long limit = 2048;   /* 100,000 pulls kept, at only 48 bytes each, take 4.8 MB */
#endif
    if (grew > limit) {
        fail_msg("100,000 waiting pulls grew the shard's peak memory by %ld kB", grew);
    }
    wire_header done = {.type = WIRE_CONTROL, .worker = 0, .tag = WIRE_CONTROL_DONE,
                        .base_version = UINT64_MAX, .samples = UINT32_MAX,
                        .encoding = WIRE_NO_PAYLOAD};
    wire_client_send(r.sock, &done, NULL, 0);
    wire_header reply;
    float buf[64];
    s_receive(r.sock, &reply, buf, sizeof buf, r.n);
    cJSON *stats = s_stats(r.sock, r.n);
    assert_true(support_json_number(stats, "injected_drops") == 0);
    assert_true(support_json_number(stats, "injected_duplicates") == 0);
    cJSON_Delete(stats);
    s_raw_shard_close(&r);
}

/* A shard stopped by a signal once every worker is done but before its
 * evaluator is (its final evaluation still to come) has not ended its job:
 * it exits 128 + SIGTERM (it exited 0, and a PyTorchJob whose master it
 * is succeeded while the evaluator finished). */
static void test_a_shard_stopped_before_its_evaluator_is_done(void **state)
{
    support_fixture *f = *state;
    support_write_file(f->config, s_small);
    int port = wire_client_free_port();
    int ps = s_start_ps(f, port, 1, NULL);
    void *ctx = zmq_ctx_new();
    size_t n;
    float *init = s_initial(f, &n);
    void *evaluator = wire_client_open(ctx, port, NULL);
    s_expect_untouched(evaluator, WIRE_EVALUATOR, init, n);   /* it is up */
    void *w[2];
    for (int k = 0; k < 2; k++) {
        w[k] = wire_client_open(ctx, port, NULL);
        wire_header done = {.type = WIRE_CONTROL, .worker = (uint32_t)k,
                            .tag = WIRE_CONTROL_DONE, .encoding = WIRE_NO_PAYLOAD};
        assert_true(s_answered(w[k], &done, n, 5000));
    }
    kill(ps, SIGTERM);
    assert_int_equal(support_wait(ps), ERROR_SIGNALLED(SIGTERM));
    for (int k = 0; k < 2; k++) {
        zmq_close(w[k]);
    }
    zmq_close(evaluator);
    zmq_ctx_term(ctx);
    free(init);
}

/* Writes DIR/NAME a certificate whose key lines are `lines`. */
static void s_cert(const char *dir, const char *name, const char *lines)
{
    char path[600], text[600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(text, sizeof text, "metadata\ncurve\n%s", lines);
    support_write_file(path, text);
}

/* A keys folder is checked as it is read: a key of the wrong length or
 * not Z85 (it was cut to 40, or its garbage bytes admitted), a secret
 * certificate without its secret key, or no client to admit is refused,
 * naming the file; what is not NAME.key (a README, a name no User-Id
 * takes) is passed over; the folder is the owner's alone. */
static void test_a_keys_folder_is_checked(void **state)
{
    support_fixture *f = *state;
    char keys[400], only_server[400], readme[500];
    snprintf(keys, sizeof keys, "%s/checked", f->dir);
    error err = {0};
    assert_int_equal(auth_make_keys(keys, 2, &err), 0);
    struct stat st;
    assert_int_equal(stat(keys, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    snprintf(readme, sizeof readme, "%s/README", keys);
    support_write_file(readme, "the keys of our job\n");
    net_auth a;
    const char *key = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7";   /* ZeroMQ's example */
    char line[200];
    snprintf(line, sizeof line, "    public-key = \"%s\"\n", key);
    s_cert(keys, "x y.key", line);
    s_cert(keys, "notes.txt", line);
    assert_int_equal(auth_load(&a, keys, "server", &err), 0);
    assert_int_equal(a.nclients, 3);   /* evaluator, worker-0, worker-1 */
    auth_free(&a);
    const char *bad[][2] = {
        {"    public-key = \"rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7X\"\n", "worker-7.key:3:"},
        {"    public-key = \"rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf~\"\n", "worker-7.key:3:"},
        {"    secret = \"rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7\"\n", "no public-key"},
    };
    for (int i = 0; i < 3; i++) {
        s_cert(keys, "worker-7.key", bad[i][0]);
        err = (error){0};
        if (auth_load(&a, keys, "server", &err) != -1 || err.status != ERROR_USAGE ||
            !strstr(err.msg, bad[i][1])) {
            fail_msg("bad key %d: \"%s\"", i, err.msg);
        }
    }
    char path[500];
    snprintf(path, sizeof path, "%s/worker-7.key", keys);
    remove(path);
    s_cert(keys, "worker-0.key_secret", line);   /* its secret key gone */
    err = (error){0};
    assert_int_equal(auth_load(&a, keys, "worker-0", &err), -1);
    assert_non_null(strstr(err.msg, "worker-0.key_secret: no secret-key"));
    snprintf(only_server, sizeof only_server, "%s/only-server", f->dir);
    assert_int_equal(auth_make_keys(only_server, 0, &err), 0);
    snprintf(path, sizeof path, "%s/evaluator.key", only_server);
    remove(path);
    err = (error){0};
    assert_int_equal(auth_load(&a, only_server, "server", &err), -1);
    assert_non_null(strstr(err.msg, "no client keys"));
    /* keys are written only as new files: a secret left behind kept its
     * mode (readable by all), and a link in its place led the evaluator's
     * secret to wherever it pointed; a folder others may write in, where
     * they could swap the server's key, is refused */
    char loose[400], stolen[400], leftover[600], link_path[600];
    snprintf(loose, sizeof loose, "%s/loose", f->dir);
    snprintf(stolen, sizeof stolen, "%s/stolen", f->dir);
    assert_int_equal(mkdir(loose, 0700), 0);
    snprintf(leftover, sizeof leftover, "%s/worker-0.key_secret", loose);
    support_write_file(leftover, "old\n");
    chmod(leftover, 0644);
    err = (error){0};
    assert_int_equal(auth_make_keys(loose, 2, &err), -1);
    assert_int_equal(err.status, ERROR_USAGE);
    assert_non_null(strstr(err.msg, "worker-0.key_secret: exists already"));
    char *kept = support_read_file(leftover);
    assert_string_equal(kept, "old\n");
    free(kept);
    snprintf(path, sizeof path, "%s/server.key", loose);   /* nothing written: no half set */
    assert_int_equal(access(path, F_OK), -1);
    remove(leftover);
    snprintf(link_path, sizeof link_path, "%s/evaluator.key_secret", loose);
    assert_int_equal(symlink(stolen, link_path), 0);
    err = (error){0};
    assert_int_equal(auth_make_keys(loose, 2, &err), -1);
    assert_non_null(strstr(err.msg, "evaluator.key_secret: exists already"));
    assert_int_equal(access(stolen, F_OK), -1);   /* nothing written through the link */
    char open_dir[400];
    snprintf(open_dir, sizeof open_dir, "%s/open", f->dir);
    assert_int_equal(mkdir(open_dir, 0700), 0);
    chmod(open_dir, 0777);
    err = (error){0};
    assert_int_equal(auth_make_keys(open_dir, 1, &err), -1);
    assert_non_null(strstr(err.msg, "others may write in this folder (mode 777)"));
    snprintf(path, sizeof path, "%s/server.key", open_dir);
    assert_int_equal(access(path, F_OK), -1);
    chmod(open_dir, 01777);   /* sticky too: others may add their keys there */
    err = (error){0};
    assert_int_equal(auth_make_keys(open_dir, 1, &err), -1);
    assert_non_null(strstr(err.msg, "others may write in this folder (mode 1777)"));
    chmod(open_dir, 0755);   /* another user's folder, however private (as root only) */
    if (chown(open_dir, 65534, 65534) == 0) {
        err = (error){0};
        assert_int_equal(auth_make_keys(open_dir, 1, &err), -1);
        assert_non_null(strstr(err.msg, "another user owns this folder"));
    }
}

/* A key is loaded only from a file that is the job's: a FIFO by a key's
 * name held the shard in open for good; a key another user put in a
 * folder others may write in (a sticky one), or one others may write, was
 * admitted as the job's; a secret others may read was used. A link is
 * followed (Kubernetes mounts a Secret's keys so). */
static void test_a_key_file_is_the_jobs(void **state)
{
    support_fixture *f = *state;
    char keys[400], path[500], target[500];
    snprintf(keys, sizeof keys, "%s/owned", f->dir);
    error err = {0};
    net_auth a;
    assert_int_equal(auth_make_keys(keys, 2, &err), 0);
    snprintf(path, sizeof path, "%s/stranger.key", keys);
    assert_int_equal(mkfifo(path, 0644), 0);
    assert_int_equal(auth_load(&a, keys, "server", &err), -1);
    assert_non_null(strstr(err.msg, "stranger.key: not a file"));
    remove(path);
    snprintf(path, sizeof path, "%s/worker-1.key", keys);
    chmod(path, 0666);
    err = (error){0};
    assert_int_equal(auth_load(&a, keys, "server", &err), -1);
    assert_non_null(strstr(err.msg, "worker-1.key: others may write it"));
    chmod(path, 0644);
    snprintf(path, sizeof path, "%s/worker-0.key_secret", keys);
    chmod(path, 0644);
    err = (error){0};
    assert_int_equal(auth_load(&a, keys, "worker-0", &err), -1);
    assert_non_null(strstr(err.msg, "worker-0.key_secret: a secret others may read"));
    chmod(path, 0600);
    /* a link to the key, as a Secret volume has it */
    snprintf(path, sizeof path, "%s/server.key", keys);
    snprintf(target, sizeof target, "%s/server.pub", keys);
    assert_int_equal(rename(path, target), 0);
    assert_int_equal(symlink(target, path), 0);
    assert_int_equal(auth_load(&a, keys, "worker-0", &err), 0);
    auth_free(&a);
    /* another user's key: in the job's private folder its owner put it
     * there (keys a user made, for a container that runs as root); in a
     * folder others may write in, anyone may have (as root only) */
    snprintf(path, sizeof path, "%s/evaluator.key", keys);
    if (chown(path, 65534, 65534) == 0) {
        err = (error){0};
        assert_int_equal(auth_load(&a, keys, "server", &err), 0);
        auth_free(&a);
        chmod(keys, 01777);
        assert_int_equal(auth_load(&a, keys, "server", &err), -1);
        assert_non_null(strstr(err.msg, "evaluator.key: another user owns it, in a folder "
                                        "others may write in"));
        chmod(keys, 0700);
    }
}

/* With cluster.auth = curve a shard admits only its folder's keys: a
 * stranger's key, or no CURVE at all, gets no connection, so nothing it
 * sends is answered or applied; an admitted key speaks only for its own
 * role (worker-1's key cannot push as worker 0). */
static void test_unknown_curve_keys_get_nothing(void **state)
{
    support_fixture *f = *state;
    support_write_file(f->config, s_small);
    char keys[400], keys_arg[420], stranger[400];
    snprintf(keys, sizeof keys, "%s/keys", f->dir);
    snprintf(keys_arg, sizeof keys_arg, "--keys=%s", keys);
    snprintf(stranger, sizeof stranger, "%s/stranger", f->dir);
    const char *make[] = {"keys", keys, "--workers", "2", NULL};
    support_run_asgd(&f->r, f->dir, make);
    assert_int_equal(f->r.status, 0);
    const char *make2[] = {"keys", stranger, "--workers", "1", NULL};
    support_run_asgd(&f->r, f->dir, make2);
    assert_int_equal(f->r.status, 0);
    /* made again over them: refused, the keys kept (new ones, secrets
     * too, locked out the processes holding the old, and fewer workers
     * left old keys beside the new) */
    char server[500];
    snprintf(server, sizeof server, "%s/server.key_secret", keys);
    char *before = support_read_file(server);
    const char *again[] = {"keys", keys, "--workers", "1", NULL};
    support_run_asgd(&f->r, f->dir, again);
    if (f->r.status != 2 || !strstr(f->r.err, "holds keys already")) {
        fail_msg("keys made again: status %d, \"%s\"", f->r.status, f->r.err);
    }
    char *after = support_read_file(server);
    assert_string_equal(after, before);
    free(before);
    free(after);
    char secret[500];
    snprintf(secret, sizeof secret, "%s/worker-0.key_secret", keys);
    struct stat st;
    assert_int_equal(stat(secret, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);

    int port = wire_client_free_port();
    const char *extra[] = {"cluster.auth=curve", keys_arg, NULL};
    int ps = s_start_ps(f, port, 1, extra);
    size_t n;
    float *init = s_initial(f, &n);
    net_auth w0, w1, bad, ev;
    error err = {0};
    assert_int_equal(auth_load(&ev, keys, "evaluator", &err), 0);
    assert_int_equal(auth_load(&w0, keys, "worker-0", &err), 0);
    assert_int_equal(auth_load(&w1, keys, "worker-1", &err), 0);
    assert_int_equal(auth_load(&bad, stranger, "worker-0", &err), 0);
    memcpy(bad.server_public, w0.server_public, sizeof bad.server_public);   /* knows the shard */
    void *ctx = zmq_ctx_new();
    void *good = wire_client_open(ctx, port, &w0);
    void *other = wire_client_open(ctx, port, &w1);
    void *strange = wire_client_open(ctx, port, &bad);
    void *plain = wire_client_open(ctx, port, NULL);
    void *evaluator = wire_client_open(ctx, port, &ev);
    s_expect_untouched(evaluator, WIRE_EVALUATOR, init, n);
    s_expect_untouched(good, 0, init, n);

    float *huge = malloc(n * sizeof *huge);
    for (size_t i = 0; i < n; i++) {
        huge[i] = 1e30f;
    }
    wire_header push = {.type = WIRE_PUSH, .worker = 0, .count = n, .encoding = WIRE_F32,
                        .samples = 1};
    const wire_header tries[] = {
        {.type = WIRE_PULL, .worker = 0, .encoding = WIRE_NO_PAYLOAD},
        {.type = WIRE_CONTROL, .worker = WIRE_ANY, .tag = WIRE_CONTROL_STATS,
         .encoding = WIRE_NO_PAYLOAD},
        {.type = WIRE_CONTROL, .worker = WIRE_EVALUATOR, .tag = WIRE_CONTROL_DONE,
         .encoding = WIRE_NO_PAYLOAD},
    };
    void *outsiders[] = {strange, plain};
    for (int o = 0; o < 2; o++) {
        wire_client_send(outsiders[o], &push, huge, n * sizeof(float));
        for (int i = 0; i < 3; i++) {
            assert_false(s_answered(outsiders[o], &tries[i], n, 300));
        }
    }
    wire_client_send(other, &push, huge, n * sizeof(float));   /* worker-1 as worker 0 */
    assert_true(s_refusal_came(other, push.seq, n, SENDERS_OTHER_KEY));
    assert_true(s_refused(other, &tries[2], n, SENDERS_OTHER_KEY));   /* nor the evaluator */
    /* a second process with worker 0's own key (two given one rank) is
     * refused while the first is connected: both were served, and the
     * shard took each one's pushes as the other's */
    void *twin = wire_client_open(ctx, port, &w0);
    wire_client_send(twin, &push, huge, n * sizeof(float));
    assert_true(s_refusal_came(twin, push.seq, n, SENDERS_HELD));
    assert_true(s_refused(twin, &tries[0], n, SENDERS_HELD));
    zmq_close(twin);
    free(huge);
    s_expect_untouched(good, 0, init, n);
    cJSON *stats = s_stats(good, n);
    assert_true(support_json_number(stats, "pushes") == 0);
    assert_true(support_json_number(stats, "foreign") == 4);
    assert_true(support_json_number(stats, "unauthenticated") >= 1);
    cJSON_Delete(stats);
    assert_true(support_alive(ps));
    kill(ps, SIGTERM);
    assert_int_equal(support_wait(ps), ERROR_SIGNALLED(SIGTERM));
    zmq_close(good);
    zmq_close(other);
    zmq_close(strange);
    zmq_close(plain);
    zmq_close(evaluator);
    zmq_ctx_term(ctx);
    auth_free(&ev);
    auth_free(&w0);
    auth_free(&w1);
    auth_free(&bad);
    free(init);
}

/* A job over tcp whose workers have been stepping for a while. */
static const char s_job[] =
    "[experiment]\nname = job\nrun_id = r\n"
    "[data]\ndataset = synthetic\ntrain_size = 10000\ndim = 32\n"
    "[model]\ntype = mlp\nhidden = 64\n"
    "[train]\nalgorithm = hogwild\nepochs = 8\nbatch = 32\nlr = 0.05\n"
    "[eval]\nevery = 0.5\n"
    "[cluster]\nworkers = 2\ntransport = tcp\n";

/* A peer that asks and never reads stalls nothing: once its queue is full,
 * its replies are dropped and counted (unread) and the shard answers the
 * others at once. (A blocking send on a full queue once stopped the shard
 * for good.) */
static void test_a_peer_that_does_not_read_stalls_nothing(void **state)
{
    support_fixture *f = *state;
    support_write_file(f->config, s_job);
    int port = wire_client_free_port();
    int ps = s_start_ps(f, port, 0, NULL);
    size_t n = (32 + 1) * 64 + (64 + 1) * 10;   /* s_job's MLP: 11 KB a reply */
    void *ctx = zmq_ctx_new();
    void *greedy = wire_client_open(ctx, port, NULL);
    wire_header pull = {.type = WIRE_PULL, .worker = 0, .encoding = WIRE_NO_PAYLOAD};
    int sent = 0;
    while (sent < 4000 && wire_client_send(greedy, &pull, NULL, 0)) {   /* 44 MB asked */
        sent++;
    }
    assert_int_equal(sent, 4000);
    /* the shard reads them all and still answers a tool, then worker 1 */
    void *other = wire_client_open(ctx, port, NULL);
    /* bytes_in: every byte each sender sent, to the byte (the i-th
     * question of its counters, counted before it is answered, is i + 1;
     * the router's identity frame, which no peer sends, was counted too:
     * 5 bytes a message) */
    double read = 0, want = 0;
    for (int i = 0; i < 300 && (i == 0 || read < want); i++) {
        cJSON *stats = s_stats(other, n);   /* fails the test if unanswered for 10 s */
        read = support_json_number(stats, "bytes_in");
        want = (sent + i + 1) * (double)WIRE_HEADER_SIZE;
        cJSON_Delete(stats);
        nanosleep(&(struct timespec){.tv_nsec = read < want ? 20000000 : 0}, NULL);
    }
    if (read != want) {
        fail_msg("bytes_in %.0f after %.0f headers of %d bytes: %.0f", read,
                 want / WIRE_HEADER_SIZE, WIRE_HEADER_SIZE, want);
    }
    pull.worker = 1;
    wire_client_send(other, &pull, NULL, 0);
    float *got = malloc(n * sizeof *got);
    wire_header reply;
    assert_int_equal(wire_client_receive(other, &reply, got, n * sizeof *got, n, 5000),
                     (long)(n * sizeof *got));
    free(got);
    cJSON *stats = s_stats(other, n);
    double unread = support_json_number(stats, "unread");
    assert_true(unread > 0);
    assert_true(unread < sent);
    cJSON_Delete(stats);
    /* a tool (anyone may ask for the counters) that asks and never reads
     * is no peer of the job's: its dropped replies are not counted (a
     * stranger's filled `unread`, and the shard's log) */
    void *tool = wire_client_open(ctx, port, NULL);
    wire_header ask = {.type = WIRE_CONTROL, .worker = WIRE_ANY, .tag = WIRE_CONTROL_STATS,
                       .encoding = WIRE_NO_PAYLOAD};
    for (int i = 0; i < 20000; i++) {   /* 30 MB of answers asked */
        assert_true(wire_client_send(tool, &ask, NULL, 0));
    }
    for (int i = 0; i < 500 && read < want + 20000 * (double)WIRE_HEADER_SIZE; i++) {
        stats = s_stats(other, n);
        read = support_json_number(stats, "bytes_in");
        want += WIRE_HEADER_SIZE;   /* this question too */
        cJSON_Delete(stats);
        nanosleep(&(struct timespec){.tv_nsec = 20000000}, NULL);
    }
    stats = s_stats(other, n);
    if (support_json_number(stats, "unread") != unread) {
        fail_msg("unread %g after a tool's unread answers, %g before",
                 support_json_number(stats, "unread"), unread);
    }
    cJSON_Delete(stats);
    zmq_close(tool);
    kill(ps, SIGTERM);
    assert_int_equal(support_wait(ps), ERROR_SIGNALLED(SIGTERM));
    zmq_close(greedy);
    zmq_close(other);
    zmq_ctx_term(ctx);
}

static int s_start_job(support_fixture *f, int port)
{
    support_write_file(f->config, s_job);
    char port_arg[64];
    snprintf(port_arg, sizeof port_arg, "cluster.port=%d", port);
    const char *args[] = {"train", f->config, f->out_arg, port_arg, NULL};
    int pid = support_spawn_asgd(f->dir, args);
    /* every real peer has spoken to the shard first: without auth a shard
     * binds an index to whoever speaks first as it, so a stray client
     * that beats a slow worker to it could hold its place (the README
     * says so; cluster.auth = curve closes that) */
    char steps[512], steps1[512], eval[512];
    snprintf(steps, sizeof steps, "%s/job/r/steps-0.csv", f->out);
    snprintf(steps1, sizeof steps1, "%s/job/r/steps-1.csv", f->out);
    snprintf(eval, sizeof eval, "%s/job/r/eval.csv", f->out);
    if (!support_wait_lines(steps, 20, 30) || !support_wait_lines(steps1, 2, 30) ||
        !support_wait_lines(eval, 2, 30)) {
        kill(pid, SIGKILL);
        fail_msg("the job did not start");
    }
    return pid;
}

/* A stray client on a live job's shard port pushes huge values as worker
 * 0, says DONE for both workers and the evaluator, and sends control 3
 * (SHUTDOWN once) as the evaluator: none of it is taken, and the job
 * completes as if it had not been there (it once stopped the shard, and
 * the job failed a minute later blaming the evaluator). The workers are
 * held (SIGSTOP) until the shard has taken all five (the forger reads each
 * refusal, then the counters after them): the job, under a
 * second of training, once ended before a forger slowed by a busy host
 * had been heard (the count fell short once in 26 runs with both cores
 * busy). */
static void test_forged_messages_do_not_stop_a_live_job(void **state)
{
    support_fixture *f = *state;
    int port = wire_client_free_port();
    int launcher = s_start_job(f, port);
    int workers[2];
    assert_int_equal(support_children(launcher, "worker", workers, 2), 2);
    for (int w = 0; w < 2; w++) {
        kill(workers[w], SIGSTOP);
    }
    size_t n = (32 + 1) * 64 + (64 + 1) * 10;
    float *huge = malloc(n * sizeof *huge);
    for (size_t i = 0; i < n; i++) {
        huge[i] = i % 2 ? FLT_MAX : -FLT_MAX;
    }
    void *ctx = zmq_ctx_new();
    void *forger = wire_client_open(ctx, port, NULL);
    wire_header push = {.type = WIRE_PUSH, .worker = 0, .count = n, .encoding = WIRE_F32,
                        .samples = 4000000};
    assert_true(wire_client_send(forger, &push, huge, n * sizeof(float)));
    const uint32_t who[] = {0, 1, WIRE_EVALUATOR};
    for (int i = 0; i < 3; i++) {
        wire_header done = {.type = WIRE_CONTROL, .worker = who[i], .tag = WIRE_CONTROL_DONE,
                            .encoding = WIRE_NO_PAYLOAD};
        assert_true(wire_client_send(forger, &done, NULL, 0));
    }
    wire_header stop = {.type = WIRE_CONTROL, .worker = WIRE_EVALUATOR, .tag = 3,
                        .encoding = WIRE_NO_PAYLOAD};   /* SHUTDOWN once: no message now */
    assert_true(wire_client_send(forger, &stop, NULL, 0));
    free(huge);
    for (int i = 0; i < 4; i++) {   /* each refused, in the order sent */
        assert_true(s_refusal_came(forger, 0, n, SENDERS_HELD));
    }
    cJSON *st = s_stats(forger, n);   /* after the stop, on the same pipe */
    double foreign = support_json_number(st, "foreign");
    double rejected = support_json_number(st, "rejected");
    cJSON_Delete(st);
    for (int w = 0; w < 2; w++) {
        kill(workers[w], SIGCONT);
    }
    assert_true(foreign == 4);
    assert_true(rejected == 1);
    int status = support_wait(launcher);
    zmq_close(forger);
    zmq_ctx_term(ctx);
    char path[600];
    snprintf(path, sizeof path, "%s/stderr", f->dir);
    char *err = support_read_file(path);
    if (status != 0) {
        fail_msg("the job failed (%d): %s", status, err);
    }
    free(err);
    snprintf(path, sizeof path, "%s/job/r/summary.json", f->out);
    cJSON *j = support_json_file(path);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "complete")));
    assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(j, "diverged")));
    assert_true(support_json_number(j, "foreign") == 4);
    assert_true(support_json_number(j, "epochs") < 8.01);   /* the forged 4,000,000 samples */
    assert_true(support_json_number(j, "final_test_acc") > 0.5);
    cJSON_Delete(j);
}

/* cluster.auth = curve end to end: the launcher makes its own keys, and
 * roles started by hand take a folder made by `asgd keys`; both jobs
 * complete. A shard reachable from other hosts without auth says so. */
static void test_jobs_with_curve_keys(void **state)
{
    support_fixture *f = *state;
    support_write_file(f->config, "[experiment]\nname = job\nrun_id = launched\n"
                       "[data]\ndataset = synthetic\n[model]\ntype = softmax\n"
                       "[train]\nalgorithm = hogwild\nepochs = 2\n"
                       "[cluster]\nworkers = 2\ntransport = tcp\nauth = curve\n");
    const char *train[] = {"train", f->config, f->out_arg, NULL};
    support_run_asgd(&f->r, f->dir, train);
    if (f->r.status != 0) {
        fail_msg("launched job: %s", f->r.err);
    }
    assert_null(strstr(f->r.err, "warning"));

    char keys[400], keys_arg[420], hosts[64], run_dir[400];
    snprintf(keys, sizeof keys, "%s/keys", f->dir);
    snprintf(keys_arg, sizeof keys_arg, "--keys=%s", keys);
    const char *make[] = {"keys", keys, "--workers", "2", NULL};
    support_run_asgd(&f->r, f->dir, make);
    assert_int_equal(f->r.status, 0);
    int port = wire_client_free_port();
    snprintf(hosts, sizeof hosts, "--ps_hosts=127.0.0.1:%d", port);
    snprintf(run_dir, sizeof run_dir, "--run_dir=%s/by-hand", f->dir);
    const char *roles[4][10] = {
        {"ps", f->config, hosts, "--worker_hosts=a,b", "--task_index=0", keys_arg, run_dir},
        {"evaluator", f->config, hosts, "--worker_hosts=a,b", keys_arg, run_dir},
        {"worker", f->config, hosts, "--worker_hosts=a,b", "--task_index=0", keys_arg, run_dir},
        {"worker", f->config, hosts, "--worker_hosts=a,b", "--task_index=1", keys_arg, run_dir},
    };
    int pids[4];
    for (int i = 0; i < 4; i++) {
        pids[i] = support_spawn_asgd(f->dir, roles[i]);
    }
    for (int i = 0; i < 4; i++) {
        assert_int_equal(support_wait(pids[i]), 0);
    }
    char path[600];
    snprintf(path, sizeof path, "%s/by-hand/ps-0.json", f->dir);
    cJSON *j = support_json_file(path);
    assert_true(support_json_number(j, "pushes") == ceil(2.0 * 10000 / 64));
    assert_true(support_json_number(j, "foreign") == 0);
    cJSON_Delete(j);

    /* --keys without auth = curve is a mistake, not a silent plain run */
    const char *mixed[] = {"ps", f->config, hosts, "--worker_hosts=a,b", "--task_index=0",
                           keys_arg, "cluster.auth=none", NULL};
    support_run_asgd(&f->r, f->dir, mixed);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "auth = none"));

    /* bound to every interface without auth: a warning */
    snprintf(hosts, sizeof hosts, "--ps_hosts=0.0.0.0:%d", port);
    const char *open_ps[] = {"ps", f->config, hosts, "--worker_hosts=a,b", "--task_index=0",
                             "--evaluator=0", "cluster.auth=none", run_dir, NULL};
    int ps = support_spawn_asgd(f->dir, open_ps);
    snprintf(path, sizeof path, "%s/stderr", f->dir);
    bool warned = false;
    for (int i = 0; i < 100 && !warned; i++) {
        char *err = support_read_file(path);
        warned = err && strstr(err, "can be reached from other hosts");
        free(err);
        nanosleep(&(struct timespec){.tv_nsec = 50000000}, NULL);
    }
    kill(ps, SIGTERM);
    support_wait(ps);
    assert_true(warned);
}

/* A shard that leaves while workers still need it (here stopped by a
 * signal: it exits 128 + SIGTERM) fails the job, and the failure names the
 * shard, not the workers left waiting for it. */
static void test_a_shard_leaving_early_fails_the_job(void **state)
{
    support_fixture *f = *state;
    int port = wire_client_free_port();
    support_write_file(f->config, s_job);
    char port_arg[64];
    snprintf(port_arg, sizeof port_arg, "cluster.port=%d", port);
    const char *args[] = {"train", f->config, f->out_arg, port_arg, "cluster.timeout=3", NULL};
    int launcher = support_spawn_asgd(f->dir, args);
    char steps[512];
    snprintf(steps, sizeof steps, "%s/job/r/steps-0.csv", f->out);
    assert_true(support_wait_lines(steps, 20, 30));
    int shard;
    assert_int_equal(support_children(launcher, "ps", &shard, 1), 1);
    kill(shard, SIGTERM);
    assert_int_equal(support_wait(launcher), 1);
    char path[600];
    snprintf(path, sizeof path, "%s/stderr", f->dir);
    char *err = support_read_file(path);
    if (!err || !strstr(err, "ps 0 exited with status 143")) {
        fail_msg("stderr: %s", err);
    }
    free(err);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, support_fixture_setup, support_fixture_teardown)
    const struct CMUnitTest tests[] = {
        T(test_server_survives_garbage),
        T(test_a_compressed_shard_checks_every_payload),
        T(test_shared_segments_are_checked),
        T(test_a_pull_sent_again_gets_the_same_answer),
        T(test_a_push_from_another_generation_is_dropped),
        T(test_no_push_after_done),
        T(test_the_evaluator_of_an_earlier_life_tells_of_lost_state),
        T(test_a_resumed_sessions_shard_restarts_from_its_checkpoint),
        T(test_a_stranger_holds_no_place_and_plants_no_count),
        T(test_a_new_process_is_not_answered_through_an_old_segment),
        T(test_a_reply_says_what_its_sender_needs),
        T(test_lost_updates_outlive_the_shards_life),
        T(test_a_restart_keeps_the_resumed_sessions_clock),
        T(test_a_shards_counters_are_its_own_lifes),
        T(test_a_waiting_pull_is_the_senders_last),
        T(test_workers_begin_after_the_first_evaluation),
        T(test_a_job_under_way_passes_the_gate),
        T(test_a_shards_own_dropped_replies_are_counted),
        T(test_messages_speak_only_for_their_sender),
        T(test_no_one_speaks_as_a_missing_evaluator),
        T(test_a_shard_takes_every_file_it_may),
        T(test_a_keys_folder_is_checked),
        T(test_a_key_file_is_the_jobs),
        T(test_unknown_curve_keys_get_nothing),
        T(test_oversized_frames_are_never_held),
        T(test_a_peer_cannot_pile_up_pulls),
        T(test_a_shard_stopped_before_its_evaluator_is_done),
        T(test_forged_messages_do_not_stop_a_live_job),
        T(test_jobs_with_curve_keys),
        T(test_a_shard_leaving_early_fails_the_job),
        T(test_a_peer_that_does_not_read_stalls_nothing),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
