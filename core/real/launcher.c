/* launcher.c: starting, supervising and cleaning up a distributed job. */
#include "core/real/launcher.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cJSON.h>

#include "core/checkpoint.h"
#include "core/proc.h"
#include "core/progress.h"
#include "core/real/collect.h"
#include "core/real/cluster.h"
#include "core/stop.h"
#include "core/summary.h"
#include "transport/auth.h"
#include "transport/net.h"

typedef struct child {
    proc p;
    int role;                 /* enum role */
    int task;
    bool finished;            /* exited 0 */
    double restart_at;        /* > 0: respawn due then */
    int starts;               /* times started */
    double stopped_since;     /* > 0: seen stopped (SIGSTOP) since then */
    bool killed_stopped;      /* the launcher killed it for staying stopped */
    bool stopping;            /* running when the launcher stopped every child */
} child;

typedef struct job {
    experiment *e;
    run *r;
    char exe[4096];
    char private_dir[64];     /* mode 0700: ipc sockets and generated keys ("": none) */
    char *ps_hosts, *worker_hosts;
    char run_arg[4700], report_arg[32], keys_arg[4200];
    child *children;
    proc **procs;             /* each child's proc, for proc_reap and proc_stop */
    int count;
    int log_fd;
    off_t log_from;           /* log.txt's length when this session began */
    int report_fd;            /* the evaluator's reports (read end), -1 once closed */
    char report[512];         /* a report line not yet whole */
    size_t report_len;
    int evaluations;
    double last_epoch, last_acc;
    double last_eval_t;       /* the time of the last row the evaluator reported */
    int restarts;
    bool resume;              /* asgd train --resume: shards restore their checkpoints */
    int before_restarts;      /* resumed: the earlier sessions' restarts (their wall_time_s
                                 and startup_s are sum.base_wall_s and base_startup_s) */
    char *before_summary;     /* resumed: summary.json as the earlier sessions left it */
    bool workers_started;
    double started;           /* Unix time the launcher began */
    double first_step;        /* Unix time of the first training step (0: none) */
    double diverged_at;       /* when the evaluator reported a non-finite loss */
    child *spawn_failed;      /* a child fork could not start */
    child *left_early;        /* a shard or the evaluator that exited 0 before every
                                 worker had finished */
    double left_early_at;
    double workers_done_at;
    double stops_checked_at;  /* when s_kill_stopped last looked */
    run_summary sum;
} job;

/* When process pid started (clock ticks since boot, /proc/PID/stat's
 * field 22), 0 when there is no such process here. */
