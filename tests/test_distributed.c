/* test_distributed.c: distributed jobs as real processes over ZeroMQ.
 *  - sync and hogwild over ipc and tcp learn, and leave a complete folder;
 *  - with one worker both follow the sequential baseline exactly;
 *  - a killed worker is restarted under on-failure and fails the job
 *    cleanly under never;
 *  - SIGINT to the launcher leaves no process, no bound port, no socket file;
 *  - eval.csv's rows never step back in time, and the last is at time_s;
 *  - a live server given garbage keeps serving, parameters untouched,
 *    rejects counted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <float.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cJSON.h>
#include <zmq.h>

#include "algorithms/algorithm.h"
#include "core/experiment.h"
#include "core/model.h"
#include "transport/net.h"
#include "transport/wire.h"
#include "support.h"
#include "wire_client.h"

/* A job long enough (a few seconds) to interfere with. */
static const char s_long_job[] =
    "[experiment]\nname = job\nrun_id = r\n"
    "[data]\ndataset = synthetic\ntrain_size = 10000\ndim = 32\n"
    "[model]\ntype = mlp\nhidden = 256,256\n"
    "[train]\nalgorithm = hogwild\nepochs = 6\nbatch = 32\nlr = 0.05\n"
    "[eval]\nevery = 0.5\n"
    "[cluster]\nworkers = 2\n";

static void s_run_dir(const support_fixture *f, char *buf, size_t n)
{
    size_t len = strcspn(f->r.out, "\n");
    assert_true(len > 0 && len < n);
    memcpy(buf, f->r.out, len);
    buf[len] = '\0';
}

/* First and last test loss in eval.csv; the first row is the initial
 * model, at time 0 and update 0. Its times never step back, and a
 * finished run's last row is at the summary's time_s, the end of
 * training. */
static void s_eval_ends(const char *dir, double *first, double *last)
{
    char path[4200], line[512];
    snprintf(path, sizeof path, "%s/eval.csv", dir);
    FILE *in = fopen(path, "r");
    assert_non_null(in);
    int rows = 0;
    double before = 0;
    while (fgets(line, sizeof line, in)) {
        double t, epoch, loss, acc;
        long u, s;
        if (sscanf(line, "%lf,%lf,%ld,%ld,%lf,%lf", &t, &epoch, &u, &s, &loss, &acc) == 6) {
            if (rows++ == 0) {
                *first = loss;
                assert_true(t == 0 && u == 0 && s == 0);
            }
            if (t < before) {
                fail_msg("%s: row %d at %.6f s, after a row at %.6f s", path, rows, t, before);
            }
            before = t;
            *last = loss;
        }
    }
    fclose(in);
    assert_true(rows >= 2);
    snprintf(path, sizeof path, "%s/summary.json", dir);
    cJSON *j = support_json_file(path);
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "complete"))) {
        double time_s = support_json_number(j, "time_s");
        if (fabs(time_s - before) > 2e-6) {
            fail_msg("%s: time_s %.6f, the last row of eval.csv at %.6f s", dir, time_s, before);
        }
    }
    cJSON_Delete(j);
}

/* The ipc folder named in log.txt, if any, must be gone. */
static void s_expect_no_ipc_left(const char *dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/log.txt", dir);
    char *log = support_read_file(path);
    assert_non_null(log);
    char *ipc = strstr(log, "ipc:///tmp/asgd-");
    if (ipc) {
        char folder[64];
        snprintf(folder, sizeof folder, "%.*s", (int)strcspn(ipc + 6, "/") + 1 + 15, ipc + 6);
        folder[strlen("/tmp/asgd-XXXXXX")] = '\0';
        struct stat st;
        if (stat(folder, &st) == 0) {
            fail_msg("%s was left behind", folder);
        }
    }
    free(log);
}

/* Time runs from the first training step, not from the launch: processes'
 * start-up is startup_s; the first step's row comes early in time_s; the
 * evaluation after the initial one is eval.every (0.2 s) or more after
 * the first step, never before, unless it is the final one (training can
 * end sooner). Training ends at the last push: the final evaluation's
 * row is stamped time_s (not when the evaluator's poll saw the end), and
 * time_s is the shards' first pull to their last push, train_time_s (not
 * until the launcher saw the workers exit; train_time_s, and so
 * samples/s, was shard 0's alone, a few ms short of two shards' span).
 * Except where a periodic evaluation came between the last push and the
 * workers' done (under the sanitizers, 2 ms after a 0.2 s run's end): it
 * saw the final model, and the final row, never before it, takes its
 * time, which is then time_s. */
static void s_expect_time_from_first_step(const char *dir, const cJSON *summary)
{
    double time_s = support_json_number(summary, "time_s");
    double startup_s = support_json_number(summary, "startup_s");
    double train_time_s = support_json_number(summary, "train_time_s");
    if (time_s < train_time_s - 1e-6) {
        fail_msg("time_s %.6f, train_time_s %.6f", time_s, train_time_s);
    }
    assert_true(startup_s > 0);
    char path[4200];
    snprintf(path, sizeof path, "%s/steps.csv", dir);
    char *steps = support_read_file(path);
    double first = strtod(strchr(steps, '\n') + 1, NULL);
    free(steps);
    assert_true(first >= 0 && first < time_s / 2);
    snprintf(path, sizeof path, "%s/eval.csv", dir);
    char *eval = support_read_file(path);
    const char *row1 = strchr(eval, '\n') + 1, *row2 = strchr(row1, '\n') + 1;
    const char *row3 = strchr(row2, '\n') + 1;
    assert_true(strtod(row1, NULL) == 0);
    assert_true(strtod(row2, NULL) >= 0.2 - 1e-6 || (*row3 == '\0' && strtod(row2, NULL) > 0));
    const char *last = row2, *before = row1;
    for (const char *row = row3; *row; row = strchr(row, '\n') + 1) {
        before = last;
        last = row;
    }
    if (fabs(strtod(last, NULL) - time_s) > 1e-6) {
        fail_msg("the final evaluation is stamped %g s, training ended at %g s",
                 strtod(last, NULL), time_s);
    }
    /* past the training's end only at a periodic row of the final model */
    if (time_s > train_time_s + 1e-6 &&
        (strtod(before, NULL) != strtod(last, NULL) ||
         strtol(strchr(strchr(before, ',') + 1, ',') + 1, NULL, 10) !=
             strtol(strchr(strchr(last, ',') + 1, ',') + 1, NULL, 10))) {
        fail_msg("time_s %.6f past train_time_s %.6f, but not at a periodic row of the final "
                 "model", time_s, train_time_s);
    }
    free(eval);
}

/* eval.csv's rows of one `updates` hold one model: one test loss (a
 * lockstep rule's shard 0 could be a round ahead of the others when the
 * evaluator pulled). */
static void s_expect_one_model_per_update(const char *dir)
{
    char path[4200], line[512];
    snprintf(path, sizeof path, "%s/eval.csv", dir);
    FILE *in = fopen(path, "r");
    assert_non_null(in);
    long last_u = -1;
    double last_loss = 0;
    while (fgets(line, sizeof line, in)) {
        double t, epoch, loss, acc;
        long u, samples;
        if (sscanf(line, "%lf,%lf,%ld,%ld,%lf,%lf", &t, &epoch, &u, &samples, &loss, &acc) != 6) {
            continue;
        }
        if (u == last_u && loss != last_loss) {
            fail_msg("%s: two rows of %ld updates, test loss %.9g and %.9g", dir, u, last_loss,
                     loss);
        }
        last_u = u;
        last_loss = loss;
    }
    fclose(in);
}

static void s_train_and_check(support_fixture *f, const char *algorithm, const char *transport,
                              const char *extra)
{
    char alg[64], tr[64];
    snprintf(alg, sizeof alg, "train.algorithm=%s", algorithm);
    snprintf(tr, sizeof tr, "cluster.transport=%s", transport);
    const char *args[] = {"train", "/dev/null", f->out_arg, alg, tr, extra,
                          "data.dataset=synthetic", "model.type=mlp", "model.hidden=32",
                          "train.epochs=4", "train.lr=0.1", "eval.every=0.2", NULL};
    support_run_asgd(&f->r, f->dir, args);
    if (f->r.status != 0) {   /* the log names the failing process's reason; the
                               * fixture's folder is gone after the test */
        const char *see = strstr(f->r.err, "see ");
        char log_path[4200] = "";
        if (see) {
            snprintf(log_path, sizeof log_path, "%.*s", (int)strcspn(see + 4, " \n"), see + 4);
        }
        char *log = log_path[0] ? support_read_file(log_path) : NULL;
        size_t len = log ? strlen(log) : 0;
        fail_msg("%s over %s failed: %s\nits log.txt, the end:\n%s", algorithm, transport,
                 f->r.err, log ? log + (len > 3000 ? len - 3000 : 0) : "(none)");
    }
    char dir[4096], path[4200];
    s_run_dir(f, dir, sizeof dir);
    double first, last;
    s_eval_ends(dir, &first, &last);
    if (!(last < 0.7 * first)) {
        fail_msg("%s: test loss %g -> %g", algorithm, first, last);
    }
    snprintf(path, sizeof path, "%s/summary.json", dir);
    cJSON *j = support_json_file(path);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "complete")));
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(j, "algorithm")->valuestring, algorithm);
    assert_true(support_json_number(j, "updates") > 0);
    assert_true(support_json_number(j, "rejected") == 0);
    assert_true(support_json_number(j, "samples_per_s") > 0);
    support_check_run_arithmetic(dir, 10000);
    assert_true(support_json_number(j, "staleness_max") >= support_json_number(j, "staleness_mean"));
    int workers = (int)support_json_number(j, "workers");
    assert_true(support_json_number(j, "params") == (32 + 1) * 32 + (32 + 1) * 10);   /* dim 32, mlp 32, 10 classes */
    /* every worker's steps were merged: a header and a row a step, the
     * epochs' minibatches exactly (sync: the same whole number each) */
    snprintf(path, sizeof path, "%s/steps.csv", dir);
    long total = (long)ceil(4.0 * 10000 / 64);
    long steps = strcmp(algorithm, "sync") == 0 ? workers * ((total + workers / 2) / workers)
                                                : total;
    assert_int_equal(support_count_lines(path), 1 + steps);
    snprintf(path, sizeof path, "%s/steps-0.csv", dir);
    assert_int_equal(support_count_lines(path), 0);
    s_expect_time_from_first_step(dir, j);
    cJSON_Delete(j);
    s_expect_one_model_per_update(dir);
    s_expect_no_ipc_left(dir);
}

static void test_sync_over_tcp_with_two_shards(void **state)
{
    s_train_and_check(*state, "sync", "tcp", "cluster.servers=2");
}

/* The shards' TCP ports are distinct, free, and below the kernel's
 * ephemeral range: a port from bind(0) could be taken first by a
 * worker's connection (its source port) and the shard then failed to
 * bind (`ps 0 exited with status 1`, once in test_sync_over_tcp_with_two_shards). */
