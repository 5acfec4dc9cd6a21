/* ps.c: the parameter-server process loop. */
#include "core/real/ps.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/model.h"
#include "core/real/peers.h"
#include "core/stop.h"
#include "transport/net.h"
#include "transport/senders.h"

#define PS_LOGGED_REJECTS 10

_Static_assert(WIRE_EVALUATOR == ALGORITHM_EVALUATOR, "the evaluator has one id on the wire and in the rules");
_Static_assert((int)PEERS_IN_ROUND == (int)PUSH_IN_ROUND && (int)PEERS_LATE == (int)PUSH_LATE,
               "a verdict has one value on the wire and in the rules");

/* Pushes handed to the apply threads (Hogwild with server_threads > 1). */
typedef struct appliers {
    void *push;                /* main thread's end of inproc://apply-K */
    pthread_t *threads;
    int count;
    void *ctx;
    server *s;
    char endpoint[64];
    atomic_long in_flight;
} appliers;

typedef struct ps {
    server *s;
    void *router;
    wire_limits limits;
    appliers apply;
    bool expect_evaluator;
    senders senders;          /* which peer speaks for which worker */
    auth_zap *zap;            /* with CURVE: the handshakes' judge */
} ps;

/* A reply; its tag is the worker's last staleness, or what tag says. */
static long s_reply_tagged(ps *p, const zmq_msg_t *identity, uint32_t worker, uint16_t encoding,
                           const void *payload, size_t bytes, const uint64_t *tag)
{
    server *s = p->s;
    wire_header h = {
        .type = WIRE_REPLY, .worker = worker, .shard = (uint32_t)s->shard,
        .tag = tag ? *tag : server_last_staleness(s, worker),
        .base_version = atomic_load(&s->version),
        .encoding = encoding, .total = atomic_load(&s->samples),
        .flags = server_workers_done(s) ? WIRE_FLAG_WORKERS_DONE : 0,
    };
    if (encoding == WIRE_F32) {
        h.offset = s->lo;
        h.count = s->n;
    }
    long sent = net_send(p->router, identity, &h, payload, bytes, NULL);
    if (sent < 0) {
        /* the peer has gone (ROUTER_MANDATORY): nothing to do but count it */
        fprintf(stderr, "ps %d: cannot reply to worker %u: %s\n", s->shard, worker,
                zmq_strerror(zmq_errno()));
        return 0;
    }
    s->stats.bytes_out += (uint64_t)sent;
    return sent;
}

static long s_reply(ps *p, const zmq_msg_t *identity, uint32_t worker, uint16_t encoding,
                    const void *payload, size_t bytes)
{
    return s_reply_tagged(p, identity, worker, encoding, payload, bytes, NULL);
}

/* server_reply_fn: the parameters to the peer whose identity is handle. */
static void s_reply_params(void *ctx, const pull_msg *m, void *handle)
{
    ps *p = ctx;
    const float *theta = server_answer(p->s, m);
    s_reply(p, handle, m->worker, WIRE_F32, theta, p->s->n * sizeof(float));
}

/* A waiting pull keeps a copy of its peer's identity; answered or dropped,
 * the copy goes. */
static void s_release_identity(void *ctx, void *handle)
{
    (void)ctx;
    zmq_msg_close(handle);
    free(handle);
}

static void s_reply_waiting(void *ctx, const pull_msg *m, void *handle)
{
    s_reply_params(ctx, m, handle);
    s_release_identity(ctx, handle);
}

static void s_wake(ps *p)
{
    server_wake(p->s, s_reply_waiting, p);
}


static void *s_apply_thread(void *arg)
{
    appliers *a = arg;
    void *pull = zmq_socket(a->ctx, ZMQ_PULL);
    zmq_connect(pull, a->endpoint);
    for (;;) {
        zmq_msg_t head, body;
        zmq_msg_init(&head);
        zmq_msg_init(&body);
        if (zmq_msg_recv(&head, pull, 0) < 0) {
            zmq_msg_close(&head);
            zmq_msg_close(&body);
            continue;
        }
        if (zmq_msg_size(&head) != sizeof(push_msg)) {   /* the stop message */
            zmq_msg_close(&head);
            zmq_msg_close(&body);
            break;
        }
        zmq_msg_recv(&body, pull, 0);
        push_msg m;
        memcpy(&m, zmq_msg_data(&head), sizeof m);
        m.values = zmq_msg_data(&body);
        server_push(a->s, &m);
        atomic_fetch_sub(&a->in_flight, 1);
        zmq_msg_close(&head);
        zmq_msg_close(&body);
    }
    zmq_close(pull);
    return NULL;
}

static void s_stop_appliers(ps *p);

