/* bench_transport.c: parameter-server round trips against raw ZeroMQ.
 *
 * For each transport (ipc, tcp on loopback) and parameter vector (1 MB,
 * 8 MB), measured side by side in one run, alternating REPS times:
 *   raw   a DEALER sends the vector to a ROUTER in another process, which
 *         sends it back (zmq_send / zmq_recv, copying as usual);
 *   asgd  a worker's push of the vector and pull of the model (peers.c,
 *         the code workers run) against `ps_serve` in another process
 *         applying each push with the hogwild rule.
 * Both move the vector twice per round trip. Prints a Markdown table of
 * medians: round trips/s, GB/s (both directions), and asgd / raw. A
 * second table compares asgd over tcp without authentication and with
 * cluster.auth = curve (every message encrypted and authenticated), for a
 * small (32 KB) vector as well.
 *   bench_transport [SECONDS_PER_MEASUREMENT] [REPS] */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <zmq.h>

#include "algorithms/algorithm.h"
#include "core/real/peers.h"
#include "core/real/ps.h"
#include "algorithms/server.h"
#include "core/run.h"
#include "core/stop.h"
#include "transport/auth.h"

static double s_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void s_raw_echo(const char *endpoint)
{
    void *ctx = zmq_ctx_new();
    void *router = zmq_socket(ctx, ZMQ_ROUTER);
    zmq_bind(router, endpoint);
    for (;;) {
        zmq_msg_t id, body;
        zmq_msg_init(&id);
        zmq_msg_init(&body);
        if (zmq_msg_recv(&id, router, 0) < 0 || zmq_msg_recv(&body, router, 0) < 0) {
            break;
        }
        if (zmq_msg_size(&body) == 0) {
            break;
        }
        zmq_msg_send(&id, router, ZMQ_SNDMORE);
        /* send a copy back, as a server replying from its own buffer does */
        zmq_send(router, zmq_msg_data(&body), zmq_msg_size(&body), 0);
        zmq_msg_close(&body);
    }
    zmq_close(router);
    zmq_ctx_term(ctx);
    _exit(0);
}

static double s_measure_raw(const char *endpoint, size_t bytes, double seconds)
{
    pid_t pid = fork();
    if (pid == 0) {
        s_raw_echo(endpoint);
    }
    void *ctx = zmq_ctx_new();
    void *dealer = zmq_socket(ctx, ZMQ_DEALER);
    zmq_connect(dealer, endpoint);
    char *buf = calloc(1, bytes), *back = malloc(bytes);
    long trips = 0;
    double start = 0;
    for (int warm = 0;; warm++) {
        if (warm == 3) {
            start = s_now();
        }
        zmq_send(dealer, buf, bytes, 0);
        zmq_recv(dealer, back, bytes, 0);
        if (warm >= 3) {
            trips++;
            if (s_now() - start >= seconds) {
                break;
            }
        }
    }
    double rate = trips / (s_now() - start);
    zmq_send(dealer, "", 0, 0);
    waitpid(pid, NULL, 0);
    zmq_close(dealer);
    zmq_ctx_term(ctx);
    free(buf);
    free(back);
    return rate;
}

/* The keys' folder for CURVE runs ("" until made). */
static char s_keys[64];

static double s_measure_asgd(const char *address, size_t bytes, double seconds, bool curve)
{
    net_auth server_keys, worker_keys;
    error err = {0};
    if (curve && (auth_load(&server_keys, s_keys, "server", &err) < 0 ||
                  auth_load(&worker_keys, s_keys, "worker-0", &err) < 0)) {
        fprintf(stderr, "bench: %s\n", err.msg);
        exit(1);
    }
    uint64_t n = bytes / sizeof(float);
    float *init = calloc(n, sizeof *init);
    const algorithm *alg = algorithm_find("hogwild");
    optim_spec sgd = {.kind = OPTIM_SGD, .lr = 0.01};
    config *c = config_parse_string("", "bench", &err);
    rule_context rc = {.workers = 1, .optim = &sgd};
    rule_info info = {.server_threads = 1, .server_optim = sgd, .local_optim = sgd};
    void *params = alg->configure(c, &rc, &info, &err);
    config_destroy(&c);
    pid_t pid = fork();
    if (pid == 0) {
        server *s = server_new(alg, params, &info, 0, 1, 1, init, n);
        char endpoint[600];
        net_endpoint(endpoint, sizeof endpoint, address, true);
        void *ctx = zmq_ctx_new();
        ps_options o = {.endpoint = endpoint, .expect_evaluator = false,
                        .auth = curve ? &server_keys : NULL, .checkpoint = ""};
        shard_client client = {0};
        stop_install();
        int rc = ps_serve(s, ctx, &o, &client, 1, &err);
        zmq_ctx_term(ctx);   /* lets the last ack leave */
        _exit(rc == 0 ? 0 : 1);
    }
    cluster_spec cs = {.servers = 1};
    snprintf(cs.ps[0], sizeof cs.ps[0], "%s", address);
    peers p;
    peers_options po = {.timeout = 30, .resend = 30, .auth = curve ? &worker_keys : NULL};
    if (peers_open(&p, &cs, n, 0, &po, &err) < 0) {
        fprintf(stderr, "bench: %s\n", err.msg);
        exit(1);
    }
    float *theta = calloc(n, sizeof *theta), *grad = calloc(n, sizeof *grad);
    uint64_t version = 0;
    long trips = 0;
    double start = 0;
    for (int warm = 0;; warm++) {
        if (warm == 3) {
            start = s_now();
        }
        if (peers_settle(&p, &err) < 0) {
            fprintf(stderr, "bench: %s\n", err.msg);
            exit(1);
        }
        if (peers_push(&p, grad, 0, &version, 1, false, &err) < 0 ||
            peers_pull(&p, theta, 0, &version, NULL, NULL, NULL, &err) < 0) {
            fprintf(stderr, "bench: %s\n", err.msg);
            exit(1);
        }
        if (warm >= 3) {
            trips++;
            if (s_now() - start >= seconds) {
                break;
            }
        }
    }
    double rate = trips / (s_now() - start);
    /* the shard's only worker is done: it stops */
    if (peers_control(&p, WIRE_CONTROL_DONE, NULL, NULL, &err) < 0) {
        fprintf(stderr, "bench: %s\n", err.msg);
        exit(1);
    }
    waitpid(pid, NULL, 0);
    peers_close(&p);
    free(theta);
    free(grad);
    free(init);
    free(params);
    if (curve) {
        auth_free(&server_keys);
        auth_free(&worker_keys);
    }
    return rate;
}

