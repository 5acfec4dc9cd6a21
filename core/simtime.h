/* simtime.h: the simulator's models of time, the [sim] section.
 *
 *   profile        FILE: a host's measured costs (asgd calibrate, core/real/
 *                  calibrate.h) as the defaults of the keys below it lists;
 *                  a key given here still wins
 *   compute        constant | normal | lognormal | exponential | measured |
 *                  empirical | null:
 *                  seconds per minibatch, with compute_mean and compute_sd;
 *                  empirical draws from compute_quantiles (q0, ..., q100 at
 *                  even steps of probability, linear between them);
 *                  measured times real gradients of the configured model and
 *                  batch on this host (and so is not reproducible across
 *                  hosts); null takes no time and skips the gradients
 *                  themselves, to measure the simulator alone
 *   speed          per-worker factors on compute time, e.g. 1,1,2,1 (empty: 1)
 *   straggler_fraction, straggler_slowdown
 *                  that fraction of the workers (chosen by the seed) k x slower
 *   pause          K@T1-T2,...: worker K computes nothing from T1 to T2
 *   latency, jitter, bandwidth
 *                  a message takes latency (+ jitter x N(0,1), never below
 *                  0) + bytes / bandwidth seconds; messages on one link keep
 *                  their order, as on a ZeroMQ connection
 *   shard_bandwidth
 *                  bytes/s of each shard's own network link, each way, that
 *                  its workers' links share: their bytes go through it one
 *                  message after another (0: no such link, each worker's
 *                  link to it is its own)
 *   startup_mean, startup_sd
 *                  when each worker starts (normal, never before 0): process
 *                  start and data loading, which stagger real workers
 *   cores          0: every worker computes on its own core; C > 0: all
 *                  workers share C cores, granted first come, first served
 *                  (e.g. a whole cluster simulated as it runs on one host),
 *                  and so do the shards and the evaluator for the work the
 *                  next keys give them
 *   wakeup         with cores: the time an idle core takes to start a job
 *                  (a halted virtual CPU woken by an interrupt)
 *   migration      with cores: a process that had a turn on a core less
 *                  than this long ago is cache-hot there: woken while that
 *                  core is busy, it waits for it, and an idle core takes it
 *                  only once it has gone cold, at a scheduler tick
 *                  (timeslice), as the kernel's sched_migration_cost
 *                  (0.5 ms) and its balancing at each tick do; 0: a job
 *                  takes any idle core
 *   placement      with cores: where a process that has run waits while
 *                  no core is idle: `core` (the default), in its last
 *                  core's line, which that core serves before the shared
 *                  line and another core takes from only when it has
 *                  nothing else to run and the process has gone cold, as
 *                  the kernel queues a woken task on its CPU's runqueue
 *                  and balances when a CPU goes idle; `shared`, once cold,
 *                  in one line every core serves first come, first served
 *   timeslice      with cores: the longest a job keeps a core while others
 *                  wait for one (0: until it is done), as a kernel's
 *                  scheduler slices a long evaluation among short steps
 *   apply          seconds a shard spends applying one push
 *   compress_cpu   seconds a worker spends compressing one push ([algorithm]
 *                  compress), its encoding of every shard's part
 *   decode_cpu     seconds a shard spends decoding its part of one
 *                  compressed push
 *   answer         seconds a shard spends on the rule's side of answering
 *                  a pull (a copy kept for the worker: DC-ASGD, Gap-Aware)
 *   message_cpu    seconds of work each end of a message does (ZeroMQ's
 *                  calls and I/O thread): the sender before it leaves, the
 *                  receiver before it acts on it
 *   copy_bandwidth bytes/s at which a process copies a message's values
 *                  (a push's into a shared segment, a reply's out of it;
 *                  the shard's reply into it): work at both ends; 0: free
 *   eval_cost      seconds of work one evaluation takes the evaluator (its
 *                  pull's copy and the test set's forward pass); the next
 *                  is due eval.every after the last began, or at once when
 *                  that one ended later
 *   startup_cpu    seconds of work a worker process does before its first
 *                  pull (loading the data, making the model), after
 *                  startup_mean
 *   fail           K@T or K@T1-T2,...: worker K fails at T (and is back at
 *                  T2); [cluster] restart decides whether it restarts;
 *                  psK@T or psK@T1-T2: shard K fails, losing what it applied
 *                  since its last checkpoint ([checkpoint] every, in
 *                  virtual seconds), and comes back from that checkpoint
 *                  at T2 or, under the restart policy, as the launcher
 *                  restarts a shard process; messages sent to it meanwhile
 *                  go again every [cluster] resend seconds, as real
 *                  workers resend them
 *   trace          FILE.csv: each worker's speed, link and times away from
 *                  a device trace (core/trace.h) */
#ifndef ASGD_SIMTIME_H
#define ASGD_SIMTIME_H

