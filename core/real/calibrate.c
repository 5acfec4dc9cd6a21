/* calibrate.c: measuring this host for the simulator (calibrate.h). */
#define _GNU_SOURCE   /* CPU_SET, pthread_setaffinity_np */
#include "core/real/calibrate.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <zmq.h>

#include "algorithms/server.h"
#include "algorithms/worker.h"
#include "core/compress.h"
#include "core/datacache.h"
#include "core/experiment.h"
#include "core/model.h"
#include "core/partition.h"
#include "core/proc.h"
#include "core/provenance.h"
#include "core/rng.h"
#include "core/run.h"
#include "core/simtime.h"
#include "transport/wire.h"

#define CAL_QUANTILES 11   /* q0, q10, ..., q100: a config line holds 198 characters */
#define CAL_STEPS 200

typedef struct costs {
    double quantiles[CAL_QUANTILES], compute_mean, compute_sd;
    double latency, bandwidth, message_cpu, copy_bandwidth, apply, answer, eval_cost;
    double compress_cpu, decode_cpu;
    double startup_mean, startup_sd, timeslice, wakeup, migration;
    long cores;
    bool shared;              /* values through shared segments ([cluster] shm) */
    int shards;               /* [cluster] servers: apply and answer are one shard's */
    size_t shard_values;      /* shard 0's part of the vector, which they were timed on */
} costs;

/* This process's CPU time so far, all threads. */
static double s_cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int s_by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* times[0..n) sorted in place; the mean and sd into *mean, *sd. */
static void s_describe(double *times, int n, double *mean, double *sd)
{
    qsort(times, (size_t)n, sizeof *times, s_by_value);
    double sum = 0, sq = 0;
    for (int i = 0; i < n; i++) {
        sum += times[i];
        sq += times[i] * times[i];
    }
    *mean = sum / n;
    *sd = sqrt(fmax(0, sq / n - *mean * *mean));
}

/* The calibration's worker link: no shards. A pull is answered at once
 * with the versions it asks for (a round is always complete), a push goes
 * nowhere, and before each minibatch the time since the last is noted:
 * one step of the rule's own loop, its local work (local optimizer steps,
 * sums, elastic steps) around its gradient. */
typedef struct timing {
    double last;
    double times[CAL_STEPS + 20];
    int n;
} timing;

static int s_timing_pull(worker *w, float *dst, uint64_t min_version)
{
    (void)dst;
    for (int k = 0; k < w->shards; k++) {
        w->versions[k] = min_version;
    }
    return 0;
}

static int s_timing_push(worker *w, const float *values, uint64_t tag, uint32_t samples)
{
    (void)w, (void)values, (void)tag, (void)samples;
    return 0;
}

static void s_timing_step(worker *w)
{
    timing *t = w->link_state;
    double now = run_now();
    if (t->last > 0 && t->n < CAL_STEPS + 20) {
        t->times[t->n++] = now - t->last;
    }
    t->last = now;
}

static const worker_link s_timing_link = {
    .pull = s_timing_pull, .push = s_timing_push, .compute = s_timing_step,
};

/* One worker's steps of the configured rule, model and batch: its own loop
 * over the timing link, 20 steps to warm up, then CAL_STEPS timed. */
static int s_compute(experiment *e, costs *out, error *err)
{
    backend *b = backend_new(&e->backend, err);
    model *m = b ? model_new(&e->model, b, e->train.dim, e->train.classes, err) : NULL;
    shard part = {0};
    worker w = {0};
    worker_spec spec = experiment_worker_spec(e, e->train.n);
    timing *t = calloc(1, sizeof *t);
    int rc = -1;
    if (m && t && partition_take(&part, e->workers, 0, &e->train, e->partition,
                                 e->partition_alpha, e->seed, err) == 0 &&
        worker_init(&w, &spec, 0, m, &e->train, &part, err) == 0) {
        model_init_host(m, w.theta, e->seed);
        w.link = &s_timing_link;
        w.link_state = t;
        w.budget = CAL_STEPS + 21;   /* the last step's end is the loop's end */
        if (e->alg->worker_run(&w) == 0) {
            s_timing_step(&w);
        }
        if (t->n < CAL_STEPS + 20) {
            rc = error_set(err, ERROR_RUNTIME, "calibrate: %s's loop took %d steps of %d",
                           e->algorithm_name, t->n, CAL_STEPS + 20);
        } else {
            double *times = t->times + 20;
            s_describe(times, CAL_STEPS, &out->compute_mean, &out->compute_sd);
            sim_quantiles_of(times, CAL_STEPS, out->quantiles, CAL_QUANTILES);
            rc = 0;
        }
        worker_free(&w);
    }
    free(t);
    partition_free(&part, 1);
    model_destroy(&m);
    backend_destroy(&b);
    return rc;
}

