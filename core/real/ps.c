/* ps.c: the parameter-server process loop. */
#include "core/real/ps.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "core/model.h"
#include "core/real/apply.h"
#include "core/checkpoint.h"
#include "core/real/peers.h"
#include "core/run.h"
#include "core/stop.h"
#include "transport/net.h"
#include "transport/senders.h"
#include "transport/shm.h"

#define PS_LOGGED_REJECTS 10

_Static_assert(WIRE_EVALUATOR == ALGORITHM_EVALUATOR, "the evaluator has one id on the wire and in the rules");
_Static_assert((int)PEERS_IN_ROUND == (int)PUSH_IN_ROUND && (int)PEERS_LATE == (int)PUSH_LATE,
               "a verdict has one value on the wire and in the rules");

typedef struct ps {
    server *s;
    const ps_options *o;
    void *router;
    wire_limits limits;
    appliers apply;
    senders senders;          /* which peer speaks for which worker */
    auth_zap *zap;            /* with CURVE: the handshakes' judge */
    shard_client *clients;    /* per worker: its last push */
    uint32_t generation;      /* random, never the checkpoint's it restored */
    uint64_t restored_version;
    uint64_t old_version;     /* the highest version the previous generation's
                                 clients report having seen */
    uint64_t lost_before;     /* updates lost in earlier restarts */
    double next_checkpoint;
    bool evaluator_seen;      /* the gate is open (see s_gated) */
    bool began_saved;         /* a checkpoint knows when training began */
    bool lost_state;          /* restarted without its checkpoint (restore_asked) */
    struct request **held;    /* per worker: its pull held at the gate, or NULL */
    pull_msg *held_pull;      /* and what it asks */
    double next_keepalive;    /* when the held peers next hear that the shard is there */
    faults faults;            /* injected into replies to pulls and pushes, when on */
    /* per client (the workers, then the evaluator): the shared segment it
     * attached to this process (base NULL: none), the pull whose answer
     * its reply area (or kept answer) holds and that answer's version,
     * and, for a rule that keeps
     * what each worker pulled, the last answer sent through the socket */
    shm_segment *segments;
    uint64_t *answered, *answered_version;
    float **kept;
} ps;

/* A request being answered: who asked, and which request it was. */
typedef struct request {
    zmq_msg_t identity;
    uint16_t type;            /* enum wire_type */
    uint32_t worker;
    uint64_t seq;
    uint32_t generation;      /* the shard's, as the sender last heard */
} request;

static request *s_request_copy(const zmq_msg_t *identity, const wire_header *h)
{
    request *r = malloc(sizeof *r);
    if (r) {
        zmq_msg_init(&r->identity);
        zmq_msg_copy(&r->identity, (zmq_msg_t *)identity);
        r->type = h->type;
        r->worker = h->worker;
        r->seq = h->seq;
        r->generation = h->generation;
    }
    return r;
}

/* Whether r's sender last heard from an earlier generation of this shard. */
static bool s_from_before(const ps *p, const request *r)
{
    return r->generation != 0 && r->generation != p->generation;
}

/* Client index of a worker or the evaluator (the last). */
static size_t s_client(const ps *p, uint32_t worker)
{
    return worker < (uint32_t)p->s->workers ? worker : (size_t)p->s->workers;
}

/* The segment worker (or the evaluator) attached, or NULL. */
static shm_segment *s_segment(ps *p, uint32_t worker)
{
    shm_segment *seg = &p->segments[s_client(p, worker)];
    return seg->base ? seg : NULL;
}

/* Forgets a client's segment; no push of it may still be in an apply
 * thread, whose release would count in the next segment. */
static void s_detach(ps *p, uint32_t worker)
{
    shm_segment *seg = &p->segments[s_client(p, worker)];
    if (seg->base) {
        apply_drain(&p->apply);
        shm_close(seg);
    }
    p->answered[s_client(p, worker)] = 0;
}

/* The header of a reply to r, at the shard's version now: tag is the
 * worker's last staleness unless given. */
static wire_header s_reply_header(ps *p, const request *r, uint16_t encoding,
                                  const uint64_t *tag)
{
    server *s = p->s;
    bool worker = r->worker < (uint32_t)s->workers;
    wire_header h = {
        .type = WIRE_REPLY, .worker = r->worker, .shard = (uint32_t)s->shard,
        .tag = tag ? *tag : server_last_staleness(s, r->worker),
        .base_version = atomic_load(&s->version), .encoding = encoding,
        .total = worker ? atomic_load(&s->worker_samples[r->worker]) : atomic_load(&s->samples),
        .flags = (uint16_t)((server_workers_done(s) ? WIRE_FLAG_WORKERS_DONE : 0) |
                            (s_from_before(p, r) ? WIRE_FLAG_RESTARTED : 0)),
        .seq = r->seq, .generation = p->generation, .job = p->o->job,
    };
    if (encoding == WIRE_F32 || encoding == WIRE_SHM) {
        h.offset = s->lo;
        h.count = s->n;
    }
    return h;
}

/* Sends reply h to r, through the faults injected into replies. */
static void s_send_reply(ps *p, const request *r, const wire_header *h, const void *payload,
                         size_t bytes)
{
    server *s = p->s;
    int copies = 1;
    if (r->type != WIRE_CONTROL && faults_on(&p->o->faults)) {
        copies = faults_copies(&p->faults);
        s->stats.injected_drops += copies == 0;
        s->stats.injected_duplicates += copies == 2;
    }
    long sent = 0;
    for (int copy = 0; copy < copies && sent >= 0; copy++) {
        sent = net_send(p->router, &r->identity, h, payload, bytes, NULL);
        s->stats.bytes_out += sent > 0 ? (uint64_t)sent : 0;
    }
    if (sent < 0) {
        /* the peer has gone (ROUTER_MANDATORY), or does not read what it
         * asked for: the shard does not wait for it (a real client that
         * missed a reply asks again). A tool's (anyone may ask for the
         * counters) is not the job's to count or log: a stranger asking
         * and never reading filled `unread` and the log's budget */
        if (r->worker == WIRE_ANY) {
            return;
        }
        bool unread = zmq_errno() == EAGAIN;
        s->stats.unread += unread;
        if (!unread || s->stats.unread <= PS_LOGGED_REJECTS) {
            fprintf(stderr, "ps %d: cannot reply to worker %u: %s\n", s->shard, r->worker,
                    unread ? "it does not read its replies; dropped" : zmq_strerror(zmq_errno()));
        }
        return;
    }
}

