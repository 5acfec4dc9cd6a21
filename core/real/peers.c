/* peers.c: request/reply with every shard. */
#include "core/real/peers.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/partition.h"
#include "core/run.h"
#include "core/stop.h"
#include "transport/senders.h"

/* Payloads smaller than this are copied into their messages; larger ones
 * are sent without copying (net_settle). */
#define PEERS_COPY_BELOW 65536

static int s_attach(peers *p, int k, error *err);

/* A request awaiting shard k's answer, and what to send again while none
 * comes. */
typedef struct peers_awaited {
    int k;
    const wire_header *h;
    const void *payload;
    size_t bytes;
} awaited;

int peers_open(peers *p, const cluster_spec *cs, uint64_t nparams, uint32_t self,
               const peers_options *o, error *err)
{
    memset(p, 0, sizeof *p);
    net_pending_init(&p->pending);
    p->ctx = zmq_ctx_new();
    p->count = cs->servers;
    p->self = self;
    p->o = *o;
    p->sockets = calloc((size_t)p->count, sizeof *p->sockets);
    p->lo = calloc((size_t)p->count, sizeof *p->lo);
    p->hi = calloc((size_t)p->count, sizeof *p->hi);
    p->seq = calloc((size_t)p->count, sizeof *p->seq);
    p->generation = calloc((size_t)p->count, sizeof *p->generation);
    p->seen = calloc((size_t)p->count, sizeof *p->seen);
    p->counted = calloc((size_t)p->count, sizeof *p->counted);
    p->examples = calloc((size_t)p->count, sizeof *p->examples);
    p->poll = calloc((size_t)p->count, sizeof *p->poll);
    p->awaiting = calloc((size_t)p->count, sizeof *p->awaiting);
    p->asked = calloc((size_t)p->count, sizeof *p->asked);
    p->pushed = calloc((size_t)p->count, sizeof *p->pushed);
    p->segments = calloc((size_t)p->count, sizeof *p->segments);
    bool faulty = faults_on(&o->faults);
    p->faults = faulty ? calloc((size_t)p->count, sizeof *p->faults) : NULL;
    if (!p->ctx || !p->sockets || !p->lo || !p->hi || !p->seq || !p->generation || !p->seen ||
        !p->counted || !p->examples || !p->poll || !p->awaiting || !p->asked || !p->pushed ||
        !p->segments || (faulty && !p->faults)) {
        peers_close(p);
        return error_set(err, ERROR_RUNTIME, "out of memory");
    }
    if (o->compress.kind != COMPRESS_NONE && self < WIRE_EVALUATOR &&
        !(p->compress = compressor_new(&o->compress, nparams, p->count, o->seed, (int)self,
                                       err))) {
        peers_close(p);
        return -1;
    }
    for (int k = 0; k < p->count; k++) {
        char endpoint[CLUSTER_ADDRESS_MAX + 16];
        net_endpoint(endpoint, sizeof endpoint, cs->ps[k], false);
        partition_range(nparams, p->count, k, &p->lo[k], &p->hi[k]);
        if (p->faults) {   /* a stream per sender and shard */
            faults_init(&p->faults[k], &o->faults, o->seed, (uint64_t)self << 16 | (uint64_t)k);
        }
        p->sockets[k] = net_dealer(p->ctx, endpoint, o->auth, err);
        if (!p->sockets[k]) {
            peers_close(p);
            return -1;
        }
        bool shares = o->shm && self != WIRE_ANY && !p->compress && !faulty &&
                      net_local_only(endpoint);
        if (shares && s_attach(p, k, err) < 0) {
            peers_close(p);
            return -1;
        }
    }
    return 0;
}

/* Closes every socket and ends the context, whose I/O thread then lets go
 * of every payload it held unsent (no linger): past this, every exchange
 * fails, saying why. */