/* The far end of the message measurement, a process of its own as a
 * shard is: binds `endpoint`, writes the one it bound to `ready`, and
 * sends every message back; a 1-byte message is answered with its CPU
 * time so far, an empty one is its last. */
static void s_echo(const char *endpoint, int ready)
{
    void *ctx = zmq_ctx_new();
    void *router = zmq_socket(ctx, ZMQ_ROUTER);
    char bound[256] = "";
    size_t len = sizeof bound;
    if (zmq_bind(router, endpoint) == 0) {
        zmq_getsockopt(router, ZMQ_LAST_ENDPOINT, bound, &len);
    }
    if (write(ready, bound, sizeof bound) != (ssize_t)sizeof bound || !bound[0]) {
        _exit(1);
    }
    for (;;) {
        zmq_msg_t id, body;
        zmq_msg_init(&id);
        zmq_msg_init(&body);
        if (zmq_msg_recv(&id, router, 0) < 0 || zmq_msg_recv(&body, router, 0) < 0) {
            break;
        }
        size_t size = zmq_msg_size(&body);
        zmq_msg_send(&id, router, ZMQ_SNDMORE);
        if (size == 1) {
            double cpu = s_cpu_now();
            zmq_send(router, &cpu, sizeof cpu, 0);
            zmq_msg_close(&body);
        } else {
            zmq_msg_send(&body, router, 0);
        }
        if (size == 0) {
            break;
        }
    }
    int linger = 2000;
    zmq_setsockopt(router, ZMQ_LINGER, &linger, sizeof linger);
    zmq_close(router);
    zmq_ctx_term(ctx);
    _exit(0);
}

/* Busy for `seconds`, as a process computing between its messages. */
static void s_busy(double seconds)
{
    for (double t0 = run_now(); run_now() - t0 < seconds;) {
    }
}

/* The median round trip of `reps` messages of `bytes` bytes, each after
 * `gap` seconds of work (the far end idle meanwhile, as processes that
 * wait for each other are, so that waking it is part of the trip). */
static double s_round_trip(void *dealer, char *buf, size_t bytes, int reps, double gap)
{
    double *times = malloc((size_t)reps * sizeof *times), mean, sd;
    for (int i = -5; times && i < reps; i++) {
        s_busy(gap);
        double t0 = run_now();
        zmq_send(dealer, buf, bytes, 0);
        zmq_recv(dealer, buf, bytes, 0);
        if (i >= 0) {
            times[i] = run_now() - t0;
        }
    }
    if (!times) {
        return NAN;
    }
    s_describe(times, reps, &mean, &sd);
    double median = times[reps / 2];
    free(times);
    return median;
}

/* The echo process's CPU time so far. */
static double s_echo_cpu(void *dealer)
{
    double cpu = 0;
    zmq_send(dealer, "c", 1, 0);
    zmq_recv(dealer, &cpu, sizeof cpu, 0);
    return cpu;
}

/* The private folder (/tmp/asgd-calibrate-PID-XXXXXX) of the message
 * measurement's ipc socket, and the socket: removed when it ends, and by
 * s_on_signal when SIGINT or SIGTERM ends calibrate meanwhile (each was
 * left in /tmp, the socket under a name another user could take first). */
static char s_socket_dir[64], s_socket_path[96];
static volatile pid_t s_echo_pid;   /* the echo, stopped first: it may bind meanwhile */

static void s_remove_socket(void)
{
    if (s_socket_dir[0]) {
        unlink(s_socket_path);   /* all async-signal-safe */
        rmdir(s_socket_dir);
        s_socket_dir[0] = '\0';
    }
}

static void s_on_signal(int sig)
{
    if (s_echo_pid > 0) {
        kill(s_echo_pid, SIGKILL);
        waitpid(s_echo_pid, NULL, 0);
    }
    s_remove_socket();
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    raise(sig);
}

/* s_on_signal for SIGINT and SIGTERM, the actions it replaced into old;
 * a signal ignored (a background job's SIGINT) stays ignored. */
static void s_catch_signals(struct sigaction old[2])
{
    static const int sigs[2] = {SIGINT, SIGTERM};
    struct sigaction sa = {.sa_handler = s_on_signal};
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 2; i++) {
        sigaction(sigs[i], NULL, &old[i]);
        if (old[i].sa_handler != SIG_IGN) {
            sigaction(sigs[i], &sa, NULL);
        }
    }
}

