/* test_cli.c: the asgd binary on bad input: a bad config, a missing data
 * set and a corrupt IDX file each give one line of error naming the file
 * (and line and key), exit status 2, no crash and no run folder. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support.h"

#define DATA_FASHION "/usr/share/datasets/fashion-mnist"

/* Exit 2, exactly one line on stderr containing each needle, nothing on
 * stdout, and no run folder. */
static void s_expect_usage_error(support_fixture *f, const char *const *needles)
{
    if (f->r.status != 2) {
        fail_msg("exit status %d, stderr: %s", f->r.status, f->r.err);
    }
    size_t len = strlen(f->r.err);
    assert_true(len > 0);
    assert_ptr_equal(strchr(f->r.err, '\n'), f->r.err + len - 1);   /* one line */
    for (int i = 0; needles[i]; i++) {
        if (!strstr(f->r.err, needles[i])) {
            fail_msg("stderr \"%s\" lacks \"%s\"", f->r.err, needles[i]);
        }
    }
    assert_string_equal(f->r.out, "");
    struct stat st;
    assert_int_not_equal(stat(f->out, &st), 0);
}

/* The file name of the run whose folder asgd train printed on stdout
 * (NULL where there is none); the caller frees it. */
static char *s_run_file(const support_fixture *f, const char *name)
{
    char dir[900], path[1024];
    snprintf(dir, sizeof dir, "%.880s", f->r.out);
    dir[strcspn(dir, "\n")] = '\0';
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return support_read_file(path);
}

static void test_mistyped_key(void **state)
{
    support_fixture *f = *state;
    support_write_file(f->config, "[data]\ndataset = synthetic\n\n[train]\nlrate = 0.1\n");
    const char *args[] = {"train", f->config, f->out_arg, NULL};
    support_run_asgd(&f->r, f->dir, args);
    const char *needles[] = {f->config, ":5:", "[train] lrate", "unknown key", NULL};
    s_expect_usage_error(f, needles);
}

/* One base config serves other models and rules: a key asgd knows that
 * the chosen model or rule does not read is a warning, and the run goes
 * on; a typo of a key stays an error, with the key it resembles. */
static void test_switching_models_and_rules(void **state)
{
    support_fixture *f = *state;
    support_write_file(f->config, "[data]\ndataset = synthetic\ntrain_size = 500\n"
                       "test_size = 100\n[model]\ntype = mlp\nhidden = 16\n[train]\n"
                       "algorithm = hogwild\nepochs = 0.5\n[algorithm]\nserver_threads = 1\n"
                       "[experiment]\nmode = sim\n");
    const char *args[] = {"train", f->config, f->out_arg, "model.type=softmax",
                          "train.algorithm=sync", NULL};
    support_run_asgd(&f->r, f->dir, args);
    if (f->r.status != 0) {
        fail_msg("switching model and rule failed: %s", f->r.err);
    }
    assert_non_null(strstr(f->r.err, ":7: [model] hidden: not used by this configuration"));
    assert_non_null(strstr(f->r.err, ":12: [algorithm] server_threads: not used"));
    /* a cnn without hidden dense layers has none to drop out of (its
     * dropout was read, and recorded in config.ini, for nothing) */
    const char *no_dense[] = {"train", f->config, f->out_arg, "model.type=cnn",
                              "model.image=4,8,1", "model.channels=2", "model.hidden=",
                              "model.dropout=0.5", NULL};
    support_run_asgd(&f->r, f->dir, no_dense);
    if (f->r.status != 0 || !strstr(f->r.err, "model.dropout=0.5: not used by this configuration")) {
        fail_msg("a cnn without hidden layers, dropout 0.5: status %d, \"%s\"", f->r.status,
                 f->r.err);
    }
    /* the simulator's keys in a run of another mode change nothing */
    const char *real[] = {"train", f->config, f->out_arg, "experiment.mode=threads",
                          "sim.latency=1", NULL};
    support_run_asgd(&f->r, f->dir, real);
    if (f->r.status != 0 || !strstr(f->r.err, "sim.latency=1: not used by this configuration")) {
        fail_msg("threads mode, sim.latency=1: status %d, \"%s\"", f->r.status, f->r.err);
    }
    /* keys read whatever the configuration, which this one does not use:
     * a folder for generated data, a port for ipc sockets, the CPU's
     * convolutions for a model without any (each was recorded in
     * config.ini as if it had run) */
    const char *unused[] = {"data.path=/nowhere", "data.cache=off", "cluster.port=5000",
                            "cluster.host=10.9.9.9", "backend.conv=im2col", NULL};
    const char *quiet[] = {"train", f->config, f->out_arg, "train.algorithm=hogwild",
                           "experiment.mode=real", "cluster.workers=2", unused[0], unused[1],
                           unused[2], unused[3], unused[4], "algorithm.error_feedback=on", NULL};
    support_run_asgd(&f->r, f->dir, quiet);
    if (f->r.status != 0) {
        fail_msg("keys this run does not use: status %d, \"%s\"", f->r.status, f->r.err);
    }
    char *written = s_run_file(f, "config.ini");
    assert_non_null(written);
    for (int i = 0; unused[i]; i++) {
        char said[128], line[128];
        snprintf(said, sizeof said, "%s: not used by this configuration", unused[i]);
        snprintf(line, sizeof line, "\n%.*s =", (int)strcspn(strchr(unused[i], '.') + 1, "="),
                 strchr(unused[i], '.') + 1);
        if (!strstr(f->r.err, said) || strstr(written, line)) {
            fail_msg("%s: not said, or in config.ini: \"%s\"", unused[i], f->r.err);
        }
    }
    free(written);
    /* error feedback without compression is said, and kept: it is of the
     * job's settings, which a resumed run's checkpoints hold */
    assert_non_null(strstr(f->r.err, "algorithm.error_feedback=on: on without compression"));
    const char *typo[] = {"train", f->config, f->out_arg, "model.hiden=8", NULL};
    support_run_asgd(&f->r, f->dir, typo);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "model.hiden=8: unknown key; did you mean [model] hidden?"));
}

