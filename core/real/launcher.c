/* launcher.c: starting, supervising and cleaning up a distributed job. */
#include "core/real/launcher.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cJSON.h>

#include "core/real/cluster.h"
#include "core/stop.h"

typedef struct child {
    int role;                 /* enum role */
    int task;
    pid_t pid;                /* 0: not running */
    int status;               /* last wait status */
    bool finished;            /* exited 0 */
    double restart_at;        /* > 0: respawn due then */
} child;

typedef struct job {
    experiment *e;
    run *r;
    char exe[4096];
    char ipc_dir[64];
    char *ps_hosts, *worker_hosts;
    char t0_arg[64], run_arg[4700];
    child *children;
    int count;
    int log_fd;
    int restarts;
    bool workers_started;
    double t0, workers_done_at;
} job;

/* A free TCP port on host, from the kernel. */
static int s_free_port(const char *host)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    if (fd < 0 || inet_pton(AF_INET, host, &a.sin_addr) != 1 ||
        bind(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        if (fd >= 0) {
            close(fd);
        }
        return -1;
    }
    socklen_t len = sizeof a;
    getsockname(fd, (struct sockaddr *)&a, &len);
    close(fd);
    return ntohs(a.sin_port);
}

static int s_endpoints(job *j, error *err)
{
    experiment *e = j->e;
    size_t cap = (size_t)e->servers * 128 + 1;
    j->ps_hosts = calloc(1, cap);
    j->worker_hosts = calloc(1, (size_t)e->workers * 16 + 1);
    if (!j->ps_hosts || !j->worker_hosts) {
        return error_set(err, ERROR_RUNTIME, "out of memory");
    }
    if (e->transport == TRANSPORT_IPC) {
        snprintf(j->ipc_dir, sizeof j->ipc_dir, "/tmp/asgd-XXXXXX");
        if (!mkdtemp(j->ipc_dir)) {
            j->ipc_dir[0] = '\0';
            return error_set(err, ERROR_RUNTIME, "cannot create a folder for ipc sockets: %s",
                             strerror(errno));
        }
    }
    for (int k = 0; k < e->servers; k++) {
        char one[128];
        if (e->transport == TRANSPORT_IPC) {
            snprintf(one, sizeof one, "ipc://%s/ps-%d", j->ipc_dir, k);
        } else {
            int port = e->port > 0 ? (int)e->port + k : s_free_port(e->host);
            if (port < 0 || port > 65535) {
                return error_set(err, ERROR_USAGE, "[cluster] host %s: no free port to bind "
                                 "(host must be a local IPv4 address)", e->host);
            }
            snprintf(one, sizeof one, "%s:%d", e->host, port);
        }
        if (k) {
            strcat(j->ps_hosts, ",");
        }
        strcat(j->ps_hosts, one);
    }
    for (int w = 0; w < e->workers; w++) {
        strcat(j->worker_hosts, w ? ",localhost" : "localhost");
    }
    return 0;
}

static void s_spawn(job *j, child *c)
{
    char role_task[32];
    snprintf(role_task, sizeof role_task, "--task_index=%d", c->task);
    char ps_arg[64 + 4096], worker_arg[64 + 4096], config[4800];
    snprintf(ps_arg, sizeof ps_arg, "--ps_hosts=%s", j->ps_hosts);
    snprintf(worker_arg, sizeof worker_arg, "--worker_hosts=%s", j->worker_hosts);
    snprintf(config, sizeof config, "%s/config.ini", j->r->dir);
    char *argv[] = {j->exe, (char *)cluster_role_name(c->role), config, ps_arg, worker_arg,
                    role_task, j->run_arg, j->t0_arg, "--evaluator=1", NULL};
    pid_t parent = getpid();
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) {
            _exit(1);
        }
        int devnull = open("/dev/null", O_RDWR);
        dup2(devnull, STDIN_FILENO);
        dup2(devnull, STDOUT_FILENO);
        dup2(j->log_fd, STDERR_FILENO);
        unsetenv("TF_CONFIG");
        execv(j->exe, argv);
        _exit(127);
    }
    c->pid = pid;
    c->restart_at = 0;
    run_log(j->r, "started %s %d (pid %d)", cluster_role_name(c->role), c->task, (int)pid);
}

