/* simshard.c: the simulator's shards: messages processed in arrival order
 * through the same server code as a real shard, and failures in virtual
 * time through the same checkpoints (core/checkpoint.h).
 *
 * A shard that fails loses what it applied since its last checkpoint, and
 * the plain pushes queued in it, which a real shard's process takes with
 * it (their senders do not wait for an answer). The requests queued or
 * waiting in it, and every message that reaches it while it is down, are
 * sent again every [cluster] resend seconds until it is back, as real
 * workers resend unanswered requests (and ZeroMQ delivers what was sent
 * meanwhile once it reconnects). It comes
 * back from its checkpoint as a new generation: a push computed before the
 * failure on what it no longer holds is dropped as late, a pull from a
 * worker that has not heard of the restart is answered at once, as
 * core/real/ps.c does. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/checkpoint.h"
#include "core/model.h"
#include "core/sim/simstate.h"
#include "transport/wire.h"

/* A shard and the simulator, as a reply's context. */
typedef struct sim_replier {
    sim *s;
    int shard;
} sim_replier;

/* Sends e (a reply or a verdict, of `bytes`, `values` of them copied) from
 * shard k: at once, or, while the shard works on a message, once the work
 * up to it is done, which grows by its sending and copy: the replies that
 * one push makes ready leave one by one, as a real shard copies and sends
 * each in turn (its t: the work on them up to and including it). */
static void s_send(sim *s, int k, sim_event e, double bytes, double values)
{
    sim_shard *sh = &s->shards[k];
    e.bytes = (uint64_t)bytes;
    sh->srv->stats.bytes_out += e.bytes;
    if (!sh->collecting) {
        sim_send(s, e, bytes);
        return;
    }
    sh->outbox_work += sim_message_work(s) + sim_copy_time(&s->e->sim, values) +
                       (e.kind == EV_ARRIVE_REPLY ? s->e->sim.answer : 0);
    e.t = sh->outbox_work;
    if (sim_queue_add(&sh->outbox, &sh->nout, &sh->capout, &sh->headout, e) < 0) {
        s->failed = true;
        error_set(s->err, ERROR_RUNTIME, "sim: out of memory");
    }
}

/* What shard k made leaves now: the replies its work has reached (t up
 * to `done`), or all of them (done < 0). */
static void s_flush(sim *s, int k, double done)
{
    sim_shard *sh = &s->shards[k];
    while (sh->nout > 0 && (done < 0 || sh->outbox[sh->headout].t <= done)) {
        sim_event e = sim_queue_pop(sh->outbox, &sh->nout, &sh->headout);
        sim_send(s, e, (double)e.bytes);
    }
    if (sh->nout == 0) {
        sh->outbox_work = 0;
    }
}

/* server_reply_fn: the shard's parameters to the worker now (as they are
 * at this moment), arriving after the link's delay (s_send); handle holds
 * the pull's worker incarnation and request number (sim_pull_handle). A
 * pull from a worker that has since failed, or asked again since, gets
 * nothing. */
static void s_reply(void *ctx, const pull_msg *m, void *handle)
{
    sim_replier *rp = ctx;
    sim *s = rp->s;
    int k = rp->shard, worker = (int)m->worker, incarnation = sim_handle_incarnation(handle);
    uint32_t request = sim_handle_request(handle);
    if (!sim_worker_alive(s, worker, incarnation) ||
        request != s->asked[(size_t)worker * s->nshards + k]) {
        return;   /* asked again since: its sender would drop the answer */
    }
    sim_worker *sw = &s->workers[worker];
    server *srv = s->shards[k].srv;
    memcpy(sw->pull_dst + srv->lo, server_answer(srv, m), srv->n * sizeof(float));
    sw->pull_versions[k] = srv->version;
    if (k == 0) {
        *sw->pull_staleness = srv->last_staleness[worker];
    }
    double values = (double)srv->n * sizeof(float);
    s_send(s, k, (sim_event){.kind = EV_ARRIVE_REPLY, .worker = worker, .shard = k,
                             .incarnation = incarnation, .tag = request,
                             .version = srv->version, .generation = s->shards[k].generation},
           WIRE_HEADER_SIZE + values, values);
}

/* The first training step, the first worker pull any shard sees: time
 * starts, and the evaluations follow it every eval.every. */
static void s_first_step(sim *s)
{
    if (s->started) {
        return;
    }
    s->started = true;
    s->first_step = s->now;
    if (s->e->eval_every > 0) {
        sim_schedule(s, (sim_event){.t = s->now + s->e->eval_every, .kind = EV_EVAL});
    }
}