static int s_start_appliers(ps *p, void *ctx, error *err)
{
    appliers *a = &p->apply;
    a->ctx = ctx;
    a->s = p->s;
    snprintf(a->endpoint, sizeof a->endpoint, "inproc://apply-%d", p->s->shard);
    a->push = zmq_socket(ctx, ZMQ_PUSH);
    a->threads = calloc((size_t)p->s->threads, sizeof *a->threads);
    bool ready = a->push && a->threads && zmq_bind(a->push, a->endpoint) == 0;
    for (a->count = 0; ready && a->count < p->s->threads; a->count++) {
        if (pthread_create(&a->threads[a->count], NULL, s_apply_thread, a) != 0) {
            ready = false;
            break;
        }
    }
    if (!ready) {
        s_stop_appliers(p);   /* those that did start */
        return error_set(err, ERROR_RUNTIME, "ps %d: cannot start apply threads", p->s->shard);
    }
    return 0;
}

static void s_stop_appliers(ps *p)
{
    appliers *a = &p->apply;
    for (int i = 0; i < a->count; i++) {
        zmq_send(a->push, "", 0, 0);
    }
    for (int i = 0; i < a->count; i++) {
        pthread_join(a->threads[i], NULL);
    }
    if (a->push) {
        zmq_close(a->push);
    }
    free(a->threads);
    a->threads = NULL;
    a->push = NULL;
    a->count = 0;
}

/* Waits until the apply threads have applied every push handed to them. */
static void s_drain(ps *p)
{
    while (p->apply.threads && atomic_load(&p->apply.in_flight) > 0) {
        sched_yield();
    }
}

static void s_reject(ps *p, const char *why, const wire_header *h, bool decoded);

