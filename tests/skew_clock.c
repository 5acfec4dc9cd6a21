/* skew_clock.c: an LD_PRELOAD shim for the tests: the wall clock
 * (CLOCK_REALTIME) of the process it is loaded into reads SKEW_S seconds
 * ahead (negative: behind), as on a host whose clock is not synchronised
 * with the others'. Network namespaces share one clock, so a test of
 * hosts whose clocks differ has no other way to make one. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>

int clock_gettime(clockid_t id, struct timespec *ts)
{
    static int (*real)(clockid_t, struct timespec *);
    if (!real) {
        *(void **)&real = dlsym(RTLD_NEXT, "clock_gettime");
    }
    int rc = real(id, ts);
    const char *skew = getenv("SKEW_S");
    if (rc == 0 && id == CLOCK_REALTIME && skew) {
        long long ns = (long long)ts->tv_nsec + (long long)(strtod(skew, NULL) * 1e9);
        ts->tv_sec += (time_t)(ns / 1000000000LL);
        ns %= 1000000000LL;
        if (ns < 0) {
            ns += 1000000000LL;
            ts->tv_sec--;
        }
        ts->tv_nsec = (long)ns;
    }
    return rc;
}