static void test_bad_value_and_bad_override(void **state)
{
    support_fixture *f = *state;
    support_write_file(f->config, "[data]\ndataset = synthetic\n[model]\ntype = resnet\n");
    const char *args[] = {"train", f->config, f->out_arg, NULL};
    support_run_asgd(&f->r, f->dir, args);
    const char *needles[] = {":4:", "[model] type", "\"resnet\" is not one of", NULL};
    s_expect_usage_error(f, needles);

    support_write_file(f->config, "[data]\ndataset = synthetic\n");
    const char *args2[] = {"train", f->config, f->out_arg, "train.batch=0", NULL};
    support_run_asgd(&f->r, f->dir, args2);
    const char *needles2[] = {"command line: train.batch=0", "out of range", NULL};
    s_expect_usage_error(f, needles2);

    const char *args3[] = {"train", f->config, f->out_arg, "batch=3", NULL};
    support_run_asgd(&f->r, f->dir, args3);
    const char *needles3[] = {"batch=3", "section.key=value", NULL};
    s_expect_usage_error(f, needles3);

    const char *args4[] = {"train", "/nonexistent/exp.ini", NULL};
    support_run_asgd(&f->r, f->dir, args4);
    const char *needles4[] = {"/nonexistent/exp.ini", "cannot open", NULL};
    s_expect_usage_error(f, needles4);
}

/* Values that would make a run's numbers or its folder other than the
 * config says: a train_size or test_size the files do not hold (each was
 * cut down to theirs without a word: test_size = 25000 measured accuracy
 * over 10,000), a minibatch larger than the training set (one
 * update over 17 copies of it), an empty experiment.out (the run went to
 * a folder at the file system's root), a name of ".." (out's parent),
 * evaluations too frequent for a simulated run ever to end, CURVE keys
 * that are not a folder, and a label-skew split that leaves a worker
 * nothing (every worker failed on it after the launch, in a run folder). */
