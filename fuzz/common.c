/* common.c: the harnesses' shared checks and scratch files. */
#include "fuzz/common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void fuzz_fail(const char *what)
{
    fprintf(stderr, "fuzz: broken promise: %s\n", what);
    abort();
}

void fuzz_check_error(const error *err)
{
    if (err->status != ERROR_USAGE && err->status != ERROR_RUNTIME) {
        fuzz_fail("a refusal without an exit status");
    }
    size_t n = strnlen(err->msg, sizeof err->msg);
    if (n == 0 || n == sizeof err->msg) {
        fuzz_fail("a refusal with an empty or unterminated message");
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)err->msg[i];
        if (c < 0x20 || c == 0x7f) {
            fuzz_fail("a refusal whose message does not print as one line");
        }
    }
}

#define FUZZ_MAX_FILES 8

static char s_dir[64];
static char s_names[FUZZ_MAX_FILES][64];
static int s_nfiles;

static void s_remove_files(void)
{
    char path[160];
    for (int i = 0; i < s_nfiles; i++) {
        snprintf(path, sizeof path, "%s/%s", s_dir, s_names[i]);
        unlink(path);
    }
    rmdir(s_dir);
}

/* Remembers name so that s_remove_files() removes it. */
static void s_track(const char *name)
{
    for (int i = 0; i < s_nfiles; i++) {
        if (strcmp(s_names[i], name) == 0) {
            return;
        }
    }
    if (s_nfiles == FUZZ_MAX_FILES || strlen(name) >= sizeof s_names[0]) {
        fuzz_fail("too many or too long scratch file names");
    }
    snprintf(s_names[s_nfiles++], sizeof s_names[0], "%s", name);
}

void fuzz_write_file(char *path, size_t n, const char *name, const uint8_t *data, size_t size)
{
    if (!s_dir[0]) {
        snprintf(s_dir, sizeof s_dir, "/tmp/asgd-fuzz-XXXXXX");
        if (!mkdtemp(s_dir)) {
            fuzz_fail("cannot make a scratch folder");
        }
        atexit(s_remove_files);
    }
    s_track(name);
    snprintf(path, n, "%s/%s", s_dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0) {
        fuzz_fail("cannot write a scratch file");
    }
}
