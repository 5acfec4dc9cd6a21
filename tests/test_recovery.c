/* test_recovery.c: jobs that lose a process and go on. A push sent again
 * is applied once; a shard killed with SIGKILL comes back from its
 * checkpoint and the job completes with the accuracy of an undisturbed
 * run, having lost at most one checkpoint interval of updates; a run
 * interrupted by Ctrl-C goes on with `asgd train --resume` to the same
 * total work, and so does one started role by role with asgd ps --resume;
 * a worker killed with SIGKILL loses no row of steps.csv.
 * Real processes over ipc. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <glob.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cJSON.h>
#include <zmq.h>

#include "core/checkpoint.h"
#include "core/real/collect.h"
#include "core/summary.h"
#include "core/run.h"
#include "transport/wire.h"
#include "support.h"
#include "wire_client.h"

/* About 5 s of training on 2 cores, ending on a plateau (repeated runs
 * agree within 0.1 point): time to kill something mid-run. */
static const char s_job[] =
    "[experiment]\nname = job\n"
    "[data]\ndataset = synthetic\ntrain_size = 10000\ndim = 64\nnoise = 0.6\n"
    "[model]\ntype = mlp\nhidden = 512,512\n"
    "[train]\nepochs = 8\nbatch = 32\nlr = 0.05\n"
    "[eval]\nevery = 0.5\n"
    "[cluster]\nworkers = 2\n";

static cJSON *s_summary(support_fixture *f, const char *run_id)
{
    char path[600];
    snprintf(path, sizeof path, "%s/job/%s/summary.json", f->out, run_id);
    return support_json_file(path);
}

static const char *s_string(const cJSON *j, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* Writes the job's config and puts `asgd train` with extra (at most 12,
 * NULL-ended) in args. */
static void s_args(support_fixture *f, const char *const *extra, const char *args[16])
{
    support_write_file(f->config, s_job);
    int n = 0;
    args[n++] = "train";
    args[n++] = f->config;
    args[n++] = f->out_arg;
    for (int i = 0; extra[i]; i++) {
        args[n++] = extra[i];
    }
    args[n] = NULL;
}

/* Runs the job to its end; fails the test if it does not complete. */
static cJSON *s_run(support_fixture *f, const char *const *extra)
{
    const char *args[16];
    s_args(f, extra, args);
    support_run_asgd(&f->r, f->dir, args);
    if (f->r.status != 0) {
        fail_msg("the job failed: %s", f->r.err);
    }
    cJSON *j = s_summary(f, extra[0] + strlen("experiment.run_id="));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "complete")));
    return j;
}

/* Starts the job in the background once worker 0 has taken `steps` steps. */
static int s_start(support_fixture *f, const char *const *extra, int steps)
{
    const char *args[16];
    s_args(f, extra, args);
    int pid = support_spawn_asgd(f->dir, args);
    char path[600];
    snprintf(path, sizeof path, "%s/job/%s/steps-0.csv", f->out,
             extra[0] + strlen("experiment.run_id="));
    if (!support_wait_lines(path, steps, 60)) {
        kill(pid, SIGKILL);
        fail_msg("the job did not start");
    }
    return pid;
}

/* The most steps.csv rows (pushes, for hogwild; rounds times workers for
 * sync) in any window of `seconds`. */
static long s_most_steps_within(support_fixture *f, const char *run_id, double seconds)
{
    char path[600];
    snprintf(path, sizeof path, "%s/job/%s/steps.csv", f->out, run_id);
    char *text = support_read_file(path);
    assert_non_null(text);
    size_t cap = 1 << 16, n = 0;
    double *t = malloc(cap * sizeof *t);
    for (char *line = strchr(text, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        if (n == cap) {
            t = realloc(t, (cap *= 2) * sizeof *t);
        }
        t[n++] = strtod(line + 1, NULL);
    }
    long most = 0;
    for (size_t i = 0, j = 0; i < n; i++) {   /* rows are in time order */
        while (t[i] - t[j] > seconds) {
            j++;
        }
        most = (long)(i - j + 1) > most ? (long)(i - j + 1) : most;
    }
    free(t);
    free(text);
    return most;
}

/* Fails unless dir's steps.csv has each worker's steps 1, 2, ... once
 * each, in the order of their times; returns the rows. */
static long s_steps_in_order(const char *dir, int workers)
{
    char path[700];
    snprintf(path, sizeof path, "%s/steps.csv", dir);
    char *text = support_read_file(path);
    assert_non_null(text);
    long last[8] = {0}, rows = 0;
    double at[8] = {0};
    assert_true(workers <= 8);
    for (char *line = strchr(text, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        double t;
        int w;
        long step;
        assert_int_equal(sscanf(line + 1, "%lf,%d,%ld", &t, &w, &step), 3);
        assert_true(w >= 0 && w < workers);
        if (step != last[w] + 1 || (last[w] > 0 && !(t > at[w]))) {
            fail_msg("worker %d: step %ld at %.6f s after step %ld at %.6f s", w, step, t,
                     last[w], at[w]);
        }
        last[w] = step;
        at[w] = t;
        rows++;
    }
    free(text);
    return rows;
}

/* A push sent again (same number) is applied once; a new process for the
 * same worker numbers its requests from 1 again and is applied. */
static void test_a_push_sent_again_is_applied_once(void **state)
{
    support_fixture *f = *state;
    support_write_file(f->config, "[data]\ndataset = synthetic\ndim = 6\nclasses = 3\n"
                       "[model]\ntype = softmax\n[train]\nalgorithm = hogwild\n");
    int port = wire_client_free_port();
    char hosts[64], run_dir[400];
    snprintf(hosts, sizeof hosts, "--ps_hosts=127.0.0.1:%d", port);
    snprintf(run_dir, sizeof run_dir, "--run_dir=%s", f->dir);
    const char *args[] = {"ps", f->config, hosts, "--worker_hosts=a", "--task_index=0",
                          "--evaluator=0", run_dir, NULL};
    int ps = support_spawn_asgd(f->dir, args);
    void *ctx = zmq_ctx_new();
    void *sock = wire_client_open(ctx, port, NULL);
    float theta[21], grad[21] = {0.5f};
    wire_header pull = {.type = WIRE_PULL, .encoding = WIRE_NO_PAYLOAD, .seq = 1};
    wire_header reply;
    assert_true(wire_client_send(sock, &pull, NULL, 0));
    assert_int_equal(wire_client_receive(sock, &reply, theta, sizeof theta, 21, 10000),
                     sizeof theta);
    assert_int_equal(reply.seq, 1);
    wire_header push = {.type = WIRE_PUSH, .count = 21, .encoding = WIRE_F32, .samples = 64,
                        .seq = 2, .generation = reply.generation};
    for (int i = 0; i < 3; i++) {
        assert_true(wire_client_send(sock, &push, grad, sizeof grad));
    }
    pull.seq = 3;
    pull.generation = reply.generation;
    assert_true(wire_client_send(sock, &pull, NULL, 0));
    assert_int_equal(wire_client_receive(sock, &reply, theta, sizeof theta, 21, 10000),
                     sizeof theta);
    assert_int_equal(reply.base_version, 1);
    assert_int_equal(reply.total, 64);   /* this worker's examples */
    /* a new process: generation 0, numbering from 1 */
    push.seq = 1;
    push.generation = 0;
    assert_true(wire_client_send(sock, &push, grad, sizeof grad));
    pull.seq = 2;
    assert_true(wire_client_send(sock, &pull, NULL, 0));
    assert_int_equal(wire_client_receive(sock, &reply, theta, sizeof theta, 21, 10000),
                     sizeof theta);
    assert_int_equal(reply.base_version, 2);
    wire_header stats = {.type = WIRE_CONTROL, .worker = WIRE_ANY, .tag = WIRE_CONTROL_STATS,
                         .encoding = WIRE_NO_PAYLOAD};
    char json[4096] = {0};
    assert_true(wire_client_send(sock, &stats, NULL, 0));
    assert_true(wire_client_receive(sock, &reply, json, sizeof json - 1, 21, 10000) > 0);
    cJSON *j = cJSON_Parse(json);
    assert_true(support_json_number(j, "duplicates") == 2);
    assert_true(support_json_number(j, "pushes") == 2);
    cJSON_Delete(j);
    kill(ps, SIGTERM);
    assert_int_equal(support_wait(ps), ERROR_SIGNALLED(SIGTERM));
    zmq_close(sock);
    zmq_ctx_term(ctx);
}

/* A shard killed with SIGKILL mid-run, under restart = on-failure with a
 * checkpoint every 0.3 s, comes back from its checkpoint; its workers go
 * on, and the job completes within a point of the undisturbed run's
 * accuracy, having lost no more updates than the most made in one
 * interval. For an asynchronous rule and a synchronous one. */
static void test_a_killed_shard_comes_back_from_its_checkpoint(void **state)
{
    support_fixture *f = *state;
    const char *rules[] = {"hogwild", "sync"};
    for (int i = 0; i < 2; i++) {
        char rule[64], calm[64], hit[64];
        snprintf(rule, sizeof rule, "train.algorithm=%s", rules[i]);
        const char *lr = i ? "train.lr=0.1" : "train.lr=0.05";   /* sync: the mean of 2 */
        snprintf(calm, sizeof calm, "experiment.run_id=calm-%s", rules[i]);
        snprintf(hit, sizeof hit, "experiment.run_id=hit-%s", rules[i]);
        const char *plain[] = {calm, rule, lr, NULL};
        cJSON *undisturbed = s_run(f, plain);
        const char *extra[] = {hit, rule, lr, "checkpoint.every=0.3",
                               "cluster.restart=on-failure", NULL};
        int launcher = s_start(f, extra, 150);
        int shard;
        assert_int_equal(support_children(launcher, "ps", &shard, 1), 1);
        kill(shard, SIGKILL);
        int status = support_wait(launcher);
        if (status != 0) {
            char path[600];
            snprintf(path, sizeof path, "%s/stderr", f->dir);
            char *err = support_read_file(path);
            fail_msg("%s: the job failed: %s", rules[i], err);
        }
        cJSON *j = s_summary(f, hit + strlen("experiment.run_id="));
        assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "complete")));
        assert_true(support_json_number(j, "shard_restarts") == 1);
        assert_true(support_json_number(j, "restarts") == 1);
        double acc = support_json_number(j, "final_test_acc");
        double calm_acc = support_json_number(undisturbed, "final_test_acc");
        if (fabs(acc - calm_acc) > 0.01) {
            fail_msg("%s: accuracy %.4f after the kill, %.4f undisturbed", rules[i], acc,
                     calm_acc);
        }
        long lost = (long)support_json_number(j, "lost_updates");
        long most = s_most_steps_within(f, hit + strlen("experiment.run_id="), 0.3);
        if (strcmp(rules[i], "sync") == 0) {
            most = most / 2 + 1;   /* a round is one step of each of the 2 workers */
        }
        if (lost > most) {
            fail_msg("%s: %ld updates lost, more than the %ld of one interval", rules[i], lost,
                     most);
        }
        cJSON_Delete(j);
        cJSON_Delete(undisturbed);
    }
    /* killed before its first interval: the checkpoint written when
     * training began (version 0) brings it back, and everything it had
     * applied counts as lost (it once came back as the same generation
     * from nothing and counted no loss); it knows when training began, so
     * the steps before the kill keep their times (the restarted shard's
     * own first pull was taken for it, and they were all at 0) */
    const char *early[] = {"experiment.run_id=early", "train.algorithm=hogwild",
                           "checkpoint.every=1000", "cluster.restart=on-failure", NULL};
    int launcher = s_start(f, early, 150);
    int shard;
    assert_int_equal(support_children(launcher, "ps", &shard, 1), 1);
    kill(shard, SIGKILL);
    assert_int_equal(support_wait(launcher), 0);
    cJSON *j = s_summary(f, "early");
    assert_true(support_json_number(j, "shard_restarts") == 1);
    char dir[600];
    snprintf(dir, sizeof dir, "%s/job/early", f->out);
    s_steps_in_order(dir, (int)support_json_number(j, "workers"));
    if (support_json_number(j, "lost_updates") < 140) {
        fail_msg("%g updates lost, though worker 0 alone had pushed 150 before the kill",
                 support_json_number(j, "lost_updates"));
    }
    cJSON_Delete(j);
    /* killed for good (restart = never): the run fails, and its summary
     * says that shard 0's counters are unknown (it said 0 updates and 0
     * samples/s beside eval.csv's accuracy after them) */
    const char *never[] = {"experiment.run_id=never", "train.algorithm=hogwild", NULL};
    launcher = s_start(f, never, 150);
    assert_int_equal(support_children(launcher, "ps", &shard, 1), 1);
    kill(shard, SIGKILL);
    assert_int_not_equal(support_wait(launcher), 0);
    j = s_summary(f, "never");
    assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(j, "complete")));
    const char *unknown[] = {"updates", "samples", "epochs", "samples_per_s"};
    for (int i = 0; i < 4; i++) {
        if (!cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, unknown[i]))) {
            fail_msg("%s is not null in a summary without shard 0's counters", unknown[i]);
        }
    }
    assert_true(support_json_number(j, "shards_missing") == 1);
    cJSON_Delete(j);
}

