/* k8s.c: `asgd k8s`, a Kubeflow training-operator manifest for a
 * distributed experiment; see k8s.h. */
#include "core/real/k8s.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/experiment.h"
#include "core/run.h"
#include "transport/auth.h"

#define K8S_CONFIG_DIR "/etc/asgd/config"
#define K8S_KEYS_DIR "/etc/asgd/keys"
#define K8S_RUN_DIR "/runs"
#define K8S_MAX_OVERRIDES 64

/* Which roles a replica's pods may be, for the keys they mount. */
enum { K8S_SHARD = 1, K8S_EVALUATOR = 2, K8S_WORKERS = 4 };

typedef struct k8s_job {
    experiment e;
    const char *image;
    bool pytorch;
    char name[48];            /* a DNS-1123 label: experiment.name and the config's hash */
    char *config_text;        /* the resolved config */
    char *keys_text;          /* with auth: the Secret's stringData, fresh keys */
} k8s_job;

/* The job's name, a Kubernetes name (lower-case letters, digits and '-',
 * starting with a letter and ending with an alphanumeric; its Services
 * add "-worker-N", within 63): experiment.name's letters and digits, at
 * most 38 of them, then 8 hex digits of the FNV-1a hash of the resolved
 * config and, with auth, of the keys, so that runs of other settings get
 * other names (they shared one, and a second `kubectl apply` rewrote the
 * running job's config and keys) and the same config the same; each call
 * with auth makes fresh keys, so another job (a manifest made again and
 * applied over the running one gave its pods new keys, and a worker
 * restarted with them was never admitted). */
static void s_job_name(char *out, size_t n, const char *name, const char *config_text,
                       const char *keys_text)
{
    char stem[40] = "asgd-";   /* Services start with a letter */
    size_t k = 0;
    for (const char *p = name; *p && k + 2 < sizeof stem; p++) {   /* 38 at most */
        char c = (char)tolower((unsigned char)*p);
        bool ok = isalnum((unsigned char)c) && (unsigned char)c < 0x80;
        if (k == 0 && ok && !isalpha((unsigned char)c)) {
            k = 5;   /* after "asgd-" */
        }
        if (ok || (k > 0 && stem[k - 1] != '-')) {
            stem[k++] = ok ? c : '-';
        }
    }
    while (k > 0 && stem[k - 1] == '-') {
        k--;
    }
    stem[k] = '\0';
    uint32_t hash = 2166136261u;   /* the settings' lines, not its comments (the path it
                                    * came from, as typed, is one) */
    for (const char *line = config_text; *line;) {
        size_t len = strcspn(line, "\n");
        for (size_t i = 0; line[0] != '#' && i <= len && line[i]; i++) {
            hash = (hash ^ (unsigned char)line[i]) * 16777619u;
        }
        line += len + (line[len] == '\n');
    }
    for (const char *c = keys_text ? keys_text : ""; *c; c++) {
        hash = (hash ^ (unsigned char)*c) * 16777619u;
    }
    snprintf(out, n, "%s%s%08x", k ? stem : "asgd", "-", hash);
}

/* An image reference: registry/name:tag or @digest characters only, so
 * that it goes into YAML as it is. */
static bool s_image_ok(const char *image)
{
    for (const char *p = image; *p; p++) {
        if (!isalnum((unsigned char)*p) && !strchr("._-/:@", *p)) {
            return false;
        }
    }
    return *image && isalnum((unsigned char)image[0]);
}

/* The resolved config as text. */
static char *s_resolved(const config *c, error *err)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    bool bad = !f;
    if (f) {
        config_print(c, f);
        bad = ferror(f) != 0;
        bad = fclose(f) != 0 || bad;
    }
    if (bad) {
        free(text);
        error_set(err, ERROR_RUNTIME, "out of memory for the resolved config");
        return NULL;
    }
    return text;
}

/* text as a YAML block scalar's lines, each indented. */
static void s_block(FILE *out, const char *text, int indent)
{
    for (const char *p = text; *p;) {
        size_t len = strcspn(p, "\n");
        fprintf(out, len ? "%*s%.*s\n" : "\n", len ? indent : 0, "", (int)len, p);
        p += len + (p[len] == '\n');
    }
}

