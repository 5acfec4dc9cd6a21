/* roles.c: the worker and evaluator processes. */
#include "core/real/roles.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/export.h"
#include "core/real/engines.h"
#include "core/real/peers.h"
#include "core/real/record.h"
#include "core/real/ps.h"
#include "core/run.h"
#include "core/stop.h"
#include "algorithms/worker.h"
#include "transport/net.h"
#include "transport/wire.h"

/* The keys of role self when [cluster] auth = curve (1), none (0), or -1;
 * without them, a warning for each shard another host could reach. */
static int s_auth(const cluster_spec *cs, const experiment *e, const char *self, net_auth *a,
                  error *err)
{
    int curve = cluster_auth(cs, e->auth == AUTH_CURVE, e->keys, self, a, err);
    for (int k = 0; curve == 0 && k < cs->servers; k++) {
        char endpoint[CLUSTER_ADDRESS_MAX + 16];
        net_endpoint(endpoint, sizeof endpoint, cs->ps[k], false);
        cluster_warn_open(self, endpoint);
    }
    return curve;
}

/* The ZeroMQ worker link: the primitives over peers. */
static error s_link_err;

static int s_link_pull(worker *w, float *dst, uint64_t min_version)
{
    peers *p = w->link_state;
    int rc = peers_pull(p, dst, min_version, w->versions, NULL, &w->staleness, NULL,
                        &s_link_err);
    w->bytes = p->bytes;
    return rc;
}

static int s_link_push(worker *w, const float *values, uint64_t tag, uint32_t samples)
{
    peers *p = w->link_state;
    if (ferror(w->steps_csv)) {   /* a step's row was lost: stop here, not at the end */
        return error_set(&s_link_err, ERROR_RUNTIME, "steps-%d.csv: a row could not be "
                         "written (is the disk full?)", w->id);
    }
    int rc = peers_push(p, values, tag, w->versions, samples, w->round_leader, &s_link_err);
    w->bytes = p->bytes;
    return rc;
}

static int s_link_prefetch(worker *w, uint64_t min_version)
{
    peers *p = w->link_state;
    int rc = peers_prefetch(p, min_version, &s_link_err);
    w->bytes = p->bytes;
    return rc;
}

static int s_link_push_part(worker *w, int k, const float *values, uint64_t tag,
                            uint32_t samples)
{
    peers *p = w->link_state;
    int rc = peers_push_part(p, k, values, tag, w->versions, samples, &s_link_err);
    w->bytes = p->bytes;
    return rc;
}

/* A push a shard stopped taking in drops the connections (peers_settle):
 * the buffer is free either way, and the next exchange fails. */
static void s_link_settle(worker *w)
{
    peers_settle(w->link_state, &s_link_err);
}

static const worker_link s_zmq_link = {
    .pull = s_link_pull,
    .push = s_link_push,
    .prefetch = s_link_prefetch,
    .push_part = s_link_push_part,
    .settle = s_link_settle,
};

/* With compression: a push's parts are compressed together, and go so. */
static const worker_link s_zmq_link_whole = {
    .pull = s_link_pull,
    .push = s_link_push,
    .prefetch = s_link_prefetch,
    .settle = s_link_settle,
};

/* How much of its share the worker has done already (a restarted worker,
 * or a resumed run): the examples its pushes carried, as the shard that
 * counted fewest counts them, in whole minibatches; its pushes are
 * numbered on from there, so a shard that has the steps redone drops
 * them. */
static int s_take_up(worker *w, peers *p, error *err)
{
    if (peers_pull(p, w->theta, 0, w->versions, NULL, NULL, NULL, err) < 0) {
        return -1;
    }
    long done = (long)(peers_counted(p) / (uint64_t)w->batch);
    peers_take_up(p, (uint64_t)done * (uint64_t)w->batch);
    if (done > 0) {
        worker_take_up(w, done);
        fprintf(stderr, "worker %d: %ld of its %ld minibatches done already; going on\n",
                w->id, w->steps, w->budget);
    }
    return 0;
}