/* A reply to r: tag is the worker's last staleness unless given. */
static void s_reply(ps *p, const request *r, uint16_t encoding, const void *payload,
                    size_t bytes, const uint64_t *tag)
{
    wire_header h = s_reply_header(p, r, encoding, tag);
    s_send_reply(p, r, &h, payload, bytes);
}

/* Client's kept answer (allocated at its first use), or NULL when out of
 * memory. */
static float *s_kept(ps *p, int client)
{
    if (!p->kept[client]) {
        p->kept[client] = calloc(p->s->n ? p->s->n : 1, sizeof(float));
    }
    return p->kept[client];
}

/* server_reply_fn: the parameters, to the request that handle is: in
 * its sender's reply area when it attached a segment, else in the reply.
 * Through a segment, and through the socket for a rule that keeps what
 * each worker pulled (server_on_pull: dcasgd, gapaware), the answer is
 * made once per request: a request sent again (a duplicate, or one sent
 * again after its reply was lost) is told the same answer as the first,
 * so that what the rule keeps is what the worker holds whichever reply it
 * takes (a duplicate once moved it on), and one older than the last
 * answered is no longer awaited. A request numbered 0 (asgd's own number
 * from 1; a client of its own may not number them) is answered afresh,
 * every time. */
static void s_reply_params(void *ctx, const pull_msg *m, void *handle)
{
    ps *p = ctx;
    request *r = handle;
    size_t bytes = p->s->n * sizeof(float);
    shm_segment *seg = s_segment(p, r->worker);
    int client = s_client(p, r->worker);
    float *area = seg ? seg->reply : p->s->alg->server_on_pull ? s_kept(p, client) : NULL;
    if (!area) {
        s_reply(p, r, WIRE_F32, server_answer(p->s, m), bytes, NULL);
        return;
    }
    uint64_t *answered = &p->answered[client];
    bool numbered = r->seq != 0;
    if (numbered && r->seq < *answered) {
        return;
    }
    /* the counters before the copy, which apply threads may overtake: the
     * values hold at least this version, never less (read after it, the
     * version counted pushes some values lacked: staleness understated) */
    wire_header h = s_reply_header(p, r, seg ? WIRE_SHM : WIRE_F32, NULL);
    if (!numbered || r->seq != *answered) {
        p->answered_version[client] = h.base_version;
        server_copy_theta(area, server_answer(p->s, m), p->s->n);
        p->s->stats.bytes_out += seg ? bytes : 0;
        if (numbered) {
            *answered = r->seq;
        }
    }
    h.base_version = p->answered_version[client];   /* the version of those values */
    s_send_reply(p, r, &h, seg ? NULL : area, seg ? 0 : bytes);
}

static void s_release(void *ctx, void *handle)
{
    (void)ctx;
    request *r = handle;
    if (r) {
        zmq_msg_close(&r->identity);
        free(r);
    }
}

static void s_reply_waiting(void *ctx, const pull_msg *m, void *handle)
{
    s_reply_params(ctx, m, handle);
    s_release(ctx, handle);
}

/* Whether workers' pulls wait for the evaluator's first: a fresh job's
 * first evaluation is of the initial model at time 0, as under a launcher
 * (which starts the workers after it), however its processes were
 * started. The gate opens at the evaluator's first pull, or at any request
 * from a client that heard from this shard or an earlier life of it (a
 * job under way: a shard restarted without a checkpoint holds nothing). */
static bool s_gated(const ps *p)
{
    return p->o->expect_evaluator && !p->o->restored && !p->evaluator_seen;
}

static void s_wake(ps *p)
{
    if (!s_gated(p)) {
        server_wake(p->s, s_reply_waiting, p);
    }
}

static void s_reject(ps *p, const char *why, const wire_header *h, bool decoded)
{
    server *s = p->s;
    s->stats.rejected++;
    if (s->stats.rejected <= PS_LOGGED_REJECTS) {
        if (decoded) {
            fprintf(stderr, "ps %d: rejected a message (type %u from worker %u): %s\n",
                    s->shard, h->type, h->worker, why);
        } else {
            fprintf(stderr, "ps %d: rejected a message: %s\n", s->shard, why);
        }
    }
}

/* A message for a worker index (or the evaluator) from a peer that does
 * not speak for it: counted, the first few logged, and answered to that
 * peer alone with a refusal whose tag is the verdict (no values; neither
 * counted in the shard's bytes nor routed to the peer that holds the
 * index), so that a second process given the same index, or one holding
 * another's key, learns why it is not served. */
static void s_foreign(ps *p, const zmq_msg_t *identity, const wire_header *h,
                      const char *user, senders_verdict verdict)
{
    server *s = p->s;
    wire_header refusal = {
        .type = WIRE_REPLY, .worker = h->worker, .shard = (uint32_t)s->shard,
        .tag = (uint64_t)verdict, .encoding = WIRE_NO_PAYLOAD, .flags = WIRE_FLAG_REFUSED,
        .seq = h->seq, .generation = p->generation, .job = p->o->job,
    };
    net_send(p->router, identity, &refusal, NULL, 0, NULL);   /* gone, or not reading: no
                                                                 * matter */
    s->stats.foreign++;
    if (s->stats.foreign <= PS_LOGGED_REJECTS) {
        char who[32];
        if (h->worker == WIRE_EVALUATOR) {
            snprintf(who, sizeof who, "the evaluator");
        } else {
            snprintf(who, sizeof who, "worker %u", h->worker);
        }
        fprintf(stderr, "ps %d: refused a message (type %u) for %s from a peer that does not "
                "speak for it%s%s\n", s->shard, h->type, who, user[0] ? ": " : "", user);
    }
}

