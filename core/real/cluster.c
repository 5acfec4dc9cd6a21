/* cluster.c: role flags and TF_CONFIG. */
#include "core/real/cluster.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "core/suggest.h"
#include "transport/net.h"

static const char *const s_roles[] = {"ps", "worker", "evaluator"};

const char *cluster_role_name(int role)
{
    return role == ROLE_ANY ? "role" : s_roles[role];
}

static int s_role_from_name(const char *name)
{
    if (strcmp(name, "chief") == 0 || strcmp(name, "master") == 0) {
        return ROLE_EVALUATOR;
    }
    for (int r = 0; r < 3; r++) {
        if (strcmp(name, s_roles[r]) == 0) {
            return r;
        }
    }
    return -1;
}

/* Why addr is no shard address ("host:port", "[IPv6]:port", or a full
 * ipc:// or tcp:// endpoint), or NULL: a port out of range or an IPv6
 * address without brackets once bound some other port, or an address
 * only IPv4 knows, and the job waited for a shard that was not there. */
static const char *s_bad_address(const char *addr)
{
    if (strncmp(addr, "ipc://", 6) == 0 || strncmp(addr, "inproc://", 9) == 0) {
        return NULL;
    }
    const char *a = strncmp(addr, "tcp://", 6) == 0 ? addr + 6 : addr;
    const char *colon = strrchr(a, ':');
    if (!colon || colon == a) {
        return "expected host:port";
    }
    const char *port = colon + 1;
    if (!*port || strspn(port, "0123456789") != strlen(port) || strlen(port) > 5 ||
        atoi(port) < 1 || atoi(port) > 65535) {
        return "the port must be a number from 1 to 65535";
    }
    size_t host = (size_t)(colon - a);
    if (a[0] == '[' ? a[host - 1] != ']' || host < 3 : memchr(a, ':', host) != NULL) {
        return "an IPv6 address goes in brackets: [address]:port";
    }
    for (size_t i = 0; i < host; i++) {
        if (a[i] == ' ' || a[i] == '\t' || a[i] == '/') {
            return "a host name holds no spaces or slashes";
        }
    }
    return NULL;
}

/* Checks s->ps[0..count): each an address, none twice. */
static int s_check_shards(const cluster_spec *s, int count, const char *what, error *err)
{
    for (int k = 0; k < count; k++) {
        const char *why = s_bad_address(s->ps[k]);
        if (why) {
            return error_set(err, ERROR_USAGE, "%s: shard %d at \"%s\": %s", what, k, s->ps[k],
                             why);
        }
        for (int j = 0; j < k; j++) {
            if (strcmp(s->ps[j], s->ps[k]) == 0) {
                return error_set(err, ERROR_USAGE, "%s: shards %d and %d are both at %s", what,
                                 j, k, s->ps[k]);
            }
        }
    }
    return 0;
}

/* "a,b,c" into s->ps; returns the count or -1. */
static int s_split_hosts(cluster_spec *s, const char *list, error *err)
{
    int n = 0;
    const char *p = list;
    while (*p) {
        size_t len = strcspn(p, ",");
        if (len == 0 || len >= CLUSTER_ADDRESS_MAX || n == CLUSTER_MAX_SERVERS) {
            return error_set(err, ERROR_USAGE, "--ps_hosts: bad list \"%s\"", list);
        }
        memcpy(s->ps[n], p, len);
        s->ps[n][len] = '\0';
        n++;
        p += len;
        if (*p == ',' && !*++p) {
            return error_set(err, ERROR_USAGE, "--ps_hosts: bad list \"%s\"", list);
        }
    }
    return s_check_shards(s, n, "--ps_hosts", err) < 0 ? -1 : n;
}

/* The hosts of a comma-separated list; -1 where one is empty ("a,,b" was
 * 3 workers, "" none: each process's count of workers must be the job's). */
static int s_count_hosts(const char *list)
{
    int n = 1;
    for (const char *p = list; *p; p++) {
        n += *p == ',';
    }
    bool empty = !*list || *list == ',' || list[strlen(list) - 1] == ',' || strstr(list, ",,");
    return empty ? -1 : n;
}

static int s_parse_index(const char *text, const char *what, int *out, error *err)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (end == text || *end || v < 0 || v > 1 << 20) {
        return error_set(err, ERROR_USAGE, "%s: expected a non-negative integer, got \"%s\"",
                         what, text);
    }
    *out = (int)v;
    return 0;
}