int worker_main(const cluster_spec *cs, experiment *e, const char *run_dir, error *err)
{
    if (experiment_load(e, err) < 0) {
        return -1;
    }
    e->backend.ordinal = cs->task;   /* worker k on GPU k mod the visible GPUs */
    backend *b = backend_new(&e->backend, err);
    model *m = b ? model_new(&e->model, b, e->train.dim, e->train.classes, err) : NULL;
    if (b) {
        fprintf(stderr, "worker %d: backend %s\n", cs->task, backend_describe(b));
    }
    worker w;
    worker_spec spec = experiment_worker_spec(e, e->train.n);
    shard mine = {0};
    int made = m ? partition_take(&mine, e->workers, cs->task, &e->train, e->partition,
                                  e->partition_alpha, e->seed, err) : -1;
    if (made < 0 || worker_init(&w, &spec, cs->task, m, &e->train, &mine, err) < 0) {
        partition_free(&mine, 1);
        model_destroy(&m);
        backend_destroy(&b);
        return -1;
    }
    partition_free(&mine, 1);   /* the sampler keeps its own copy */
    char path[4200];
    snprintf(path, sizeof path, "%s/steps-%d.csv", run_dir, cs->task);
    /* a row a line: a worker killed by SIGKILL kept up to a buffer of rows
     * (72 of 2,812 in one run) of steps whose pushes counted */
    w.steps_csv = run_append_csv(path, RUN_STEPS_HEADER, true, err);
    w.t0 = 0;   /* rows in Unix time: the launcher takes them from the first step */
    w.phase_timers = true;
    w.replay = e->replay.n > 0 ? trace_device_of(&e->replay, cs->task) : NULL;
    peers p;
    int rc = -1;
    net_auth auth;
    char self[32];
    snprintf(self, sizeof self, "worker-%d", cs->task);
    int curve = w.steps_csv ? s_auth(cs, e, self, &auth, err) : -1;
    peers_options po = {.timeout = e->timeout, .resend = e->resend, .faults = e->faults,
                        .seed = e->seed, .compress = e->compress, .shm = e->shm,
                        .count_steps = !e->rule_info.lockstep, .job = experiment_job(e),
                        .auth = curve > 0 ? &auth : NULL};
    if (curve >= 0 && peers_open(&p, cs, w.nparams, (uint32_t)cs->task, &po, err) == 0) {
        w.link = e->compress.kind == COMPRESS_NONE ? &s_zmq_link : &s_zmq_link_whole;
        w.link_state = &p;
        stop_install();
        rc = s_take_up(&w, &p, &s_link_err);
        long taken_up = w.steps;   /* what earlier processes did: not this one's time */
        double began = run_now();
        if (rc == 0) {
            rc = e->alg->worker_run(&w);
        }
        if (rc == 0) {   /* where its time went: bench/gpu_checklist.sh reads this */
            fprintf(stderr, "worker %d: %.3f s in pulls, %.3f s in gradients, %.3f s in "
                    "pushes, of %.3f s (%ld minibatches)\n", cs->task, w.pull_s, w.gradient_s,
                    w.push_s, run_now() - began, w.steps - taken_up);
        }
        if (rc < 0) {
            *err = s_link_err;
            if (!err->msg[0]) {
                error_set(err, ERROR_RUNTIME, "worker %d: the rule's loop failed", cs->task);
            }
        } else {   /* its rows on disk before it says done: an evaluator gathers them then */
            fflush(w.steps_csv);
            rc = peers_control(&p, WIRE_CONTROL_DONE, NULL, NULL, err);
        }
        stop_uninstall();
        peers_close(&p);
    }
    if (curve > 0) {
        auth_free(&auth);
    }
    char name[32];
    snprintf(name, sizeof name, "steps-%d.csv", cs->task);
    error lost;
    if (run_close_file(&w.steps_csv, run_dir, name, rc == 0 ? err : &lost) < 0) {
        rc = -1;   /* its rows are the run's metrics */
    }
    worker_free(&w);
    model_destroy(&m);
    backend_destroy(&b);
    return rc;
}