static unsigned long long s_started(int pid)
{
    char path[64], line[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    size_t got = f ? fread(line, 1, sizeof line - 1, f) : 0;
    if (f) {
        fclose(f);
    }
    line[got] = '\0';
    const char *p = strrchr(line, ')');   /* the name may hold spaces and parentheses */
    unsigned long long start = 0;
    for (int field = 2; p && field < 22; field++) {
        p = strchr(p + 1, ' ');
    }
    return p && sscanf(p, " %llu", &start) == 1 ? start : 0;
}

/* The PID namespace this process sees (its inode), 0 when unknown. */
static unsigned long long s_pid_namespace(void)
{
    struct stat st;
    return stat("/proc/self/ns/pid", &st) == 0 ? (unsigned long long)st.st_ino : 0;
}

/* The mark a launcher leaves in its private folder: who made it. */
#define PRIVATE_MARK "launcher"

static void s_mark_private_dir(const char *dir)
{
    char path[128];
    snprintf(path, sizeof path, "%s/" PRIVATE_MARK, dir);
    FILE *f = fopen(path, "w");
    if (f) {
        int pid = (int)getpid();
        fprintf(f, "%llu %d %llu\n", s_pid_namespace(), pid, s_started(pid));
        fclose(f);
    }
}

/* Removes the private folders (asgd-PID-XXXXXX in /tmp) that this user's
 * launchers left when they were killed (SIGKILL): sockets and, under
 * CURVE, secret keys. Only a folder whose mark says it is a launcher's of
 * this PID namespace, whose process is gone (no such PID, or one that
 * started at another time); any other is left. */
static void s_remove_stale_private_dirs(void)
{
    DIR *tmp = opendir("/tmp");
    struct dirent *d;
    unsigned long long ns = s_pid_namespace();
    while (ns && tmp && (d = readdir(tmp))) {
        int pid, marked_pid, at = 0;
        unsigned long long marked_ns, started;
        char path[300], mark[320];
        struct stat st;
        snprintf(path, sizeof path, "/tmp/%s", d->d_name);
        snprintf(mark, sizeof mark, "%s/" PRIVATE_MARK, path);
        if (sscanf(d->d_name, "asgd-%d-%n", &pid, &at) != 1 || at == 0 ||
            strlen(d->d_name + at) != 6 || lstat(path, &st) != 0 || !S_ISDIR(st.st_mode) ||
            st.st_uid != getuid()) {
            continue;
        }
        FILE *f = fopen(mark, "r");
        int fields = f ? fscanf(f, "%llu %d %llu", &marked_ns, &marked_pid, &started) : 0;
        if (f) {
            fclose(f);
        }
        if (fields == 3 && marked_ns == ns && marked_pid == pid && s_started(pid) != started) {
            error ignored;
            run_remove_dir(path, &ignored);
        }
    }
    if (tmp) {
        closedir(tmp);
    }
}

/* The job's private folder when it needs one: for ipc sockets, and for
 * the CURVE keys it makes itself (cluster.auth = curve without keys). */
static int s_private_dir(job *j, error *err)
{
    experiment *e = j->e;
    bool make_keys = e->auth == AUTH_CURVE && !e->keys[0];
    if (e->transport != TRANSPORT_IPC && !make_keys) {
        return 0;
    }
    s_remove_stale_private_dirs();
    snprintf(j->private_dir, sizeof j->private_dir, "/tmp/asgd-%d-XXXXXX", (int)getpid());
    if (!mkdtemp(j->private_dir)) {
        j->private_dir[0] = '\0';
        return error_set(err, ERROR_RUNTIME, "cannot create a private folder in /tmp: %s",
                         strerror(errno));
    }
    s_mark_private_dir(j->private_dir);
    if (e->auth == AUTH_CURVE) {
        char keys[128];
        snprintf(keys, sizeof keys, "%s/keys", j->private_dir);
        if (make_keys && auth_make_keys(keys, e->workers, err) < 0) {
            return -1;
        }
        snprintf(j->keys_arg, sizeof j->keys_arg, "--keys=%s", make_keys ? keys : e->keys);
    }
    return 0;
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
    if (s_private_dir(j, err) < 0) {
        return -1;
    }
    int *ports = calloc((size_t)e->servers, sizeof *ports);
    if (!ports) {
        return error_set(err, ERROR_RUNTIME, "out of memory");
    }
    for (int k = 0; k < e->servers; k++) {
        ports[k] = e->port > 0 ? (int)e->port + k : 0;
    }
    if (e->transport != TRANSPORT_IPC && e->port == 0 &&
        net_free_ports(e->host, ports, e->servers) < 0) {
        free(ports);
        return error_set(err, ERROR_USAGE, "[cluster] host %s: no free port to bind "
                         "(host must be a local IPv4 address)", e->host);
    }
    for (int k = 0; k < e->servers; k++) {
        char one[128];
        if (e->transport == TRANSPORT_IPC) {   /* a port past 65535: refused by the config */
            snprintf(one, sizeof one, "ipc://%s/ps-%d", j->private_dir, k);
        } else {
            snprintf(one, sizeof one, "%s:%d", e->host, ports[k]);
        }
        if (k) {
            strcat(j->ps_hosts, ",");
        }
        strcat(j->ps_hosts, one);
    }
    free(ports);
    for (int w = 0; w < e->workers; w++) {
        strcat(j->worker_hosts, w ? ",localhost" : "localhost");
    }
    return 0;
}

int launcher_check(experiment *e, error *err)
{
    if (!e->alg || e->mode != MODE_REAL || e->transport != TRANSPORT_TCP) {
        return 0;
    }
    char why[128];
    if (!net_can_listen(e->host, 0, why, sizeof why)) {
        return config_fail(e->c, "cluster", "host", err, "%s: %s (asgd train starts every "
                           "shard on this host; a job across hosts starts each role with asgd "
                           "ps and asgd worker)", e->host, why);
    }
    int *ports = e->port == 0 ? calloc((size_t)e->servers, sizeof *ports) : NULL;
    bool free_ports = ports && net_free_ports(e->host, ports, e->servers) == 0;
    free(ports);
    if (e->port == 0 && !free_ports) {   /* as s_endpoints will draw them */
        return config_fail(e->c, "cluster", "host", err, "%s: with no [cluster] port asgd "
                           "draws free ports, on a local IPv4 address (or a name of one) only; "
                           "give that, or a port", e->host);
    }
    for (int k = 0; e->port > 0 && k < e->servers; k++) {
        if (!net_can_listen(e->host, (int)e->port + k, why, sizeof why)) {
            return config_fail(e->c, "cluster", "port", err, "shard %d's port %ld on %s: %s "
                               "(another job's?)", k, e->port + k, e->host, why);
        }
    }
    return 0;
}

/* Starts (or restarts) one child: `asgd ROLE` with the job's flags; the
 * evaluator also gets the write end of the report pipe. */
static void s_spawn(job *j, child *c, int report_write)
{
    char role_task[32];
    snprintf(role_task, sizeof role_task, "--task_index=%d", c->task);
    /* as long as the lists are (4,096 workers: 40 kB; fixed buffers cut
     * them at 415, and every child counted that many) */
    size_t ps_len = strlen(j->ps_hosts) + 16, worker_len = strlen(j->worker_hosts) + 16;
    char *ps_arg = malloc(ps_len), *worker_arg = malloc(worker_len), config[4800];
    if (!ps_arg || !worker_arg) {
        free(ps_arg);
        free(worker_arg);
        c->p.pid = 0;
        j->spawn_failed = c;
        run_log(j->r, "cannot start %s %d: out of memory", cluster_role_name(c->role), c->task);
        return;
    }
    snprintf(ps_arg, ps_len, "--ps_hosts=%s", j->ps_hosts);
    snprintf(worker_arg, worker_len, "--worker_hosts=%s", j->worker_hosts);
    snprintf(config, sizeof config, "%s/config.ini", j->r->dir);
    bool evaluator = c->role == ROLE_EVALUATOR;
    char *argv[12] = {j->exe, (char *)cluster_role_name(c->role), config, ps_arg, worker_arg,
                      role_task, j->run_arg, "--evaluator=1"};
    int argc = 8;
    if (j->keys_arg[0]) {
        argv[argc++] = j->keys_arg;
    }
    if (c->role == ROLE_PS && (j->resume || c->starts > 0)) {   /* from its checkpoint */
        argv[argc++] = c->starts > 0 ? "--restore" : "--resume";
    }
    if (evaluator) {
        argv[argc++] = j->report_arg;
    }
    pid_t pid = proc_spawn(j->exe, argv, j->log_fd, evaluator ? report_write : -1);
    free(ps_arg);
    free(worker_arg);
    c->restart_at = 0;
    if (pid < 0) {   /* no process to supervise: the job fails at the next look */
        c->p.pid = 0;
        j->spawn_failed = c;
        run_log(j->r, "cannot start %s %d: %s", cluster_role_name(c->role), c->task,
                strerror(errno));
        return;
    }
    c->p.pid = pid;
    c->starts++;
    run_log(j->r, "started %s %d (pid %d)", cluster_role_name(c->role), c->task, (int)pid);
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
        return proc_exit_code(status) >= 128;
    default:
        return false;
    }
}

