/* common.h: what the libFuzzer harnesses in fuzz/ share.
 *
 * Each harness feeds one kind of outside input to the code that reads it
 * and checks the reader's promises: input it accepts is well formed, input
 * it refuses gets a one-line printable error with an exit status, and
 * neither path leaks, overflows or invokes undefined behaviour (the
 * sanitizers check that). A broken promise calls fuzz_fail(), which
 * aborts so that libFuzzer saves the input. */
#ifndef ASGD_FUZZ_COMMON_H
#define ASGD_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

/* Aborts with what went wrong. */
void fuzz_fail(const char *what) __attribute__((noreturn));

/* A refusal's promises: status is ERROR_USAGE or ERROR_RUNTIME and msg is
 * one non-empty line of printable text. */
void fuzz_check_error(const error *err);

/* Writes data to NAME (a plain file name) in a private folder made at the
 * first call and removed at exit, and puts its path in path[n]. */
void fuzz_write_file(char *path, size_t n, const char *name, const uint8_t *data, size_t size);

#endif
