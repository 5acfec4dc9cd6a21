/* simqueue.c: a binary min-heap of (time, insertion) keys over slots of
 * events (simqueue.h). */
#include "core/sim/simqueue.h"

#include <stdlib.h>

static int s_before(const simq_key *a, const simq_key *b)
{
    return a->t < b->t || (a->t == b->t && a->order < b->order);
}

/* A free slot, growing the slots when none is; -1 when none can be had. */
static long s_slot(simq *q)
{
    if (q->nfree > 0) {
        return q->free_slots[--q->nfree];
    }
    if (q->nslots == q->slots_cap) {
        size_t cap = q->slots_cap ? 2 * q->slots_cap : 1024;
        if (cap > (size_t)1 << SIMQ_SLOT_BITS) {
            cap = (size_t)1 << SIMQ_SLOT_BITS;
        }
        if (cap == q->slots_cap) {
            return -1;
        }
        sim_event *slots = realloc(q->slots, cap * sizeof *slots);
        if (slots) {
            q->slots = slots;
        }
        uint32_t *free_slots = slots ? realloc(q->free_slots, cap * sizeof *free_slots) : NULL;
        if (!free_slots) {
            return -1;
        }
        q->free_slots = free_slots;
        q->slots_cap = cap;
    }
    return (long)q->nslots++;
}

int simq_push(simq *q, sim_event e)
{
    if (q->count == q->cap) {
        size_t cap = q->cap ? 2 * q->cap : 1024;
        simq_key *h = realloc(q->heap, cap * sizeof *h);
        if (!h) {
            return -1;
        }
        q->heap = h;
        q->cap = cap;
    }
    long slot = q->next_seq >> (64 - SIMQ_SLOT_BITS) ? -1 : s_slot(q);   /* order would wrap */
    if (slot < 0) {
        return -1;
    }
    e.seq = q->next_seq++;
    q->slots[slot] = e;
    simq_key key = {.t = e.t, .order = e.seq << SIMQ_SLOT_BITS | (uint64_t)slot};
    size_t i = q->count++;
    while (i > 0 && s_before(&key, &q->heap[(i - 1) / 2])) {
        q->heap[i] = q->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    q->heap[i] = key;
    return 0;
}

int simq_pop(simq *q, sim_event *out)
{
    if (q->count == 0) {
        return 0;
    }
    uint32_t slot = (uint32_t)(q->heap[0].order & (((uint64_t)1 << SIMQ_SLOT_BITS) - 1));
    *out = q->slots[slot];
    q->free_slots[q->nfree++] = slot;
    simq_key last = q->heap[--q->count];
    size_t i = 0;
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= q->count) {
            break;
        }
        if (child + 1 < q->count && s_before(&q->heap[child + 1], &q->heap[child])) {
            child++;
        }
        if (!s_before(&q->heap[child], &last)) {
            break;
        }
        q->heap[i] = q->heap[child];
        i = child;
    }
    if (q->count > 0) {
        q->heap[i] = last;
    }
    return 1;
}

void simq_free(simq *q)
{
    free(q->heap);
    free(q->slots);
    free(q->free_slots);
    *q = (simq){0};
}