/* Whether m was sent by a worker that last heard from an earlier
 * generation of its shard (0: a worker that has heard nothing yet). */
static bool s_from_before(const sim_shard *sh, const sim_event *m)
{
    return m->generation != 0 && m->generation != sh->generation;
}

static void s_pull(sim *s, int k, const sim_event *m)
{
    sim_shard *sh = &s->shards[k];
    sim_replier rp = {.s = s, .shard = k};
    void *handle = sim_pull_handle(m->incarnation, (uint32_t)m->tag);
    s_first_step(s);   /* as in real mode: a shard's first worker pull */
    pull_msg pm = {.worker = (uint32_t)m->worker, .min_version = m->version};
    server_waiting *queued;
    if (s_from_before(sh, m) || server_pull_ready(sh->srv, &pm)) {
        s_reply(&rp, &pm, handle);
    } else if ((queued = server_find_waiting(sh->srv, pm.worker))) {
        queued->pull = pm;   /* one waits per sender, the latest (core/real/ps.c) */
        queued->handle = handle;
    } else if (server_wait(sh->srv, &pm, handle) < 0) {
        s->failed = true;
        error_set(s->err, ERROR_RUNTIME, "sim: out of memory");
    }
    if (!sh->began_saved && sh->srv->stats.first_pull_at > 0 && s->e->checkpoint_every > 0 &&
        !server_workers_done(sh->srv)) {
        sim_checkpoint_shard(s, k);   /* training began: a restart knows when (core/real/ps.c) */
        sh->began_saved = true;
    }
}

static void s_push(sim *s, int k, const sim_event *m)
{
    sim_shard *sh = &s->shards[k];
    int verdict = PUSH_LATE;
    if (!sim_worker_alive(s, m->worker, m->incarnation)) {
        return;   /* its process is gone, and with it the push in flight (and its buffers) */
    }
    sh->srv->stats.push_bytes += m->bytes;
    sh->srv->stats.push_messages++;
    if (m->samples != 0 && m->total != 0 &&
        m->total <= atomic_load(&sh->srv->worker_samples[m->worker])) {
        sh->srv->stats.duplicates++;   /* a step this shard has (core/real/ps.c) */
    } else if (s_from_before(sh, m)) {   /* computed on what this shard no longer holds */
        sh->srv->stats.dropped++;
    } else {
        push_msg pm = {.worker = (uint32_t)m->worker, .tag = m->tag, .base_version = m->version,
                       .samples = m->samples, .verdict = m->verdict, .values = m->values};
        verdict = server_push(sh->srv, &pm);
    }
    if (m->ask) {   /* the round's leader answers with its verdict */
        s_send(s, k, (sim_event){.kind = EV_ARRIVE_VERDICT, .worker = m->worker, .shard = k,
                                 .incarnation = m->incarnation, .verdict = verdict,
                                 .generation = sh->generation},
               WIRE_HEADER_SIZE, 0);
    }
    sim_worker *sw = &s->workers[m->worker];
    if (--sw->pending_pushes == 0 && sw->waiting == WAIT_SETTLE) {
        sim_worker_wake(sw);
    }
    sim_replier rp = {.s = s, .shard = k};
    server_wake(sh->srv, s_reply, &rp);
}

void sim_shard_wake(sim *s, int k)
{
    if (!s->shards[k].down) {
        sim_replier rp = {.s = s, .shard = k};
        server_wake(s->shards[k].srv, s_reply, &rp);
    }
}

/* Whether a shard's handling of a message takes time ([sim] message_cpu,
 * copy_bandwidth, apply): then it works on one message at a time, and its
 * replies leave once that work is done. */
static bool s_shard_works(const sim *s)
{
    const sim_spec *spec = &s->e->sim;
    return spec->message_cpu > 0 || spec->copy_bandwidth > 0 || spec->apply > 0 ||
           spec->answer > 0 || (s->e->compress.kind != COMPRESS_NONE && spec->decode_cpu > 0);
}

/* Shard k takes its queued messages in arrival order, one at a time: it
 * receives each (message_cpu), applies a push ([sim] apply) or answers a
 * pull that is ready, and the replies this makes (a pull's, those of
 * pulls a push made ready, a verdict) leave in turn, each when the work
 * up to it, its sending and copy included, is done: a job on the cores
 * for the message and the first, then one for each next. Between two of
 * these jobs its core may go to a job waiting for one (and, idle, takes
 * [sim] wakeup to start the next), where a real shard's thread would go
 * on sending: a difference of when, never of what. */
