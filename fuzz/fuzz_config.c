/* fuzz_config.c: libFuzzer harness for the config reader (inih), its
 * getters, the section.key=value overrides and every key's validation, as
 * `asgd train CONFIG key=value ...` runs them.
 *
 * Input: the config file's text, where each line that starts with '+' is
 * instead one override (without the '+'). A config the reader accepts
 * must be one a run can keep: written out (as into a run folder's
 * config.ini, which `asgd train --resume` reads) it configures the same
 * experiment again. */
#include <stdlib.h>
#include <string.h>

#include "core/experiment.h"
#include "fuzz/common.h"

#define MAX_OVERRIDES 16

/* Splits the input into the file's text and up to MAX_OVERRIDES
 * NUL-terminated overrides, all in text (size + 1 bytes). */
static int s_split(const uint8_t *data, size_t size, char *text, size_t *text_len,
                   char *overrides[MAX_OVERRIDES], char *space)
{
    int n = 0;
    size_t t = 0, o = 0;
    for (size_t i = 0; i < size;) {
        size_t end = i;
        while (end < size && data[end] != '\n') {
            end++;
        }
        size_t line = end - i + (end < size);
        if (data[i] == '+' && n < MAX_OVERRIDES) {
            memcpy(space + o, data + i + 1, end - i - 1);
            overrides[n++] = space + o;
            o += end - i - 1;
            space[o++] = '\0';
        } else {
            memcpy(text + t, data + i, line);
            t += line;
        }
        i += line;
    }
    *text_len = t;
    return n;
}

/* The written config configures the same experiment. */
static void s_check_reload(const experiment *e)
{
    char path[128];
    error err = {0};
    fuzz_write_file(path, sizeof path, "written.ini", (const uint8_t *)"", 0);
    if (config_write(e->c, path, &err) < 0) {
        fuzz_fail("an accepted config cannot be written out");
    }
    experiment again;
    if (experiment_configure(&again, path, 0, NULL, NULL, &err) < 0) {
        fuzz_fail("an accepted config, written out, is refused when read back");
    }
    if (again.seed != e->seed || again.workers != e->workers || again.servers != e->servers ||
        again.batch != e->batch || again.epochs != e->epochs || again.mode != e->mode ||
        strcmp(again.algorithm_name, e->algorithm_name) != 0) {
        fuzz_fail("an accepted config, written out, reads back as another experiment");
    }
    experiment_destroy(&again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1), *space = malloc(size + 1);
    char *overrides[MAX_OVERRIDES];
    size_t text_len;
    int n = s_split(data, size, text, &text_len, overrides, space);
    char path[128];
    fuzz_write_file(path, sizeof path, "config.ini", (const uint8_t *)text, text_len);
    experiment e;
    error err = {0};
    if (experiment_configure(&e, path, n, overrides, NULL, &err) < 0) {
        fuzz_check_error(&err);
    } else {
        if (e.batch < 1 || !(e.epochs > 0) || (e.alg && (e.workers < 1 || e.servers < 1))) {
            fuzz_fail("accepted a config with no batch or epochs, or a rule with no workers "
                      "or shards");
        }
        s_check_reload(&e);
        experiment_destroy(&e);
    }
    free(text);
    free(space);
    return 0;
}