/* The evaluator's state. Its clock starts at the first training step, the
 * first pull of a worker at any shard (their counters say when): the
 * initial evaluation is at time 0, the others every eval.every seconds
 * after that step. */
/* A shard's clock against the evaluator's host's, and its times placed. */
typedef struct shard_clock {
    double offset, rtt;       /* how far it is ahead, as measured by the counters' round
                                 trip of rtt (the shortest so far; 0: none yet) */
    uint32_t generation;      /* of the process measured: one restarted on another host
                                 keeps another clock */
    uint32_t earlier[8];      /* the generations measured before it, and their */
    double earlier_offset[8]; /* offsets, the latest in slot (count - 1) % 8 */
    int earlier_count;
    double raw[SHARD_TIMES];  /* each time as the shard last gave it, */
    double placed[SHARD_TIMES];   /* and on this host's clock, as first placed: a
                                     restored process gives its checkpoint's times,
                                     taken on the clock of the process that wrote it
                                     (their clock_of), placed with that one's offset */
} shard_clock;

typedef struct evaluator {
    const cluster_spec *cs;
    experiment *e;
    const char *run_dir;
    backend *b;
    model *m;
    float *theta;
    uint64_t *versions;
    uint16_t *flags;
    shard_stats *stats;       /* its times on this host's clock (s_place_clock) */
    shard_clock *clocks;      /* per shard: where its clock is against this host's */
    bool counted;             /* the shards' counters were read once at least */
    FILE *csv;
    record *rec;              /* the run folder it completes (no launcher does), or NULL */
    peers p;
    long n_train;
    double t0;                /* the first step, Unix time; 0 until a shard has seen it */
    double evaluations;       /* made or skipped, a whole number (an int wrapped after
                                 2^31 evaluations: 2.5 days at eval.every = 1e-4) */
    double last_t;            /* the time of its last row this session */
    double kept_t;            /* eval.csv's last row from an earlier session: its time, */
    long kept_updates, kept_samples;   /* updates and samples (-1: none), of a model
                                          evaluated already */
    bool placed;              /* whether it knows if the job is fresh or under way */
} evaluator;

/* Shard k's counters, asked at `before` and answered by `after` (this
 * host's clock), their times moved onto this host's clock: a shard's
 * clock read between the two is this one's, to within the round trip;
 * one beyond it is another host's, ahead or behind (no NTP), and its
 * times, taken as they were, put rows of eval.csv 20 s late, or none
 * during training, for a clock 20 s ahead or behind. Said once. */
static void s_place_clock(evaluator *v, int k, double before, double after)
{
    shard_stats *st = &v->stats[k];
    shard_clock *c = &v->clocks[k];
    double rtt = fmax(after - before, 1e-9);
    if (v->p.generation[k] != c->generation) {   /* a new process of the shard: anew */
        if (c->generation != 0 && c->rtt > 0) {   /* the one before, for its times */
            c->earlier[c->earlier_count % 8] = c->generation;
            c->earlier_offset[c->earlier_count % 8] = c->offset;
            c->earlier_count++;
        }
        c->generation = v->p.generation[k];
        c->offset = c->rtt = 0;
    }
    if (st->read_at > 0 && (c->rtt == 0 || rtt < c->rtt)) {
        double was = c->offset;
        c->offset = st->read_at - (before + after) / 2;
        c->rtt = rtt;
        if (fabs(c->offset) <= rtt / 2 + 1e-4) {
            c->offset = 0;   /* this host's clock, as far as can be told */
        } else if (was == 0) {
            char line[300];
            snprintf(line, sizeof line, "evaluator: ps %d's clock is %.3f s %s this host's "
                     "(to within %.3f s): its times are placed on this host's clock; the "
                     "workers' steps.csv rows are on their hosts' clocks, which may differ too "
                     "(synchronise the hosts' clocks: NTP)", k, fabs(c->offset),
                     c->offset > 0 ? "ahead of" : "behind", rtt / 2);
            fprintf(stderr, "%s\n", line);
            if (v->rec) {
                run_log(&v->rec->r, "%s", line);
            }
        }
    }
    double *times[SHARD_TIMES] = {&st->first_pull_at, &st->last_push_at, &st->resumed_at,
                                  &st->started_at};
    for (int i = 0; i < SHARD_TIMES; i++) {
        if (*times[i] > 0 && *times[i] != c->raw[i]) {
            /* a checkpoint's time on an earlier process's clock, with its
             * offset: placed with this one's, a time the evaluator had not
             * seen from that process (it restored before a look) was put
             * 20 s off, and time_s with it */
            double offset = c->offset;
            for (int e = 0; st->clock_of[i] != 0 && e < 8 && e < c->earlier_count; e++) {
                if (c->earlier[e] == st->clock_of[i]) {
                    offset = c->earlier_offset[e];
                }
            }
            c->raw[i] = *times[i];
            c->placed[i] = *times[i] - offset;
        }
        *times[i] = *times[i] > 0 ? c->placed[i] : 0;
    }
    st->read_at = 0;   /* placed above, spent */
}

