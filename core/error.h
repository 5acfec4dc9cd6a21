/* error.h: how asgd reports failures to its callers.
 *
 * A function that can fail on external input (a file, a config value, a
 * message) takes a `struct error *` and returns -1 after filling it; the
 * message is one line, ready to print, and `status` is the process exit
 * status the failure deserves (ERROR_USAGE for bad config or input files,
 * ERROR_RETRYABLE for a peer not there yet, ERROR_RUNTIME otherwise).
 * Programmer errors are assert()s instead. */
#ifndef ASGD_ERROR_H
#define ASGD_ERROR_H

/* ERROR_RETRYABLE: a shard that did not answer within [cluster] timeout
 * (its pod not yet scheduled, or being made anew), or whose place another
 * process still held. A later try of the same process may succeed, so it
 * exits 138 (128 + SIGUSR1), the code Kubeflow's training operator keeps
 * for a user's retryable error: its restartPolicy ExitCode, and asgd's
 * restart = exit-code, retry it where they take 1 for good. */
enum { ERROR_NONE = 0, ERROR_RUNTIME = 1, ERROR_USAGE = 2, ERROR_RETRYABLE = 138 };
/* A process stopped by signal sig before its work was done exits with
 * 128 + sig, as a shell reports one killed by it: a launcher such as
 * Kubernetes' (restartPolicy ExitCode) or asgd's (restart = exit-code)
 * retries it, and never takes it for success. */
#define ERROR_SIGNALLED(sig) (128 + (sig))

typedef struct error {
    int status;
    char msg[1024];
} error;

/* Fills err (if not NULL) with a printf-style message; returns -1 so that
 * callers can write `return error_set(err, ...)`. The message is made
 * printable whatever the input it quotes: control characters and bytes
 * that are not valid UTF-8 become \xNN, so a binary file named in an
 * error reaches the terminal as text. */
int error_set(error *err, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
