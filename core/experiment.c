/* experiment.c: reading a whole experiment config. */
#include "core/experiment.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cJSON.h>

#include "core/datacache.h"
#include "core/partition.h"
#include "core/provenance.h"
#include "core/run.h"

static const char *const s_modes[] = {"real", "sim", "threads", NULL};
static const char *const s_partitions[] = {"iid", "label-skew", NULL};
static const char *const s_transports[] = {"ipc", "tcp", NULL};
static const char *const s_restarts[] = {"never", "on-failure", "exit-code", NULL};
static const char *const s_auths[] = {"none", "curve", NULL};
static const char *const s_shms[] = {"auto", "off", NULL};

const char *experiment_mode_name(int mode)
{
    return s_modes[mode];
}

/* configs/mlp.ini -> "mlp"; experiments/sync/config.ini -> "sync". */
static void s_default_name(char *buf, size_t n, const char *path)
{
    if (!path) {
        snprintf(buf, n, "default");
        return;
    }
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    if (strcmp(base, "config.ini") == 0 && slash) {
        const char *end = slash;
        const char *start = end;
        while (start > path && start[-1] != '/') {
            start--;
        }
        if (end > start && !(end - start == 1 && *start == '.')) {
            snprintf(buf, n, "%.*s", (int)(end - start), start);
            return;
        }
    }
    const char *dot = strrchr(base, '.');
    int len = dot && dot != base ? (int)(dot - base) : (int)strlen(base);
    snprintf(buf, n, "%.*s", len, base);
}

/* config_check_unused's warn: one line more in e->warnings. */
static void s_warn(void *ctx, const char *msg)
{
    experiment *e = ctx;
    size_t len = strlen(e->warnings);
    snprintf(e->warnings + len, sizeof e->warnings - len, "asgd: %s\n", msg);
}

/* The [cluster] keys a mode without sockets reads only to check them
 * (a value out of range is still an error; faults and a trace that are
 * set are refused by s_check_sim and s_check_threads): "not used by this
 * configuration", and left out of the run's config.ini. Threads mode
 * uses none of the network's or the supervision's, nor checkpoints; the
 * simulator models the transport, shared segments, restarts and resends,
 * and no more. A threads run's config.ini once said auth = curve,
 * transport = tcp and restart = on-failure, none of which it had. */
static void s_forget_network(experiment *e)
{
    static const char *const unused_in_sim[] = {"host", "port", "timeout", "auth", "keys",
                                                "latency", "jitter", "drop", "duplicate",
                                                "trace", NULL};
    static const char *const unused_in_threads[] = {"transport", "shm", "restart",
                                                    "backoff_limit", "resend", NULL};
    if (e->mode == MODE_REAL) {
        if (e->transport == TRANSPORT_IPC) {   /* its sockets are files, no address */
            config_forget_key(e->c, "cluster", "host");
            config_forget_key(e->c, "cluster", "port");
        }
        return;
    }
    for (int i = 0; unused_in_sim[i]; i++) {
        config_forget_key(e->c, "cluster", unused_in_sim[i]);
    }
    for (int i = 0; e->mode == MODE_THREADS && unused_in_threads[i]; i++) {
        config_forget_key(e->c, "cluster", unused_in_threads[i]);
    }
    if (e->mode == MODE_THREADS) {
        config_forget_key(e->c, "checkpoint", "every");
    }
}

/* [cluster]: a distributed rule's processes or threads, and their
 * network. */
static int s_read_cluster(experiment *e, error *err)
{
    config *c = e->c;
    long workers, servers;
    int shm;
    const char *replay;
    /* processes and threads: as many as a host or a job holds; simulated
     * workers: as many as memory holds (bench/RESULTS.md: 65,536) */
    long most = e->mode == MODE_SIM ? 1L << 20 : 4096;
    if (config_get_int(c, "cluster", "workers", 4, 1, most, &workers, err) < 0 ||
        config_get_int(c, "cluster", "servers", 1, 1, 256, &servers, err) < 0 ||
        config_get_enum(c, "cluster", "transport", "ipc", s_transports, &e->transport, err) < 0 ||
        config_get_string(c, "cluster", "host", "127.0.0.1", &e->host, err) < 0 ||
        config_get_int(c, "cluster", "port", 0, 0, 65535, &e->port, err) < 0 ||
        config_get_enum(c, "cluster", "restart", "never", s_restarts, &e->restart, err) < 0 ||
        config_get_int(c, "cluster", "backoff_limit", 3, 0, 1000, &e->backoff_limit, err) < 0 ||
        config_get_double(c, "cluster", "timeout", 60, 0, 1e6, CONFIG_OPEN_LO, &e->timeout, err) < 0 ||
        config_get_double(c, "cluster", "resend", 1, 0, 1e6, CONFIG_OPEN_LO, &e->resend, err) < 0 ||
        config_get_enum(c, "cluster", "auth", "none", s_auths, &e->auth, err) < 0 ||
        config_get_path(c, "cluster", "keys", "", &e->keys, err) < 0 ||
        config_get_enum(c, "cluster", "shm", "auto", s_shms, &shm, err) < 0 ||
        config_get_double(c, "cluster", "latency", 0, 0, 10, CONFIG_CLOSED, &e->faults.latency,
                          err) < 0 ||
        config_get_double(c, "cluster", "jitter", 0, 0, 10, CONFIG_CLOSED, &e->faults.jitter,
                          err) < 0 ||
        config_get_double(c, "cluster", "drop", 0, 0, 0.9, CONFIG_CLOSED, &e->faults.drop,
                          err) < 0 ||
        config_get_double(c, "cluster", "duplicate", 0, 0, 0.9, CONFIG_CLOSED,
                          &e->faults.duplicate, err) < 0 ||
        config_get_double(c, "checkpoint", "every", 0, 0, 1e9, CONFIG_CLOSED,
                          &e->checkpoint_every, err) < 0 ||
        config_get_path(c, "cluster", "trace", "", &replay, err) < 0) {
        return -1;
    }
    if (e->faults.drop + e->faults.duplicate > 1) {
        return config_fail(c, "cluster", "duplicate", err, "%g with drop %g: each is a share "
                           "of all messages, and together they are more than all",
                           e->faults.duplicate, e->faults.drop);
    }
    if (e->mode == MODE_REAL && e->keys[0] && e->auth != AUTH_CURVE) {
        /* keys given and not used: the job would run unauthenticated,
         * which its author, having made keys, does not expect */
        return config_fail(c, "cluster", "keys", err, "keys without [cluster] auth = curve: "
                           "the job would run unauthenticated; set auth = curve, or leave "
                           "keys out");
    }
    error why = {0};
    if (replay[0] && trace_load(&e->replay, replay, &why) < 0) {
        return config_fail(c, "cluster", "trace", err, "%s", why.msg);
    }
    /* named up front: the launcher refused it after making the run folder,
     * with no line (only real mode opens ports: in sim, tcp is a cost model) */
    if (e->mode == MODE_REAL && e->transport == TRANSPORT_TCP && e->port > 0 &&
        e->port + servers - 1 > 65535) {
        return config_fail(c, "cluster", "port", err, "%ld: shard %ld's port would be %ld, "
                           "beyond 65535 (the shards take port to port + servers - 1)",
                           e->port, servers - 1, e->port + servers - 1);
    }
    e->shm = shm == 0;
    e->workers = (int)workers;
    e->servers = (int)servers;
    s_forget_network(e);
    return 0;
}