static const char *s_describe(int status, char *buf, size_t n)
{
    if (WIFSIGNALED(status)) {
        snprintf(buf, n, "was killed by signal %d", WTERMSIG(status));
    } else {
        snprintf(buf, n, "exited with status %d", WEXITSTATUS(status));
    }
    return buf;
}

/* Exit code as Kubeflow sees it: 128 + signal for a killed process. */
static int s_exit_code(int status)
{
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

static bool s_should_restart(const job *j, int status)
{
    if (j->restarts >= j->e->backoff_limit) {
        return false;
    }
    switch (j->e->restart) {
    case RESTART_ON_FAILURE:
        return true;
    case RESTART_EXIT_CODE:
        return s_exit_code(status) >= 128;
    default:
        return false;
    }
}

/* SIGTERM, up to 5 s of grace, then SIGKILL; reaps everything. */
static void s_stop_all(job *j)
{
    for (int i = 0; i < j->count; i++) {
        if (j->children[i].pid > 0) {
            kill(j->children[i].pid, SIGTERM);
        }
    }
    double deadline = run_wall() + 5;
    for (;;) {
        int alive = 0;
        for (int i = 0; i < j->count; i++) {
            child *c = &j->children[i];
            if (c->pid > 0 && waitpid(c->pid, &c->status, WNOHANG) == c->pid) {
                c->pid = 0;
            }
            alive += c->pid > 0;
        }
        if (!alive) {
            return;
        }
        if (run_wall() > deadline) {
            for (int i = 0; i < j->count; i++) {
                if (j->children[i].pid > 0) {
                    kill(j->children[i].pid, SIGKILL);
                    waitpid(j->children[i].pid, &j->children[i].status, 0);
                    j->children[i].pid = 0;
                }
            }
            return;
        }
        run_sleep(0.02);
    }
}

/* Last data row of eval.csv: epoch and accuracy, for the progress line. */
static bool s_last_eval(const job *j, double *epoch, double *acc)
{
    char path[4800], line[512], last[512] = "";
    snprintf(path, sizeof path, "%s/eval.csv", j->r->dir);
    FILE *f = fopen(path, "r");
    if (!f) {
        return false;
    }
    while (fgets(line, sizeof line, f)) {
        memcpy(last, line, sizeof last);
    }
    fclose(f);
    double t, loss;
    long updates, samples;
    return sscanf(last, "%lf,%lf,%ld,%ld,%lf,%lf", &t, epoch, &updates, &samples, &loss,
                  acc) == 6;
}

static void s_progress(const job *j, bool tty, double *last_print, bool final)
{
    double now = run_wall();
    if (!tty || (!final && now - *last_print < 0.5)) {
        return;
    }
    *last_print = now;
    int running = 0;
    for (int i = 0; i < j->count; i++) {
        running += j->children[i].role == ROLE_WORKER && j->children[i].pid > 0;
    }
    double epoch = 0, acc = -1;
    s_last_eval(j, &epoch, &acc);
    fprintf(stderr, "\r%s: %s, %d/%d workers running | epoch %.2f/%g | test acc ",
            j->e->name, j->e->algorithm_name, running, j->e->workers, epoch, j->e->epochs);
    if (acc >= 0) {
        fprintf(stderr, "%.4f", acc);
    } else {
        fprintf(stderr, "-");
    }
    fprintf(stderr, " | %.0f s   %s", now - j->t0, final ? "\n" : "");
    fflush(stderr);
}

/* Workers start once the evaluator has recorded the initial model, so that
 * eval.csv begins at update 0; their clock (--t0) starts then. */
static void s_start_workers(job *j)
{
    char path[4800];
    snprintf(path, sizeof path, "%s/eval.csv", j->r->dir);
    FILE *f = fopen(path, "r");
    int lines = 0;
    for (int ch; f && (ch = fgetc(f)) != EOF;) {
        lines += ch == '\n';
    }
    if (f) {
        fclose(f);
    }
    if (lines < 2) {
        return;
    }
    j->workers_started = true;
    j->t0 = run_wall();
    snprintf(j->t0_arg, sizeof j->t0_arg, "--t0=%.6f", j->t0);
    for (int i = 0; i < j->count; i++) {
        if (j->children[i].role == ROLE_WORKER) {
            s_spawn(j, &j->children[i]);
        }
    }
}

/* Supervises until the job ends; 0 when it completed. */
static int s_supervise(job *j, error *err)
{
    bool tty = isatty(STDERR_FILENO);
    double last_print = 0;
    for (;;) {
        if (stop_requested()) {
            s_progress(j, tty, &last_print, true);
            return error_set(err, ERROR_RUNTIME, "interrupted by signal %d; stopped every "
                             "process; %s is incomplete", stop_requested(), j->r->dir);
        }
        int status;
        pid_t pid;
        while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
            child *c = NULL;
            for (int i = 0; i < j->count; i++) {
                if (j->children[i].pid == pid) {
                    c = &j->children[i];
                }
            }
            if (!c) {
                continue;
            }
            c->pid = 0;
            c->status = status;
            char why[64];
            s_describe(status, why, sizeof why);
            if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
                c->finished = true;
                run_log(j->r, "%s %d finished", cluster_role_name(c->role), c->task);
                continue;
            }
            run_log(j->r, "%s %d %s", cluster_role_name(c->role), c->task, why);
            if (c->role == ROLE_WORKER && s_should_restart(j, status)) {
                double delay = fmin(0.1 * pow(2, j->restarts), 5.0);
                j->restarts++;
                c->restart_at = run_wall() + delay;
                run_log(j->r, "restarting worker %d in %.1f s (restart %d of at most %ld, "
                        "[cluster] restart = %s)", c->task, delay, j->restarts,
                        j->e->backoff_limit, j->e->restart == RESTART_ON_FAILURE
                                                 ? "on-failure" : "exit-code");
                continue;
            }
            const char *policy = c->role != ROLE_WORKER ? "" :
                                 j->e->restart == RESTART_NEVER ? " ([cluster] restart = never)" :
                                 " (no restart left under [cluster] restart and backoff_limit)";
            return error_set(err, ERROR_RUNTIME, "%s %d %s%s; the job failed and every "
                             "process was stopped; see %s/log.txt", cluster_role_name(c->role),
                             c->task, why, policy, j->r->dir);
        }
        if (!j->workers_started) {
            s_start_workers(j);
        }
        double now = run_wall();
        bool workers_done = j->workers_started, all_done = true;
        for (int i = 0; i < j->count; i++) {
            child *c = &j->children[i];
            if (c->restart_at > 0 && now >= c->restart_at) {
                s_spawn(j, c);
            }
            if (c->role == ROLE_WORKER && !c->finished) {
                workers_done = false;
            }
            all_done = all_done && c->finished;
        }
        if (workers_done && j->workers_done_at == 0) {
            j->workers_done_at = now;
            run_log(j->r, "every worker finished after %.2f s", now - j->t0);
        }
        if (all_done) {
            s_progress(j, tty, &last_print, true);
            return 0;
        }
        if (j->workers_done_at > 0 && now - j->workers_done_at > j->e->timeout) {
            return error_set(err, ERROR_RUNTIME, "the servers or the evaluator did not finish "
                             "within %g s of the workers ([cluster] timeout)", j->e->timeout);
        }
        s_progress(j, tty, &last_print, false);
        run_sleep(0.02);
    }
}

