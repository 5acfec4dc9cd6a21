/* proc.c: spawning, reaping and stopping child processes; the CPUs this
 * process may keep busy. */
#define _GNU_SOURCE   /* CPU_COUNT */
#include "core/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/run.h"

int proc_self(char *buf, size_t n, error *err)
{
    ssize_t len = readlink("/proc/self/exe", buf, n - 1);
    if (len <= 0) {
        return error_set(err, ERROR_RUNTIME, "cannot find the asgd binary: %s", strerror(errno));
    }
    buf[len] = '\0';
    return 0;
}

/* The first line of path as two numbers (a, b); how many were read. */
static int s_read_two(const char *path, const char *format, long *a, long *b)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        return 0;
    }
    int got = fscanf(f, format, a, b);
    fclose(f);
    return got < 0 ? 0 : got;
}

long proc_quota_cores(const char *mount, const char *where, bool v2)
{
    char dir[4096], path[4200];
    snprintf(dir, sizeof dir, "%s%s", mount, strcmp(where, "/") == 0 ? "" : where);
    struct stat st;
    if (stat(dir, &st) != 0) {
        snprintf(dir, sizeof dir, "%s", mount);
    }
    long tightest = 0;
    for (;;) {
        long quota = -1, period = 0;
        if (v2) {
            char max[32];
            snprintf(path, sizeof path, "%s/cpu.max", dir);
            FILE *m = fopen(path, "r");
            if (m && fscanf(m, "%31s %ld", max, &period) == 2 && strcmp(max, "max") != 0) {
                quota = strtol(max, NULL, 10);
            }
            if (m) {
                fclose(m);
            }
        } else {
            long ignored;
            snprintf(path, sizeof path, "%s/cpu.cfs_quota_us", dir);
            if (s_read_two(path, "%ld%ld", &quota, &ignored) < 1) {
                quota = -1;
            }
            snprintf(path, sizeof path, "%s/cpu.cfs_period_us", dir);
            if (s_read_two(path, "%ld%ld", &period, &ignored) < 1) {
                period = 0;
            }
        }
        long cores = quota > 0 && period > 0 ? (quota + period - 1) / period : 0;
        if (cores > 0 && (tightest == 0 || cores < tightest)) {
            tightest = cores;
        }
        char *slash = strrchr(dir, '/');
        if (strlen(dir) <= strlen(mount) || !slash) {
            return tightest;
        }
        *slash = '\0';   /* the cgroup above */
    }
}

/* This process's cgroup CPU quota in CPUs, rounded up; 0 for none. */
static long s_cgroup_cores(void)
{
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (!f) {
        return 0;
    }
    char line[4096], v2[4096] = "", v1[4096] = "";
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *controllers = strchr(line, ':'), *where = controllers ? strchr(controllers + 1, ':')
                                                                    : NULL;
        if (!where) {
            continue;
        }
        *where++ = '\0';
        *controllers++ = '\0';   /* "0::/path" (v2), "4:cpu,cpuacct:/path" (v1) */
        if (strcmp(line, "0") == 0 && controllers[0] == '\0') {
            snprintf(v2, sizeof v2, "%s", where);
        }
        for (char *save, *c = strtok_r(controllers, ",", &save); c;
             c = strtok_r(NULL, ",", &save)) {
            if (strcmp(c, "cpu") == 0) {
                snprintf(v1, sizeof v1, "%s", where);
            }
        }
    }
    fclose(f);
    struct stat st;
    if (v2[0] && stat("/sys/fs/cgroup/cgroup.controllers", &st) == 0) {   /* v2 alone */
        return proc_quota_cores("/sys/fs/cgroup", v2, true);
    }
    return v1[0] ? proc_quota_cores("/sys/fs/cgroup/cpu", v1, false) : 0;
}

long proc_cores(void)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) == 0 && CPU_COUNT(&allowed) > 0) {
        cores = CPU_COUNT(&allowed);
    }
    long quota = s_cgroup_cores();
    if (quota > 0 && quota < cores) {
        cores = quota;
    }
    return cores > 0 ? cores : 1;
}

pid_t proc_spawn(const char *exe, char *const argv[], int log_fd, int keep_fd)
{
    pid_t parent = getpid();
    fflush(NULL);
    pid_t pid = fork();
    if (pid != 0) {
        return pid;
    }
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) {   /* the parent died before prctl */
        _exit(1);
    }
    int devnull = open("/dev/null", O_RDWR);
    dup2(devnull, STDIN_FILENO);
    dup2(devnull, STDOUT_FILENO);
    dup2(log_fd, STDERR_FILENO);
    if (keep_fd >= 0) {
        fcntl(keep_fd, F_SETFD, 0);   /* survives exec; everything else is close-on-exec */
    }
    execv(exe, argv);
    _exit(127);
}

int proc_reap(proc *const procs[], int n)
{
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        for (int i = 0; i < n; i++) {
            if (procs[i]->pid == pid) {
                procs[i]->pid = 0;
                procs[i]->status = status;
                return i;
            }
        }
    }
    return -1;
}

void proc_stop(proc *const procs[], int n, double grace)
{
    for (int i = 0; i < n; i++) {
        if (procs[i]->pid > 0) {
            kill(procs[i]->pid, SIGTERM);
        }
    }
    double deadline = run_now() + grace;
    for (;;) {
        int alive = 0;
        for (int i = 0; i < n; i++) {
            proc *p = procs[i];
            if (p->pid > 0 && waitpid(p->pid, &p->status, WNOHANG) == p->pid) {
                p->pid = 0;
            }
            alive += p->pid > 0;
        }
        if (!alive) {
            return;
        }
        if (run_now() > deadline) {
            break;
        }
        run_sleep(0.02);
    }
    for (int i = 0; i < n; i++) {
        if (procs[i]->pid > 0) {
            kill(procs[i]->pid, SIGKILL);
            waitpid(procs[i]->pid, &procs[i]->status, 0);
            procs[i]->pid = 0;
        }
    }
}

const char *proc_describe(int status, char *buf, size_t n)
{
    if (WIFSIGNALED(status)) {
        snprintf(buf, n, "was killed by signal %d", WTERMSIG(status));
    } else {
        snprintf(buf, n, "exited with status %d", WEXITSTATUS(status));
    }
    return buf;
}

int proc_exit_code(int status)
{
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

int proc_succeeded(int status)
{
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}