static void s_progress(const job *j, progress *p, bool final)
{
    if (!progress_due(p, final)) {
        return;
    }
    int running = 0;
    for (int i = 0; i < j->count; i++) {
        running += j->children[i].role == ROLE_WORKER && j->children[i].p.pid > 0;
    }
    if (j->workers_started && j->e->eval_every == 0 && !final) {
        /* the last evaluation is the initial model's: its epoch and
         * accuracy would read as training that does not move */
        progress_say(p, final, 0, "%s: %s, %d/%d workers running | epoch -/%g | test acc - "
                     "(eval.every = 0: evaluated at the end)", j->e->name,
                     j->e->algorithm_name, running, j->e->workers, j->e->epochs);
        return;
    }
    char accuracy[16] = "-";
    if (j->evaluations > 0) {
        snprintf(accuracy, sizeof accuracy, "%.4f", j->last_acc);
    }
    progress_say(p, final, j->last_epoch / j->e->epochs, "%s: %s, %d/%d workers running | "
                 "epoch %.2f/%g | test acc %s", j->e->name, j->e->algorithm_name, running,
                 j->e->workers, j->last_epoch, j->e->epochs, accuracy);
}

/* Workers start once the evaluator has reported the initial model, so
 * that eval.csv begins at update 0. */
static void s_start_workers(job *j)
{
    j->workers_started = true;
    for (int i = 0; i < j->count; i++) {
        if (j->children[i].role == ROLE_WORKER) {
            s_spawn(j, &j->children[i], -1);
        }
    }
}

/* One evaluation as the evaluator reported it (the row it wrote to
 * eval.csv), into the summary and the progress line; or "diverged" when
 * the shards refused a push of NaN or infinity. */
static void s_report(job *j, const char *line)
{
    double t, epoch, loss, acc;
    long updates, samples;
    if (strcmp(line, "diverged") == 0) {   /* workers pushed NaN or infinity */
        j->sum.diverged = true;
        return;
    }
    if (sscanf(line, "%lf,%lf,%ld,%ld,%lf,%lf", &t, &epoch, &updates, &samples, &loss,
               &acc) != 6) {
        run_log(j->r, "launcher: the evaluator reported \"%s\"", line);
        return;
    }
    summary_add_eval(&j->sum, updates, loss, acc);   /* a non-finite loss: diverged */
    j->evaluations++;
    j->last_eval_t = t;
    j->last_epoch = epoch;
    j->last_acc = acc;
    if (!j->workers_started) {
        s_start_workers(j);
    }
}