static void s_restore_signals(const struct sigaction old[2])
{
    sigaction(SIGINT, &old[0], NULL);
    sigaction(SIGTERM, &old[1], NULL);
}

/* A header alone and the whole vector, there and back over the configured
 * transport on this host, to a process of its own: the work of a message
 * at each end (both processes' CPU time, ZeroMQ's I/O threads included),
 * the time between (with the far end idle before each, so that waking it
 * counts), and, without shared segments, the bandwidth. */
static int s_messages(const experiment *e, size_t bytes, costs *out, error *err)
{
    char endpoint[256];
    s_socket_dir[0] = '\0';
    if (e->transport == TRANSPORT_TCP) {
        snprintf(endpoint, sizeof endpoint, "tcp://127.0.0.1:*");
    } else {
        snprintf(s_socket_dir, sizeof s_socket_dir, "/tmp/asgd-calibrate-%ld-XXXXXX",
                 (long)getpid());
        if (!mkdtemp(s_socket_dir)) {
            s_socket_dir[0] = '\0';
            return error_set(err, ERROR_RUNTIME, "calibrate: cannot create a private folder "
                             "in /tmp: %s", strerror(errno));
        }
        snprintf(s_socket_path, sizeof s_socket_path, "%s/echo", s_socket_dir);
        snprintf(endpoint, sizeof endpoint, "ipc://%s", s_socket_path);
    }
    int ready[2];
    if (pipe(ready) < 0) {
        s_remove_socket();
        return error_set(err, ERROR_RUNTIME, "calibrate: %s", strerror(errno));
    }
    struct sigaction old[2];
    s_catch_signals(old);
    fflush(NULL);
    pid_t parent = getpid(), echo = fork();
    if (echo == 0) {   /* it dies with calibrate: it was left waiting for ever */
        s_restore_signals(old);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) {
            _exit(1);
        }
        close(ready[0]);
        s_echo(endpoint, ready[1]);
    }
    s_echo_pid = echo;
    close(ready[1]);
    char bound[256] = "";
    ssize_t got = echo > 0 ? read(ready[0], bound, sizeof bound) : -1;
    close(ready[0]);
    void *ctx = zmq_ctx_new();
    void *dealer = ctx ? zmq_socket(ctx, ZMQ_DEALER) : NULL;
    char *buf = malloc(bytes);
    int linger = 0;
    if (got != (ssize_t)sizeof bound || !bound[0] || !dealer || !buf ||
        zmq_connect(dealer, bound) != 0) {
        error_set(err, ERROR_RUNTIME, "calibrate: %s: cannot measure messages", endpoint);
        if (echo > 0) {
            kill(echo, SIGKILL);
            waitpid(echo, NULL, 0);
        }
        free(buf);
        if (dealer) {
            zmq_close(dealer);
        }
        if (ctx) {
            zmq_ctx_term(ctx);
        }
        s_echo_pid = 0;
        s_remove_socket();
        s_restore_signals(old);
        return -1;
    }
    memset(buf, 1, bytes);
    s_round_trip(dealer, buf, WIRE_HEADER_SIZE, 50, 0);   /* connected and warm */
    const int reps = 500;
    double cpu0 = s_cpu_now(), far0 = s_echo_cpu(dealer);
    double small = s_round_trip(dealer, buf, WIRE_HEADER_SIZE, reps, 0);
    double cpu_small = (s_cpu_now() - cpu0 + s_echo_cpu(dealer) - far0) / (reps + 5);
    double wakes[3];   /* in turn with trips back to back: the host's noise falls on both */
    for (int i = 0; i < 3; i++) {
        wakes[i] = s_round_trip(dealer, buf, WIRE_HEADER_SIZE, 200, 1e-3) -
                   s_round_trip(dealer, buf, WIRE_HEADER_SIZE, 200, 0);
    }
    double mean_wake, sd_wake;
    s_describe(wakes, 3, &mean_wake, &sd_wake);
    double large = s_round_trip(dealer, buf, bytes, 50, 0);
    zmq_send(dealer, "", 0, 0);   /* the echo's last */
    zmq_recv(dealer, buf, bytes, 0);
    waitpid(echo, NULL, 0);
    s_echo_pid = 0;
    zmq_setsockopt(dealer, ZMQ_LINGER, &linger, sizeof linger);
    zmq_close(dealer);
    zmq_ctx_term(ctx);
    free(buf);
    s_remove_socket();
    s_restore_signals(old);
    message_timing t = {.round_trip = small, .cpu_per_trip = cpu_small, .wake = wakes[1],
                        .large_round_trip = large, .bytes = bytes, .shared = out->shared};
    message_costs m;
    calibrate_message_costs(&t, &m);
    if (m.overlapped) {
        printf("messages: both ends' work, %.1f us a round trip, is more than the trip, %.1f us "
               "(their threads overlap it): taken as the trip, no latency beside it\n",
               cpu_small * 1e6, small * 1e6);
    }
    out->message_cpu = m.message_cpu;
    out->latency = m.latency;
    out->wakeup = m.wakeup;
    out->bandwidth = m.bandwidth;
    return 0;
}