static void test_shard_ports_are_outside_the_ephemeral_range(void **state)
{
    int low = 32768, high = 60999;
    FILE *range = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
    if (range) {
        assert_int_equal(fscanf(range, "%d %d", &low, &high), 2);
        fclose(range);
    }
    enum { N = 64 };
    int ports[N];
    assert_int_equal(net_free_ports("127.0.0.1", ports, N), 0);
    for (int i = 0; i < N; i++) {
        assert_true(ports[i] >= NET_PORT_LOW && ports[i] < low);
        for (int k = 0; k < i; k++) {
            assert_int_not_equal(ports[i], ports[k]);
        }
        int fd = socket(AF_INET, SOCK_STREAM, 0);   /* and free: a shard can bind it */
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)ports[i]),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
        close(fd);
    }
    assert_int_equal(net_free_ports("not-an-address", ports, 1), -1);
    /* an explicit first port whose shards run past 65535 is the user's
     * error, named on its key before any run folder is made (the launcher
     * refused it after making one, naming no line) */
    support_fixture *f = *state;
    const char *args[] = {"train", "/dev/null", f->out_arg, "train.algorithm=hogwild",
                          "cluster.transport=tcp", "cluster.port=65535", "cluster.servers=2",
                          "data.dataset=synthetic", NULL};
    support_run_asgd(&f->r, f->dir, args);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "command line: cluster.port=65535: 65535: shard 1's port "
                                     "would be 65536, beyond 65535"));
    struct stat st;
    assert_int_not_equal(stat(f->out, &st), 0);   /* no run folder */
    /* a simulated job opens no port: there tcp is a cost model */
    const char *sim[] = {"train", "/dev/null", f->out_arg, "train.algorithm=hogwild",
                         "cluster.transport=tcp", "cluster.port=65535", "cluster.servers=2",
                         "data.dataset=synthetic", "experiment.mode=sim", "train.epochs=0.1",
                         NULL};
    support_run_asgd(&f->r, f->dir, sim);
    if (f->r.status != 0) {
        fail_msg("sim with port 65535 and 2 shards: %s", f->r.err);
    }
}

static void test_hogwild_over_ipc_with_apply_threads(void **state)
{
    s_train_and_check(*state, "hogwild", "ipc", "algorithm.server_threads=2");
}

/* Synchronous SGD with a backup worker over two shards: each round applies
 * two gradients on both shards alike, and every other push is dropped and
 * counted once. The count holds however the workers are scheduled (one
 * may even start after the others have finished): it is exactly the
 * pushes sent, one per step, less the two applied per round. */
static void test_sync_with_a_backup_worker_drops_gradients(void **state)
{
    support_fixture *f = *state;
    const char *args[] = {"train", "/dev/null", f->out_arg, "train.algorithm=sync",
                          "cluster.workers=3", "cluster.servers=2", "algorithm.backups=1",
                          "data.dataset=synthetic", "model.type=mlp", "model.hidden=16",
                          "train.epochs=2", NULL};
    support_run_asgd(&f->r, f->dir, args);
    if (f->r.status != 0) {
        fail_msg("%s", f->r.err);
    }
    char dir[4096], path[4200], path_summary[4200];
    s_run_dir(f, dir, sizeof dir);
    snprintf(path_summary, sizeof path_summary, "%s/summary.json", dir);
    cJSON *j = support_json_file(path_summary);
    double updates = support_json_number(j, "updates"), dropped = support_json_number(j, "dropped");
    cJSON_Delete(j);
    snprintf(path, sizeof path, "%s/steps.csv", dir);
    int pushes = support_count_lines(path) - 1;
    assert_true(updates == 104);   /* ceil(2 x 10000 / 64) = 313 minibatches: 104 rounds of 3 */
    if (dropped != pushes - 2 * updates) {
        fail_msg("%g dropped, but %d pushes for %g rounds of 2", dropped, pushes, updates);
    }
    for (int k = 0; k < 2; k++) {   /* the same rounds on both shards */
        assert_true(support_shard_number(dir, k, "version") == updates);
        assert_true(support_shard_number(dir, k, "pushes") == 2 * updates);
        assert_true(support_shard_number(dir, k, "dropped") == dropped);
    }
    /* the parts received: those applied and those dropped, of which
     * shared_pushes came through a segment (it was read as a share of
     * pushes, the applied alone: 144%) */
    j = support_json_file(path_summary);
    if (support_json_number(j, "push_messages") != 2 * (2 * updates + dropped) ||
        support_json_number(j, "shared_pushes") > support_json_number(j, "push_messages")) {
        fail_msg("push_messages %g, shared_pushes %g, for %g applied and %g dropped per shard",
                 support_json_number(j, "push_messages"), support_json_number(j, "shared_pushes"),
                 2 * updates, dropped);
    }
    cJSON_Delete(j);
}

/* Steps (index and loss) and the final loss of a one-worker run, for
 * comparison; extra: more overrides, NULL-terminated (or NULL). */
static char *s_trajectory(support_fixture *f, const char *algorithm, const char *const *extra)
{
    char alg[64];
    snprintf(alg, sizeof alg, "train.algorithm=%s", algorithm);
    const char *args[24] = {"train", "/dev/null", f->out_arg, alg, "cluster.workers=1",
                            "cluster.servers=2", "data.dataset=synthetic", "model.type=mlp",
                            "model.hidden=16,8", "train.epochs=2", "eval.every=0"};
    int n = 11;
    for (int i = 0; extra && extra[i]; i++) {
        args[n++] = extra[i];
    }
    args[n] = NULL;
    support_run_asgd(&f->r, f->dir, args);
    if (f->r.status != 0) {
        fail_msg("%s: %s", algorithm, f->r.err);
    }
    char dir[4096];
    s_run_dir(f, dir, sizeof dir);
    return support_trajectory(dir);
}

static void test_one_worker_follows_sequential_exactly(void **state)
{
    support_fixture *f = *state;
    const char *const downpour_sgd[] = {"algorithm.window=1", "algorithm.fetch=1",
                                        "algorithm.server_optimizer=sgd",
                                        "algorithm.local_optimizer=sgd", NULL};
    char *seq = s_trajectory(f, "sequential", NULL);
    char *sync = s_trajectory(f, "sync", NULL);
    char *hog = s_trajectory(f, "hogwild", NULL);
    char *down = s_trajectory(f, "downpour", downpour_sgd);
    char *dc = s_trajectory(f, "dcasgd", NULL);   /* theta never moves between pull and push */
    char *gap = s_trajectory(f, "gapaware", NULL);   /* no gap, so G = 0 */
    assert_true(strlen(seq) > 1000);
    assert_string_equal(sync, seq);
    assert_string_equal(hog, seq);
    assert_string_equal(down, seq);
    assert_string_equal(dc, seq);
    assert_string_equal(gap, seq);
    free(dc);
    free(gap);
    free(seq);
    free(sync);
    free(hog);
    free(down);
}

/* The pushes and pulled parameters of the run in f's newest run folder
 * that went through shared segments, and all its pushes; and that its
 * shard's byte counters count the values, whichever way they went (a
 * segment's were left out: bytes_in was 33 kB under 5.9 MB of pushes). */
static void s_shared(support_fixture *f, double *shared, double *pushes)
{
    char dir[4096], path[4200];
    s_run_dir(f, dir, sizeof dir);
    snprintf(path, sizeof path, "%s/summary.json", dir);
    cJSON *j = support_json_file(path);
    *shared = support_json_number(j, "shared_pushes");
    *pushes = support_json_number(j, "pushes");
    cJSON_Delete(j);
    snprintf(path, sizeof path, "%s/ps-0.json", dir);
    j = support_json_file(path);
    /* a pull's answer is as long as a push: there is one before every push */
    double in = support_json_number(j, "bytes_in"), out = support_json_number(j, "bytes_out");
    double pushed = support_json_number(j, "push_bytes");
    if (in < pushed || out < pushed) {
        fail_msg("ps-0.json: bytes_in %.0f or bytes_out %.0f under push_bytes %.0f", in, out,
                 pushed);
    }
    cJSON_Delete(j);
}

/* [cluster] shm: a worker on its shards' host passes its pushes and the
 * parameters it pulls through a segment it shares with each (auto, the
 * default, over ipc or loopback tcp) or through the sockets (off): the
 * very same steps either way, and the summary counts which. */
static void test_shared_segments_change_nothing_but_the_path(void **state)
{
    support_fixture *f = *state;
    const char *off[] = {"cluster.shm=off", NULL};
    const char *tcp[] = {"cluster.transport=tcp", NULL};
    double shared, pushes;
    char *through_sockets = s_trajectory(f, "hogwild", off);
    s_shared(f, &shared, &pushes);
    assert_true(pushes > 100 && shared == 0);
    char *through_segments = s_trajectory(f, "hogwild", NULL);
    s_shared(f, &shared, &pushes);
    assert_true(pushes > 100 && shared == pushes);
    char *over_tcp = s_trajectory(f, "hogwild", tcp);
    s_shared(f, &shared, &pushes);
    assert_true(pushes > 100 && shared == pushes);
    assert_string_equal(through_segments, through_sockets);
    assert_string_equal(over_tcp, through_sockets);
    free(through_sockets);
    free(through_segments);
    free(over_tcp);
}

/* [algorithm] prefetch = on: one worker's next pull goes out before its
 * gradient, so each shard answers it before that worker's previous push:
 * every push but the first is exactly one update stale, the simulator
 * takes the very steps the real processes take (AGN's window loop too),
 * DOWNPOUR with window = fetch = 1 and SGD takes Hogwild's, and it is not
 * the sequential path.
 * Rules that cannot prefetch refuse the key, and so do injected faults
 * (their acknowledged pushes would drop the early replies). */
static void test_prefetch_is_one_push_staler(void **state)
{
    support_fixture *f = *state;
    const char *on[] = {"algorithm.prefetch=on", NULL};
    char *real = s_trajectory(f, "hogwild", on);
    char dir[4096], path[4200];
    s_run_dir(f, dir, sizeof dir);
    snprintf(path, sizeof path, "%s/summary.json", dir);
    cJSON *j = support_json_file(path);
    double steps = support_json_number(j, "updates");   /* pushes: to each of 2 shards */
    assert_true(steps > 100 && support_json_number(j, "pushes") == 2 * steps);
    assert_true(support_json_number(j, "staleness_max") == 1);
    assert_true(fabs(support_json_number(j, "staleness_mean") - (steps - 1) / steps) < 1e-9);
    cJSON_Delete(j);
    const char *sim[] = {"experiment.mode=sim", "algorithm.prefetch=on", NULL};
    char *simulated = s_trajectory(f, "hogwild", sim);
    const char *down_on[] = {"algorithm.prefetch=on", "algorithm.window=1", "algorithm.fetch=1",
                             "algorithm.server_optimizer=sgd", "algorithm.local_optimizer=sgd",
                             NULL};
    char *down = s_trajectory(f, "downpour", down_on);
    char *seq = s_trajectory(f, "sequential", NULL);
    assert_string_equal(real, simulated);
    assert_string_equal(down, real);
    assert_string_not_equal(real, seq);
    free(real);
    free(simulated);
    free(down);
    free(seq);
    /* the window loop's early pull (its last step's gradient overlapped) */
    const char *agn_on[] = {"algorithm.prefetch=on", "algorithm.window=3", NULL};
    const char *agn_sim[] = {"algorithm.prefetch=on", "algorithm.window=3",
                             "experiment.mode=sim", NULL};
    real = s_trajectory(f, "agn", agn_on);
    simulated = s_trajectory(f, "agn", agn_sim);
    assert_string_equal(real, simulated);
    free(real);
    free(simulated);
    const char *refused[][3] = {{"train.algorithm=sync", "algorithm.prefetch=on", NULL},
                                {"train.algorithm=dcasgd", "algorithm.prefetch=on", NULL},
                                {"train.algorithm=easgd", "algorithm.prefetch=on", NULL},
                                {"train.algorithm=hogwild", "algorithm.prefetch=maybe", NULL},
                                {"train.algorithm=hogwild", "algorithm.prefetch=on",
                                 "cluster.drop=0.1"}};
    for (int i = 0; i < 5; i++) {
        const char *args[] = {"train", "/dev/null", f->out_arg, "data.dataset=synthetic",
                              refused[i][0], refused[i][1], refused[i][2], NULL};
        support_run_asgd(&f->r, f->dir, args);
        assert_int_equal(f->r.status, 2);
        if (!strstr(f->r.err, "prefetch")) {
            fail_msg("%s: \"%s\" does not name the key", refused[i][0], f->r.err);
        }
    }
}

