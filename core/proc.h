/* proc.h: child processes of this binary, started, supervised and stopped
 * one way by the launcher (a job's shards, evaluator and workers) and by
 * sweeps (one `asgd train` per run).
 *
 * A child runs with stdin and stdout on /dev/null and stderr on a log
 * file, dies with its parent (PR_SET_PDEATHSIG), and inherits no file
 * descriptor but those and the one it is handed. Stopping is SIGTERM, a
 * grace period, then SIGKILL, and every child is reaped: nothing outlives
 * its supervisor. */
#ifndef ASGD_PROC_H
#define ASGD_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "core/error.h"

typedef struct proc {
    pid_t pid;                /* 0: not running */
    int status;               /* its last wait status */
} proc;

/* This binary's own path. */
int proc_self(char *buf, size_t n, error *err);

/* Starts exe with argv (argv[0] first, NULL-terminated): stderr to log_fd,
 * and keep_fd (>= 0) left open in the child under its own number. Returns
 * the pid, or -1 when fork fails. */
pid_t proc_spawn(const char *exe, char *const argv[], int log_fd, int keep_fd);

/* Reaps one finished child among procs, without waiting: its index (its
 * pid set to 0 and its status stored), or -1 when none has finished. */
int proc_reap(proc *const procs[], int n);

/* SIGTERM to every running child of procs, up to `grace` seconds for them
 * to exit, then SIGKILL; every one is reaped. */
void proc_stop(proc *const procs[], int n, double grace);

/* The CPUs this process may keep busy: its affinity mask's (taskset,
 * a cpuset), at most its cgroup's CPU quota rounded up (a container's
 * --cpus, a pod's CPU limit: cgroup v2's cpu.max or v1's
 * cpu.cfs_quota_us), at least 1; the host's online CPUs where neither
 * says. */
long proc_cores(void);
/* The CPU quota, rounded up to CPUs, set at cgroup `where` (a path below
 * the hierarchy's mount) or any cgroup above it: the tightest, 0 for none.
 * v2's cpu.max ("max 100000", "150000 100000"), else v1's cfs quota and
 * period. A path that is not there is read as the mount's root (a
 * container's cgroup named from outside its namespace). */
long proc_quota_cores(const char *mount, const char *where, bool v2);

/* "exited with status 3", "was killed by signal 9". */
const char *proc_describe(int status, char *buf, size_t n);
/* The exit code as Kubeflow's policies see it: 128 + signal when killed. */
int proc_exit_code(int status);
/* Exited by itself with status 0. */
int proc_succeeded(int status);

#endif