/* Reads whatever the evaluator has reported, without waiting. */
static void s_read_reports(job *j)
{
    while (j->report_fd >= 0) {
        ssize_t got = read(j->report_fd, j->report + j->report_len,
                           sizeof j->report - 1 - j->report_len);
        if (got < 0 && (errno == EAGAIN || errno == EINTR)) {
            return;
        }
        if (got <= 0) {   /* the evaluator has gone, and every report with it */
            close(j->report_fd);
            j->report_fd = -1;
            return;
        }
        j->report_len += (size_t)got;
        j->report[j->report_len] = '\0';
        char *line = j->report, *nl;
        while ((nl = strchr(line, '\n'))) {
            *nl = '\0';
            s_report(j, line);
            line = nl + 1;
        }
        j->report_len = strlen(line);
        memmove(j->report, line, j->report_len + 1);
        if (j->report_len == sizeof j->report - 1) {
            j->report_len = 0;   /* a line this long is no report */
        }
    }
}

/* Whether every worker has finished (exited 0). */
static bool s_workers_finished(const job *j)
{
    for (int i = 0; i < j->count; i++) {
        if (j->children[i].role == ROLE_WORKER && !j->children[i].finished) {
            return false;
        }
    }
    return j->workers_started;
}

/* The job's failure when a shard or the evaluator left before the workers
 * were done: whatever befell them after is its consequence. */
static int s_left_early(const job *j, error *err)
{
    const child *c = j->left_early;
    return error_set(err, ERROR_RUNTIME, "%s %d exited before every worker was done (did a "
                     "peer that is not a worker stop it?); the job failed and every process "
                     "was stopped; see %s/log.txt", cluster_role_name(c->role), c->task,
                     j->r->dir);
}

/* The last line child c said in log.txt about its failure ("asgd worker 3:
 * WHY", "asgd evaluator: WHY" give WHY) into said ("" when there is none):
 * the job's error says why the process failed, not only that it did (that
 * was in log.txt alone). */
static void s_last_said(const job *j, const child *c, char *said, size_t n)
{
    char path[4800], prefix[64];
    snprintf(path, sizeof path, "%s/log.txt", j->r->dir);
    if (c->role == ROLE_EVALUATOR) {   /* one, of no index (roles.c): "asgd evaluator 0:"
                                         * was looked for, and its reason never passed on */
        snprintf(prefix, sizeof prefix, "asgd evaluator: ");
    } else {
        snprintf(prefix, sizeof prefix, "asgd %s %d: ", cluster_role_name(c->role), c->task);
    }
    said[0] = '\0';
    char *text = run_read_file(path);
    /* this session's lines: an earlier one's "interrupted" was said of a
     * failure of this one */
    size_t from = text && strlen(text) >= (size_t)j->log_from ? (size_t)j->log_from : 0;
    for (char *line = text ? text + from : NULL; line && *line;) {
        size_t len = strcspn(line, "\n");
        if (strncmp(line, prefix, strlen(prefix)) == 0) {
            snprintf(said, n, "%.*s", (int)(len - strlen(prefix)), line + strlen(prefix));
        }
        line += len + (line[len] == '\n');
    }
    free(text);
}

/* A child has exited: done, restarted by the policy, or the job fails
 * (-1 with err set). A shard or the evaluator that ends while workers
 * still run is suspect but not yet a failure: workers that had said DONE
 * may simply not have been reaped yet. It fails the job once a worker
 * fails after it, or stays [cluster] timeout (s_supervise). */
