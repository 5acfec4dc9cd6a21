/* sweep.c: running a sweep's runs, several at a time, resumably. */
#include "sweep/sweep.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/file.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/proc.h"
#include "core/progress.h"
#include "core/run.h"
#include "core/stop.h"
#include "sweep/grid.h"

/* The runs in flight and the tallies of a sweep being run. */
typedef struct runner {
    sweep *s;
    char exe[4096];
    int log_fd;
    long capacity;            /* processes at once: -j, never more than the cores */
    int weight, running, next;
    int done, skipped, failed, finished_here;
    proc **procs;             /* each run's proc, for proc_reap and proc_stop */
} runner;

/* Where the sweep stands, and why no more runs go at once when one run's
 * processes fill the cores. */
static void s_progress(const runner *rn, progress *p, bool final)
{
    if (!progress_due(p, final)) {
        return;
    }
    int heaviest = 1;
    for (int r = rn->next; r < rn->s->nruns; r++) {
        heaviest = rn->s->runs[r].weight > heaviest ? rn->s->runs[r].weight : heaviest;
    }
    char why[160] = "";
    if (!final && rn->running <= 1 && heaviest >= rn->capacity && rn->next < rn->s->nruns) {
        snprintf(why, sizeof why, " (one at a time: a run is %d processes, at most %ld at once "
                 "on this machine)", heaviest, rn->capacity);
    }
    int todo = rn->s->nruns - rn->skipped;
    progress_say(p, final, todo > 0 ? (double)(rn->done - rn->skipped) / todo : 1,
                 "sweep %s: %d/%d runs done, %d running, %d failed%s", rn->s->name, rn->done,
                 rn->s->nruns, rn->running, rn->failed, why);
}

/* Starts `asgd train BASE overrides...` for run, in a fresh folder: an
 * incomplete one from an interrupted sweep is started afresh. */
static void s_start(runner *rn, sweep_run *run)
{
    const char *argv[SWEEP_MAX_KEYS + 12];
    int argc = 0;
    argv[argc++] = rn->exe;
    argv[argc++] = "train";
    argv[argc++] = rn->s->base;
    for (int i = 0; i < run->noverrides; i++) {
        argv[argc++] = run->overrides[i];
    }
    argv[argc] = NULL;
    error why;
    if (run_remove_dir(run->dir, &why) < 0) {
        dprintf(rn->log_fd, "sweep: %s\n", why.msg);
    }
    pid_t pid = proc_spawn(rn->exe, (char *const *)argv, rn->log_fd, -1);
    if (pid < 0) {   /* counted as a failed run */
        run->p.pid = 0;
        rn->failed++;
        dprintf(rn->log_fd, "sweep: run %s: cannot start (fork failed)\n", run->id);
        return;
    }
    run->p.pid = pid;
    rn->weight += run->weight;
    rn->running++;
}

/* Starts runs in order while they fit in the capacity. */
static void s_fill(runner *rn)
{
    while (!stop_requested() && rn->next < rn->s->nruns) {
        sweep_run *run = &rn->s->runs[rn->next];
        if (run->complete) {
            rn->next++;
            continue;
        }
        if (rn->weight > 0 && rn->weight + run->weight > rn->capacity) {
            return;
        }
        s_start(rn, run);
        rn->next++;
    }
}

/* A run has exited: complete, or failed (not when the sweep was stopped). */
static void s_finished(runner *rn, sweep_run *run)
{
    rn->running--;
    rn->weight -= run->weight;
    run->complete = proc_succeeded(run->p.status) && sweep_complete(run->dir);
    if (run->complete) {
        rn->done++;
        rn->finished_here++;
    } else if (!stop_requested()) {
        rn->failed++;
        char why[64];
        dprintf(rn->log_fd, "sweep: run %s %s\n", run->id,
                proc_describe(run->p.status, why, sizeof why));
    }
}

/* Stops every run in flight (each stops its own children) and tallies
 * them. */
static void s_stop_all(runner *rn)
{
    bool *was = calloc((size_t)rn->s->nruns, sizeof *was);
    for (int r = 0; was && r < rn->s->nruns; r++) {
        was[r] = rn->s->runs[r].p.pid > 0;
    }
    proc_stop(rn->procs, rn->s->nruns, 10.0);
    for (int r = 0; r < rn->s->nruns; r++) {
        if (was && was[r]) {
            s_finished(rn, &rn->s->runs[r]);
        }
    }
    rn->running = 0;
    free(was);
}

/* Runs every incomplete run; on SIGINT / SIGTERM stops those in flight. */
static void s_run_all(runner *rn, progress *p)
{
    stop_install();
    for (;;) {
        s_fill(rn);
        if (stop_requested()) {
            s_stop_all(rn);
        }
        if (rn->running == 0) {
            break;
        }
        int i;
        while ((i = proc_reap(rn->procs, rn->s->nruns)) >= 0) {
            s_finished(rn, &rn->s->runs[i]);
        }
        s_progress(rn, p, false);
        run_sleep(0.05);
    }
    stop_uninstall();
}

