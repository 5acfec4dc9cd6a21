/* senders.h: a message speaks only for its sender.
 *
 * A shard binds each worker index, and the evaluator, to one peer. With
 * CURVE only the client admitted as "worker-K" may speak for worker K and
 * only the one admitted as "evaluator" for the evaluator (the User-Id of
 * each message). With CURVE or without, the index is bound to the ZeroMQ
 * routing identity of the first peer that speaks for it: two processes
 * given one index (and one key) are not both served. Another peer may
 * take the index over only once that one has gone, as a restarted worker
 * does; the shard
 * learns it by probing the bound peer with an empty message (which clients
 * ignore) that the router cannot route once the peer has disconnected, at
 * most once every 0.1 s a slot (a message from another peer meanwhile is
 * refused without one: a forger's flood is not reflected onto the worker).
 *
 * Everything else is refused: a pull, push or DONE for an index from any
 * other peer. Tools (WIRE_ANY) may only ask for the counters (wire_decode
 * checks it). */
#ifndef ASGD_SENDERS_H
#define ASGD_SENDERS_H

#include <stdbool.h>
#include <stdint.h>

#include <zmq.h>

#include "transport/wire.h"

typedef struct sender_slot {
    unsigned char id[256];    /* the bound routing identity */
    size_t len;               /* 0: free */
    double probed_at;         /* when a message from another peer last made the shard
                                 ask whether this one is still there (monotonic s) */
} sender_slot;

typedef struct senders {
    uint32_t workers;
    bool curve;               /* bound by keys, not by routing identity */
    sender_slot *slots;       /* one per worker, then the evaluator's */
} senders;

int senders_init(senders *s, uint32_t workers, bool curve);
void senders_free(senders *s);

/* Whether the message h may speak for its index, and if not why. */
typedef enum senders_verdict {
    SENDERS_ACCEPTED = 0,
    SENDERS_HELD,          /* another peer, still there, holds the index: a second
                              process given it, or the predecessor of a restarted one
                              not yet seen gone */
    SENDERS_OTHER_KEY,     /* with CURVE, the peer's key is not the index's own */
    SENDERS_NO_INDEX,      /* no such worker */
} senders_verdict;

/* Whether the message h, received on router from the peer whose routing
 * identity is `identity` and whose CURVE name is user ("" without CURVE),
 * speaks for its sender; binds a free index to the peer. */
senders_verdict senders_accept(senders *s, void *router, zmq_msg_t *identity,
                               const char *user, const wire_header *h);

#endif