typedef struct step_row {
    double t;
    char *line;
} step_row;

static int s_cmp_rows(const void *a, const void *b)
{
    const step_row *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t;
}

/* steps-K.csv into steps.csv, in time order; the parts are removed. */
static void s_merge_steps(job *j)
{
    step_row *rows = NULL;
    size_t n = 0, cap = 0;
    char **texts = calloc((size_t)j->e->workers, sizeof *texts);
    for (int w = 0; texts && w < j->e->workers; w++) {
        char path[4800];
        snprintf(path, sizeof path, "%s/steps-%d.csv", j->r->dir, w);
        FILE *f = fopen(path, "r");
        if (!f) {
            continue;
        }
        fseek(f, 0, SEEK_END);
        long size = ftell(f);
        rewind(f);
        texts[w] = malloc((size_t)size + 1);
        size_t got = texts[w] ? fread(texts[w], 1, (size_t)size, f) : 0;
        fclose(f);
        if (!texts[w]) {
            continue;
        }
        texts[w][got] = '\0';
        remove(path);
        char *save, *line = strtok_r(texts[w], "\n", &save);
        for (line = strtok_r(NULL, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
            if (n == cap) {
                cap = cap ? 2 * cap : 4096;
                step_row *grown = realloc(rows, cap * sizeof *rows);
                if (!grown) {
                    break;
                }
                rows = grown;
            }
            rows[n].t = strtod(line, NULL);
            rows[n++].line = line;
        }
    }
    if (n > 0) {
        qsort(rows, n, sizeof *rows, s_cmp_rows);
    }
    for (size_t i = 0; i < n; i++) {
        fprintf(j->r->steps, "%s\n", rows[i].line);
    }
    fflush(j->r->steps);
    for (int w = 0; texts && w < j->e->workers; w++) {
        free(texts[w]);
    }
    free(texts);
    free(rows);
}

static double s_json_number(cJSON *o, const char *key)
{
    cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* Shards' counters and the last evaluation into the summary. */
static void s_summarise(job *j, run_summary *sum)
{
    double pushes = 0, staleness = 0, first_pull = 0, last_push = 0;
    for (int k = 0; k < j->e->servers; k++) {
        char path[4800];
        snprintf(path, sizeof path, "%s/ps-%d.json", j->r->dir, k);
        cJSON *o = run_read_json(path);
        if (!o) {
            continue;
        }
        pushes += s_json_number(o, "pushes");
        staleness += s_json_number(o, "staleness_sum");
        if (s_json_number(o, "staleness_max") > sum->staleness_max) {
            sum->staleness_max = (long)s_json_number(o, "staleness_max");
        }
        sum->dropped += (long)s_json_number(o, "dropped");
        cJSON *h = cJSON_GetObjectItemCaseSensitive(o, "staleness_histogram");
        for (int i = 0; i < cJSON_GetArraySize(h) && i < 64; i++) {
            sum->staleness_histogram[i] += (long)cJSON_GetArrayItem(h, i)->valuedouble;
        }
        sum->rejected += (long)s_json_number(o, "rejected");
        if (k == 0) {
            sum->updates = (long)s_json_number(o, "version");
            sum->samples = (long)s_json_number(o, "samples");
            first_pull = s_json_number(o, "first_pull_at");
            last_push = s_json_number(o, "last_push_at");
        }
        cJSON_Delete(o);
    }
    sum->staleness_mean = pushes > 0 ? staleness / pushes : 0;
    /* training: from the first worker pull to the last push, as shard 0
     * saw them; workers' start-up (loading data) is not training */
    sum->train_time_s = last_push > first_pull && first_pull > 0 ? last_push - first_pull : 0;
    char path[4800], line[512];
    snprintf(path, sizeof path, "%s/eval.csv", j->r->dir);
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof line, f)) {
        double t, epoch, loss, acc;
        long updates, samples;
        if (sscanf(line, "%lf,%lf,%ld,%ld,%lf,%lf", &t, &epoch, &updates, &samples, &loss,
                   &acc) == 6) {
            sum->final_test_acc = acc;
            sum->final_test_loss = loss;
            if (isnan(sum->best_test_acc) || acc > sum->best_test_acc) {
                sum->best_test_acc = acc;
            }
        }
    }
    if (f) {
        fclose(f);
    }
}

