/* provenance.h: what produced a run, for its summary.json: asgd's version
 * and the git commit it was built from (dirty when the tree had changes),
 * the host, its CPU and cores, and the command line. */
#ifndef ASGD_PROVENANCE_H
#define ASGD_PROVENANCE_H

#include <stdbool.h>

typedef struct provenance {
    const char *version;
    const char *commit;       /* "unknown" outside a git checkout */
    bool dirty;
    char host[256];
    char cpu[256];            /* the CPU's model name */
    long cores;               /* online */
    const char *command;      /* as run, arguments joined by spaces */
} provenance;

/* Records the command line (main calls it first). */
void provenance_set_command(int argc, char **argv);
/* This process's provenance. */
void provenance_get(provenance *p);
/* "asgd 0.1.0 (commit 1234abcd..., with uncommitted changes)", for
 * --version. */
const char *provenance_version_line(void);

#endif