/* train.algorithm names the sequential baseline or a registered rule,
 * which reads its own [algorithm] keys. */
static int s_read_rule(experiment *e, error *err)
{
    config *c = e->c;
    if (strcmp(e->algorithm_name, "sequential") == 0) {   /* no [cluster]: a base config's is
                                                           * "not used by this configuration"
                                                           * (it was recorded, and a sweep's
                                                           * cluster.workers grid made copies
                                                           * of one run) */
        e->workers = 1;
        e->servers = 0;
        return 0;
    }
    if (s_read_cluster(e, err) < 0) {
        return -1;
    }
    e->alg = algorithm_find(e->algorithm_name);
    if (!e->alg) {
        char names[512] = "sequential";
        for (const algorithm *const *a = algorithm_all(); *a; a++) {
            strncat(names, ", ", sizeof names - strlen(names) - 1);
            strncat(names, (*a)->name, sizeof names - strlen(names) - 1);
        }
        return config_fail(c, "train", "algorithm", err, "\"%s\" is not one of %s (see `asgd "
                           "help algorithms`)", e->algorithm_name, names);
    }
    rule_context ctx = {.workers = e->workers, .optim = &e->optim, .epochs = e->epochs,
                        .batch = e->batch};
    e->rule_info = (rule_info){.server_threads = 1, .server_optim = e->optim,
                               .local_optim = e->optim};
    e->rule = e->alg->configure(c, &ctx, &e->rule_info, err);
    if (!e->rule || config_get_bool(c, "algorithm", "prefetch", false, &e->prefetch, err) < 0) {
        return -1;
    }
    if (e->prefetch && !e->alg->prefetch) {
        return config_fail(c, "algorithm", "prefetch", err, "%s does not prefetch: %s",
                           e->alg->name, e->rule_info.lockstep
                               ? "its workers wait for each round's parameters"
                           : e->alg->server_on_pull
                               ? "its shard keeps what each worker last pulled, which a pull "
                                 "answered early would replace"
                               : "its worker loop does not ask for the next pull early");
    }
    if (e->prefetch && faults_on(&e->faults)) {
        return config_fail(c, "algorithm", "prefetch", err, "not with injected faults "
                           "([cluster] latency, jitter, drop, duplicate): every push then "
                           "waits for its acknowledgement, and the early replies would be "
                           "dropped meanwhile");
    }
    if (compress_spec_configure(&e->compress, c, err) < 0) {
        return -1;
    }
    int kind = e->compress.kind;
    if (kind == COMPRESS_NONE && e->compress.error_feedback) {
        /* said, but kept in config.ini: it is of the job's settings, which
         * an earlier build's checkpoints hold, and a resume compares */
        error why;
        config_fail(c, "algorithm", "error_feedback", &why, "on without compression: there is "
                    "no residual to keep, and it changes nothing");
        s_warn(e, why.msg);
    }
    if (e->rule_info.pushes_models && (kind != COMPRESS_NONE && kind != COMPRESS_FP16 &&
                                       kind != COMPRESS_BF16)) {
        char name[64];
        compress_spec_name(&e->compress, name, sizeof name);
        return config_fail(c, "algorithm", "compress", err, "%s pushes whole models, and %s is "
                           "made for updates: it would drop or quantize the model itself "
                           "(topk's left-out entries became 0 in the centre); fp16 and bf16 "
                           "round them", e->alg->name, name);
    }
    if (e->rule_info.pushes_models && e->compress.error_feedback && kind != COMPRESS_NONE) {
        return config_fail(c, "algorithm", "error_feedback", err, "%s pushes whole models: "
                           "what compression left out of one would be added to the next, the "
                           "model counted twice", e->alg->name);
    }
    return 0;
}