/* Asks the shards' counters: learns t0, whether every worker is done, and
 * (in v->stats) whether a shard refused a push. */
static int s_poll(evaluator *v, bool *done, error *err)
{
    double before = run_wall();
    if (peers_control(&v->p, WIRE_CONTROL_STATS, done, v->stats, err) < 0) {
        return -1;
    }
    double after = run_wall();
    for (int k = 0; k < v->cs->servers; k++) {
        s_place_clock(v, k, before, after);
    }
    v->counted = true;
    bool known = v->t0 > 0;
    for (int k = 0; k < v->cs->servers; k++) {
        double first = v->stats[k].first_pull_at;
        if (first > 0 && (v->t0 == 0 || first < v->t0)) {
            v->t0 = first;
        }
    }
    double every = v->e->eval_every;
    if (!known && v->t0 > 0 && every > 0) {   /* a resumed run's clock starts past 0 */
        v->evaluations = fmax(floor((run_wall() - v->t0) / every) + 1, v->evaluations);
    }
    return 0;
}

/* Waits until the next evaluation is due, or a shard has refused a push
 * of NaN or infinite values (0), or every worker is done (1); -1 on
 * failure. Until training has begun it asks the shards often, to
 * learn when it did. */
static int s_wait(evaluator *v, error *err)
{
    double every = v->e->eval_every, check = 0;
    for (;;) {
        if (stop_requested()) {
            return error_set(err, ERROR_RUNTIME, "interrupted");
        }
        double now = run_wall();
        if (v->t0 > 0 && every > 0 && now >= v->t0 + every * v->evaluations) {
            return 0;
        }
        if (now >= check) {
            bool done;
            if (s_poll(v, &done, err) < 0) {
                return -1;
            }
            if (done) {
                return 1;
            }
            for (int k = 0; k < v->cs->servers; k++) {
                if (v->stats[k].nonfinite > 0) {
                    return 0;   /* evaluated now, the run ends diverged: a lockstep
                                 * rule's round waits for good for a push refused */
                }
            }
            check = now + (v->t0 > 0 ? 0.5 : 0.05);
        }
        double next = v->t0 > 0 && every > 0 ? v->t0 + every * v->evaluations - now : 0.02;
        run_sleep(fmin(0.02, fmax(next, 0.0005)));   /* an evaluation due sooner, on time */
    }
}

/* At the first evaluation: a job under way (the shards' versions or
 * samples past 0: this evaluator restarted, or a run resumed) keeps the
 * evaluations eval.csv has; a fresh one starts it anew, and without a
 * launcher steps.csv too (a folder reused by a job started again by hand
 * holds the last one's). */
