/* test_config.c: INI parsing, typed getters, overrides, unknown keys, and
 * the resolved config. */
#define _XOPEN_SOURCE 700   /* realpath */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/config.h"
#include "core/experiment.h"
#include "support.h"

static const char *const s_colors[] = {"red", "green", "blue", NULL};

static const char s_good[] =
    "; a comment\n"
    "[train]\n"
    "lr = 0.25\n"
    "batch = 32   ; inline comment\n"
    "\n"
    "[model]\n"
    "hidden = 256, 128,64\n"
    "color = green\n"
    "flag = yes\n"
    "name = mlp\n";

static void test_good_file_reads_every_type(void **state)
{
    (void)state;
    error err = {0};
    config *c = config_parse_string(s_good, "good.ini", &err);
    assert_non_null(c);
    double lr;
    long batch, hidden[4], epochs;
    int n, color;
    bool flag;
    const char *name;
    assert_int_equal(config_get_double(c, "train", "lr", 1, 0, 1, CONFIG_OPEN_LO, &lr, &err), 0);
    assert_true(lr == 0.25);
    assert_int_equal(config_get_int(c, "train", "batch", 1, 1, 100, &batch, &err), 0);
    assert_int_equal(batch, 32);
    assert_int_equal(config_get_int_list(c, "model", "hidden", "", 1, 1000, hidden, 4, &n, &err), 0);
    assert_int_equal(n, 3);
    assert_int_equal(hidden[0], 256);
    assert_int_equal(hidden[1], 128);
    assert_int_equal(hidden[2], 64);
    assert_int_equal(config_get_enum(c, "model", "color", "red", s_colors, &color, &err), 0);
    assert_int_equal(color, 1);
    assert_int_equal(config_get_bool(c, "model", "flag", false, &flag, &err), 0);
    assert_true(flag);
    assert_int_equal(config_get_string(c, "model", "name", "x", &name, &err), 0);
    assert_string_equal(name, "mlp");
    /* an absent key takes its default */
    assert_int_equal(config_get_int(c, "train", "epochs", 7, 1, 100, &epochs, &err), 0);
    assert_int_equal(epochs, 7);
    assert_int_equal(config_check_unused(c, NULL, NULL, NULL, &err), 0);
    config_destroy(&c);
    assert_null(c);
}

static void test_mistyped_key_names_file_line_and_key(void **state)
{
    (void)state;
    error err = {0};
    config *c = config_parse_string("[train]\nlr = 0.1\nbacth = 32\n", "exp.ini", &err);
    assert_non_null(c);
    double lr;
    long batch;
    assert_int_equal(config_get_double(c, "train", "lr", 1, 0, 1, 0, &lr, &err), 0);
    assert_int_equal(config_get_int(c, "train", "batch", 64, 1, 100, &batch, &err), 0);
    assert_int_equal(config_check_unused(c, NULL, NULL, NULL, &err), -1);
    assert_int_equal(err.status, ERROR_USAGE);
    assert_non_null(strstr(err.msg, "exp.ini:3:"));
    assert_non_null(strstr(err.msg, "[train] bacth"));
    assert_non_null(strstr(err.msg, "unknown key"));
    config_destroy(&c);
}