/* The first [cluster] fault key set (faults.h), or NULL. */
static const char *s_fault_key(const experiment *e)
{
    return e->faults.latency > 0 ? "latency" : e->faults.jitter > 0 ? "jitter"
           : e->faults.drop > 0 ? "drop" : e->faults.duplicate > 0 ? "duplicate" : NULL;
}

/* The simulator's network is [sim]'s: real mode's injected faults and
 * trace replay are refused, not ignored (a run with cluster.drop = 0.1
 * once ran as if it were 0, the key kept in its config.ini). */
static int s_check_sim(experiment *e, error *err)
{
    const char *fault = s_fault_key(e);
    if (fault) {
        return config_fail(e->c, "cluster", fault, err, "experiment.mode = sim injects no "
                           "faults of real mode's; its network is [sim] latency, jitter and "
                           "bandwidth");
    }
    if (e->replay.n > 0) {
        return config_fail(e->c, "cluster", "trace", err, "experiment.mode = sim does not "
                           "replay real mode's trace (sim.trace simulates one)");
    }
    /* a simulated shard serves one message at a time ([sim] apply): more
     * apply threads changed no simulated time, and config.ini kept them */
    if (e->rule_info.server_threads > 1) {
        config_forget_key(e->c, "algorithm", "server_threads");
    }
    const sim_spec *s = &e->sim;
    if (s->compute == SIM_NORMAL && s->compute_sd > 0) {
        /* a draw below 0 is a step of no time: the mean of max(0, X) */
        double a = s->compute_mean / s->compute_sd;
        double mean = s->compute_mean * 0.5 * erfc(-a / sqrt(2)) +
                      s->compute_sd * exp(-a * a / 2) / sqrt(2 * 3.14159265358979323846);
        if (mean > 1.01 * s->compute_mean) {
            error why;
            config_fail(e->c, "sim", "compute_sd", &why, "%g beside compute_mean %g: compute = "
                        "normal draws below 0, taken as no time, and its steps take %.4g s on "
                        "average, not %g (compute = lognormal keeps the mean)", s->compute_sd,
                        s->compute_mean, mean, s->compute_mean);
            s_warn(e, why.msg);
        }
    }
    return 0;
}

/* [sim]'s keys that change what happens to the workers (their speeds,
 * stragglers, pauses, failures, a device trace) only the simulator
 * follows: a real or threads run refuses them rather than run without
 * them (a real run with sim.trace once ran every device present, the key
 * kept in its config.ini). The keys that model a host's costs (compute,
 * latency, cores, ...) pass: a real run pays those for real. */
static int s_check_scenario_keys(experiment *e, error *err)
{
    const sim_spec *sim = &e->sim;
    bool uneven = false;
    for (int k = 0; k < sim->workers; k++) {
        uneven = uneven || sim->speed[k] != 1;
    }
    const char *key = sim->trace.n > 0             ? "trace"
                      : sim->straggler_fraction > 0 ? "straggler_fraction"
                      : uneven                      ? "speed"
                      : sim->npauses > 0            ? "pause"
                      : sim->nfailures > 0          ? "fail"
                                                    : NULL;
    if (!key) {
        return 0;
    }
    return config_fail(e->c, "sim", key, err, "only experiment.mode = sim follows it; this "
                       "run's mode is %s%s", s_modes[e->mode],
                       strcmp(key, "trace") == 0 ? " (real mode replays a trace with "
                                                   "[cluster] trace)" : "");
}

/* What experiment.mode = threads cannot do: it has no network to compress
 * for or to fault, no processes to pause or to checkpoint. */
static int s_check_threads(experiment *e, error *err)
{
    static const char *const network = "experiment.mode = threads has no network (use real "
                                       "or sim)";
    const char *fault = s_fault_key(e);
    if (e->compress.kind != COMPRESS_NONE) {
        return config_fail(e->c, "algorithm", "compress", err, "%s", network);
    }
    if (e->prefetch) {
        return config_fail(e->c, "algorithm", "prefetch", err, "%s: a pull is a copy, "
                           "nothing to overlap", network);
    }
    if (fault) {
        return config_fail(e->c, "cluster", fault, err, "%s", network);
    }
    if (e->replay.n > 0) {
        return config_fail(e->c, "cluster", "trace", err, "experiment.mode = threads does not "
                           "replay a trace (sim.trace simulates one)");
    }
    if (e->checkpoint_every > 0) {
        return config_fail(e->c, "checkpoint", "every", err, "experiment.mode = threads does "
                           "not checkpoint its shards");
    }
    return 0;
}

