/* simstate.c: the simulator's events and links, which its workers and its
 * shards both use. */
#include "core/sim/simstate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/simtime.h"

int sim_schedule(sim *s, sim_event e)
{
    s->queued_work += !sim_periodic(&e);
    if (simq_push(&s->q, e) < 0) {
        s->failed = true;
        error_set(s->err, ERROR_RUNTIME, "sim: no room for another event (out of memory, "
                  "2^24 waiting at once, or 2^40 in the run)");
        return -1;
    }
    return 0;
}

double sim_arrival(sim *s, int worker, int shard, int to_shard, double bytes)
{
    double *last = &s->link_free[((size_t)worker * (size_t)s->nshards + (size_t)shard) * 2 +
                                 (size_t)to_shard];
    double t = s->now + sim_message_time(&s->e->sim, worker, bytes, &s->net_rng);
    if (t < *last) {
        t = *last;
    }
    *last = t;
    return t;
}

/* Whether messages pass through I/O threads that take turns on the
 * shared cores. */
static bool s_io(const sim *s)
{
    return s->e->sim.cores > 0 && s->e->sim.message_cpu > 0;
}

double sim_message_work(const sim *s)
{
    return s_io(s) ? s->e->sim.message_cpu / 2 : s->e->sim.message_cpu;
}

int sim_send(sim *s, sim_event e, double bytes)
{
    e.bytes = (uint64_t)bytes;
    if (!s_io(s)) {
        bool to_shard = e.kind == EV_ARRIVE_PULL || e.kind == EV_ARRIVE_PUSH;
        e.t = sim_arrival(s, e.worker, e.shard, to_shard, bytes);
        return sim_schedule(s, e);
    }
    e.msg_kind = e.kind;
    e.io = SIM_IO_LEAVING;
    return sim_cpu_io(s, e, s->e->sim.message_cpu / 2);
}

void sim_io_done(sim *s, const sim_event *e)
{
    sim_event m = *e;
    if (m.io == SIM_IO_LEAVING) {   /* on the wire, to the receiver's I/O thread */
        bool to_shard = m.msg_kind == EV_ARRIVE_PULL || m.msg_kind == EV_ARRIVE_PUSH;
        m.t = sim_arrival(s, m.worker, m.shard, to_shard, (double)m.bytes);
        m.kind = EV_IO_ARRIVE;
        m.io = SIM_IO_ARRIVING;
        sim_schedule(s, m);
        return;
    }
    m.kind = m.msg_kind;
    m.io = 0;
    sim_deliver(s, &m);
}

double sim_restart_delay(const sim *s)
{
    return fmin(0.1 * pow(2, s->restarts), 5.0);
}

int sim_queue_add(sim_event **buf, size_t *count, size_t *cap, size_t *head, sim_event e)
{
    if (*head + *count == *cap && *head > 0) {   /* slide to the front before growing */
        memmove(*buf, *buf + *head, *count * sizeof **buf);
        *head = 0;
    }
    if (*head + *count == *cap) {
        size_t ncap = *cap ? 2 * *cap : 64;
        sim_event *b = realloc(*buf, ncap * sizeof *b);
        if (!b) {
            return -1;
        }
        *buf = b;
        *cap = ncap;
    }
    (*buf)[*head + (*count)++] = e;
    return 0;
}