/* Compressed pushes cross real processes as the simulator models them:
 * one worker over two shards takes the very steps in both (the shards
 * decode what the worker's compressor encoded, its random draws included),
 * with the same bytes per push; topk:1, which keeps every value, is
 * sequential SGD. */
static void test_compressed_pushes_match_the_simulator(void **state)
{
    support_fixture *f = *state;
    const char *kinds[][3] = {
        {"algorithm.compress=fp16", NULL},
        {"algorithm.compress=qsgd:4", NULL},
        {"algorithm.compress=randomk:0.5", "algorithm.error_feedback=on"},
        {"algorithm.compress=sign", "algorithm.error_feedback=on"},
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        char *real = s_trajectory(f, "hogwild", kinds[i]);
        char dir[4096], path[4200];
        s_run_dir(f, dir, sizeof dir);
        snprintf(path, sizeof path, "%s/summary.json", dir);
        cJSON *j = support_json_file(path);
        double bytes = support_json_number(j, "bytes_per_push");
        assert_true(support_json_number(j, "rejected") == 0);
        cJSON_Delete(j);
        const char *sim[] = {"experiment.mode=sim", kinds[i][0], kinds[i][1], NULL};
        char *simulated = s_trajectory(f, "hogwild", sim);
        s_run_dir(f, dir, sizeof dir);
        snprintf(path, sizeof path, "%s/summary.json", dir);
        j = support_json_file(path);
        assert_true(support_json_number(j, "bytes_per_push") == bytes);
        cJSON_Delete(j);
        if (strcmp(real, simulated) != 0) {
            fail_msg("%s: the real run's steps differ from the simulator's", kinds[i][0]);
        }
        free(real);
        free(simulated);
    }
    const char *whole[] = {"algorithm.compress=topk:1", NULL};
    char *seq = s_trajectory(f, "sequential", NULL);
    char *all = s_trajectory(f, "hogwild", whole);
    assert_string_equal(all, seq);
    free(seq);
    free(all);
}

/* Real workers replay a device trace by sleeping: worker 1's device is
 * away for its first second, so its first step comes no sooner than a
 * second into the run, while worker 0 has long begun; the run completes
 * with every sample pushed. */
static void test_real_workers_replay_a_trace(void **state)
{
    support_fixture *f = *state;
    char trace[4200], key[4300];
    snprintf(trace, sizeof trace, "%s/trace.csv", f->dir);
    support_write_file(trace, "device,speed,bandwidth,latency,off\n0,1,,,\n1,2,,,0-1\n");
    snprintf(key, sizeof key, "cluster.trace=%s", trace);
    const char *extra[] = {"cluster.workers=2", "cluster.servers=1", key, NULL};
    char *steps = s_trajectory(f, "hogwild", extra);
    free(steps);
    char dir[4096], path[4200];
    s_run_dir(f, dir, sizeof dir);
    snprintf(path, sizeof path, "%s/steps.csv", dir);
    char *text = support_read_file(path), *save;
    double first[2] = {1e9, 1e9};
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        double t;
        int worker;
        if (sscanf(line, "%lf,%d", &t, &worker) == 2 && worker >= 0 && worker < 2 &&
            t < first[worker]) {
            first[worker] = t;
        }
    }
    free(text);
    assert_true(first[1] >= 1.0 && first[1] < 1e9);
    assert_true(first[0] < first[1]);
    snprintf(path, sizeof path, "%s/summary.json", dir);
    cJSON *j = support_json_file(path);
    assert_true(support_json_number(j, "samples") == 313 * 64);   /* 2 epochs of 10,000 */
    cJSON_Delete(j);
}

/* Injected faults cost time and nothing else: with messages dropped, sent
 * twice and held, one worker's run over two shards takes the very steps it
 * takes without them (every lost request is sent again, every copy taken
 * once), and the summary counts the faults. Drop and duplicate are each a
 * share of all messages: together more than all is refused, naming the
 * key. */
static void test_faults_change_nothing_but_time(void **state)
{
    support_fixture *f = *state;
    const char *over[] = {"train", "/dev/null", f->out_arg, "data.dataset=synthetic",
                          "train.algorithm=hogwild", "cluster.drop=0.6",
                          "cluster.duplicate=0.5", NULL};
    support_run_asgd(&f->r, f->dir, over);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "cluster.duplicate=0.5: 0.5 with drop 0.6"));
    const char *const faulty[] = {"cluster.drop=0.1", "cluster.duplicate=0.05",
                                  "cluster.latency=0.0002", "cluster.jitter=0.0001",
                                  "cluster.resend=0.01", NULL};
    const char *rules[] = {"sync", "hogwild"};
    for (int i = 0; i < 2; i++) {
        char *clean = s_trajectory(f, rules[i], NULL);
        char *through = s_trajectory(f, rules[i], faulty);
        char dir[4096], path[4200];
        s_run_dir(f, dir, sizeof dir);
        snprintf(path, sizeof path, "%s/summary.json", dir);
        cJSON *j = support_json_file(path);
        assert_true(support_json_number(j, "injected_drops") > 10);
        assert_true(support_json_number(j, "injected_duplicates") > 5);
        cJSON_Delete(j);
        assert_true(strlen(clean) > 1000);
        assert_string_equal(through, clean);
        free(clean);
        free(through);
    }
}

/* AGN with window 1 is Hogwild, step for step. */
static void test_agn_window_one_follows_hogwild(void **state)
{
    support_fixture *f = *state;
    const char *const window1[] = {"algorithm.window=1", NULL};
    char *hog = s_trajectory(f, "hogwild", NULL);
    char *agn = s_trajectory(f, "agn", window1);
    assert_string_equal(agn, hog);
    free(hog);
    free(agn);
}

/* A run of `algorithm` with 3 workers on synthetic data; returns its
 * folder in dir. */
static void s_three_workers(support_fixture *f, const char *algorithm, const char *const *extra,
                            char *dir, size_t n)
{
    char alg[64];
    snprintf(alg, sizeof alg, "train.algorithm=%s", algorithm);
    const char *args[24] = {"train", "/dev/null", f->out_arg, alg, "cluster.workers=3",
                            "data.dataset=synthetic", "model.type=mlp", "model.hidden=32",
                            "train.epochs=4", "train.lr=0.05", "eval.every=0.1"};
    int k = 11;
    for (int i = 0; extra && extra[i]; i++) {
        args[k++] = extra[i];
    }
    args[k] = NULL;
    support_run_asgd(&f->r, f->dir, args);
    if (f->r.status != 0) {
        fail_msg("%s: %s", algorithm, f->r.err);
    }
    s_run_dir(f, dir, n);
}

/* The CNN (with dropout) through real workers: one worker follows the
 * sequential trajectory exactly, and three hogwild workers learn. */
static void test_cnn_workers(void **state)
{
    support_fixture *f = *state;
    const char *const cnn[] = {"model.type=cnn", "data.dim=36", "model.channels=2,3",
                               "model.kernel=3", "model.dropout=0.3", NULL};
    char *seq = s_trajectory(f, "sequential", cnn);
    char *sync = s_trajectory(f, "sync", cnn);
    assert_true(strlen(seq) > 1000);
    assert_string_equal(sync, seq);
    free(seq);
    free(sync);
    char dir[4096];
    s_three_workers(f, "hogwild", cnn, dir, sizeof dir);
    double first, last;
    s_eval_ends(dir, &first, &last);
    if (!(last < 0.8 * first)) {
        fail_msg("cnn hogwild: test loss %g -> %g", first, last);
    }
}

static void test_every_rule_learns_with_three_workers(void **state)
{
    support_fixture *f = *state;
    for (const algorithm *const *a = algorithm_all(); *a; a++) {
        char dir[4096];
        s_three_workers(f, (*a)->name, NULL, dir, sizeof dir);
        double first, last;
        s_eval_ends(dir, &first, &last);
        if (!(last < 0.8 * first)) {
            fail_msg("%s: test loss %g -> %g", (*a)->name, first, last);
        }
    }
}

/* With 5% of the data messages lost and 1% sent twice, every rule's job
 * still ends, every push of its workers' budgets taken exactly once. */
static void test_every_rule_finishes_through_faults(void **state)
{
    support_fixture *f = *state;
    const char *const faulty[] = {"cluster.drop=0.05", "cluster.duplicate=0.01",
                                  "cluster.resend=0.02", NULL};
    for (const algorithm *const *a = algorithm_all(); *a; a++) {
        char dir[4096], path[4200];
        s_three_workers(f, (*a)->name, faulty, dir, sizeof dir);
        double first, last;
        s_eval_ends(dir, &first, &last);
        if (!(last < 0.8 * first)) {
            fail_msg("%s: test loss %g -> %g", (*a)->name, first, last);
        }
        snprintf(path, sizeof path, "%s/summary.json", dir);
        cJSON *j = support_json_file(path);
        assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "complete")));
        assert_true(support_json_number(j, "injected_drops") > 0);
        cJSON_Delete(j);
    }
}

/* EASGD and asynchronous EASGD with alpha = 0 never move the centre:
 * every evaluation sees the initial model. */
static void test_elastic_rules_with_alpha_zero_never_move_the_centre(void **state)
{
    support_fixture *f = *state;
    const char *rules[] = {"easgd", "aeasgd", "aeamsgd"};
    const char *const alpha0[] = {"algorithm.alpha=0", NULL};
    for (int i = 0; i < 3; i++) {
        char dir[4096], path[4200], line[512];
        s_three_workers(f, rules[i], alpha0, dir, sizeof dir);
        snprintf(path, sizeof path, "%s/eval.csv", dir);
        FILE *in = fopen(path, "r");
        char first[512] = "";
        int rows = 0;
        while (fgets(line, sizeof line, in)) {
            char *loss = line;
            for (int c = 0; c < 4 && loss; c++) {
                loss = strchr(loss, ',') ? strchr(loss, ',') + 1 : NULL;
            }
            if (rows++ == 0) {
                continue;   /* header */
            }
            if (rows == 2) {
                snprintf(first, sizeof first, "%s", loss);
            }
            assert_string_equal(loss, first);
        }
        fclose(in);
        assert_true(rows >= 3);
    }
}

