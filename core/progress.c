/* progress.c: one line of progress on stderr (progress.h). */
#include "core/progress.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/run.h"

void progress_start(progress *p)
{
    const char *every = getenv("ASGD_PROGRESS_EVERY");
    char *end = NULL;
    double e = every ? strtod(every, &end) : 5;
    *p = (progress){.tty = isatty(STDERR_FILENO) != 0,
                    .every = every && end != every && e >= 0 ? e : 5,
                    .started = run_wall()};
    p->last = p->started;
}

bool progress_due(const progress *p, bool final)
{
    return final || run_wall() - p->last >= (p->tty ? 0.25 : p->every);
}

/* "12 s", "3 min 20 s", "1 h 05 min". */
static void s_duration(char *out, size_t n, double s)
{
    long t = (long)(s + 0.5);
    if (t < 60) {
        snprintf(out, n, "%ld s", t);
    } else if (t < 3600) {
        snprintf(out, n, "%ld min %02ld s", t / 60, t % 60);
    } else {
        snprintf(out, n, "%ld h %02ld min", t / 3600, t / 60 % 60);
    }
}

void progress_say(progress *p, bool final, double done, const char *fmt, ...)
{
    if (done > 0 && p->first_at == 0) {
        p->first_done = done;
        p->first_at = run_wall();
    }
    if (!progress_due(p, final)) {
        return;
    }
    double now = run_wall(), elapsed = now - p->started;
    p->last = now;
    char text[512], took[32], left[32] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    s_duration(took, sizeof took, elapsed);
    if (!final && done > p->first_done && done < 1 && p->first_at > 0) {
        s_duration(left, sizeof left,
                   (now - p->first_at) * (1 - done) / (done - p->first_done));
    }
    fprintf(stderr, "%s%s | %s%s%s%s", p->tty ? "\r" : "", text, took, left[0] ? ", ETA " : "",
            left, p->tty && !final ? "   " : "\n");
    p->open = p->tty && !final;
    fflush(stderr);
}
