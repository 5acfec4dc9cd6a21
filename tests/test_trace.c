/* test_trace.c: device traces read as core/trace.h says, and every kind of
 * malformed file refused naming its line and column. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/trace.h"

static char s_path[64];

static void s_write(const char *text)
{
    snprintf(s_path, sizeof s_path, "/tmp/asgd-trace-%d.csv", (int)getpid());
    FILE *f = fopen(s_path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_a_trace_is_read_whole(void **state)
{
    (void)state;
    s_write("# a comment\n\ndevice,speed,bandwidth,latency,off\n"
            "0,1,,,\n"
            "1,3.5,2e7,0.02,0.5-1.5 4-4.25\n"
            "2,0.5,1e9,0,\r\n"
            "3,1,,,5e-05-0.25 0.25-0.5\n");   /* an exponent; touching intervals */
    trace t;
    error err = {0};
    assert_int_equal(trace_load(&t, s_path, &err), 0);
    assert_int_equal(t.n, 4);
    assert_true(t.devices[0].speed == 1 && t.devices[0].bandwidth == 0 &&
                t.devices[0].latency < 0 && t.devices[0].noff == 0);
    const trace_device *d = trace_device_of(&t, 5);   /* 5 mod 4 */
    assert_ptr_equal(d, &t.devices[1]);
    assert_true(d->speed == 3.5 && d->bandwidth == 2e7 && d->latency == 0.02);
    assert_int_equal(d->noff, 2);
    double until = 0;
    assert_false(trace_away(d, 0.49, &until));
    assert_true(trace_away(d, 0.5, &until) && until == 1.5);
    assert_false(trace_away(d, 1.5, &until));
    assert_true(trace_away(d, 4.1, &until) && until == 4.25);
    assert_true(t.devices[2].latency == 0);
    d = &t.devices[3];
    assert_true(d->noff == 2 && d->off_from[0] == 5e-05 && d->off_to[1] == 0.5);
    assert_true(trace_away(d, 0.25, &until) && until == 0.5);
    /* touching intervals are one stretch away: a real worker once slept to
     * 0.25 and trained a minibatch inside the second */
    assert_true(trace_away(d, 0.1, &until) && until == 0.5);
    trace_free(&t);
    unlink(s_path);
}

static void test_bad_traces_name_line_and_column(void **state)
{
    (void)state;
    const char *head = "device,speed,bandwidth,latency,off\n";
    const struct {
        const char *rows, *where;
    } cases[] = {
        {"0,1,,,\n2,1,,,\n", ":3: column 1"},           /* devices out of order */
        {"0,0,,,\n", ":2: column 2"},                   /* speed 0 */
        {"0,fast,,,\n", ":2: column 2"},
        {"0,1e300,,,\n", ":2: column 2"},               /* a run that would never end */
        {"0,0x10,,,\n", ":2: column 2"},                /* hex, as no config number is */
        {"0,1,-5,,\n", ":2: column 3"},                 /* bandwidth below 0 */
        {"0,1,1e-300,,\n", ":2: column 3"},             /* below 1 byte/s: never ends */
        {"0,1,,-1,\n", ":2: column 4"},
        {"0,1,,,2-1\n", ":2: column 5"},                /* ends before it starts */
        {"0,1,,,1-3 2-4\n", ":2: column 5"},            /* overlapping */
        {"0,1,,,1:3\n", ":2: column 5"},
        {"0,1,,,-1-3\n", ":2: column 5"},
        {"0,1,,\n", ":2: column 5"},                    /* a column short: off */
        {"0,1,,,,\n", ":2: column 6"},                  /* one too many */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[256];
        snprintf(text, sizeof text, "%s%s", head, cases[i].rows);
        s_write(text);
        trace t;
        error err = {0};
        assert_int_equal(trace_load(&t, s_path, &err), -1);
        assert_int_equal(err.status, ERROR_USAGE);
        if (!strstr(err.msg, cases[i].where)) {
            fail_msg("%s: \"%s\" does not say %s", cases[i].rows, err.msg, cases[i].where);
        }
        assert_null(t.devices);
    }
    s_write("speed,device\n0,1\n");
    trace t;
    error err = {0};
    assert_int_equal(trace_load(&t, s_path, &err), -1);
    assert_non_null(strstr(err.msg, "expected the header"));
    s_write(head);
    assert_int_equal(trace_load(&t, s_path, &err), -1);
    assert_non_null(strstr(err.msg, "no device"));
    unlink(s_path);
    assert_int_equal(trace_load(&t, s_path, &err), -1);
    assert_non_null(strstr(err.msg, "cannot read"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_trace_is_read_whole),
        cmocka_unit_test(test_bad_traces_name_line_and_column),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