void calibrate_message_costs(const message_timing *t, message_costs *out)
{
    /* a round trip is two messages, each its sender's work, the time
     * between, its receiver's work: four pieces of work */
    out->message_cpu = t->cpu_per_trip / 4;
    /* more work than the trip took (both ends' application and I/O
     * threads, four on a host of two cores, overlap some of it; the work
     * is a mean, the trip a median): the work is scaled to the trip, with
     * no latency left (it stayed whole, latency 0, and the simulated trip
     * was longer than the real one, 75 us against 60 us) */
    out->overlapped = t->round_trip / 2 < 2 * out->message_cpu;
    if (out->overlapped) {
        out->message_cpu = t->round_trip / 4;
    }
    out->latency = fmax(0, t->round_trip / 2 - 2 * out->message_cpu);
    /* a round trip to a far end idle before it wakes two cores (the far
     * end's, and the near end's while it waits for the answer) */
    out->wakeup = fmax(0, t->wake / 2);
    /* the one-way time the large message takes beyond a small one; through
     * shared segments no values cross the socket: the copies at both ends
     * are the work copy_bandwidth charges */
    double extra = (t->large_round_trip - t->round_trip) / 2;
    out->bandwidth = t->shared || extra <= 0 ? 1e15
                                             : (double)(t->bytes - WIRE_HEADER_SIZE) / extra;
}

/* The rate of one copy of the model's vector as a shard copies its answer
 * into a segment and a worker copies it out: from memory no cache holds
 * (another process wrote it, others have run since), so a walk over 64 MB
 * comes between copies. */
static int s_copy(size_t bytes, costs *out, error *err)
{
    enum { REPS = 32 };
    const size_t walk = 64u << 20;
    char *src = malloc(bytes), *dst = malloc(bytes), *other = malloc(walk);
    double times[REPS], mean, sd;
    if (!src || !dst || !other) {
        free(src);
        free(dst);
        free(other);
        return error_set(err, ERROR_RUNTIME, "calibrate: out of memory");
    }
    memset(src, 1, bytes);
    memset(dst, 2, bytes);
    memset(other, 3, walk);
    for (int i = 0; i < REPS; i++) {
        for (size_t j = 0; j < walk; j += 64) {
            other[j]++;
        }
        double t0 = run_now();
        memcpy(dst, src, bytes);
        times[i] = run_now() - t0;
    }
    s_describe(times, REPS, &mean, &sd);
    out->copy_bandwidth = out->shared ? (double)bytes / times[REPS / 2] : 0;
    free(src);
    free(dst);
    free(other);
    return 0;
}

/* Two CPU-bound threads on one core: each notes the gaps in its own
 * progress, which are the other's turns. */
typedef struct turns {
    double gaps[4096];
    int n;
    int cpu;
} turns;

static void *s_spin(void *arg)
{
    turns *t = arg;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(t->cpu, &one);
    if (pthread_setaffinity_np(pthread_self(), sizeof one, &one) != 0) {
        return NULL;
    }
    double start = run_now(), last = start;
    while (last - start < 0.4 && t->n < 4096) {
        double now = run_now();
        if (now - last > 50e-6) {   /* it did not run meanwhile */
            t->gaps[t->n++] = now - last;
        }
        last = now;
    }
    return NULL;
}

/* How long the kernel lets a CPU-bound task run while another waits for
 * its core (its slice, rounded to its tick): the median gap two spinning
 * threads pinned to one core see; without pinning, a formula (EEVDF's
 * base slice, 0.75 ms times 1 + log2 of the cores). */