#include <stdbool.h>

#include "core/config.h"
#include "core/error.h"
#include "core/rng.h"
#include "core/trace.h"

enum sim_compute {
    SIM_CONSTANT, SIM_NORMAL, SIM_LOGNORMAL, SIM_EXPONENTIAL, SIM_MEASURED, SIM_NULL,
    SIM_EMPIRICAL
};

/* With cores: where a process that has run waits while no core is idle. */
enum sim_placement {
    SIM_PLACE_CORE,            /* in its last core's line, as the kernel's per-CPU runqueues */
    SIM_PLACE_SHARED           /* in one line every core serves, once cold */
};

#define SIM_MAX_QUANTILES 101

#define SIM_MAX_EVENTS_LISTED 64

typedef struct sim_window {
    int index;                 /* the worker's, or the shard's */
    bool shard;                /* a shard's failure (psK@T) */
    double from, to;           /* to < 0: never (a failure without return) */
} sim_window;

typedef struct sim_spec {
    int compute;               /* enum sim_compute */
    double compute_mean, compute_sd;
    double quantiles[SIM_MAX_QUANTILES];   /* empirical: compute time at even steps */
    int nquantiles;
    double *speed;             /* per worker, after stragglers; owned */
    int workers;
    double straggler_fraction, straggler_slowdown;
    sim_window pauses[SIM_MAX_EVENTS_LISTED];
    int npauses;
    double latency, jitter, bandwidth;
    double shard_bandwidth;    /* bytes/s of a shard's link, each way (0: none shared) */
    double apply;
    double compress_cpu;       /* a worker's work compressing one push */
    double decode_cpu;         /* a shard's work decoding its part of a compressed push */
    double answer;             /* a shard's rule-side work on a pull */
    long cores;                /* 0: one per worker */
    double timeslice;          /* with cores: a job's longest turn while others wait (0: none) */
    double wakeup;             /* with cores: an idle core's time to start a job */
    double migration;          /* with cores: how long a process stays cache-hot */
    int placement;             /* with cores: enum sim_placement */
    double message_cpu;        /* work at each end of a message */
    double copy_bandwidth;     /* bytes/s of a process copying values (0: free) */
    double eval_cost;          /* work of one evaluation */
    double startup_cpu;        /* work of a worker process before its first pull */
    double startup_mean, startup_sd;
    sim_window failures[SIM_MAX_EVENTS_LISTED];
    int nfailures;
    trace trace;               /* sim.trace (n 0: none) */
    /* [sim] profile's [host]: the experiment it was measured for ("" and
     * 0 where it does not say, or without a profile), and where and when */
    char profile_model[32], profile_algorithm[32], profile_device[96], profile_host[160];
    char profile_transport[8];
    char profile_compress[32];
    char profile_shm[4];       /* "on", "off", or "" (not said) */
    long profile_batch, profile_params, profile_servers;
} sim_spec;

/* Reads [sim] for `workers` workers and `shards` shards; stragglers are
 * chosen with seed. */
int sim_spec_configure(sim_spec *s, config *c, int workers, int shards, unsigned long seed,
                       error *err);
void sim_spec_free(sim_spec *s);

/* One minibatch's compute time for worker k (model x speed factor). */
double sim_compute_time(const sim_spec *s, int k, rng *r);
/* The nq points (nq >= 3) of compute = empirical for n sorted samples (asgd
 * calibrate's step times): between the ends, the order statistics at even
 * steps of probability, linear between them (at p (n - 1)); the two ends
 * are set so that the draws below the second point and above the
 * second-to-last have the mean of the samples there (the lowest and the
 * highest 1 / (nq - 1) of them), where the fastest and slowest samples
 * would make one outlier's time the end of a line that a tenth of the
 * draws fall on (one slow step in 200 made the draws' mean 2x the
 * samples'). Then the draws' mean is the samples' to within the interior
 * lines' rounding. */
void sim_quantiles_of(const double *sorted, int n, double *q, int nq);
/* A message of `bytes` bytes on worker k's link: its time on the wire
 * (the trace's latency and bandwidth for k, where it gives them). */
double sim_message_time(const sim_spec *s, int k, double bytes, rng *r);
/* Worker k's link's bandwidth: the trace's for k, or [sim] bandwidth. */
double sim_link_bandwidth(const sim_spec *s, int k);
/* Seconds of work a process spends on `bytes` of values it copies in or
 * out (copy_bandwidth), 0 when copies are free. */
double sim_copy_time(const sim_spec *s, double bytes);
/* When worker k starts. */
double sim_startup_time(const sim_spec *s, rng *r);
/* When worker k, ready at t, can compute: after any pause covering t. */
double sim_after_pauses(const sim_spec *s, int k, double t);
/* When worker k's first pause after t starts (INFINITY: none). */
double sim_next_pause(const sim_spec *s, int k, double t);

#endif