static void test_bad_values_are_rejected_with_their_line(void **state)
{
    (void)state;
    error err = {0};
    config *c = config_parse_string("[a]\nn = 12x\nm = 500\nx = 1.5\ny = nan\n"
                                    "z = 0\ncolor = purple\nlist = 1,,2\n", "bad.ini", &err);
    assert_non_null(c);
    long n;
    double x;
    int color, count;
    long list[4];
    assert_int_equal(config_get_int(c, "a", "n", 1, 0, 100, &n, &err), -1);
    assert_non_null(strstr(err.msg, "bad.ini:2: [a] n: expected an integer"));
    assert_int_equal(config_get_int(c, "a", "m", 1, 0, 100, &n, &err), -1);
    assert_non_null(strstr(err.msg, "bad.ini:3: [a] m: 500 is out of range [0, 100]"));
    assert_int_equal(config_get_double(c, "a", "x", 0.5, 0, 1, CONFIG_CLOSED, &x, &err), -1);
    assert_non_null(strstr(err.msg, "bad.ini:4:"));
    /* the value as written: "%g" said "1 is out of range [0, 1]" of 1.0000001 */
    config *near = config_parse_string("[a]\nx = 1.0000001\n", "near.ini", &err);
    assert_non_null(near);
    assert_int_equal(config_get_double(near, "a", "x", 0.5, 0, 1, CONFIG_CLOSED, &x, &err), -1);
    assert_non_null(strstr(err.msg, "near.ini:2: [a] x: 1.0000001 is out of range [0, 1]"));
    config_destroy(&near);
    assert_int_equal(config_get_double(c, "a", "y", 0.5, 0, 1, CONFIG_CLOSED, &x, &err), -1);
    assert_non_null(strstr(err.msg, "expected a number"));
    assert_int_equal(config_get_double(c, "a", "z", 0.5, 0, 1, CONFIG_OPEN_LO, &x, &err), -1);
    assert_non_null(strstr(err.msg, "bad.ini:6: [a] z: 0 is out of range (0, 1]"));
    assert_int_equal(config_get_enum(c, "a", "color", "red", s_colors, &color, &err), -1);
    assert_non_null(strstr(err.msg, "bad.ini:7: [a] color: \"purple\" is not one of red, green, blue"));
    assert_int_equal(config_get_int_list(c, "a", "list", "", 0, 9, list, 4, &count, &err), -1);
    assert_non_null(strstr(err.msg, "bad.ini:8:"));
    assert_int_equal(err.status, ERROR_USAGE);
    config_destroy(&c);
    /* decimal only, as integers are: 0x10 read as 16 for a number, and a
     * sweep took 64 and 0x40 for one value */
    c = config_parse_string("[a]\nlr = 0x10\nlist = 1,0x2\n", "hex.ini", &err);
    assert_int_equal(config_get_double(c, "a", "lr", 0.5, 0, 100, CONFIG_CLOSED, &x, &err), -1);
    assert_non_null(strstr(err.msg, "hex.ini:2: [a] lr: expected a number, got \"0x10\""));
    double xs[2];
    assert_int_equal(config_get_double_list(c, "a", "list", "", 0, 9, xs, 2, &count, &err), -1);
    assert_non_null(strstr(err.msg, "hex.ini:3:"));
    config_destroy(&c);
    /* '#' after a value is part of it for inih: the error says so; ';' ends it */
    c = config_parse_string("[a]\nn = 5  # five\nm = 6 ; six\n", "hash.ini", &err);
    assert_int_equal(config_get_int(c, "a", "n", 1, 0, 100, &n, &err), -1);
    assert_non_null(strstr(err.msg, "hash.ini:2: [a] n: expected an integer, got \"5  # five\" "
                                    "(a comment after a value starts with ';', not '#')"));
    assert_int_equal(config_get_int(c, "a", "m", 1, 0, 100, &n, &err), 0);
    assert_int_equal(n, 6);
    config_destroy(&c);
}

static void test_override_replaces_and_adds(void **state)
{
    (void)state;
    error err = {0};
    config *c = config_parse_string("[train]\nlr = 0.1\n", "o.ini", &err);
    assert_non_null(c);
    assert_int_equal(config_override(c, "train.lr=0.5", &err), 0);
    assert_int_equal(config_override(c, "train.batch=16", &err), 0);
    double lr;
    long batch;
    assert_int_equal(config_get_double(c, "train", "lr", 1, 0, 1, 0, &lr, &err), 0);
    assert_true(lr == 0.5);
    assert_int_equal(config_get_int(c, "train", "batch", 64, 1, 100, &batch, &err), 0);
    assert_int_equal(batch, 16);
    /* a bad override names the command line */
    assert_int_equal(config_override(c, "train.epochs=-3", &err), 0);
    long epochs;
    assert_int_equal(config_get_int(c, "train", "epochs", 1, 1, 10, &epochs, &err), -1);
    assert_non_null(strstr(err.msg, "command line: train.epochs=-3"));
    assert_int_equal(config_override(c, "nodot=3", &err), -1);
    assert_int_equal(config_override(c, "train.lr", &err), -1);
    assert_int_equal(config_override(c, ".lr=3", &err), -1);
    assert_int_equal(err.status, ERROR_USAGE);
    config_destroy(&c);
}

