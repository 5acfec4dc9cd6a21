/* calibrate.c: measuring this host for the simulator (calibrate.h). */
#include "core/real/calibrate.h"

#include <math.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <zmq.h>

#include "algorithms/server.h"
#include "algorithms/worker.h"
#include "core/datacache.h"
#include "core/experiment.h"
#include "core/model.h"
#include "core/partition.h"
#include "core/provenance.h"
#include "core/run.h"
#include "transport/wire.h"

#define CAL_QUANTILES 11   /* q0, q10, ..., q100: a config line holds 198 characters */
#define CAL_STEPS 200

typedef struct costs {
    double quantiles[CAL_QUANTILES], compute_mean, compute_sd;
    double latency, bandwidth, apply, startup_mean, startup_sd;
    long cores;
} costs;

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

/* One worker's minibatches of the configured model: 10 to warm up, then
 * CAL_STEPS timed. */
static int s_compute(experiment *e, costs *out, error *err)
{
    backend *b = backend_new(&e->backend, err);
    model *m = b ? model_new(&e->model, b, e->train.dim, e->train.classes, err) : NULL;
    shard part = {0};
    worker w = {0};
    worker_spec spec = experiment_worker_spec(e, e->train.n);
    int rc = -1;
    if (m && partition_take(&part, e->workers, 0, &e->train, e->partition, e->partition_alpha,
                            e->seed, err) == 0 &&
        worker_init(&w, &spec, 0, m, &e->train, &part, err) == 0) {
        model_init_params(m, w.theta, e->seed);
        double times[CAL_STEPS];
        for (int i = -10; i < CAL_STEPS; i++) {
            double t0 = run_now();
            worker_gradient(&w);
            if (i >= 0) {
                times[i] = run_now() - t0;
            }
        }
        s_describe(times, CAL_STEPS, &out->compute_mean, &out->compute_sd);
        for (int k = 0; k < CAL_QUANTILES; k++) {   /* linear between order statistics */
            double at = (double)k / (CAL_QUANTILES - 1) * (CAL_STEPS - 1);
            int i = (int)at < CAL_STEPS - 1 ? (int)at : CAL_STEPS - 2;
            out->quantiles[k] = times[i] + (times[i + 1] - times[i]) * (at - i);
        }
        worker_free(&w);
        rc = 0;
    }
    partition_free(&part, 1);
    model_destroy(&m);
    backend_destroy(&b);
    return rc;
}

/* The far end of the message measurement: sends every message back. */
typedef struct echo {
    void *socket;
} echo;

static void *s_echo(void *arg)
{
    echo *x = arg;
    for (;;) {
        zmq_msg_t id, body;
        zmq_msg_init(&id);
        zmq_msg_init(&body);
        if (zmq_msg_recv(&id, x->socket, 0) < 0 || zmq_msg_recv(&body, x->socket, 0) < 0) {
            zmq_msg_close(&id);
            zmq_msg_close(&body);
            break;   /* the context is ending */
        }
        bool last = zmq_msg_size(&body) == 0;
        zmq_msg_send(&id, x->socket, ZMQ_SNDMORE);
        zmq_msg_send(&body, x->socket, 0);
        zmq_msg_close(&id);
        zmq_msg_close(&body);
        if (last) {
            break;
        }
    }
    return NULL;
}