static void s_drop(peers *p, const char *why)
{
    for (int k = 0; p->sockets && k < p->count; k++) {
        if (p->sockets[k]) {
            zmq_close(p->sockets[k]);
            p->sockets[k] = NULL;
        }
    }
    /* until it has ended: a signal (the stop handlers do not restart calls)
     * left it with payloads held, which the caller then frees */
    while (p->ctx && zmq_ctx_term(p->ctx) != 0 && zmq_errno() == EINTR) {
    }
    p->ctx = NULL;
    snprintf(p->dropped, sizeof p->dropped, "%s", why);
}

int peers_settle(peers *p, error *err)
{
    if (p->dropped[0]) {
        return error_set(err, ERROR_RUNTIME, "%s", p->dropped);
    }
    if (net_settle(&p->pending, p->o.timeout) == 0) {
        return 0;
    }
    char why[sizeof p->dropped];
    snprintf(why, sizeof why, "a shard had not taken in a whole push %g s later ([cluster] "
             "timeout): stopped, its host or link down, or the link too slow for it",
             p->o.timeout);
    s_drop(p, why);
    return error_set(err, ERROR_RUNTIME, "%s", why);
}

void peers_close(peers *p)
{
    /* first, and without waiting: what is held unsent (a shard that has
     * gone) is let go, and then the payloads may be freed. A job that
     * ended well holds nothing: each shard read every push before it
     * acknowledged the DONE that followed them. */
    s_drop(p, "closed");
    free(p->sockets);
    free(p->lo);
    free(p->hi);
    free(p->seq);
    free(p->generation);
    free(p->seen);
    free(p->counted);
    free(p->examples);
    free(p->poll);
    free(p->awaiting);
    free(p->asked);
    free(p->pushed);
    for (int k = 0; p->segments && k < p->count; k++) {
        shm_close(&p->segments[k]);
    }
    free(p->segments);
    free(p->faults);
    compressor_free(&p->compress);
    net_pending_destroy(&p->pending);
    memset(p, 0, sizeof *p);
}

/* Whether faults are injected into h (a pull, a push, or a reply to one). */
static bool s_faulty(const peers *p, const wire_header *h)
{
    return p->faults && h->type != WIRE_CONTROL;
}

static void s_wait_until(double when)
{
    double left = when - run_now();
    if (left > 0) {
        run_sleep(left);
    }
}

/* Ends an exchange with faults injected: waits for the last reply's hold
 * (replies are held side by side, each from when it was read). */
static void s_let_in(peers *p)
{
    s_wait_until(p->held_until);
    p->held_until = 0;
}

/* Sends request h to shard k, or (again true) sends it again: then a full
 * queue to the shard (it has gone) is no reason to wait, the next resend
 * or the timeout will come. 1 when it went (or its faults lost it), 0 when
 * the queue was full, -1 on failure. */
static int s_send(peers *p, int k, const wire_header *h, const void *payload,
                  size_t bytes, bool again, error *err)
{
    if (p->dropped[0]) {
        return error_set(err, ERROR_RUNTIME, "%s", p->dropped);
    }
    int copies = 1;
    if (s_faulty(p, h)) {   /* held from the exchange's start (sent again: from now) */
        s_wait_until((again ? run_now() : p->begun) + faults_delay(&p->faults[k]));
        copies = faults_copies(&p->faults[k]);
    }
    for (int copy = 0; copy < copies; copy++) {
        long sent;
        /* small payloads are copied: cheaper than tracking, and nothing
         * waits on them (an ATTACH to a shard that never comes) */
        net_pending *pending = payload && bytes >= PEERS_COPY_BELOW ? &p->pending : NULL;
        while ((sent = again ? net_try_send(p->sockets[k], h, payload, bytes, pending)
                             : net_send(p->sockets[k], NULL, h, payload, bytes, pending)) < 0) {
            if (again && zmq_errno() == EAGAIN) {
                return copy > 0;
            }
            if (zmq_errno() != EINTR || stop_requested()) {
                return error_set(err, ERROR_RUNTIME, "send to ps %d: %s", k,
                                 stop_requested() ? "interrupted" : zmq_strerror(zmq_errno()));
            }
        }
        p->bytes += sent;
    }
    return 1;
}