static void test_unread_override_is_reported(void **state)
{
    (void)state;
    error err = {0};
    config *c = config_parse_string("", "e.ini", &err);
    assert_int_equal(config_override(c, "train.lrr=0.5", &err), 0);
    assert_int_equal(config_check_unused(c, NULL, NULL, NULL, &err), -1);
    assert_non_null(strstr(err.msg, "command line: train.lrr=0.5: unknown key"));
    config_destroy(&c);
}

static void test_duplicate_key_and_garbage_line(void **state)
{
    (void)state;
    error err = {0};
    assert_null(config_parse_string("[a]\nk = 1\nk = 2\n", "dup.ini", &err));
    assert_non_null(strstr(err.msg, "dup.ini:3: [a] k: duplicate key (first set on line 2)"));
    assert_null(config_parse_string("[a]\nk = 1\nthis is not ini\n", "junk.ini", &err));
    assert_non_null(strstr(err.msg, "junk.ini:3:"));
    assert_null(config_parse_string("k = 1\n", "nosec.ini", &err));
    assert_non_null(strstr(err.msg, "nosec.ini:1:"));
    assert_null(config_load("/nonexistent/x.ini", &err));
    assert_non_null(strstr(err.msg, "/nonexistent/x.ini: cannot open"));
    assert_int_equal(err.status, ERROR_USAGE);
    /* keys indented under their section are keys (libinih took an
     * indented line for the previous key's value going on, and said
     * "[train] epochs: duplicate key" at lr's line) */
    config *c = config_parse_string("[train]\n    epochs = 1\n\tlr = 0.25\n  [data]\n"
                                    "  dataset = synthetic\n", "indent.ini", &err);
    if (!c) {
        fail_msg("indented keys: %s", err.msg);
    }
    assert_string_equal(config_value(c, "train", "lr"), "0.25");
    assert_string_equal(config_value(c, "data", "dataset"), "synthetic");
    config_destroy(&c);
    /* a CRLF line of 198 characters is as long as an LF one (its CR took
     * a byte of inih's buffer, and it was refused as longer than 198) */
    char text[300];
    int n = snprintf(text, sizeof text, "[a]\r\nk = 1 ; ");
    memset(text + n, 'x', 198 - (size_t)(n - 5));
    snprintf(text + 5 + 198, sizeof text - 5 - 198, "\r\n");
    c = config_parse_string(text, "crlf.ini", &err);
    if (!c) {
        fail_msg("a CRLF line of 198 characters: %s", err.msg);
    }
    assert_string_equal(config_value(c, "a", "k"), "1");
    config_destroy(&c);
    /* an indented line counts its indentation: one past the length is
     * refused whole (a file's was cut, and its tail read as a key) */
    n = snprintf(text, sizeof text, "[a]\n    ; ");
    memset(text + n, 'x', 194);
    snprintf(text + n + 194, sizeof text - (size_t)n - 194, "k = 7\n");
    assert_null(config_parse_string(text, "long.ini", &err));
    assert_non_null(strstr(err.msg, "long.ini:2: line longer than"));
}

static void s_expect_error(const char *msg, const char *needle)
{
    if (!strstr(msg, needle)) {
        fail_msg("error \"%s\" lacks \"%s\"", msg, needle);
    }
}

/* What libinih would misread is refused with the right line: a directory,
 * a line longer than inih's buffer (its tail would be parsed as the next
 * line), a NUL byte (inih would drop the rest of the line and, here, the
 * section header after it) and control characters, a file without a
 * newline read no further than one line's length; a value of binary junk
 * reaches the error message escaped, never raw. */
