/* provenance.c: version, commit, host, CPU and command line. */
#include "core/provenance.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "asgd_version.h"

static char s_command[4096];

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
}

const char *provenance_version_line(void)
{
    static char line[256];
    snprintf(line, sizeof line, "asgd %s (commit %s%s)", ASGD_VERSION, ASGD_COMMIT,
             ASGD_DIRTY ? ", with uncommitted changes" : "");
    return line;
}