void sim_shard_process(sim *s, int k)
{
    sim_shard *sh = &s->shards[k];
    bool works = s_shard_works(s);
    while (sh->count > 0 && !sh->busy && !sh->down) {
        sim_event m = sim_queue_pop(sh->queue, &sh->count, &sh->head);
        if (!sim_worker_alive(s, m.worker, m.incarnation)) {
            continue;   /* from a worker that has since failed */
        }
        sh->collecting = works;
        double work = sim_message_work(s);
        if (m.kind == EV_ARRIVE_PULL) {
            s_pull(s, k, &m);
        } else {
            s_push(s, k, &m);
            work += s->e->sim.apply +
                    (s->e->compress.kind != COMPRESS_NONE ? s->e->sim.decode_cpu : 0);
        }
        sh->collecting = false;
        if (!works || work + sh->outbox_work <= 0) {
            s_flush(s, k, -1);
            continue;
        }
        sh->busy = true;
        sh->outbox_done = sh->nout > 0 ? sh->outbox[sh->headout].t : 0;
        sim_cpu_run(s, sim_who_shard(k), work + sh->outbox_done);
    }
}

void sim_shard_cpu_done(sim *s, int k)
{
    sim_shard *sh = &s->shards[k];
    s_flush(s, k, sh->outbox_done);
    if (sh->nout > 0) {   /* the next reply's work */
        double next = sh->outbox[sh->headout].t;
        sim_cpu_run(s, sim_who_shard(k), next - sh->outbox_done);
        sh->outbox_done = next;
        return;
    }
    sh->busy = false;
    sim_shard_process(s, k);
}

/* m, which reached a shard that is down, arrives again with the first
 * resend after the shard is back. */
static void s_send_again(sim *s, sim_event m)
{
    const sim_shard *sh = &s->shards[m.shard];
    double every = s->e->resend;
    double waited = sh->back - s->now;
    m.t = s->now + (waited > 0 ? ceil(waited / every) * every : every);
    sim_schedule(s, m);
}

void sim_shard_arrive(sim *s, const sim_event *e)
{
    sim_shard *sh = &s->shards[e->shard];
    if (sh->down) {
        s_send_again(s, *e);
        return;
    }
    sh->srv->stats.bytes_in += e->bytes;
    if (sim_queue_add(&sh->queue, &sh->count, &sh->cap, &sh->head, *e) < 0) {
        s->failed = true;
        error_set(s->err, ERROR_RUNTIME, "sim: out of memory");
        return;
    }
    if (!sh->busy) {
        sim_shard_process(s, e->shard);
    }
}

/* Shard k's checkpoint file in the run folder. */
static void s_path(const sim *s, int k, char *buf, size_t n)
{
    checkpoint_path(buf, n, s->r->dir, k);
}

void sim_checkpoint_shard(sim *s, int k)
{
    sim_shard *sh = &s->shards[k];
    char path[4200];
    error err;
    s_path(s, k, path, sizeof path);
    if (checkpoint_save(path, sh->srv, sh->clients, sh->generation, NULL, &err) < 0) {
        s->failed = true;
        error_set(s->err, ERROR_RUNTIME, "sim: %s", err.msg);
        return;
    }
    sh->srv->stats.checkpoints++;   /* it takes no virtual time */
}

void sim_checkpoint_all(sim *s)
{
    for (int k = 0; k < s->nshards && !s->failed; k++) {
        if (!s->shards[k].down) {
            sim_checkpoint_shard(s, k);
        }
    }
}