static void test_sizes_and_folders_the_run_cannot_have(void **state)
{
    support_fixture *f = *state;
    support_write_file(f->config, "[data]\ndataset = synthetic\ntrain_size = 200\n"
                       "[train]\nbatch = 256\n");
    const char *big_batch[] = {"train", f->config, f->out_arg, NULL};
    support_run_asgd(&f->r, f->dir, big_batch);
    const char *needles[] = {":5:", "[train] batch", "256 is more than the 200 training", NULL};
    s_expect_usage_error(f, needles);
    if (access(DATA_FASHION, R_OK) == 0) {
        support_write_file(f->config, "[model]\ntype = softmax\n");
        const char *too_many[] = {"train", f->config, f->out_arg, "data.train_size=100000", NULL};
        support_run_asgd(&f->r, f->dir, too_many);
        const char *needles2[] = {"data.train_size=100000", "training set holds 60000", NULL};
        s_expect_usage_error(f, needles2);
        const char *too_many_tests[] = {"train", f->config, f->out_arg, "data.test_size=25000",
                                        NULL};
        support_run_asgd(&f->r, f->dir, too_many_tests);
        const char *needles7[] = {"data.test_size=25000", "test set holds 10000", NULL};
        s_expect_usage_error(f, needles7);
        /* too few to hold every class: the subset's doing, not a corrupt file */
        const char *one[] = {"train", f->config, f->out_arg, "data.train_size=1",
                             "train.batch=1", NULL};
        support_run_asgd(&f->r, f->dir, one);
        const char *needles6[] = {"command line: data.train_size=1: the first 1 examples",
                                  "none of class 0", NULL};
        s_expect_usage_error(f, needles6);
    }
    support_write_file(f->config, "[data]\ndataset = synthetic\n");
    const char *no_out[] = {"train", f->config, "experiment.out=", NULL};
    support_run_asgd(&f->r, f->dir, no_out);
    const char *needles3[] = {"experiment.out=", "must name a folder", NULL};
    s_expect_usage_error(f, needles3);
    const char *null_out[] = {"train", f->config, "experiment.out=/dev/null", NULL};
    support_run_asgd(&f->r, f->dir, null_out);
    const char *needles8[] = {"experiment.out=/dev/null", "is not a folder", NULL};
    s_expect_usage_error(f, needles8);
    const char *under_null[] = {"train", f->config, "experiment.out=/dev/null/x/y", NULL};
    support_run_asgd(&f->r, f->dir, under_null);
    const char *needles9[] = {"experiment.out=/dev/null/x/y", "/dev/null is not a folder", NULL};
    s_expect_usage_error(f, needles9);
    const char *up[] = {"train", f->config, f->out_arg, "experiment.name=..", NULL};
    support_run_asgd(&f->r, f->dir, up);
    const char *needles4[] = {"experiment.name=..", "plain folder name", NULL};
    s_expect_usage_error(f, needles4);
    /* a simulated evaluation may take no time: 29 million of them */
    const char *often[] = {"train", f->config, f->out_arg, "experiment.mode=sim",
                           "train.algorithm=hogwild", "eval.every=1e-9", NULL};
    support_run_asgd(&f->r, f->dir, often);
    const char *needles5[] = {"eval.every=1e-9", "below 0.1 ms", NULL};
    s_expect_usage_error(f, needles5);
    /* refused before the launch: every process failed on it, and the
     * message blamed the missing checkpoint for not restarting the shard */
    const char *keys[] = {"train", f->config, f->out_arg, "train.algorithm=hogwild",
                          "cluster.auth=curve", "cluster.keys=/dev/null", NULL};
    support_run_asgd(&f->r, f->dir, keys);
    const char *needles7[] = {"cluster.keys=/dev/null", "not a folder of keys", NULL};
    s_expect_usage_error(f, needles7);
    /* a model no host holds (1.1e12 parameters, 4.4 TB): refused on its key
     * before the run folder (it failed "out of memory" after making one) */
    const char *huge[] = {"train", f->config, f->out_arg, "model.type=mlp",
                          "model.hidden=1048576,1048576", NULL};
    support_run_asgd(&f->r, f->dir, huge);
    const char *huge_needles[] = {"model.hidden=1048576,1048576", "more than this host's memory",
                                  NULL};
    s_expect_usage_error(f, huge_needles);
    /* one copy fits; a model and a gradient for each of 4,096 simulated
     * workers do not (it failed "out of memory" after the run folder) */
    const char *many[] = {"train", f->config, f->out_arg, "model.type=mlp",
                          "model.hidden=4096,4096", "experiment.mode=sim",
                          "train.algorithm=hogwild", "cluster.workers=4096", NULL};
    support_run_asgd(&f->r, f->dir, many);
    const char *many_needles[] = {"model.hidden=4096,4096", "8193 copies of them",
                                  "more than this host's memory", NULL};
    s_expect_usage_error(f, many_needles);
    /* keys without auth: the job would have run unauthenticated */
    const char *noauth[] = {"train", f->config, f->out_arg, "train.algorithm=hogwild",
                            "cluster.keys=/tmp", NULL};
    support_run_asgd(&f->r, f->dir, noauth);
    const char *noauth_needles[] = {"cluster.keys=/tmp", "unauthenticated", "auth = curve", NULL};
    s_expect_usage_error(f, noauth_needles);
    /* a host not of this one, and an explicit port a listener holds:
     * refused before the run folder (they failed as the shards bound) */
    const char *far[] = {"train", f->config, f->out_arg, "train.algorithm=hogwild",
                         "cluster.transport=tcp", "cluster.host=192.0.2.1", NULL};
    support_run_asgd(&f->r, f->dir, far);
    const char *far_needles[] = {"cluster.host=192.0.2.1", "not an address of this host", NULL};
    s_expect_usage_error(f, far_needles);
    /* what passed that check and failed after the run folder (or hung): a
     * bare IPv6 address, a name of another host with a port (the workers
     * connected there and waited), a name with no port (free ports are
     * drawn on an IPv4 address only) */
    int v6 = socket(AF_INET6, SOCK_STREAM, 0);   /* a host without IPv6 refuses [::1] first */
    struct sockaddr_in6 loop6 = {.sin6_family = AF_INET6, .sin6_addr = in6addr_loopback};
    bool has_v6 = v6 >= 0 && bind(v6, (struct sockaddr *)&loop6, sizeof loop6) == 0;
    if (v6 >= 0) {
        close(v6);
    }
    const char *hosts[][3] = {{"cluster.host=::1", "cluster.port=24567", "in brackets ([::1])"},
                              {"cluster.host=no-such-host.invalid", "cluster.port=24567",
                               "cluster.host=no-such-host.invalid"},
                              {"cluster.host=[::1]", NULL,
                               has_v6 ? "draws free ports, on a local IPv4"
                                      : "not an address of this host"}};
    for (int i = 0; i < 3; i++) {
        const char *args[] = {"train", f->config, f->out_arg, "train.algorithm=hogwild",
                              "cluster.transport=tcp", hosts[i][0], hosts[i][1], NULL};
        support_run_asgd(&f->r, f->dir, args);
        const char *needles[] = {hosts[i][0], hosts[i][2], NULL};
        s_expect_usage_error(f, needles);
    }
    int holder = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    assert_int_equal(bind(holder, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(holder, 1), 0);
    assert_int_equal(getsockname(holder, (struct sockaddr *)&a, &alen), 0);
    char port[32];
    snprintf(port, sizeof port, "cluster.port=%d", ntohs(a.sin_port));
    const char *held[] = {"train", f->config, f->out_arg, "train.algorithm=hogwild",
                          "cluster.transport=tcp", port, NULL};
    support_run_asgd(&f->r, f->dir, held);
    close(holder);
    const char *held_needles[] = {port, "Address already in use", NULL};
    s_expect_usage_error(f, held_needles);
    support_write_file(f->config, "[data]\ndataset = synthetic\ntrain_size = 200\n"
                       "partition = label-skew\nalpha = 0.01\n[train]\nalgorithm = hogwild\nbatch = 2\n"
                       "[cluster]\nworkers = 64\n");
    const char *modes[] = {"experiment.mode=real", "experiment.mode=sim",
                           "experiment.mode=threads"};
    for (int m = 0; m < 3; m++) {
        const char *skew[] = {"train", f->config, f->out_arg, modes[m], NULL};
        support_run_asgd(&f->r, f->dir, skew);
        const char *needles10[] = {":5:", "[data] alpha", "0.01 with 64 workers",
                                   "no examples", NULL};
        s_expect_usage_error(f, needles10);
    }
    /* 64 sync workers and 8 minibatches: a round each still ran, 8 times
     * the epochs asked for, without a word */
    support_write_file(f->config, "[data]\ndataset = synthetic\ntrain_size = 512\n"
                       "[train]\nalgorithm = sync\nepochs = 1\n[cluster]\nworkers = 64\n"
                       "[experiment]\nmode = sim\n");
    const char *sync[] = {"train", f->config, f->out_arg, NULL};
    support_run_asgd(&f->r, f->dir, sync);
    const char *needles11[] = {":6:", "[train] epochs", "8 minibatches in all",
                               "under half a round of 64 workers", "one round is 8 epochs", NULL};
    s_expect_usage_error(f, needles11);
    /* an asynchronous rule runs its 8 minibatches, saying that 56 of its
     * workers take none (the last check here: it makes the run folder) */
    const char *hogwild[] = {"train", f->config, f->out_arg, "train.algorithm=hogwild", NULL};
    support_run_asgd(&f->r, f->dir, hogwild);
    assert_int_equal(f->r.status, 0);
    if (!strstr(f->r.err, "[train] epochs: 8 minibatches in all: 56 of the 64 workers take "
                "none (8 epochs give each one)")) {
        fail_msg("no warning of idle workers: \"%s\"", f->r.err);
    }
}

/* A folder a command writes into that is a file is said at once (exit
 * 2): a shard given --run_dir=FILE served a whole job, then failed to
 * write its checkpoints and counters. */
static void test_a_file_where_a_folder_goes(void **state)
{
    support_fixture *f = *state;
    support_write_file(f->config, "[data]\ndataset = synthetic\n[train]\nalgorithm = hogwild\n");
    char file[400], run_dir[420];
    snprintf(file, sizeof file, "%s/afile", f->dir);
    support_write_file(file, "x");
    snprintf(run_dir, sizeof run_dir, "--run_dir=%s", file);
    const char *ps[] = {"ps", f->config, "--ps_hosts=127.0.0.1:1", "--worker_hosts=127.0.0.1:2",
                        "--task_index=0", run_dir, NULL};
    support_run_asgd(&f->r, f->dir, ps);
    if (f->r.status != 2 || !strstr(f->r.err, "asgd ps 0: ") ||
        !strstr(f->r.err, "afile: not a folder")) {
        fail_msg("status %d, \"%s\"", f->r.status, f->r.err);
    }
    /* a flag wrong before the process knows which shard it is names none
     * (it said "asgd ps 0" of shard 1), and says it once */
    const char *twice[] = {"ps", f->config, "--ps_hosts=127.0.0.1:1,127.0.0.1:1",
                           "--worker_hosts=127.0.0.1:2", "--task_index=1", NULL};
    support_run_asgd(&f->r, f->dir, twice);
    if (f->r.status != 2 || strncmp(f->r.err, "asgd ps: --ps_hosts: shards 0 and 1 are both",
                                    44) != 0) {
        fail_msg("status %d, \"%s\"", f->r.status, f->r.err);
    }
    const char *unindexed[] = {"worker", f->config, "--ps_hosts=127.0.0.1:1",
                               "--worker_hosts=127.0.0.1:2", NULL};
    support_run_asgd(&f->r, f->dir, unindexed);
    if (f->r.status != 2 || strcmp(f->r.err, "asgd worker: give --task_index (which worker "
                                             "this process is, from 0)\n") != 0) {
        fail_msg("status %d, \"%s\"", f->r.status, f->r.err);
    }
    /* an index past its list names no task (it said "asgd ps 2: ps:
     * --task_index 2", a shard that is not, and the role twice) */
    const char *past[][6] = {
        {"ps", "--ps_hosts=127.0.0.1:1,127.0.0.1:3", "--task_index=2",
         "asgd ps: --task_index 2 but only 2 servers\n"},
        {"worker", "--ps_hosts=127.0.0.1:1", "--task_index=1",
         "asgd worker: --task_index 1 but only 1 worker\n"}};
    for (int i = 0; i < 2; i++) {
        const char *args[] = {past[i][0], f->config, past[i][1], "--worker_hosts=127.0.0.1:2",
                              past[i][2], NULL};
        support_run_asgd(&f->r, f->dir, args);
        if (f->r.status != 2 || strcmp(f->r.err, past[i][3]) != 0) {
            fail_msg("%s: status %d, \"%s\"", past[i][0], f->r.status, f->r.err);
        }
    }
    /* asgd calibrate's -o, checked before a minute of measuring: it
     * overwrote the experiment's own config, or failed at the end */
    char under[460];
    snprintf(under, sizeof under, "%s/p.ini", file);
    const char *outs[][2] = {{f->config, "is the experiment's config"},
                             {under, "afile is not a folder it can write into"},
                             {f->dir, "is a folder"}};
    for (int i = 0; i < 3; i++) {
        const char *calibrate[] = {"calibrate", f->config, "-o", outs[i][0], NULL};
        support_run_asgd(&f->r, f->dir, calibrate);
        if (f->r.status != 2 || !strstr(f->r.err, outs[i][1])) {
            fail_msg("calibrate -o %s: status %d, \"%s\"", outs[i][0], f->r.status, f->r.err);
        }
    }
    char *config = support_read_file(f->config);
    assert_non_null(strstr(config, "algorithm = hogwild"));
    free(config);
    /* an empty profile is none: it gave the built-in costs without a word */
    char profile[460], key[480];
    snprintf(profile, sizeof profile, "%s/empty.ini", f->dir);
    support_write_file(profile, "");
    snprintf(key, sizeof key, "sim.profile=%s", profile);
    const char *sim[] = {"train", f->config, f->out_arg, "experiment.mode=sim", key, NULL};
    support_run_asgd(&f->r, f->dir, sim);
    if (f->r.status != 2 || !strstr(f->r.err, "no [sim] key: not a profile")) {
        fail_msg("an empty profile: status %d, \"%s\"", f->r.status, f->r.err);
    }
}

static void test_usage_errors(void **state)
{
    support_fixture *f = *state;
    const char *none[] = {NULL};
    support_run_asgd(&f->r, f->dir, none);
    assert_int_equal(f->r.status, 2);
    const char *bogus[] = {"frobnicate", NULL};
    support_run_asgd(&f->r, f->dir, bogus);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "unknown command"));
    const char *bare[] = {"train", NULL};
    support_run_asgd(&f->r, f->dir, bare);
    assert_int_equal(f->r.status, 2);
    /* an option without its value is said so (it was "unknown option -j;
     * did you mean -j") */
    const char *no_jobs[] = {"sweep", "x.ini", "-j", NULL};
    support_run_asgd(&f->r, f->dir, no_jobs);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "-j needs a positive number"));
    /* a typo gets the word it was meant to be, in one line */
    const char *typo[] = {"trian", "x.ini", NULL};
    support_run_asgd(&f->r, f->dir, typo);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "unknown command \"trian\"; did you mean \"train\"?"));
    assert_null(strstr(f->r.err, "usage:"));
    /* and a help topic that is none (it printed the general help, exit 0) */
    const char *topic[] = {"help", "algoritms", NULL};
    support_run_asgd(&f->r, f->dir, topic);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "no topic \"algoritms\"; did you mean \"algorithms\"?"));
    /* a data folder given that holds no data is said so (it said Fashion-MNIST
     * was not installed) */
    const char *nodata[] = {"train", "/dev/null", f->out_arg, "data.path=/nonexistent", NULL};
    support_run_asgd(&f->r, f->dir, nodata);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "/nonexistent/train-images-idx3-ubyte"));
    assert_null(strstr(f->r.err, "not installed"));
    const char *flag[] = {"plot", f->dir, "-o", "x.png", "--kindd", "scaling", NULL};
    support_run_asgd(&f->r, f->dir, flag);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "asgd plot: unknown option --kindd; did you mean --kind?"));
    assert_null(strstr(f->r.err, "asgd: asgd"));
    /* a role flag written with dashes, the likeliest slip, gets the flag */
    const char *role_flag[] = {"worker", "/dev/null", "--ps_hosts=h:1", "--task-index=0", NULL};
    support_run_asgd(&f->r, f->dir, role_flag);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "--task-index: unknown flag; did you mean --task_index?"));
    const char *last[] = {"worker", "/dev/null", "--ps_hosts=h:1", "--restor", NULL};
    support_run_asgd(&f->r, f->dir, last);   /* it said "missing value" */
    assert_non_null(strstr(f->r.err, "--restor: unknown flag; did you mean --restore?"));
    const char *valued[] = {"worker", "/dev/null", "--ps_hosts=h:1", "--resume=1", NULL};
    support_run_asgd(&f->r, f->dir, valued);   /* it said "did you mean --resume?" */
    assert_non_null(strstr(f->r.err, "--resume takes no value"));
    const char *sweep_flag[] = {"sweep", "-k", "2", "grid.ini", NULL};
    support_run_asgd(&f->r, f->dir, sweep_flag);
    assert_int_equal(f->r.status, 2);
    assert_non_null(strstr(f->r.err, "unknown option -k; did you mean -j"));
    const char *version[] = {"--version", NULL};
    support_run_asgd(&f->r, f->dir, version);
    assert_int_equal(f->r.status, 0);
    assert_non_null(strstr(f->r.out, "asgd "));
}