/* A request from a process of another job's settings (another config
 * file on its host, another seed or data set): taken for nothing,
 * counted rejected, the first few logged, and answered with no values, a
 * reply whose job (this shard's) fails its sender with the reason. */
static void s_other_job(ps *p, const zmq_msg_t *identity, const wire_header *h)
{
    char why[96];
    snprintf(why, sizeof why, "of a job of other settings (%08x, this shard's %08x)", h->job,
             p->o->job);
    s_reject(p, why, h, true);
    request r = {.type = h->type, .worker = h->worker, .seq = h->seq,
                 .generation = h->generation};
    zmq_msg_init(&r.identity);
    zmq_msg_copy(&r.identity, (zmq_msg_t *)identity);
    s_reply(p, &r, WIRE_NO_PAYLOAD, NULL, 0, NULL);
    zmq_msg_close(&r.identity);
}

/* The updates lost by this shard's restorations: earlier lives' and, in
 * this life, those between its checkpoint and the furthest version a
 * worker had seen. */
static void s_count_lost(ps *p)
{
    p->s->stats.lost_updates = p->lost_before + (p->old_version > p->restored_version
                                                 ? p->old_version - p->restored_version : 0);
}

/* Writes the shard's checkpoint (no push may be in an apply thread), counted in its
 * counters unless the evaluator has already read them for the last time. */
static void s_checkpoint(ps *p, bool counted)
{
    if (!p->o->checkpoint[0]) {
        return;
    }
    apply_drain(&p->apply);
    double start = run_wall();
    error err;
    s_count_lost(p);
    if (checkpoint_save(p->o->checkpoint, p->s, p->clients, p->generation, p->o->settings,
                        &err) < 0) {
        fprintf(stderr, "ps %d: %s\n", p->s->shard, err.msg);   /* the next one may do */
        return;
    }
    if (counted) {
        p->s->stats.checkpoints++;
        p->s->stats.checkpoint_us += (uint64_t)((run_wall() - start) * 1e6);
    }
}

/* A push. Its values may arrive at any offset of ZeroMQ's buffer; floats
 * are read from an aligned copy. */
/* A compressed push's payload checked whole and made float32 values in
 * body's place; -1 (body untouched) when it breaks its format. */
static int s_decompress(ps *p, const wire_header *h, zmq_msg_t *body)
{
    zmq_msg_t dense;
    if (zmq_msg_init_size(&dense, h->count * sizeof(float)) < 0) {
        s_reject(p, "no memory to decode a compressed push", h, true);
        return -1;
    }
    const char *why;
    if (compress_decode(wire_format_of(h->encoding), p->limits.push_bits, zmq_msg_data(body),
                        zmq_msg_size(body), h->count, zmq_msg_data(&dense), &why) < 0) {
        zmq_msg_close(&dense);
        s_reject(p, why, h, true);
        return -1;
    }
    zmq_msg_close(body);
    zmq_msg_init(body);
    zmq_msg_move(body, &dense);
    return 0;
}

static void s_push(ps *p, const request *r, const wire_header *h, zmq_msg_t *body)
{
    p->s->stats.push_bytes += WIRE_HEADER_SIZE + zmq_msg_size(body);
    p->s->stats.push_messages++;
    if (h->encoding != WIRE_F32 && h->encoding != WIRE_SHM && s_decompress(p, h, body) < 0) {
        return;
    }
    if ((uintptr_t)zmq_msg_data(body) % _Alignof(float) != 0) {
        zmq_msg_t aligned;
        zmq_msg_init_size(&aligned, zmq_msg_size(body));
        memcpy(zmq_msg_data(&aligned), zmq_msg_data(body), zmq_msg_size(body));
        zmq_msg_close(body);
        zmq_msg_init(body);
        zmq_msg_move(body, &aligned);
    }
    shard_client *c = &p->clients[h->worker];
    /* the round's leader answers, and any shard asked to acknowledge */
    bool answer = h->flags & (WIRE_FLAG_VERDICT | WIRE_FLAG_ACK);
    if (h->seq != 0 && h->seq <= c->push_seq) {   /* sent again: taken once */
        p->s->stats.duplicates++;
        if (answer) {
            uint64_t tag = c->verdict;
            s_reply(p, r, WIRE_NO_PAYLOAD, NULL, 0, &tag);
        }
        return;
    }
    uint64_t before = c->push_seq;   /* a push refused below is not taken */
    c->push_seq = h->seq;
    if (h->samples != 0 && h->total != 0 &&
        h->total <= atomic_load(&p->s->worker_samples[h->worker])) {
        /* a step this shard has: an earlier process of the worker pushed it,
         * and the new one took up where another shard had counted fewer (a
         * push of no examples, a round's of a worker past its budget, is no
         * step: its total is the last one's) */
        p->s->stats.duplicates++;
        c->verdict = PUSH_LATE;
        if (answer) {
            uint64_t tag = PUSH_LATE;
            s_reply(p, r, WIRE_NO_PAYLOAD, NULL, 0, &tag);
        }
        return;
    }
    if (p->s->done[h->worker]) {
        /* a new step after the worker's DONE: none is (a new process of it
         * redoes only steps some shard lacked, which this one has, above).
         * A stranger taking the place of one that had left (without auth)
         * pushed into the final model. Refused, and answered late if asked,
         * so that a sender waiting for a verdict does not wait for good */
        c->push_seq = before;
        s_reject(p, "a push after its worker said it was done", h, true);
        if (answer) {
            uint64_t tag = PUSH_LATE;
            s_reply(p, r, WIRE_NO_PAYLOAD, NULL, 0, &tag);
        }
        return;
    }
    if (s_from_before(p, r)) {   /* computed on what this shard no longer holds */
        server_stats_lock(p->s);   /* a rule's apply threads count drops too */
        p->s->stats.dropped++;
        server_stats_unlock(p->s);
        c->verdict = PUSH_LATE;
        if (answer) {
            uint64_t tag = PUSH_LATE;
            s_reply(p, r, WIRE_NO_PAYLOAD, NULL, 0, &tag);
        }
        return;
    }
    push_msg pm = {.worker = h->worker, .tag = h->tag, .base_version = h->base_version,
                   .samples = h->samples, .values = zmq_msg_data(body),
                   .verdict = h->flags & WIRE_FLAG_IN_ROUND ? PUSH_IN_ROUND
                              : h->flags & WIRE_FLAG_LATE ? PUSH_LATE : PUSH_UNDECIDED};
    if ((h->flags & ~WIRE_FLAG_ACK) && p->apply.threads) {
        c->push_seq = before;
        s_reject(p, "rounds with a leader on a shard that applies in threads", h, true);
        return;
    }
    if (p->apply.threads) {
        if (apply_hand(&p->apply, &pm, body) < 0) {
            c->push_seq = before;
            s_reject(p, "cannot hand the push to an apply thread", h, true);
        } else if (answer) {   /* taken: an apply thread has it */
            c->verdict = PUSH_UNDECIDED;
            uint64_t tag = c->verdict;
            s_reply(p, r, WIRE_NO_PAYLOAD, NULL, 0, &tag);
        }
        return;
    }
    c->verdict = (uint8_t)server_push(p->s, &pm);
    if (answer) {
        uint64_t tag = c->verdict;
        s_reply(p, r, WIRE_NO_PAYLOAD, NULL, 0, &tag);
    }
    s_wake(p);
}

