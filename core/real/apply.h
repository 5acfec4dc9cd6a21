/* apply.h: a shard's apply threads (Hogwild with server_threads > 1).
 *
 * The shard's loop hands each push (its push_msg and payload frame, not
 * copied) to one of s->threads threads over inproc://apply-K; they call
 * server_push at once, which server.h makes safe for Hogwild. */
#ifndef ASGD_APPLY_H
#define ASGD_APPLY_H

#include <pthread.h>
#include <stdatomic.h>

#include <zmq.h>

#include "algorithms/server.h"
#include "core/error.h"

typedef struct appliers {
    void *push;                /* the loop's end of inproc://apply-K */
    pthread_t *threads;        /* NULL: pushes are applied by the loop itself */
    int count;
    void *ctx;
    server *s;
    char endpoint[64];
    atomic_long in_flight;
} appliers;

/* Starts s->threads threads in ctx. */
int apply_start(appliers *a, server *s, void *ctx, error *err);
/* Hands m over, its values in body (taken, not copied); -1 when it could
 * not be handed over. */
int apply_hand(appliers *a, const push_msg *m, zmq_msg_t *body);
/* Waits until every push handed over has been applied and its payload
 * released (zmq_msg_close has run its free function). */
void apply_drain(appliers *a);
/* Stops and joins the threads (those that started). */
void apply_stop(appliers *a);

#endif