static void s_remove_ipc(job *j)
{
    if (!j->ipc_dir[0]) {
        return;
    }
    DIR *d = opendir(j->ipc_dir);
    struct dirent *ent;
    while (d && (ent = readdir(d))) {
        if (ent->d_name[0] != '.') {
            char path[512];
            snprintf(path, sizeof path, "%s/%s", j->ipc_dir, ent->d_name);
            unlink(path);
        }
    }
    if (d) {
        closedir(d);
    }
    rmdir(j->ipc_dir);
}

int launcher_train(experiment *e, run *r, error *err)
{
    job j = {.e = e, .r = r, .log_fd = -1};
    int rc = -1;
    ssize_t len = readlink("/proc/self/exe", j.exe, sizeof j.exe - 1);
    if (len <= 0) {
        return error_set(err, ERROR_RUNTIME, "cannot find the asgd binary: %s", strerror(errno));
    }
    j.exe[len] = '\0';
    char log_path[4800];
    snprintf(log_path, sizeof log_path, "%s/log.txt", r->dir);
    j.log_fd = open(log_path, O_WRONLY | O_APPEND | O_CREAT, 0644);
    j.count = e->servers + 1 + e->workers;
    j.children = calloc((size_t)j.count, sizeof *j.children);
    if (j.log_fd < 0 || !j.children || s_endpoints(&j, err) < 0) {
        if (!err->msg[0]) {
            error_set(err, ERROR_RUNTIME, "launcher: out of memory");
        }
        goto done;
    }
    /* The data was loaded to check it before any process starts; the
     * launcher needs only its size. */
    long n_train = e->train.n;
    dataset_free(&e->train);
    dataset_free(&e->test);
    /* the evaluator appends to eval.csv itself */
    fclose(r->eval);
    r->eval = NULL;
    run_summary sum = {
        .algorithm = e->algorithm_name, .model = model_type_name(e->model.type),
        .mode = experiment_mode_name(e->mode),
        .dataset = e->data.source == DATA_SYNTHETIC ? "synthetic" : e->data.path,
        .workers = e->workers, .servers = e->servers, .seed = e->seed,
        .final_test_acc = NAN, .best_test_acc = NAN, .final_test_loss = NAN,
    };
    if (run_write_summary(r, &sum, err) < 0) {
        goto done;
    }
    run_log(r, "%s: %d workers, %d servers over %s (%s), restart = %s", e->algorithm_name,
            e->workers, e->servers, e->transport == TRANSPORT_IPC ? "ipc" : "tcp", j.ps_hosts,
            e->restart == RESTART_NEVER ? "never" : e->restart == RESTART_ON_FAILURE
                                                      ? "on-failure" : "exit-code");
    j.t0 = run_wall();
    snprintf(j.t0_arg, sizeof j.t0_arg, "--t0=0");   /* the evaluator's clock: its first pull */
    snprintf(j.run_arg, sizeof j.run_arg, "--run_dir=%s", r->dir);
    stop_install();
    int i = 0;
    for (int k = 0; k < e->servers; k++) {
        j.children[i++] = (child){.role = ROLE_PS, .task = k};
    }
    j.children[i++] = (child){.role = ROLE_EVALUATOR, .task = 0};
    for (int w = 0; w < e->workers; w++) {
        j.children[i++] = (child){.role = ROLE_WORKER, .task = w};
    }
    for (i = 0; i < e->servers + 1; i++) {
        s_spawn(&j, &j.children[i]);
    }
    rc = s_supervise(&j, err);
    s_stop_all(&j);
    stop_uninstall();

    s_merge_steps(&j);
    s_summarise(&j, &sum);
    sum.restarts = j.restarts;
    sum.time_s = (j.workers_done_at > 0 ? j.workers_done_at : run_wall()) - j.t0;
    sum.wall_time_s = run_wall() - j.t0;
    sum.epochs = (double)sum.samples / n_train;
    sum.samples_per_s = sum.train_time_s > 0 ? sum.samples / sum.train_time_s : 0;
    sum.complete = rc == 0;
    run_log(r, "%s: test accuracy %.4f, %ld updates, staleness mean %.2f max %ld, "
            "%ld dropped, %ld rejected, %d restarts", rc == 0 ? "finished" : "failed",
            sum.final_test_acc, sum.updates, sum.staleness_mean, sum.staleness_max, sum.dropped,
            sum.rejected, j.restarts);
    error ignored;
    if (run_write_summary(r, &sum, rc == 0 ? err : &ignored) < 0) {
        rc = -1;
    }
done:
    s_remove_ipc(&j);
    if (j.log_fd >= 0) {
        close(j.log_fd);
    }
    free(j.children);
    free(j.ps_hosts);
    free(j.worker_hosts);
    return rc;
}