static int s_exited(job *j, child *c, error *err)
{
    char why[64];
    proc_describe(c->p.status, why, sizeof why);
    if (proc_succeeded(c->p.status)) {
        c->finished = true;
        run_log(j->r, "%s %d finished", cluster_role_name(c->role), c->task);
        if (c->role != ROLE_WORKER && !j->left_early && !s_workers_finished(j)) {
            j->left_early = c;
            j->left_early_at = run_wall();
        }
        return 0;
    }
    run_log(j->r, "%s %d %s", cluster_role_name(c->role), c->task, why);
    bool killed_stopped = c->killed_stopped;
    c->killed_stopped = false;   /* a next life's own */
    if (j->left_early) {
        return s_left_early(j, err);
    }
    /* a shard comes back only from a checkpoint: a fresh one would lose the run */
    bool restartable = c->role == ROLE_WORKER ||
                       (c->role == ROLE_PS && j->e->checkpoint_every > 0);
    if (restartable && s_should_restart(j, c->p.status)) {
        double delay = fmin(0.1 * pow(2, j->restarts), 5.0);
        j->restarts++;
        c->restart_at = run_wall() + delay;
        run_log(j->r, "restarting %s %d in %.1f s (restart %d of at most %ld, "
                "[cluster] restart = %s)", cluster_role_name(c->role), c->task, delay,
                j->restarts, j->e->backoff_limit,
                j->e->restart == RESTART_ON_FAILURE ? "on-failure" : "exit-code");
        return 0;
    }
    /* no restart mends a refused config or data (exit 2): no policy to name */
    bool refused = proc_exit_code(c->p.status) == ERROR_USAGE;
    const char *policy = c->role == ROLE_EVALUATOR || refused ? "" :
                         c->role == ROLE_PS && j->e->checkpoint_every <= 0
                             ? " (a shard is restarted only from a checkpoint: set [checkpoint] "
                               "every)" :
                         j->e->restart == RESTART_NEVER ? " ([cluster] restart = never)" :
                         " (no restart left under [cluster] restart and backoff_limit)";
    char said[512];
    if (killed_stopped) {   /* its signal was the launcher's: say why it came */
        snprintf(said, sizeof said, "the launcher killed it, stopped (SIGSTOP) for half of "
                 "[cluster] timeout");
    } else {
        s_last_said(j, c, said, sizeof said);
    }
    /* a process that refused its config or data: the job's is the same error */
    int status = refused ? ERROR_USAGE : ERROR_RUNTIME;
    return error_set(err, status, "%s %d %s%s%s%s; the job failed and every process was "
                     "stopped; see %s/log.txt", cluster_role_name(c->role), c->task, why,
                     policy, said[0] ? ": " : "", said, j->r->dir);
}

/* After a non-finite test loss the run stops there: once the evaluator,
 * which saw it, has saved the model and left (or 10 s have passed), the
 * rest are stopped. */
static bool s_diverged(job *j)
{
    if (!j->sum.diverged) {
        return false;
    }
    double now = run_wall();
    if (j->diverged_at == 0) {
        j->diverged_at = now;
        run_log(j->r, "the test loss became %g: diverged; stopping every process",
                j->sum.final_test_loss);
    }
    child *evaluator = &j->children[j->e->servers];
    return evaluator->finished || evaluator->p.pid == 0 || now - j->diverged_at > 10;
}

/* Restarts that are due; 1 when every child has finished. */
static int s_tick(job *j)
{
    double now = run_wall();
    bool workers_done = j->workers_started, all_done = true;
    for (int i = 0; i < j->count; i++) {
        child *c = &j->children[i];
        if (c->restart_at > 0 && now >= c->restart_at) {
            s_spawn(j, c, -1);
        }
        workers_done = workers_done && (c->role != ROLE_WORKER || c->finished);
        all_done = all_done && c->finished;
    }
    if (workers_done && j->workers_done_at == 0) {
        j->workers_done_at = now;
        run_log(j->r, "every worker finished %.2f s after the start", now - j->started);
    }
    return all_done;
}

/* Whether process pid is stopped (SIGSTOP, a debugger), as /proc says. */
static bool s_stopped(pid_t pid)
{
    char path[64], text[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    size_t got = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f) {
        fclose(f);
    }
    text[got] = '\0';
    const char *state = strrchr(text, ')');   /* after the command's name */
    return state && (state[2] == 'T' || state[2] == 't');
}

/* Kills a child stopped for half of [cluster] timeout, saying so, so that
 * the restart policy or the job's failure takes it up: nothing else saw
 * it (a stopped worker held an asynchronous job for good, the evaluator
 * adding the same row every eval.every; a lockstep job's healthy workers
 * timed out first and were blamed and restarted). Looks once a second. */
static void s_kill_stopped(job *j)
{
    double now = run_wall();
    if (now - j->stops_checked_at < 1) {
        return;
    }
    j->stops_checked_at = now;
    for (int i = 0; i < j->count; i++) {
        child *c = &j->children[i];
        if (c->p.pid <= 0 || !s_stopped(c->p.pid)) {
            c->stopped_since = 0;
            continue;
        }
        if (c->stopped_since == 0) {
            c->stopped_since = now;
        } else if (now - c->stopped_since >= j->e->timeout / 2) {
            run_log(j->r, "launcher: %s %d has been stopped (SIGSTOP) for %.0f s, half of "
                    "[cluster] timeout: killed", cluster_role_name(c->role), c->task,
                    now - c->stopped_since);
            kill(c->p.pid, SIGKILL);
            c->stopped_since = 0;
            c->killed_stopped = true;
        }
    }
}

/* Every child still running stopped (SIGTERM, SIGKILL after 5 s) and
 * reaped, each with its line in log.txt saying how it ended. */