/* Fresh CURVE keys for every role as a Secret's stringData into
 * j->keys_text: asgd keys into a private folder, its files copied, the
 * folder removed. */
static int s_make_keys(k8s_job *j, error *err)
{
    char dir[] = "/tmp/asgd-k8s-keys-XXXXXX";
    if (!mkdtemp(dir)) {
        return error_set(err, ERROR_RUNTIME, "cannot make a private folder for the keys");
    }
    size_t size = 0;
    FILE *out = open_memstream(&j->keys_text, &size);
    int rc = out ? auth_make_keys(dir, j->e.workers, err)
                 : error_set(err, ERROR_RUNTIME, "out of memory");
    for (int i = -2; out && rc == 0 && i < j->e.workers; i++) {
        char who[32];
        snprintf(who, sizeof who, i == -2 ? "server" : i == -1 ? "evaluator" : "worker-%d", i);
        for (int secret = 0; secret < 2 && rc == 0; secret++) {
            char path[160];
            snprintf(path, sizeof path, "%s/%s.key%s", dir, who, secret ? "_secret" : "");
            char *text = run_read_file(path);
            if (!text) {
                rc = error_set(err, ERROR_RUNTIME, "cannot read %s", path);
                break;
            }
            fprintf(out, "  %s.key%s: |\n", who, secret ? "_secret" : "");
            s_block(out, text, 4);
            free(text);
        }
    }
    if (out && fclose(out) != 0 && rc == 0) {
        rc = error_set(err, ERROR_RUNTIME, "out of memory");
    }
    error ignored;
    run_remove_dir(dir, &ignored);   /* best effort: the keys are in memory now */
    return rc;
}

/* The Secret of the keys s_make_keys made. */
static void s_secret(FILE *out, const k8s_job *j)
{
    fprintf(out, "---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: %s-keys\n"
            "type: Opaque\nstringData:\n%s", j->name, j->keys_text);
}

static const char *s_restart_policy(int restart)
{
    return restart == RESTART_NEVER ? "Never" : restart == RESTART_ON_FAILURE ? "OnFailure"
                                                                              : "ExitCode";
}

/* The keys a replica's pods mount: shards their secret and every client's
 * public key; the evaluator and workers their secrets and the shards'
 * public key (all workers share one pod template, so every worker's
 * secret; none holds the shards' or the evaluator's). */
static void s_key_items(FILE *out, const k8s_job *j, bool shard, bool evaluator, bool workers)
{
    fprintf(out, "              items:\n");
    for (int i = -2; i < j->e.workers; i++) {
        bool mine = i == -2 ? shard : i == -1 ? evaluator : workers;
        char who[32];
        snprintf(who, sizeof who, i == -2 ? "server" : i == -1 ? "evaluator" : "worker-%d", i);
        for (int secret = 0; secret < 2; secret++) {
            if (secret ? mine : (mine || shard || i == -2)) {
                fprintf(out, "              - key: %s.key%s\n                path: %s.key%s\n",
                        who, secret ? "_secret" : "", who, secret ? "_secret" : "");
            }
        }
    }
}

/* One replica spec: its pods run `asgd role` on the mounted config
 * (--restore: a shard restarted in its pod takes up its checkpoint). */