static int s_place_in_job(evaluator *v, uint64_t total, error *err)
{
    bool under_way = total > 0;
    for (int k = 0; k < v->cs->servers; k++) {
        under_way = under_way || v->versions[k] > 0;
    }
    v->placed = true;
    v->kept_updates = v->kept_samples = -1;
    char path[4200];
    snprintf(path, sizeof path, "%s/eval.csv", v->run_dir);
    if (under_way) {
        if (v->rec) {
            summary_take_evals(&v->rec->sum, path);
        }
        if (!summary_evals_last_row(path, &v->kept_t, &v->kept_updates, &v->kept_samples)) {
            v->kept_updates = v->kept_samples = -1;
        }
        return 0;
    }
    if (fflush(v->csv) != 0 || ftruncate(fileno(v->csv), 0) != 0) {
        return error_set(err, ERROR_RUNTIME, "%s: cannot start it anew", path);
    }
    fprintf(v->csv, "%s\n", RUN_EVAL_HEADER);
    if (v->rec) {   /* a launcher holds its own steps.csv open */
        snprintf(path, sizeof path, "%s/steps.csv", v->run_dir);
        remove(path);
    }
    return 0;
}

/* Pulls the centre, evaluates it, and writes its row (and reports it to a
 * launcher); *last when it is the final one (every worker done) or the run
 * diverged: the loss is not finite, or a shard refused a push holding NaN
 * or infinity (a worker diverged; a lockstep round would wait for it
 * forever). Nothing more to see either way. */
static int s_evaluate(evaluator *v, bool *last, error *err)
{
    const cluster_spec *cs = v->cs;
    uint64_t total;
    bool done, refused = false;
    if (s_poll(v, &done, err) < 0 ||
        peers_pull(&v->p, v->theta, 0, v->versions, v->flags, NULL, &total, err) < 0) {
        return -1;
    }
    /* a lockstep rule's shards end a round one after another (its last
     * parts microseconds behind the first): pulled again until they show
     * one round, so that the model is one round's (two rows of one
     * `updates` held different models). Never waiting on a shard: a resumed
     * run's shards may hold checkpoints of different rounds until workers
     * run, and a restarted shard redoes its rounds; after a few tries the
     * model is taken as it is */
    for (int again = 0; v->e->rule_info.lockstep && again < 8; again++) {
        bool same = true;
        for (int k = 1; k < cs->servers; k++) {
            same = same && v->versions[k] == v->versions[0];
        }
        if (same) {
            break;
        }
        run_sleep(0.002);
        if (peers_pull(&v->p, v->theta, 0, v->versions, v->flags, NULL, &total, err) < 0) {
            return -1;
        }
    }
    for (int k = 0; k < cs->servers; k++) {
        refused = refused || v->stats[k].nonfinite > 0;
    }
    bool final = true;
    for (int k = 0; k < cs->servers; k++) {
        final = final && (v->flags[k] & WIRE_FLAG_WORKERS_DONE);
    }
    double trained = 0;   /* a resumed run's training before the interruption */
    for (int k = 0; k < cs->servers; k++) {
        trained = fmax(trained, v->stats[k].trained_s);
    }
    if (!v->placed && s_place_in_job(v, total, err) < 0) {
        return -1;
    }
    double t = v->t0 > 0 ? run_wall() - v->t0 : trained, loss, acc;
    if (final && v->t0 > 0) {   /* the end of training, not when this evaluator saw it */
        if (s_poll(v, &done, err) < 0) {   /* the counters after the last push */
            return -1;
        }
        double last_push = v->t0;
        for (int k = 0; k < cs->servers; k++) {
            last_push = fmax(last_push, v->stats[k].last_push_at);
        }
        /* never before a row already written: a periodic evaluation
         * between the last push and the workers' done saw the final model */
        t = fmax(last_push - v->t0, v->last_t);
    }
    double epoch = (double)total / (double)v->n_train;
    if (final && (long)v->versions[0] == v->kept_updates && (long)total == v->kept_samples) {
        /* the final model, whose row eval.csv's last is, of an earlier
         * session (an interruption after the final evaluation, before the
         * write-up): its row stands, and a second one of it was written.
         * Only the final one: a launcher starts the workers at the first
         * row it is told of, and waited for good for a row not written */
        v->kept_updates = v->kept_samples = -1;
        v->last_t = fmax(v->last_t, v->kept_t);
        *last = final || refused;
        return 0;
    }
    v->kept_updates = v->kept_samples = -1;   /* its first look only */
    model_evaluate_host(v->m, &loss, &acc, v->theta, &v->e->test, (int)v->e->eval_batch);
    run_eval_row(v->csv, t, epoch, (long)v->versions[0], (long)total, loss, acc);
    if (ferror(v->csv)) {
        return error_set(err, ERROR_RUNTIME, "%s/eval.csv: cannot write (is the disk full?)",
                         v->run_dir);
    }
    if (cs->report_fd >= 0) {   /* the same row to the launcher; it has gone if this fails */
        char row[256];
        run_eval_text(row, sizeof row, t, epoch, (long)v->versions[0], (long)total, loss, acc);
        dprintf(cs->report_fd, "%s%s", row, refused ? "diverged\n" : "");
    }
    if (refused) {
        fprintf(stderr, "evaluator: a worker pushed NaN or infinite values: the run diverged\n");
    }
    v->last_t = t;
    if (v->rec) {
        record_eval(v->rec, t, (long)v->versions[0], loss, acc);
        v->rec->sum.diverged = v->rec->sum.diverged || refused;
    }
    v->evaluations++;
    double every = v->e->eval_every;
    if (v->t0 > 0 && every > 0) {   /* evaluations that fell due meanwhile are skipped,
                                     * not made in a burst of one model */
        v->evaluations = fmax(floor((run_wall() - v->t0) / every) + 1, v->evaluations);
    }
    *last = final || !isfinite(loss) || refused;
    return 0;
}

