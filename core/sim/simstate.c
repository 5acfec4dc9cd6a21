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
    const sim_spec *spec = &s->e->sim;
    double took = sim_message_time(spec, worker, bytes, &s->net_rng);
    double t = s->now + took;
    if (spec->shard_bandwidth > 0) {
        /* through the shard's own link too, whose bytes go one message
         * after another: as a fluid, each message as soon as the ones before
         * it have gone through, and no sooner than its own link allows */
        double latency = took - bytes / sim_link_bandwidth(spec, worker);
        double *busy = &s->shard_link[(size_t)shard * 2 + (size_t)to_shard];
        *busy = fmax(*busy, s->now) + bytes / spec->shard_bandwidth;
        t = fmax(t, *busy + latency);
    }
    if (t < *last) {
        t = *last;
    }
    *last = t;
    return t;
}

bool sim_worker_alive(const sim *s, int worker, int incarnation)
{
    const sim_worker *sw = &s->workers[worker];
    return sw->incarnation == incarnation && sw->running && !sw->failed;
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

sim_event sim_queue_pop(sim_event *buf, size_t *count, size_t *head)
{
    sim_event e = buf[(*head)++];
    if (--*count == 0) {
        *head = 0;
    }
    return e;
}