/* "worker 3" or "the evaluator", who this process speaks as, into buf. */
static const char *s_who(const peers *p, char *buf, size_t n)
{
    if (p->self == WIRE_EVALUATOR) {
        snprintf(buf, n, "the evaluator");
    } else {
        snprintf(buf, n, "worker %u", p->self);
    }
    return buf;
}

/* Numbers request h for shard k (a new number, and the shard's generation
 * as last heard) and sends it. */
static int s_ask(peers *p, int k, wire_header *h, const void *payload, size_t bytes, error *err)
{
    h->seq = ++p->seq[k];
    h->generation = p->generation[k];
    h->job = p->o.job;
    return s_send(p, k, h, payload, bytes, false, err) < 0 ? -1 : 0;
}

/* A reply in m that answers request seq of shard k: validated into h; the
 * shard's generation noted, unless it answers a push (note false): a
 * worker's pushes are of the parameters it last pulled, so until it pulls
 * from a restored shard they carry the generation before (dropped as
 * such), and that pull is answered at once, flagged restarted (a verdict
 * from a restored shard 0 made the next pull wait there for a round the
 * shard had lost). 0 when m is something else to drop (a probe, an answer
 * to a request sent again), -1 when it is malformed. */
static int s_answer(peers *p, int k, net_msg *m, uint64_t seq, bool note, wire_header *h,
                    error *err)
{
    if (m->count == 1 && zmq_msg_size(&m->frames[0]) == 0) {
        return 0;   /* the shard checking that this peer is still here */
    }
    const char *why;
    size_t payload = m->count > 1 ? zmq_msg_size(&m->frames[1]) : 0;
    if (wire_decode_reply(h, zmq_msg_data(&m->frames[0]), zmq_msg_size(&m->frames[0]),
                          m->count + m->dropped, payload, (uint32_t)k, p->lo[k], p->hi[k],
                          &why) < 0) {
        return error_set(err, ERROR_RUNTIME, "bad reply from ps %d: %s", k, why);
    }
    if (h->job != 0 && p->o.job != 0 && h->job != p->o.job) {
        return error_set(err, ERROR_USAGE, "ps %d serves a job of other settings (%08x, this "
                         "process's %08x): every process of a job needs the same [data] (its "
                         "path aside), [model], [train], [algorithm] (its server_threads "
                         "aside) and experiment.seed", k,
                         h->job, p->o.job);
    }
    if (h->seq != seq) {
        return 0;
    }
    char who[32];
    if ((h->flags & WIRE_FLAG_REFUSED) && h->tag == SENDERS_OTHER_KEY) {
        return error_set(err, ERROR_USAGE, "ps %d refused %s: this process's CURVE key is "
                         "not that one's (the wrong --keys, or the wrong --task_index or "
                         "rank)", k, s_who(p, who, sizeof who));
    }
    if (h->flags & WIRE_FLAG_REFUSED) {
        p->refused++;   /* asked again until the holder has gone (a restarted worker's
                         * predecessor not yet seen to disconnect) or the timeout */
        return 0;
    }
    p->refused = 0;
    if (p->generation[k] != 0 && h->generation != p->generation[k]) {
        shm_close(&p->segments[k]);   /* a new process of the shard: it holds no segment */
    }
    if (note) {
        p->restarts += (h->flags & WIRE_FLAG_RESTARTED) != 0;
        p->generation[k] = h->generation;
        p->seen[k] = h->base_version;
    }
    return 1;
}

/* Waits for the answer to any of the n requests in a, each to its own
 * shard, sending each again (its payload, if any, with it) after
 * [cluster] resend seconds without an answer, then after twice as long
 * each time up to a second (or resend, if longer): a lost request goes
 * again soon, a busy shard is not flooded with copies. Returns the index
 * in a of the request answered, its reply in m and *reply (the caller
 * closes m), or -1. */
