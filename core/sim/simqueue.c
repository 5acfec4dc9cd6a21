/* simqueue.c: a binary min-heap of events keyed by (time, sequence). */
#include "core/sim/simqueue.h"

#include <stdlib.h>

static int s_before(const sim_event *a, const sim_event *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

int simq_push(simq *q, sim_event e)
{
    if (q->count == q->cap) {
        size_t cap = q->cap ? 2 * q->cap : 1024;
        sim_event *h = realloc(q->heap, cap * sizeof *h);
        if (!h) {
            return -1;
        }
        q->heap = h;
        q->cap = cap;
    }
    e.seq = q->next_seq++;
    size_t i = q->count++;
    while (i > 0 && s_before(&e, &q->heap[(i - 1) / 2])) {
        q->heap[i] = q->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    q->heap[i] = e;
    return 0;
}

int simq_pop(simq *q, sim_event *out)
{
    if (q->count == 0) {
        return 0;
    }
    *out = q->heap[0];
    sim_event last = q->heap[--q->count];
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
    q->heap = NULL;
    q->count = q->cap = 0;
}