/* SSP: when worker A computes the gradient of step k, every other worker
 * has recorded at least k - 1 - s steps (each row is written before its
 * push, and A's pull waited for those pushes): clocks never differ by more
 * than s + 1. */
static void s_check_ssp_bound(const char *dir, int workers, long s)
{
    char path[4200], line[512];
    snprintf(path, sizeof path, "%s/steps.csv", dir);
    FILE *in = fopen(path, "r");
    assert_non_null(in);
    long done[64] = {0};   /* rows seen per worker so far, in time order */
    long rows = 0, widest = 0;
    assert_non_null(fgets(line, sizeof line, in));
    while (fgets(line, sizeof line, in)) {
        double t, loss;
        int w;
        long step, stale, bytes;
        assert_int_equal(sscanf(line, "%lf,%d,%ld,%lf,%ld,%ld", &t, &w, &step, &loss, &stale,
                                &bytes), 6);
        for (int b = 0; b < workers; b++) {
            if (b != w && step - 1 - s > done[b]) {
                fail_msg("worker %d at step %ld while worker %d had done %ld (s = %ld)", w,
                         step, b, done[b], s);
            }
            if (b != w && step - done[b] > widest) {
                widest = step - done[b];
            }
        }
        done[w] = step;
        rows++;
    }
    fclose(in);
    assert_true(rows > 100);
    assert_true(widest <= s + 1);
}

static void test_ssp_keeps_clocks_within_the_bound(void **state)
{
    support_fixture *f = *state;
    const long bounds[] = {0, 2};
    for (int i = 0; i < 2; i++) {
        char dir[4096], arg[64];
        snprintf(arg, sizeof arg, "algorithm.staleness=%ld", bounds[i]);
        const char *const extra[] = {arg, "eval.steps_every=1", NULL};
        s_three_workers(f, "ssp", extra, dir, sizeof dir);
        s_check_ssp_bound(dir, 3, bounds[i]);
    }
}

/* experiments/writing-a-rule: the worked example runs from its own config
 * (small data here), and the centre is the mean of the workers. */
static void test_writing_a_rule_example(void **state)
{
    support_fixture *f = *state;
    const char *args[] = {"train", ASGD_SOURCE_DIR "/experiments/writing-a-rule/config.ini",
                          f->out_arg, "data.dataset=synthetic", "train.epochs=3",
                          "cluster.workers=3", "eval.every=0.1", NULL};
    support_run_asgd(&f->r, f->dir, args);
    if (f->r.status != 0) {
        fail_msg("%s", f->r.err);
    }
    char dir[4096], path[4200];
    s_run_dir(f, dir, sizeof dir);
    double first, last;
    s_eval_ends(dir, &first, &last);
    assert_true(last < 0.8 * first);
    snprintf(path, sizeof path, "%s/summary.json", dir);
    cJSON *j = support_json_file(path);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(j, "algorithm")->valuestring, "average");
    /* 3 epochs of 10,000 at batch 64, 469 minibatches: 156 steps for each
     * of 3 workers, in rounds of 10 (the last of 6); every round takes
     * every worker's model, none is dropped */
    assert_true(support_json_number(j, "updates") == 16);
    assert_true(support_json_number(j, "pushes") == 3 * 16);
    assert_true(support_json_number(j, "dropped") == 0);
    cJSON_Delete(j);
}

/* DynSGD with one worker: every push is fresh, tau = 0. */
static void test_dynsgd_one_worker_sees_no_staleness(void **state)
{
    support_fixture *f = *state;
    const char *const window3[] = {"algorithm.window=3", NULL};
    char *trajectory = s_trajectory(f, "dynsgd", window3);
    free(trajectory);
    char dir[4096], path[4200];
    s_run_dir(f, dir, sizeof dir);
    snprintf(path, sizeof path, "%s/summary.json", dir);
    cJSON *j = support_json_file(path);
    assert_true(support_json_number(j, "staleness_max") == 0);
    assert_true(support_json_number(j, "updates") > 100);
    cJSON_Delete(j);
}

/* Starts the long job; returns the launcher's pid once steps are flowing. */
static int s_start_long_job(support_fixture *f, const char *const *extra)
{
    support_write_file(f->config, s_long_job);
    const char *args[16] = {"train", f->config, f->out_arg};
    int n = 3;
    for (int i = 0; extra && extra[i]; i++) {
        args[n++] = extra[i];
    }
    args[n] = NULL;
    int pid = support_spawn_asgd(f->dir, args);
    char steps[512];
    snprintf(steps, sizeof steps, "%s/job/r/steps-0.csv", f->out);
    if (!support_wait_lines(steps, 20, 30)) {
        kill(pid, SIGKILL);
        fail_msg("the job did not start");
    }
    return pid;
}

static void s_kill_a_worker(int launcher)
{
    int workers[8];
    int n = support_children(launcher, "worker", workers, 8);
    assert_true(n >= 1);
    assert_int_equal(kill(workers[0], SIGKILL), 0);
}

static void test_killed_worker_is_restarted_on_failure(void **state)
{
    support_fixture *f = *state;
    const char *extra[] = {"cluster.restart=on-failure", NULL};
    int launcher = s_start_long_job(f, extra);
    s_kill_a_worker(launcher);
    int status = support_wait(launcher);
    char path[512];
    snprintf(path, sizeof path, "%s/stderr", f->dir);
    char *err = support_read_file(path);
    if (status != 0) {
        fail_msg("job failed (%d): %s", status, err);
    }
    free(err);
    snprintf(path, sizeof path, "%s/job/r/summary.json", f->out);
    cJSON *j = support_json_file(path);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "complete")));
    assert_true(support_json_number(j, "restarts") == 1);
    cJSON_Delete(j);
    snprintf(path, sizeof path, "%s/job/r/log.txt", f->out);
    char *log = support_read_file(path);
    assert_non_null(strstr(log, "was killed by signal 9"));
    assert_non_null(strstr(log, "restarting worker"));
    free(log);
}

static void test_killed_worker_fails_the_job_under_never(void **state)
{
    support_fixture *f = *state;
    int launcher = s_start_long_job(f, NULL);
    int children[16];
    int n = support_children(launcher, NULL, children, 16);
    assert_int_equal(n, 4);                  /* ps, evaluator, 2 workers */
    s_kill_a_worker(launcher);
    assert_int_equal(support_wait(launcher), 1);
    char path[512];
    snprintf(path, sizeof path, "%s/stderr", f->dir);
    char *err = support_read_file(path);
    assert_non_null(strstr(err, "was killed by signal 9"));
    assert_non_null(strstr(err, "restart = never"));
    assert_ptr_equal(strchr(err, '\n'), err + strlen(err) - 1);   /* one line */
    free(err);
    for (int i = 0; i < n; i++) {
        assert_false(support_alive(children[i]));
    }
    snprintf(path, sizeof path, "%s/job/r/summary.json", f->out);
    cJSON *j = support_json_file(path);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(j, "complete")));
    /* and says why (a summary without it passed every test) */
    cJSON *why = cJSON_GetObjectItemCaseSensitive(j, "error");
    assert_true(cJSON_IsString(why) && strstr(why->valuestring, "was killed by signal 9"));
    cJSON_Delete(j);
}

/* Whether something listens on the loopback port. */
static int s_port_in_use(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int rc = bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 1) != 0;
    close(fd);
    return rc;
}

/* Whether process pid's signal mask named by field ("SigIgn", "SigCgt"
 * in /proc/PID/status) holds sig. */
static bool s_signal_in(int pid, const char *field, int sig)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    FILE *in = fopen(path, "r");
    assert_non_null(in);
    unsigned long long mask = 0;
    bool found = false;
    size_t n = strlen(field);
    while (!found && fgets(line, sizeof line, in)) {
        found = strncmp(line, field, n) == 0 && line[n] == ':' &&
                sscanf(line + n + 1, "%llx", &mask) == 1;
    }
    fclose(in);
    assert_true(found);
    return (mask >> (sig - 1)) & 1;
}

/* Ctrl-C (SIGINT) and a hangup (SIGHUP: the terminal closed) stop the
 * job as SIGTERM does, over ipc and tcp. */
static void test_sigint_leaves_no_process_or_port(void **state)
{
    support_fixture *f = *state;
    int port = wire_client_free_port();
    char port_arg[64];
    snprintf(port_arg, sizeof port_arg, "cluster.port=%d", port);
    const struct {
        int tcp, sig;
    } cases[] = {{0, SIGINT}, {1, SIGINT}, {0, SIGHUP}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int tcp = cases[c].tcp;
        const char *extra[] = {tcp ? "cluster.transport=tcp" : "cluster.transport=ipc",
                               port_arg, NULL};
        char runs[512];
        snprintf(runs, sizeof runs, "%s/job", f->out);
        support_rmtree(runs);
        int launcher = s_start_long_job(f, extra);
        int children[16];
        int n = support_children(launcher, NULL, children, 16);
        assert_int_equal(n, 4);
        if (tcp) {
            assert_true(s_port_in_use(port));
        }
        assert_int_equal(kill(launcher, cases[c].sig), 0);
        assert_int_equal(support_wait(launcher), 1);
        for (int i = 0; i < n; i++) {
            assert_false(support_alive(children[i]));
        }
        assert_false(s_port_in_use(port));
        char dir[512];
        snprintf(dir, sizeof dir, "%s/job/r", f->out);
        s_expect_no_ipc_left(dir);
        char path[600];
        snprintf(path, sizeof path, "%s/summary.json", dir);
        cJSON *j = support_json_file(path);
        assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(j, "complete")));
        cJSON_Delete(j);
        /* log.txt says how each process it stopped ended */
        snprintf(path, sizeof path, "%s/log.txt", dir);
        char *log = support_read_file(path);
        for (int w = 0; w < 2; w++) {
            char line[64];
            snprintf(line, sizeof line, "worker %d stopped by the launcher: ", w);
            if (!strstr(log, line)) {
                fail_msg("no \"%s\" in log.txt:\n%s", line, log);
            }
        }
        assert_non_null(strstr(log, "ps 0 stopped by the launcher: "));
        assert_non_null(strstr(log, "evaluator 0 stopped by the launcher: "));
        free(log);
    }
}

/* A job started with SIGHUP ignored (nohup) keeps it ignored, in the
 * launcher and in the processes it starts; without, each catches it. */