static void test_missing_dataset(void **state)
{
    support_fixture *f = *state;
    char path_arg[400];
    snprintf(path_arg, sizeof path_arg, "data.path=%s/nothing-here", f->dir);
    support_write_file(f->config, "[data]\ndataset = fashion-mnist\n");
    const char *args[] = {"train", f->config, f->out_arg, path_arg, NULL};
    support_run_asgd(&f->r, f->dir, args);
    const char *needles[] = {"nothing-here/train-images-idx3-ubyte",
                             "apt-get install dataset-fashion-mnist", NULL};
    s_expect_usage_error(f, needles);

    support_write_file(f->config, "[data]\ndataset = mnist\n");
    support_run_asgd(&f->r, f->dir, args);
    const char *needles2[] = {"nothing-here/train-images-idx3-ubyte", "[data] path", NULL};
    s_expect_usage_error(f, needles2);

    support_write_file(f->config, "[data]\ndataset = idx\n");
    const char *args3[] = {"train", f->config, f->out_arg, NULL};
    support_run_asgd(&f->r, f->dir, args3);
    const char *needles3[] = {"[data] path", NULL};
    s_expect_usage_error(f, needles3);
    /* a folder given in the file is named with its line, and a '#' in it
     * is said (the message began with the path, and named neither) */
    support_write_file(f->config, "[data]\ndataset = idx\npath = /nowhere  # moved\n");
    support_run_asgd(&f->r, f->dir, args3);
    const char *needles4[] = {":3: [data] path: /nowhere  # moved/train-images-idx3-ubyte",
                              "a comment after a value starts with ';', not '#'", NULL};
    s_expect_usage_error(f, needles4);
}

