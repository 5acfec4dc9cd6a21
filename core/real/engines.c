/* engines.c: `asgd role`'s place from torchrun's, Open MPI's, MPICH's or Slurm's
 * environment; see engines.h. */
#include "core/real/engines.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "transport/net.h"

/* One launcher's variables: the process's rank and the job's size, the
 * index of its node (NULL: it gives none), on which a shard's rank must
 * be the first (the shards listen on one host), and its rank on its node,
 * which for a shard must be its rank (ranks 0 to r then share a node). */
typedef struct engine {
    const char *name;
    const char *rank, *size;
    const char *node, *node_hint;
    const char *pass_addr;   /* how to pass MASTER_ADDR to its ranks */
    const char *local;
} engine;

/* The innermost launcher first: mpirun inside an sbatch script inherits
 * the script's SLURM_PROCID (0 in every rank). */
static const engine s_engines[] = {
    {"torchrun", "RANK", "WORLD_SIZE", "GROUP_RANK",
     "give the first node at least as many processes as shards (--nproc-per-node)", "",
     "LOCAL_RANK"},
    {"Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", NULL, NULL,
     " (pass it with mpirun -x MASTER_ADDR)", "OMPI_COMM_WORLD_LOCAL_RANK"},
    {"MPICH or Intel MPI", "PMI_RANK", "PMI_SIZE", NULL, NULL,
     " (pass it with mpiexec -genv MASTER_ADDR)", "MPI_LOCALRANKID"},
    {"Slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_NODEID",
     "place the first ranks together (srun --distribution=block)", "", "SLURM_LOCALID"},
};

/* Whether var is set to something (an empty value counts as unset). */
static bool s_set(const char *var)
{
    const char *v = getenv(var);
    return v && *v;
}

/* The integer in variable var, in [lo, hi]. */
static int s_number(const char *var, long lo, long hi, long *out, error *err)
{
    const char *text = getenv(var);
    if (!text || !*text) {
        return error_set(err, ERROR_USAGE, "%s is not set", var);
    }
    char *end;
    long v = strtol(text, &end, 10);
    /* digits alone (strtol takes " 2" and "+2" too, values no launcher sets) */
    if (!(isdigit((unsigned char)text[0]) || (text[0] == '-' && isdigit((unsigned char)text[1]))) ||
        end == text || *end || v < lo || v > hi) {
        return error_set(err, ERROR_USAGE, "%s=%s: expected an integer from %ld to "
                         "%ld", var, text, lo, hi);
    }
    *out = v;
    return 0;
}

int engines_first_host(const char *list, char *out, size_t n)
{
    size_t k = 0;
    const char *p = list;
    while (*p && *p != ',') {
        if (*p == '[') {   /* the range's first number, as written (zero-padded) */
            p++;
            if (!isdigit((unsigned char)*p)) {
                return -1;
            }
            while (isdigit((unsigned char)*p)) {
                if (k + 1 >= n) {
                    return -1;
                }
                out[k++] = *p++;
            }
            while (*p && *p != ']') {
                p++;
            }
            if (*p != ']') {
                return -1;
            }
            p++;
            continue;
        }
        if (*p == ']' || k + 1 >= n) {
            return -1;
        }
        out[k++] = *p++;
    }
    out[k] = '\0';
    return k > 0 ? 0 : -1;
}