static void s_segment_read(void *data, void *hint)
{
    (void)data;
    shm_release(hint);
}

/* A push whose values are in its sender's segment: read from there in
 * place, the push area released to the sender once the push is done with
 * (applied, dropped or refused). A push sent again is not read, nor
 * released again. One from a client whose segment this process does not
 * hold came before a restart (dropped as such) or is refused. */
static void s_shared_push(ps *p, const request *r, const wire_header *h)
{
    shm_segment *seg = s_segment(p, h->worker);
    bool again = h->seq != 0 && h->seq <= p->clients[h->worker].push_seq;
    zmq_msg_t body;
    if (seg && !again) {
        zmq_msg_init_data(&body, seg->push, seg->n * sizeof(float), s_segment_read, seg);
        p->s->stats.shared_pushes++;
        p->s->stats.bytes_in += seg->n * sizeof(float);
    } else if (seg || s_from_before(p, r)) {
        zmq_msg_init(&body);   /* taken once already, or dropped: its values are not read */
    } else {
        s_reject(p, "a push in a shared segment the shard does not hold", h, true);
        return;
    }
    s_push(p, r, h, &body);
    zmq_msg_close(&body);
}

/* An ATTACH: the sender's segment replaces any it attached before; the
 * reply says whether it was taken (tag 1) or not (0: the sender goes on
 * through the socket). */
static void s_attach(ps *p, const request *r, const wire_header *h, const zmq_msg_t *payload)
{
    s_detach(p, h->worker);
    const char *why;
    shm_segment *seg = &p->segments[s_client(p, h->worker)];
    uint64_t taken = shm_attach(seg, zmq_msg_data((zmq_msg_t *)payload), p->s->n, &why) == 0;
    if (!taken) {   /* not malformed: a client in another pid namespace cannot share */
        fprintf(stderr, "ps %d: %s %u's shared segment not taken (%s); it goes on through "
                "the socket\n", p->s->shard, h->worker == WIRE_EVALUATOR ? "evaluator" : "worker",
                h->worker, why);
    }
    s_reply(p, r, WIRE_NO_PAYLOAD, NULL, 0, &taken);
}

/* Pull m of request r: answered now when ready, or when its sender last
 * heard from an earlier generation (it must learn of the restart); else it
 * waits. A sender has one pull waiting: a later one (sent again, or a new
 * one after a prefetch it no longer wants) takes its place, the earlier
 * left unanswered (each one once waited, so that a peer sending pulls that
 * can never be ready grew the queue without end, and every push scanned
 * it). */
static void s_serve_pull(ps *p, const pull_msg *m, request *r)
{
    if (s_from_before(p, r) || server_pull_ready(p->s, m)) {
        s_reply_waiting(p, m, r);
        return;
    }
    server_waiting *queued = server_find_waiting(p->s, m->worker);
    if (queued) {
        s_release(p, queued->handle);   /* the sender may have a new identity */
        queued->handle = r;
        queued->pull = *m;
        return;
    }
    if (server_wait(p->s, m, r) < 0) {
        s_release(p, r);
        fprintf(stderr, "ps %d: out of memory for a waiting pull\n", p->s->shard);
    }
}

/* Opens the gate: the pulls held there are served, in worker order. */
static void s_open_gate(ps *p)
{
    p->evaluator_seen = true;
    for (int w = 0; w < p->s->workers; w++) {
        if (p->held[w]) {
            request *r = p->held[w];
            p->held[w] = NULL;
            s_serve_pull(p, &p->held_pull[w], r);
        }
    }
    s_wake(p);
}

/* Tells each peer held at the gate, once a second, that the shard is
 * there (an empty message, which clients skip): without a reply, a worker
 * started long before the evaluator would reach its timeout. */
static void s_keepalive(ps *p)
{
    double now = run_wall();
    if (!s_gated(p) || now < p->next_keepalive) {
        return;
    }
    p->next_keepalive = now + 1;
    for (int w = 0; w < p->s->workers; w++) {
        request *r = p->held[w];
        zmq_msg_t id;
        zmq_msg_init(&id);
        if (r && zmq_msg_copy(&id, &r->identity) == 0 &&
            zmq_msg_send(&id, p->router, ZMQ_SNDMORE | ZMQ_DONTWAIT) >= 0) {
            zmq_send(p->router, "", 0, ZMQ_DONTWAIT);
        } else {
            zmq_msg_close(&id);
        }
    }
}

/* A pull: a worker's held at the gate (s_gated), else served
 * (s_serve_pull). */