static void test_nohup_keeps_a_hangup_ignored(void **state)
{
    support_fixture *f = *state;
    for (int ignored = 0; ignored < 2; ignored++) {
        char runs[512];
        snprintf(runs, sizeof runs, "%s/job", f->out);
        support_rmtree(runs);
        struct sigaction ign = {.sa_handler = SIG_IGN}, old;
        sigemptyset(&ign.sa_mask);
        if (ignored) {
            sigaction(SIGHUP, &ign, &old);   /* inherited through fork and exec */
        }
        int launcher = s_start_long_job(f, NULL);
        if (ignored) {
            sigaction(SIGHUP, &old, NULL);
        }
        int children[16];
        int n = support_children(launcher, NULL, children, 16);
        assert_int_equal(n, 4);
        for (int i = -1; i < n; i++) {
            int pid = i < 0 ? launcher : children[i];
            /* a child whose handlers are not installed yet has SIGHUP at
             * its default, neither ignored nor caught: wait for it */
            for (int t = 0; t < 500 && !s_signal_in(pid, "SigIgn", SIGHUP) &&
                            !s_signal_in(pid, "SigCgt", SIGHUP); t++) {
                nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
            }
            assert_int_equal(s_signal_in(pid, "SigIgn", SIGHUP), ignored);
            assert_int_equal(s_signal_in(pid, "SigCgt", SIGHUP), !ignored);
        }
        assert_int_equal(kill(launcher, SIGINT), 0);
        assert_int_equal(support_wait(launcher), 1);
    }
}

/* The run folder of a run that diverged: complete, "diverged": true, and
 * its last evaluation's test loss not finite; its one line on stderr. */
static void s_expect_diverged(support_fixture *f, const char *dir)
{
    char path[4200], line[512], last[512] = "";
    snprintf(path, sizeof path, "%s/summary.json", dir);
    cJSON *j = support_json_file(path);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "complete")));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "diverged")));
    cJSON_Delete(j);
    snprintf(path, sizeof path, "%s/eval.csv", dir);
    FILE *in = fopen(path, "r");
    while (in && fgets(line, sizeof line, in)) {
        memcpy(last, line, sizeof last);
    }
    if (in) {
        fclose(in);
    }
    double t, epoch, loss = 0, acc;
    long updates, samples;
    char loss_text[64];
    assert_int_equal(sscanf(last, "%lf,%lf,%ld,%ld,%63[^,],%lf", &t, &epoch, &updates, &samples,
                            loss_text, &acc), 6);
    loss = strtod(loss_text, NULL);
    assert_false(isfinite(loss));
    assert_null(strstr(loss_text, "-nan"));   /* NaN has no sign worth printing */
    assert_non_null(strstr(f->r.err, "diverged"));
}

/* A learning rate that destroys the model: in every mode the run stops at
 * the evaluation that sees a non-finite test loss, exits 0, and is a
 * complete run marked diverged. */
static void test_a_diverging_run_is_a_result(void **state)
{
    support_fixture *f = *state;
    const char *modes[][2] = {{"train.algorithm=sequential", "experiment.mode=real"},
                              {"train.algorithm=hogwild", "experiment.mode=sim"},
                              {"train.algorithm=hogwild", "experiment.mode=real"},
                              /* a lockstep round would wait for ever for a worker whose
                               * NaN push was refused */
                              {"train.algorithm=sync", "experiment.mode=sim"},
                              {"train.algorithm=sync", "experiment.mode=real"}};
    for (int i = 0; i < 5; i++) {
        const char *args[] = {"train", "/dev/null", f->out_arg, modes[i][0], modes[i][1],
                              "data.dataset=synthetic", "model.type=mlp", "model.hidden=16",
                              "train.lr=50", "train.epochs=20", "eval.every=0.05",
                              "cluster.workers=2", NULL};
        support_run_asgd(&f->r, f->dir, args);
        if (f->r.status != 0) {
            fail_msg("%s %s: %s", modes[i][0], modes[i][1], f->r.err);
        }
        char dir[4096];
        s_run_dir(f, dir, sizeof dir);
        s_expect_diverged(f, dir);
    }
    /* without evaluations during training, the shards' refusal of a NaN
     * push ends the run as soon as the evaluator hears of it: a lockstep
     * round waited for good, and the job failed at [cluster] timeout, "ps
     * 0 did not answer" (the model it keeps is the last finite one) */
    const char *rules[] = {"train.algorithm=sync", "train.algorithm=easgd"};
    for (int i = 0; i < 2; i++) {
        const char *args[] = {"train", "/dev/null", f->out_arg, rules[i], "experiment.mode=real",
                              "data.dataset=synthetic", "model.type=mlp", "model.hidden=16",
                              "train.lr=1000", "train.epochs=20", "eval.every=0",
                              "cluster.workers=2", "cluster.timeout=5", NULL};
        support_run_asgd(&f->r, f->dir, args);
        if (f->r.status != 0 || !strstr(f->r.err, " diverged: ")) {
            fail_msg("%s, eval.every=0: exit %d: %s", rules[i], f->r.status, f->r.err);
        }
        char dir[4096], path[4200];
        s_run_dir(f, dir, sizeof dir);
        snprintf(path, sizeof path, "%s/summary.json", dir);
        cJSON *j = support_json_file(path);
        assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "complete")));
        assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "diverged")));
        assert_true(support_json_number(j, "nonfinite") > 0);
        cJSON_Delete(j);
    }
}

/* Checks a role-per-process job's folder, which its evaluator made a whole
 * run folder: every push of the two workers' budgets reached the shard and
 * is in the summary, whose final loss is the last evaluation's; the
 * workers' steps, written into the same folder, are gathered in time order
 * into steps.csv; config.ini and log.txt are there. */
static void s_expect_cluster_done(const char *dir)
{
    char path[600];
    const double pushes = ceil(2.0 * 10000 / 64);
    snprintf(path, sizeof path, "%s/ps-0.json", dir);
    cJSON *j = support_json_file(path);
    assert_true(support_json_number(j, "pushes") == pushes);
    double checkpoints = support_json_number(j, "checkpoints");
    double checkpoint_s = support_json_number(j, "checkpoint_us") * 1e-6;
    cJSON_Delete(j);
    snprintf(path, sizeof path, "%s/summary.json", dir);
    j = support_json_file(path);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "complete")));
    assert_true(support_json_number(j, "pushes") == pushes);
    /* the evaluator's summary has the shard's last counters: it once
     * missed the checkpoint written at the evaluator's own DONE */
    if (support_json_number(j, "checkpoints") != checkpoints ||
        fabs(support_json_number(j, "checkpoint_s") - checkpoint_s) > 1e-9) {
        fail_msg("summary.json: %g checkpoints in %g s; ps-0.json: %g in %g s",
                 support_json_number(j, "checkpoints"), support_json_number(j, "checkpoint_s"),
                 checkpoints, checkpoint_s);
    }
    assert_true(support_json_number(j, "workers") == 2);
    assert_true(support_json_number(j, "time_s") > 0);
    assert_true(support_json_number(j, "samples_per_s") > 0);
    support_check_run_arithmetic(dir, 10000);
    double final_loss = support_json_number(j, "final_test_loss");
    cJSON_Delete(j);
    double first, last;
    s_eval_ends(dir, &first, &last);
    assert_true(fabs(final_loss - last) <= 1e-6 * fabs(last));
    snprintf(path, sizeof path, "%s/eval.csv", dir);
    char *evals = support_read_file(path);
    int starts = 0;   /* one job's evaluations: one at time 0 */
    for (char *row = strstr(evals, "\n0.000000,"); row; row = strstr(row + 1, "\n0.000000,")) {
        starts++;
    }
    free(evals);
    assert_int_equal(starts, 1);
    snprintf(path, sizeof path, "%s/steps.csv", dir);
    assert_int_equal(support_count_lines(path), 1 + (int)pushes);
    char *steps = support_read_file(path);
    double before = 0;
    for (char *line = strchr(steps, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        double t = strtod(line + 1, NULL);
        assert_true(t >= before);   /* in time order, from the first step */
        before = t;
    }
    free(steps);
    snprintf(path, sizeof path, "%s/steps-1.csv", dir);
    assert_int_equal(access(path, F_OK), -1);
    const char *files[] = {"config.ini", "log.txt"};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        assert_true(support_count_lines(path) >= 1);
    }
}

/* Roles started by hand, as on several hosts: one by TensorFlow flags, the
 * others by Kubeflow's TF_CONFIG; each ends by itself. */
static void test_roles_started_by_hand(void **state)
{
    support_fixture *f = *state;
    support_write_file(f->config, "[data]\ndataset = synthetic\n[model]\ntype = softmax\n"
                       "[train]\nalgorithm = hogwild\nepochs = 2\n[eval]\nevery = 0.5\n"
                       "[checkpoint]\nevery = 0.2\n");
    for (int job = 0; job < 2; job++) {   /* the second in the first's folder: it starts anew */
        int port = wire_client_free_port();
        char ps_hosts[64], run_dir[400], tf[3][512];
        snprintf(ps_hosts, sizeof ps_hosts, "--ps_hosts=127.0.0.1:%d", port);
        snprintf(run_dir, sizeof run_dir, "--run_dir=%s/cluster", f->dir);
        const char *ps_args[] = {"ps", f->config, ps_hosts, "--worker_hosts=w0:1,w1:1",
                                 "--job_name=ps", "--task_index=0", run_dir, NULL};
        int pids[4];
        pids[0] = support_spawn_asgd(f->dir, ps_args);
        const char *types[3] = {"chief", "worker", "worker"};
        const int index[3] = {0, 0, 1};
        for (int i = 0; i < 3; i++) {
            snprintf(tf[i], sizeof tf[i], "{\"cluster\": {\"ps\": [\"127.0.0.1:%d\"], "
                     "\"worker\": [\"w0:1\", \"w1:1\"], \"chief\": [\"c:1\"]}, \"task\": "
                     "{\"type\": \"%s\", \"index\": %d}, \"environment\": \"cloud\"}", port,
                     types[i], index[i]);
            setenv("TF_CONFIG", tf[i], 1);
            const char *args[] = {i == 0 ? "evaluator" : "worker", f->config, run_dir, NULL};
            pids[i + 1] = support_spawn_asgd(f->dir, args);
        }
        unsetenv("TF_CONFIG");
        assert_int_equal(support_wait(pids[0]), 0);
        /* the shard ends once the evaluator has written the run's files: a
         * job whose end is shard 0's (a PyTorchJob's Master) ended while
         * the summary was being written, its pod then removed */
        char path[600];
        snprintf(path, sizeof path, "%s/cluster/summary.json", f->dir);
        cJSON *j = support_json_file(path);
        assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "complete")));
        cJSON_Delete(j);
        for (int i = 1; i < 4; i++) {
            assert_int_equal(support_wait(pids[i]), 0);
        }
        snprintf(path, sizeof path, "%s/cluster", f->dir);
        s_expect_cluster_done(path);
        /* the second job's evaluator says it replaced a complete run */
        snprintf(path, sizeof path, "%s/cluster/log.txt", f->dir);
        char *log = support_read_file(path);
        assert_true((strstr(log, "held a complete run: this job's files replace") != NULL) ==
                    (job == 1));
        free(log);
    }
}

/* An evaluator on a host whose clock is 20 s ahead of the shard's (no
 * NTP) places the shard's times on its own clock, and says so: its rows
 * were at 0, then 20.5, 21.0, ... s (the shard's first step read on the
 * other clock), and the summary's time_s 20 s longer than the training. */