/* The shards' host: MASTER_ADDR, or for Slurm the node list's first. */
static int s_host(const engine *e, char *host, size_t n, error *err)
{
    const char *addr = getenv("MASTER_ADDR");
    if (addr && *addr) {
        if (strlen(addr) >= n) {
            return error_set(err, ERROR_USAGE, "MASTER_ADDR is too long");
        }
        /* a host alone: "10.0.0.1:29500" was taken for an IPv6 address; an
         * IPv6 one bare or in brackets, nothing after them */
        size_t len = strlen(addr);
        bool bracketed = addr[0] == '[' && addr[len - 1] == ']';
        struct in6_addr a6;
        char bare[256];
        snprintf(bare, sizeof bare, "%.*s", (int)(bracketed ? len - 2 : len), addr + bracketed);
        if ((strchr(addr, ':') || addr[0] == '[') && inet_pton(AF_INET6, bare, &a6) != 1) {
            return error_set(err, ERROR_USAGE, "MASTER_ADDR=%s: a host without a port (the "
                             "port is MASTER_PORT)", addr);
        }
        snprintf(host, n, "%s", addr);
        return 0;
    }
    /* inside a Slurm allocation (srun --mpi=pmi2 sets PMI_RANK too), its
     * first node */
    bool slurm = strcmp(e->name, "Slurm") == 0 ||
                 (strcmp(e->name, "MPICH or Intel MPI") == 0 && s_set("SLURM_JOB_NODELIST"));
    if (!slurm) {
        return error_set(err, ERROR_USAGE, "%s sets %s but MASTER_ADDR is not set%s",
                         e->name, e->rank, e->pass_addr);
    }
    const char *step = getenv("SLURM_STEP_NODELIST");
    const char *var = step && *step ? "SLURM_STEP_NODELIST" : "SLURM_JOB_NODELIST";
    const char *list = getenv(var);
    if (!list || engines_first_host(list, host, n) < 0) {
        return error_set(err, ERROR_USAGE, "%s%s%s: no node list to find the shards' "
                         "host in (or set MASTER_ADDR)", var, list ? "=" : " is not set",
                         list ? list : "");
    }
    return 0;
}

/* "a" or "a-b". */
static void s_range(char *out, size_t n, long a, long b)
{
    snprintf(out, n, a == b ? "%ld" : "%ld-%ld", a, b);
}

/* The rank's role and index, and the line that says so. */
static void s_assign(cluster_spec *s, const engine *e, long rank, long size, const char *host,
                     long port, char *said, size_t n)
{
    int servers = s->servers;
    s->role = rank < servers ? ROLE_PS : rank == servers ? ROLE_EVALUATOR : ROLE_WORKER;
    s->task = rank < servers ? (int)rank : rank == servers ? 0 : (int)(rank - servers - 1);
    char what[64], shards[32], ports[32], workers[32];
    snprintf(what, sizeof what, s->role == ROLE_EVALUATOR ? "the evaluator" : "%s %d",
             cluster_role_name(s->role), s->task);
    s_range(shards, sizeof shards, 0, servers - 1);
    s_range(ports, sizeof ports, port + 1, port + servers);
    s_range(workers, sizeof workers, servers + 1, size - 1);
    snprintf(said, n, "asgd role: %s rank %ld of %ld is %s (rank %s: shard%s at %s:%s; rank %d: "
             "the evaluator; rank %s: worker%s)", e->name, rank, size, what, shards,
             servers > 1 ? "s" : "", host, ports, servers, workers, s->workers > 1 ? "s" : "");
}

/* The innermost launcher whose rank is set (with_slurm false: not
 * Slurm's, which an sbatch script passes to everything it runs), or NULL. */
static const engine *s_engine(bool with_slurm)
{
    for (size_t i = 0; i < sizeof s_engines / sizeof s_engines[0]; i++) {
        if ((with_slurm || strcmp(s_engines[i].name, "Slurm") != 0) && s_set(s_engines[i].rank)) {
            return &s_engines[i];
        }
    }
    return NULL;
}

/* Whether launcher o's rank, set, places this process as well: Open
 * MPI's and MPICH's always; Slurm's only in a job step's task (srun), not
 * the SLURM_PROCID of 0 that an sbatch script passes to all it runs (its
 * batch and extern steps have ids from 0xFFFFFFF0 up, and none is set
 * there at all on some versions). */
static bool s_places_too(const engine *o)
{
    if (!s_set(o->rank)) {
        return false;
    }
    if (strcmp(o->name, "Slurm") != 0) {
        return true;
    }
    const char *step = getenv("SLURM_STEP_ID");
    char *end;
    unsigned long id = step && *step ? strtoul(step, &end, 10) : ULONG_MAX;
    return step && *step && *end == '\0' && isdigit((unsigned char)step[0]) && id < 0xFFFFFFF0UL;
}

/* MASTER_PORT when it is not set: one of ENGINES_JOB_PORTS ports from
 * ENGINES_JOB_PORT_BASE picked by what every rank of one job shares and
 * another job does not: Open MPI's job id under mpirun; under srun the
 * Slurm job and step (two steps of one allocation are two jobs); an MPI
 * launched in an allocation, whose ranks' steps differ, the allocation's
 * job id alone. 29500 (torchrun's) outside them. A shared fixed port let
 * one job's workers train another's shards, which then wrote a complete
 * run. */