static void s_stop_children(job *j)
{
    for (int i = 0; i < j->count; i++) {
        j->children[i].stopping = j->children[i].p.pid > 0;
    }
    proc_stop(j->procs, j->count, 5.0);
    for (int i = 0; i < j->count; i++) {
        child *c = &j->children[i];
        if (c->stopping) {
            char why[64];
            run_log(j->r, "%s %d stopped by the launcher: %s", cluster_role_name(c->role),
                    c->task, proc_describe(c->p.status, why, sizeof why));
        }
    }
}

/* Supervises until the job ends; 0 when it completed. */
static int s_supervise(job *j, error *err)
{
    progress p;
    progress_start(&p);
    for (;;) {
        if (stop_requested()) {
            s_progress(j, &p, true);
            return error_set(err, ERROR_RUNTIME, "interrupted by signal %d; stopped every "
                             "process; %s is incomplete", stop_requested(), j->r->dir);
        }
        if (j->spawn_failed) {
            return error_set(err, ERROR_RUNTIME, "cannot start %s %d (fork failed); the job "
                             "failed and every process was stopped",
                             cluster_role_name(j->spawn_failed->role), j->spawn_failed->task);
        }
        s_read_reports(j);
        if (s_diverged(j)) {   /* stopped at that evaluation: a result, not a failure */
            s_progress(j, &p, true);
            return 0;
        }
        int i;
        while ((i = proc_reap(j->procs, j->count)) >= 0) {
            error why;
            if (s_exited(j, &j->children[i], &why) < 0 && !j->sum.diverged) {
                *err = why;   /* once diverged, the run is over whoever leaves */
                return -1;
            }
        }
        s_kill_stopped(j);
        if (s_tick(j)) {
            s_read_reports(j);   /* the final evaluation */
            s_progress(j, &p, true);
            return 0;
        }
        if (j->left_early && !s_workers_finished(j) &&
            run_wall() - j->left_early_at > j->e->timeout) {
            return s_left_early(j, err);
        }
        if (j->workers_done_at > 0 && run_wall() - j->workers_done_at > j->e->timeout) {
            char still[256] = "";   /* which: "ps 0, evaluator 0" */
            for (int k = 0; k < j->count; k++) {
                const child *c = &j->children[k];
                if (!c->finished && strlen(still) + 32 < sizeof still) {
                    snprintf(still + strlen(still), sizeof still - strlen(still), "%s%s %d",
                             still[0] ? ", " : "", cluster_role_name(c->role), c->task);
                }
            }
            return error_set(err, ERROR_RUNTIME, "%s did not finish within %g s of the workers "
                             "([cluster] timeout)", still, j->e->timeout);
        }
        s_progress(j, &p, false);
        run_sleep(0.02);
    }
}

/* The private folder and all in it: sockets and keys. */
static void s_remove_private_dir(job *j)
{
    error ignored;
    if (j->private_dir[0]) {
        run_remove_dir(j->private_dir, &ignored);
    }
}

/* The steps-K.csv that a session whose launcher was killed left (their
 * rows never gathered) gathered now, before this session's workers add
 * to them, in that session's time: its origin is in its shards' last
 * checkpoints (the next session's, or 0, once placed them at 0). Their
 * rows after those checkpoints are taken again, and go at the end. */
static void s_gather_left_steps(job *j)
{
    bool left = false;
    for (int w = 0; w < j->e->workers && !left; w++) {
        char path[4800];
        snprintf(path, sizeof path, "%s/steps-%d.csv", j->r->dir, w);
        left = access(path, F_OK) == 0;
    }
    if (!left) {
        return;
    }
    double t0 = 0;   /* none after a first pull: the earliest row (all taken again) */
    for (int k = 0; k < j->e->servers; k++) {
        char path[4800];
        checkpoint_path(path, sizeof path, j->r->dir, k);
        shard_stats st;
        error ignored;
        if (checkpoint_stats(path, &st, &ignored) == 0 && st.first_pull_at > 0 &&
            (t0 == 0 || st.first_pull_at < t0)) {
            t0 = st.first_pull_at;
        }
    }
    run_log(j->r, "launcher: gathering the steps an interrupted session left");
    collect_steps(j->r, j->e->workers, &(steps_clock){.t0 = t0}, 1);
}

/* A resumed run keeps what it had: how often it was resumed, the wall
 * time, start-up and restarts of its earlier sessions (time_s, from the
 * shards' clocks, already goes on from there). The evaluations eval.csv
 * keeps (the best accuracy may be among them) are taken when it ends. */