static void test_files_inih_would_misread(void **state)
{
    support_fixture *f = *state;
    error err = {0};
    assert_null(config_load(f->dir, &err));
    s_expect_error(err.msg, "is a directory");
    assert_int_equal(err.status, ERROR_USAGE);

    char path[400], text[2000];
    snprintf(path, sizeof path, "%s/long.ini", f->dir);
    int n = snprintf(text, sizeof text, "[a]\nk = 1 ; ");
    memset(text + n, 'x', 600);
    snprintf(text + n + 600, sizeof text - (size_t)n - 600, "\n[b]\nj = 2\n");
    support_write_file(path, text);
    assert_null(config_load(path, &err));
    snprintf(text, sizeof text, "%s:2: line longer than", path);
    s_expect_error(err.msg, text);
    /* a file without newlines is refused at its first line, not read whole
     * first (/dev/zero grew past 1 GB) */
    assert_null(config_load("/dev/zero", &err));
    s_expect_error(err.msg, "/dev/zero:1: line longer than");

    snprintf(path, sizeof path, "%s/nul.ini", f->dir);
    FILE *o = fopen(path, "wb");
    fwrite("[a]\nk = 1\0junk\n[b]\nj = 2\n", 1, 25, o);
    fclose(o);
    assert_null(config_load(path, &err));
    snprintf(text, sizeof text, "%s:2: byte 0x00 at column 6: not a text file", path);
    s_expect_error(err.msg, text);
    assert_null(config_parse_string("[a]\nk = \x1b[31m\n", "esc.ini", &err));
    s_expect_error(err.msg, "esc.ini:2: byte 0x1b at column 5");

    config *c = config_parse_string("[a]\ncolor = \xff\xfe\xc3\xa9\n", "bin.ini", &err);
    assert_non_null(c);
    int color;
    assert_int_equal(config_get_enum(c, "a", "color", "red", s_colors, &color, &err), -1);
    s_expect_error(err.msg, "bin.ini:2: [a] color: \"\\xff\\xfe\xc3\xa9\" is not one of");
    config_destroy(&c);
}

static void test_resolved_config_round_trips(void **state)
{
    (void)state;
    char dir[256], path[300];
    support_tempdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/resolved.ini", dir);
    error err = {0};
    config *c = config_parse_string("[train]\nlr = 0.25\n", "r.ini", &err);
    double lr;
    long batch;
    assert_int_equal(config_override(c, "train.lr=0.125", &err), 0);
    assert_int_equal(config_get_double(c, "train", "lr", 1, 0, 1, 0, &lr, &err), 0);
    assert_int_equal(config_get_int(c, "train", "batch", 48, 1, 100, &batch, &err), 0);
    assert_int_equal(config_write(c, path, &err), 0);
    config_destroy(&c);

    c = config_load(path, &err);
    assert_non_null(c);
    assert_int_equal(config_get_double(c, "train", "lr", 1, 0, 1, 0, &lr, &err), 0);
    assert_true(lr == 0.125);     /* the override, not the file's value */
    assert_int_equal(config_get_int(c, "train", "batch", 1, 1, 100, &batch, &err), 0);
    assert_int_equal(batch, 48);  /* the default was written out */
    assert_int_equal(config_check_unused(c, NULL, NULL, NULL, &err), 0);
    config_destroy(&c);

    /* found by fuzz/fuzz_config: values that config.ini would not give
     * back are refused where they come in, naming where */
    const char *refused[][2] = {
        {"experiment.label=a ;b", "a ';' after a space"},
        {"experiment.label= x", "start or end with a space"},
        {"experiment.label=;x", "start with ';'"},
        {"experiment.label=a\nb", "control character"},
    };
    c = config_parse_string("", "r.ini", &err);
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        assert_int_equal(config_override(c, refused[i][0], &err), -1);
        s_expect_error(err.msg, "command line: experiment.label: ");
        s_expect_error(err.msg, refused[i][1]);
    }
    config_destroy(&c);
    assert_null(config_parse_string("[experiment]\nname =;x\n", "semi.ini", &err));
    s_expect_error(err.msg, "semi.ini:2: [experiment] name: a value may not start with ';'");

    /* what fits is written so that it reads back: a long value without the
     * spaces around '=', a long source path cut to its tail */
    char value[200], arg[220], source[400];
    memset(value, 'v', 196);
    value[196] = '\0';
    snprintf(arg, sizeof arg, "a.k=%s", value);
    memset(source, 's', 300);
    source[300] = '\0';
    c = config_parse_string("", source, &err);
    assert_int_equal(config_override(c, arg, &err), 0);
    const char *got;
    assert_int_equal(config_get_string(c, "a", "k", "", &got, &err), 0);
    assert_int_equal(config_write(c, path, &err), 0);
    config_destroy(&c);
    c = config_load(path, &err);
    if (!c) {
        fail_msg("written config refused: %s", err.msg);
    }
    assert_int_equal(config_get_string(c, "a", "k", "", &got, &err), 0);
    assert_string_equal(got, value);
    config_destroy(&c);
    snprintf(arg, sizeof arg, "a.k=%sv", value);   /* one more: no line holds it */
    c = config_parse_string("", "r.ini", &err);
    assert_int_equal(config_override(c, arg, &err), -1);
    s_expect_error(err.msg, "too long for a line of config.ini");
    config_destroy(&c);
    support_rmtree(dir);
}

