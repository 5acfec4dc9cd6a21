/* main.c: the asgd command line; dispatches subcommands to the library. */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cJSON.h>

#include "algorithms/algorithm.h"
#include "core/checkpoint.h"
#include "core/error.h"
#include "core/provenance.h"
#include "core/reeval.h"
#include "core/experiment.h"
#include "core/real/calibrate.h"
#include "core/real/k8s.h"
#include "core/real/launcher.h"
#include "plots/plot.h"
#include "plots/report.h"
#include "core/real/roles.h"
#include "core/run.h"
#include "core/suggest.h"
#include "core/sequential.h"
#include "core/stop.h"
#include "core/sim/sim.h"
#include "core/threads/threads.h"
#include "sweep/sweep.h"
#include "transport/auth.h"

static const char s_usage[] =
    "usage: asgd COMMAND [ARGS]\n"
    "\n"
    "commands:\n"
    "  train CONFIG [section.key=value ...]   run an experiment; prints its run folder\n"
    "  train --resume RUN_DIR                 go on with an interrupted distributed run from\n"
    "                                         its shards' checkpoints, to the same budget\n"
    "  sweep SWEEP [-j N]                     a grid of runs from a sweep file; resumable\n"
    "  eval RUN_DIR [section.key=value ...]   a run's saved model (model.npy) on its test set\n"
    "  plot DIR... -o FIG.pdf|png|svg [--kind convergence|scaling|staleness|time-to-accuracy|\n"
    "       throughput] [--group KEY] [--x X] [--y Y] [--logx] [--logy] [--title T]\n"
    "       [--target ACC (0.8)] [--size column|page|slide] [--xrange LO:HI]\n"
    "       [--yrange LO:HI]\n"
    "                                         figures from run folders, through gnuplot\n"
    "  report DIR... [-o OUT] [--target ACC]  a Markdown and HTML page for runs or a sweep:\n"
    "                                         summaries, what differs, figures, provenance\n"
    "  ps|worker|evaluator CONFIG [flags] [section.key=value ...]\n"
    "                                         one role of a distributed job, for runs\n"
    "                                         across hosts (see `asgd help ps`)\n"
    "  role CONFIG [flags] [section.key=value ...]\n"
    "                                         the role the launcher's environment gives:\n"
    "                                         TF_CONFIG, torchrun, mpirun or srun\n"
    "  k8s CONFIG --image IMAGE [--kind tfjob|pytorchjob] [section.key=value ...]\n"
    "                                         a Kubeflow manifest for the job: its config\n"
    "                                         (and CURVE keys) and one asgd role per pod\n"
    "  calibrate CONFIG [-o PROFILE] [section.key=value ...]\n"
    "                                         this host's costs for the experiment (compute,\n"
    "                                         messages, apply, start-up) as a profile that\n"
    "                                         [sim] profile reads\n"
    "  keys DIR [--workers N]                 CURVE key pairs for cluster.auth = curve: server,\n"
    "                                         evaluator, worker-0 .. worker-N-1 (N: 8)\n"
    "  --version                              asgd's version and the commit it was built from\n"
    "  help [algorithms [--names] | config [CONFIG] [key=value ...] | ps | role]\n"
    "                                         this text; the update rules and their\n"
    "                                         keys (--names: one name a line); every\n"
    "                                         config key with its resolved value; the\n"
    "                                         role flags\n"
    "\n"
    "exit status: 0 success, 1 runtime failure, 2 usage or config error; a role (ps,\n"
    "worker, evaluator, role) stopped by signal N before its work was done: 128 + N;\n"
    "one whose shard never answered, or whose place another process held, within\n"
    "[cluster] timeout: 138 (retryable, as Kubeflow's ExitCode policy takes it)\n";