/* The time of the last row of dir's eval.csv, whose clock goes on and
 * never back (failing the test where it does). */
static double s_eval_ends(const char *dir)
{
    char path[700];
    snprintf(path, sizeof path, "%s/eval.csv", dir);
    char *eval = support_read_file(path);
    assert_non_null(eval);
    double last = -1;
    for (char *line = strchr(eval, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        double t = strtod(line + 1, NULL);
        if (t < last) {
            fail_msg("eval.csv goes back from %g s to %g s", last, t);
        }
        last = t;
    }
    free(eval);
    return last;
}

/* Each (worker, step) row's loss in run_id's steps.csv, at [worker *
 * MAX_STEPS + step] (NAN where there is no row). */
enum { MAX_STEPS = 4096 };
static double *s_losses(support_fixture *f, const char *run_id, int workers)
{
    char path[700];
    snprintf(path, sizeof path, "%s/job/%s/steps.csv", f->out, run_id);
    char *csv = support_read_file(path);
    assert_non_null(csv);
    double *loss = malloc((size_t)workers * MAX_STEPS * sizeof *loss);
    for (int i = 0; i < workers * MAX_STEPS; i++) {
        loss[i] = NAN;
    }
    for (char *line = strchr(csv, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        double t, l;
        int worker;
        long step;
        assert_int_equal(sscanf(line + 1, "%lf,%d,%ld,%lf", &t, &worker, &step, &l), 4);
        assert_true(worker >= 0 && worker < workers && step >= 1 && step < MAX_STEPS);
        loss[worker * MAX_STEPS + step] = l;
    }
    free(csv);
    return loss;
}

/* `asgd train --resume` of f's run run_id to its end: its summary, which
 * says it is complete (the test fails otherwise). */
static cJSON *s_resume(support_fixture *f, const char *run_id)
{
    char dir[600];
    snprintf(dir, sizeof dir, "%s/job/%s", f->out, run_id);
    const char *resume[] = {"train", "--resume", dir, NULL};
    support_run_asgd(&f->r, f->dir, resume);
    if (f->r.status != 0) {
        fail_msg("%s: the resume failed: %s", run_id, f->r.err);
    }
    cJSON *j = s_summary(f, run_id);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "complete")));
    return j;
}

/* Ctrl-C, then `asgd train --resume`: the run completes with the same
 * samples and updates as one never interrupted, its time axis going on
 * where it stopped, and says it was resumed. At a learning rate too small
 * to move the model, each step's loss is that of the same step of the
 * run never interrupted: the resumed workers go on with the minibatches
 * they had not reached (they drew their first ones again), and with those
 * steps' dropout masks (they drew the first steps' again). */
static void test_resume_after_ctrl_c_does_the_same_work(void **state)
{
    support_fixture *f = *state;
    const char *plain[] = {"experiment.run_id=whole", "train.algorithm=hogwild",
                           "train.lr=1e-30", "model.dropout=0.3", NULL};
    cJSON *whole = s_run(f, plain);
    const char *extra[] = {"experiment.run_id=cut", "train.algorithm=hogwild", "train.lr=1e-30",
                           "model.dropout=0.3", NULL};
    int launcher = s_start(f, extra, 150);
    kill(launcher, SIGINT);
    assert_int_equal(support_wait(launcher), 1);
    cJSON *cut = s_summary(f, "cut");
    assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(cut, "complete")));
    double cut_samples = support_json_number(cut, "samples");
    double cut_checkpoints = support_json_number(cut, "checkpoints");
    double cut_wall = support_json_number(cut, "wall_time_s");
    double cut_startup = support_json_number(cut, "startup_s");
    double cut_time = support_json_number(cut, "time_s");
    assert_true(cut_checkpoints >= 1);   /* written when the shard was stopped */
    cJSON_Delete(cut);
    char dir[600];
    snprintf(dir, sizeof dir, "%s/job/cut", f->out);
    cJSON *j = s_resume(f, "cut");
    assert_true(support_json_number(j, "resumes") == 1);
    assert_true(support_json_number(j, "samples") == support_json_number(whole, "samples"));
    assert_true(support_json_number(j, "updates") == support_json_number(whole, "updates"));
    assert_true(support_json_number(j, "samples") > cut_samples);
    /* every checkpoint once: the one the interrupted shard wrote when it
     * stopped and the resumed shard read (once left out: 0 against 1) */
    assert_true(support_json_number(j, "checkpoints") ==
                cut_checkpoints + support_json_number(whole, "checkpoints"));
    /* the wall time and start-up of both sessions (once only the last's:
     * a wall time shorter than the training in it) */
    double wall = support_json_number(j, "wall_time_s");
    double startup = support_json_number(j, "startup_s");
    if (startup <= cut_startup || wall < cut_wall + support_json_number(j, "time_s") - cut_time) {
        fail_msg("resumed: wall_time_s %g, startup_s %g; interrupted: %g and %g, time_s %g "
                 "of %g", wall, startup, cut_wall, cut_startup, cut_time,
                 support_json_number(j, "time_s"));
    }
    assert_string_equal(s_string(j, "algorithm"), "hogwild");
    s_eval_ends(dir);
    int workers = (int)support_json_number(j, "workers");
    /* each resumed worker's closing line counts the minibatches it took,
     * not those its predecessor had (it gave its whole share) */
    char path[700];
    snprintf(path, sizeof path, "%s/log.txt", dir);
    char *log = support_read_file(path);
    assert_non_null(log);
    for (int w = 0; w < workers; w++) {
        char head[40];
        snprintf(head, sizeof head, "worker %d: ", w);
        long before = -1, share = -1, took = -1;
        for (char *at = strstr(log, head); at; at = strstr(at + 1, head)) {
            const char *rest = at + strlen(head);
            long a, b;
            double s1, s2, s3, s4;
            if (sscanf(rest, "%ld of its %ld minibatches done already", &a, &b) == 2) {
                before = a;
                share = b;
            } else if (sscanf(rest, "%lf s in pulls, %lf s in gradients, %lf s in pushes, of "
                              "%lf s (%ld minibatches)", &s1, &s2, &s3, &s4, &a) == 5) {
                took = a;
            }
        }
        if (before <= 0 || took <= 0 || before + took != share) {
            fail_msg("worker %d: %ld minibatches done before, %ld taken after, of %ld", w,
                     before, took, share);
        }
    }
    free(log);
    double *want = s_losses(f, "whole", workers), *got = s_losses(f, "cut", workers);
    int compared = 0;
    for (int i = 0; i < workers * MAX_STEPS; i++) {
        if (got[i] == got[i]) {
            if (got[i] != want[i]) {
                fail_msg("worker %d step %d: loss %.7f, never interrupted %.7f", i / MAX_STEPS,
                         i % MAX_STEPS, got[i], want[i]);
            }
            compared++;
        }
    }
    assert_true(compared > 10);
    free(want);
    free(got);
    /* a finished run is not resumed again */
    const char *resume[] = {"train", "--resume", dir, NULL};
    support_run_asgd(&f->r, f->dir, resume);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "complete"));
    cJSON_Delete(j);
    cJSON_Delete(whole);
}