/* Evaluates at the start, on schedule, and once every worker is done. */
static int s_evaluate_all(evaluator *v, error *err)
{
    for (;;) {
        bool last = false;
        if (s_evaluate(v, &last, err) < 0) {
            return -1;
        }
        if (last) {   /* the model as evaluated last is the run's, with its last counters */
            bool done;
            return export_model(v->m, v->theta, &v->e->test, v->run_dir, err) < 0 ||
                   s_poll(v, &done, err) < 0 ? -1 : 0;
        }
        if (s_wait(v, err) < 0) {
            return -1;
        }
    }
}

int evaluator_main(const cluster_spec *cs, experiment *e, const char *run_dir, error *err)
{
    if (experiment_load(e, err) < 0) {
        return -1;
    }
    evaluator v = {.cs = cs, .e = e, .run_dir = run_dir, .n_train = e->train.n};
    dataset_free(&e->train);   /* only its size is needed */
    e->backend.ordinal = e->workers;   /* the GPU after the workers', mod the visible */
    v.b = backend_new(&e->backend, err);
    v.m = v.b ? model_new(&e->model, v.b, e->dim, e->classes, err) : NULL;
    v.theta = v.m ? v.b->ops->host_alloc(v.b, v.m->nparams * sizeof *v.theta) : NULL;
    v.versions = calloc((size_t)cs->servers, sizeof *v.versions);
    v.flags = calloc((size_t)cs->servers, sizeof *v.flags);
    v.stats = calloc((size_t)cs->servers, sizeof *v.stats);
    v.clocks = calloc((size_t)cs->servers, sizeof *v.clocks);
    char path[4200];
    snprintf(path, sizeof path, "%s/eval.csv", run_dir);
    v.csv = v.theta && v.versions && v.flags && v.stats && v.clocks
                ? run_append_csv(path, RUN_EVAL_HEADER, false, err) : NULL;
    int rc = -1;
    record rec;
    if (cs->report_fd >= 0) {
        signal(SIGPIPE, SIG_IGN);   /* a launcher that has gone is no reason to die */
    } else if (v.csv) {   /* started by hand or by an engine: no launcher makes the folder */
        v.rec = record_begin(&rec, e, run_dir, err) == 0 ? &rec : NULL;
        if (!v.rec) {
            run_close(&rec.r);
            fclose(v.csv);
            v.csv = NULL;
        }
    }
    net_auth auth;
    int curve = v.csv ? s_auth(cs, e, "evaluator", &auth, err) : -1;
    peers_options po = {.timeout = e->timeout, .resend = e->resend, .faults = e->faults,
                        .seed = e->seed, .shm = e->shm, .job = experiment_job(e),
                        .auth = curve > 0 ? &auth : NULL};
    bool open = curve >= 0 && peers_open(&v.p, cs, v.m->nparams, WIRE_EVALUATOR, &po, err) == 0;
    if (open) {
        stop_install();
        rc = s_evaluate_all(&v, err);
        stop_uninstall();
        for (int k = 0; v.rec && v.p.faults && k < cs->servers; k++) {
            /* the shards last gave their counters before these were known */
            v.rec->sum.injected_drops += (long)v.p.faults[k].dropped;
            v.rec->sum.injected_duplicates += (long)v.p.faults[k].duplicated;
        }
    } else if (!v.csv && !err->msg[0]) {
        error_set(err, ERROR_RUNTIME, "evaluator: out of memory");
    }
    error lost;
    if (run_close_file(&v.csv, run_dir, "eval.csv", rc == 0 ? err : &lost) < 0) {
        rc = -1;
    }
    if (v.rec) {
        rc = record_end(v.rec, e, v.counted ? v.stats : NULL, cs->servers, v.t0, rc, err);
    }
    if (open) {
        /* its DONE once its files are written: the shards end on it, and a
         * job whose end is shard 0's (a PyTorchJob's Master) ended while the
         * summary was being written, its pod then removed */
        if (rc == 0 && peers_control(&v.p, WIRE_CONTROL_DONE, NULL, NULL, err) < 0) {
            char why[sizeof err->msg];
            snprintf(why, sizeof why, "%s", err->msg);
            rc = error_set(err, err->status, "the run's files are written, but the shards "
                           "were not told the evaluator is done: %s", why);
        }
        peers_close(&v.p);
    }
    if (curve > 0) {
        auth_free(&auth);
    }
    free(v.versions);
    free(v.flags);
    free(v.stats);
    free(v.clocks);
    if (v.theta) {
        v.b->ops->host_release(v.b, v.theta);
    }
    model_destroy(&v.m);
    backend_destroy(&v.b);
    return rc;
}