static int s_read_keys(experiment *e, const char *path, error *err)
{
    config *c = e->c;
    char default_name[256];
    long seed;
    s_default_name(default_name, sizeof default_name, path);
    if (config_get_string(c, "experiment", "name", default_name, &e->name, err) < 0 ||
        config_get_int(c, "experiment", "seed", 1, 0, 0x7fffffffL, &seed, err) < 0 ||
        config_get_enum(c, "experiment", "mode", "real", s_modes, &e->mode, err) < 0 ||
        run_configure(c, &e->out_root, &e->run_id, err) < 0) {
        return -1;
    }
    e->seed = (unsigned long)seed;
    if (e->name[0] == '\0' || strchr(e->name, '/') || strcmp(e->name, ".") == 0 ||
        strcmp(e->name, "..") == 0) {
        return config_fail(c, "experiment", "name", err, "\"%s\" must be a plain folder name",
                           e->name);
    }
    if (data_spec_configure(&e->data, c, err) < 0 ||
        config_get_enum(c, "data", "partition", "iid", s_partitions, &e->partition, err) < 0) {
        return -1;
    }
    if (e->partition == PARTITION_LABEL_SKEW && e->data.source == DATA_REGRESSION) {
        return config_fail(c, "data", "partition", err, "label-skew needs classes; "
                           "regression data has targets");
    }
    if (e->partition == PARTITION_LABEL_SKEW &&
        config_get_double(c, "data", "alpha", 0.5, 0, 1e6, CONFIG_OPEN_LO,
                          &e->partition_alpha, err) < 0) {
        return -1;
    }
    if (model_spec_configure(&e->model, c, err) < 0) {
        return -1;
    }
    if (config_get_string(c, "train", "algorithm", "sequential", &e->algorithm_name, err) < 0 ||
        config_get_double(c, "train", "epochs", 1, 0, 1e6, CONFIG_OPEN_LO, &e->epochs, err) < 0 ||
        config_get_int(c, "train", "batch", 64, 1, 1 << 20, &e->batch, err) < 0 ||
        optim_spec_configure(&e->optim, c, "train", "", "sgd", 0.05, err) < 0) {
        return -1;
    }
    if (s_read_rule(e, err) < 0 ||
        config_get_string(c, "experiment", "label", e->algorithm_name, &e->label, err) < 0) {
        return -1;
    }
    if (config_get_double(c, "eval", "every", 5, 0, 1e9, CONFIG_CLOSED, &e->eval_every, err) < 0 ||
        config_get_int(c, "eval", "batch", 1000, 1, 1 << 20, &e->eval_batch, err) < 0 ||
        config_get_int(c, "eval", "steps_every", 1, 1, 1L << 30, &e->steps_every, err) < 0) {
        return -1;
    }
    if (e->eval_every > 0 && e->eval_every < 1e-4) {   /* a simulated evaluation may take no time */
        return config_fail(c, "eval", "every", err, "%g s is below 0.1 ms, where a simulated run "
                           "would evaluate without end (0: at the start and end only)",
                           e->eval_every);
    }
    if (backend_spec_configure(&e->backend, c, err) < 0 ||
        sim_spec_configure(&e->sim, c, e->workers, e->servers, e->seed, err) < 0) {
        return -1;
    }
    if (e->model.type != MODEL_CNN || e->backend.device == BACKEND_CUDA) {
        config_forget_key(c, "backend", "conv");   /* the CPU's convolutions' */
    }
    if (e->mode != MODE_SIM) {
        if (s_check_scenario_keys(e, err) < 0) {
            return -1;
        }
        /* read to check it; a cost given there changes nothing in this run,
         * and a sweep over one made copies without a word */
        config_forget_section(c, "sim");
    }
    return e->mode == MODE_THREADS ? s_check_threads(e, err)
           : e->mode == MODE_SIM   ? s_check_sim(e, err) : 0;
}

/* The simulator and threads mode run a distributed rule's workers and
 * shards: refused here, before any run starts (a sweep checks every run). */
static int s_check_mode_rule(experiment *e, error *err)
{
    if (e->mode == MODE_REAL || e->alg) {
        return 0;
    }
    return config_fail(e->c, "experiment", "mode", err, "%s needs a distributed rule; the "
                       "sequential baseline is sync with one worker",
                       experiment_mode_name(e->mode));
}

/* An experiment's parts that s_read_keys allocates (not its config). */
static void s_free_parts(experiment *e)
{
    free(e->rule);
    e->rule = NULL;
    sim_spec_free(&e->sim);
    trace_free(&e->replay);
}

/* Every key asgd reads in some configuration: the keys of every variant
 * of every choice (rule, model, optimizer, data, partition, mode, time
 * model), each read on a config of its own (read one after another on one
 * config, a rule's default stayed for the next rule, which refused it, and
 * every variant after the first that failed read nothing: data.alpha was
 * not among them). Built once per process; NULL when out of memory. *count
 * and *failed (may be NULL) say how many variants were read and how many
 * of them stopped at an error. */
