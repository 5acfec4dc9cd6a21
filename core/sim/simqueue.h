/* simqueue.h: the simulator's event queue, ordered by time and, for equal
 * times, by insertion: ties break the same way every run.
 *
 * The events wait in slots (reused as they leave); the binary heap orders
 * 16-byte keys (the time, and the insertion number with the slot), so a
 * push or pop moves keys rather than whole events: the queue was a fifth
 * of the simulator's time with 1,024 workers when the heap held events. */
#ifndef ASGD_SIMQUEUE_H
#define ASGD_SIMQUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sim_event {
    double t;
    uint64_t seq;              /* insertion order, set by simq_push */
    int kind;
    int worker, shard;
    int incarnation;           /* of the worker, to drop a dead one's events */
    uint64_t tag, version;     /* message fields */
    uint32_t samples;
    uint64_t total;            /* a push: its worker's examples so far, this push's
                                  included (0: not counted, a lockstep rule's) */
    int verdict;               /* a push: the round leader's (enum push_verdict);
                                  EV_ARRIVE_VERDICT: the verdict itself */
    bool ask;                  /* a push to the round's leader: answer its verdict */
    const float *values;       /* a push's payload (the worker's buffer) */
    uint64_t bytes;            /* a push: its size on the wire, header and payload */
    double back;               /* a failure: when the worker or shard returns (< 0: the
                                  restart policy decides) */
    uint32_t generation;       /* a request: the shard's generation its sender last
                                  heard (0: none yet); a reply: the shard's */
    int io;                    /* a message in an I/O thread's hands (simcpu.c): 1
                                  leaving, 2 arriving; its own kind in msg_kind */
    int msg_kind;
    int core;                  /* EV_CPU: the core of the turn; EV_BALANCE: the core
                                  whose line it balances (simcpu.c) */
} sim_event;

/* A heap entry: order is the insertion number << SIMQ_SLOT_BITS | the slot. */
typedef struct simq_key {
    double t;
    uint64_t order;
} simq_key;

#define SIMQ_SLOT_BITS 24   /* events waiting at once: at most 2^24; in a run: 2^40 */

typedef struct simq {
    simq_key *heap;
    size_t count, cap;
    sim_event *slots;
    uint32_t *free_slots;     /* slots whose events have left */
    size_t nslots, nfree, slots_cap;
    uint64_t next_seq;
} simq;

/* -1 when out of memory, with 2^24 events already waiting, or after 2^40
 * in all (the insertion number would no longer fit the key). */
int simq_push(simq *q, sim_event e);
/* The earliest event; 0 when the queue is empty. */
int simq_pop(simq *q, sim_event *out);
void simq_free(simq *q);

#endif