static int s_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double s_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, s_cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;   /* even n: the middle two's mean */
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 2.0;
    int reps = argc > 2 ? atoi(argv[2]) : 3;
    if (reps < 1 || reps > 32 || seconds <= 0) {
        fprintf(stderr, "usage: bench_transport [SECONDS] [REPS (1..32)]\n");
        return 2;
    }
    const size_t sizes[2] = {1 << 20, 8 << 20};
    char dir[] = "/tmp/asgd-bench-XXXXXX";
    if (!mkdtemp(dir)) {
        return 1;
    }
    printf("| transport | vector | raw ZeroMQ round trips/s | raw GB/s | asgd push+pull/s | "
           "asgd GB/s | asgd / raw |\n| --- | --- | --- | --- | --- | --- | --- |\n");
    for (int tcp = 0; tcp < 2; tcp++) {
        for (int s = 0; s < 2; s++) {
            double raw[32], ps[32];
            for (int r = 0; r < reps; r++) {
                char raw_ep[128], ps_addr[128];
                if (tcp) {
                    snprintf(raw_ep, sizeof raw_ep, "tcp://127.0.0.1:%d", 47311 + r);
                    snprintf(ps_addr, sizeof ps_addr, "127.0.0.1:%d", 47351 + r);
                } else {
                    snprintf(raw_ep, sizeof raw_ep, "ipc://%s/raw-%d", dir, r);
                    snprintf(ps_addr, sizeof ps_addr, "ipc://%s/ps-%d", dir, r);
                }
                raw[r] = s_measure_raw(raw_ep, sizes[s], seconds);
                ps[r] = s_measure_asgd(ps_addr, sizes[s], seconds, false);
            }
            double mr = s_median(raw, reps), mp = s_median(ps, reps);
            double gb = 2.0 * (double)sizes[s] / 1e9;
            printf("| %s | %zu MB | %.0f | %.2f | %.0f | %.2f | %.2f |\n", tcp ? "tcp" : "ipc",
                   sizes[s] >> 20, mr, mr * gb, mp, mp * gb, mp / mr);
            fflush(stdout);
        }
    }
    error err = {0};
    snprintf(s_keys, sizeof s_keys, "%s/keys", dir);
    if (auth_make_keys(s_keys, 1, &err) < 0) {
        fprintf(stderr, "bench: %s\n", err.msg);
        return 1;
    }
    printf("\n| vector | auth = none push+pull/s | none GB/s | auth = curve push+pull/s | "
           "curve GB/s | curve / none |\n| --- | --- | --- | --- | --- | --- |\n");
    const size_t curve_sizes[3] = {32 << 10, 1 << 20, 8 << 20};
    for (int s = 0; s < 3; s++) {
        double none[32], curve[32];
        for (int r = 0; r < reps; r++) {
            char addr[64];
            snprintf(addr, sizeof addr, "127.0.0.1:%d", 47391 + 2 * r);
            none[r] = s_measure_asgd(addr, curve_sizes[s], seconds, false);
            snprintf(addr, sizeof addr, "127.0.0.1:%d", 47392 + 2 * r);
            curve[r] = s_measure_asgd(addr, curve_sizes[s], seconds, true);
        }
        double mn = s_median(none, reps), mc = s_median(curve, reps);
        double gb = 2.0 * (double)curve_sizes[s] / 1e9;
        printf("| %zu KB | %.0f | %.2f | %.0f | %.2f | %.2f |\n", curve_sizes[s] >> 10, mn,
               mn * gb, mc, mc * gb, mc / mn);
        fflush(stdout);
    }
    return run_remove_dir(dir, &err) < 0 ? 1 : 0;
}