static void s_replica(FILE *out, const k8s_job *j, const char *type, int replicas, bool gpu,
                      int roles)
{
    bool curve = j->e.auth == AUTH_CURVE;
    fprintf(out, "    %s:\n      replicas: %d\n      restartPolicy: %s\n      template:\n"
            "        spec:\n          containers:\n          - name: %s\n            image: %s\n"
            "            command: [\"asgd\", \"role\", \"" K8S_CONFIG_DIR "/config.ini\", "
            "\"--run_dir=" K8S_RUN_DIR "\", \"--restore\"%s]\n            ports:\n"
            "            - containerPort: %d\n              name: %s\n", type, replicas,
            s_restart_policy(j->e.restart), j->pytorch ? "pytorch" : "tensorflow", j->image,
            curve ? ", \"--keys=" K8S_KEYS_DIR "\"" : "", j->pytorch ? 23456 : 2222,
            j->pytorch ? "pytorchjob-port" : "tfjob-port");
    if (gpu) {
        fprintf(out, "            resources:\n              limits:\n"
                "                nvidia.com/gpu: 1\n");
    }
    fprintf(out, "            volumeMounts:\n            - name: config\n"
            "              mountPath: " K8S_CONFIG_DIR "\n            - name: runs\n"
            "              mountPath: " K8S_RUN_DIR "\n");
    if (curve) {
        fprintf(out, "            - name: keys\n              mountPath: " K8S_KEYS_DIR "\n"
                "              readOnly: true\n");
    }
    fprintf(out, "          volumes:\n          - name: config\n            configMap:\n"
            "              name: %s-config\n          - name: runs\n            emptyDir: {}\n",
            j->name);
    if (curve) {
        fprintf(out, "          - name: keys\n            secret:\n              secretName: "
                "%s-keys\n              defaultMode: 0400\n", j->name);
        s_key_items(out, j, roles & K8S_SHARD, roles & K8S_EVALUATOR, roles & K8S_WORKERS);
    }
}

static void s_job(FILE *out, const k8s_job *j)
{
    const experiment *e = &j->e;
    bool gpu = e->backend.device == BACKEND_CUDA;
    fprintf(out, "---\napiVersion: kubeflow.org/v1\nkind: %s\nmetadata:\n  name: %s\nspec:\n"
            "  runPolicy:\n    cleanPodPolicy: Running\n    backoffLimit: %ld\n  %s:\n",
            j->pytorch ? "PyTorchJob" : "TFJob", j->name, e->backoff_limit,
            j->pytorch ? "pytorchReplicaSpecs" : "tfReplicaSpecs");
    if (j->pytorch) {   /* rank 0 the shard, rank 1 the evaluator, then the workers */
        s_replica(out, j, "Master", 1, false, K8S_SHARD);
        s_replica(out, j, "Worker", e->workers + 1, gpu, K8S_EVALUATOR | K8S_WORKERS);
        return;
    }
    s_replica(out, j, "PS", e->servers, false, K8S_SHARD);
    /* the evaluator's model runs on the configured device too: without a
     * GPU of its own it refused backend.device = cuda (exit 2, which no
     * restart mends), and every GPU TFJob failed */
    s_replica(out, j, "Chief", 1, gpu, K8S_EVALUATOR);
    s_replica(out, j, "Worker", e->workers, gpu, K8S_WORKERS);
}

/* CONFIG, --image, --kind and overrides; the experiment read with
 * cluster.transport = tcp. */
static int s_read(k8s_job *j, int argc, char **argv, error *err)
{
    const char *kind = "tfjob";
    char *overrides[K8S_MAX_OVERRIDES + 1];
    int n = 0;
    if (argc < 1 || argv[0][0] == '-') {
        return error_set(err, ERROR_USAGE, "usage: asgd k8s CONFIG --image IMAGE "
                         "[--kind tfjob|pytorchjob] [section.key=value ...]");
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        size_t name = strcspn(a, "=");
        bool image = strncmp(a, "--image", name) == 0 && name == 7;
        bool kinds = strncmp(a, "--kind", name) == 0 && name == 6;
        if (image || kinds) {
            const char *value = a[name] ? a + name + 1 : i + 1 < argc ? argv[++i] : NULL;
            if (!value || value[0] == '-' || !value[0]) {
                return error_set(err, ERROR_USAGE, "%.*s: missing value", (int)name, a);
            }
            *(image ? &j->image : &kind) = value;
        } else if (a[0] == '-') {
            return error_set(err, ERROR_USAGE, "%s: unknown flag (asgd k8s takes --image and "
                             "--kind)", a);
        } else if (n == K8S_MAX_OVERRIDES) {
            return error_set(err, ERROR_USAGE, "more than %d overrides", K8S_MAX_OVERRIDES);
        } else {
            overrides[n++] = argv[i];
        }
    }
    if (!j->image) {
        return error_set(err, ERROR_USAGE, "--image IMAGE is needed (the Dockerfile "
                         "at the repository's root builds one)");
    }
    if (!s_image_ok(j->image)) {
        return error_set(err, ERROR_USAGE, "--image %s: not an image reference "
                         "(letters, digits and ._-/:@)", j->image);
    }
    if (strcmp(kind, "tfjob") != 0 && strcmp(kind, "pytorchjob") != 0) {
        return error_set(err, ERROR_USAGE, "--kind %s: expected tfjob or pytorchjob", kind);
    }
    j->pytorch = strcmp(kind, "pytorchjob") == 0;
    overrides[n++] = "cluster.transport=tcp";
    if (experiment_configure(&j->e, argv[0], n, overrides, NULL, err) < 0) {
        return -1;
    }
    if (!j->e.alg) {
        return error_set(err, ERROR_USAGE, "%s: [train] algorithm = sequential runs in one "
                         "process; asgd k8s needs a distributed rule", argv[0]);
    }
    if (j->pytorch && j->e.servers != 1) {
        return config_fail(j->e.c, "cluster", "servers", err, "a PyTorchJob has one master "
                           "pod, which holds the shard: servers must be 1 (or use --kind tfjob)");
    }
    j->config_text = s_resolved(j->e.c, err);
    if (!j->config_text || (j->e.auth == AUTH_CURVE && s_make_keys(j, err) < 0)) {
        return -1;
    }
    s_job_name(j->name, sizeof j->name, j->e.name, j->config_text, j->keys_text);
    return 0;
}

