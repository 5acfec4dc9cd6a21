/* stop.c: SIGINT / SIGTERM / SIGHUP to a flag. */
#include "core/stop.h"

#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>

/* lock-free, so a handler may store it; atomic, so that worker threads
 * read it without a data race (a volatile sig_atomic_t is one there) */
static atomic_int s_signal;
static struct sigaction s_old_int, s_old_term, s_old_hup;
static int s_installed;   /* stop_install calls not yet undone (the main thread's) */

static void s_on_signal(int sig)
{
    atomic_store(&s_signal, sig);
}

void stop_install(void)
{
    if (s_installed++ > 0) {   /* within an outer one: a signal already caught stays */
        return;
    }
    atomic_store(&s_signal, 0);
    struct sigaction sa = {.sa_handler = s_on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &s_old_int);
    sigaction(SIGTERM, &sa, &s_old_term);
    /* a hangup (the terminal or ssh session closed) stops as SIGTERM does,
     * unless it is ignored (nohup, setsid's callers): then it stays so */
    sigaction(SIGHUP, NULL, &s_old_hup);
    if (s_old_hup.sa_handler != SIG_IGN) {
        sigaction(SIGHUP, &sa, NULL);
    }
}

int stop_requested(void)
{
    return atomic_load(&s_signal);
}

void stop_uninstall(void)
{
    if (s_installed == 0 || --s_installed > 0) {
        return;
    }
    sigaction(SIGINT, &s_old_int, NULL);
    sigaction(SIGTERM, &s_old_term, NULL);
    sigaction(SIGHUP, &s_old_hup, NULL);
}