/* A session whose launcher is killed (SIGKILL: its processes die with it,
 * and nothing is gathered or summed), then resumed to the end:
 * - the summary the killed session began with keeps the earlier
 *   sessions' wall time, start-up and restarts (it held 0s, and the
 *   next resume lost them);
 * - the updates the killed session made after its shard's last
 *   checkpoint, which eval.csv showed, count as lost (0 was reported);
 * - the killed session's steps keep their times (the next session's
 *   clock placed them at 0): each worker's steps are in time order;
 * - eval.csv is in time order: the killed session's evaluations after its
 *   checkpoint (a lost model, later than where the clock goes on) are cut
 *   (they stayed, and the curve went back where the next session began).
 * - a second resume while the first runs is refused (exit 2).
 * The shard is stopped (SIGSTOP) while the test looks, so that no
 * checkpoint lands between the look and the kill. */
static void test_a_resume_after_the_launcher_was_killed(void **state)
{
    support_fixture *f = *state;
    const char *extra[] = {"experiment.run_id=crash", "train.algorithm=hogwild",
                           "checkpoint.every=0.3", NULL};
    int launcher = s_start(f, extra, 100);
    kill(launcher, SIGINT);
    assert_int_equal(support_wait(launcher), 1);
    cJSON *cut = s_summary(f, "crash");
    double cut_wall = support_json_number(cut, "wall_time_s");
    double cut_startup = support_json_number(cut, "startup_s");
    double cut_updates = support_json_number(cut, "updates");
    cJSON_Delete(cut);
    char dir[600], ckpt[700], evals[700];
    snprintf(dir, sizeof dir, "%s/job/crash", f->out);
    checkpoint_path(ckpt, sizeof ckpt, dir, 0);
    snprintf(evals, sizeof evals, "%s/eval.csv", dir);
    const char *resume[] = {"train", "--resume", dir, NULL};
    launcher = support_spawn_asgd(f->dir, resume);
    shard_stats st = {0};
    uint64_t seen = 0;
    bool ready = false;
    for (int tries = 0; tries < 3000 && !ready; tries++) {
        int shard;
        if (support_children(launcher, "ps", &shard, 1) == 1 && kill(shard, SIGSTOP) == 0) {
            error err;
            /* a checkpoint of this session's, well into its training, and an
             * evaluation after it */
            ready = checkpoint_stats(ckpt, &st, &err) == 0 && st.resumes == 1 &&
                    st.first_pull_at > 0 && (double)st.version > cut_updates + 20 &&
                    (seen = summary_evals_last_updates(evals)) > st.version;
            if (!ready) {
                kill(shard, SIGCONT);
            }
        }
        if (!ready) {
            run_sleep(0.02);
        }
    }
    /* a second resume of the run under way is refused, before it starts a
     * second job's processes in the folder (they wrote over the first's
     * checkpoints and rows) */
    support_run_asgd(&f->r, f->dir, resume);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "the run is under way"));
    kill(launcher, SIGKILL);
    support_wait(launcher);
    assert_true(ready);
    cJSON *mid = s_summary(f, "crash");
    assert_true(support_json_number(mid, "wall_time_s") == cut_wall);
    assert_true(support_json_number(mid, "startup_s") == cut_startup);
    cJSON_Delete(mid);
    run_sleep(0.2);   /* its processes die with it (PDEATHSIG) */
    support_run_asgd(&f->r, f->dir, resume);
    if (f->r.status != 0) {
        fail_msg("resume after the kill failed: %s", f->r.err);
    }
    cJSON *j = s_summary(f, "crash");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "complete")));
    assert_true(support_json_number(j, "resumes") == 2);
    /* every session's command, the first's with its overrides (a resume
     * wrote its own over it) */
    const cJSON *sessions = cJSON_GetObjectItemCaseSensitive(j, "sessions");
    assert_int_equal(cJSON_GetArraySize(sessions), 3);
    const char *commands[3];
    for (int i = 0; i < 3; i++) {
        const cJSON *command = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetArrayItem(sessions, i), "command");
        assert_true(cJSON_IsString(command));
        commands[i] = command->valuestring;
    }
    assert_non_null(strstr(commands[0], "experiment.run_id=crash"));
    assert_non_null(strstr(commands[1], "--resume"));
    assert_non_null(strstr(commands[2], "--resume"));
    assert_true(support_json_number(j, "wall_time_s") > cut_wall);
    assert_true(support_json_number(j, "startup_s") > cut_startup);
    if (support_json_number(j, "lost_updates") < (double)(seen - st.version)) {
        fail_msg("lost_updates %g; eval.csv saw %llu updates, the checkpoint held %llu",
                 support_json_number(j, "lost_updates"), (unsigned long long)seen,
                 (unsigned long long)st.version);
    }
    int workers = (int)support_json_number(j, "workers");
    long rows = s_steps_in_order(dir, workers);
    assert_true(rows == (long)support_json_number(j, "pushes"));
    cJSON_Delete(j);
    s_eval_ends(dir);
}

/* The steps-K.csv in f->dir gathered into its steps.csv on these clocks;
 * steps.csv's text (free it). */
static char *s_gathered(support_fixture *f, int workers, const steps_clock *clocks, int n)
{
    run r = {0};
    char path[4200];
    snprintf(r.dir, sizeof r.dir, "%s", f->dir);
    snprintf(path, sizeof path, "%s/steps.csv", f->dir);
    error err = {0};
    r.steps = run_append_csv(path, RUN_STEPS_HEADER, false, &err);
    assert_non_null(r.steps);
    collect_steps(&r, workers, clocks, n);
    fclose(r.steps);
    return support_read_file(path);
}

/* steps.csv of a resumed run, or of a worker restarted: a step computed
 * but never pushed is taken again by the worker's next process and has
 * one row, the one that counted, among the earlier session's rows in time
 * order. Worker 1's step 3 was cut off by the interruption; worker 0's
 * process after a restart took step 4 again. Once the earlier rows stayed
 * as they were, these after them: 10 rows for 8 steps, time going back. */
static void test_steps_taken_again_have_one_row(void **state)
{
    support_fixture *f = *state;
    char path[4200];
    snprintf(path, sizeof path, "%s/steps.csv", f->dir);
    support_write_file(path, RUN_STEPS_HEADER "\n0.100000,0,1,1,0,0\n0.200000,1,1,1,0,0\n"
                       "0.300000,0,2,1,0,0\n0.400000,1,2,1,0,0\n0.500000,1,3,9,0,0\n");
    snprintf(path, sizeof path, "%s/steps-0.csv", f->dir);
    support_write_file(path, RUN_STEPS_HEADER "\n1000.45,0,3,1,0,0\n1000.5,0,4,9,0,0\n"
                       "1000.55,0,4,1,0,0\n");
    snprintf(path, sizeof path, "%s/steps-1.csv", f->dir);
    support_write_file(path, RUN_STEPS_HEADER "\n1000.48,1,3,1,0,0\n1000.6,1,4,1,0,0\n");
    char *text = s_gathered(f, 2, &(steps_clock){.t0 = 1000.0}, 1);
    assert_string_equal(text, RUN_STEPS_HEADER "\n0.100000,0,1,1,0,0\n0.200000,1,1,1,0,0\n"
                        "0.300000,0,2,1,0,0\n0.400000,1,2,1,0,0\n0.450000,0,3,1,0,0\n"
                        "0.480000,1,3,1,0,0\n0.550000,0,4,1,0,0\n0.600000,1,4,1,0,0\n");
    free(text);
    snprintf(path, sizeof path, "%s/steps-0.csv", f->dir);
    assert_int_equal(access(path, F_OK), -1);   /* gathered */
}

/* The steps of a job resumed by hand, two sessions' in one steps-0.csv
 * (the first's evaluator stopped before it could gather them): each row
 * on its session's clock. The first began at 1000 s and stepped from
 * 1000.1 s; the second began at 2000 s and goes on from 0.3 s of
 * training (its clock's origin 1999.7 s). Once every row was on the
 * last session's clock: the first's at 0. */
static void test_each_sessions_steps_on_its_clock(void **state)
{
    support_fixture *f = *state;
    char path[4200];
    snprintf(path, sizeof path, "%s/steps-0.csv", f->dir);
    support_write_file(path, RUN_STEPS_HEADER "\n1000.2,0,1,1,0,0\n1000.35,0,2,1,0,0\n"
                       "2000.05,0,3,1,0,0\n2000.1,0,4,1,0,0\n");
    const steps_clock clocks[] = {{.since = 2000, .t0 = 1999.7}, {.since = 1000, .t0 = 1000.1}};
    char *text = s_gathered(f, 1, clocks, 2);
    assert_string_equal(text, RUN_STEPS_HEADER "\n0.100000,0,1,1,0,0\n0.250000,0,2,1,0,0\n"
                        "0.350000,0,3,1,0,0\n0.400000,0,4,1,0,0\n");
    free(text);
}

/* A worker killed with SIGKILL mid-run and restarted: steps.csv has a row
 * for every step of every worker, from 1 to its last, so none whose push
 * counted is missing. A worker's rows once sat in its stdio buffer until
 * 4 KB had gathered, and the kill lost them (72 of 2,812 rows in one run);
 * now each row reaches the file before its push leaves. */
static void test_a_killed_worker_loses_no_step_row(void **state)
{
    support_fixture *f = *state;
    const char *extra[] = {"experiment.run_id=worker-hit", "train.algorithm=hogwild",
                           "cluster.restart=on-failure", NULL};
    int launcher = s_start(f, extra, 150);
    /* steps-0.csv has just grown: a buffer's worth of rows would be on disk
     * then, so the kill comes a moment later (about 50 rows each) */
    nanosleep(&(struct timespec){.tv_nsec = 200000000}, NULL);
    int workers[2];
    assert_int_equal(support_children(launcher, "worker", workers, 2), 2);
    kill(workers[0], SIGKILL);
    assert_int_equal(support_wait(launcher), 0);
    cJSON *j = s_summary(f, "worker-hit");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "complete")));
    assert_true(support_json_number(j, "restarts") == 1);
    char path[600];
    snprintf(path, sizeof path, "%s/job/worker-hit/steps.csv", f->out);
    char *text = support_read_file(path);
    assert_non_null(text);
    enum { MAX_STEPS = 1 << 14 };
    static unsigned char seen[2][MAX_STEPS];
    memset(seen, 0, sizeof seen);
    long last[2] = {0, 0}, rows = 0;
    for (char *line = strchr(text, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        double t;
        int worker;
        long step;
        assert_int_equal(sscanf(line + 1, "%lf,%d,%ld,", &t, &worker, &step), 3);
        assert_true(worker >= 0 && worker < 2 && step >= 1 && step < MAX_STEPS);
        seen[worker][step] = 1;
        last[worker] = step > last[worker] ? step : last[worker];
        rows++;
    }
    long missing = 0, first_missing[2] = {0, 0};
    for (int w = 0; w < 2; w++) {
        for (long step = 1; step <= last[w]; step++) {
            if (!seen[w][step]) {
                missing++;
                first_missing[w] = first_missing[w] ? first_missing[w] : step;
            }
        }
    }
    if (missing > 0) {
        fail_msg("%ld of %ld steps have no row in steps.csv (worker 0 from step %ld, "
                 "worker 1 from step %ld)", missing, rows + missing, first_missing[0],
                 first_missing[1]);
    }
    /* every push the shard counted has its row */
    assert_true(rows >= support_json_number(j, "updates"));
    free(text);
    cJSON_Delete(j);
}