static const char s_role_usage[] =
    "usage: asgd ps|worker|evaluator CONFIG [flags] [section.key=value ...]\n"
    "\n"
    "  --ps_hosts=H:P,...      the shards, in order (or ipc:// / tcp:// endpoints)\n"
    "  --worker_hosts=H:P,...  the workers (only counted: workers bind nothing);\n"
    "                          every process, the same list\n"
    "  --job_name=ROLE         must match the subcommand, if given\n"
    "  --task_index=K          which shard or worker this process is (every shard\n"
    "                          and worker)\n"
    "  --evaluator=0|1         whether the shards wait for an evaluator (default 1)\n"
    "  --run_dir=DIR           where metrics go (default OUT/NAME/RUN_ID or .../cluster)\n"
    "  --report_fd=N           evaluator: also report each evaluation on file\n"
    "                          descriptor N (asgd train's launcher reads it)\n"
    "  --keys=DIR              the CURVE keys (asgd keys DIR) when [cluster] auth = curve;\n"
    "                          replaces [cluster] keys\n"
    "  --restore               ps: start from RUN_DIR/checkpoints/ps-K.ckpt if there is one\n"
    "                          (after a failure: the time it was down counts)\n"
    "  --resume                ps: the same, going on with an interrupted run (the time\n"
    "                          between does not count)\n"
    "\n"
    "TF_CONFIG, when set, places the process (host flags beside it are refused):\n"
    "{\"cluster\": {\"ps\": [...],\n"
    "\"worker\": [...], \"chief\": [...]}, \"task\": {\"type\": \"worker\", \"index\": 1}}.\n"
    "The host lists set [cluster] servers and workers.\n"
    "\n"
    "asgd role CONFIG takes its role from TF_CONFIG's task (chief, master and\n"
    "evaluator run the evaluator), or else from its launcher's rank: RANK and\n"
    "WORLD_SIZE (torchrun, PyTorchJob), OMPI_COMM_WORLD_RANK and _SIZE (Open MPI's\n"
    "mpirun), PMI_RANK and PMI_SIZE (MPICH's or Intel MPI's mpiexec), SLURM_PROCID\n"
    "and SLURM_NTASKS (srun); the innermost launcher first. With S = [cluster]\n"
    "servers, ranks 0..S-1 are the shards, on the first node, at MASTER_ADDR\n"
    "(Slurm: the node list's first; IPv6 as it is) and ports\n"
    "MASTER_PORT+1..MASTER_PORT+S (MASTER_PORT: 29500 if unset); rank S is the\n"
    "evaluator; the rest are workers. It prints where it stands.\n";

static int s_fail(const error *err)
{
    /* a message that names its command already ("asgd plot: ...") once */
    fprintf(stderr, "%s%s\n", strncmp(err->msg, "asgd ", 5) == 0 ? "" : "asgd: ", err->msg);
    return err->status ? err->status : ERROR_RUNTIME;
}

/* Whether the run in dir, configured into e, can go on: not complete,
 * every shard's checkpoint there and whole, this host able to run it. */
static int s_resumable(const char *dir, experiment *e, error *err)
{
    char path[4700];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    cJSON *sum = run_read_json(path);
    bool complete = sum && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(sum, "complete"));
    cJSON_Delete(sum);
    if (complete) {
        return error_set(err, ERROR_USAGE, "%s: the run is complete; nothing to resume", dir);
    }
    /* data or a trace changed since: its sessions would be of two inputs,
     * under one summary that names the new ones alone */
    char changed[4096], then[64], now[64];
    if (provenance_input_changed(dir, NULL, changed, sizeof changed, then, now, sizeof now)) {
        return error_set(err, ERROR_USAGE, "%s: %.1000s changed since the run began (%s then, "
                         "%s now): its sessions would train on two inputs; put it back, or "
                         "run it again with asgd train", dir, changed, then, now);
    }
    /* without every shard's checkpoint a resume would start that shard's
     * part of the model over, and count the run as one */
    for (int k = 0; k < e->servers; k++) {
        checkpoint_path(path, sizeof path, dir, k);
        shard_stats st;
        error why;
        if (access(path, R_OK) == 0 && checkpoint_stats(path, &st, &why) < 0) {
            /* refused before the launch: a failed session rewrote the
             * summary (startup_s below 0, a resume that never was) */
            return error_set(err, ERROR_USAGE, "%s: shard %d's checkpoint is damaged (%s); run "
                             "it again with asgd train", dir, k, why.msg);
        }
        if (access(path, R_OK) != 0) {
            return error_set(err, ERROR_USAGE, "%s: shard %d left no checkpoint (%s) to resume "
                             "from: %s; run it again with asgd train", dir, k, path,
                             e->checkpoint_every > 0
                                 ? "it stopped before it wrote one"
                                 : "with [checkpoint] every = 0 a shard writes one only when "
                                   "it is stopped (Ctrl-C, SIGTERM), not when it is killed");
        }
    }
    return backend_check(&e->backend, e->c, err) < 0 || experiment_check(e, err) < 0 ||
           launcher_check(e, err) < 0 ? -1 : 0;
}

