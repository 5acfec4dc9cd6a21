/* provenance.h: what produced a run, for its summary.json: asgd's version
 * and the git commit it was built from (dirty when the tree had changes),
 * how it was built and the libraries it runs with (the BLAS kernels change
 * the numbers in their last digits), the host, its CPU and cores, the
 * environment that chooses kernels and threads, and the command line. */
#ifndef ASGD_PROVENANCE_H
#define ASGD_PROVENANCE_H

#include <stdbool.h>
#include <stddef.h>

typedef struct provenance {
    const char *version;
    const char *commit;       /* "unknown" outside a git checkout */
    bool dirty;
    char host[256];
    char cpu[256];            /* the CPU's model name */
    long cores;               /* online */
    const char *command;      /* as run, arguments joined by spaces */
    const char *build;        /* "Release", with ", sanitizers" and ", CUDA 12.4" */
    const char *compiler;
    char blas[512];           /* OpenBLAS's configuration and its kernels */
    char zmq[32];             /* ZeroMQ's version */
    char environment[1024];   /* NAME=value of the variables set among those that
                                 choose kernels, threads and devices, space-separated */
} provenance;

/* "crc32 1a2b3c4d, 12345 bytes" of the file at path into out (its bytes as
 * zlib's crc32 sums them), or "unreadable": what a run read, so that a file
 * changed since shows. Returns out. */
const char *provenance_file_sum(const char *path, char *out, size_t n);
/* The first file the run in run_dir read (its summary.json's inputs) that
 * has changed since: its path into path, the sum recorded into then and
 * today's into now; 1 when one has, 0 when none has (or the run records
 * none). read_now (NULL-terminated, or NULL) names the files read now in
 * place of recorded ones of the same name elsewhere (data that moved:
 * `asgd eval RUN data.path=...`); those are the ones compared. Sums are
 * remembered by path for the process (a sweep asks of the same data files
 * run after run). */
int provenance_input_changed(const char *run_dir, const char *const *read_now, char *path,
                             size_t path_n, char *then, char *now, size_t sum_n);
/* Records the command line (main calls it first). */
void provenance_set_command(int argc, char **argv);
/* This process's provenance. */
void provenance_get(provenance *p);
/* "asgd 0.1.0 (commit 1234abcd..., with uncommitted changes)", for
 * --version. */
const char *provenance_version_line(void);

#endif