static void s_pull(ps *p, const zmq_msg_t *identity, const wire_header *h)
{
    pull_msg m = {.worker = h->worker, .min_version = h->base_version};
    shard_stats *st = &p->s->stats;
    if (p->o->restored && h->worker < (uint32_t)p->s->workers && st->resumed_at == 0) {
        st->resumed_at = run_wall();   /* training goes on from the checkpoint */
        st->clock_of[2] = 0;
        if (st->trained_s > 0) {       /* resumed: the time between does not count */
            server_stats_lock(p->s);   /* apply threads move last_push_at */
            st->first_pull_at = st->resumed_at - st->trained_s;
            st->last_push_at = st->resumed_at;
            st->clock_of[0] = st->clock_of[1] = 0;
            server_stats_unlock(p->s);
        }
    }
    request *r = s_request_copy(identity, h);
    if (!r) {
        s_reject(p, "out of memory for a pull", h, true);
        return;
    }
    bool evaluator = h->worker == WIRE_EVALUATOR;
    if (!evaluator && s_gated(p) && !s_from_before(p, r)) {   /* held; a resend replaces it */
        s_release(p, p->held[h->worker]);
        p->held[h->worker] = r;
        p->held_pull[h->worker] = m;
        return;
    }
    s_serve_pull(p, &m, r);
    if (evaluator && s_gated(p)) {
        s_open_gate(p);   /* the workers held may begin */
    }
}

/* What a message from an earlier generation's client tells of how far that
 * generation had got: the version a push was computed on, or the one a
 * pull's sender last saw. */
static void s_note_old_version(ps *p, const wire_header *h)
{
    uint64_t seen = h->type == WIRE_PUSH ? h->base_version : h->type == WIRE_PULL ? h->tag : 0;
    if (seen > p->old_version) {
        p->old_version = seen;
    }
}

/* A control message; returns 1 when the shard should stop. */
static int s_control(ps *p, const request *r, const wire_header *h)
{
    server *s = p->s;
    if (h->tag == WIRE_CONTROL_STATS) {
        s->stats.unauthenticated = (uint64_t)auth_zap_refused(p->zap);
        s_count_lost(p);
        shard_stats st;
        server_snapshot(s, &st);
        st.read_at = run_wall();   /* its clock, which a reader on another host places */
        char *json = shard_stats_json(&st);
        s_reply(p, r, WIRE_JSON, json ? json : "{}", json ? strlen(json) : 2, NULL);
        free(json);
        return 0;
    }
    /* DONE: every push this peer sent came before it on the same pipe */
    apply_drain(&p->apply);
    bool was_done = h->worker == WIRE_EVALUATOR ? s->evaluator_done : s->done[h->worker];
    if (!was_done && faults_on(&p->o->faults)) {   /* what fault injection did to this
                                                    * peer's messages to the shard */
        s->stats.injected_drops += h->base_version;
        s->stats.injected_duplicates += h->samples;
    }
    server_mark_done(s, h->worker);
    /* a restored shard must not wait for a worker that has left; the
     * evaluator's DONE changes nothing a checkpoint holds, and comes after
     * its last look at the counters (a job started role by role takes its
     * summary from that look: a checkpoint here was missing from it) */
    if (!was_done && h->worker != WIRE_EVALUATOR && p->o->checkpoint_every > 0) {
        s_checkpoint(p, true);
    }
    s_reply(p, r, WIRE_NO_PAYLOAD, NULL, 0, NULL);
    s_wake(p);
    return server_workers_done(s) && (s->evaluator_done || !p->o->expect_evaluator);
}

/* Handles one message; returns 1 when the shard should stop. */
static int s_handle(ps *p, net_msg *m)
{
    server *s = p->s;
    /* the bytes its sender sent: not the identity frame the router adds
     * (5 bytes a message more than bytes_out and the simulator count) */
    s->stats.bytes_in += m->bytes - (m->count > 0 ? zmq_msg_size(&m->frames[0]) : 0);
    if (m->count < 2) {
        s_reject(p, "no header frame", NULL, false);
        return 0;
    }
    zmq_msg_t *identity = &m->frames[0];
    zmq_msg_t *head = &m->frames[1];
    int frames = m->count - 1 + m->dropped;
    size_t payload = m->count > 2 ? zmq_msg_size(&m->frames[2]) : 0;
    wire_header h;
    const char *why;
    if (wire_decode(&h, zmq_msg_data(head), zmq_msg_size(head), frames, payload,
                    &p->limits, &why) < 0) {
        s_reject(p, why, &h, false);
        return 0;
    }
    /* before the binding: a peer turned away held the index it named */
    if (h.job != 0 && h.job != p->o->job && h.worker != WIRE_ANY) {
        s_other_job(p, identity, &h);
        return 0;
    }
    senders_verdict verdict = senders_accept(&p->senders, p->router, identity, m->user, &h);
    if (verdict != SENDERS_ACCEPTED) {
        s_foreign(p, identity, &h, m->user, verdict);
        return 0;
    }
    if (h.generation != 0 && h.generation != p->generation) {
        bool done = h.worker == WIRE_EVALUATOR ? s->evaluator_done
                    : h.worker < (uint32_t)s->workers && s->done[h.worker];
        if (!done) {   /* one that has left says nothing of an earlier life: a
                        * stranger in its place (without auth) planted 10^12 */
            s_note_old_version(p, &h);
        }
        if (p->o->restore_asked && !p->o->restored &&
            (h.worker < (uint32_t)s->workers || h.worker == WIRE_EVALUATOR)) {
            p->lost_state = true;   /* it lived before, and what it applied is gone (a
                                     * pod made anew with an empty folder): it went on
                                     * from the initial model, and the job succeeded; the
                                     * evaluator's word too (the workers done, or new
                                     * ones started over beside it: stuck, or trained
                                     * anew under the old rows) */
            return 1;
        }
    }
    if (h.generation == 0 && h.worker != WIRE_ANY) {   /* a new process */
        if (h.worker < (uint32_t)s->workers) {
            p->clients[h.worker].push_seq = 0;   /* it numbers from 1 again */
        }
        s_detach(p, h.worker);   /* its predecessor's segment (it attaches its own) */
    }
    if (h.generation != 0 && h.generation != p->generation && h.worker < (uint32_t)s->workers &&
        s_gated(p)) {
        s_open_gate(p);   /* a worker that an earlier life answered: a job under way */
    }
    if (h.type == WIRE_PULL) {
        s_pull(p, identity, &h);
        return 0;
    }
    request r = {.type = h.type, .worker = h.worker, .seq = h.seq, .generation = h.generation};
    zmq_msg_init(&r.identity);
    zmq_msg_copy(&r.identity, identity);
    int stop = 0;
    if (h.type == WIRE_PUSH && h.encoding == WIRE_SHM) {
        s_shared_push(p, &r, &h);
    } else if (h.type == WIRE_PUSH) {
        s_push(p, &r, &h, &m->frames[2]);
    } else if (h.tag == WIRE_CONTROL_ATTACH) {
        s_attach(p, &r, &h, &m->frames[2]);
    } else {
        stop = s_control(p, &r, &h);
    }
    zmq_msg_close(&r.identity);
    return stop;
}