static void test_corrupt_idx(void **state)
{
    support_fixture *f = *state;
    char data[300], path[400], path_arg[400];
    snprintf(data, sizeof data, "%s/data", f->dir);
    mkdir(data, 0755);
    uint8_t px[20 * 784] = {0}, labels[20];
    for (int i = 0; i < 20; i++) {
        labels[i] = (uint8_t)(i % 10);   /* every class: one alone is refused */
    }
    uint32_t idims[3] = {20, 28, 28}, ldims[1] = {20};
    const char *stems[4][2] = {{"train-images-idx3-ubyte.gz", "i"}, {"train-labels-idx1-ubyte.gz", "l"},
                               {"t10k-images-idx3-ubyte.gz", "i"}, {"t10k-labels-idx1-ubyte.gz", "l"}};
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", data, stems[i][0]);
        if (stems[i][1][0] == 'i') {
            support_write_idx(path, 1, idims, 3, px);
        } else {
            support_write_idx(path, 1, ldims, 1, labels);
        }
    }
    /* the test labels: a plain (not gzip) file, cut short */
    snprintf(path, sizeof path, "%s/t10k-labels-idx1-ubyte.gz", data);
    remove(path);
    snprintf(path, sizeof path, "%s/t10k-labels-idx1-ubyte", data);
    const uint8_t cut[] = {0, 0, 8, 1, 0, 0, 0, 20, 1, 2, 3};
    FILE *o = fopen(path, "wb");
    fwrite(cut, 1, sizeof cut, o);
    fclose(o);
    snprintf(path_arg, sizeof path_arg, "data.path=%s", data);
    support_write_file(f->config, "[data]\ndataset = mnist\n");
    const char *args[] = {"train", f->config, f->out_arg, path_arg, NULL};
    support_run_asgd(&f->r, f->dir, args);
    const char *needles[] = {path, "corrupt IDX file", "truncated", NULL};
    s_expect_usage_error(f, needles);

    /* a wrong magic number in the training images */
    snprintf(path, sizeof path, "%s/train-images-idx3-ubyte.gz", data);
    support_write_file(path, "this is not an IDX file at all\n");
    support_run_asgd(&f->r, f->dir, args);
    const char *needles2[] = {path, "not an IDX file", NULL};
    s_expect_usage_error(f, needles2);
}