static const config *s_gather_known_keys(int *count, int *failed)
{
    static config *known;
    static int variants_read, variants_failed;
    if (!known) {
        error ignored;
        known = config_parse_string("", "(every key)", &ignored);
        char variants[80][200];
        int n = 0;
        for (const algorithm *const *a = algorithm_all(); *a && n < 40; a++) {
            snprintf(variants[n++], sizeof variants[0], "train.algorithm=%s", (*a)->name);
        }
        static const char *const generated = "data.train_size=100 data.test_size=10";
        const char *more[] = {"model.type=softmax", "model.type=mlp", "model.type=cnn",
            "train.algorithm=sequential", "train.optimizer=momentum", "train.optimizer=nesterov",
            "train.optimizer=adagrad", "train.optimizer=adam", "train.optimizer=sgd",
            "data.dataset=synthetic", "data.dataset=regression model.type=linear",
            "data.partition=label-skew train.algorithm=hogwild", "data.partition=iid",
            "experiment.mode=threads train.algorithm=hogwild",
            "experiment.mode=sim train.algorithm=hogwild sim.compute=constant",
            "experiment.mode=sim train.algorithm=hogwild sim.compute=normal",
            "experiment.mode=sim train.algorithm=hogwild sim.compute=lognormal",
            "experiment.mode=sim train.algorithm=hogwild sim.compute=exponential",
            "experiment.mode=sim train.algorithm=hogwild sim.compute=measured",
            "experiment.mode=sim train.algorithm=hogwild sim.compute=null",
            "experiment.mode=sim train.algorithm=hogwild sim.compute=empirical "
            "sim.compute_quantiles=1,2", NULL};
        for (int i = 0; more[i] && n < 80; i++) {
            snprintf(variants[n++], sizeof variants[0], "%s%s%s", more[i],
                     strstr(more[i], "data.dataset=") ? " " : "",
                     strstr(more[i], "data.dataset=") ? generated : "");
        }
        for (int i = 0; known && i < n; i++) {
            config *c = config_parse_string("", "(a variant)", &ignored);
            experiment probe = {.c = c};
            bool ok = c != NULL;
            char words[200], *save;
            snprintf(words, sizeof words, "%.199s", variants[i]);
            for (char *w = strtok_r(words, " ", &save); ok && w; w = strtok_r(NULL, " ", &save)) {
                ok = config_override(c, w, &ignored) == 0;
            }
            ok = ok && s_read_keys(&probe, NULL, &ignored) == 0;
            variants_failed += !ok;
            variants_read++;
            if (c && config_take_keys(known, c) < 0) {
                config_destroy(&known);
            }
            s_free_parts(&probe);
            config_destroy(&c);
        }
    }
    if (count) {
        *count = variants_read;
    }
    if (failed) {
        *failed = variants_failed;
    }
    return known;
}

static const config *s_known_keys(void)
{
    return s_gather_known_keys(NULL, NULL);
}

int experiment_known_variants(int *failed)
{
    int count;
    s_gather_known_keys(&count, failed);
    return count;
}

void experiment_value_text(const char *section, const char *key, const char *value, char *out,
                           size_t n)
{
    const config *known = s_known_keys();
    if (known) {
        config_value_as_read(known, section, key, value, out, n);
    } else {
        snprintf(out, n, "%s", value);
    }
}

bool experiment_knows_key(const char *section, const char *key)
{
    const config *known = s_known_keys();
    return known && config_value(known, section, key) != NULL;
}

/* The cluster's shape from outside the config, put into it, so that the
 * config a run folder keeps says what ran (the launcher's 5 ranks ran 3
 * workers while config.ini said 4); one that differs from a value the
 * config gives is said (one it leaves to the default is the launcher's
 * to choose). */
static int s_take_shape(experiment *e, const experiment_shape *shape, error *err)
{
    const char *keys[2] = {"workers", "servers"};
    const int given[2] = {shape->workers, shape->servers};
    for (int k = 0; k < 2; k++) {
        const char *text;
        if (given[k] <= 0) {
            continue;
        }
        if (config_get_string(e->c, "cluster", keys[k], "", &text, err) < 0) {
            return -1;
        }
        char arg[64];
        snprintf(arg, sizeof arg, "cluster.%s=%d", keys[k], given[k]);
        char *end;
        long said = strtol(text, &end, 10);
        if (text[0] && (*end != '\0' || said != given[k])) {   /* given, and not this */
            error why;
            config_fail(e->c, "cluster", keys[k], &why, "%s, but the launcher or the host "
                        "lists make %d: the run has %d, and its config.ini says so", text,
                        given[k], given[k]);
            s_warn(e, why.msg);
        }
        if (config_override(e->c, arg, err) < 0) {
            return -1;
        }
    }
    return 0;
}

int experiment_configure(experiment *e, const char *path, int noverrides,
                         char **overrides, const experiment_shape *shape, error *err)
{
    memset(e, 0, sizeof *e);
    e->c = config_load(path, err);
    if (!e->c) {
        return -1;
    }
    for (int i = 0; i < noverrides; i++) {
        if (config_override(e->c, overrides[i], err) < 0) {
            experiment_destroy(e);
            return -1;
        }
    }
    if ((shape && s_take_shape(e, shape, err) < 0) || s_read_keys(e, path, err) < 0 ||
        config_check_unused(e->c, s_known_keys(), s_warn, e, err) < 0 ||
        s_check_mode_rule(e, err) < 0) {
        experiment_destroy(e);
        return -1;
    }
    return 0;
}

/* why, an error of the model or the data, into err naming the config,
 * and where its message begins "[section] key: ", where that key was given
 * (file and line, or the command line). Returns -1. */
static int s_locate(experiment *e, const error *why, error *err)
{
    char section[32], key[64];
    int at = 0;
    if (sscanf(why->msg, "[%31[a-z_]] %63[a-z_]%n", section, key, &at) == 2 &&
        strncmp(why->msg + at, ": ", 2) == 0 && config_used(e->c, section, key)) {
        config_fail(e->c, section, key, err, "%s", why->msg + at + 2);
        err->status = why->status;
        return -1;
    }
    return error_set(err, why->status, "%s: %s", config_source(e->c), why->msg);
}

/* The model fits the data's shape (errors as s_locate's). */
/* whole_job: every process of the job runs on this host (asgd train's
 * launcher, the simulator, threads mode), not one role of it. */