/* `asgd train --resume RUN_DIR`: the run's own config, and its folder
 * reopened; only an interrupted real distributed run can go on. */
static int s_resume(const char *dir, experiment *e, run *r, error *err)
{
    char path[4700];
    snprintf(path, sizeof path, "%s/config.ini", dir);
    if (experiment_configure(e, path, 0, NULL, NULL, err) < 0) {
        return -1;
    }
    if (!e->alg || e->mode != MODE_REAL) {
        return error_set(err, ERROR_USAGE, "%s: only a distributed run in real mode keeps "
                         "checkpoints to resume from", dir);
    }
    /* first: a run under way is refused as such, not for its ports taken
     * or its checkpoints half written */
    if (run_reopen(r, dir, err) < 0) {
        return -1;
    }
    if (s_resumable(dir, e, err) < 0) {
        run_close(r);
        return -1;
    }
    return 0;
}

static int s_train(int argc, char **argv)
{
    if (argc < 1) {
        fprintf(stderr, "asgd train: missing CONFIG\n%s", s_usage);
        return ERROR_USAGE;
    }
    error err = {0};
    experiment e = {0};
    run r;
    int rc = -1;
    if (strcmp(argv[0], "--resume") == 0) {
        if (argc != 2) {
            fprintf(stderr, "usage: asgd train --resume RUN_DIR (the run's own config, no "
                    "overrides)\n");
            return ERROR_USAGE;
        }
        if (s_resume(argv[1], &e, &r, &err) == 0) {
            fputs(e.warnings, stderr);
            rc = launcher_train(&e, &r, true, &err);
            run_close(&r);
        }
    } else if (experiment_configure(&e, argv[0], argc - 1, argv + 1, NULL, &err) == 0) {
        fputs(e.warnings, stderr);
        size_t said = strlen(e.warnings);
        /* a real distributed run's processes load the data themselves */
        bool processes = e.alg && e.mode == MODE_REAL;
        bool ready = backend_check(&e.backend, e.c, &err) == 0 &&
                     (processes ? experiment_check(&e, &err) == 0 &&
                                      launcher_check(&e, &err) == 0
                                : experiment_load(&e, &err) == 0) &&
                     experiment_check_training(&e, &err) == 0;
        fputs(e.warnings + said, stderr);   /* what the data or the model added */
        if (ready && run_create(&r, e.c, e.out_root, e.name, e.run_id, &err) == 0) {
            rc = e.mode == MODE_SIM       ? sim_train(&e, &r, &err)
                 : e.mode == MODE_THREADS ? threads_train(&e, &r, &err)
                 : e.alg ? launcher_train(&e, &r, false, &err) : sequential_train(&e, &r, &err);
            run_close(&r);
        }
    }
    experiment_destroy(&e);
    if (rc < 0) {
        return s_fail(&err);
    }
    printf("%s\n", r.dir);
    return 0;
}

/* `asgd help config [CONFIG] [section.key=value ...]`: the resolved config,
 * defaults included, as `asgd train` with those overrides would write it
 * (a script can tell whether a kept run is of the config it would run). */
static int s_help_config(int argc, char **argv)
{
    const char *path = argc > 0 && !config_looks_like_override(argv[0]) ? argv[0] : NULL;
    int first = path ? 1 : 0;
    error err = {0};
    experiment e;
    if (experiment_configure(&e, path, argc - first, argv + first, NULL, &err) < 0) {
        return s_fail(&err);
    }
    fputs(e.warnings, stderr);
    /* to stdout as it is: reopening /dev/stdout truncated a file that
     * `>>` appended to */
    config_print(e.c, stdout);
    int rc = fflush(stdout) != 0 || ferror(stdout)
                 ? error_set(&err, ERROR_RUNTIME, "help config: cannot write the config") : 0;
    experiment_destroy(&e);
    return rc < 0 ? s_fail(&err) : 0;
}

