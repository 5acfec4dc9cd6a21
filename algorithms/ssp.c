/* ssp.c: Stale Synchronous Parallel.
 *
 *   worker, clock c:  pull once every worker's clock is >= c - s;
 *                     g = grad L(theta); push g with tag c
 *   server:           theta~ <- opt(theta~, g) at once; the pusher's
 *                     clock becomes c + 1
 *
 * A worker at clock c waits for the slowest to reach c - s, so no two
 * clocks ever differ by more than s + 1. Reference: Ho et al., "More
 * effective distributed ML via a stale synchronous parallel parameter
 * server" (NIPS 2013).
 *
 * With [algorithm] prefetch = on the pull for clock c + 1 goes out before
 * the gradient of clock c: communication overlaps compute, and where the
 * bound lets that pull be answered at once (staleness >= 1) it misses the
 * worker's own push of clock c, one more of staleness, so a worker no
 * longer reads its own last write; the bound between workers' clocks is
 * kept as it is (the shard judges the early pull as any other).
 *
 * A worker that has finished is left out of the bound: a shard restored
 * from a checkpoint holds the clock it had then, lower than the one it
 * finished at, and it will never push again. */
#include <stdlib.h>

#include "algorithms/algorithm.h"
#include "algorithms/rulekit.h"
#include "algorithms/server.h"
#include "algorithms/worker.h"

typedef struct ssp_params {
    long staleness;
} ssp_params;

static void *s_configure(config *c, const rule_context *ctx, rule_info *info, error *err)
{
    (void)info;
    ssp_params *p = rule_params(sizeof *p, "ssp", err);
    if (p && (rule_plain_sgd(c, ctx, "ssp", NULL, err) < 0 ||
              config_get_int(c, "algorithm", "staleness", 3, 0, 1 << 20, &p->staleness,
                             err) < 0)) {
        free(p);
        return NULL;
    }
    return p;
}

/* A worker that comes back (restarted, resumed, back from a trace's
 * absence) goes on at the clock its counted pushes reached (it began at
 * 0 again: its pulls were always ready, it ran past the bound, and once
 * done the others waited for clocks it never pushed). */
static int s_worker_run(worker *w)
{
    for (uint64_t clock = (uint64_t)w->steps; !worker_done(w); clock++) {
        if (worker_pull(w, clock) < 0 ||
            (w->steps + 1 < w->budget && worker_prefetch(w, clock + 1) < 0)) {
            return -1;
        }
        worker_gradient(w);
        if (worker_push(w, w->grad, clock) < 0) {
            return -1;
        }
    }
    return 0;
}

/* The server state: every worker's clock (pushes received). */
static void *s_server_init(server *s)
{
    return calloc((size_t)s->workers, sizeof(uint64_t));
}

/* The clocks are flat: a checkpoint keeps them. */
static size_t s_state_bytes(const server *s)
{
    return (size_t)s->workers * sizeof(uint64_t);
}

static void s_on_push(server *s, const push_msg *m)
{
    uint64_t *clocks = s->state;
    server_record_applied(s, m);
    server_step(s, m->values);
    if (m->tag + 1 > clocks[m->worker]) {
        clocks[m->worker] = m->tag + 1;
    }
}

static bool s_pull_ready(server *s, const pull_msg *m)
{
    const ssp_params *p = s->params;
    const uint64_t *clocks = s->state;
    if (m->worker >= (uint32_t)s->workers || m->min_version <= (uint64_t)p->staleness) {
        return true;   /* the evaluator, or a clock within s of the start */
    }
    for (int k = 0; k < s->workers; k++) {   /* a finished worker holds no one back */
        if (!s->done[k] && clocks[k] + (uint64_t)p->staleness < m->min_version) {
            return false;
        }
    }
    return true;
}

const algorithm algorithm_ssp = {
    .version = ALGORITHM_VERSION,
    .name = "ssp",
    .summary = "stale synchronous parallel: asynchronous, but no worker more than s clocks ahead",
    .keys = "staleness (3)",
    .configure = s_configure,
    .worker_run = s_worker_run,
    .prefetch = true,
    .server_init = s_server_init,
    .server_state_bytes = s_state_bytes,
    .server_on_push = s_on_push,
    .server_pull_ready = s_pull_ready,
};