static int s_check_model(experiment *e, bool whole_job, error *err)
{
    error why = {0};
    long image[3];
    if (e->model.type == MODEL_CNN && e->model.image_count == 0 && data_image(&e->data, image) &&
        (image[0] != image[1] || image[2] != 1)) {
        /* taken as a square one-channel image of as many pixels (56 x 14
         * as 28 x 28), it trained on rows cut and joined anew */
        return config_fail(e->c, "model", "type", err, "cnn: the data's images are %ld x %ld "
                           "x %ld, and a cnn takes a square one-channel image unless told: "
                           "give [model] image = %ld,%ld,%ld", image[0], image[1], image[2],
                           image[0], image[1], image[2]);
    }
    if (model_check(&e->model, e->dim, e->classes, &e->nparams, &why) < 0) {
        return s_locate(e, &why, err);
    }
    /* the fewest copies of the parameters the job holds (a model and its
     * gradient per worker, the centre) that do not fit this host: refused
     * here, not as "out of memory" once the run folder was made */
    double copies = e->alg && whole_job ? 2.0 * e->workers + 1 : 2;
    double bytes = (double)e->nparams * sizeof(float) * copies;
    double memory = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    if (memory > 0 && bytes > memory) {
        return config_fail(e->c, "model", e->model.hidden_count > 0 ? "hidden" : "type", err,
                           "%zu parameters: %.0f copies of them (%s) are %.3g GB, more than "
                           "this host's memory (%.3g GB)", e->nparams, copies,
                           copies > 2 ? "a model and a gradient per worker, and the centre"
                                      : "a model and its gradient",
                           bytes / 1e9, memory / 1e9);
    }
    /* error feedback's analysis asks that compression lose less than its
     * input (compress.h): qsgd on a part of n values may lose up to
     * sqrt(n) / (2^B - 1) times its norm */
    const compress_spec *cs = &e->compress;
    if (e->alg && cs->kind == COMPRESS_QSGD && cs->error_feedback) {
        double part = ceil((double)e->nparams / (double)(e->servers > 0 ? e->servers : 1));
        double loses = sqrt(part) / (double)((1L << cs->bits) - 1);
        if (loses >= 1) {
            config_fail(e->c, "algorithm", "error_feedback", &why, "qsgd:%d over a shard's %.0f "
                        "parameters may lose up to %.3g times a push's norm, so the residual "
                        "error feedback keeps can grow without bound (its analysis asks under "
                        "1: more bits, or no error feedback)", cs->bits, part, loses);
            s_warn(e, why.msg);
        }
    }
    return 0;
}

/* train.epochs against the workers: a lockstep rule whose minibatches
 * are under half a round still ran one (every worker takes part in every
 * round: 4,096 sync workers given 1 epoch trained 4.4), so that is
 * refused; an asynchronous rule with fewer minibatches than workers
 * leaves some idle, which is said. */
static int s_check_work(experiment *e, error *err)
{
    if (!e->alg) {
        return 0;
    }
    long total = experiment_total_steps(e, e->n_train);
    double round = (double)e->workers * (double)e->batch / (double)e->n_train;
    if (e->rule_info.lockstep && e->workers > 1 && experiment_share(e, e->n_train) < 0.5) {
        return config_fail(e->c, "train", "epochs", err, "%.4g minibatches in all, under half "
                           "a round of %d workers (%s takes every worker in every round: one "
                           "round is %.4g epochs)", experiment_share(e, e->n_train) * e->workers,
                           e->workers, e->algorithm_name, round);
    }
    if (!e->rule_info.lockstep && total < e->workers) {
        error why;
        config_fail(e->c, "train", "epochs", &why, "%ld minibatches in all: %ld of the %d "
                    "workers take none (%.4g epochs give each one)", total,
                    e->workers - total, e->workers, round);
        s_warn(e, why.msg);
    }
    return 0;
}

/* What the data must hold: a train_size or test_size the files do not
 * reach is not cut down to theirs without a word (the run's config.ini
 * would say it: test_size = 25000 measured accuracy over 10,000; data.c
 * refuses it as the files are read, this as the sets come from a cache
 * made before), and a minibatch is at most the training set. */
static int s_check_sizes(experiment *e, error *err)
{
    bool files = e->data.source != DATA_SYNTHETIC && e->data.source != DATA_REGRESSION;
    if (files && e->data.train_size > e->n_train) {
        return config_fail(e->c, "data", "train_size", err, "%ld, but the training set holds "
                           "%ld examples", e->data.train_size, e->n_train);
    }
    if (files && e->test.n > 0 && e->data.test_size > e->test.n) {
        return config_fail(e->c, "data", "test_size", err, "%ld, but the test set holds "
                           "%d examples", e->data.test_size, e->test.n);
    }
    if (e->batch > e->n_train) {
        return config_fail(e->c, "train", "batch", err, "%ld is more than the %ld training "
                           "examples", e->batch, e->n_train);
    }
    return 0;
}

/* A worker whose share of the training set is under a minibatch: its
 * minibatches repeat its few examples, which epochs does not show. */
static void s_warn_small_share(experiment *e, long least)
{
    if (least < e->batch) {
        error why;
        config_fail(e->c, "train", "batch", &why, "%ld, but a worker's share of the training "
                    "set is %ld example%s: its minibatches repeat them", e->batch, least,
                    least == 1 ? "" : "s");
        s_warn(e, why.msg);
    }
}

/* A label-skew split that would leave a worker without examples, refused
 * before the run folder is made (it failed every worker after the launch,
 * or the simulator after its folder was written). */
