/* apply.c: a shard's apply threads. */
#include "core/real/apply.h"

#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ZeroMQ hands each push from the loop to an apply thread: the loop's
 * writes (its mapping of a worker's shared segment among them) come before
 * the thread's reads, as handover.h tells ThreadSanitizer. */
#include "core/handover.h"

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
            if (zmq_errno() == ETERM) {   /* the context is ending: it spun here for good */
                break;
            }
            continue;   /* a signal */
        }
        if (zmq_msg_size(&head) != sizeof(push_msg)) {   /* the stop message */
            zmq_msg_close(&head);
            zmq_msg_close(&body);
            break;
        }
        int got;   /* the body came with the head: only a signal can hold it up */
        while ((got = zmq_msg_recv(&body, pull, 0)) < 0 && zmq_errno() == EINTR) {
        }
        if (got < 0) {   /* inproc, from this shard's own loop: it cannot fail but so */
            fprintf(stderr, "ps %d: an apply thread lost a push's values: %s\n", a->s->shard,
                    zmq_strerror(zmq_errno()));
            abort();
        }
        TAKEN_OVER(a);
        push_msg m;
        memcpy(&m, zmq_msg_data(&head), sizeof m);
        m.values = zmq_msg_data(&body);
        server_push(a->s, &m);
        zmq_msg_close(&head);
        /* released before the push counts as done: a shared-memory push's
         * release writes to its segment, which apply_drain's caller may
         * unmap or give to a restarted worker at once */
        zmq_msg_close(&body);
        atomic_fetch_sub(&a->in_flight, 1);
    }
    zmq_close(pull);
    return NULL;
}

int apply_start(appliers *a, server *s, void *ctx, error *err)
{
    a->ctx = ctx;
    a->s = s;
    snprintf(a->endpoint, sizeof a->endpoint, "inproc://apply-%d", s->shard);
    a->push = zmq_socket(ctx, ZMQ_PUSH);
    a->threads = calloc((size_t)s->threads, sizeof *a->threads);
    bool ready = a->push && a->threads && zmq_bind(a->push, a->endpoint) == 0;
    for (a->count = 0; ready && a->count < s->threads; a->count++) {
        if (pthread_create(&a->threads[a->count], NULL, s_apply_thread, a) != 0) {
            ready = false;
            break;
        }
    }
    if (!ready) {
        apply_stop(a);   /* those that did start */
        return error_set(err, ERROR_RUNTIME, "ps %d: cannot start apply threads", s->shard);
    }
    return 0;
}

int apply_hand(appliers *a, const push_msg *m, zmq_msg_t *body)
{
    atomic_fetch_add(&a->in_flight, 1);
    HANDED_OVER(a);
    if (zmq_send(a->push, m, sizeof *m, ZMQ_SNDMORE) < 0 ||
        zmq_msg_send(body, a->push, 0) < 0) {   /* hands the payload over, no copy */
        atomic_fetch_sub(&a->in_flight, 1);
        return -1;
    }
    return 0;
}

void apply_drain(appliers *a)
{
    while (a->threads && atomic_load(&a->in_flight) > 0) {
        sched_yield();
    }
}

void apply_stop(appliers *a)
{
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