static void test_an_evaluator_on_another_clock_places_the_shards_times(void **state)
{
    support_fixture *f = *state;
    support_write_file(f->config, "[data]\ndataset = synthetic\n[model]\ntype = softmax\n"
                       "[train]\nalgorithm = hogwild\nepochs = 30\n[eval]\nevery = 0.1\n");
    int port = wire_client_free_port();
    char ps_hosts[64], run_dir[420], dir[400], ev_dir[400];
    snprintf(ps_hosts, sizeof ps_hosts, "--ps_hosts=127.0.0.1:%d", port);
    snprintf(dir, sizeof dir, "%s/skewed", f->dir);
    snprintf(run_dir, sizeof run_dir, "--run_dir=%s", dir);
    snprintf(ev_dir, sizeof ev_dir, "%s/evaluator", f->dir);
    mkdir(ev_dir, 0755);
    const char *ps_args[] = {"ps", f->config, ps_hosts, "--worker_hosts=w0:1", "--task_index=0",
                             run_dir, NULL};
    const char *w_args[] = {"worker", f->config, ps_hosts, "--worker_hosts=w0:1",
                            "--task_index=0", run_dir, NULL};
    const char *ev_args[] = {"evaluator", f->config, ps_hosts, "--worker_hosts=w0:1", run_dir,
                             NULL};
    int pids[3];
    pids[0] = support_spawn_asgd(f->dir, ps_args);
    setenv("LD_PRELOAD", SKEW_CLOCK, 1);
    setenv("SKEW_S", "20", 1);
    setenv("ASAN_OPTIONS", "verify_asan_link_order=0", 1);   /* a sanitizer build's */
    pids[1] = support_spawn_asgd(ev_dir, ev_args);
    unsetenv("LD_PRELOAD");
    unsetenv("SKEW_S");
    unsetenv("ASAN_OPTIONS");
    pids[2] = support_spawn_asgd(f->dir, w_args);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(support_wait_within(pids[i], 120, "a job of a skewed evaluator"), 0);
    }
    char path[600];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    cJSON *j = support_json_file(path);
    double time_s = support_json_number(j, "time_s"), train = support_json_number(j, "train_time_s");
    cJSON_Delete(j);
    if (!(time_s < 15 && fabs(time_s - train) < 0.5)) {
        fail_msg("time_s %g, train_time_s %g", time_s, train);
    }
    snprintf(path, sizeof path, "%s/eval.csv", dir);
    char *rows = support_read_file(path);
    int n = 0;
    for (char *line = strchr(rows, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        double t = strtod(line + 1, NULL);
        if (!(t >= 0 && t <= time_s + 1e-6)) {
            fail_msg("a row at %g s of a training of %g s", t, time_s);
        }
        n++;
    }
    free(rows);
    assert_true(n >= 3);   /* the first, some during training, the last */
    snprintf(path, sizeof path, "%s/stderr", ev_dir);
    char *said = support_read_file(path);
    const char *at = strstr(said, "ps 0's clock is ");
    double skew = at ? strtod(at + strlen("ps 0's clock is "), NULL) : 0;
    if (fabs(skew - 20) > 0.1 || !strstr(said, "s behind this host's")) {
        fail_msg("the evaluator said: %s", said);
    }
    free(said);
}

/* A shard whose host's clock is 20 s off, killed and restored on a host
 * whose clock is the evaluator's: the evaluator measures the new
 * process's clock anew. It kept the first one's offset, and the summary
 * gave 2.7 s of training for 13 s, at four times the samples/s. The
 * evaluator is stopped (SIGSTOP) from its first look until the shard is
 * back, so that it first sees the training's first pull from the new
 * process, as a time of the checkpoint, on the first one's clock: placed
 * with the new process's offset, time_s was 18-20 s for 0.4 s (1 run in
 * 4 with both cores busy, where the evaluator's next look came late). */
static void test_a_shard_restored_on_another_clock_is_placed_anew(void **state)
{
    support_fixture *f = *state;
    support_write_file(f->config, "[data]\ndataset = synthetic\n[model]\ntype = softmax\n"
                       "[train]\nalgorithm = hogwild\nepochs = 150\n[eval]\nevery = 0.2\n"
                       "[checkpoint]\nevery = 0.2\n");
    int port = wire_client_free_port();
    char ps_hosts[64], run_dir[420], dir[400], ps_dir[400];
    snprintf(ps_hosts, sizeof ps_hosts, "--ps_hosts=127.0.0.1:%d", port);
    snprintf(dir, sizeof dir, "%s/moved", f->dir);
    snprintf(run_dir, sizeof run_dir, "--run_dir=%s", dir);
    snprintf(ps_dir, sizeof ps_dir, "%s/shard", f->dir);
    mkdir(ps_dir, 0755);
    const char *ps_args[] = {"ps", f->config, ps_hosts, "--worker_hosts=w0:1", "--task_index=0",
                             run_dir, NULL, NULL};
    const char *w_args[] = {"worker", f->config, ps_hosts, "--worker_hosts=w0:1",
                            "--task_index=0", run_dir, NULL};
    const char *ev_args[] = {"evaluator", f->config, ps_hosts, "--worker_hosts=w0:1", run_dir,
                             NULL};
    setenv("LD_PRELOAD", SKEW_CLOCK, 1);
    setenv("SKEW_S", "20", 1);
    setenv("ASAN_OPTIONS", "verify_asan_link_order=0", 1);
    int shard = support_spawn_asgd(ps_dir, ps_args);
    unsetenv("LD_PRELOAD");
    unsetenv("SKEW_S");
    unsetenv("ASAN_OPTIONS");
    int evaluator = support_spawn_asgd(f->dir, ev_args);
    char path[600];
    snprintf(path, sizeof path, "%s/eval.csv", dir);
    if (!support_wait_lines(path, 2, 60)) {   /* its first look, and the initial row */
        fail_msg("the evaluator did not start");
    }
    kill(evaluator, SIGSTOP);
    int worker = support_spawn_asgd(f->dir, w_args);
    snprintf(path, sizeof path, "%s/steps-0.csv", dir);
    if (!support_wait_lines(path, 400, 60)) {
        fail_msg("the job did not start");
    }
    kill(shard, SIGKILL);
    support_wait(shard);
    ps_args[6] = "--restore";
    shard = support_spawn_asgd(ps_dir, ps_args);   /* on this host's clock */
    kill(evaluator, SIGCONT);
    int pids[3] = {shard, evaluator, worker};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(support_wait_within(pids[i], 120, "a job of a shard moved"), 0);
    }
    snprintf(path, sizeof path, "%s/summary.json", dir);
    cJSON *j = support_json_file(path);
    double time_s = support_json_number(j, "time_s"), train = support_json_number(j, "train_time_s");
    double wall = support_json_number(j, "wall_time_s");
    cJSON_Delete(j);
    /* the training is the session's, from its first pull on the first
     * process's clock to its last push on the second's, all placed on this
     * host's: under the session's wall time, and more than the 400 steps
     * before the restore took */
    if (!(fabs(time_s - train) < 0.5 && time_s > 0.2 && time_s < wall + 0.5)) {
        fail_msg("time_s %g, train_time_s %g, wall_time_s %g", time_s, train, wall);
    }
}

/* A worker given other settings than the shard's (another config file
 * on its host: here another learning rate) fails at once, exit 2, saying
 * so, and the shard took nothing of it: it trained with the others, its
 * gradients of another experiment applied, and the job completed. */
static void test_a_worker_of_other_settings_is_refused(void **state)
{
    support_fixture *f = *state;
    support_write_file(f->config, "[data]\ndataset = synthetic\n[model]\ntype = softmax\n"
                       "[train]\nalgorithm = hogwild\nepochs = 2\n[cluster]\ntimeout = 30\n");
    int port = wire_client_free_port();
    char ps_hosts[64], run_dir[400];
    snprintf(ps_hosts, sizeof ps_hosts, "--ps_hosts=127.0.0.1:%d", port);
    snprintf(run_dir, sizeof run_dir, "--run_dir=%s/other", f->dir);
    const char *ps_args[] = {"ps", f->config, ps_hosts, "--worker_hosts=w0:1,w1:1",
                             "--task_index=0", run_dir, "--evaluator=0", NULL};
    int shard = support_spawn_asgd(f->dir, ps_args);
    const char *other[] = {"worker", f->config, ps_hosts, "--worker_hosts=w0:1,w1:1",
                           "--task_index=1", run_dir, "--evaluator=0", "train.lr=0.5", NULL};
    support_run_asgd(&f->r, f->dir, other);
    kill(shard, SIGTERM);   /* it writes its counters */
    support_wait(shard);
    if (f->r.status != 2 || !strstr(f->r.err, "ps 0 serves a job of other settings")) {
        fail_msg("a worker of other settings: status %d, \"%s\"", f->r.status, f->r.err);
    }
    char dir[400];
    snprintf(dir, sizeof dir, "%s/other", f->dir);
    assert_true(support_shard_number(dir, 0, "samples") == 0);
    assert_true(support_shard_number(dir, 0, "pushes") == 0);
    assert_true(support_shard_number(dir, 0, "rejected") >= 1);
    /* how long it waits for a shard, and how many threads the shard
     * applies pushes with, are each process's own: no other setting, and
     * the worker takes its share */
    const char *own[] = {"worker", f->config, ps_hosts, "--worker_hosts=w0:1,w1:1",
                         "--task_index=1", run_dir, "--evaluator=0", "cluster.timeout=20",
                         NULL};
    const char *threads[] = {"ps", f->config, ps_hosts, "--worker_hosts=w0:1,w1:1",
                             "--task_index=0", run_dir, "--evaluator=0",
                             "algorithm.server_threads=2", NULL};
    shard = support_spawn_asgd(f->dir, threads);
    support_run_asgd(&f->r, f->dir, own);
    kill(shard, SIGKILL);
    support_wait(shard);
    if (f->r.status != 0) {
        fail_msg("a worker of its own timeout: status %d, \"%s\"", f->r.status, f->r.err);
    }
}

/* A worker that refuses its config or data (label-skew leaving a worker
 * no example) fails the job with its reason on the one line, and the
 * config error's status, 2, as the simulator and threads mode refuse it
 * (the reason was in log.txt alone, the status 1). */
static void test_a_process_refusing_its_data_says_why(void **state)
{
    support_fixture *f = *state;
    const char *args[] = {"train", "/dev/null", f->out_arg, "train.algorithm=hogwild",
                          "cluster.workers=8", "data.dataset=synthetic", "data.train_size=2000",
                          "model.type=softmax", "data.partition=label-skew", "data.alpha=0.01",
                          NULL};
    support_run_asgd(&f->r, f->dir, args);
    if (f->r.status != 2 || !strstr(f->r.err, "with no examples; raise [data] alpha")) {
        fail_msg("status %d, \"%s\"", f->r.status, f->r.err);
    }
}

/* Evaluations come every eval.every, even a short one (5 ms): one per
 * interval, those that fell due while one was made skipped (they were
 * made at once, a burst of rows 0.4 ms apart holding one model, then a
 * 20 ms gap), and rows keep coming through the training (10 at least). In
 * real and threads mode. How many of the intervals have their row (about
 * 0.9 on an idle host; 20 ms naps gave a quarter) is the host's to give,
 * not asserted: with both cores busy a real run had 236 rows of 611. */