static int s_check_partition(experiment *e, const dataset *train, error *err)
{
    if (!e->alg || e->partition != PARTITION_LABEL_SKEW) {
        return 0;
    }
    shard *parts = calloc((size_t)e->workers, sizeof *parts);
    if (!parts) {
        return error_set(err, ERROR_RUNTIME, "partition: out of memory");
    }
    error why = {0};
    int rc = partition_make(parts, e->workers, train, e->partition, e->partition_alpha,
                            e->seed, &why);
    size_t least = SIZE_MAX;
    for (int k = 0; rc == 0 && k < e->workers; k++) {
        least = parts[k].n < least ? parts[k].n : least;
    }
    partition_free(parts, e->workers);
    free(parts);
    if (rc == 0) {
        s_warn_small_share(e, (long)least);
    }
    if (rc < 0 && why.status == ERROR_USAGE) {
        const char *said = why.msg;
        if (strncmp(said, "partition: ", 11) == 0) {
            said += 11;
        }
        return config_fail(e->c, "data", "alpha", err, "%g with %d workers: %s",
                           e->partition_alpha, e->workers, said);
    }
    if (rc < 0) {
        *err = why;
    }
    return rc;
}

/* A data error into err: one that names a key ("[data] train_size: ...")
 * where that key was given, any other (a file's) as it is. Returns -1. */
static int s_data_error(experiment *e, const error *why, error *err)
{
    if (why->msg[0] == '[') {
        return s_locate(e, why, err);
    }
    *err = *why;
    return -1;
}

/* A profile measured for another model (its kind or its size), minibatch,
 * rule, device, number of shards (apply and answer are one shard's part)
 * or transport gives this simulated run that one's step, apply and
 * message times: said, not refused (a [sim] key the experiment gives,
 * compute_mean say, still wins). What an older profile does not record is
 * not compared. */
static void s_warn_profile(experiment *e)
{
    const sim_spec *s = &e->sim;
    char device[128];
    backend_resolve(&e->backend, device, sizeof device);
    device[strcspn(device, " ")] = '\0';
    const char *model = model_type_name(e->model.type);
    const char *transport = e->transport == TRANSPORT_TCP ? "tcp" : "ipc";
    char compress[32];
    compress_spec_name(&e->compress, compress, sizeof compress);
    const char *shm = experiment_shares_segments(e) ? "on" : "off";
    bool differs = (s->profile_model[0] && strcmp(s->profile_model, model) != 0) ||
                   (s->profile_params && s->profile_params != (long)e->nparams) ||
                   (s->profile_batch && s->profile_batch != e->batch) ||
                   (s->profile_algorithm[0] && strcmp(s->profile_algorithm, e->algorithm_name)) ||
                   (s->profile_device[0] && strcmp(s->profile_device, device) != 0) ||
                   (s->profile_servers && s->profile_servers != e->servers) ||
                   (s->profile_transport[0] && strcmp(s->profile_transport, transport) != 0) ||
                   (s->profile_compress[0] && strcmp(s->profile_compress, compress) != 0) ||
                   (s->profile_shm[0] && strcmp(s->profile_shm, shm) != 0);
    if (e->mode != MODE_SIM || !differs) {
        return;
    }
    error why;
    config_fail(e->c, "sim", "profile", &why, "measured for model %s (%ld parameters), batch "
                "%ld, rule %s, on %s, %ld shards over %s, compression %s, shared segments %s "
                "(%s), not for this run's %s (%zu parameters), batch %ld, rule %s, on %s, %d "
                "shards over %s, compression %s, shared segments %s: its compute, apply, "
                "compression and message times are that experiment's",
                s->profile_model[0] ? s->profile_model : "?", s->profile_params,
                s->profile_batch, s->profile_algorithm[0] ? s->profile_algorithm : "?",
                s->profile_device[0] ? s->profile_device : "?", s->profile_servers,
                s->profile_transport[0] ? s->profile_transport : "?",
                s->profile_compress[0] ? s->profile_compress : "?",
                s->profile_shm[0] ? s->profile_shm : "?", s->profile_host, model, e->nparams,
                e->batch, e->algorithm_name, device, e->servers, transport, compress, shm);
    s_warn(e, why.msg);
}

int experiment_load(experiment *e, error *err)
{
    double began = run_now();
    error why = {0};
    if (datacache_load(&e->train, &e->test, &e->data, e->seed, &why) < 0) {
        return s_data_error(e, &why, err);
    }
    e->load_s = run_now() - began;
    e->n_train = e->train.n;
    e->dim = e->train.dim;
    e->classes = e->train.classes;
    if (s_check_sizes(e, err) < 0 || s_check_model(e, e->mode != MODE_REAL, err) < 0) {
        return -1;
    }
    s_warn_profile(e);
    return 0;
}

char *experiment_settings(const experiment *e)
{
    const char *only[] = {"data", "model", "train", "algorithm", "experiment.seed", NULL};
    /* where a host keeps its data, and how many threads a shard applies
     * pushes with: the same job on other hosts */
    const char *per_process[] = {"data.path", "data.cache", "algorithm.server_threads", NULL};
    return config_settings(e->c, only, per_process);
}

uint32_t experiment_job(const experiment *e)
{
    char *text = experiment_settings(e);
    uint32_t h = 2166136261u;   /* FNV-1a */
    for (const char *p = text ? text : ""; *p; p++) {
        h = (h ^ (uint8_t)*p) * 16777619u;
    }
    free(text);
    return h ? h : 1;
}

bool experiment_shares_segments(const experiment *e)
{
    return e->shm && e->compress.kind == COMPRESS_NONE && !faults_on(&e->faults);
}