/* Sets up p: the senders' table, the clients, the ZAP handler and the
 * router, the apply threads. */
static int s_open(ps *p, void *zmq_ctx, error *err)
{
    server *s = p->s;
    const ps_options *o = p->o;
    p->limits = (wire_limits){.shard = (uint32_t)s->shard, .lo = s->lo, .hi = s->hi,
                              .workers = (uint32_t)s->workers,
                              .push_encoding = wire_encoding_of(compress_format_of(&o->compress)),
                              .push_bits = o->compress.bits,
                              .no_evaluator = !o->expect_evaluator};
    if (senders_init(&p->senders, (uint32_t)s->workers, o->auth != NULL) < 0) {
        return error_set(err, ERROR_RUNTIME, "ps %d: out of memory", s->shard);
    }
    if (o->auth && !(p->zap = auth_zap_start(zmq_ctx, o->auth, err))) {
        return -1;
    }
    /* the largest frame a peer may send: a sparse push of every element
     * (an index and a value each); the rest are far smaller */
    int64_t most = (int64_t)(8 * (s->hi - s->lo)) + 4096;
    p->router = net_router(zmq_ctx, o->endpoint, o->auth, most, err);
    if (!p->router) {
        return -1;
    }
    return s->threads > 1 ? apply_start(&p->apply, s, zmq_ctx, err) : 0;
}

int ps_serve(server *s, void *zmq_ctx, const ps_options *o, shard_client *clients,
             uint32_t generation, error *err)
{
    ps p = {.s = s, .o = o, .clients = clients, .generation = generation,
            .restored_version = atomic_load(&s->version), .lost_before = s->stats.lost_updates};
    p.old_version = o->seen_version > p.restored_version ? o->seen_version
                                                          : p.restored_version;
    p.held = calloc((size_t)s->workers, sizeof *p.held);
    p.held_pull = calloc((size_t)s->workers, sizeof *p.held_pull);
    p.segments = calloc((size_t)s->workers + 1, sizeof *p.segments);
    p.answered = calloc((size_t)s->workers + 1, sizeof *p.answered);
    p.answered_version = calloc((size_t)s->workers + 1, sizeof *p.answered_version);
    p.kept = calloc((size_t)s->workers + 1, sizeof *p.kept);
    if (!p.held || !p.held_pull || !p.segments || !p.answered || !p.answered_version ||
        !p.kept) {
        free(p.held);
        free(p.held_pull);
        free(p.segments);
        free(p.answered);
        free(p.answered_version);
        free(p.kept);
        return error_set(err, ERROR_RUNTIME, "ps %d: out of memory", s->shard);
    }
    faults_init(&p.faults, &o->faults, o->seed, (uint64_t)WIRE_ANY << 16 | (uint64_t)s->shard);
    p.next_checkpoint = o->checkpoint_every > 0 ? run_wall() + o->checkpoint_every : 0;
    p.began_saved = s->stats.first_pull_at > 0;
    int rc = s_open(&p, zmq_ctx, err);
    if (rc == 0 && o->checkpoint_every > 0) {
        /* a shard that fails before its first interval comes back from this
         * one, as a generation of its own, and counts what it lost */
        s_checkpoint(&p, true);
    }
    while (rc == 0 && !stop_requested()) {
        net_msg m;
        /* pulls that wait while apply threads apply pushes are asked again
         * each millisecond: an applied push comes with no message (a pull
         * waiting for it sat until the next one, 6.6 s against 0.016 s) */
        bool asked_again = p.apply.threads && s->nwaiting > 0;
        int got = net_recv(p.router, &m, asked_again ? 1 : 100);
        if (got < 0) {
            rc = error_set(err, ERROR_RUNTIME, "ps %d: receive failed: %s", s->shard,
                           zmq_strerror(zmq_errno()));
            break;
        }
        int done = got > 0 ? s_handle(&p, &m) : 0;
        if (got > 0) {
            net_msg_close(&m);
        }
        if (asked_again) {
            s_wake(&p);
        }
        s_keepalive(&p);
        /* one when training begins: a fresh shard's first checkpoint was
         * written before it, and a restart from that one took its own first
         * pull for the job's (time_s short, the rows before it at 0) */
        if (!p.began_saved && s->stats.first_pull_at > 0 && o->checkpoint_every > 0 &&
            !server_workers_done(s)) {
            s_checkpoint(&p, true);
            p.began_saved = true;
        }
        /* none once every worker is done: nothing can change any more (the
         * last worker's DONE wrote one), and one written after the
         * evaluator's last look at the counters was missing from the
         * summary of a job started role by role (5 against ps-0.json's 6,
         * 1 run in 8 with both cores busy) */
        if (p.next_checkpoint > 0 && run_wall() >= p.next_checkpoint &&
            !server_workers_done(s)) {
            s_checkpoint(&p, true);
            p.next_checkpoint = run_wall() + o->checkpoint_every;
        }
        if (done) {
            break;
        }
    }
    if (rc == 0 && !p.lost_state && server_workers_done(s) &&
        (s->evaluator_done || !o->expect_evaluator) && o->checkpoint_every > 0) {
        /* the job's end, which a new job in this folder (--restore) starts
         * anew from; not counted: the evaluator has read the counters */
        s_checkpoint(&p, false);
    }
    apply_drain(&p.apply);
    apply_stop(&p.apply);
    for (int w = 0; w <= s->workers; w++) {
        shm_close(&p.segments[w]);
        free(p.kept[w]);
    }
    free(p.segments);
    free(p.answered);
    free(p.answered_version);
    free(p.kept);
    if (stop_requested()) {
        s_checkpoint(&p, true);   /* stopped from outside: resume from here */
    }
    if (p.lost_state) {
        /* the checkpoint this life wrote (none was there when it began) is
         * of the initial model: the next try restored it as the job's and
         * completed from there, under OnFailure */
        unlink(o->checkpoint);
        rc = error_set(err, ERROR_RUNTIME, "ps %d: a process heard from an earlier life of this "
                       "shard, but there is no checkpoint to come back from (%s): what it "
                       "applied is lost; keep the run folder on a volume that outlives the "
                       "process (a pod's emptyDir does not) and set [checkpoint] every",
                       s->shard, o->checkpoint);
    }
    s_count_lost(&p);
    server_drop_waiting(s, s_release, &p);
    for (int w = 0; w < s->workers; w++) {
        s_release(&p, p.held[w]);
    }
    free(p.held);
    free(p.held_pull);
    if (p.router) {
        /* The last replies (DONE's acknowledgements) must reach their peers:
         * give them time to leave, which linger 0 would not. */
        int linger = stop_requested() ? 0 : 2000;
        zmq_setsockopt(p.router, ZMQ_LINGER, &linger, sizeof linger);
        zmq_close(p.router);
    }
    s->stats.unauthenticated = (uint64_t)auth_zap_refused(p.zap);
    auth_zap_stop(&p.zap);
    senders_free(&p.senders);
    return rc;
}