static void test_short_evaluation_intervals_are_kept(void **state)
{
    support_fixture *f = *state;
    const char *modes[] = {"experiment.mode=real", "experiment.mode=threads"};
    const char *epochs[] = {"train.epochs=150", "train.epochs=1500"};   /* 0.2-0.5 s each */
    for (int m = 0; m < 2; m++) {
        const char *args[] = {"train", "/dev/null", f->out_arg, modes[m],
                              "train.algorithm=hogwild", "cluster.workers=2",
                              "data.dataset=synthetic", "data.train_size=2000",
                              "model.type=softmax", epochs[m], "eval.every=0.005", NULL};
        support_run_asgd(&f->r, f->dir, args);
        if (f->r.status != 0) {
            fail_msg("%s: %s", modes[m], f->r.err);
        }
        char dir[4096], path[4200], line[512];
        s_run_dir(f, dir, sizeof dir);
        snprintf(path, sizeof path, "%s/eval.csv", dir);
        FILE *in = fopen(path, "r");
        assert_non_null(in);
        double t = 0, epoch, loss, acc;
        long u, samples, rows = 0, twice = 0, slot = -1;
        while (fgets(line, sizeof line, in)) {
            if (sscanf(line, "%lf,%lf,%ld,%ld,%lf,%lf", &t, &epoch, &u, &samples, &loss,
                       &acc) != 6) {
                continue;
            }
            long now = (long)floor(t / 0.005);   /* each interval's evaluation */
            twice += rows++ > 0 && now == slot;
            slot = now;
        }
        fclose(in);
        /* the last row: the end of training, any time */
        if (twice > 1 || rows < 10) {
            fail_msg("%s: %ld rows, %ld of them in an interval the one before was in",
                     modes[m], rows, twice);
        }
    }
}

/* An evaluation due between a worker's last push and its done sees the
 * final model already; the final row, written once the shard says every
 * worker is done, is never stamped before it (it once was: at the last
 * push, so eval.csv stepped back in time and time_s ended before its
 * last row). Here the test is the worker, and says done only after the
 * evaluator has written two rows since its push. */
static void test_the_final_evaluation_never_steps_back(void **state)
{
    support_fixture *f = *state;
    support_write_file(f->config, "[data]\ndataset = synthetic\ndim = 6\nclasses = 3\n"
                       "[model]\ntype = softmax\n[train]\nalgorithm = hogwild\n"
                       "[eval]\nevery = 0.05\n");
    int port = wire_client_free_port();
    char ps_hosts[64], run_dir[400], dir[300], eval_csv[400];
    snprintf(ps_hosts, sizeof ps_hosts, "--ps_hosts=127.0.0.1:%d", port);
    snprintf(dir, sizeof dir, "%s/cluster", f->dir);
    snprintf(run_dir, sizeof run_dir, "--run_dir=%s", dir);
    snprintf(eval_csv, sizeof eval_csv, "%s/eval.csv", dir);
    const char *ps_args[] = {"ps", f->config, ps_hosts, "--worker_hosts=a", "--task_index=0",
                             run_dir, NULL};
    const char *ev_args[] = {"evaluator", f->config, ps_hosts, "--worker_hosts=a", run_dir,
                             NULL};
    int ps = support_spawn_asgd(f->dir, ps_args);
    int evaluator = support_spawn_asgd(f->dir, ev_args);
    void *ctx = zmq_ctx_new();
    void *sock = wire_client_open(ctx, port, NULL);
    float theta[21], grad[21] = {0.5f, -0.25f};
    wire_header pull = {.type = WIRE_PULL, .encoding = WIRE_NO_PAYLOAD, .seq = 1}, reply;
    assert_true(wire_client_send(sock, &pull, NULL, 0));   /* held until the evaluator is in */
    assert_int_equal(wire_client_receive(sock, &reply, theta, sizeof theta, 21, 20000),
                     sizeof theta);
    wire_header push = {.type = WIRE_PUSH, .count = 21, .encoding = WIRE_F32, .samples = 64,
                        .seq = 2, .generation = reply.generation};
    assert_true(wire_client_send(sock, &push, grad, sizeof grad));
    pull.seq = 3;
    pull.generation = reply.generation;
    assert_true(wire_client_send(sock, &pull, NULL, 0));   /* the push is in once this returns */
    assert_int_equal(wire_client_receive(sock, &reply, theta, sizeof theta, 21, 10000),
                     sizeof theta);
    assert_int_equal(reply.base_version, 1);
    int rows = support_count_lines(eval_csv);
    assert_true(support_wait_lines(eval_csv, rows + 2, 10));
    wire_header done = {.type = WIRE_CONTROL, .tag = WIRE_CONTROL_DONE, .seq = 4,
                        .encoding = WIRE_NO_PAYLOAD, .generation = reply.generation};
    assert_true(wire_client_send(sock, &done, NULL, 0));
    assert_true(wire_client_receive(sock, &reply, NULL, 0, 21, 10000) >= 0);
    assert_int_equal(support_wait(evaluator), 0);
    assert_int_equal(support_wait(ps), 0);
    zmq_close(sock);
    zmq_ctx_term(ctx);
    double first, last;
    s_eval_ends(dir, &first, &last);   /* rows in time order, time_s at the last */
    assert_true(support_count_lines(eval_csv) >= rows + 3);
}

/* Workers started long before the evaluator (pods scheduled apart) wait
 * for it: the shard holds their pulls and tells them, once a second, that
 * it is there, so they outlast a [cluster] timeout shorter than the wait. */
static void test_workers_wait_for_a_late_evaluator(void **state)
{
    support_fixture *f = *state;
    support_write_file(f->config, "[data]\ndataset = synthetic\n[model]\ntype = softmax\n"
                       "[train]\nalgorithm = hogwild\nepochs = 2\n[eval]\nevery = 0.5\n"
                       "[cluster]\ntimeout = 1.5\n");
    int port = wire_client_free_port();
    char ps_hosts[64], run_dir[400];
    snprintf(ps_hosts, sizeof ps_hosts, "--ps_hosts=127.0.0.1:%d", port);
    snprintf(run_dir, sizeof run_dir, "--run_dir=%s/cluster", f->dir);
    const char *ps_args[] = {"ps", f->config, ps_hosts, "--worker_hosts=w0:1,w1:1",
                             "--task_index=0", run_dir, NULL};
    int pids[4];
    pids[0] = support_spawn_asgd(f->dir, ps_args);
    for (int w = 0; w < 2; w++) {
        char task[32];
        snprintf(task, sizeof task, "--task_index=%d", w);
        const char *args[] = {"worker", f->config, ps_hosts, "--worker_hosts=w0:1,w1:1", task,
                              run_dir, NULL};
        pids[1 + w] = support_spawn_asgd(f->dir, args);
    }
    sleep(3);   /* twice the timeout */
    const char *ev_args[] = {"evaluator", f->config, ps_hosts, "--worker_hosts=w0:1,w1:1",
                             run_dir, NULL};
    pids[3] = support_spawn_asgd(f->dir, ev_args);
    const int order[] = {1, 2, 3, 0};   /* a worker that gave up fails the test at once */
    for (int i = 0; i < 4; i++) {
        assert_int_equal(support_wait(pids[order[i]]), 0);
    }
    char path[600];
    snprintf(path, sizeof path, "%s/cluster", f->dir);
    s_expect_cluster_done(path);
}

/* A worker on the shard's host that cannot share a segment with it (here
 * in a pid namespace of its own, as containers of one Kubernetes pod are:
 * its /proc/PID/fd path names nothing the shard can open) is told so and
 * goes on through the socket, beside a worker that shares: the job
 * completes, only the other's pushes went through a segment, and the
 * shard said why. */
static void test_a_worker_that_cannot_share_uses_the_socket(void **state)
{
    support_fixture *f = *state;
    support_result probe;
    const char *try[] = {"--pid", "--fork", "--mount-proc", "true", NULL};
    support_run(&probe, f->dir, "unshare", try);
    if (probe.status != 0) {
        print_message("skipped: unshare --pid cannot run here: %s\n", probe.err);
        skip();
    }
    support_write_file(f->config, "[data]\ndataset = synthetic\n[model]\ntype = softmax\n"
                       "[train]\nalgorithm = hogwild\nepochs = 2\n");
    char ps_hosts[64], run_dir[420], dir[400], ps_dir[400];
    snprintf(ps_hosts, sizeof ps_hosts, "--ps_hosts=127.0.0.1:%d", wire_client_free_port());
    snprintf(dir, sizeof dir, "%s/cluster", f->dir);
    snprintf(run_dir, sizeof run_dir, "--run_dir=%s", dir);
    snprintf(ps_dir, sizeof ps_dir, "%s/ps", f->dir);   /* its own stderr */
    mkdir(ps_dir, 0700);
    const char *ps_args[] = {"ps", f->config, ps_hosts, "--worker_hosts=w0:1,w1:1",
                             "--task_index=0", run_dir, NULL};
    const char *ev_args[] = {"evaluator", f->config, ps_hosts, "--worker_hosts=w0:1,w1:1",
                             run_dir, NULL};
    const char *sharing[] = {"worker", f->config, ps_hosts, "--worker_hosts=w0:1,w1:1",
                             "--task_index=1", run_dir, NULL};
    int ps = support_spawn_asgd(ps_dir, ps_args);
    int evaluator = support_spawn_asgd(f->dir, ev_args);
    const char *apart[] = {"--pid", "--fork", "--mount-proc", ASGD_BINARY, "worker", f->config,
                           ps_hosts, "--worker_hosts=w0:1,w1:1", "--task_index=0", run_dir,
                           NULL};
    support_result w;
    support_run(&w, f->dir, "unshare", apart);
    assert_int_equal(w.status, 0);
    int other = support_spawn_asgd(f->dir, sharing);
    assert_int_equal(support_wait(other), 0);
    assert_int_equal(support_wait(evaluator), 0);
    assert_int_equal(support_wait(ps), 0);
    s_expect_cluster_done(dir);
    char path[600];
    snprintf(path, sizeof path, "%s/ps-0.json", dir);
    cJSON *j = support_json_file(path);
    double pushes = support_json_number(j, "pushes");
    double shared = support_json_number(j, "shared_pushes");
    assert_true(pushes > 100 && shared > 0 && shared < pushes);
    cJSON_Delete(j);
    snprintf(path, sizeof path, "%s/stderr", ps_dir);
    char *err = support_read_file(path);
    assert_non_null(strstr(err, "worker 0's shared segment not taken"));
    assert_null(strstr(err, "worker 1's shared segment not taken"));
    free(err);
}

/* `asgd role` in four processes, each placed by what its launcher would
 * set: torchrun's, Open MPI's, Slurm's and MPICH's ranks (rank 0 the
 * shard, 1 the evaluator, 2 and 3 the workers), MPICH's over IPv6 (::1:
 * its shard once bound IPv4 only and the job waited for it), and
 * TF_CONFIG with the older TFJob's master task (which once left the shard
 * not waiting for an evaluator). */