static int s_receive_any(peers *p, const awaited *a, int n, net_msg *m, wire_header *reply,
                         error *err)
{
    double silent = 0, since_sent = 0, interval = p->o.resend;
    long refused = p->refused;
    int wait_ms = p->o.resend < 0.1 ? (int)fmax(1, p->o.resend * 1000) : 100;
    if (p->dropped[0]) {
        return error_set(err, ERROR_RUNTIME, "%s", p->dropped);
    }
    for (;;) {
        if (stop_requested()) {
            return error_set(err, ERROR_RUNTIME, "interrupted");
        }
        for (int i = 0; i < n; i++) {
            p->poll[i] = (zmq_pollitem_t){.socket = p->sockets[a[i].k], .events = ZMQ_POLLIN};
        }
        int ready = zmq_poll(p->poll, n, wait_ms);
        if (ready < 0 && zmq_errno() != EINTR) {
            return error_set(err, ERROR_RUNTIME, "receive from ps %d: %s", a[0].k,
                             zmq_strerror(zmq_errno()));
        }
        for (int i = 0; ready > 0 && i < n; i++) {
            if (!(p->poll[i].revents & ZMQ_POLLIN)) {
                continue;
            }
            int got = net_recv(p->sockets[a[i].k], m, 0);
            if (got < 0) {
                return error_set(err, ERROR_RUNTIME, "receive from ps %d: %s", a[i].k,
                                 zmq_strerror(zmq_errno()));
            }
            if (got == 0) {
                continue;
            }
            p->bytes += (long)m->bytes;
            int answer = s_answer(p, a[i].k, m, a[i].h->seq, a[i].h->type != WIRE_PUSH, reply,
                                  err);
            if (answer != 0) {
                if (answer < 0) {
                    net_msg_close(m);
                } else if (s_faulty(p, a[i].h)) {   /* the reply's own latency, s_let_in's */
                    p->held_until = fmax(p->held_until,
                                         run_now() + faults_delay(&p->faults[a[i].k]));
                }
                return answer < 0 ? -1 : i;
            }
            net_msg_close(m);
        }
        if (ready > 0) {
            if (p->refused == refused) {
                silent = 0;   /* a shard is there (one refusing this process is not) */
            }
            refused = p->refused;
            continue;
        }
        silent += wait_ms * 1e-3;
        since_sent += wait_ms * 1e-3;
        if (silent >= p->o.timeout && p->refused > 0) {
            /* retryable: the holder may be this one's predecessor, its
             * connection half open (a host lost), which a later try outlives */
            char who[32];
            return error_set(err, ERROR_RETRYABLE, "ps %d refused every request for %g s "
                             "([cluster] timeout): another process, still connected, is %s "
                             "(two processes given one --task_index or rank, or this one's "
                             "predecessor not yet seen gone)", a[0].k, p->o.timeout,
                             s_who(p, who, sizeof who));
        }
        if (silent >= p->o.timeout) {
            /* retryable: one never heard from may not have started yet, and
             * one gone silent may come back (a pod made anew, from its
             * checkpoint), slower than the timeout; a shard that cannot is
             * itself a failure that ends the job */
            bool never = p->generation[a[0].k] == 0;
            return error_set(err, ERROR_RETRYABLE,
                             "ps %d did not answer within %g s ([cluster] timeout)%s", a[0].k,
                             p->o.timeout, never ? ", nor ever before: not started yet, not at "
                             "that address, or not admitting this process's key" : "");
        }
        if (since_sent >= interval) {   /* lost, or the shard has restarted: again */
            since_sent = 0;
            interval = fmin(2 * interval, fmax(p->o.resend, 1.0));
            for (int i = 0; i < n; i++) {
                int went = s_send(p, a[i].k, a[i].h, a[i].payload, a[i].bytes, true, err);
                if (went < 0) {
                    return -1;
                }
                p->resent += went;
            }
        }
    }
}