/* With every GPU hidden, device = cuda is a usage error before anything
 * starts, whether the build has the CUDA backend or not; auto runs on the
 * CPU. */
static void test_cuda_without_a_gpu(void **state)
{
    support_fixture *f = *state;
    setenv("CUDA_VISIBLE_DEVICES", "", 1);
    support_write_file(f->config, "[data]\ndataset = synthetic\ntrain_size = 200\n"
                                  "test_size = 50\n[train]\nepochs = 1\n"
                                  "[backend]\ndevice = cuda\n");
    const char *args[] = {"train", f->config, f->out_arg, NULL};
    support_run_asgd(&f->r, f->dir, args);
    const char *needles[] = {":8: [backend] device", "use device = cpu or auto", NULL};
    s_expect_usage_error(f, needles);
    /* workers of a distributed rule: refused before any process starts */
    const char *args2[] = {"train", f->config, f->out_arg, "train.algorithm=hogwild",
                           "cluster.workers=2", NULL};
    support_run_asgd(&f->r, f->dir, args2);
    s_expect_usage_error(f, needles);
    const char *args3[] = {"train", f->config, f->out_arg, "backend.device=auto", NULL};
    support_run_asgd(&f->r, f->dir, args3);
    unsetenv("CUDA_VISIBLE_DEVICES");
    if (f->r.status != 0) {
        fail_msg("auto without a GPU: exit %d, %s", f->r.status, f->r.err);
    }
    char *text = s_run_file(f, "log.txt");
    assert_non_null(text);
    assert_non_null(strstr(text, "backend: cpu"));
    free(text);
}