static void s_take_up(job *j)
{
    char path[4800];
    snprintf(path, sizeof path, "%s/summary.json", j->r->dir);
    cJSON *old = run_read_json(path);
    j->before_summary = run_read_file(path);
    j->sum.resumes = (int)run_json_positive(old, "resumes") + 1;
    j->sum.base_wall_s = run_json_positive(old, "wall_time_s");
    j->sum.base_startup_s = run_json_positive(old, "startup_s");
    j->before_restarts = (int)run_json_positive(old, "restarts");
    summary_take_sessions(&j->sum, old);
    cJSON_Delete(old);
    /* the summary written at this session's start keeps them: a session
     * that crashes (its launcher killed) leaves it as the next resume reads
     * it (it wrote 0s, and the next resume lost the earlier sessions') */
    j->sum.wall_time_s = j->sum.base_wall_s;
    j->sum.startup_s = j->sum.base_startup_s;
    j->sum.restarts = j->before_restarts;
    s_gather_left_steps(j);
    run_log(j->r, "resuming (resume %d) from the shards' checkpoints", j->sum.resumes);
}

/* The summary's identity, written at once (complete = false). */
static int s_start_summary(job *j, error *err)
{
    experiment *e = j->e;
    run_summary *sum = &j->sum;
    experiment_summary(e, sum);
    backend_resolve(&e->backend, sum->device, sizeof sum->device);
    if (j->resume) {
        s_take_up(j);
    }
    return summary_write(j->r->dir, sum, err);
}

/* Whether every shard's checkpoint holds every worker done (a run stopped
 * after its workers finished, in its final evaluation or its write-up):
 * workers started again found the shards gone, which had nothing to wait
 * for, and every resume failed. */
static bool s_workers_were_done(const job *j)
{
    for (int k = 0; k < j->e->servers; k++) {
        char path[4800];
        checkpoint_path(path, sizeof path, j->r->dir, k);
        bool done;
        error ignored;
        if (checkpoint_workers_done(path, j->e->workers, &done, NULL, &ignored) < 0 || !done) {
            return false;
        }
    }
    return true;
}

/* Starts the shards and the evaluator (the workers follow its first
 * report) and supervises the job to its end. */
static int s_run(job *j, error *err)
{
    experiment *e = j->e;
    int pipe_fds[2];
    if (pipe(pipe_fds) != 0) {
        return error_set(err, ERROR_RUNTIME, "launcher: cannot make a pipe: %s", strerror(errno));
    }
    /* no child inherits either end but the evaluator its write end */
    fcntl(pipe_fds[0], F_SETFD, FD_CLOEXEC);
    fcntl(pipe_fds[1], F_SETFD, FD_CLOEXEC);
    j->report_fd = pipe_fds[0];
    fcntl(j->report_fd, F_SETFL, O_NONBLOCK);
    snprintf(j->report_arg, sizeof j->report_arg, "--report_fd=%d", pipe_fds[1]);
    snprintf(j->run_arg, sizeof j->run_arg, "--run_dir=%s", j->r->dir);
    int i = 0;
    for (int k = 0; k < e->servers; k++) {
        j->children[i++] = (child){.role = ROLE_PS, .task = k};
    }
    j->children[i++] = (child){.role = ROLE_EVALUATOR, .task = 0};
    for (int w = 0; w < e->workers; w++) {
        j->children[i++] = (child){.role = ROLE_WORKER, .task = w};
    }
    for (i = 0; i < j->count; i++) {
        j->procs[i] = &j->children[i].p;
    }
    j->started = run_wall();
    stop_install();
    if (j->resume && s_workers_were_done(j)) {   /* no worker to start: the shards and the
                                                  * evaluator close the run */
        j->workers_started = true;
        for (i = 0; i < j->count; i++) {
            j->children[i].finished = j->children[i].role == ROLE_WORKER;
        }
        run_log(j->r, "launcher: every worker had finished before the interruption; the run "
                "is evaluated and written up");
    }
    for (i = 0; i < e->servers + 1; i++) {
        s_spawn(j, &j->children[i], pipe_fds[1]);
    }
    close(pipe_fds[1]);   /* the evaluator holds the only write end */
    int rc = s_supervise(j, err);
    s_stop_children(j);
    return rc;   /* the handlers stay through s_finish (launcher_train) */
}