/* A hogwild job of s_job whose roles are started by hand: its shard's
 * port and flags, and its run folder. */
typedef struct by_hand {
    int port;
    char ps_hosts[64], dir[500], run_dir[520];
} by_hand;

/* Writes the job's config and chooses its port; its folder is f->dir/name. */
static void s_by_hand(support_fixture *f, const char *name, by_hand *h)
{
    char config[sizeof s_job + 64];
    snprintf(config, sizeof config, "%s[train]\nalgorithm = hogwild\n", s_job);
    support_write_file(f->config, config);
    h->port = wire_client_free_port();
    snprintf(h->ps_hosts, sizeof h->ps_hosts, "--ps_hosts=127.0.0.1:%d", h->port);
    snprintf(h->dir, sizeof h->dir, "%s/%s", f->dir, name);
    snprintf(h->run_dir, sizeof h->run_dir, "--run_dir=%s", h->dir);
}

/* Starts the job's four roles (a shard by flags, its evaluator, two
 * workers); the shard with --resume when `resume`. */
static void s_start_by_hand(support_fixture *f, const by_hand *h, bool resume, int pids[4])
{
    const char *ps_args[] = {"ps", f->config, h->ps_hosts, "--worker_hosts=w0:1,w1:1",
                             "--task_index=0", h->run_dir, resume ? "--resume" : NULL, NULL};
    pids[0] = support_spawn_asgd(f->dir, ps_args);
    const char *ev_args[] = {"evaluator", f->config, h->ps_hosts, "--worker_hosts=w0:1,w1:1",
                             h->run_dir, NULL};
    pids[1] = support_spawn_asgd(f->dir, ev_args);
    for (int w = 0; w < 2; w++) {
        char task[32];
        snprintf(task, sizeof task, "--task_index=%d", w);
        const char *args[] = {"worker", f->config, h->ps_hosts, "--worker_hosts=w0:1,w1:1",
                              task, h->run_dir, NULL};
        pids[2 + w] = support_spawn_asgd(f->dir, args);
    }
}

/* Shard 0's `field` less its first_pull_at, as its ps-0.json in dir has them. */
static double s_shard_since_first_pull(const char *dir, const char *field)
{
    char path[600];
    snprintf(path, sizeof path, "%s/ps-0.json", dir);
    cJSON *ps = support_json_file(path);
    assert_non_null(ps);
    double t = support_json_number(ps, field) - support_json_number(ps, "first_pull_at");
    cJSON_Delete(ps);
    return t;
}

/* The job started, stopped once worker 0 has 150 steps (SIGTERM to every
 * process: the shard writes its checkpoint); the training before the
 * stop, as the shard's clock has it (the evaluator's summary has its
 * counters of its last look, up to half a second old). */
static double s_cut_by_hand(support_fixture *f, const by_hand *h)
{
    char path[600];
    int pids[4];
    s_start_by_hand(f, h, false, pids);
    snprintf(path, sizeof path, "%s/steps-0.csv", h->dir);
    if (!support_wait_lines(path, 150, 60)) {
        for (int i = 0; i < 4; i++) {
            kill(pids[i], SIGKILL);
        }
        fail_msg("the job did not start");
    }
    for (int i = 3; i >= 0; i--) {   /* the workers, the evaluator, then the shard */
        kill(pids[i], SIGTERM);
    }
    for (int i = 0; i < 4; i++) {
        support_wait(pids[i]);
    }
    return s_shard_since_first_pull(h->dir, "last_push_at");
}

/* The job resumed by hand and run to its end; its summary.json. */
static cJSON *s_resume_by_hand(support_fixture *f, const by_hand *h)
{
    int pids[4];
    s_start_by_hand(f, h, true, pids);
    for (int i = 0; i < 4; i++) {
        if (support_wait(pids[i]) != 0) {
            fail_msg("resumed by hand: process %d failed", i);
        }
    }
    char path[600];
    snprintf(path, sizeof path, "%s/summary.json", h->dir);
    cJSON *j = support_json_file(path);
    assert_non_null(j);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "complete")));
    return j;
}

/* A job started role by role, stopped (SIGTERM to every process: the shard
 * writes its checkpoint) and resumed by hand with asgd ps --resume: its
 * summary counts the resume, and its wall_time_s and startup_s add up
 * over both sessions, as asgd train --resume's do (resumes stayed 0,
 * startup_s was 0 and wall_time_s the evaluator's last session alone:
 * shorter than the training in it). */
static void test_a_job_resumed_by_hand_adds_up_its_sessions(void **state)
{
    support_fixture *f = *state;
    by_hand h;
    s_by_hand(f, "by-hand", &h);
    double cut_time = s_cut_by_hand(f, &h);
    char path[600];
    snprintf(path, sizeof path, "%s/summary.json", h.dir);
    cJSON *cut = support_json_file(path);
    assert_non_null(cut);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(cut, "complete")));
    assert_true(support_json_number(cut, "resumes") == 0);
    double cut_wall = support_json_number(cut, "wall_time_s");
    double cut_startup = support_json_number(cut, "startup_s");
    cJSON_Delete(cut);
    assert_true(cut_time > 0 && cut_wall > cut_time && cut_startup > 0);
    cJSON *j = s_resume_by_hand(f, &h);
    double wall = support_json_number(j, "wall_time_s");
    double startup = support_json_number(j, "startup_s");
    double time_s = support_json_number(j, "time_s");
    if (support_json_number(j, "resumes") != 1 || startup <= cut_startup ||
        wall < cut_wall + time_s - cut_time) {
        fail_msg("resumed by hand: resumes %g, wall_time_s %g, startup_s %g, time_s %g; "
                 "interrupted: wall_time_s %g, startup_s %g, time_s %g",
                 support_json_number(j, "resumes"), wall, startup, time_s, cut_wall,
                 cut_startup, cut_time);
    }
    cJSON_Delete(j);
    s_steps_in_order(h.dir, 2);
}

/* A job resumed by hand whose evaluator is stopped mid-session (SIGTERM:
 * a pod evicted) and started again: the new evaluator goes on with that
 * session, adding it to the earlier one's wall_time_s and startup_s
 * (resume_base; its predecessor's summary already counted this session's
 * resume, and the first session's times were lost), and steps.csv has
 * every session's steps in order. */
static void test_an_evaluator_restarted_in_a_resumed_session(void **state)
{
    support_fixture *f = *state;
    by_hand h;
    s_by_hand(f, "evicted", &h);
    double cut_time = s_cut_by_hand(f, &h);
    char path[600], steps[600];
    snprintf(path, sizeof path, "%s/summary.json", h.dir);
    cJSON *cut = support_json_file(path);
    assert_non_null(cut);
    double cut_wall = support_json_number(cut, "wall_time_s");
    double cut_startup = support_json_number(cut, "startup_s");
    cJSON_Delete(cut);
    int pids[4];
    s_start_by_hand(f, &h, true, pids);
    snprintf(steps, sizeof steps, "%s/steps-0.csv", h.dir);
    if (!support_wait_lines(steps, 250, 60)) {   /* 150 before, 100 of this session */
        for (int i = 0; i < 4; i++) {
            kill(pids[i], SIGKILL);
        }
        fail_msg("the resumed job did not go on");
    }
    kill(pids[1], SIGTERM);
    support_wait(pids[1]);
    const char *ev_args[] = {"evaluator", f->config, h.ps_hosts, "--worker_hosts=w0:1,w1:1",
                             h.run_dir, NULL};
    pids[1] = support_spawn_asgd(f->dir, ev_args);
    for (int i = 0; i < 4; i++) {
        if (support_wait(pids[i]) != 0) {
            fail_msg("resumed by hand: process %d failed", i);
        }
    }
    cJSON *j = support_json_file(path);
    assert_non_null(j);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "complete")));
    double wall = support_json_number(j, "wall_time_s");
    double startup = support_json_number(j, "startup_s");
    double time_s = support_json_number(j, "time_s");
    const cJSON *base = cJSON_GetObjectItemCaseSensitive(j, "resume_base");
    if (support_json_number(j, "resumes") != 1 || startup <= cut_startup ||
        wall < cut_wall + time_s - cut_time ||
        support_json_number(base, "wall_time_s") != cut_wall) {
        fail_msg("evaluator restarted: resumes %g, wall_time_s %g, startup_s %g, time_s %g, "
                 "resume_base's wall %g; interrupted: wall_time_s %g, startup_s %g, time_s "
                 "%g", support_json_number(j, "resumes"), wall, startup, time_s,
                 support_json_number(base, "wall_time_s"), cut_wall, cut_startup, cut_time);
    }
    cJSON_Delete(j);
    s_steps_in_order(h.dir, 2);
    s_eval_ends(h.dir);
}

/* A resumed shard stopped before any worker pulled (here the shard alone,
 * asked for its counters by a tool until it answers, so restored) keeps
 * the training time it resumed with: the job resumed once more goes on
 * from there. Its checkpoint once dropped it, and the time axis went back
 * to 0 (eval.csv's rows after the second resume before those of the
 * first session, time_s the last session's alone). */