/* OpenBLAS's kernels older than the CPU (Prescott's SSE3 ones on an
 * H200 host's new Xeon, which OpenBLAS 0.3.21 did not know) are named,
 * with the OPENBLAS_CORETYPE that fits; kernels for the CPU's AVX2 are
 * not. Where the CPU has no AVX2, Prescott's is no loss and nothing is
 * said. The run goes on either way. */
static void test_blas_kernels_older_than_the_cpu(void **state)
{
    support_fixture *f = *state;
    const char *had = getenv("OPENBLAS_CORETYPE");
    char kept[64];
    snprintf(kept, sizeof kept, "%s", had ? had : "");
    support_write_file(f->config, "[data]\ndataset = synthetic\ntrain_size = 200\n"
                                  "test_size = 50\n[train]\nepochs = 1\n");
    const char *args[] = {"train", f->config, f->out_arg, NULL};
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    bool wide = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    bool wide = false;   /* no Prescott there: nothing is said */
#endif
    const char *cores[] = {"Prescott", wide ? "Haswell" : "Nehalem"};
    for (int i = 0; i < 2; i++) {
        setenv("OPENBLAS_CORETYPE", cores[i], 1);
        support_run_asgd(&f->r, f->dir, args);
        if (f->r.status != 0) {
            fail_msg("with OPENBLAS_CORETYPE=%s: exit %d, %s", cores[i], f->r.status, f->r.err);
        }
        bool said = strstr(f->r.err, "OpenBLAS computes with its Prescott kernels on a CPU "
                                     "with AVX2") != NULL;
        if (said != (wide && i == 0) ||
            (said && !strstr(f->r.err, "set OPENBLAS_CORETYPE="))) {
            fail_msg("OPENBLAS_CORETYPE=%s on a CPU %s AVX2: \"%s\"", cores[i],
                     wide ? "with" : "without", f->r.err);
        }
    }
    if (had) {
        setenv("OPENBLAS_CORETYPE", kept, 1);
    } else {
        unsetenv("OPENBLAS_CORETYPE");
    }
}

static void test_cnn_config_errors(void **state)
{
    support_fixture *f = *state;
    support_write_file(f->config, "[data]\ndataset = synthetic\ndim = 64\n"
                                  "[model]\ntype = cnn\nkernel = 4\n");
    const char *args[] = {"train", f->config, f->out_arg, NULL};
    support_run_asgd(&f->r, f->dir, args);
    const char *needles[] = {":6:", "[model] kernel", "must be odd", NULL};
    s_expect_usage_error(f, needles);
    support_write_file(f->config, "[data]\ndataset = synthetic\ndim = 60\n"
                                  "[model]\ntype = cnn\n");
    support_run_asgd(&f->r, f->dir, args);
    const char *needles2[] = {"[model] image", "60 features", NULL};
    s_expect_usage_error(f, needles2);
    /* a model that does not fit the data names where its key was given:
     * the file's line, the command line, or the default */
    support_write_file(f->config, "[data]\ndataset = synthetic\n[model]\ntype = linear\n");
    support_run_asgd(&f->r, f->dir, args);
    const char *needles3[] = {":4: [model] type", "needs regression data", NULL};
    s_expect_usage_error(f, needles3);
    support_write_file(f->config, "[data]\ndataset = synthetic\n");
    const char *by_flag[] = {"train", f->config, f->out_arg, "model.type=linear", NULL};
    support_run_asgd(&f->r, f->dir, by_flag);
    const char *needles4[] = {"command line: model.type=linear", "needs regression", NULL};
    s_expect_usage_error(f, needles4);
    support_write_file(f->config, "[data]\ndataset = regression\n");
    support_run_asgd(&f->r, f->dir, args);
    const char *needles5[] = {"[model] type = mlp (the default)", "needs type = linear", NULL};
    s_expect_usage_error(f, needles5);
}

