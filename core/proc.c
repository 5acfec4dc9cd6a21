/* proc.c: spawning, reaping and stopping child processes. */
#include "core/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
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