static void s_help_algorithms(bool names_only)
{
    if (names_only) {   /* for scripts: every distributed rule, in registry order */
        for (const algorithm *const *a = algorithm_all(); *a; a++) {
            printf("%s\n", (*a)->name);
        }
        return;
    }
    printf("train.algorithm: the update rule; its keys go in [algorithm]\n\n");
    printf("  %-13s %s\n  %-13s keys: none (uses [train] optimizer, lr, batch)\n",
           "sequential", "the baseline: one process, local optimizer", "");
    for (const algorithm *const *a = algorithm_all(); *a; a++) {
        printf("  %-13s %s\n  %-13s keys: %s\n", (*a)->name, (*a)->summary, "",
               (*a)->keys[0] ? (*a)->keys : "none");
    }
    printf("\nDistributed rules also read [cluster]: workers (4), servers (1), transport "
           "(ipc|tcp),\nhost (127.0.0.1), port (0: any free), restart (never|on-failure|"
           "exit-code),\nbackoff_limit (3), timeout (60 s), resend (1 s), auth (none|curve), "
           "keys (a folder\nfrom asgd keys), shm (auto: shared segments with the shards of this "
           "host; off);\nin real mode, faults its transport injects: latency, jitter (s), drop, "
           "duplicate\n(fractions), and trace (a device trace replayed).\n");
    printf("Any rule's pushes may be compressed, in [algorithm]: compress (none|fp16|bf16|"
           "topk:F|\nrandomk:F|sign|qsgd:B), error_feedback (off).\n");
    printf("prefetch (off): the next pull goes out before the gradient, so that it overlaps\n"
           "compute (each rule's file says what it changes; often one more push of "
           "staleness), in:\n ");
    for (const algorithm *const *a = algorithm_all(); *a; a++) {
        if ((*a)->prefetch) {
            printf(" %s", (*a)->name);
        }
    }
    printf("\n");
}

/* `asgd keys DIR [--workers N]`. */
static int s_keys(int argc, char **argv)
{
    long workers = 8;
    const char *dir = NULL;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--workers") == 0 && i + 1 < argc) {
            char *end;
            workers = strtol(argv[++i], &end, 10);
            if (*end || workers < 1 || workers > 4096) {
                fprintf(stderr, "asgd keys: --workers needs a number from 1 to 4096\n");
                return ERROR_USAGE;
            }
        } else if (!dir && argv[i][0] != '-') {
            dir = argv[i];
        } else {
            fprintf(stderr, "usage: asgd keys DIR [--workers N]\n");
            return ERROR_USAGE;
        }
    }
    if (!dir) {
        fprintf(stderr, "usage: asgd keys DIR [--workers N]\n");
        return ERROR_USAGE;
    }
    error err = {0};
    if (auth_make_keys(dir, (int)workers, &err) < 0) {
        return s_fail(&err);
    }
    printf("%s: server, evaluator and worker-0 .. worker-%ld (NAME.key public, "
           "NAME.key_secret private)\n", dir, workers - 1);
    return 0;
}

static int s_sweep(int argc, char **argv)
{
    long jobs = 1;
    const char *path = NULL;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "-j") == 0) {
            char *end = "";
            jobs = i + 1 < argc ? strtol(argv[++i], &end, 10) : 0;   /* "did you mean -j" */
            if (*end || jobs < 1) {
                fprintf(stderr, "asgd sweep: -j needs a positive number\n");
                return ERROR_USAGE;
            }
        } else if (argv[i][0] == '-' && argv[i][1]) {
            static const char *const known[] = {"-j", NULL};
            const char *near = suggest_nearest(argv[i], known);
            fprintf(stderr, "asgd sweep: unknown option %s%s%s (usage: asgd sweep SWEEP "
                    "[-j N])\n", argv[i], near ? "; did you mean " : "", near ? near : "");
            return ERROR_USAGE;
        } else if (!path) {
            path = argv[i];
        } else {
            fprintf(stderr, "asgd sweep: unexpected \"%s\"\n%s", argv[i], s_usage);
            return ERROR_USAGE;
        }
    }
    if (!path) {
        fprintf(stderr, "asgd sweep: missing SWEEP\n%s", s_usage);
        return ERROR_USAGE;
    }
    error err = {0};
    return sweep_main(path, jobs, &err) < 0 ? s_fail(&err) : 0;
}