/* Waits for shard k's answer to the request h just sent (s_receive_any). */
static int s_receive(peers *p, int k, const wire_header *h, const void *payload, size_t bytes,
                     net_msg *m, wire_header *reply, error *err)
{
    awaited a = {.k = k, .h = h, .payload = payload, .bytes = bytes};
    return s_receive_any(p, &a, 1, m, reply, err) < 0 ? -1 : 0;
}

/* Offers shard k a shared segment and waits for its answer; a segment
 * not made or not taken leaves k on the socket alone. */
static int s_attach(peers *p, int k, error *err)
{
    shm_segment *seg = &p->segments[k];
    error why;
    if (shm_create(seg, p->hi[k] - p->lo[k], &why) < 0) {
        return 0;
    }
    uint8_t payload[SHM_ATTACH_SIZE];
    shm_attach_payload(seg, payload);
    wire_header h = {.type = WIRE_CONTROL, .worker = p->self, .shard = (uint32_t)k,
                     .tag = WIRE_CONTROL_ATTACH, .encoding = WIRE_SHM};
    net_msg m;
    wire_header reply;
    if (s_ask(p, k, &h, payload, sizeof payload, err) < 0 ||
        s_receive(p, k, &h, payload, sizeof payload, &m, &reply, err) < 0) {
        return -1;
    }
    net_msg_close(&m);
    if (reply.tag != 1) {
        shm_close(seg);
    }
    return 0;
}

/* A pull for min_version to every shard, the requests kept in p->asked. */
static int s_ask_pull(peers *p, uint64_t min_version, error *err)
{
    p->begun = run_now();
    for (int k = 0; k < p->count; k++) {
        p->asked[k] = (wire_header){.type = WIRE_PULL, .worker = p->self, .shard = (uint32_t)k,
                                    .tag = p->seen[k], .base_version = min_version,
                                    .encoding = WIRE_NO_PAYLOAD};
        if (s_ask(p, k, &p->asked[k], NULL, 0, err) < 0) {
            return -1;
        }
    }
    return 0;
}

uint64_t peers_counted(const peers *p)
{
    uint64_t least = p->counted[0];
    for (int k = 1; k < p->count; k++) {
        least = p->counted[k] < least ? p->counted[k] : least;
    }
    return least;
}

void peers_take_up(peers *p, uint64_t examples)
{
    for (int k = 0; k < p->count; k++) {
        p->examples[k] = examples;
        /* behind shard 0 in its version and in this worker's pushes: a
         * shard restored from an older checkpoint, whose rounds are
         * retaken, as by a worker told of its restart (a new process is
         * told nothing: it heard no generation before) */
        p->retaking = p->retaking ||
                      (k > 0 && p->seen[k] < p->seen[0] && p->counted[k] < p->counted[0]);
    }
}

int peers_prefetch(peers *p, uint64_t min_version, error *err)
{
    p->prefetched = false;
    if (s_ask_pull(p, min_version, err) < 0) {
        return -1;
    }
    p->prefetched = true;
    p->prefetch_min = min_version;
    return 0;
}