/* Opens OUT/NAME/sweep.log, where the runs' errors go, and holds it
 * locked: a second sweep into the same folder started each run afresh by
 * removing its folder, the other's run in flight among them. */
static int s_open_log(const sweep *s, char *dir, size_t n, char *log_path, size_t ln,
                      error *err)
{
    snprintf(dir, n, "%s/%s", s->out, s->name);
    if (run_make_dirs(dir, err) < 0) {
        return -1;
    }
    snprintf(log_path, ln, "%s/sweep.log", dir);
    int fd = open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        return error_set(err, ERROR_RUNTIME, "%s: cannot write: %s", log_path, strerror(errno));
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno == ENOSYS || errno == EOPNOTSUPP || errno == ENOLCK) {
            /* a file system without locks (Lustre's noflock, some FUSE and
             * NFS mounts): the sweep goes on, undefended */
            fprintf(stderr, "asgd sweep: %s: cannot lock (%s): a second sweep into this "
                    "folder would not be noticed\n", log_path, strerror(errno));
            return fd;
        }
        int busy = errno == EWOULDBLOCK;
        close(fd);
        return busy ? error_set(err, ERROR_USAGE, "%s: another asgd sweep is running into this "
                                "folder; wait for it, or give this one another [sweep] out or "
                                "name", dir)
                    : error_set(err, ERROR_RUNTIME, "%s: cannot lock: %s", log_path,
                                strerror(errno));
    }
    return fd;
}

/* Says on stderr which complete runs in dir (OUT/NAME) are not of s's
 * grid (an earlier grid's, or seeds no longer asked for): results.csv
 * leaves them out, where asgd plot and asgd report of the folder, which
 * draw every complete run under it, would take them in without a word. */
static void s_say_runs_of_other_grids(const sweep *s, const char *dir)
{
    DIR *d = opendir(dir);
    int others = 0;
    char first[300] = "";
    for (struct dirent *de; d && (de = readdir(d));) {
        char run[4600];
        snprintf(run, sizeof run, "%s/%s", dir, de->d_name);
        bool ours = de->d_name[0] == '.';
        for (int r = 0; !ours && r < s->nruns; r++) {
            ours = strcmp(s->runs[r].id, de->d_name) == 0;
        }
        if (!ours && sweep_complete(run)) {
            if (others++ == 0) {
                snprintf(first, sizeof first, "%.280s", de->d_name);
            }
        }
    }
    if (d) {
        closedir(d);
    }
    if (others > 0) {
        fprintf(stderr, "asgd sweep: %s also holds %d complete run%s of another grid or seed "
                "list (%s%s): results.csv leaves %s out, but asgd plot and asgd report of "
                "the folder draw every complete run under it; move %s aside, or give the "
                "sweep another name\n", dir, others, others > 1 ? "s" : "", first,
                others > 1 ? ", ..." : "", others > 1 ? "them" : "it",
                others > 1 ? "them" : "it");
    }
}

int sweep_main(const char *path, long jobs, error *err)
{
    sweep s;
    runner rn = {.s = &s, .log_fd = -1};
    char dir[4200], log_path[4300];
    int rc = -1;
    if (sweep_read(&s, path, err) < 0 || proc_self(rn.exe, sizeof rn.exe, err) < 0 ||
        (rn.log_fd = s_open_log(&s, dir, sizeof dir, log_path, sizeof log_path, err)) < 0 ||
        !(rn.procs = calloc((size_t)s.nruns, sizeof *rn.procs))) {
        if (!err->msg[0]) {
            error_set(err, ERROR_RUNTIME, "out of memory");
        }
        goto done;
    }
    long cores = proc_cores();   /* those it may use: taskset, a container's quota */
    rn.capacity = jobs < cores ? jobs : cores;
    rn.capacity = rn.capacity < 1 ? 1 : rn.capacity;
    for (int r = 0; r < s.nruns; r++) {
        rn.procs[r] = &s.runs[r].p;
        rn.done += s.runs[r].complete;
    }
    rn.skipped = rn.done;
    progress p;
    progress_start(&p);
    p.first_at = p.started;   /* runs finish whole and start at once: the pace is from
                               * the start (from the first run done, a 2-run sweep
                               * never had an ETA) */
    s_run_all(&rn, &p);
    int stopped = stop_requested();
    s_progress(&rn, &p, true);
    if (sweep_results(&s, err) < 0) {
        goto done;
    }
    printf("%s/results.csv: %d runs, %d ran now, %d already complete, %d failed\n", dir,
           s.nruns, rn.finished_here, rn.skipped, rn.failed);
    s_say_runs_of_other_grids(&s, dir);
    if (stopped) {
        error_set(err, ERROR_RUNTIME, "interrupted: %d of %d runs complete; run the same "
                  "command again to finish the rest", rn.done, s.nruns);
    } else if (rn.failed) {
        error_set(err, ERROR_RUNTIME, "%d of %d runs failed; see %s", rn.failed, s.nruns,
                  log_path);
    } else {
        rc = 0;
    }
done:
    if (rn.log_fd >= 0) {
        close(rn.log_fd);
    }
    free(rn.procs);
    sweep_free(&s);
    return rc;
}
