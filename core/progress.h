/* progress.h: where a command stands, on stderr, wherever it runs.
 *
 * On a terminal, one line rewritten in place, at most 4 times a second.
 * Otherwise (CI, nohup, a cluster job's log) a whole line every
 * ASGD_PROGRESS_EVERY seconds (default 5), so that a log shows the run
 * moving without flooding; the last line is always printed. Each line is
 * the caller's text, the time elapsed and, once something is done, an
 * estimate of the time left from the fraction done. */
#ifndef ASGD_PROGRESS_H
#define ASGD_PROGRESS_H

#include <stdbool.h>

typedef struct progress {
    bool tty;
    double every;             /* seconds between lines when not on a terminal */
    double started, last;     /* wall clock (run_wall) */
    double first_done;        /* the first share done past 0 it was told of */
    double first_at;          /* when (0: not yet); a caller whose work has no start-up
                                 sets it to started, for the pace from the start */
    bool open;                /* a terminal line is waiting for its newline */
} progress;

void progress_start(progress *p);
/* Whether a line is due now; a final one always is. */
bool progress_due(const progress *p, bool final);
/* Prints text (one line, no newline) if a line is due, with the elapsed
 * time and, when 0 < done < 1, the time left at the pace since the first
 * call that had done past 0 (the start-up before it, loading data and a
 * first evaluation, made a CNN's first ETA 5 min for an 18 s run); final
 * ends the line. */
void progress_say(progress *p, bool final, double done, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