static double s_timeslice(long cores)
{
    double formula = 0.75e-3 * (1 + floor(log2((double)(cores < 8 ? cores : 8))));
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
        return formula;
    }
    int cpu = 0;
    while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &allowed)) {
        cpu++;
    }
    turns *t = calloc(2, sizeof *t);
    pthread_t threads[2];
    int started = 0;
    for (int i = 0; t && i < 2; i++) {
        t[i].cpu = cpu;
        started += pthread_create(&threads[i], NULL, s_spin, &t[i]) == 0;
    }
    for (int i = 0; i < started; i++) {
        pthread_join(threads[i], NULL);
    }
    double slice = formula;
    if (t && started == 2 && t[0].n + t[1].n >= 10) {
        double *all = malloc((size_t)(t[0].n + t[1].n) * sizeof *all), mean, sd;
        if (all) {
            memcpy(all, t[0].gaps, (size_t)t[0].n * sizeof *all);
            memcpy(all + t[0].n, t[1].gaps, (size_t)t[1].n * sizeof *all);
            s_describe(all, t[0].n + t[1].n, &mean, &sd);
            slice = all[(t[0].n + t[1].n) / 2];
            free(all);
        }
    }
    free(t);
    return slice;
}

/* How long the kernel keeps a task that ran that recently on its CPU
 * rather than move it to an idle one (sched_migration_cost): where the
 * kernel shows it (debugfs, or the sysctl of kernels before 5.13), else
 * its default, 0.5 ms. */
static double s_migration(void)
{
    static const char *const paths[] = {"/sys/kernel/debug/sched/migration_cost_ns",
                                        "/proc/sys/kernel/sched_migration_cost_ns"};
    for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
        FILE *f = fopen(paths[i], "r");
        long ns;
        int got = f ? fscanf(f, "%ld", &ns) : 0;
        if (f) {
            fclose(f);
        }
        if (got == 1 && ns >= 0) {
            return (double)ns * 1e-9;
        }
    }
    return 0.5e-3;
}

/* One evaluation as the evaluator makes it: the test set's forward pass in
 * eval.batch rows at a time, and its pull's copy; the median of 3. */
static int s_evaluation(experiment *e, costs *out, error *err)
{
    backend *b = backend_new(&e->backend, err);
    model *m = b ? model_new(&e->model, b, e->train.dim, e->train.classes, err) : NULL;
    float *theta = m ? malloc(m->nparams * sizeof *theta) : NULL;
    if (!theta) {
        model_destroy(&m);
        backend_destroy(&b);
        return m ? error_set(err, ERROR_RUNTIME, "calibrate: out of memory") : -1;
    }
    model_init_host(m, theta, e->seed);
    double times[3], mean, sd, loss, acc;
    for (int i = 0; i < 3; i++) {
        double t0 = run_now();
        model_evaluate_host(m, &loss, &acc, theta, &e->test, (int)e->eval_batch);
        times[i] = run_now() - t0;
    }
    s_describe(times, 3, &mean, &sd);
    double copy = out->copy_bandwidth > 0 ? (double)m->nparams * sizeof(float) /
                                                out->copy_bandwidth : 0;
    out->eval_cost = times[1] + copy;
    free(theta);
    model_destroy(&m);
    backend_destroy(&b);
    return 0;
}

/* The rule's server side on shard 0 of [cluster] servers, its part of
 * the vector (the simulator charges apply and answer at every shard, for
 * each push and pull, as each real shard handles its own part): pulls answered
 * (its on-pull work: DC-ASGD and Gap-Aware keep a copy for the worker) and
 * pushes of small values applied, each tagged as its round expects, for
 * each worker in turn; per push and per pull. Successive pushes carry
 * different values, as real gradients do: with one vector pushed again and
 * again, a step whose work depends on the values (a branch on each element)
 * becomes predictable and measures faster than any real shard runs it. */
#define APPLY_VALUE_SETS 4