static void test_a_resume_stopped_before_its_first_pull_keeps_the_time(void **state)
{
    support_fixture *f = *state;
    by_hand h;
    s_by_hand(f, "twice", &h);
    double cut_time = s_cut_by_hand(f, &h);

    const char *alone[] = {"ps", f->config, h.ps_hosts, "--worker_hosts=w0:1,w1:1",
                           "--task_index=0", h.run_dir, "--resume", NULL};
    int shard = support_spawn_asgd(f->dir, alone);
    void *ctx = zmq_ctx_new(), *sock = wire_client_open(ctx, h.port, NULL);
    wire_header stats = {.type = WIRE_CONTROL, .worker = WIRE_ANY, .tag = WIRE_CONTROL_STATS,
                         .encoding = WIRE_NO_PAYLOAD}, reply;
    char json[4096];
    bool answered = false;
    for (int i = 0; i < 100 && !answered; i++) {   /* up to 20 s for it to restore and serve */
        wire_client_send(sock, &stats, NULL, 0);
        answered = wire_client_receive(sock, &reply, json, sizeof json - 1, 1, 200) >= 0;
    }
    zmq_close(sock);
    zmq_ctx_term(ctx);
    kill(shard, SIGTERM);
    assert_int_equal(support_wait(shard), ERROR_SIGNALLED(SIGTERM));
    assert_true(answered);

    cJSON *j = s_resume_by_hand(f, &h);
    double time_s = support_json_number(j, "time_s");
    cJSON_Delete(j);
    double last = s_eval_ends(h.dir);
    if (time_s <= cut_time || last > time_s + 1e-6) {
        fail_msg("time_s %g after %g s of training before the stops; eval.csv ends at %g", time_s,
                 cut_time, last);
    }
    /* the shard's clock: training began cut_time before the last session's
     * first pull (its first pull was that pull, cut_time lost) */
    double before = s_shard_since_first_pull(h.dir, "resumed_at");
    if (fabs(before - cut_time) > 1e-3) {
        fail_msg("the last session began %g s into training, not %g", before, cut_time);
    }
}

/* A run stopped after its workers had finished (here its evaluator
 * stopped, which the launcher kills: the job fails) resumes
 * to its end: the shards and the evaluator close it, no worker is started
 * again. Workers were started, found the shards gone (nothing left to wait
 * for), and every resume failed. */
static void test_a_run_stopped_after_its_workers_resumes_to_its_end(void **state)
{
    support_fixture *f = *state;
    const char *extra[] = {"experiment.run_id=after", "train.algorithm=hogwild",
                           "train.epochs=1", "model.hidden=64", "checkpoint.every=1000",
                           "cluster.timeout=20", NULL};
    int launcher = s_start(f, extra, 20);
    int evaluator;
    assert_int_equal(support_children(launcher, "evaluator", &evaluator, 1), 1);
    kill(evaluator, SIGSTOP);   /* killed by the launcher 10 s on, the workers long done */
    assert_int_not_equal(support_wait(launcher), 0);
    char dir[600], path[700];
    snprintf(dir, sizeof dir, "%s/job/after", f->out);
    snprintf(path, sizeof path, "%s/log.txt", dir);
    char *log = support_read_file(path);
    assert_non_null(strstr(log, "evaluator 0 has been stopped (SIGSTOP) for"));
    free(log);
    cJSON *j = s_resume(f, "after");
    log = support_read_file(path);
    assert_non_null(strstr(log, "every worker had finished before the interruption"));
    free(log);
    assert_true(support_json_number(j, "epochs") >= 0.99);
    cJSON_Delete(j);
}

/* A run interrupted after its final evaluation, before it was written up
 * (its summary incomplete, the final row in eval.csv), resumes to its end
 * with that row once: it was written again (two final rows of one model),
 * and the summary's time went by that second row alone. The training time
 * is the one the shards hold (0, and 0 samples/s: no worker pulled in the
 * resumed session to start their clocks again). */
static void test_a_resume_after_the_final_evaluation_adds_no_row(void **state)
{
    support_fixture *f = *state;
    const char *extra[] = {"experiment.run_id=written", "train.algorithm=hogwild",
                           "train.epochs=1", "checkpoint.every=1000", NULL};
    cJSON *done = s_run(f, extra);
    double time_s = support_json_number(done, "time_s");
    double rate = support_json_number(done, "samples_per_s");
    cJSON_Delete(done);
    char path[700], evals[700];
    snprintf(path, sizeof path, "%s/job/written/summary.json", f->out);
    snprintf(evals, sizeof evals, "%s/job/written/eval.csv", f->out);
    cJSON *summary = support_json_file(path);   /* as the interruption left it */
    cJSON_ReplaceItemInObjectCaseSensitive(summary, "complete", cJSON_CreateFalse());
    char *text = cJSON_Print(summary);
    support_write_file(path, text);
    free(text);
    cJSON_Delete(summary);
    char *rows = support_read_file(evals);
    cJSON *j = s_resume(f, "written");
    char *after = support_read_file(evals);
    assert_string_equal(after, rows);
    assert_true(support_json_number(j, "resumes") == 1);
    assert_true(fabs(support_json_number(j, "time_s") - time_s) < 1e-6);
    assert_true(fabs(support_json_number(j, "samples_per_s") - rate) < 1e-6 * rate);
    cJSON_Delete(j);
    free(rows);
    free(after);
}

/* A resume whose first look is of the model eval.csv's last row already
 * is of (a resumed session's own first row, kept after that session died
 * before its next checkpoint) starts its workers and goes on: the launcher
 * starts them at the first row it is told of, and an evaluator that wrote
 * no row of a model evaluated already left the job waiting for good. */
static void test_a_resume_whose_first_look_has_its_row_goes_on(void **state)
{
    support_fixture *f = *state;
    const char *extra[] = {"experiment.run_id=looked", "train.algorithm=hogwild", NULL};
    int launcher = s_start(f, extra, 150);
    kill(launcher, SIGINT);
    assert_int_equal(support_wait(launcher), 1);
    char dir[600], path[700];
    snprintf(dir, sizeof dir, "%s/job/looked", f->out);
    snprintf(path, sizeof path, "%s/ps-0.json", dir);
    cJSON *shard = support_json_file(path);
    assert_non_null(shard);
    char row[200];   /* the row the resumed evaluator's first look writes */
    snprintf(row, sizeof row, "0.000001,0,%.0f,%.0f,1,0.5\n",
             support_json_number(shard, "version"), support_json_number(shard, "samples"));
    cJSON_Delete(shard);
    snprintf(path, sizeof path, "%s/eval.csv", dir);
    FILE *evals = fopen(path, "a");
    assert_non_null(evals);
    fputs(row, evals);
    fclose(evals);
    const char *resume[] = {"train", "--resume", dir, NULL};
    int pid = support_spawn_asgd(f->dir, resume);
    assert_int_equal(support_wait_within(pid, 120, "a resume whose first look has its row"), 0);
    cJSON *j = s_summary(f, "looked");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "complete")));
    cJSON_Delete(j);
}

/* A worker stopped (SIGSTOP) for half of [cluster] timeout is killed by
 * the launcher, which says so, and the job fails naming it: under an
 * asynchronous rule nothing else saw it, and the job ran on for good (the
 * other worker done, the evaluator adding one row every eval.every). */
static void test_a_stopped_worker_is_killed_and_named(void **state)
{
    support_fixture *f = *state;
    const char *extra[] = {"experiment.run_id=stopped", "train.algorithm=hogwild",
                           "cluster.timeout=2", NULL};
    int launcher = s_start(f, extra, 20);
    int workers[2];
    assert_int_equal(support_children(launcher, "worker", workers, 2), 2);
    kill(workers[0], SIGSTOP);
    assert_int_equal(support_wait_within(launcher, 60, "a job with a stopped worker"), 1);
    /* the job's error says why the signal came (only log.txt did) */
    char path[700];
    snprintf(path, sizeof path, "%s/stderr", f->dir);
    char *err = support_read_file(path);
    assert_non_null(strstr(err, "the launcher killed it, stopped (SIGSTOP)"));
    free(err);
    snprintf(path, sizeof path, "%s/job/stopped/log.txt", f->out);
    char *log = support_read_file(path);
    assert_non_null(strstr(log, "has been stopped (SIGSTOP) for"));
    free(log);
}

/* An evaluator stopped before it first read the shards' counters, in a
 * folder an interrupted session left, leaves that session's summary as it
 * was: whether the shards were resumed is in their counters, and guessed
 * "not", it wrote its own session's wall time alone, which a later
 * evaluator took for the earlier sessions' (test_an_evaluator_restarted_
 * in_a_resumed_session failed so, 1 run in 10 on a busy host). */
static void test_an_evaluator_stopped_before_it_counted_keeps_the_summary(void **state)
{
    support_fixture *f = *state;
    by_hand h;
    s_by_hand(f, "unlooked", &h);
    s_cut_by_hand(f, &h);
    char path[600];
    snprintf(path, sizeof path, "%s/summary.json", h.dir);
    cJSON *before = support_json_file(path);
    assert_non_null(before);
    char hosts[64];
    snprintf(hosts, sizeof hosts, "--ps_hosts=127.0.0.1:%d", wire_client_free_port());
    const char *args[] = {"evaluator", f->config, hosts, "--worker_hosts=w0:1,w1:1", h.run_dir,
                          NULL};
    int evaluator = support_spawn_asgd(f->dir, args);
    run_sleep(1);   /* no shard there: it never hears one */
    kill(evaluator, SIGTERM);
    support_wait(evaluator);
    cJSON *after = support_json_file(path);
    assert_non_null(after);
    const char *kept[] = {"wall_time_s", "startup_s", "time_s", "resumes", "updates",
                          "samples"};
    for (int i = 0; i < 6; i++) {
        double was = support_json_number(before, kept[i]), is = support_json_number(after, kept[i]);
        if (!(was == is)) {
            fail_msg("%s: %g before the evaluator, %g after", kept[i], was, is);
        }
    }
    cJSON_Delete(before);
    cJSON_Delete(after);
}

/* An evaluator started by hand that never reads its shard's counters
 * (none answers) leaves a summary whose counts are unknown: null, with the
 * shard missing, not 0 updates and 0 samples. */