/* The run folder a role writes into: --run_dir, or OUT/NAME/RUN_ID, or
 * OUT/NAME/cluster. */
static int s_run_dir(char *dir, size_t n, const cluster_spec *cs, const experiment *e, error *err)
{
    if (cs->run_dir) {
        snprintf(dir, n, "%s", cs->run_dir);
    } else {
        snprintf(dir, n, "%s/%s/%s", e->out_root, e->name, e->run_id[0] ? e->run_id : "cluster");
    }
    return run_make_dirs(dir, err);
}

/* [cluster] servers of the config with its overrides: how many of the
 * first ranks `asgd role` makes shards. */
static int s_config_servers(const cluster_spec *cs, int *servers, error *err)
{
    config *c = config_load(cs->config_path, err);
    long v = 1;
    int rc = c ? 0 : -1;
    for (int i = 0; rc == 0 && i < cs->noverrides; i++) {
        rc = config_override(c, cs->overrides[i], err);
    }
    if (rc == 0) {
        rc = config_get_int(c, "cluster", "servers", 1, 1, CLUSTER_MAX_SERVERS, &v, err);
    }
    config_destroy(&c);
    *servers = (int)v;
    return rc;
}

/* `asgd role`: the role from TF_CONFIG (cluster_parse) or the launcher's
 * environment, said on stderr. */
static int s_place(cluster_spec *cs, error *err)
{
    char said[512];
    const char *rank = engines_rank_variable();
    if (cs->role != ROLE_ANY && rank) {
        /* a TF_CONFIG left in a torchrun or MPI job made every rank its task */
        return error_set(err, ERROR_USAGE, "TF_CONFIG and %s=%s both place this process; "
                         "unset the one that is not this job's", rank, getenv(rank));
    }
    if (cs->role != ROLE_ANY) {
        fprintf(stderr, "asgd role: TF_CONFIG: %s %d of %d shards, %d workers%s\n",
                cluster_role_name(cs->role), cs->task, cs->servers, cs->workers,
                cs->evaluator ? " and an evaluator" : "");
        return 0;
    }
    int servers;
    if (s_config_servers(cs, &servers, err) < 0 ||
        engines_place(cs, servers, said, sizeof said, err) < 0) {
        return -1;
    }
    fprintf(stderr, "%s\n", said);
    return 0;
}