static void s_collect(void *ctx, const char *msg)
{
    char *out = ctx;
    strcat(out, msg);
    strcat(out, "\n");
}

/* Against the keys asgd knows: a key known elsewhere is a warning, not an
 * error; a typo is an error with the closest known key, from the same
 * section or, for the same name, another. */
static void test_known_keys_warn_and_typos_suggest(void **state)
{
    (void)state;
    error err = {0};
    config *known = config_parse_string("[model]\ntype = mlp\nhidden = 8\n[algorithm]\n"
                                        "window = 3\n", "(known)", &err);
    config *c = config_parse_string("[model]\ntype = softmax\nhidden = 8\n", "a.ini", &err);
    const char *type;
    assert_int_equal(config_get_string(c, "model", "type", "mlp", &type, &err), 0);
    char warnings[512] = "";
    assert_int_equal(config_check_unused(c, known, s_collect, warnings, &err), 0);
    assert_string_equal(warnings, "a.ini:3: [model] hidden: not used by this configuration "
                                  "(ignored)\n");
    config_destroy(&c);
    const char *typos[][2] = {{"[model]\nhiden = 8\n", "did you mean [model] hidden?"},
                              {"[train]\nwindow = 8\n", "did you mean [algorithm] window?"},
                              {"[model]\nzzz = 8\n", "nothing reads it"},
                              {"[model]\nHIDDEN = 8\n", "did you mean [model] hidden?"}};
    for (int i = 0; i < 4; i++) {
        c = config_parse_string(typos[i][0], "b.ini", &err);
        assert_int_equal(config_check_unused(c, known, s_collect, warnings, &err), -1);
        assert_int_equal(err.status, ERROR_USAGE);
        if (!strstr(err.msg, typos[i][1])) {
            fail_msg("\"%s\" lacks \"%s\"", err.msg, typos[i][1]);
        }
        config_destroy(&c);
    }
    config_destroy(&known);
}

/* A relative path the run reads is recorded absolute, so that the run
 * folder's config.ini runs again from another folder (it failed there:
 * "sim.trace=experiments/x/trace.csv: cannot read the trace"); one that
 * does not exist here, or whose absolute form no line holds, as written. */
static void test_paths_are_recorded_absolute(void **state)
{
    support_fixture *f = *state;
    char here[4096], deep[600], path[700], want[4200];
    char real[2048];
    assert_true(realpath(f->dir, here) && strlen(here) < sizeof real);
    snprintf(real, sizeof real, "%.2000s", here);
    assert_non_null(getcwd(here, sizeof here));
    snprintf(path, sizeof path, "%s/trace.csv", f->dir);
    support_write_file(path, "worker,speed\n");
    snprintf(deep, sizeof deep, "%s/%0190d", f->dir, 0);
    assert_int_equal(mkdir(deep, 0755), 0);
    snprintf(path, sizeof path, "%s/x", deep);
    support_write_file(path, "");
    assert_int_equal(chdir(f->dir), 0);
    error err = {0};
    config *c = config_parse_string("[sim]\ntrace = trace.csv\nprofile = missing.ini\n"
                                    "[data]\npath = /usr/share\n", "p.ini", &err);
    assert_non_null(c);
    const char *v;
    assert_int_equal(config_get_path(c, "sim", "trace", "", &v, &err), 0);
    snprintf(want, sizeof want, "%s/trace.csv", real);
    assert_string_equal(v, want);
    assert_int_equal(config_get_path(c, "sim", "profile", "", &v, &err), 0);
    assert_string_equal(v, "missing.ini");
    assert_int_equal(config_get_path(c, "data", "path", "", &v, &err), 0);
    assert_string_equal(v, "/usr/share");
    char *printed = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&printed, &len);
    config_print(c, out);
    fclose(out);
    snprintf(want, sizeof want, "trace = %s/trace.csv\n", real);
    assert_non_null(strstr(printed, want));
    free(printed);
    config_destroy(&c);
    assert_int_equal(chdir(deep), 0);
    c = config_parse_string("[sim]\ntrace = x\n", "p.ini", &err);
    assert_int_equal(config_get_path(c, "sim", "trace", "", &v, &err), 0);
    assert_string_equal(v, "x");   /* 190 characters and more: not a line */
    config_destroy(&c);
    assert_int_equal(chdir(here), 0);
}

