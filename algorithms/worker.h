/* worker.h: one worker and its primitives, independent of any transport.
 *
 * A rule's worker loop uses only these: worker_pull, worker_push,
 * worker_gradient, worker_local_step and worker_done. Pull and push go
 * through a `worker_link` (ZeroMQ in core/real/roles.c, virtual time in
 * core/sim/sim.c, an in-process one in the tests), so the same loop runs
 * anywhere.
 *
 * theta is the worker's copy of the parameters, grad the gradient of its
 * last minibatch; both have nparams elements. */
#ifndef ASGD_WORKER_H
#define ASGD_WORKER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "algorithms/algorithm.h"
#include "core/data.h"
#include "core/model.h"
#include "core/optim.h"
#include "core/partition.h"
#include "core/trace.h"

typedef struct worker worker;

typedef struct worker_link {
    /* Waits until every shard's version is >= min_version (as the rule's
     * pull readiness judges it), then copies the centre model into dst
     * (nparams) and each shard's version into w->versions; also sets
     * w->staleness from the replies. */
    int (*pull)(worker *w, float *dst, uint64_t min_version);
    /* Asks every shard for its parameters now, as pull would with
     * min_version, without waiting: the next pull with a min_version no
     * higher takes those replies (the versions and staleness they carry
     * included) instead of asking again. NULL: no prefetching. */
    int (*prefetch)(worker *w, uint64_t min_version);
    /* Sends values (nparams) split by shard, with the tag and w->versions
     * as base versions; with w->round_leader, to shard 0 first and then to
     * the others with its verdict (algorithm.h, rule_info.round_leader). */
    int (*push)(worker *w, const float *values, uint64_t tag, uint32_t samples);
    /* Sends shard k's part of values (nparams) alone, as push sends each
     * part, with w->versions[k]: for a part pushed as soon as it is final
     * (worker_gradient_push). NULL: the link pushes whole vectors only. */
    int (*push_part)(worker *w, int k, const float *values, uint64_t tag, uint32_t samples);
    /* Returns once no earlier push still reads the worker's buffers (they
     * are sent without copying); NULL when pushes copy. */
    void (*settle)(worker *w);
    /* Called before each minibatch's gradient: where the simulator lets the
     * minibatch's compute time pass. NULL in real mode. */
    void (*compute)(worker *w);
    /* Seconds since the run started, for the step rows: virtual in the
     * simulator; NULL: wall-clock time since w->t0 (0: Unix time). */
    double (*now)(worker *w);
} worker_link;

struct worker {
    const algorithm *alg;
    const void *params;       /* the rule's parameters */
    int id, workers, shards;
    size_t nparams;
    float *theta, *grad;
    uint64_t *versions;       /* per shard, from the last pull */
    uint64_t staleness;       /* of the last push, as the servers reported */
    optim *local;             /* the rule's local optimizer (worker_local_step) */
    long steps, budget;       /* minibatches done, and to do */
    long bytes;               /* sent and received */
    /* compute */
    model *m;
    uint64_t dropout_seed;    /* this worker's masks, with its step (model_seed_dropout) */
    int batch;
    float *x;
    int32_t *y;
    bool own_batch;           /* x and y are this worker's (worker_spec.batch_x) */
    sampler sp;
    /* metrics */
    FILE *steps_csv;          /* may be NULL */
    long steps_every;
    double t0;                /* the clock's zero, Unix time (real mode) */
    uint32_t samples_since_push;
    /* wall seconds spent in pulls (waiting for the answer included), in
     * gradients (the model's copies to and from a GPU included) and in
     * pushes (parts pushed during backward, and the waits for a push's
     * bytes to go, worker_settle, included; never in the gradient's time):
     * where a real worker's time goes (its log's last line) */
    double pull_s, gradient_s, push_s;
    bool phase_timers;        /* those three are kept (real and threads mode) */
    bool null_compute;        /* the simulator's null model: no real gradients */
    /* real mode with cluster.trace: the device whose slowdown and time away
     * worker_gradient replays by sleeping (core/trace.h); NULL: none */
    const trace_device *replay;
    double replay_t0;         /* Unix time of its first minibatch: the trace's 0 */
    bool round_leader;        /* the link sends pushes to shard 0 first (algorithm.h) */
    bool prefetch;            /* [algorithm] prefetch = on (worker_prefetch) */
    /* transport */
    const worker_link *link;
    void *link_state;
};

/* What a worker needs of the run (the drivers fill it from the experiment). */
typedef struct worker_spec {
    const algorithm *alg;
    const void *params;        /* the rule's parameters */
    const optim_spec *local;   /* the rule's local optimizer (worker_local_step) */
    int workers, shards;
    int batch;
    long total_steps;          /* minibatches of every worker together */
    double share;              /* epochs x training examples / batch / workers, unrounded:
                                  a lockstep worker's budget is its nearest whole number */
    long steps_every;          /* a steps.csv row every k-th step */
    uint64_t seed;             /* experiment.seed: minibatch and dropout streams */
    bool round_leader;         /* rule_info.round_leader: pushes go to shard 0 first */
    bool lockstep;             /* rule_info.lockstep: every worker the same budget */
    bool prefetch;             /* [algorithm] prefetch = on */
    /* minibatch buffers (batch x dim features, batch labels) shared by
     * workers that never compute at once (the simulator's: a minibatch is
     * drawn and consumed without a switch between); NULL: each its own */
    float *batch_x;
    int32_t *batch_y;
} worker_spec;