int role_main(int role, int argc, char **argv)
{
    error err = {0};
    cluster_spec cs;
    experiment e = {0};
    int rc = -1;
    char dir[4700];
    bool placed = false;   /* its task is known: a message names it */
    stop_install();   /* a signal while it starts (loading data) stops it too */
    if (cluster_parse(&cs, role, argc, argv, &err) < 0 ||
        (role == ROLE_ANY && s_place(&cs, &err) < 0)) {
        goto done;
    }
    placed = true;
    role = cs.role;
    char why[300];
    if (role == ROLE_PS && cs.task >= 0 && cs.task < cs.servers &&
        net_name_elsewhere(cs.ps[cs.task], why, sizeof why)) {
        /* said, not refused: a Service's or a NAT's name forwards to it (a
         * PyTorchJob's shard 1 on a Worker's pod engines_place refuses) */
        fprintf(stderr, "asgd ps %d: its address %s resolves elsewhere (%s): it listens on "
                "every interface here, and its peers reach it only if that name forwards "
                "here (a Service, a NAT); else start it on the shards' host\n", cs.task,
                cs.ps[cs.task], why);
    }
    /* the host lists give the cluster's shape */
    experiment_shape shape = {.workers = cs.workers, .servers = cs.servers};
    if (experiment_configure(&e, cs.config_path, cs.noverrides, cs.overrides, &shape, &err) < 0) {
        goto done;
    }
    fputs(e.warnings, stderr);
    if (!e.alg) {
        error_set(&err, ERROR_USAGE, "%s: [train] algorithm = sequential runs in one process; "
                  "`asgd %s` needs a distributed rule", cs.config_path, cluster_role_name(role));
        goto done;
    }
    int tasks = role == ROLE_PS ? cs.servers : e.workers;
    if (role != ROLE_EVALUATOR && (cs.task < 0 || cs.task >= tasks)) {
        placed = false;   /* said without the task: there is none */
        error_set(&err, ERROR_USAGE, "--task_index %d but only %d %s%s", cs.task, tasks,
                  role == ROLE_PS ? "server" : "worker", tasks == 1 ? "" : "s");
        goto done;
    }
    if (s_run_dir(dir, sizeof dir, &cs, &e, &err) < 0) {
        goto done;
    }
    switch (role) {
    case ROLE_PS:
        rc = ps_main(&cs, &e, dir, &err);
        break;
    case ROLE_WORKER:
        rc = worker_main(&cs, &e, dir, &err);
        break;
    default:
        rc = evaluator_main(&cs, &e, dir, &err);
        break;
    }
done:
    experiment_destroy(&e);
    cluster_free(&cs);
    stop_uninstall();
    if (rc < 0 && err.status == ERROR_RUNTIME && stop_requested()) {
        err.status = ERROR_SIGNALLED(stop_requested());   /* stopped before its work was done:
                                                           * retryable, as a shell says it */
    }
    if (rc < 0) {
        if (role == ROLE_ANY) {
            fprintf(stderr, "asgd role: %s\n", err.msg);
        } else if (!placed) {   /* a flag wrong before its --task_index was read */
            fprintf(stderr, "asgd %s: %s\n", cluster_role_name(role), err.msg);
        } else if (role == ROLE_EVALUATOR) {   /* one, of no index */
            fprintf(stderr, "asgd evaluator: %s\n", err.msg);
        } else {
            fprintf(stderr, "asgd %s %d: %s\n", cluster_role_name(role), cs.task, err.msg);
        }
        return err.status ? err.status : ERROR_RUNTIME;
    }
    return 0;
}