/* A value as its getter reads it: numbers (and lists of them) written one
 * way, booleans as true or false, other text as it is (a label of 1.10 is
 * not 1.1). */
static void test_values_as_read(void **state)
{
    (void)state;
    error err = {0};
    config *known = config_parse_string("", "(known)", &err);
    long l;
    double d, list[4];
    int n;
    bool b;
    const char *text;
    assert_int_equal(config_get_int(known, "a", "count", 4, 0, 100, &l, &err), 0);
    assert_int_equal(config_get_double(known, "a", "rate", 0.5, 0, 100, CONFIG_CLOSED, &d, &err),
                     0);
    assert_int_equal(config_get_double_list(known, "a", "speeds", "1", 0, 100, list, 4, &n, &err),
                     0);
    assert_int_equal(config_get_bool(known, "a", "flag", false, &b, &err), 0);
    assert_int_equal(config_get_string(known, "a", "label", "", &text, &err), 0);
    const char *cases[][3] = {
        {"rate", "50e-6", "5e-05"}, {"rate", "5e-05", "5e-05"}, {"rate", "0.1", "0.1"},
        {"rate", "8.0", "8"}, {"rate", "-0", "0"}, {"rate", "1e400", "1e400"},
        {"count", "007", "7"}, {"speeds", "1.0,2e0, 3", "1,2,3"}, {"speeds", "1,x", "1,x"},
        {"flag", "yes", "true"}, {"flag", "off", "false"}, {"label", "1.10", "1.10"},
        {"nokey", "1.10", "1.10"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[64];
        config_value_as_read(known, "a", cases[i][0], cases[i][1], out, sizeof out);
        if (strcmp(out, cases[i][2]) != 0) {
            fail_msg("%s = %s read as \"%s\", not \"%s\"", cases[i][0], cases[i][1], out,
                     cases[i][2]);
        }
    }
    config_destroy(&known);
}

/* Every key asgd reads is known, as its getter reads it: each variant of
 * the choices (rule, model, data, partition, mode, time model) reads on a
 * config of its own, and none stops at an error (read one after another on
 * one config, staleweight's default weight stopped every rule after it and
 * a generated data set without a size every variant after that: label
 * skew's data.alpha was compared as text, 0.5 and 5e-1 "differing"). */
static void test_every_key_is_known_as_read(void **state)
{
    (void)state;
    int failed = -1;
    assert_true(experiment_known_variants(&failed) > 30);
    assert_int_equal(failed, 0);
    const char *cases[][4] = {
        {"data", "alpha", "5e-1", "0.5"},          /* label skew only */
        {"train", "momentum", "9e-1", "0.9"},      /* a momentum optimizer only */
        {"algorithm", "buffer", "08", "8"},        /* fedbuff only */
        {"algorithm", "alpha", "1e-1", "0.1"},     /* the elastic rules */
        {"sim", "compute_mean", "1e-3", "0.001"},  /* the simulator */
        {"model", "dropout", "5e-1", "0.5"},       /* mlp and cnn */
        {"data", "noise", "1e0", "1"},             /* generated data only */
        {"experiment", "label", "1.10", "1.10"},   /* text */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[64];
        experiment_value_text(cases[i][0], cases[i][1], cases[i][2], out, sizeof out);
        if (strcmp(out, cases[i][3]) != 0) {
            fail_msg("%s.%s = %s read as \"%s\", not \"%s\"", cases[i][0], cases[i][1],
                     cases[i][2], out, cases[i][3]);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_file_reads_every_type),
        cmocka_unit_test(test_mistyped_key_names_file_line_and_key),
        cmocka_unit_test(test_known_keys_warn_and_typos_suggest),
        cmocka_unit_test(test_bad_values_are_rejected_with_their_line),
        cmocka_unit_test(test_override_replaces_and_adds),
        cmocka_unit_test(test_unread_override_is_reported),
        cmocka_unit_test(test_duplicate_key_and_garbage_line),
        cmocka_unit_test(test_resolved_config_round_trips),
        cmocka_unit_test(test_values_as_read),
        cmocka_unit_test(test_every_key_is_known_as_read),
        cmocka_unit_test_setup_teardown(test_files_inih_would_misread, support_fixture_setup,
                                        support_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_paths_are_recorded_absolute, support_fixture_setup,
                                        support_fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