int peers_pull(peers *p, float *theta, uint64_t min_version, uint64_t *versions,
               uint16_t *flags, uint64_t *staleness, uint64_t *total, error *err)
{
    bool asked = p->prefetched && min_version <= p->prefetch_min;
    p->prefetched = false;
    int rc = asked ? 0 : s_ask_pull(p, min_version, err);
    awaited *left = p->awaiting;
    int n = 0;
    for (int k = 0; k < p->count; k++) {
        left[n++] = (awaited){.k = k, .h = &p->asked[k]};
    }
    while (rc == 0 && n > 0) {
        net_msg m;
        wire_header h;
        int i = s_receive_any(p, left, n, &m, &h, err);
        if (i < 0) {
            rc = -1;
            break;
        }
        int k = left[i].k;
        left[i] = left[--n];
        size_t bytes = (size_t)(p->hi[k] - p->lo[k]) * sizeof(float);
        if (h.encoding == WIRE_SHM && p->segments[k].base) {
            memcpy(theta + p->lo[k], p->segments[k].reply, bytes);
            p->bytes += (long)bytes;
        } else if (h.encoding == WIRE_F32) {
            memcpy(theta + p->lo[k], zmq_msg_data(&m.frames[1]), bytes);
        } else {
            net_msg_close(&m);
            rc = error_set(err, ERROR_RUNTIME, "bad reply from ps %d: no parameters", k);
            break;
        }
        versions[k] = h.base_version;
        p->counted[k] = h.total;
        if (flags) {
            flags[k] = h.flags;
        }
        if (k == 0) {
            if (staleness) {
                *staleness = h.tag;
            }
            if (total) {
                *total = h.total;
            }
        }
        net_msg_close(&m);
        p->retaking = p->retaking || (k > 0 && (h.flags & WIRE_FLAG_RESTARTED));
        if ((h.flags & WIRE_FLAG_RESTARTED) && h.base_version < min_version) {
            min_version = h.base_version;   /* the shard went back: ask the rest again */
            for (int j = 0; rc == 0 && j < n; j++) {
                p->asked[left[j].k].base_version = min_version;
                rc = s_ask(p, left[j].k, &p->asked[left[j].k], NULL, 0, err);
            }
        }
    }
    s_let_in(p);
    return rc;
}

/* Sends shard k's part of a push, kept in p->pushed[k]; with
 * WIRE_FLAG_VERDICT in flags (shard 0, the round's leader) it asks for
 * the verdict. */
static int s_push_send(peers *p, int k, const float *values, uint64_t tag,
                       const uint64_t *versions, uint32_t samples, uint16_t flags, error *err)
{
    peers_push_sent *sent = &p->pushed[k];
    sent->h = (wire_header){.type = WIRE_PUSH, .worker = p->self, .shard = (uint32_t)k,
                            .tag = tag, .base_version = versions[k], .offset = p->lo[k],
                            .count = p->hi[k] - p->lo[k], .encoding = WIRE_F32,
                            .samples = samples, .flags = flags,
                            .total = p->o.count_steps ? p->examples[k] += samples : 0};
    sent->payload = values + p->lo[k];
    sent->bytes = (size_t)sent->h.count * sizeof(float);
    if (p->compress) {   /* its part as peers_push compressed it */
        sent->h.encoding = wire_encoding_of(compress_format_of(&p->compress->spec));
        sent->payload = p->compress->payload[k];
        sent->bytes = p->compress->len[k];
    }
    shm_segment *seg = &p->segments[k];
    if (seg->base) {   /* into the push area once the shard has read the last push */
        if (shm_wait_released(seg, p->o.timeout, err) < 0) {
            return -1;
        }
        memcpy(seg->push, sent->payload, sent->bytes);
        shm_pushed(seg);
        p->bytes += (long)sent->bytes;
        sent->h.encoding = WIRE_SHM;
        sent->payload = NULL;
        sent->bytes = 0;
    }
    if (p->faults) {   /* a push that may be lost is acknowledged, and sent again */
        sent->h.flags |= WIRE_FLAG_ACK;
    }
    return s_ask(p, k, &sent->h, sent->payload, sent->bytes, err);
}

/* Waits for shard k's answer to p->pushed[k], sending it again while none
 * comes; a verdict asked for goes into *verdict_flags. */
static int s_push_wait(peers *p, int k, uint16_t *verdict_flags, error *err)
{
    peers_push_sent *sent = &p->pushed[k];
    p->prefetched = false;   /* a prefetch's replies, come first, are dropped while this waits */
    net_msg m;
    wire_header reply;
    if (s_receive(p, k, &sent->h, sent->payload, sent->bytes, &m, &reply, err) < 0) {
        return -1;
    }
    net_msg_close(&m);
    if (!(sent->h.flags & WIRE_FLAG_VERDICT)) {
        return 0;
    }
    if (reply.encoding != WIRE_NO_PAYLOAD || (reply.tag != PEERS_IN_ROUND &&
                                              reply.tag != PEERS_LATE)) {
        return error_set(err, ERROR_RUNTIME, "bad reply from ps 0: no verdict on a push");
    }
    *verdict_flags = reply.tag == PEERS_IN_ROUND ? WIRE_FLAG_IN_ROUND : WIRE_FLAG_LATE;
    return 0;
}

