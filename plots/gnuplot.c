/* gnuplot.c: the embedded templates and the gnuplot pipe. */
#include "plots/gnuplot.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/stop.h"

const char *gnuplot_template_text(const char *name)
{
    for (const gnuplot_template *t = gnuplot_templates; t->name; t++) {
        if (strcmp(t->name, name) == 0) {
            return t->text;
        }
    }
    return NULL;
}

void gnuplot_quote(char *out, size_t n, const char *text)
{
    size_t at = 0;
    if (n < 3) {
        return;
    }
    out[at++] = '\'';
    for (const char *p = text; *p && at + 3 < n; p++) {
        if (*p == '\'') {
            out[at++] = '\'';
        }
        out[at++] = *p == '\n' ? ' ' : *p;
    }
    out[at++] = '\'';
    out[at] = '\0';
}

void gnuplot_data_quote(char *out, size_t n, const char *text)
{
    size_t at = 0;
    if (n < 3) {
        return;
    }
    out[at++] = '"';
    for (const char *p = text; *p && at + 2 < n; p++) {
        /* gnuplot reads a data column to the next '"', backslashes and all */
        out[at++] = *p == '\n' ? ' ' : *p == '"' ? '\'' : *p;
    }
    out[at++] = '"';
    out[at] = '\0';
}

bool gnuplot_available(void)
{
    const char *path = getenv("PATH");
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path ? path : "/usr/bin:/bin");
    for (char *save, *d = strtok_r(buf, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        char exe[4200];
        snprintf(exe, sizeof exe, "%s/gnuplot", d);
        if (access(exe, X_OK) == 0) {
            return true;
        }
    }
    return false;
}

int gnuplot_draw(const char *dir, const char *script, const char *stem, const char *figure,
                 error *err)
{
    int in[2];
    if (pipe(in) < 0) {
        return error_set(err, ERROR_RUNTIME, "cannot start gnuplot: %s", strerror(errno));
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(in[1]);
        if (dup2(in[0], STDIN_FILENO) < 0) {
            _exit(127);
        }
        close(in[0]);
        execlp("gnuplot", "gnuplot", (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    FILE *pipe_in = pid > 0 ? fdopen(in[1], "w") : NULL;
    if (!pipe_in) {
        close(in[1]);
        if (pid > 0) {
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
        }
        return error_set(err, ERROR_RUNTIME, "cannot start gnuplot: %s", strerror(errno));
    }
    char quoted_dir[4200], quoted_script[2200], quoted_stem[2200], quoted_figure[2200];
    gnuplot_quote(quoted_dir, sizeof quoted_dir, dir);
    gnuplot_quote(quoted_script, sizeof quoted_script, script);
    gnuplot_quote(quoted_stem, sizeof quoted_stem, stem);
    gnuplot_quote(quoted_figure, sizeof quoted_figure, figure);
    fprintf(pipe_in, "cd %s\nasgd_stem = %s\nasgd_figure = %s\nload %s\n", quoted_dir,
            quoted_stem, quoted_figure, quoted_script);
    fclose(pipe_in);
    /* a stop (stop.h) interrupts the wait: gnuplot is stopped too, where it
     * was not in the terminal's process group (a SIGTERM to asgd alone) */
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            return error_set(err, ERROR_RUNTIME, "gnuplot: %s", strerror(errno));
        }
        if (stop_requested()) {
            kill(pid, SIGTERM);
        }
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        return error_set(err, ERROR_RUNTIME, "gnuplot failed (status %d; its messages are "
                         "above)",
                         WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    }
    return 0;
}