static int s_apply(const experiment *e, size_t n, costs *out, error *err)
{
    float *init = calloc(n, sizeof *init);
    float *values = malloc(APPLY_VALUE_SETS * n * sizeof *values + sizeof *values);
    int shards = e->servers > 0 ? e->servers : 1;
    server *s = init && values ? server_new(e->alg, e->rule, &e->rule_info, 0, shards,
                                            e->workers, init, n)
                               : NULL;
    if (!s) {
        free(init);
        free(values);
        return error_set(err, ERROR_RUNTIME, "calibrate: out of memory");
    }
    rng r = rng_derive(e->seed, RNG_SIM, 0x6170706c79);
    for (size_t i = 0; i < APPLY_VALUE_SETS * n; i++) {   /* gradient-like: signs and sizes */
        values[i] = 1e-3f * (float)rng_normal(&r);
    }
    /* each worker pushes what it computed on its last pull, and pulls
     * again: in turn, every push is as stale as the other workers make it;
     * and, as in a real shard, whose workers and copies have run since the
     * last, from memory no cache holds (a walk over 64 MB between) */
    uint64_t *pulled = calloc((size_t)e->workers, sizeof *pulled);
    const size_t walk = 64u << 20;
    char *other = malloc(walk);
    const int pushes = 100;
    double pushing = 0, answering = 0;
    if (other) {
        memset(other, 1, walk);
    }
    for (int i = 0; pulled && other && i < pushes; i++) {
        for (size_t j = 0; j < walk; j += 64) {
            other[j]++;
        }
        uint32_t worker = (uint32_t)(i % e->workers);
        uint64_t version = atomic_load(&s->version);
        push_msg m = {.worker = worker, .tag = version, .base_version = pulled[worker],
                      .samples = (uint32_t)e->batch,
                      .values = values + (size_t)(i % APPLY_VALUE_SETS) * n};
        double t0 = run_now();
        server_push(s, &m);
        double t1 = run_now();
        pull_msg pull = {.worker = worker, .min_version = atomic_load(&s->version)};
        pulled[worker] = atomic_load(&s->version);
        server_answer(s, &pull);
        pushing += t1 - t0;
        answering += run_now() - t1;
    }
    free(pulled);
    free(other);
    out->apply = pushing / pushes;
    out->answer = answering / pushes;
    out->shards = shards;
    out->shard_values = s->n;
    server_destroy(&s);
    free(init);
    free(values);
    return 0;
}

/* [algorithm] compress's work: a worker's compressing of one push (every
 * shard's part, its error feedback included) and a shard's decoding of
 * its part, each the median of 30 on gradient-like values; 0 without
 * compression. */
static int s_compression(const experiment *e, size_t n, costs *out, error *err)
{
    out->compress_cpu = out->decode_cpu = 0;
    if (e->compress.kind == COMPRESS_NONE) {
        return 0;
    }
    int shards = e->servers > 0 ? e->servers : 1;
    compressor *c = compressor_new(&e->compress, n, shards, e->seed, 0, err);
    float *values = malloc(n * sizeof *values + sizeof *values);
    float *decoded = malloc(n * sizeof *decoded + sizeof *decoded);
    enum { REPS = 30 };
    double encoding[REPS], decoding[REPS];
    int rc = c && values && decoded ? 0 : -1;
    if (rc < 0 && c) {
        error_set(err, ERROR_RUNTIME, "calibrate: out of memory");
    }
    rng r = rng_derive(e->seed, RNG_SIM, 0x636f6d70);
    for (size_t i = 0; rc == 0 && i < n; i++) {   /* gradient-like: signs and sizes */
        values[i] = 1e-3f * (float)rng_normal(&r);
    }
    for (int i = 0; rc == 0 && i < REPS; i++) {
        double t0 = run_now();
        compressor_push(c, values);
        double t1 = run_now();
        const char *why;
        if (compress_decode(compress_format_of(&e->compress), e->compress.bits, c->payload[0],
                            c->len[0], c->hi[0] - c->lo[0], decoded, &why) < 0) {
            rc = error_set(err, ERROR_RUNTIME, "calibrate: its own payload: %s", why);
        }
        encoding[i] = t1 - t0;
        decoding[i] = run_now() - t1;
    }
    if (rc == 0) {
        qsort(encoding, REPS, sizeof *encoding, s_by_value);
        qsort(decoding, REPS, sizeof *decoding, s_by_value);
        out->compress_cpu = encoding[REPS / 2];
        out->decode_cpu = decoding[REPS / 2];
    }
    compressor_free(&c);
    free(values);
    free(decoded);
    return rc;
}

/* Loading the data and making the model, as every worker process does. */
static int s_startup(experiment *e, costs *out, error *err)
{
    double times[3];
    for (int i = 0; i < 3; i++) {
        double t0 = run_now();
        dataset train, test;
        backend *b = NULL;
        model *m = NULL;
        if (datacache_load(&train, &test, &e->data, e->seed, err) < 0) {
            return -1;
        }
        b = backend_new(&e->backend, err);
        m = b ? model_new(&e->model, b, train.dim, train.classes, err) : NULL;
        times[i] = run_now() - t0;
        bool made = m != NULL;
        model_destroy(&m);
        backend_destroy(&b);
        dataset_free(&train);
        dataset_free(&test);
        if (!made) {
            return -1;
        }
    }
    s_describe(times, 3, &out->startup_mean, &out->startup_sd);
    return 0;
}