static void test_roles_from_a_launchers_environment(void **state)
{
    support_fixture *f = *state;
    support_write_file(f->config, "[data]\ndataset = synthetic\n[model]\ntype = softmax\n"
                       "[train]\nalgorithm = hogwild\nepochs = 2\n[eval]\nevery = 0.5\n");
    static const char *const engines[][5] = {   /* rank, size, then what else is set */
        {"RANK", "WORLD_SIZE", "MASTER_ADDR=127.0.0.1", "MASTER_PORT", NULL},
        {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "MASTER_ADDR=127.0.0.1", "MASTER_PORT",
         NULL},
        {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_JOB_NODELIST=127.0.0.1", "MASTER_PORT", NULL},
        {"PMI_RANK", "PMI_SIZE", "MASTER_ADDR=::1", "MASTER_PORT", NULL},
        {"TF_CONFIG", NULL, NULL, NULL, NULL},
    };
    for (int e = 0; e < 5; e++) {
        int port = wire_client_free_port();
        char run_dir[420], dir[400], value[512];
        snprintf(dir, sizeof dir, "%s/engine-%d", f->dir, e);
        snprintf(run_dir, sizeof run_dir, "--run_dir=%s", dir);
        const char *args[] = {"role", f->config, run_dir, NULL};
        int pids[4];
        for (int rank = 0; rank < 4; rank++) {
            if (e == 4) {
                static const char *const types[] = {"ps", "master", "worker", "worker"};
                snprintf(value, sizeof value, "{\"cluster\": {\"ps\": [\"127.0.0.1:%d\"], "
                         "\"worker\": [\"w0:1\", \"w1:1\"], \"master\": [\"m:1\"]}, "
                         "\"task\": {\"type\": \"%s\", \"index\": %d}}", port, types[rank],
                         rank < 2 ? 0 : rank - 2);
                setenv("TF_CONFIG", value, 1);
            } else {
                snprintf(value, sizeof value, "%d", rank);
                setenv(engines[e][0], value, 1);
                setenv(engines[e][1], "4", 1);
                char *eq = strchr(engines[e][2], '=');
                snprintf(value, sizeof value, "%.*s", (int)(eq - engines[e][2]), engines[e][2]);
                setenv(value, eq + 1, 1);
                snprintf(value, sizeof value, "%d", port - 1);   /* shard k at MASTER_PORT+1+k */
                setenv("MASTER_PORT", value, 1);
            }
            pids[rank] = support_spawn_asgd(f->dir, args);
        }
        for (int i = 0; i < 4 && engines[e][i]; i++) {
            char name[64];
            snprintf(name, sizeof name, "%.*s", (int)strcspn(engines[e][i], "="),
                     engines[e][i]);
            unsetenv(name);
        }
        for (int rank = 0; rank < 4; rank++) {
            if (support_wait(pids[rank]) != 0) {
                fail_msg("%s: rank %d failed", engines[e][0], rank);
            }
        }
        s_expect_cluster_done(dir);
    }
}

/* A worker whose shard is not there (gone, or never started) fails at its
 * [cluster] timeout with a line saying so, exit 138 (retryable: never
 * heard from, the shard may start later): its requests sent again fill
 * the queue to the shard, and a full queue once blocked it for good. */
static void test_a_client_without_its_shard_times_out(void **state)
{
    support_fixture *f = *state;
    support_write_file(f->config, "[data]\ndataset = synthetic\n[train]\nalgorithm = hogwild\n"
                       "[cluster]\nresend = 0.001\ntimeout = 1\n");
    char ps_hosts[64], run_dir[400];
    snprintf(ps_hosts, sizeof ps_hosts, "--ps_hosts=127.0.0.1:%d", wire_client_free_port());
    snprintf(run_dir, sizeof run_dir, "--run_dir=%s/w", f->dir);
    const char *args[] = {"worker", f->config, ps_hosts, "--worker_hosts=a", "--task_index=0",
                          run_dir, NULL};
    int pid = support_spawn_asgd(f->dir, args);
    int status = 0, ended = 0;
    for (int i = 0; i < 300 && (ended = waitpid(pid, &status, WNOHANG)) == 0; i++) {
        nanosleep(&(struct timespec){.tv_nsec = 100000000}, NULL);   /* at most 30 s */
    }
    if (ended == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        fail_msg("the worker was still waiting 30 s later");
    }
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == ERROR_RETRYABLE);
}

static void test_bad_role_arguments(void **state)
{
    support_fixture *f = *state;
    support_write_file(f->config, "[data]\ndataset = synthetic\n[train]\nalgorithm = hogwild\n");
    const char *cases[][6] = {
        {"worker", f->config, NULL},                                      /* no servers */
        {"worker", f->config, "--ps_hosts=h:1", "--job_name=ps", NULL},   /* wrong role */
        {"ps", f->config, "--ps_hosts=h:1", "--task_index=x", NULL},
        {"ps", f->config, "--ps_hosts=h:1", "--bogus=1", NULL},
        {"evaluator", NULL},
        {"ps", f->config, "--ps_hosts=h:1,", NULL},                       /* empty last host */
        {"role", f->config, NULL},                            /* no launcher's environment */
        {"role", "/nonexistent.ini", NULL},
    };
    for (int i = 0; i < 8; i++) {
        support_run_asgd(&f->r, f->dir, cases[i]);
        if (f->r.status != 2) {
            fail_msg("case %d: status %d: %s", i, f->r.status, f->r.err);
        }
    }
    setenv("RANK", "3", 1);   /* asgd role: a rank outside the world */
    setenv("WORLD_SIZE", "2", 1);
    setenv("MASTER_ADDR", "127.0.0.1", 1);
    const char *outside[] = {"role", f->config, NULL};
    support_run_asgd(&f->r, f->dir, outside);
    unsetenv("RANK");
    unsetenv("WORLD_SIZE");
    unsetenv("MASTER_ADDR");
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "asgd role: RANK=3: expected an integer from 0 to 1"));
    setenv("TF_CONFIG", "{\"cluster\": {\"ps\": [\"h:1\"]}, \"task\": {\"type\": \"ps\", "
           "\"index\": 0}}", 1);
    const char *mismatch[] = {"worker", f->config, NULL};
    support_run_asgd(&f->r, f->dir, mismatch);
    unsetenv("TF_CONFIG");
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "TF_CONFIG"));

    /* TF_CONFIGs that once crashed a role (a negative index overflowed the
     * sampler's and the shard's arrays) or were half read: each is one
     * line naming what is wrong, exit 2 */
    const char *bad[][3] = {
        {"worker", "{\"cluster\": {\"ps\": [\"127.0.0.1:1\"], \"worker\": [\"a\", \"b\"]}, "
                   "\"task\": {\"type\": \"worker\", \"index\": -1}}", "non-negative integer"},
        {"ps", "{\"cluster\": {\"ps\": [\"127.0.0.1:1\"]}, \"task\": {\"type\": \"ps\", "
               "\"index\": -1}}", "non-negative integer"},
        {"worker", "{\"cluster\": {\"ps\": [\"127.0.0.1:1\"], \"worker\": [\"a\", \"b\"]}, "
                   "\"task\": {\"type\": \"worker\", \"index\": 0.5}}", "got 0.5"},
        {"ps", "{\"cluster\": {\"ps\": [\"127.0.0.1:1\"]}, \"task\": {\"type\": \"ps\", "
               "\"index\": 0}} trailing", "not valid JSON (at byte"},
        {"worker", "{\"cluster\": {\"ps\": [\"127.0.0.1:1\"], \"worker\": \"a:1\"}, "
                   "\"task\": {\"type\": \"worker\", \"index\": 0}}", "cluster.worker must be a list"},
        {"worker", "{\"cluster\": {\"ps\": [\"127.0.0.1:1\"], \"worker\": [\"a\"]}, "
                   "\"task\": {\"type\": \"worker\", \"index\": 1}}",
         "TF_CONFIG: task worker 1, but cluster.worker lists 1"},
        /* a second evaluator, and a worker of a job that lists none (it
         * took [cluster] workers' count) */
        {"evaluator", "{\"cluster\": {\"ps\": [\"127.0.0.1:1\"]}, \"task\": {\"type\": "
                      "\"chief\", \"index\": 1}}", "asgd runs one evaluator, index 0"},
        {"worker", "{\"cluster\": {\"ps\": [\"127.0.0.1:1\"], \"worker\": []}, "
                   "\"task\": {\"type\": \"worker\", \"index\": 0}}", "lists no workers"},
        /* found by fuzz/fuzz_cluster: an empty shard address was taken */
        {"worker", "{\"cluster\": {\"ps\": [\"\", \"127.0.0.1:1\"], \"worker\": [\"a\"]}, "
                   "\"task\": {\"type\": \"worker\", \"index\": 0}}", "cluster.ps must list"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("TF_CONFIG", bad[i][1], 1);
        const char *args[] = {bad[i][0], f->config, NULL};
        support_run_asgd(&f->r, f->dir, args);
        unsetenv("TF_CONFIG");
        if (f->r.status != 2 || !strstr(f->r.err, bad[i][2])) {
            fail_msg("TF_CONFIG case %zu: status %d: %s", i, f->r.status, f->r.err);
        }
    }
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, support_fixture_setup, support_fixture_teardown)
    const struct CMUnitTest tests[] = {
        T(test_sync_over_tcp_with_two_shards),
        T(test_shard_ports_are_outside_the_ephemeral_range),
        T(test_hogwild_over_ipc_with_apply_threads),
        T(test_sync_with_a_backup_worker_drops_gradients),
        T(test_one_worker_follows_sequential_exactly),
        T(test_cnn_workers),
        T(test_shared_segments_change_nothing_but_the_path),
        T(test_prefetch_is_one_push_staler),
        T(test_compressed_pushes_match_the_simulator),
        T(test_real_workers_replay_a_trace),
        T(test_faults_change_nothing_but_time),
        T(test_agn_window_one_follows_hogwild),
        T(test_every_rule_learns_with_three_workers),
        T(test_every_rule_finishes_through_faults),
        T(test_elastic_rules_with_alpha_zero_never_move_the_centre),
        T(test_ssp_keeps_clocks_within_the_bound),
        T(test_dynsgd_one_worker_sees_no_staleness),
        T(test_writing_a_rule_example),
        T(test_killed_worker_is_restarted_on_failure),
        T(test_killed_worker_fails_the_job_under_never),
        T(test_sigint_leaves_no_process_or_port),
        T(test_nohup_keeps_a_hangup_ignored),
        T(test_a_diverging_run_is_a_result),
        T(test_roles_started_by_hand),
        T(test_a_worker_of_other_settings_is_refused),
        T(test_an_evaluator_on_another_clock_places_the_shards_times),
        T(test_a_shard_restored_on_another_clock_is_placed_anew),
        T(test_roles_from_a_launchers_environment),
        T(test_a_process_refusing_its_data_says_why),
        T(test_short_evaluation_intervals_are_kept),
        T(test_the_final_evaluation_never_steps_back),
        T(test_workers_wait_for_a_late_evaluator),
        T(test_a_client_without_its_shard_times_out),
        T(test_a_worker_that_cannot_share_uses_the_socket),
        T(test_bad_role_arguments),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