static void test_help_config_lists_resolved_keys(void **state)
{
    support_fixture *f = *state;
    const char *args[] = {"help", "config", NULL};
    support_run_asgd(&f->r, f->dir, args);
    assert_int_equal(f->r.status, 0);
    const char *keys[] = {"[experiment]", "seed = 1", "[data]", "dataset = fashion-mnist",
                          "[model]", "hidden = 256,128", "[train]", "lr = 0.05",
                          "[eval]", "[backend]", "threads = 1", NULL};
    for (int i = 0; keys[i]; i++) {
        if (!strstr(f->r.out, keys[i])) {
            fail_msg("help config lacks \"%s\":\n%s", keys[i], f->r.out);
        }
    }
    /* a config in a sweep run's folder, whose name holds '=', is a path
     * (it was taken for an override, and refused as an unknown key) */
    char folder[600], config[700];
    snprintf(folder, sizeof folder, "%s/train.lr=0.1,seed=1", f->dir);
    assert_int_equal(mkdir(folder, 0755), 0);
    snprintf(config, sizeof config, "%s/config.ini", folder);
    support_write_file(config, "[train]\nlr = 0.125\n");
    const char *swept[] = {"help", "config", config, "train.batch=7", NULL};
    support_run_asgd(&f->r, f->dir, swept);
    if (f->r.status != 0 || !strstr(f->r.out, "lr = 0.125") || !strstr(f->r.out, "batch = 7")) {
        fail_msg("help config of %s: status %d, \"%s\"", config, f->r.status, f->r.err);
    }
    /* from the sweep's folder too, where no '/' comes before the '=' */
    const char *here[] = {"help", "config", "train.lr=0.1,seed=1/config.ini", NULL};
    support_run_asgd(&f->r, f->dir, here);
    if (f->r.status != 0 || !strstr(f->r.out, "lr = 0.125")) {
        fail_msg("help config of a run's folder from here: status %d, \"%s\"", f->r.status,
                 f->r.err);
    }
    /* an override without its section stays one, and is said to be wrong */
    const char *bare[] = {"help", "config", "lr=0.1", NULL};
    support_run_asgd(&f->r, f->dir, bare);
    if (f->r.status != 2 || !strstr(f->r.err, "expected section.key=value")) {
        fail_msg("help config lr=0.1: status %d, \"%s\"", f->r.status, f->r.err);
    }
    /* appended to a file, it keeps what the file held (it reopened
     * /dev/stdout, which cut the file to nothing first) */
    const char *shell[] = {"-c", "echo precious > kept.txt && \"$0\" help config >> kept.txt",
                           ASGD_BINARY, NULL};
    support_run(&f->r, f->dir, "/bin/sh", shell);
    assert_int_equal(f->r.status, 0);
    char path[600];
    snprintf(path, sizeof path, "%s/kept.txt", f->dir);
    char *kept = support_read_file(path);
    assert_non_null(kept);
    const char *want = "precious\n# Resolved config";
    assert_true(strncmp(kept, want, strlen(want)) == 0);
    free(kept);
    /* output that cannot be written is an error, for every command (asgd
     * --version, help and eval on a full disk said 0) */
    const char *full[] = {"-c", "\"$0\" --version > /dev/full; echo \"status $?\"", ASGD_BINARY,
                          NULL};
    support_run(&f->r, f->dir, "/bin/sh", full);
    assert_non_null(strstr(f->r.out, "status 1"));
    assert_non_null(strstr(f->r.err, "cannot write its output"));
}

/* Output that is not a terminal (CI, nohup, a cluster job) still shows
 * where a run stands: a whole line every ASGD_PROGRESS_EVERY seconds, and
 * the last one always; in the sequential trainer, the simulator (its
 * simulated time too) and the launcher. */
static void test_progress_lines_when_stderr_is_a_file(void **state)
{
    support_fixture *f = *state;
    setenv("ASGD_PROGRESS_EVERY", "0.01", 1);
    const char *modes[][4] = {   /* the simulator: small steps, to take a few ms */
        {"train.algorithm=sequential", "experiment.mode=real", "train.batch=64",
         "sequential, epoch"},
        {"train.algorithm=hogwild", "experiment.mode=sim", "train.batch=2",
         "hogwild simulated, 4 workers"},
        {"train.algorithm=hogwild", "experiment.mode=real", "train.batch=64", "hogwild, "},
    };
    for (int m = 0; m < 3; m++) {
        const char *args[] = {"train", "/dev/null", f->out_arg, "data.dataset=synthetic",
                              "train.epochs=3", "cluster.transport=tcp", modes[m][0],
                              modes[m][1], modes[m][2], NULL};
        support_run_asgd(&f->r, f->dir, args);
        assert_int_equal(f->r.status, 0);
        int lines = 0;
        for (char *at = strstr(f->r.err, modes[m][3]); at; at = strstr(at + 1, modes[m][3])) {
            lines++;
        }
        if (lines < 2) {
            fail_msg("%s: %d progress lines in:\n%s", modes[m][3], lines, f->r.err);
        }
        assert_null(strchr(f->r.err, '\r'));   /* whole lines, for a log */
        assert_non_null(strstr(f->r.err, "epoch 3.00/3"));   /* the last line */
    }
    /* without evaluations on the way, the launcher's lines do not repeat
     * the initial model's epoch and accuracy as if training stood still */
    const char *args[] = {"train", "/dev/null", f->out_arg, "data.dataset=synthetic",
                          "train.epochs=3", "cluster.transport=tcp", "train.algorithm=hogwild",
                          "eval.every=0", NULL};
    support_run_asgd(&f->r, f->dir, args);
    assert_int_equal(f->r.status, 0);
    const char *shown = strstr(f->r.err, "test acc 0.");
    assert_non_null(shown);
    assert_null(strstr(shown + 1, "test acc 0."));   /* the final line's alone */
    assert_non_null(strstr(f->r.err, "epoch 3.00/3 | test acc 0."));
    unsetenv("ASGD_PROGRESS_EVERY");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_mistyped_key, support_fixture_setup, support_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_switching_models_and_rules, support_fixture_setup, support_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_bad_value_and_bad_override, support_fixture_setup, support_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_sizes_and_folders_the_run_cannot_have,
                                        support_fixture_setup, support_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_usage_errors, support_fixture_setup, support_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_missing_dataset, support_fixture_setup, support_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_idx, support_fixture_setup, support_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_cuda_without_a_gpu, support_fixture_setup, support_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_blas_kernels_older_than_the_cpu, support_fixture_setup, support_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_cnn_config_errors, support_fixture_setup, support_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_help_config_lists_resolved_keys, support_fixture_setup, support_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_progress_lines_when_stderr_is_a_file, support_fixture_setup, support_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_a_file_where_a_folder_goes, support_fixture_setup, support_fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
