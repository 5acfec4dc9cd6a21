/* fuzz_cluster.c: libFuzzer harness for how a role process learns its
 * place in a cluster: Kubeflow's TF_CONFIG (JSON from the environment)
 * and the TensorFlow-style flags of `asgd ps|worker|evaluator`.
 *
 * Input: one byte choosing the role, then NUL-separated strings: the
 * first is TF_CONFIG (empty: unset), the rest are the arguments after
 * CONFIG. A place the parser accepts must be usable as it stands: at
 * least one and at most CLUSTER_MAX_SERVERS shards with non-empty
 * addresses, and a task index that is not negative. */
#define _XOPEN_SOURCE 700   /* putenv */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/real/cluster.h"
#include "fuzz/common.h"

#define MAX_ARGS 32
#define MAX_INPUT 65536

static char s_env[MAX_INPUT + 16];   /* putenv keeps the pointer: one buffer, no leak */

static void s_check_accepted(const cluster_spec *s)
{
    if (s->servers < 1 || s->servers > CLUSTER_MAX_SERVERS || s->task < 0 || s->workers < 0) {
        fuzz_fail("accepted a cluster with no shards, too many, or a negative index");
    }
    for (int i = 0; i < s->servers; i++) {
        size_t n = strnlen(s->ps[i], CLUSTER_ADDRESS_MAX);
        if (n == 0 || n == CLUSTER_ADDRESS_MAX) {
            fuzz_fail("accepted an empty or unterminated shard address");
        }
    }
    if (s->restore < RESTORE_NONE || s->restore > RESTORE_RESUME) {
        fuzz_fail("accepted an unknown restore mode");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > MAX_INPUT) {
        return 0;
    }
    int role = data[0] % 3;
    char *copy = malloc(size);
    memcpy(copy, data + 1, size - 1);
    copy[size - 1] = '\0';
    char *argv[MAX_ARGS + 1] = {"config.ini"};
    int argc = 1;
    size_t first = strlen(copy);
    for (size_t i = first + 1; i < size - 1 && argc < MAX_ARGS; i += strlen(copy + i) + 1) {
        argv[argc++] = copy + i;
    }
    if (first > 0) {
        snprintf(s_env, sizeof s_env, "TF_CONFIG=%s", copy);
        putenv(s_env);
    } else {
        unsetenv("TF_CONFIG");
    }
    cluster_spec s;
    error err = {0};
    if (cluster_parse(&s, role, argc, argv, &err) < 0) {
        fuzz_check_error(&err);
    } else {
        s_check_accepted(&s);
    }
    cluster_free(&s);
    free(copy);
    return 0;
}