/* Worker id's minibatches: of spec's total_steps for all its workers
 * together, the first total % workers take one more than the rest, so that
 * they add up to total_steps exactly; with lockstep all take the same,
 * spec's share rounded to the nearest (at least 1). */
long worker_budget(const worker_spec *spec, int id);
/* Rounds of `window` local steps in w's budget, the last one shorter when
 * the window does not divide it. */
uint64_t worker_rounds(const worker *w, long window);

/* Sets up worker id's model, sampler over its shard `mine` of `train`, and
 * local optimizer. The link is set by the caller. The model may be shared
 * by workers that never compute at the same time (the simulator): each
 * step seeds its own dropout masks. The sampler copies the
 * shard; train must outlive the worker. */
int worker_init(worker *w, const worker_spec *spec, int id, model *m, const dataset *train,
                const shard *mine, error *err);
void worker_free(worker *w);

/* The primitives. worker_pull copies the centre into theta; rules that keep
 * their own theta (the elastic ones) pull into another buffer. */
int worker_pull(worker *w, uint64_t min_version);
int worker_pull_into(worker *w, float *dst, uint64_t min_version);
/* values is sent without copying: it must not be written until the next
 * worker_gradient, worker_local_step, worker_pull or worker_settle, which
 * wait for the send to finish. */
int worker_push(worker *w, const float *values, uint64_t tag);
void worker_settle(worker *w);
/* With [algorithm] prefetch = on (w->prefetch), asks every shard for its
 * parameters now, so that they travel while the worker computes; the next
 * worker_pull with a min_version no higher answers from them. What is
 * pulled then misses every push applied after this call, this worker's
 * next one included: its gradient is one of its own pushes staler (and
 * the shards count that staleness as any other). A no-op with prefetch off
 * or a link without it (the tests' direct link). */
int worker_prefetch(worker *w, uint64_t min_version);
/* Gradient of the next minibatch at theta into grad; returns its loss and
 * records the step. With w->replay, first sleeps through any time its
 * device is away, and after it (speed - 1) times the gradient's time (a
 * faster device, speed < 1, is not replayed). */
float worker_gradient(worker *w);
/* worker_gradient, then grad scaled by `scale` and pushed with tag, as
 * worker_push(w, w->grad, tag) would, except that each shard's part goes
 * as soon as the backward pass has made it final (wait-free
 * backpropagation: Zhang et al., "Poseidon", 2017): the last shard's part
 * first, travelling while the layers before it are computed. The same
 * values reach the same shards with the same tag and samples; only when
 * differs. Where the link cannot push one part (the simulator), shard 0
 * leads rounds, or the model's gradient is not in host memory until the
 * end (a GPU), the parts go together at the end. */
int worker_gradient_push(worker *w, uint64_t tag, float scale);
/* theta <- local optimizer(theta, grad). */
void worker_local_step(worker *w);
/* Up to `window` local SGD steps (the local optimizer's lr), stopping early
 * when the budget runs out: theta <- theta - lr g, and delta <- delta -
 * lr g, so that delta sums exactly the steps applied. Returns the steps
 * taken. */
long worker_local_window(worker *w, float *delta, long window);
/* Exactly `steps` such steps, whatever the budget: a lockstep rule's
 * rounds that a restored shard lost are taken again past it. */
long worker_local_steps(worker *w, float *delta, long steps);
bool worker_done(const worker *w);
/* A worker that comes back (restarted, resumed, or back from a device
 * trace's absence) with `done` of its minibatches already counted: its
 * step count moves to done (at most its budget), and its sampler past
 * the examples those minibatches drew, so that it goes on with the ones
 * it had not reached. */
void worker_take_up(worker *w, long done);
/* The elastic step of the EASGD family over n values: elastic =
 * alpha (x - centre); x <- x - elastic. */
void worker_elastic(float *x, float *elastic, const float *centre, float alpha, size_t n);

/* Loops that several rules run.
 *
 * One gradient a step, until the budget is spent: pull (no wait), the
 * gradient at what was pulled, push it (Hogwild, DC-ASGD, the
 * staleness-scaled rules: they differ on the server). With prefetch the
 * next step's pull goes out before the gradient: it overlaps the
 * gradient, and misses this step's push. */
int worker_run_gradients(worker *w);
/*
 * Windows of local SGD, until the budget is spent: pull (no wait);
 * delta = the sum of up to `window` local steps (worker_local_window),
 * divided by the steps taken when `mean`; push delta with the pulled
 * versions (AGN with mean, DynSGD without). With prefetch the next
 * window's pull goes out before this window's last step: it overlaps that
 * step's gradient, and misses this window's push. */
int worker_run_windows(worker *w, long window, bool mean);
/* Asynchronous elastic averaging on the worker's own x (nparams values),
 * until the budget is spent: up to `window` calls of local_step(w, x,
 * ctx), each taking one minibatch; then pull the centre (no wait), take
 * the elastic step and push the elastic force (AEASGD, EAMSGD). With
 * prefetch the pull goes out before the window's last local step: it
 * overlaps that step, and misses what other workers push during it (the
 * worker's own last push is in it, as without). */
int worker_run_elastic(worker *w, float *x, float alpha, long window,
                       void (*local_step)(worker *w, float *x, void *ctx), void *ctx);
/* The smallest shard version seen at the last pull. */
uint64_t worker_version(const worker *w);

#endif