static int s_tf_config(cluster_spec *s, int role, const char *text, error *err)
{
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithOpts(text, &end, true);   /* nothing may follow the JSON */
    if (!j) {
        return error_set(err, ERROR_USAGE, "TF_CONFIG: not valid JSON (at byte %td)",
                         end ? end - text : (ptrdiff_t)0);
    }
    int rc = -1;
    cJSON *cluster = cJSON_GetObjectItemCaseSensitive(j, "cluster");
    cJSON *task = cJSON_GetObjectItemCaseSensitive(j, "task");
    cJSON *type = task ? cJSON_GetObjectItemCaseSensitive(task, "type") : NULL;
    cJSON *index = task ? cJSON_GetObjectItemCaseSensitive(task, "index") : NULL;
    cJSON *ps = cluster ? cJSON_GetObjectItemCaseSensitive(cluster, "ps") : NULL;
    cJSON *workers = cluster ? cJSON_GetObjectItemCaseSensitive(cluster, "worker") : NULL;
    if (!cJSON_IsObject(cluster) || !cJSON_IsArray(ps) || !cJSON_IsString(type) ||
        !cJSON_IsNumber(index)) {
        error_set(err, ERROR_USAGE, "TF_CONFIG: needs cluster.ps (a list), task.type and "
                  "task.index");
        goto done;
    }
    int task_role = s_role_from_name(type->valuestring);
    if (task_role < 0) {
        error_set(err, ERROR_USAGE, "TF_CONFIG: task.type \"%s\" is not ps, worker, chief, "
                  "master or evaluator", type->valuestring);
        goto done;
    }
    if (role != ROLE_ANY && task_role != role) {
        error_set(err, ERROR_USAGE, "TF_CONFIG: task.type is \"%s\" but this is `asgd %s`",
                  type->valuestring, s_roles[role]);
        goto done;
    }
    s->role = task_role;
    double v = index->valuedouble;
    if (!(v >= 0 && v <= 1 << 20 && v == (double)(int)v)) {
        error_set(err, ERROR_USAGE, "TF_CONFIG: task.index must be a non-negative integer, "
                  "got %g", v);
        goto done;
    }
    if (workers && !cJSON_IsArray(workers)) {
        error_set(err, ERROR_USAGE, "TF_CONFIG: cluster.worker must be a list of hosts");
        goto done;
    }
    if (task_role == ROLE_EVALUATOR && v != 0) {   /* a second one evaluated too */
        error_set(err, ERROR_USAGE, "TF_CONFIG: task %s %d: asgd runs one evaluator, "
                  "index 0 (give the job one %s replica)", type->valuestring, (int)v,
                  type->valuestring);
        goto done;
    }
    if (task_role == ROLE_WORKER && cJSON_GetArraySize(workers) == 0) {
        /* it said 0 workers, then took [cluster] workers' count, which no
         * other process confirms */
        error_set(err, ERROR_USAGE, "TF_CONFIG: a worker task, but cluster.worker lists no "
                  "workers");
        goto done;
    }
    s->task = (int)v;
    s->servers = 0;
    cJSON *item;
    cJSON_ArrayForEach(item, ps) {
        if (!cJSON_IsString(item) || !item->valuestring[0] ||
            strlen(item->valuestring) >= CLUSTER_ADDRESS_MAX ||
            s->servers == CLUSTER_MAX_SERVERS) {
            error_set(err, ERROR_USAGE, "TF_CONFIG: cluster.ps must list \"host:port\" strings");
            goto done;
        }
        snprintf(s->ps[s->servers++], CLUSTER_ADDRESS_MAX, "%s", item->valuestring);
    }
    if (s->servers == 0) {
        error_set(err, ERROR_USAGE, "TF_CONFIG: cluster.ps lists no shards");
        goto done;
    }
    if (s_check_shards(s, s->servers, "TF_CONFIG: cluster.ps", err) < 0) {
        goto done;
    }
    bool chief = cJSON_GetObjectItemCaseSensitive(cluster, "chief") != NULL ||
                 cJSON_GetObjectItemCaseSensitive(cluster, "master") != NULL;
    if (chief && strcmp(type->valuestring, "evaluator") == 0) {   /* both would evaluate */
        error_set(err, ERROR_USAGE, "TF_CONFIG: an evaluator task in a job with a %s: asgd "
                  "runs one evaluator, which a chief or master task is; give the job one of "
                  "them", cJSON_GetObjectItemCaseSensitive(cluster, "chief") ? "chief" : "master");
        goto done;
    }
    s->workers = cJSON_IsArray(workers) ? cJSON_GetArraySize(workers) : 0;
    int listed = task_role == ROLE_PS ? s->servers : s->workers;
    if ((task_role == ROLE_PS || task_role == ROLE_WORKER) && s->task >= listed) {
        /* named here, not as a --task_index the user never gave */
        error_set(err, ERROR_USAGE, "TF_CONFIG: task %s %d, but cluster.%s lists %d",
                  type->valuestring, s->task, task_role == ROLE_PS ? "ps" : "worker", listed);
        goto done;
    }
    /* Kubeflow leaves an Evaluator replica out of the cluster spec (the
     * evaluator is not part of TensorFlow's training cluster): an evaluator
     * task knows there is one; a shard learns it from a chief or master
     * entry, or from --evaluator, which the caller lets win */
    s->evaluator = task_role == ROLE_EVALUATOR || chief ||
                   cJSON_GetObjectItemCaseSensitive(cluster, "evaluator") != NULL;
    rc = 0;
done:
    cJSON_Delete(j);
    return rc;
}