static long s_default_port(const engine *e)
{
    char id[256];
    if (strcmp(e->name, "Open MPI") == 0 && s_set("OMPI_MCA_ess_base_jobid")) {
        snprintf(id, sizeof id, "%s", getenv("OMPI_MCA_ess_base_jobid"));
    } else if (s_set("SLURM_JOB_ID")) {
        bool step = strcmp(e->name, "Slurm") == 0 && s_set("SLURM_STEP_ID");
        snprintf(id, sizeof id, "%s.%s", getenv("SLURM_JOB_ID"),
                 step ? getenv("SLURM_STEP_ID") : "");
    } else {
        return ENGINES_DEFAULT_PORT;
    }
    uLong h = crc32(crc32(0, NULL, 0), (const Bytef *)id, (uInt)strlen(id));
    return ENGINES_JOB_PORT_BASE + (long)(h % ENGINES_JOB_PORTS);
}

const char *engines_rank_variable(void)
{
    const engine *e = s_engine(false);
    return e ? e->rank : NULL;
}

int engines_place(cluster_spec *s, int servers, char *said, size_t n, error *err)
{
    const engine *e = s_engine(true);
    if (!e) {
        return error_set(err, ERROR_USAGE, "no launcher's environment: set TF_CONFIG "
                         "(TFJob), RANK (torchrun, PyTorchJob), OMPI_COMM_WORLD_RANK (Open "
                         "MPI's mpirun), PMI_RANK (MPICH's or Intel MPI's mpiexec) or "
                         "SLURM_PROCID (srun)");
    }
    /* A RANK without torchrun's LOCAL_RANK (a PyTorchJob's, or one left
     * exported) beside another launcher's rank and size that it does not
     * repeat is stale: every srun or mpirun rank took it for its own (rank
     * 2 of 3 under mpirun -np 4: four workers 0, no shard, each waiting for
     * the timeout; of one size, all but one failed on a port taken). Two
     * MPIs' ranks of one size that disagree: one is stale too */
    bool pytorchjob = strcmp(e->rank, "RANK") == 0 && !s_set("LOCAL_RANK");
    for (size_t i = 0; i < sizeof s_engines / sizeof s_engines[0]; i++) {
        const engine *o = &s_engines[i];
        if (o == e || !s_places_too(o)) {
            continue;
        }
        /* one that says what the other does (a wrapper's export RANK=$SLURM_PROCID
         * WORLD_SIZE=$SLURM_NTASKS) places it as that one would */
        bool same = s_set(o->size) && s_set("WORLD_SIZE") &&
                    strcmp(getenv(o->size), getenv("WORLD_SIZE")) == 0 &&
                    strcmp(getenv(o->rank), getenv("RANK")) == 0;
        if (pytorchjob && !same) {
            return error_set(err, ERROR_USAGE, "RANK=%s WORLD_SIZE=%s is set without "
                             "LOCAL_RANK (which torchrun sets) beside %s's %s=%s %s=%s: a RANK "
                             "left exported? unset RANK and WORLD_SIZE for %s to place this "
                             "process", getenv("RANK"), s_set("WORLD_SIZE") ? getenv("WORLD_SIZE")
                             : "(unset)", o->name, o->rank, getenv(o->rank), o->size,
                             s_set(o->size) ? getenv(o->size) : "(unset)", o->name);
        }
        /* torchrun's own RANK (it sets LOCAL_RANK too) is the innermost: one
         * per GPU of mpirun's or srun's per node, in its rendezvous' order */
        if (strcmp(e->rank, "RANK") != 0 && strcmp(o->name, "Slurm") != 0 && s_set(o->size) &&
            s_set(e->size) && strcmp(getenv(o->size), getenv(e->size)) == 0 &&
            strcmp(getenv(o->rank), getenv(e->rank)) != 0) {
            return error_set(err, ERROR_USAGE, "%s=%s and %s=%s both place this process: "
                             "unset the one that is not this job's", e->rank, getenv(e->rank),
                             o->rank, getenv(o->rank));
        }
    }
    long size, rank, port = s_default_port(e);
    char host[CLUSTER_ADDRESS_MAX - 16];   /* with ":PORT" it fits an address */
    if (s_number(e->size, 1, 1 << 20, &size, err) < 0 ||
        s_number(e->rank, 0, size - 1, &rank, err) < 0 ||
        (s_set("MASTER_PORT") && s_number("MASTER_PORT", 1, 65535 - servers, &port, err) < 0) ||
        s_host(e, host, sizeof host, err) < 0) {
        return -1;
    }
    if (size < servers + 2) {
        return error_set(err, ERROR_USAGE, "%s=%ld, but %d shard%s, the evaluator "
                         "and a worker need %d ranks", e->size, size, servers,
                         servers == 1 ? "" : "s", servers + 2);
    }
    /* a shard's rank must be on the shards' host: torchrun's MASTER_ADDR is
     * its group rank 0's, Slurm's the node list's first unless MASTER_ADDR
     * names another */
    bool first_node = strcmp(e->name, "Slurm") != 0 || !s_set("MASTER_ADDR");
    long node = 0;
    if (rank < servers && first_node && e->node && s_set(e->node) &&
        s_number(e->node, 0, 1 << 20, &node, err) < 0) {
        return -1;
    }
    if (node != 0) {   /* it would listen where no peer looks for it */
        return error_set(err, ERROR_USAGE, "%s rank %ld is shard %ld, but %s=%ld: the shards "
                         "listen on the first node (%s); %s", e->name, rank, rank, e->node,
                         node, host, e->node_hint);
    }
    /* where its node's index says nothing (MPI, srun --mpi=pmi2, Slurm with
     * MASTER_ADDR; mpirun --map-by node), its rank on its node does */
    long local = rank;
    const char *local_var = e->local, *procid = getenv("SLURM_PROCID");
    char *end = NULL;
    /* srun --mpi=pmi2 gives PMI's rank and Slurm's local one (an sbatch
     * script's SLURM_PROCID, 0 in every rank, is no placing of its own) */
    if (!s_set(local_var) && s_set("SLURM_LOCALID") && procid &&
        strtol(procid, &end, 10) == rank && end != procid && *end == '\0') {
        local_var = "SLURM_LOCALID";
    }
    if (rank < servers && s_set(local_var) && s_number(local_var, 0, 1 << 20, &local, err) < 0) {
        return -1;
    }
    if (local != rank) {
        return error_set(err, ERROR_USAGE, "%s rank %ld is shard %ld, but %s=%ld: the shards "
                         "are the first ranks of one node, ranks 0 to %d there", e->name, rank,
                         rank, local_var, local, servers - 1);
    }
    s->servers = servers;
    bool ipv6 = strchr(host, ':') != NULL && host[0] != '[';   /* [addr]:port */
    /* Kubeflow's PyTorchJob tells its Master MASTER_ADDR=localhost, the
     * others its service's name, and runs it without torchrun (no
     * LOCAL_RANK): such a shard listens on every interface (it bound
     * loopback alone, where no other pod reaches); torchrun's, MPI's and
     * Slurm's "localhost" stays loopback */
    bool every = rank < servers && pytorchjob && strcmp(host, "localhost") == 0;
    for (int k = 0; k < servers; k++) {
        snprintf(s->ps[k], CLUSTER_ADDRESS_MAX, ipv6 ? "[%s]:%d" : "%s:%d", every ? "*" : host,
                 (int)(port + 1 + k));
    }
    /* a PyTorchJob runs one rank a pod, and only rank 0 on MASTER_ADDR's
     * host: shard 1 on a Worker's pod listened on every interface of its
     * own while its peers looked for it on the Master's (a name that does
     * not resolve there, or resolves here, passes: ranks by hand on one host) */
    char why[300];
    if (pytorchjob && rank > 0 && rank < servers &&
        net_name_elsewhere(s->ps[rank], why, sizeof why)) {
        return error_set(err, ERROR_USAGE, "RANK %ld is shard %ld, but its address %s is not "
                         "this pod's (%s): under a PyTorchJob only rank 0 runs on MASTER_ADDR's "
                         "host, so a job there has one shard ([cluster] servers = 1; a TFJob "
                         "places more)", rank, rank, s->ps[rank], why);
    }
    s->workers = (int)(size - servers - 1);
    s->evaluator = true;
    s_assign(s, e, rank, size, host, port, said, n);
    return 0;
}