/* The whole manifest into out. */
static void s_manifest(FILE *out, k8s_job *j)
{
    fprintf(out, "# asgd k8s: a %s for experiment %s: %d shard%s, %d worker%s and an "
            "evaluator.\n# kubectl apply -f this file. Each pod's files, checkpoints "
            "included, are in %s,\n# an emptyDir: mount a persistent volume there to keep "
            "them and to restart shards.\napiVersion: v1\nkind: ConfigMap\nmetadata:\n"
            "  name: %s-config\ndata:\n  config.ini: |\n",
            j->pytorch ? "PyTorchJob" : "TFJob", j->e.name, j->e.servers,
            j->e.servers == 1 ? "" : "s", j->e.workers, j->e.workers == 1 ? "" : "s",
            K8S_RUN_DIR, j->name);
    s_block(out, j->config_text, 4);
    if (j->e.auth == AUTH_CURVE) {
        s_secret(out, j);
    }
    s_job(out, j);
}

int k8s_main(int argc, char **argv)
{
    k8s_job j = {0};
    error err = {0};
    char *text = NULL;
    size_t len = 0;
    int rc = s_read(&j, argc, argv, &err);
    if (rc == 0 && j.e.restart == RESTART_NEVER) {   /* pods start in any order */
        fprintf(stderr, "asgd k8s: warning: cluster.restart = never: a pod that waits longer "
                "than [cluster] timeout (%g s) for a shard's pod to start fails the job (exit "
                "138, which restartPolicy ExitCode retries: cluster.restart = exit-code)\n",
                j.e.timeout);
    }
    if (rc == 0 && j.e.restart != RESTART_NEVER && j.e.checkpoint_every <= 0) {
        fprintf(stderr, "asgd k8s: warning: cluster.restart = %s but no [checkpoint] every: "
                "a shard's pod restarted by Kubernetes cannot take up where it was\n",
                j.e.restart == RESTART_ON_FAILURE ? "on-failure" : "exit-code");
    }
    if (rc == 0) {   /* all or nothing: a manifest cut short must not reach kubectl */
        FILE *out = open_memstream(&text, &len);
        if (out) {
            s_manifest(out, &j);
        }
        rc = out ? 0 : error_set(&err, ERROR_RUNTIME, "out of memory");
        if (out && fclose(out) != 0 && rc == 0) {
            rc = error_set(&err, ERROR_RUNTIME, "out of memory");
        }
    }
    if (rc == 0 && (fwrite(text, 1, len, stdout) != len || fflush(stdout) != 0)) {
        rc = error_set(&err, ERROR_RUNTIME, "cannot write the manifest");
    }
    free(text);
    free(j.config_text);
    free(j.keys_text);
    experiment_destroy(&j.e);
    if (rc < 0) {
        fprintf(stderr, "asgd k8s: %s\n", err.msg);
        return err.status ? err.status : ERROR_RUNTIME;
    }
    return 0;
}