/* The median round trip of `reps` messages of `bytes` bytes. */
static double s_round_trip(void *dealer, char *buf, size_t bytes, int reps)
{
    double *times = malloc((size_t)reps * sizeof *times), mean, sd;
    for (int i = -5; times && i < reps; i++) {
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

/* A header alone and the whole vector, there and back over the configured
 * transport on this host. */
static int s_messages(const experiment *e, size_t bytes, costs *out, error *err)
{
    char endpoint[256];
    if (e->transport == TRANSPORT_TCP) {
        snprintf(endpoint, sizeof endpoint, "tcp://127.0.0.1:*");
    } else {
        snprintf(endpoint, sizeof endpoint, "ipc:///tmp/asgd-calibrate-%ld", (long)getpid());
    }
    void *ctx = zmq_ctx_new();
    void *router = ctx ? zmq_socket(ctx, ZMQ_ROUTER) : NULL;
    void *dealer = ctx ? zmq_socket(ctx, ZMQ_DEALER) : NULL;
    char *buf = malloc(bytes);
    size_t len = sizeof endpoint;
    int linger = 0;
    if (!router || !dealer || !buf || zmq_bind(router, endpoint) != 0 ||
        zmq_getsockopt(router, ZMQ_LAST_ENDPOINT, endpoint, &len) != 0 ||
        zmq_connect(dealer, endpoint) != 0) {
        error_set(err, ERROR_RUNTIME, "calibrate: %s: %s", endpoint, zmq_strerror(zmq_errno()));
        free(buf);
        if (ctx) {
            zmq_ctx_term(ctx);
        }
        return -1;
    }
    memset(buf, 1, bytes);
    echo x = {router};
    pthread_t thread;
    pthread_create(&thread, NULL, s_echo, &x);
    double small = s_round_trip(dealer, buf, WIRE_HEADER_SIZE, 500);
    double large = s_round_trip(dealer, buf, bytes, 50);
    zmq_send(dealer, "", 0, 0);   /* the echo's last */
    zmq_recv(dealer, buf, bytes, 0);
    pthread_join(thread, NULL);
    zmq_setsockopt(dealer, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(router, ZMQ_LINGER, &linger, sizeof linger);
    zmq_close(dealer);
    zmq_close(router);
    zmq_ctx_term(ctx);
    free(buf);
    if (strncmp(endpoint, "ipc://", 6) == 0) {
        unlink(endpoint + 6);
    }
    out->latency = small / 2;
    /* the one-way time the large message takes beyond a small one */
    double extra = (large - small) / 2;
    out->bandwidth = extra > 0 ? (double)(bytes - WIRE_HEADER_SIZE) / extra : 1e15;
    return 0;
}

/* The rule's server step: pushes of small values into a shard of the whole
 * vector, each tagged as its round expects. */
static int s_apply(const experiment *e, size_t n, costs *out, error *err)
{
    float *init = calloc(n, sizeof *init), *values = malloc(n * sizeof *values);
    server *s = init && values ? server_new(e->alg, e->rule, &e->rule_info, 0, 1, e->workers,
                                            init, n)
                               : NULL;
    if (!s) {
        free(init);
        free(values);
        return error_set(err, ERROR_RUNTIME, "calibrate: out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        values[i] = 1e-6f * (float)(i % 7);
    }
    const int pushes = 100;
    double t0 = run_now();
    for (int i = 0; i < pushes; i++) {
        uint64_t version = atomic_load(&s->version);
        push_msg m = {.worker = (uint32_t)(i % e->workers), .tag = version,
                      .base_version = version, .samples = (uint32_t)e->batch,
                      .values = values};
        server_push(s, &m);
    }
    out->apply = (run_now() - t0) / pushes;
    server_destroy(&s);
    free(init);
    free(values);
    return 0;
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
    FILE *f = fopen(path, "w");
    if (!f) {
        return error_set(err, ERROR_RUNTIME, "%s: cannot write", path);
    }
    fprintf(f, "; asgd calibrate: this host's costs for one experiment, for [sim] profile\n"
            "[host]\nhost = %s\ncpu = %s\ncores = %ld\ndate = %s\nconfig = %s\n"
            "model = %s\nbatch = %ld\ntransport = %s\nalgorithm = %s\nasgd = %s\n\n[sim]\n"
            "compute = empirical\ncompute_quantiles = ", p.host, p.cpu, p.cores, date,
            config_path, model_type_name(e->model.type), e->batch,
            e->transport == TRANSPORT_TCP ? "tcp" : "ipc", e->algorithm_name, p.version);
    for (int k = 0; k < CAL_QUANTILES; k++) {
        fprintf(f, "%s%.4g", k ? "," : "", c->quantiles[k]);
    }
    fprintf(f, "\ncompute_mean = %.6g\ncompute_sd = %.6g\nlatency = %.6g\nbandwidth = %.6g\n"
            "apply = %.6g\nstartup_mean = %.6g\nstartup_sd = %.6g\ncores = %ld\n",
            c->compute_mean, c->compute_sd, c->latency, c->bandwidth, c->apply,
            c->startup_mean, c->startup_sd, c->cores);
    if (fclose(f) != 0) {
        return error_set(err, ERROR_RUNTIME, "%s: cannot write", path);
    }
    return 0;
}

int calibrate_main(int argc, char **argv)
{
    const char *out = "profile.ini", *config_path = NULL;
    char *overrides[64];
    int noverrides = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
            out = argv[++i];
        } else if (!config_path && !strchr(argv[i], '=')) {
            config_path = argv[i];
        } else if (strchr(argv[i], '=') && noverrides < 64) {
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
    experiment e;
    costs c = {.cores = sysconf(_SC_NPROCESSORS_ONLN)};
    double t0 = run_now();
    int rc = experiment_configure(&e, config_path, noverrides, overrides, NULL, &err);
    if (rc == 0) {
        fputs(e.warnings, stderr);
        if (!e.alg) {
            rc = config_fail(e.c, "train", "algorithm", &err, "calibrate measures a "
                             "distributed rule's costs; the sequential baseline has none");
        } else {
            rc = experiment_load(&e, &err) < 0 || s_compute(&e, &c, &err) < 0 ||
                 s_messages(&e, e.nparams * sizeof(float) + WIRE_HEADER_SIZE, &c, &err) < 0 ||
                 s_apply(&e, e.nparams, &c, &err) < 0 || s_startup(&e, &c, &err) < 0 ||
                 s_write(out, config_path, &e, &c, &err) < 0 ? -1 : 0;
        }
        experiment_destroy(&e);
    }
    if (rc < 0) {
        fprintf(stderr, "asgd: %s\n", err.msg);
        return err.status ? err.status : 1;
    }
    printf("compute: %.3f ms a minibatch (sd %.3f; q10 %.3f, median %.3f, q90 %.3f)\n"
           "messages: latency %.1f us, bandwidth %.2f GB/s\n"
           "apply: %.3f ms a push\nstartup: %.3f s (sd %.3f)\ncores: %ld\n"
           "wrote %s in %.1f s\n",
           c.compute_mean * 1e3, c.compute_sd * 1e3, c.quantiles[1] * 1e3,
           c.quantiles[5] * 1e3, c.quantiles[9] * 1e3, c.latency * 1e6, c.bandwidth * 1e-9,
           c.apply * 1e3, c.startup_mean, c.startup_sd, c.cores, out, run_now() - t0);
    return 0;
}