static int s_write(const char *path, const char *config_path, const experiment *e,
                   const costs *c, error *err)
{
    provenance p;
    provenance_get(&p);
    char date[64];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    char device[128];   /* cpu or cuda: what the steps were timed on */
    backend_resolve(&e->backend, device, sizeof device);
    device[strcspn(device, " ")] = '\0';
    char compress[32];
    compress_spec_name(&e->compress, compress, sizeof compress);
    /* made in memory and written whole (run_write_atomic): an earlier
     * profile stays till then */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) {
        return error_set(err, ERROR_RUNTIME, "%s: out of memory", path);
    }
    fprintf(f, "; asgd calibrate: this host's costs for one experiment, for [sim] profile\n"
            "[host]\nhost = %s\ncpu = %s\ncores = %ld\ndate = %s\nconfig = %s\n"
            "model = %s\nparams = %zu\nbatch = %ld\ndevice = %s\ntransport = %s\n"
            "algorithm = %s\nservers = %d\ncompress = %s\nshm = %s\nasgd = %s\n\n[sim]\n"
            "compute = empirical\ncompute_quantiles = ", p.host, p.cpu, p.cores, date,
            config_path, model_type_name(e->model.type), e->nparams, e->batch, device,
            e->transport == TRANSPORT_TCP ? "tcp" : "ipc", e->algorithm_name, c->shards,
            compress, c->shared ? "on" : "off", p.version);
    for (int k = 0; k < CAL_QUANTILES; k++) {
        fprintf(f, "%s%.4g", k ? "," : "", c->quantiles[k]);
    }
    fprintf(f, "\ncompute_mean = %.6g\ncompute_sd = %.6g\nlatency = %.6g\nbandwidth = %.6g\n"
            "message_cpu = %.6g\ncopy_bandwidth = %.6g\napply = %.6g\nanswer = %.6g\n"
            "compress_cpu = %.6g\ndecode_cpu = %.6g\neval_cost = %.6g\n"
            "startup_mean = 0\nstartup_sd = 0\nstartup_cpu = %.6g\ncores = %ld\n"
            "timeslice = %.6g\nwakeup = %.6g\nmigration = %.6g\n",
            c->compute_mean, c->compute_sd, c->latency, c->bandwidth, c->message_cpu,
            c->copy_bandwidth, c->apply, c->answer, c->compress_cpu, c->decode_cpu, c->eval_cost,
            c->startup_mean, c->cores, c->timeslice, c->wakeup, c->migration);
    int rc = fclose(f) != 0 ? error_set(err, ERROR_RUNTIME, "%s: out of memory", path)
                            : run_write_atomic(path, text, len, NULL, 0, err);
    free(text);
    return rc;
}

/* -o checked before a minute of measuring: a folder that is there to
 * write into, and not the experiment's own config (it was overwritten
 * with the profile). */
static int s_check_out(const char *out, const char *config_path, error *err)
{
    char dir[4096], *a = realpath(out, NULL), *b = realpath(config_path, NULL);
    bool same = a && b && strcmp(a, b) == 0;
    free(a);
    free(b);
    const char *slash = strrchr(out, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - out) + (slash == out) : 1,
             slash ? out : ".");
    struct stat st;
    if (same) {
        return error_set(err, ERROR_USAGE, "-o %s is the experiment's config", out);
    }
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || access(dir, W_OK) != 0) {
        return error_set(err, ERROR_USAGE, "-o %s: %s is not a folder it can write into", out,
                         dir);
    }
    if (stat(out, &st) == 0 && S_ISDIR(st.st_mode)) {
        return error_set(err, ERROR_USAGE, "-o %s is a folder", out);
    }
    return 0;
}

/* `seconds` in the unit that gives it three significant digits: a pull's
 * answer takes ~1.5e-7 s, which "%.3f ms" printed as 0.000. */
static const char *s_duration(char *buf, size_t size, double seconds)
{
    /* the unit of the value as rounded: 0.9996 ms is "1 ms", not "1e+03 us" */
    snprintf(buf, size, "%.3g", seconds);
    seconds = strtod(buf, NULL);
    if (seconds != 0 && fabs(seconds) < 1e-3) {
        snprintf(buf, size, "%.3g us", seconds * 1e6);
    } else if (fabs(seconds) < 1) {
        snprintf(buf, size, "%.3g ms", seconds * 1e3);
    } else {
        snprintf(buf, size, "%.3g s", seconds);
    }
    return buf;
}