/* Shard cs->task of the experiment, fresh. */
static server *s_new_shard(const cluster_spec *cs, experiment *e, error *err)
{
    long n_train;
    int dim, classes;
    if (data_shape(&e->data, &n_train, &dim, &classes, err) < 0) {
        return NULL;
    }
    backend_spec host = {.device = BACKEND_CPU, .threads = 1};
    backend *b = backend_new(&host, err);
    model *m = b ? model_new(&e->model, b, dim, classes, err) : NULL;
    if (!m) {
        backend_destroy(&b);
        return NULL;
    }
    float *init = malloc(m->nparams * sizeof *init);
    server *s = NULL;
    if (init) {
        model_init_host(m, init, e->seed);
        s = server_new(e->alg, e->rule, &e->rule_info, cs->task, cs->servers,
                       e->workers, init, m->nparams);
    }
    free(init);
    model_destroy(&m);
    backend_destroy(&b);
    if (!s) {
        error_set(err, ERROR_RUNTIME, "ps %d: out of memory", cs->task);
    }
    return s;
}

/* With --restore or --resume and a checkpoint on disk: s takes it up, as
 * the next generation; resumed, its clock moves so that the time between
 * does not count as training. */
static int s_restore(const cluster_spec *cs, const char *path, const char *settings, server *s,
                     shard_client *clients, uint32_t *generation, bool *restored, error *err)
{
    /* a fresh shard's generation is new to every client, even to those of
     * an earlier life whose checkpoint is gone */
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    *generation = ((uint32_t)now.tv_nsec ^ (uint32_t)now.tv_sec * 2654435761u ^
                   (uint32_t)getpid() << 16) | 1u;
    *restored = false;
    FILE *f = cs->restore ? fopen(path, "rb") : NULL;
    if (!f) {
        return 0;
    }
    fclose(f);
    bool workers_done, evaluator_done;
    if (cs->restore == RESTORE_RESTART &&
        checkpoint_workers_done(path, s->workers, &workers_done, &evaluator_done, err) == 0 &&
        workers_done && (evaluator_done || !cs->evaluator)) {
        /* the checkpoint of a job that completed (its last one, at its end):
         * this is a new job in its folder (a Kubeflow job applied again, its
         * volume kept), which took up the model and trained nothing, the
         * earlier results reported as its own. A resume (--resume) of a
         * run stopped in its write-up still finishes it from there */
        fprintf(stderr, "ps %d: %s is of a job that completed: this job starts anew\n",
                cs->task, path);
        return 0;
    }
    uint32_t fresh = *generation;
    if (checkpoint_load(path, s, clients, generation, settings, err) < 0) {
        return -1;
    }
    /* its times are on the clock of the process that wrote it (or of one
     * before, that one's own inherited), which may be another host's: an
     * evaluator places each with that process's offset */
    double *times[SHARD_TIMES] = {&s->stats.first_pull_at, &s->stats.last_push_at,
                                  &s->stats.resumed_at, &s->stats.started_at};
    for (int i = 0; i < SHARD_TIMES; i++) {
        if (*times[i] > 0 && s->stats.clock_of[i] == 0) {
            s->stats.clock_of[i] = *generation;
        }
    }
    server_round_forget(s);   /* a half-done round is retaken whole */
    if (cs->restore == RESTORE_RESUME) {
        /* a new session, whose evaluator has not said it is done: the job's
         * last checkpoint says the last session's had, and a restart of this
         * shard later in the session took it for a job that completed and
         * started anew, its model thrown away */
        s->evaluator_done = false;
    }
    /* drawn anew, not the checkpoint's one more: two lives that read one
     * checkpoint (the first could not write its own) were one generation,
     * and workers took the second for the first (nothing lost, stale
     * pushes applied, the job hung or ended short) */
    *generation = fresh != *generation ? fresh : fresh ^ 2u;
    *restored = true;
    shard_stats *st = &s->stats;
    st->restarts += cs->restore == RESTORE_RESTART;   /* a resumed run was not a failure */
    st->resumes += cs->restore == RESTORE_RESUME;      /* what an evaluator started by hand
                                                          learns the run's resumes from */
    /* the counters were saved before the checkpoint that holds them was
     * written: it is counted now that it has been read (its time is not
     * known) */
    st->checkpoints++;
    if (cs->restore == RESTORE_RESUME) {
        st->resumed_at = 0;   /* this session's first pull (s_pull) */
        if (st->first_pull_at > 0) {
            /* the clock stops until a worker pulls again (s_pull) */
            st->trained_s = st->last_push_at > st->first_pull_at
                                ? st->last_push_at - st->first_pull_at : 1e-9;
            st->first_pull_at = 0;
        }   /* else a resumed session that stopped before its first pull: its clock is
             * still stopped at the trained_s it saved (it was dropped, and time went
             * back to 0) */
    } else if (st->first_pull_at > 0) {
        /* restarted after a failure: the session's clock goes on from its origin,
         * and a resumed session's first pull stays the checkpoint's (the restart's
         * became it, and start-up took in the training before the failure) */
        st->trained_s = 0;
    }   /* else restarted before the session's first pull: a resumed session's
         * training before it still counts from that pull (it was dropped) */
    fprintf(stderr, "ps %d: restored from %s at version %llu (generation %u)\n", cs->task,
            path, (unsigned long long)atomic_load(&s->version), *generation);
    return 0;
}