/* The command argv[1] names, run. */
static int s_dispatch(int argc, char **argv)
{
    if (argc < 2) {
        fputs(s_usage, stderr);
        return ERROR_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        printf("%s\n", provenance_version_line());
        return 0;
    }
    if (strcmp(cmd, "train") == 0) {
        return s_train(argc - 2, argv + 2);
    }
    if (strcmp(cmd, "sweep") == 0) {
        return s_sweep(argc - 2, argv + 2);
    }
    if (strcmp(cmd, "eval") == 0) {
        error err = {0};
        if (argc < 3 || argv[2][0] == '-') {
            fprintf(stderr, "usage: asgd eval RUN_DIR [section.key=value ...]\n");
            return ERROR_USAGE;
        }
        return reeval_main(argv[2], argc - 3, argv + 3, &err) < 0 ? s_fail(&err) : 0;
    }
    if (strcmp(cmd, "keys") == 0) {
        return s_keys(argc - 2, argv + 2);
    }
    if (strcmp(cmd, "calibrate") == 0) {
        return calibrate_main(argc - 2, argv + 2);
    }
    if (strcmp(cmd, "plot") == 0) {
        error err = {0};
        stop_install();   /* Ctrl-C removes the temporary files it has written */
        return plot_main(argc - 2, argv + 2, &err) < 0 ? s_fail(&err) : 0;
    }
    if (strcmp(cmd, "report") == 0) {
        error err = {0};
        stop_install();
        return report_main(argc - 2, argv + 2, &err) < 0 ? s_fail(&err) : 0;
    }
    static const char *const roles[] = {"ps", "worker", "evaluator"};
    for (int r = 0; r < 3; r++) {
        if (strcmp(cmd, roles[r]) == 0) {
            return role_main(r, argc - 2, argv + 2);
        }
    }
    if (strcmp(cmd, "role") == 0) {
        return role_main(ROLE_ANY, argc - 2, argv + 2);
    }
    if (strcmp(cmd, "k8s") == 0) {
        return k8s_main(argc - 2, argv + 2);
    }
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        const char *topic = argc >= 3 ? argv[2] : "";
        if (strcmp(topic, "config") == 0) {
            return s_help_config(argc - 3, argv + 3);
        }
        if (strcmp(topic, "algorithms") == 0) {
            s_help_algorithms(argc >= 4 && strcmp(argv[3], "--names") == 0);
        } else if (strcmp(topic, "ps") == 0 || strcmp(topic, "worker") == 0 ||
                   strcmp(topic, "evaluator") == 0 || strcmp(topic, "role") == 0) {
            fputs(s_role_usage, stdout);
        } else if (!topic[0]) {
            fputs(s_usage, stdout);
        } else {   /* a topic that is not one: said, not the general help and 0 */
            static const char *const topics[] = {"algorithms", "config", "ps", "worker",
                                                 "evaluator", "role", NULL};
            const char *near = suggest_nearest(topic, topics);
            fprintf(stderr, "asgd: help: no topic \"%s\"%s%s%s (topics: algorithms, config, "
                    "ps, role)\n", topic, near ? "; did you mean \"" : "", near ? near : "",
                    near ? "\"?" : "");
            return ERROR_USAGE;
        }
        return 0;
    }
    static const char *const commands[] = {"train", "sweep", "eval", "plot", "report", "ps",
                                           "worker",
                                           "evaluator", "role", "k8s", "keys", "calibrate",
                                           "help",
                                           "--version", NULL};
    const char *near = suggest_nearest(cmd, commands);
    if (near) {   /* a typo: the one line that helps, not the whole usage */
        fprintf(stderr, "asgd: unknown command \"%s\"; did you mean \"%s\"? (asgd help)\n",
                cmd, near);
    } else {
        fprintf(stderr, "asgd: unknown command \"%s\"\n%s", cmd, s_usage);
    }
    return ERROR_USAGE;
}

int main(int argc, char **argv)
{
    provenance_set_command(argc, argv);
    /* a file past `ulimit -f` fails its write (EFBIG), which each writer
     * reports as it does a full disk: the signal killed the process without
     * a word, a CSV cut mid-row and temporary files left behind */
    signal(SIGXFSZ, SIG_IGN);
    int rc = s_dispatch(argc, argv);
    /* what a command printed reached its reader: `asgd eval RUN > FILE` on
     * a full disk lost its result and said 0 */
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "asgd: cannot write its output: %s\n", strerror(errno));
        return rc ? rc : ERROR_RUNTIME;
    }
    return rc;
}