int experiment_check(experiment *e, error *err)
{
    struct stat st;
    if (e->auth == AUTH_CURVE && e->keys[0] && (stat(e->keys, &st) != 0 || !S_ISDIR(st.st_mode))) {
        /* the launcher's processes read them here: refused before the launch,
         * not by every process after it */
        return config_fail(e->c, "cluster", "keys", err, "%s: not a folder of keys (asgd keys "
                           "DIR makes one)", e->keys);
    }
    error why = {0};
    if (data_check(&e->data, &e->n_train, &e->dim, &e->classes, &why) < 0) {
        return s_data_error(e, &why, err);
    }
    return s_check_sizes(e, err) < 0 ? -1 : s_check_model(e, true, err);
}

backend_spec experiment_backend_spec(const experiment *e, int ordinal)
{
    backend_spec spec = e->backend;
    spec.ordinal = ordinal;
    if (e->mode == MODE_THREADS && spec.threads == 0) {
        spec.threads = 1;
    }
    return spec;
}

/* Steps on the CPU through OpenBLAS kernels older than the CPU's
 * instructions (an H200 host's new Xeon took Prescott's): said, with the
 * OPENBLAS_CORETYPE that fits. A run on a GPU computes no step through it. */
static void s_warn_blas(experiment *e)
{
    char device[128], why[400];
    backend_resolve(&e->backend, device, sizeof device);
    if (strncmp(device, "cpu", 3) == 0 && backend_blas_lags_cpu(why, sizeof why)) {
        s_warn(e, why);
    }
}

int experiment_check_training(experiment *e, error *err)
{
    if (s_check_work(e, err) < 0) {
        return -1;
    }
    s_warn_blas(e);
    if (!e->alg || e->partition != PARTITION_LABEL_SKEW) {
        if (e->alg && e->workers > 1) {   /* an iid share: n / workers, or one more */
            s_warn_small_share(e, e->n_train >= e->workers ? e->n_train / e->workers : 1);
        }
        return 0;
    }
    if (e->train.n > 0) {
        return s_check_partition(e, &e->train, err);
    }
    /* a real run's launcher holds no data: the split needs the labels,
     * loaded here, once, and let go */
    dataset train = {0}, test = {0};
    error why = {0};
    int rc = datacache_load(&train, &test, &e->data, e->seed, &why) < 0
                 ? s_data_error(e, &why, err)
                 : s_check_partition(e, &train, err);
    dataset_free(&train);
    dataset_free(&test);
    return rc;
}

/* One input file's checksum into the JSON object ctx (regular files: a
 * folder such as data.path stands for the data files added beside). */
static void s_add_input(void *ctx, const char *section, const char *key, const char *path)
{
    (void)section;
    (void)key;
    struct stat st;
    char sum[64];
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
        !cJSON_GetObjectItemCaseSensitive(ctx, path)) {
        cJSON_AddStringToObject(ctx, path, provenance_file_sum(path, sum, sizeof sum));
    }
}

/* The files the run reads (the data's, a trace's, a profile's) and their
 * checksums, into sum->inputs: a file changed since the run shows. */
static void s_inputs(const experiment *e, run_summary *sum)
{
    cJSON *inputs = cJSON_CreateObject();
    char files[4][4096];
    error ignored;
    bool generated = e->data.source == DATA_SYNTHETIC || e->data.source == DATA_REGRESSION;
    if (!generated && data_files(files, &e->data, &ignored) == 0) {
        for (int i = 0; i < 4; i++) {
            s_add_input(inputs, "data", "path", files[i]);
        }
    }
    config_each_path(e->c, s_add_input, inputs);
    char *text = cJSON_PrintUnformatted(inputs);
    snprintf(sum->inputs, sizeof sum->inputs, "%s",
             text && strlen(text) < sizeof sum->inputs ? text : "");
    free(text);
    cJSON_Delete(inputs);
}

void experiment_summary(const experiment *e, run_summary *sum)
{
    summary_init(sum);
    sum->algorithm = e->algorithm_name;
    sum->label = e->label;
    sum->model = model_type_name(e->model.type);
    sum->mode = experiment_mode_name(e->mode);
    sum->dataset = data_source_name(e->data.source);
    sum->data_path = e->data.source == DATA_SYNTHETIC ? "" : e->data.path;
    sum->workers = e->workers;
    sum->servers = e->alg ? e->servers : 0;
    sum->params = (long)e->nparams;
    sum->seed = e->seed;
    sum->epochs_target = e->epochs;
    sum->blas_threads = backend_blas_threads(&e->backend);
    s_inputs(e, sum);
    compress_spec_name(&e->compress, sum->compress, sizeof sum->compress);
    if (e->compress.error_feedback && e->compress.kind != COMPRESS_NONE) {
        strncat(sum->compress, "+ef", sizeof sum->compress - strlen(sum->compress) - 1);
    }
}

long experiment_total_steps(const experiment *e, long n_train)
{
    return (long)ceil(e->epochs * (double)n_train / (double)e->batch);
}

double experiment_share(const experiment *e, long n_train)
{
    return e->epochs * (double)n_train / (double)e->batch / (double)e->workers;
}

worker_spec experiment_worker_spec(const experiment *e, long n_train)
{
    return (worker_spec){
        .alg = e->alg, .params = e->rule, .local = &e->rule_info.local_optim,
        .workers = e->workers, .shards = e->servers, .batch = (int)e->batch,
        .total_steps = experiment_total_steps(e, n_train),
        .share = experiment_share(e, n_train),
        .steps_every = e->steps_every,
        .seed = e->seed, .round_leader = e->rule_info.round_leader,
        .lockstep = e->rule_info.lockstep, .prefetch = e->prefetch,
    };
}

void experiment_destroy(experiment *e)
{
    s_free_parts(e);
    dataset_free(&e->train);
    dataset_free(&e->test);
    config_destroy(&e->c);
}
