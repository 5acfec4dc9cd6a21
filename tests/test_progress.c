/* test_progress.c: the progress line's time left (core/progress.h) is at
 * the pace of the work done since the first line that showed any, not
 * over the start-up before it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/progress.h"
#include "support.h"

/* A second of start-up (loading, a first evaluation), then a tenth of the
 * work done, then another tenth at once: at that pace the rest takes no
 * time, where the elapsed time over the share done (1 s over 0.2) said
 * 4 s (a CNN's first ETA was 5 min for an 18 s run). Lines go to a file
 * in place of stderr. */
static void test_the_time_left_leaves_out_the_start_up(void **state)
{
    support_fixture *f = *state;
    setenv("ASGD_PROGRESS_EVERY", "0", 1);
    char path[600];
    snprintf(path, sizeof path, "%s/progress.txt", f->dir);
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    assert_non_null(freopen(path, "w", stderr));
    progress p;
    progress_start(&p);
    nanosleep(&(struct timespec){.tv_sec = 1}, NULL);
    progress_say(&p, false, 0.1, "first");
    progress_say(&p, false, 0.2, "second");
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    unsetenv("ASGD_PROGRESS_EVERY");
    char *text = support_read_file(path);
    assert_non_null(text);
    const char *first = strstr(text, "first"), *second = strstr(text, "second");
    assert_non_null(first);
    assert_non_null(second);
    const char *early = strstr(first, "ETA");
    assert_true(early == NULL || early > second);   /* the first line: no pace yet */
    const char *eta = strstr(second, "ETA ");
    assert_non_null(eta);
    long left = strtol(eta + 4, NULL, 10);
    if (left >= 3 || strstr(eta, "min")) {   /* 8 x the time between the two calls */
        fail_msg("the time left counted the start-up: %s", text);
    }
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_the_time_left_leaves_out_the_start_up,
                                        support_fixture_setup, support_fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
