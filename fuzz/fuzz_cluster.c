/* fuzz_cluster.c: libFuzzer harness for how a role process learns its
 * place in a cluster: Kubeflow's TF_CONFIG (JSON from the environment),
 * the TensorFlow-style flags of `asgd ps|worker|evaluator`, and for `asgd
 * role` the environments of torchrun, Open MPI and Slurm (engines.h).
 *
 * Input: one byte choosing the role (3: `asgd role`) and, for `asgd
 * role`, one byte for the shards (1-4); then NUL-separated strings: the
 * first is TF_CONFIG (empty: unset); the rest are the arguments after
 * CONFIG, or for `asgd role` the engines' variables in s_engine_vars'
 * order (empty: unset). A place the parser accepts must be usable as it
 * stands: at least one and at most CLUSTER_MAX_SERVERS shards with
 * non-empty addresses, and a role with an index within its count. */
#define _XOPEN_SOURCE 700   /* putenv */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/real/cluster.h"
#include "fuzz/common.h"

#include "core/real/engines.h"

#define MAX_ARGS 32
#define MAX_INPUT 65536

static const char *const s_engine_vars[] = {
    "RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "OMPI_COMM_WORLD_RANK",
    "OMPI_COMM_WORLD_SIZE", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_STEP_NODELIST",
    "SLURM_JOB_NODELIST",
};
#define NVARS (sizeof s_engine_vars / sizeof s_engine_vars[0])

/* putenv keeps the pointer: one buffer per variable, so nothing leaks */
static char s_env[NVARS + 1][MAX_INPUT + 32];

/* Sets name to value (empty: unset) through buffer. */
static void s_setenv(char *buffer, const char *name, const char *value)
{
    if (*value) {
        snprintf(buffer, MAX_INPUT + 32, "%s=%s", name, value);
        putenv(buffer);
    } else {
        unsetenv(name);
    }
}

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
    if (s->role < ROLE_PS || s->role > ROLE_EVALUATOR) {
        fuzz_fail("accepted a place without a role");
    }
}

/* `asgd role`: TF_CONFIG's task, or else the engines' ranks. */
static void s_role(char **segments, int n, int servers)
{
    for (size_t i = 0; i < NVARS; i++) {
        s_setenv(s_env[i + 1], s_engine_vars[i], (int)i + 1 < n ? segments[i + 1] : "");
    }
    char *argv[] = {"config.ini", NULL};
    cluster_spec s;
    error err = {0};
    char said[512];
    int rc = cluster_parse(&s, ROLE_ANY, 1, argv, &err);
    if (rc == 0 && s.role == ROLE_ANY) {
        rc = engines_place(&s, servers, said, sizeof said, &err);
        if (rc == 0 && (s.servers != servers || s.workers < 1 ||
                        (s.role == ROLE_PS && s.task >= servers) ||
                        (s.role == ROLE_WORKER && s.task >= s.workers))) {
            fuzz_fail("placed a rank outside the job's shards and workers");
        }
    }
    if (rc < 0) {
        fuzz_check_error(&err);
    } else {
        s_check_accepted(&s);
    }
    cluster_free(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > MAX_INPUT) {
        return 0;
    }
    int role = data[0] % 4 == 3 ? ROLE_ANY : data[0] % 4;
    int skip = role == ROLE_ANY ? 2 : 1;
    if (size < (size_t)skip) {
        return 0;
    }
    int servers = role == ROLE_ANY ? data[1] % 4 + 1 : 0;
    size_t len = size - (size_t)skip;
    char *copy = malloc(len + 1);
    memcpy(copy, data + skip, len);
    copy[len] = '\0';
    char *argv[MAX_ARGS + 1] = {"config.ini"};
    int argc = 1;
    size_t first = strlen(copy);
    for (size_t i = first + 1; i < len && argc < MAX_ARGS; i += strlen(copy + i) + 1) {
        argv[argc++] = copy + i;
    }
    s_setenv(s_env[0], "TF_CONFIG", copy);
    if (role == ROLE_ANY) {
        argv[0] = copy;   /* the segments: TF_CONFIG, then the engines' variables */
        s_role(argv, argc, servers);
        free(copy);
        return 0;
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