int calibrate_main(int argc, char **argv)
{
    const char *out = "profile.ini", *config_path = NULL;
    char *overrides[64];
    int noverrides = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
            out = argv[++i];
        } else if (strcmp(argv[i], "-o") == 0) {
            fprintf(stderr, "asgd calibrate: -o needs a value (PROFILE)\n");
            return ERROR_USAGE;
        } else if (!config_path && !config_looks_like_override(argv[i])) {
            config_path = argv[i];
        } else if (config_looks_like_override(argv[i]) && noverrides < 64) {
            overrides[noverrides++] = argv[i];
        } else {
            fprintf(stderr, "usage: asgd calibrate CONFIG [-o PROFILE] [section.key=value ...]\n");
            return ERROR_USAGE;
        }
    }
    if (!config_path) {
        fprintf(stderr, "usage: asgd calibrate CONFIG [-o PROFILE] [section.key=value ...]\n");
        return ERROR_USAGE;
    }
    error err = {0};
    if (s_check_out(out, config_path, &err) < 0) {
        fprintf(stderr, "asgd calibrate: %s\n", err.msg);
        return ERROR_USAGE;
    }
    experiment e;
    costs c = {.cores = proc_cores()};   /* its affinity and cgroup quota's, as a run's */
    c.timeslice = s_timeslice(c.cores);
    c.migration = s_migration();
    double t0 = run_now();
    int rc = experiment_configure(&e, config_path, noverrides, overrides, NULL, &err);
    if (rc == 0) {
        fputs(e.warnings, stderr);
        if (!e.alg) {
            rc = config_fail(e.c, "train", "algorithm", &err, "calibrate measures a "
                             "distributed rule's costs; the sequential baseline has none");
        } else {
            /* every process of a calibrated run is on this host */
            c.shared = experiment_shares_segments(&e);
            rc = experiment_load(&e, &err) < 0 || s_compute(&e, &c, &err) < 0 ||
                 s_messages(&e, e.nparams * sizeof(float) + WIRE_HEADER_SIZE, &c, &err) < 0 ||
                 s_copy(e.nparams * sizeof(float), &c, &err) < 0 ||
                 s_apply(&e, e.nparams, &c, &err) < 0 ||
                 s_compression(&e, e.nparams, &c, &err) < 0 || s_evaluation(&e, &c, &err) < 0 ||
                 s_startup(&e, &c, &err) < 0 ||
                 s_write(out, config_path, &e, &c, &err) < 0 ? -1 : 0;
        }
        experiment_destroy(&e);
    }
    if (rc < 0) {
        fprintf(stderr, "asgd: %s\n", err.msg);
        return err.status ? err.status : 1;
    }
    char d[9][32];
    printf("compute: %s a step of the rule (sd %s; q10 %s, median %s, q90 %s)\n"
           "messages: latency %s, %s of work at each end, ",
           s_duration(d[0], sizeof d[0], c.compute_mean),
           s_duration(d[1], sizeof d[1], c.compute_sd),
           s_duration(d[2], sizeof d[2], c.quantiles[1]),
           s_duration(d[3], sizeof d[3], c.quantiles[5]),
           s_duration(d[4], sizeof d[4], c.quantiles[9]),
           s_duration(d[5], sizeof d[5], c.latency), s_duration(d[6], sizeof d[6], c.message_cpu));
    if (c.shared) {
        printf("values copied through shared segments at %.2f GB/s\n", c.copy_bandwidth * 1e-9);
    } else {
        printf("bandwidth %.2f GB/s\n", c.bandwidth * 1e-9);
    }
    printf("apply: %s a push, %s a pull (at each of %d shards: shard 0's %zu values)\n",
           s_duration(d[0], sizeof d[0], c.apply), s_duration(d[1], sizeof d[1], c.answer),
           c.shards, c.shard_values);
    if (c.compress_cpu > 0) {
        printf("compression: %s to compress a push, %s to decode shard 0's part\n",
               s_duration(d[0], sizeof d[0], c.compress_cpu),
               s_duration(d[1], sizeof d[1], c.decode_cpu));
    }
    printf("evaluation: %s\nstartup: %s of work (sd %s)\n",
           s_duration(d[0], sizeof d[0], c.eval_cost), s_duration(d[1], sizeof d[1], c.startup_mean),
           s_duration(d[2], sizeof d[2], c.startup_sd));
    printf("cores: %ld, a timeslice of %s, %s to wake one, a task cache-hot for %s\n"
           "wrote %s in %.1f s\n", c.cores, s_duration(d[0], sizeof d[0], c.timeslice),
           s_duration(d[1], sizeof d[1], c.wakeup), s_duration(d[2], sizeof d[2], c.migration),
           out, run_now() - t0);
    return 0;
}