static void test_an_evaluator_that_never_heard_a_shard_counts_nothing(void **state)
{
    support_fixture *f = *state;
    support_write_file(f->config, "[data]\ndataset = synthetic\ntrain_size = 400\n[model]\n"
                       "type = softmax\n[train]\nalgorithm = hogwild\n[cluster]\nworkers = 1\n"
                       "timeout = 1\n");
    char hosts[64], run_dir[600], dir[500];
    snprintf(hosts, sizeof hosts, "--ps_hosts=127.0.0.1:%d", wire_client_free_port());
    snprintf(dir, sizeof dir, "%s/unheard", f->dir);
    snprintf(run_dir, sizeof run_dir, "--run_dir=%s", dir);
    const char *args[] = {"evaluator", f->config, hosts, "--worker_hosts=w0:1", run_dir, NULL};
    support_run_asgd(&f->r, f->dir, args);
    assert_int_equal(f->r.status, ERROR_RETRYABLE);   /* its shard may start later */
    char path[700];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    cJSON *j = support_json_file(path);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(j, "complete")));
    const char *unknown[] = {"updates", "samples", "epochs", "samples_per_s"};
    for (int i = 0; i < 4; i++) {
        if (!cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, unknown[i]))) {
            fail_msg("%s is not null though no shard's counters were read", unknown[i]);
        }
    }
    assert_true(support_json_number(j, "shards_missing") == 1);
    cJSON_Delete(j);
}

/* The generation a shard of h's job restored with --restore (and the
 * override extra, or none) answers in (asked for its counters by a tool
 * until it does); the shard is killed then, as a failed one is. */
static uint32_t s_restored_generation(support_fixture *f, const by_hand *h, const char *extra)
{
    const char *args[] = {"ps", f->config, h->ps_hosts, "--worker_hosts=w0:1,w1:1",
                          "--task_index=0", h->run_dir, "--restore", extra, NULL};
    int shard = support_spawn_asgd(f->dir, args);
    void *ctx = zmq_ctx_new(), *sock = wire_client_open(ctx, h->port, NULL);
    wire_header stats = {.type = WIRE_CONTROL, .worker = WIRE_ANY, .tag = WIRE_CONTROL_STATS,
                         .encoding = WIRE_NO_PAYLOAD}, reply = {0};
    char json[4096];
    bool answered = false;
    for (int i = 0; i < 100 && !answered; i++) {   /* up to 20 s for it to restore and serve */
        wire_client_send(sock, &stats, NULL, 0);
        answered = wire_client_receive(sock, &reply, json, sizeof json - 1, 1, 200) >= 0;
    }
    zmq_close(sock);
    zmq_ctx_term(ctx);
    kill(shard, SIGKILL);
    support_wait(shard);
    assert_true(answered);
    return reply.generation;
}

/* Two lives of a shard restored from one checkpoint are two generations:
 * here the checkpoint each writes once restored cannot be written (its
 * temporary name is a folder), so both read the same one. Each was one
 * more than the checkpoint's, the same: workers that had heard the first
 * life took the second for it, nothing they had pushed since the
 * checkpoint counted as lost, pushes computed on versions that were gone
 * were applied, and the job hung or ended with a fraction of its samples
 * (an audit of checkpoints). */
static void test_two_lives_from_one_checkpoint_are_two_generations(void **state)
{
    support_fixture *f = *state;
    by_hand h;
    s_by_hand(f, "lives", &h);
    s_cut_by_hand(f, &h);
    char tmp[700];
    snprintf(tmp, sizeof tmp, "%s/checkpoints/ps-0.ckpt.tmp", h.dir);
    assert_int_equal(mkdir(tmp, 0755), 0);
    uint32_t first = s_restored_generation(f, &h, NULL);
    uint32_t second = s_restored_generation(f, &h, NULL);
    rmdir(tmp);
    if (first == 0 || first == second) {
        fail_msg("two lives from one checkpoint: generations %u and %u", first, second);
    }
}

/* A job of other settings run with --restore in the folder of an earlier
 * job (a Kubeflow job applied again under its name, its volume kept) is
 * refused, exit 2, naming the setting that differs: its shard took up the
 * other job's model and counters, its workers found their shares done,
 * and its summary reported the earlier job's results as its own. */
static void test_another_jobs_checkpoint_is_not_taken_up(void **state)
{
    support_fixture *f = *state;
    by_hand h;
    s_by_hand(f, "other", &h);
    s_cut_by_hand(f, &h);
    const char *args[] = {"ps", f->config, h.ps_hosts, "--worker_hosts=w0:1,w1:1",
                          "--task_index=0", h.run_dir, "--restore", "experiment.seed=7", NULL};
    support_run_asgd(&f->r, f->dir, args);
    if (f->r.status != 2 || !strstr(f->r.err, "of a job of other settings (experiment.seed = ")) {
        fail_msg("another job's checkpoint: status %d, \"%s\"", f->r.status, f->r.err);
    }
    /* this job's own is taken up, a setting of its process's own (how long
     * it waits for a peer) changed or not */
    assert_true(s_restored_generation(f, &h, NULL) != 0);
    assert_true(s_restored_generation(f, &h, "cluster.timeout=40") != 0);
}

/* A shard brought back with --restore where its checkpoint is gone (a pod
 * made anew, its emptyDir empty) fails once a worker that heard from its
 * earlier life speaks to it, saying why: it went on from the initial
 * model, and the job completed as if nothing had been lost. It leaves no
 * checkpoint: the one it wrote as it began (of the initial model) was
 * restored by the next try in that folder (a kubelet's, under OnFailure),
 * which completed the job from there. */
static void test_a_shard_back_without_its_checkpoint_fails(void **state)
{
    support_fixture *f = *state;
    by_hand h;
    s_by_hand(f, "lost", &h);
    int pids[4];
    s_start_by_hand(f, &h, false, pids);
    char path[700], empty[600], empty_arg[620];
    snprintf(path, sizeof path, "%s/steps-0.csv", h.dir);
    if (!support_wait_lines(path, 50, 60)) {
        fail_msg("the job did not start");
    }
    kill(pids[0], SIGKILL);
    support_wait(pids[0]);
    snprintf(empty, sizeof empty, "%s/lost-again", f->dir);
    mkdir(empty, 0755);
    snprintf(empty_arg, sizeof empty_arg, "--run_dir=%s", empty);
    const char *ps_args[] = {"ps", f->config, h.ps_hosts, "--worker_hosts=w0:1,w1:1",
                             "--task_index=0", empty_arg, "--restore", "checkpoint.every=1",
                             NULL};
    int shard = support_spawn_asgd(empty, ps_args);
    int status = support_wait(shard);
    snprintf(path, sizeof path, "%s/checkpoints/ps-0.ckpt", empty);
    assert_int_equal(access(path, F_OK), -1);
    for (int i = 1; i < 4; i++) {
        kill(pids[i], SIGKILL);
        support_wait(pids[i]);
    }
    snprintf(path, sizeof path, "%s/stderr", empty);
    char *err = support_read_file(path);
    if (status != 1 || !err || !strstr(err, "no checkpoint to come back from")) {
        fail_msg("the shard back without its checkpoint: status %d, \"%s\"", status,
                 err ? err : "");
    }
    free(err);
}

/* Runs a small job's four roles by hand in dir, every pod's way under
 * Kubeflow (the shard with --restore, checkpoints every 0.2 s), to its
 * end; the shard's stderr into *shard_err and worker 0's into *worker_err
 * (the caller frees them). */
static void s_job_as_pods(support_fixture *f, const char *dir, char **shard_err,
                          char **worker_err)
{
    char hosts[64], run_dir[600], shard_dir[600], worker_dir[600];
    snprintf(hosts, sizeof hosts, "--ps_hosts=127.0.0.1:%d", wire_client_free_port());
    snprintf(run_dir, sizeof run_dir, "--run_dir=%s", dir);
    snprintf(shard_dir, sizeof shard_dir, "%s/shard-out", f->dir);
    snprintf(worker_dir, sizeof worker_dir, "%s/worker-out", f->dir);
    mkdir(shard_dir, 0755);
    mkdir(worker_dir, 0755);
    const char *ps_args[] = {"ps", f->config, hosts, "--worker_hosts=w0:1,w1:1",
                             "--task_index=0", run_dir, "--restore", NULL};
    int pids[4];
    pids[0] = support_spawn_asgd(shard_dir, ps_args);
    const char *ev_args[] = {"evaluator", f->config, hosts, "--worker_hosts=w0:1,w1:1", run_dir,
                             NULL};
    pids[1] = support_spawn_asgd(f->dir, ev_args);
    for (int w = 0; w < 2; w++) {
        char task[32];
        snprintf(task, sizeof task, "--task_index=%d", w);
        const char *args[] = {"worker", f->config, hosts, "--worker_hosts=w0:1,w1:1", task,
                              run_dir, NULL};
        pids[2 + w] = support_spawn_asgd(w == 0 ? worker_dir : f->dir, args);
    }
    for (int i = 0; i < 4; i++) {
        assert_int_equal(support_wait_within(pids[i], 120, "a role"), 0);
    }
    char path[700];
    snprintf(path, sizeof path, "%s/stderr", shard_dir);
    *shard_err = support_read_file(path);
    snprintf(path, sizeof path, "%s/stderr", worker_dir);
    *worker_err = support_read_file(path);
}

/* The same job applied again in the folder of its complete run (a Kubeflow
 * job applied again under its name, its volume kept, every pod's shard
 * with --restore) trains anew: it took up the complete job's last
 * checkpoint, its workers found their shares done, and it reported the
 * earlier job's model and results as its own in 0.3 s, complete. */
static void test_a_job_applied_again_after_its_end_trains_anew(void **state)
{
    support_fixture *f = *state;
    support_write_file(f->config, "[data]\ndataset = synthetic\ntrain_size = 10000\n"
                       "[model]\ntype = softmax\n[train]\nalgorithm = hogwild\nepochs = 3\n"
                       "[eval]\nevery = 0.2\n[cluster]\nworkers = 2\n[checkpoint]\nevery = 0.2\n");
    char dir[600], path[700], *err, *worker;
    snprintf(dir, sizeof dir, "%s/pods", f->dir);
    s_job_as_pods(f, dir, &err, &worker);
    assert_non_null(err);
    assert_null(strstr(err, "starts anew"));   /* its first life: no checkpoint yet */
    free(err);
    free(worker);
    s_job_as_pods(f, dir, &err, &worker);
    if (!err || !strstr(err, "is of a job that completed: this job starts anew")) {
        fail_msg("the shard of the job applied again: \"%s\"", err ? err : "");
    }
    if (!worker || !strstr(worker, "(235 minibatches)")) {   /* 3 x 10,000 / 2 / 64, ceil */
        fail_msg("worker 0 of the job applied again: \"%s\"", worker ? worker : "");
    }
    free(err);
    free(worker);
    snprintf(path, sizeof path, "%s/summary.json", dir);
    cJSON *j = support_json_file(path);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "complete")));
    assert_true(support_json_number(j, "epochs") > 2.9);
    assert_true(support_json_number(j, "shard_restarts") == 0);
    cJSON_Delete(j);
}