static void s_push(ps *p, const zmq_msg_t *identity, const wire_header *h, zmq_msg_t *body)
{
    /* ZeroMQ may hand a frame back at any offset of its receive buffer;
     * floats must be read from an aligned copy. */
    if ((uintptr_t)zmq_msg_data(body) % _Alignof(float) != 0) {
        zmq_msg_t aligned;
        zmq_msg_init_size(&aligned, zmq_msg_size(body));
        memcpy(zmq_msg_data(&aligned), zmq_msg_data(body), zmq_msg_size(body));
        zmq_msg_close(body);
        zmq_msg_init(body);
        zmq_msg_move(body, &aligned);
    }
    push_msg pm = {.worker = h->worker, .tag = h->tag, .base_version = h->base_version,
                   .samples = h->samples, .values = zmq_msg_data(body),
                   .verdict = h->flags & WIRE_FLAG_IN_ROUND ? PUSH_IN_ROUND
                              : h->flags & WIRE_FLAG_LATE ? PUSH_LATE : PUSH_UNDECIDED};
    if (h->flags && p->apply.threads) {
        s_reject(p, "rounds with a leader on a shard that applies in threads", h, true);
        return;
    }
    if (!p->apply.threads) {
        int verdict = server_push(p->s, &pm);
        if (h->flags & WIRE_FLAG_VERDICT) {   /* the round's leader answers */
            uint64_t tag = (uint64_t)verdict;
            s_reply_tagged(p, identity, h->worker, WIRE_NO_PAYLOAD, NULL, 0, &tag);
        }
        s_wake(p);
        return;
    }
    atomic_fetch_add(&p->apply.in_flight, 1);
    if (zmq_send(p->apply.push, &pm, sizeof pm, ZMQ_SNDMORE) < 0 ||
        zmq_msg_send(body, p->apply.push, 0) < 0) {   /* hands the payload over, no copy */
        atomic_fetch_sub(&p->apply.in_flight, 1);
        s_reject(p, "cannot hand the push to an apply thread", h, true);
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
 * not speak for it: counted, the first few logged, dropped. */
static void s_foreign(ps *p, const wire_header *h, const char *user)
{
    server *s = p->s;
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

static void s_pull(ps *p, const zmq_msg_t *identity, const pull_msg *m, const wire_header *h)
{
    if (server_pull_ready(p->s, m)) {
        s_reply_params(p, m, (void *)identity);
        return;
    }
    zmq_msg_t *copy = malloc(sizeof *copy);
    if (copy) {
        zmq_msg_init(copy);
        zmq_msg_copy(copy, (zmq_msg_t *)identity);
    }
    if (!copy || server_wait(p->s, m, copy) < 0) {
        if (copy) {
            s_release_identity(p, copy);
        }
        s_reject(p, "out of memory for a waiting pull", h, true);
    }
}

/* Handles one message; returns 1 when the shard should stop. */
static int s_handle(ps *p, net_msg *m)
{
    server *s = p->s;
    s->stats.bytes_in += m->bytes;
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
    if (!senders_accept(&p->senders, p->router, identity, m->user, &h)) {
        s_foreign(p, &h, m->user);
        return 0;
    }
    switch (h.type) {
    case WIRE_PULL:
        s_pull(p, identity, &(pull_msg){.worker = h.worker, .min_version = h.base_version}, &h);
        return 0;
    case WIRE_PUSH:
        s_push(p, identity, &h, &m->frames[2]);
        return 0;
    case WIRE_CONTROL:
        break;
    default:
        return 0;
    }
    if (h.tag == WIRE_CONTROL_STATS) {
        s->stats.unauthenticated = (uint64_t)auth_zap_refused(p->zap);
        shard_stats st;
        server_snapshot(s, &st);
        char *json = shard_stats_json(&st);
        s_reply(p, identity, h.worker, WIRE_JSON, json ? json : "{}", json ? strlen(json) : 2);
        free(json);
        return 0;
    }
    if (h.tag == WIRE_CONTROL_SHUTDOWN) {
        s_reply(p, identity, h.worker, WIRE_NO_PAYLOAD, NULL, 0);
        return 1;
    }
    /* DONE: every push this peer sent came before it on the same pipe */
    s_drain(p);
    server_mark_done(s, h.worker);
    s_reply(p, identity, h.worker, WIRE_NO_PAYLOAD, NULL, 0);
    s_wake(p);
    return server_workers_done(s) && (s->evaluator_done || !p->expect_evaluator);
}

int ps_serve(server *s, void *zmq_ctx, const ps_options *o, error *err)
{
    ps p = {.s = s, .expect_evaluator = o->expect_evaluator};
    p.limits = (wire_limits){.shard = (uint32_t)s->shard, .lo = s->lo, .hi = s->hi,
                             .workers = (uint32_t)s->workers};
    if (senders_init(&p.senders, (uint32_t)s->workers, o->auth != NULL) < 0) {
        return error_set(err, ERROR_RUNTIME, "ps %d: out of memory", s->shard);
    }
    if (o->auth && !(p.zap = auth_zap_start(zmq_ctx, o->auth, err))) {
        senders_free(&p.senders);
        return -1;
    }
    p.router = net_router(zmq_ctx, o->endpoint, o->auth, err);
    if (!p.router) {
        auth_zap_stop(&p.zap);
        senders_free(&p.senders);
        return -1;
    }
    int rc = 0;
    if (s->threads > 1 && s_start_appliers(&p, zmq_ctx, err) < 0) {
        rc = -1;
    }
    while (rc == 0 && !stop_requested()) {
        net_msg m;
        int got = net_recv(p.router, &m, 100);
        if (got < 0) {
            rc = error_set(err, ERROR_RUNTIME, "ps %d: receive failed: %s", s->shard,
                           zmq_strerror(zmq_errno()));
            break;
        }
        if (got == 0) {
            continue;
        }
        int done = s_handle(&p, &m);
        net_msg_close(&m);
        if (done) {
            break;
        }
    }
    s_drain(&p);
    s_stop_appliers(&p);
    server_drop_waiting(s, s_release_identity, &p);
    /* The last replies (DONE and SHUTDOWN acks) must reach their peers:
     * give them time to leave, which linger 0 would not. */
    int linger = stop_requested() ? 0 : 2000;
    zmq_setsockopt(p.router, ZMQ_LINGER, &linger, sizeof linger);
    zmq_close(p.router);
    s->stats.unauthenticated = (uint64_t)auth_zap_refused(p.zap);
    auth_zap_stop(&p.zap);
    senders_free(&p.senders);
    return rc;
}

int ps_main(const cluster_spec *cs, experiment *e, const char *run_dir, error *err)
{
    if (cs->task < 0 || cs->task >= cs->servers) {
        return error_set(err, ERROR_USAGE, "ps: --task_index %d but only %d servers",
                         cs->task, cs->servers);
    }
    long n_train;
    int dim, classes;
    if (data_shape(&e->data, &n_train, &dim, &classes, err) < 0) {
        return -1;
    }
    backend_spec host = {.device = BACKEND_CPU, .threads = 1};
    backend *b = backend_new(&host, err);
    model *m = b ? model_new(&e->model, b, dim, classes, err) : NULL;
    if (!m) {
        backend_destroy(&b);
        return -1;
    }
    float *init = malloc(m->nparams * sizeof *init);
    server *s = NULL;
    if (init) {
        model_init_params(m, init, e->seed);
        s = server_new(e->alg, e->rule, &e->rule_info, cs->task, cs->servers,
                       e->workers, init, m->nparams);
    }
    free(init);
    model_destroy(&m);
    backend_destroy(&b);
    if (!s) {
        return error_set(err, ERROR_RUNTIME, "ps %d: out of memory", cs->task);
    }
    char endpoint[CLUSTER_ADDRESS_MAX + 16], who[32];
    net_endpoint(endpoint, sizeof endpoint, cs->ps[cs->task], true);
    snprintf(who, sizeof who, "ps %d", cs->task);
    net_auth auth;
    int curve = cluster_auth(cs, e->auth == AUTH_CURVE, e->keys, "server", &auth, err);
    if (curve < 0) {
        server_destroy(&s);
        return -1;
    }
    if (!curve) {
        cluster_warn_open(who, endpoint);
    }
    void *ctx = zmq_ctx_new();
    ps_options o = {.endpoint = endpoint, .expect_evaluator = cs->evaluator,
                    .auth = curve ? &auth : NULL};
    stop_install();
    int rc = ps_serve(s, ctx, &o, err);
    stop_uninstall();
    if (curve) {
        auth_free(&auth);
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/ps-%d.json", run_dir, cs->task);
    shard_stats st;
    server_snapshot(s, &st);
    error write_err;
    if (shard_stats_write(path, &st, rc == 0 ? err : &write_err) < 0) {
        rc = -1;
    }
    server_destroy(&s);
    zmq_ctx_term(ctx);
    return rc;
}
