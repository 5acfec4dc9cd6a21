/* provenance.c: version, commit, host, CPU and command line. */
#include "core/provenance.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cJSON.h>
#include <cblas.h>
#include <zlib.h>
#include <zmq.h>

#include "asgd_version.h"
#include "core/run.h"

static char s_command[4096];

const char *provenance_file_sum(const char *path, char *out, size_t n)
{
    FILE *f = fopen(path, "rbe");
    unsigned char buf[1 << 16];
    uLong crc = crc32(0, NULL, 0);
    long long bytes = 0;
    size_t got;
    while (f && (got = fread(buf, 1, sizeof buf, f)) > 0) {
        crc = crc32(crc, buf, (uInt)got);
        bytes += (long long)got;
    }
    if (!f || ferror(f)) {
        snprintf(out, n, "unreadable");
    } else {
        snprintf(out, n, "crc32 %08lx, %lld bytes", (unsigned long)crc, bytes);
    }
    if (f) {
        fclose(f);
    }
    return out;
}

/* provenance_file_sum of path, remembered for the process. */
static const char *s_sum_now(const char *path)
{
    enum { REMEMBERED = 16 };
    static char paths[REMEMBERED][4096], sums[REMEMBERED][64];
    static int count;
    for (int i = 0; i < count; i++) {
        if (strcmp(paths[i], path) == 0) {
            return sums[i];
        }
    }
    int at = count < REMEMBERED ? count++ : REMEMBERED - 1;
    snprintf(paths[at], sizeof paths[at], "%s", path);
    return provenance_file_sum(path, sums[at], sizeof sums[at]);
}

/* The file of read_now named as path is (its last part), or path. */
static const char *s_read_instead(const char *path, const char *const *read_now)
{
    const char *name = strrchr(path, '/');
    name = name ? name + 1 : path;
    for (int i = 0; read_now && read_now[i]; i++) {
        const char *other = strrchr(read_now[i], '/');
        if (strcmp(other ? other + 1 : read_now[i], name) == 0) {
            return read_now[i];
        }
    }
    return path;
}

int provenance_input_changed(const char *run_dir, const char *const *read_now, char *path,
                             size_t path_n, char *then, char *now, size_t sum_n)
{
    char summary_path[4200];
    snprintf(summary_path, sizeof summary_path, "%s/summary.json", run_dir);
    cJSON *summary = run_read_json(summary_path);
    const cJSON *input;
    int changed = 0;
    cJSON_ArrayForEach(input, cJSON_GetObjectItemCaseSensitive(summary, "inputs")) {
        if (!input->string || !cJSON_IsString(input)) {   /* not a path's checksum */
            continue;
        }
        const char *file = s_read_instead(input->string, read_now);
        const char *sum = s_sum_now(file);
        if (strcmp(input->valuestring, sum) != 0) {
            snprintf(path, path_n, "%s", file);
            snprintf(then, sum_n, "%s", input->valuestring);
            snprintf(now, sum_n, "%s", sum);
            changed = 1;
            break;
        }
    }
    cJSON_Delete(summary);
    return changed;
}

void provenance_set_command(int argc, char **argv)
{
    size_t at = 0;
    s_command[0] = '\0';
    for (int i = 0; i < argc && at + 2 < sizeof s_command; i++) {
        at += (size_t)snprintf(s_command + at, sizeof s_command - at, "%s%s", i ? " " : "",
                               argv[i]);
    }
}

/* The first "model name" of /proc/cpuinfo. */
static void s_cpu(char *out, size_t n)
{
    snprintf(out, n, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        const char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon) {
            snprintf(out, n, "%.*s", (int)strcspn(colon + 2, "\n"), colon + 2);
            break;
        }
    }
    if (f) {
        fclose(f);
    }
}

void provenance_get(provenance *p)
{
    p->version = ASGD_VERSION;
    p->commit = ASGD_COMMIT;
    p->dirty = ASGD_DIRTY;
    if (gethostname(p->host, sizeof p->host) != 0) {
        snprintf(p->host, sizeof p->host, "unknown");
    }
    p->host[sizeof p->host - 1] = '\0';
    s_cpu(p->cpu, sizeof p->cpu);
    p->cores = sysconf(_SC_NPROCESSORS_ONLN);
    p->command = s_command;
    p->build = ASGD_BUILD;
#ifdef __clang__
    p->compiler = "clang " __clang_version__;
#else
    p->compiler = "gcc " __VERSION__;
#endif
    snprintf(p->blas, sizeof p->blas, "%s (kernels %s)", openblas_get_config(),
             openblas_get_corename());
    int major, minor, patch;
    zmq_version(&major, &minor, &patch);
    snprintf(p->zmq, sizeof p->zmq, "%d.%d.%d", major, minor, patch);
    static const char *const names[] = {"OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS",
                                        "OMP_NUM_THREADS", "GOTO_NUM_THREADS",
                                        "CUDA_VISIBLE_DEVICES", "ASGD_CACHE_DIR"};
    size_t at = 0;
    p->environment[0] = '\0';
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *v = getenv(names[i]);
        if (v && at < sizeof p->environment) {
            at += (size_t)snprintf(p->environment + at, sizeof p->environment - at, "%s%s=%s",
                                   at ? " " : "", names[i], v);
        }
    }
}

const char *provenance_version_line(void)
{
    static char line[256];
    snprintf(line, sizeof line, "asgd %s (commit %s%s)", ASGD_VERSION, ASGD_COMMIT,
             ASGD_DIRTY ? ", with uncommitted changes" : "");
    return line;
}