/* -1 with err set when name is no role flag: the nearest one said
 * (--task-index, the likeliest slip, is one edit from --task_index), or
 * that --restore and --resume take no value. */
static int s_unknown_flag(const char *name, int role, error *err)
{
    static const char *const valued[] = {"--ps_hosts", "--worker_hosts", "--job_name",
                                         "--task_index", "--evaluator", "--run_dir", "--keys",
                                         "--report_fd", NULL};
    for (int i = 0; valued[i]; i++) {
        if (strcmp(name, valued[i]) == 0) {
            return 0;
        }
    }
    if (strcmp(name, "--restore") == 0 || strcmp(name, "--resume") == 0) {
        return error_set(err, ERROR_USAGE, "%s takes no value", name);
    }
    static const char *const all[] = {"--ps_hosts", "--worker_hosts", "--job_name",
                                      "--task_index", "--evaluator", "--run_dir", "--keys",
                                      "--restore", "--resume", NULL};
    const char *near = suggest_nearest(name, all);
    return error_set(err, ERROR_USAGE, "%s: unknown flag%s%s%s (see `asgd help %s`)", name,
                     near ? "; did you mean " : "", near ? near : "", near ? "?" : "",
                     cluster_role_name(role));
}

int cluster_parse(cluster_spec *s, int role, int argc, char **argv, error *err)
{
    memset(s, 0, sizeof *s);
    s->role = role;
    s->evaluator = true;
    s->report_fd = -1;
    if (argc < 1 || argv[0][0] == '-') {
        return error_set(err, ERROR_USAGE, "missing CONFIG");
    }
    s->config_path = argv[0];
    int evaluator_flag = -1;   /* --evaluator as given; -1: not given */
    bool indexed = false;      /* --task_index given */
    const char *placing = NULL;   /* a flag that places the process, as given */
    const char *evaluator_arg = NULL;
    s->overrides = calloc((size_t)argc, sizeof *s->overrides);
    if (!s->overrides) {
        return error_set(err, ERROR_RUNTIME, "out of memory");
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--", 2) != 0) {
            s->overrides[s->noverrides++] = argv[i];
            continue;
        }
        if (strcmp(a, "--restore") == 0 || strcmp(a, "--resume") == 0) {
            s->restore = strcmp(a, "--restore") == 0 ? RESTORE_RESTART : RESTORE_RESUME;
            continue;
        }
        const char *eq = strchr(a, '=');
        char name[64];
        const char *value;
        snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - a) : (int)strlen(a), a);
        if (s_unknown_flag(name, role, err) < 0) {   /* before its value: --restor last
                                                      * was "missing value" */
            return -1;
        }
        if (eq) {
            value = eq + 1;
        } else {
            if (i + 1 == argc) {
                return error_set(err, ERROR_USAGE, "%s: missing value", a);
            }
            value = argv[++i];
        }
        int evaluator = 1;
        if (!placing && (strcmp(name, "--ps_hosts") == 0 || strcmp(name, "--worker_hosts") == 0 ||
                         strcmp(name, "--task_index") == 0 || strcmp(name, "--job_name") == 0)) {
            placing = a;
        }
        if (strcmp(name, "--ps_hosts") == 0) {
            int n = s_split_hosts(s, value, err);
            if (n < 0) {
                return -1;
            }
            s->servers = n;
        } else if (strcmp(name, "--worker_hosts") == 0) {
            if ((s->workers = s_count_hosts(value)) < 0) {
                return error_set(err, ERROR_USAGE, "--worker_hosts=%s: a host is empty (one "
                                 "per worker, separated by commas)", value);
            }
        } else if (strcmp(name, "--job_name") == 0) {
            if (s_role_from_name(value) != role) {
                return error_set(err, ERROR_USAGE, "--job_name=%s but this is `asgd %s`",
                                 value, cluster_role_name(role));
            }
        } else if (strcmp(name, "--task_index") == 0) {
            if (s_parse_index(value, "--task_index", &s->task, err) < 0) {
                return -1;
            }
            indexed = true;
        } else if (strcmp(name, "--evaluator") == 0) {
            if (s_parse_index(value, "--evaluator", &evaluator, err) < 0) {
                return -1;
            }
            s->evaluator = evaluator != 0;
            evaluator_flag = s->evaluator ? 1 : 0;
            evaluator_arg = a;
        } else if (strcmp(name, "--run_dir") == 0) {
            s->run_dir = value;
        } else if (strcmp(name, "--keys") == 0) {
            s->keys = value;
        } else if (strcmp(name, "--report_fd") == 0) {
            if (s_parse_index(value, "--report_fd", &s->report_fd, err) < 0) {
                return -1;
            }
        }
    }
    const char *tf = getenv("TF_CONFIG");
    /* a flag that places the process where something else does was
     * dropped without a word; --evaluator may say what TF_CONFIG cannot */
    bool placed = tf && *tf;
    const char *dropped = placed ? placing : role != ROLE_ANY ? NULL
                          : placing ? placing : evaluator_arg;
    if (dropped) {
        return error_set(err, ERROR_USAGE, "%s: %s places this process; drop the flag",
                         dropped, placed ? "TF_CONFIG" : "the launcher's environment");
    }
    if (tf && *tf) {
        if (s_tf_config(s, role, tf, err) < 0) {
            return -1;
        }
        if (evaluator_flag >= 0) {   /* TF_CONFIG cannot show a Kubeflow Evaluator */
            s->evaluator = evaluator_flag != 0;
        }
    } else if (role == ROLE_ANY) {
        s->servers = 0;   /* the launcher's environment places it (engines.h) */
        return 0;
    }
    if (s->servers == 0) {
        return error_set(err, ERROR_USAGE, "no servers: give --ps_hosts or TF_CONFIG");
    }
    /* placed by flags, each process says the whole cluster's shape: left
     * to [cluster] workers, a shard told of 2 workers and workers of 4
     * each took a quarter of the data, and the job ended complete at half
     * an epoch; two workers without an index were both worker 0 */
    if (!(tf && *tf) && s->workers == 0) {
        return error_set(err, ERROR_USAGE, "give --worker_hosts (every process of the job the "
                         "same list: it sets how many workers share the data)");
    }
    if (!(tf && *tf) && role != ROLE_EVALUATOR && !indexed) {
        return error_set(err, ERROR_USAGE, "give --task_index (which %s this process is, "
                         "from 0)", role == ROLE_PS ? "shard" : "worker");
    }
    return 0;
}

void cluster_free(cluster_spec *s)
{
    free(s->overrides);
    s->overrides = NULL;
}

int cluster_auth(const cluster_spec *s, bool curve, const char *config_keys, const char *self,
                 net_auth *a, error *err)
{
    const char *dir = s->keys ? s->keys : config_keys;
    if (!curve) {
        if (s->keys) {
            return error_set(err, ERROR_USAGE, "--keys=%s but [cluster] auth = none: set "
                             "cluster.auth=curve to use them", s->keys);
        }
        return 0;
    }
    if (!dir || !dir[0]) {
        return error_set(err, ERROR_USAGE, "[cluster] auth = curve needs the keys' folder: "
                         "--keys=DIR or [cluster] keys (make one with `asgd keys DIR`)");
    }
    return auth_load(a, dir, self, err) < 0 ? -1 : 1;
}

void cluster_warn_open(const char *who, const char *endpoint)
{
    static bool warned;
    if (!warned && !net_local_only(endpoint)) {
        warned = true;
        fprintf(stderr, "%s: warning: %s can be reached from other hosts and [cluster] auth = "
                "none: anyone there can push, pull or stop this job; set cluster.auth=curve "
                "(see `asgd keys`)\n", who, endpoint);
    }
}