/* Pushes to shards [first, p->count) side by side, then (with faults
 * injected, which acknowledge every push) waits for every answer. */
static int s_push_to(peers *p, int first, const float *values, uint64_t tag,
                     const uint64_t *versions, uint32_t samples, uint16_t flags, error *err)
{
    p->begun = run_now();
    for (int k = first; k < p->count; k++) {
        if (s_push_send(p, k, values, tag, versions, samples, flags, err) < 0) {
            return -1;
        }
    }
    for (int k = first; p->faults && k < p->count; k++) {
        if (s_push_wait(p, k, NULL, err) < 0) {
            return -1;
        }
    }
    s_let_in(p);
    return 0;
}

int peers_push(peers *p, const float *values, uint64_t tag, const uint64_t *versions,
               uint32_t samples, bool leader, error *err)
{
    uint16_t flags = 0;
    if (p->compress) {   /* the last push's payloads may still be in flight */
        if (peers_settle(p, err) < 0) {
            return -1;
        }
        compressor_push(p->compress, values);
    }
    if (leader && p->retaking) {   /* a round shard 0 closed, retaken: none to judge */
        leader = tag >= versions[0];
        p->retaking = !leader;
    }
    if (leader && p->count > 1) {   /* shard 0's verdict first, for the others */
        p->begun = run_now();
        if (s_push_send(p, 0, values, tag, versions, samples, WIRE_FLAG_VERDICT, err) < 0 ||
            s_push_wait(p, 0, &flags, err) < 0) {
            return -1;
        }
        s_let_in(p);
    }
    return s_push_to(p, flags ? 1 : 0, values, tag, versions, samples, flags, err);
}

int peers_push_part(peers *p, int k, const float *values, uint64_t tag,
                    const uint64_t *versions, uint32_t samples, error *err)
{
    if (p->compress) {
        return error_set(err, ERROR_RUNTIME, "a compressed push goes whole");
    }
    p->begun = run_now();
    if (s_push_send(p, k, values, tag, versions, samples, 0, err) < 0 ||
        (p->faults && s_push_wait(p, k, NULL, err) < 0)) {
        return -1;
    }
    s_let_in(p);
    return 0;
}

int peers_control(peers *p, uint64_t control, bool *workers_done, shard_stats *stats,
                  error *err)
{
    bool all = true;
    for (int k = 0; k < p->count; k++) {
        wire_header h = {.type = WIRE_CONTROL, .worker = p->self, .shard = (uint32_t)k,
                         .tag = control, .encoding = WIRE_NO_PAYLOAD};
        if (control == WIRE_CONTROL_DONE && p->faults) {   /* what the faults did */
            h.base_version = p->faults[k].dropped;
            h.samples = (uint32_t)p->faults[k].duplicated;
        }
        net_msg m;
        wire_header reply;
        if (s_ask(p, k, &h, NULL, 0, err) < 0 || s_receive(p, k, &h, NULL, 0, &m, &reply, err) < 0) {
            return -1;
        }
        all = all && (reply.flags & WIRE_FLAG_WORKERS_DONE);
        int parsed = 0;
        if (stats && control == WIRE_CONTROL_STATS) {
            parsed = reply.encoding == WIRE_JSON
                         ? shard_stats_parse(zmq_msg_data(&m.frames[1]),
                                             zmq_msg_size(&m.frames[1]), &stats[k], err)
                         : error_set(err, ERROR_RUNTIME, "ps %d sent no counters", k);
        }
        net_msg_close(&m);
        if (parsed < 0) {
            return -1;
        }
    }
    if (workers_done) {
        *workers_done = all;
    }
    return 0;
}