/* Writes 2,000 training and 200 test images of 8 x 8 into dir as IDX
 * files, their labels from seed. */
static void s_write_idx_set(const char *dir, unsigned seed)
{
    static uint8_t px[2000 * 64], labels[2000];
    srand(seed);
    for (size_t i = 0; i < sizeof px; i++) {
        px[i] = (uint8_t)(rand() & 0xff);
    }
    for (size_t i = 0; i < sizeof labels; i++) {
        labels[i] = (uint8_t)(rand() % 10);
    }
    const char *stems[2][2] = {{"train-images-idx3-ubyte", "train-labels-idx1-ubyte"},
                               {"t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"}};
    for (int set = 0; set < 2; set++) {
        uint32_t dims[3] = {set ? 200 : 2000, 8, 8};
        char path[700];
        snprintf(path, sizeof path, "%s/%s", dir, stems[set][0]);
        support_write_idx(path, 0, dims, 3, px);
        snprintf(path, sizeof path, "%s/%s", dir, stems[set][1]);
        support_write_idx(path, 0, dims, 1, labels);
    }
}

/* A run whose data changed while it was interrupted is not resumed (exit
 * 2, naming the file): its sessions trained on two data sets, under one
 * summary that named the second alone. */
static void test_a_resume_on_changed_data_is_refused(void **state)
{
    support_fixture *f = *state;
    char data[600], data_arg[620], profile[600], profile_arg[620];
    snprintf(data, sizeof data, "%s/idx", f->dir);
    mkdir(data, 0755);
    s_write_idx_set(data, 1);
    snprintf(data_arg, sizeof data_arg, "data.path=%s", data);
    /* a simulator's profile, which a real run does not read */
    snprintf(profile, sizeof profile, "%s/profile.ini", f->dir);
    support_write_file(profile, "[sim]\ncores = 1\n");
    snprintf(profile_arg, sizeof profile_arg, "sim.profile=%s", profile);
    const char *extra[] = {"experiment.run_id=moved", "train.algorithm=hogwild",
                           "data.dataset=idx", data_arg, "data.train_size=2000",
                           "train.epochs=60", "checkpoint.every=0.1", profile_arg, NULL};
    int launcher = s_start(f, extra, 50);
    kill(launcher, SIGTERM);
    support_wait(launcher);
    s_write_idx_set(data, 2);   /* the same shapes, other examples */
    support_write_file(profile, "[sim]\ncores = 2\n");   /* no input of the run's */
    char dir[600];
    snprintf(dir, sizeof dir, "%s/job/moved", f->out);
    const char *resume[] = {"train", "--resume", dir, NULL};
    support_run_asgd(&f->r, f->dir, resume);
    if (f->r.status != 2 || !strstr(f->r.err, "-ubyte changed since the run began")) {
        fail_msg("a resume on changed data: status %d, \"%s\"", f->r.status, f->r.err);
    }
    s_write_idx_set(data, 1);   /* put back: it goes on */
    support_run_asgd(&f->r, f->dir, resume);
    if (f->r.status != 0) {
        fail_msg("the resume on the data put back failed: %s", f->r.err);
    }
}

/* A run whose shard was killed before it wrote any checkpoint
 * ([checkpoint] every = 0: one only when a shard is stopped) is not
 * resumed: that would start the model over and call the run one. The
 * refusal names the missing checkpoint and leaves the folder as it was. */
static void test_a_resume_without_a_checkpoint_is_refused(void **state)
{
    support_fixture *f = *state;
    const char *extra[] = {"experiment.run_id=nockpt", "train.algorithm=hogwild", NULL};
    int launcher = s_start(f, extra, 50);
    kill(launcher, SIGKILL);
    support_wait(launcher);
    run_sleep(0.2);   /* its processes die with it (PDEATHSIG) */
    char dir[600], evals[700];
    snprintf(dir, sizeof dir, "%s/job/nockpt", f->out);
    snprintf(evals, sizeof evals, "%s/eval.csv", dir);
    char *before = support_read_file(evals);
    assert_non_null(before);
    const char *resume[] = {"train", "--resume", dir, NULL};
    support_run_asgd(&f->r, f->dir, resume);
    if (f->r.status != 2 || !strstr(f->r.err, "left no checkpoint") ||
        !strstr(f->r.err, "[checkpoint] every = 0")) {
        fail_msg("resume without a checkpoint: status %d, \"%s\"", f->r.status, f->r.err);
    }
    char *after = support_read_file(evals);
    assert_non_null(after);
    assert_string_equal(after, before);
    free(before);
    free(after);
    /* one that is there but damaged is refused the same way: the failed
     * session rewrote the summary (startup_s -13 s, a resume counted) */
    const char *again[] = {"experiment.run_id=damaged", "train.algorithm=hogwild", NULL};
    launcher = s_start(f, again, 50);
    kill(launcher, SIGINT);
    assert_int_equal(support_wait(launcher), 1);
    char damaged[600], ckpt[700], summary[700];
    snprintf(damaged, sizeof damaged, "%s/job/damaged", f->out);
    checkpoint_path(ckpt, sizeof ckpt, damaged, 0);
    assert_int_equal(truncate(ckpt, 40), 0);
    snprintf(summary, sizeof summary, "%s/summary.json", damaged);
    char *kept = support_read_file(summary);
    assert_non_null(kept);
    const char *resume_damaged[] = {"train", "--resume", damaged, NULL};
    support_run_asgd(&f->r, f->dir, resume_damaged);
    if (f->r.status != 2 || !strstr(f->r.err, "shard 0's checkpoint is damaged")) {
        fail_msg("resume from a damaged checkpoint: status %d, \"%s\"", f->r.status, f->r.err);
    }
    char *now = support_read_file(summary);
    assert_string_equal(now, kept);
    free(now);
    free(kept);
}

/* The best accuracy of eval.csv's rows after the first (the initial
 * model's); NAN without one. */
static double s_best_in_evals(const char *dir)
{
    char path[700];
    snprintf(path, sizeof path, "%s/eval.csv", dir);
    char *text = support_read_file(path);
    assert_non_null(text);
    double best = NAN;
    for (char *line = strchr(text, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        double t, epoch, loss, acc;
        long updates, samples;
        if (sscanf(line + 1, "%lf,%lf,%ld,%ld,%lf,%lf", &t, &epoch, &updates, &samples, &loss,
                   &acc) == 6 && updates > 0 && !(acc <= best)) {
            best = acc;
        }
    }
    free(text);
    return best;
}

/* A resume from checkpoints made before the first update starts eval.csv
 * anew (the evaluator sees a job not under way): the summary's best
 * accuracy is then that of the rows kept, not of the killed session's
 * (here a row it is made to have written, at 0.9999). */
static void test_a_resume_from_update_0_forgets_the_old_evaluations(void **state)
{
    support_fixture *f = *state;
    const char *extra[] = {"experiment.run_id=zero", "train.algorithm=hogwild",
                           "checkpoint.every=1000", NULL};
    int launcher = s_start(f, extra, 50);
    kill(launcher, SIGKILL);
    support_wait(launcher);
    run_sleep(0.2);
    char dir[600], path[700];
    snprintf(dir, sizeof dir, "%s/job/zero", f->out);
    checkpoint_path(path, sizeof path, dir, 0);
    shard_stats st;
    error err;
    assert_int_equal(checkpoint_stats(path, &st, &err), 0);
    assert_true(st.version == 0);   /* the one written when training began */
    snprintf(path, sizeof path, "%s/eval.csv", dir);
    FILE *csv = fopen(path, "a");
    assert_non_null(csv);
    fputs("0.400000,0.300000,600,19200,0.1000,0.999900\n", csv);
    fclose(csv);
    const char *resume[] = {"train", "--resume", dir, NULL};
    support_run_asgd(&f->r, f->dir, resume);
    if (f->r.status != 0) {
        fail_msg("resume failed: %s", f->r.err);
    }
    cJSON *j = s_summary(f, "zero");
    double best = support_json_number(j, "best_test_acc");
    if (!(best == s_best_in_evals(dir)) || best > 0.999) {
        fail_msg("best_test_acc %g; the best row eval.csv kept: %g", best,
                 s_best_in_evals(dir));
    }
    cJSON_Delete(j);
}

/* This process's start time, /proc/self/stat's field 22. */
static unsigned long long s_my_start_time(void)
{
    char *stat_line = support_read_file("/proc/self/stat");
    assert_non_null(stat_line);
    const char *p = strrchr(stat_line, ')');
    for (int field = 2; p && field < 22; field++) {
        p = strchr(p + 1, ' ');
    }
    unsigned long long start = 0;
    assert_true(p && sscanf(p, " %llu", &start) == 1);
    free(stat_line);
    return start;
}

/* A launcher killed by SIGKILL leaves its private folder (/tmp/asgd-PID-
 * XXXXXX: sockets, and under CURVE secret keys); the next launcher removes
 * those of launchers that are gone, by the mark each leaves in its folder
 * (its PID namespace, PID and start time), and leaves any other: one
 * whose process runs, one without a mark, a folder of the user's that
 * merely looks like one (once removed: asgd-2024-runs). */
static void test_a_killed_launchers_private_folder_is_removed(void **state)
{
    support_fixture *f = *state;
    int gone = fork();
    if (gone == 0) {
        _exit(0);
    }
    support_wait(gone);   /* a PID no process has now */
    struct stat ns;
    assert_int_equal(stat("/proc/self/ns/pid", &ns), 0);
    const char *kinds[4] = {"stale", "live", "unmarked", "lookalike"};
    char dirs[4][100], path[512];
    snprintf(dirs[0], sizeof dirs[0], "/tmp/asgd-%d-Zq3xY9", gone);
    snprintf(dirs[1], sizeof dirs[1], "/tmp/asgd-%d-Zq3xY9", (int)getpid());
    snprintf(dirs[2], sizeof dirs[2], "/tmp/asgd-%d-Zq3xY8", gone);
    snprintf(dirs[3], sizeof dirs[3], "/tmp/asgd-%d-runs", gone);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(mkdir(dirs[i], 0700), 0);
        if (i != 2) {   /* as a launcher marks it: its namespace, PID and start time */
            snprintf(path, sizeof path, "%s/launcher", dirs[i]);
            char mark[100];
            snprintf(mark, sizeof mark, "%llu %d %llu\n", (unsigned long long)ns.st_ino,
                     i == 1 ? (int)getpid() : gone, i == 1 ? s_my_start_time() : 1);
            support_write_file(path, mark);
        }
    }
    snprintf(path, sizeof path, "%s/keys", dirs[0]);
    assert_int_equal(mkdir(path, 0700), 0);
    /* and a launcher's own, killed */
    const char *killed_args[] = {"experiment.run_id=killed", "train.algorithm=hogwild", NULL};
    int launcher = s_start(f, killed_args, 20);
    kill(launcher, SIGKILL);
    support_wait(launcher);
    char pattern[100];
    snprintf(pattern, sizeof pattern, "/tmp/asgd-%d-??????", launcher);
    glob_t left_by_kill;
    assert_int_equal(glob(pattern, 0, NULL, &left_by_kill), 0);
    assert_int_equal((int)left_by_kill.gl_pathc, 1);
    globfree(&left_by_kill);
    const char *extra[] = {"experiment.run_id=tidy", "train.algorithm=hogwild",
                           "train.epochs=0.2", NULL};
    cJSON *j = s_run(f, extra);
    cJSON_Delete(j);
    bool left[4];
    for (int i = 0; i < 4; i++) {
        struct stat st;
        left[i] = stat(dirs[i], &st) == 0;
        char cmd[600];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dirs[i]);
        assert_int_equal(system(cmd), 0);
    }
    for (int i = 0; i < 4; i++) {
        if (left[i] != (i != 0)) {   /* the stale one alone goes */
            fail_msg("the %s folder %s was %s", kinds[i], dirs[i], left[i] ? "left" : "removed");
        }
    }
    if (glob(pattern, 0, NULL, &left_by_kill) == 0) {
        fail_msg("the killed launcher's folder %s was left", left_by_kill.gl_pathv[0]);
    }
}