/* Steps and shard counters merged, the summary finished and written. */
static int s_finish(job *j, int rc, error *err)
{
    run_summary *sum = &j->sum;
    double resumed_at, last_push;
    j->first_step = collect_shards(j->r, j->e->servers, sum, &resumed_at, &last_push);
    collect_steps(j->r, j->e->workers, &(steps_clock){.t0 = j->first_step}, 1);
    sum->restarts = j->before_restarts + j->restarts;
    if (j->resume) {
        /* the earlier sessions' rows, where the evaluator kept them: it
         * starts eval.csv anew when the shards resume from before their
         * first update */
        char path[4800];
        snprintf(path, sizeof path, "%s/eval.csv", j->r->dir);
        summary_take_evals(sum, path);
        double t;   /* a row the evaluator did not write again (its model's) still ends */
        long updates, samples;
        if (summary_evals_last_row(path, &t, &updates, &samples)) {
            j->last_eval_t = fmax(j->last_eval_t, t);
        }
    }
    /* training ended at the last push once the workers are done (not when
     * the launcher saw them exit: that adds their exit and its polling,
     * 10-30 ms), or at the evaluation that saw it diverge, or now (a
     * failure) */
    double end = j->workers_done_at > 0 ? (last_push > 0 ? last_push : j->workers_done_at)
                 : j->diverged_at > 0 ? j->diverged_at : run_wall();
    double first = j->first_step > 0 ? j->first_step : fmin(end, j->started);
    /* a restored shard's clock leaves out the time it was down; never
     * before eval.csv's last row (stamped no earlier than the one before) */
    sum->time_s = fmax(end - first, j->last_eval_t);
    sum->startup_s = sum->base_startup_s +
                     (j->resume && resumed_at > 0 ? resumed_at : first) - j->started;
    sum->wall_time_s = sum->base_wall_s + run_wall() - j->started;
    summary_finish(sum, j->e->n_train);
    rc = summary_end(sum, j->r, rc, err);
    if (rc == 0 && sum->diverged) {
        summary_say_diverged(sum, j->r->dir);
    }
    run_log(j->r, "%s: test accuracy %.4f, %ld updates, staleness mean %.2f max %ld, "
            "%ld dropped, %ld rejected, %d restarts", rc == 0 ? "finished" : "failed",
            sum->final_test_acc, sum->updates, sum->staleness_mean, sum->staleness_max,
            sum->dropped, sum->rejected, j->restarts);
    error ignored;
    if (rc < 0 && j->resume && !j->workers_started && j->before_summary) {
        /* a resume that failed before its workers started trained nothing:
         * the summary stays the earlier sessions' (it counted a resume
         * that never was, its startup_s below 0 and its time_s the idle
         * days) */
        char path[4800];
        snprintf(path, sizeof path, "%s/summary.json", j->r->dir);
        run_write_atomic(path, j->before_summary, strlen(j->before_summary), NULL, 0, &ignored);
        return rc;
    }
    return summary_write(j->r->dir, sum, rc == 0 ? err : &ignored) < 0 ? -1 : rc;
}

int launcher_train(experiment *e, run *r, bool resume, error *err)
{
    job j = {.e = e, .r = r, .log_fd = -1, .report_fd = -1, .resume = resume};
    int rc = -1;
    if (proc_self(j.exe, sizeof j.exe, err) < 0) {
        return -1;
    }
    /* children find the cluster in their flags, never in our environment */
    unsetenv("TF_CONFIG");
    char log_path[4800];
    snprintf(log_path, sizeof log_path, "%s/log.txt", r->dir);
    j.log_fd = open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    j.log_from = j.log_fd >= 0 ? lseek(j.log_fd, 0, SEEK_END) : 0;
    j.count = e->servers + 1 + e->workers;
    j.children = calloc((size_t)j.count, sizeof *j.children);
    j.procs = calloc((size_t)j.count, sizeof *j.procs);
    if (j.log_fd < 0 || !j.children || !j.procs || s_endpoints(&j, err) < 0) {
        if (!err->msg[0]) {
            error_set(err, ERROR_RUNTIME, "launcher: out of memory");
        }
        goto done;
    }
    /* the evaluator appends to eval.csv itself */
    fclose(r->eval);
    r->eval = NULL;
    if (s_start_summary(&j, err) < 0) {
        goto done;
    }
    run_log(r, "%s: %d worker%s, %d server%s over %s (%s), restart = %s", e->algorithm_name,
            e->workers, e->workers == 1 ? "" : "s", e->servers, e->servers == 1 ? "" : "s",
            e->transport == TRANSPORT_IPC ? "ipc" : "tcp", j.ps_hosts,
            e->restart == RESTART_NEVER ? "never" : e->restart == RESTART_ON_FAILURE
                                                      ? "on-failure" : "exit-code");
    /* a signal while the run is written up (the shards' counters, the
     * steps, the summary) waits for it: it killed the launcher there, the
     * summary incomplete and without an error, and every process exited 0 */
    rc = s_finish(&j, s_run(&j, err), err);
    stop_uninstall();
done:
    s_remove_private_dir(&j);
    if (j.log_fd >= 0) {
        close(j.log_fd);
    }
    if (j.report_fd >= 0) {
        close(j.report_fd);
    }
    free(j.children);
    free(j.procs);
    free(j.before_summary);
    free(j.ps_hosts);
    free(j.worker_hosts);
    return rc;
}