void sim_shard_fail(sim *s, int k, double back)
{
    sim_shard *sh = &s->shards[k];
    const experiment *e = s->e;
    if (sh->down) {
        return;
    }
    if (back < 0) {   /* the launcher's decision, in virtual time */
        const char *why = e->restart == RESTART_NEVER ? "[cluster] restart = never"
                          : s->restarts >= e->backoff_limit ? "no restart left under [cluster] "
                                                              "backoff_limit"
                          : e->checkpoint_every <= 0 ? "no checkpoints to restart from: set "
                                                       "[checkpoint] every"
                                                     : NULL;
        if (why) {
            s->failed = true;
            error_set(s->err, ERROR_RUNTIME, "shard %d failed at %.3f s (simulated) (%s); the "
                      "run failed", k, s->now, why);
            return;
        }
        back = s->now + sim_restart_delay(s);
    }
    s->restarts++;
    sh->down = true;
    sh->back = back;
    sh->version_at_fail = sh->srv->version;
    run_log(s->r, "sim: shard %d failed at %.6f s at version %llu; back at %.6f s", k, s->now,
            (unsigned long long)sh->version_at_fail, back);
    for (size_t i = 0; i < sh->count; i++) {   /* requests go again; plain pushes are lost */
        const sim_event *m = &sh->queue[sh->head + i];
        if (m->kind == EV_ARRIVE_PULL || m->ask) {
            s_send_again(s, *m);
            continue;
        }
        if (!sim_worker_alive(s, m->worker, m->incarnation)) {
            continue;   /* an earlier life's: not the live worker's to wait for */
        }
        sh->lost++;
        sim_worker *sw = &s->workers[m->worker];
        if (--sw->pending_pushes == 0 && sw->waiting == WAIT_SETTLE) {
            sim_worker_wake(sw);
        }
    }
    s_flush(s, k, -1);   /* what its last work made leaves (its sending is not redone) */
    sh->job.seq++;   /* the work it was doing ends with it */
    sh->head = sh->count = 0;
    sh->busy = false;
    server *srv = sh->srv;
    for (int i = 0; i < srv->nwaiting; i++) {   /* and so are the pulls that waited */
        const server_waiting *w = &srv->waiting[i];
        int worker = (int)w->pull.worker;
        s_send_again(s, (sim_event){.kind = EV_ARRIVE_PULL, .worker = worker, .shard = k,
                                    .incarnation = sim_handle_incarnation(w->handle),
                                    .tag = sim_handle_request(w->handle),
                                    .version = w->pull.min_version,
                                    .generation = s->heard[(size_t)worker * s->nshards + k]});
    }
    server_drop_waiting(srv, NULL, NULL);
    sim_schedule(s, (sim_event){.t = back, .kind = EV_SHARD_BACK, .shard = k});
}

/* A fresh shard k, as a restarted process makes it. */
static server *s_fresh(sim *s, int k)
{
    experiment *e = s->e;
    float *init = malloc(s->m->nparams * sizeof *init);
    server *srv = NULL;
    if (init) {
        model_init_host(s->m, init, e->seed);
        srv = server_new(e->alg, e->rule, &e->rule_info, k, s->nshards, s->nworkers, init,
                         s->m->nparams);
    }
    free(init);
    if (srv) {
        srv->clock = s->shards[k].srv->clock;
        srv->clock_ctx = s->shards[k].srv->clock_ctx;
    }
    return srv;
}

void sim_shard_back(sim *s, int k)
{
    sim_shard *sh = &s->shards[k];
    char path[4200];
    error err;
    server *srv = s_fresh(s, k);
    if (!srv) {
        s->failed = true;
        error_set(s->err, ERROR_RUNTIME, "sim: out of memory");
        return;
    }
    s_path(s, k, path, sizeof path);
    uint32_t loaded;   /* without a checkpoint: the initial parameters */
    bool saved = access(path, F_OK) == 0;
    if (saved && checkpoint_load(path, srv, sh->clients, &loaded, NULL, &err) < 0) {
        server_destroy(&srv);
        s->failed = true;
        error_set(s->err, ERROR_RUNTIME, "sim: shard %d cannot come back: %s", k, err.msg);
        return;
    }
    server_round_forget(srv);   /* a half-done round is retaken whole (core/real/ps.c) */
    if (saved) {   /* counted now that it has been read, as real mode's shard does: its
                    * counters were saved before it was */
        srv->stats.checkpoints++;
    }
    if (srv->stats.first_pull_at == 0) {   /* a checkpoint from before the first pull, or none:
                                            * training began in the life that failed, not at
                                            * this life's first pull (train_time_s) */
        srv->stats.first_pull_at = sh->srv->stats.first_pull_at;
    }
    sh->generation++;   /* a new life, whichever checkpoint it came back from */
    uint64_t lost = sh->version_at_fail > srv->version ? sh->version_at_fail - srv->version : 0;
    sh->lost += lost;
    srv->stats.lost_updates = sh->lost;
    srv->stats.restarts = (uint64_t)++sh->restarts;
    for (int w = 0; w < s->nworkers; w++) {   /* a finished worker's DONE goes again */
        if (s->workers[w].done) {
            server_mark_done(srv, (uint32_t)w);
        }
    }
    run_log(s->r, "sim: shard %d back at %.6f s from version %llu (generation %u; %llu updates "
            "lost)", k, s->now, (unsigned long long)srv->version, sh->generation,
            (unsigned long long)lost);
    server_destroy(&sh->srv);
    sh->srv = srv;
    sh->down = false;
    sh->began_saved = srv->stats.first_pull_at > 0;
    if (s->e->checkpoint_every > 0) {   /* one at its start, as a real shard's */
        sim_checkpoint_shard(s, k);
    }
    for (int w = 0; w < s->nworkers; w++) {   /* those waiting to take up */
        if (s->workers[w].waiting == WAIT_SHARD_BACK) {
            sim_worker_wake(&s->workers[w]);
        }
    }
}
