/* senders.c: binding worker indices to the peers that speak for them. */
#include "transport/senders.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/run.h"

/* A bound peer is asked whether it is still there at most this often:
 * each ask is an empty message to it, so a forger's every message was
 * one the real worker had to read and skip (1.5 M of them delayed its
 * replies eightfold); a worker taking over a slot asks again after a
 * resend (1 s) anyway. */
#define SENDERS_PROBE_EVERY 0.1


int senders_init(senders *s, uint32_t workers, bool curve)
{
    s->workers = workers;
    s->curve = curve;
    s->slots = calloc((size_t)workers + 1, sizeof *s->slots);
    return s->slots ? 0 : -1;
}

void senders_free(senders *s)
{
    free(s->slots);
    s->slots = NULL;
}

/* Whether the peer bound to slot can still be reached: an empty message
 * routed to it, which a router refuses (EHOSTUNREACH) once it has gone. */
static bool s_still_there(void *router, const sender_slot *slot)
{
    if (zmq_send(router, slot->id, slot->len, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0) {
        return zmq_errno() != EHOSTUNREACH;   /* a full pipe (EAGAIN) is a live peer */
    }
    zmq_send(router, "", 0, ZMQ_DONTWAIT);
    return true;
}

senders_verdict senders_accept(senders *s, void *router, zmq_msg_t *identity,
                               const char *user, const wire_header *h)
{
    if (h->worker == WIRE_ANY) {
        return SENDERS_ACCEPTED;   /* counters only: wire_decode refuses the rest */
    }
    bool evaluator = h->worker == WIRE_EVALUATOR;
    if (!evaluator && h->worker >= s->workers) {
        return SENDERS_NO_INDEX;
    }
    if (s->curve) {   /* the key first; then, as without it, one process at a time */
        char want[32];
        if (evaluator) {
            snprintf(want, sizeof want, "evaluator");
        } else {
            snprintf(want, sizeof want, "worker-%u", h->worker);
        }
        if (strcmp(user, want) != 0) {
            return SENDERS_OTHER_KEY;
        }
    }
    sender_slot *slot = &s->slots[evaluator ? s->workers : h->worker];
    size_t len = zmq_msg_size(identity);
    const void *id = zmq_msg_data(identity);
    if (slot->len == len && memcmp(slot->id, id, len) == 0) {
        return SENDERS_ACCEPTED;
    }
    if (len > sizeof slot->id) {
        return SENDERS_HELD;   /* no routing identity is that long (255 bytes at most) */
    }
    if (slot->len > 0) {   /* taken: by a peer still there, or asked too lately to tell */
        double now = run_now();
        if (now - slot->probed_at < SENDERS_PROBE_EVERY) {
            return SENDERS_HELD;
        }
        slot->probed_at = now;
        if (s_still_there(router, slot)) {
            return SENDERS_HELD;
        }
    }
    memcpy(slot->id, id, len);   /* free, or its peer has gone: this one takes it */
    slot->len = len;
    return SENDERS_ACCEPTED;
}