/* The soft limit on open files raised to the hard one: each peer's
 * connection holds a descriptor, and a flood of idle connections (which
 * CURVE cannot refuse before their handshake) at the usual soft 1,024 left
 * no room for a restarted worker's, nor for the checkpoint at the end. */
static void s_raise_file_limit(void)
{
    struct rlimit files;
    if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
        files.rlim_cur = files.rlim_max;
        setrlimit(RLIMIT_NOFILE, &files);
    }
}

int ps_main(const cluster_spec *cs, experiment *e, const char *run_dir, error *err)
{
    s_raise_file_limit();
    double started = run_wall();
    server *s = s_new_shard(cs, e, err);
    shard_client *clients = s ? calloc((size_t)e->workers, sizeof *clients) : NULL;
    char *settings = clients ? experiment_settings(e) : NULL;
    char checkpoint[4200], endpoint[CLUSTER_ADDRESS_MAX + 16], who[32];
    checkpoint_path(checkpoint, sizeof checkpoint, run_dir, cs->task);
    uint32_t generation;
    bool restored;
    if (!settings ||
        s_restore(cs, checkpoint, settings, s, clients, &generation, &restored, err) < 0) {
        if (s && !settings) {
            error_set(err, ERROR_RUNTIME, "ps %d: out of memory", cs->task);
        }
        free(settings);
        free(clients);
        server_destroy(&s);
        return -1;
    }
    /* this process's start, not a checkpoint's: where an evaluator started
     * by hand, later than the shards, counts this session's time from; but
     * a restart (not a resume) goes on in the checkpoint's session, which
     * began when the earlier life did (every pod made anew: wall_time_s
     * 6.5 s against a time_s of 11.3 s) */
    double began = s->stats.started_at;   /* the checkpoint's, on its clock_of; 0: fresh */
    if (!(restored && cs->restore == RESTORE_RESTART && began > 0)) {
        s->stats.started_at = started;
        s->stats.clock_of[3] = 0;
    }
    /* an earlier life's counters (they go on in the checkpoint): a killed
     * process writes none, and the launcher summed the earlier one's as
     * this session's, none missing */
    char counters[4200];
    snprintf(counters, sizeof counters, "%s/ps-%d.json", run_dir, cs->task);
    remove(counters);
    net_endpoint(endpoint, sizeof endpoint, cs->ps[cs->task], true);
    snprintf(who, sizeof who, "ps %d", cs->task);
    net_auth auth;
    int curve = cluster_auth(cs, e->auth == AUTH_CURVE, e->keys, "server", &auth, err);
    int rc = -1;
    if (curve >= 0) {
        if (!curve) {
            cluster_warn_open(who, endpoint);
        }
        void *ctx = zmq_ctx_new();
        char evals[4200];
        snprintf(evals, sizeof evals, "%s/eval.csv", run_dir);
        bool resumed0 = restored && cs->restore == RESTORE_RESUME && cs->task == 0;
        ps_options o = {.endpoint = endpoint, .expect_evaluator = cs->evaluator,
                        .seen_version = resumed0 ? summary_evals_last_updates(evals) : 0,
                        .auth = curve ? &auth : NULL, .checkpoint = checkpoint,
                        .settings = settings,
                        .checkpoint_every = e->checkpoint_every, .restored = restored,
                        .restore_asked = cs->restore != RESTORE_NONE,
                        .faults = e->faults, .seed = e->seed, .compress = e->compress,
                        .job = experiment_job(e)};
        /* the evaluations the interruption lost (after the checkpoint) go:
         * the time axis and shard 0's version go on from the checkpoint's */
        long cut = resumed0 ? summary_evals_cut(evals, atomic_load(&s->version),
                                                s->stats.trained_s, err) : 0;
        if (cut > 0) {
            fprintf(stderr, "ps 0: %ld evaluations in eval.csv came after the checkpoint (a "
                    "model the interruption lost): cut\n", cut);
        }
        stop_install();
        rc = cut < 0 ? -1 : ps_serve(s, ctx, &o, clients, generation, err);
        stop_uninstall();
        zmq_ctx_term(ctx);
        if (curve) {
            auth_free(&auth);
        }
        shard_stats st;
        server_snapshot(s, &st);
        error write_err;
        if (shard_stats_write(counters, &st, rc == 0 ? err : &write_err) < 0) {
            rc = -1;
        }
        bool over = server_workers_done(s) && (s->evaluator_done || !cs->evaluator);
        if (rc == 0 && stop_requested() && !over) {   /* said: a launcher must not take it
                                                       * for the end (a PyTorchJob whose
                                                       * master it is would succeed) */
            rc = error_set(err, ERROR_RUNTIME, "stopped by signal %d before the job was done; "
                           "%s", stop_requested(), access(checkpoint, R_OK) == 0
                               ? "--restore (a restart) or --resume goes on from its last "
                                 "checkpoint"
                               : "it has no checkpoint (see above): --restore and --resume "
                                 "cannot take it up");
        }
    }
    free(settings);
    free(clients);
    server_destroy(&s);
    return rc;
}