/* A round rule (easgd) one of whose two shards comes back from its
 * checkpoint: the workers retake the lost rounds past their budget,
 * pushing no examples, and the other shard takes those pushes into its
 * rounds (it dropped them as steps it had, each repeating the last push's
 * total, and its rounds never closed: the job failed at the timeout). */
static void test_a_round_rule_goes_on_after_a_shard_comes_back(void **state)
{
    support_fixture *f = *state;
    const char *extra[] = {"experiment.run_id=rounds", "train.algorithm=easgd",
                           "cluster.servers=2", "checkpoint.every=0.3",
                           "cluster.restart=on-failure", "cluster.timeout=10", NULL};
    int launcher = s_start(f, extra, 150);
    int shards[2];
    assert_int_equal(support_children(launcher, "ps", shards, 2), 2);
    kill(shards[0], SIGKILL);   /* either: the other drops the pushes */
    int status = support_wait_within(launcher, 120, "easgd after a shard's kill");
    if (status != 0) {
        char path[600];
        snprintf(path, sizeof path, "%s/stderr", f->dir);
        char *err = support_read_file(path);
        fail_msg("the job failed: %s", err);
    }
    char dir[600];
    snprintf(dir, sizeof dir, "%s/job/rounds", f->out);
    assert_true(support_shard_number(dir, 0, "version") ==
                support_shard_number(dir, 1, "version"));
    cJSON *j = s_summary(f, "rounds");
    assert_true(support_json_number(j, "shard_restarts") == 1);
    cJSON_Delete(j);
}

/* Copies the file at from to to (a checkpoint: renamed into place whole,
 * so a copy is of one moment). */
static void s_copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[65536];
    for (size_t n; (n = fread(buf, 1, sizeof buf, in)) > 0;) {
        assert_int_equal(fwrite(buf, 1, n, out), n);
    }
    fclose(in);
    assert_int_equal(fclose(out), 0);
}

/* Runs the job with extra (its run_id first) until shard `behind` has
 * written a checkpoint and a later one well ahead of it, stops it with
 * Ctrl-C, and puts the earlier checkpoint back: a crash between two
 * shards' periodic checkpoints, made by hand. Its folder into dir. */
static void s_stop_a_shard_behind(support_fixture *f, const char *const *extra, int behind,
                                  char *dir, size_t n)
{
    int launcher = s_start(f, extra, 50);
    char ckpt[700], older[700];
    snprintf(dir, n, "%s/job/%s", f->out, extra[0] + strlen("experiment.run_id="));
    checkpoint_path(ckpt, sizeof ckpt, dir, behind);
    snprintf(older, sizeof older, "%s/older.ckpt", f->dir);
    shard_stats st = {0};
    error err;
    uint64_t copied = 0;
    for (int tries = 0; tries < 3000 && copied == 0; tries++) {
        if (checkpoint_stats(ckpt, &st, &err) == 0 && st.version > 0) {
            s_copy_file(ckpt, older);
            assert_int_equal(checkpoint_stats(older, &st, &err), 0);
            copied = st.version;
        } else {
            run_sleep(0.01);
        }
    }
    assert_true(copied > 0);
    for (int tries = 0; tries < 3000; tries++) {   /* a later one, well ahead */
        if (checkpoint_stats(ckpt, &st, &err) == 0 && st.version > copied + 100) {
            break;
        }
        run_sleep(0.01);
    }
    assert_true(st.version > copied + 100);
    kill(launcher, SIGINT);
    assert_int_equal(support_wait(launcher), 1);
    assert_int_equal(rename(older, ckpt), 0);
}

/* A run resumed from shards' checkpoints of different moments: each
 * shard takes each worker's step once, so both end with the whole budget
 * of pushes and examples. The workers take up where the shard behind left
 * them, and the shard ahead drops the steps redone as duplicates. Shard 0
 * behind: it applied the steps shard 1 had twice (2704 pushes of a 2500);
 * shard 1 behind: it never got them (the workers took up where shard 0
 * said). */
static void test_a_resume_from_checkpoints_of_two_moments_takes_each_step_once(void **state)
{
    support_fixture *f = *state;
    for (int behind = 0; behind < 2; behind++) {
        const char *extra[] = {behind ? "experiment.run_id=skew1" : "experiment.run_id=skew0",
                               "train.algorithm=hogwild", "cluster.servers=2",
                               "checkpoint.every=0.2", NULL};
        char dir[600];
        s_stop_a_shard_behind(f, extra, behind, dir, sizeof dir);
        cJSON *j = s_resume(f, extra[0] + strlen("experiment.run_id="));
        double budget = support_json_number(j, "updates");
        assert_true(budget == 2500);   /* 8 epochs of 10,000 in minibatches of 32 */
        double duplicates = 0;
        for (int k = 0; k < 2; k++) {
            double pushes = support_shard_number(dir, k, "pushes");
            double samples = support_shard_number(dir, k, "samples");
            if (pushes != budget || samples != budget * 32) {
                fail_msg("shard %d behind: shard %d took %g pushes of %g examples, for a budget "
                         "of %g", behind, k, pushes, samples, budget);
            }
            duplicates += k != behind ? support_shard_number(dir, k, "duplicates") : 0;
        }
        assert_true(duplicates > 0);   /* the steps redone, at the shard ahead */
        cJSON_Delete(j);
    }
}

/* The same with rounds that shard 0 leads (sync with a backup worker),
 * shard 1 behind: the new processes retake its rounds without shard 0's
 * verdict. Told nothing of a restart (they heard no generation before),
 * they asked shard 0, which had closed those rounds and said "late", and
 * shard 1 never moved: the job failed at the timeout. */
static void test_a_led_resume_from_checkpoints_of_two_moments(void **state)
{
    support_fixture *f = *state;
    const char *extra[] = {"experiment.run_id=led", "train.algorithm=sync",
                           "algorithm.backups=1", "cluster.workers=3", "cluster.servers=2",
                           "checkpoint.every=0.2", "cluster.timeout=10", NULL};
    char dir[600];
    s_stop_a_shard_behind(f, extra, 1, dir, sizeof dir);
    cJSON *j = s_resume(f, "led");
    assert_true(support_shard_number(dir, 0, "version") ==
                support_shard_number(dir, 1, "version"));
    cJSON_Delete(j);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, support_fixture_setup, support_fixture_teardown)
    const struct CMUnitTest tests[] = {
        T(test_a_push_sent_again_is_applied_once),
        T(test_a_killed_shard_comes_back_from_its_checkpoint),
        T(test_resume_after_ctrl_c_does_the_same_work),
        T(test_a_resume_after_the_launcher_was_killed),
        T(test_a_resume_from_checkpoints_of_two_moments_takes_each_step_once),
        T(test_a_led_resume_from_checkpoints_of_two_moments),
        T(test_a_round_rule_goes_on_after_a_shard_comes_back),
        T(test_steps_taken_again_have_one_row),
        T(test_each_sessions_steps_on_its_clock),
        T(test_a_killed_worker_loses_no_step_row),
        T(test_a_job_resumed_by_hand_adds_up_its_sessions),
        T(test_an_evaluator_restarted_in_a_resumed_session),
        T(test_a_resume_stopped_before_its_first_pull_keeps_the_time),
        T(test_two_lives_from_one_checkpoint_are_two_generations),
        T(test_another_jobs_checkpoint_is_not_taken_up),
        T(test_an_evaluator_that_never_heard_a_shard_counts_nothing),
        T(test_an_evaluator_stopped_before_it_counted_keeps_the_summary),
        T(test_a_run_stopped_after_its_workers_resumes_to_its_end),
        T(test_a_resume_after_the_final_evaluation_adds_no_row),
        T(test_a_resume_whose_first_look_has_its_row_goes_on),
        T(test_a_stopped_worker_is_killed_and_named),
        T(test_a_shard_back_without_its_checkpoint_fails),
        T(test_a_job_applied_again_after_its_end_trains_anew),
        T(test_a_resume_without_a_checkpoint_is_refused),
        T(test_a_resume_on_changed_data_is_refused),
        T(test_a_resume_from_update_0_forgets_the_old_evaluations),
        T(test_a_killed_launchers_private_folder_is_removed),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
