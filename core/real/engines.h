/* engines.h: where `asgd role` stands in a job, from the environment the
 * launcher that started it gives every process.
 *
 *   torchrun, PyTorchJob   RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT
 *   Open MPI (mpirun)      OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE, and
 *                          MASTER_ADDR (MASTER_PORT) passed with -x
 *   MPICH, Intel MPI       PMI_RANK, PMI_SIZE, and MASTER_ADDR passed with
 *   (mpiexec)              -genv, or inside a Slurm allocation its node list
 *   Slurm (srun)           SLURM_PROCID, SLURM_NTASKS, SLURM_STEP_NODELIST
 *                          or SLURM_JOB_NODELIST (node[1-3] form); a
 *                          MASTER_ADDR replaces the list's first node
 *
 * (TF_CONFIG, as TFJob injects it, is read by cluster_parse.) The first
 * found, in that order, decides: the innermost launcher (mpiexec in an
 * sbatch script inherits its SLURM_PROCID, 0 in every rank). With S
 * shards ([cluster] servers) and N ranks in all:
 *
 *   ranks 0 .. S-1   shards 0 .. S-1, on the MASTER_ADDR host (the first
 *                    node), at ports MASTER_PORT+1 .. MASTER_PORT+S
 *                    (MASTER_PORT when not set: within a Slurm allocation
 *                    or under Open MPI's mpirun, a port from 10000 to
 *                    31999 picked by the job's id, else 29500; the port
 *                    itself is left to torchrun's own store)
 *   rank S           the evaluator
 *   ranks S+1 .. N-1 workers 0 .. N-S-2
 *
 * so the shards must be the first ranks on the first host: torchrun
 * --nproc-per-node at least S on the first node, srun's and mpirun's
 * default block placement. A shard's rank on another node (GROUP_RANK or
 * SLURM_NODEID not 0) is refused: it would listen where no peer looks. */
#ifndef ASGD_ENGINES_H
#define ASGD_ENGINES_H

#include <stddef.h>

#include "core/error.h"
#include "core/real/cluster.h"

#define ENGINES_DEFAULT_PORT 29500
#define ENGINES_JOB_PORT_BASE 10000   /* below Linux's ephemeral ports (32768 on) */
#define ENGINES_JOB_PORTS 22000

/* Places s (role, task, shards' addresses, workers, evaluator) for a job
 * of `servers` shards from the environment, and says how in said[n] (one
 * line). A missing, partial or inconsistent environment is an error that
 * names the variable (ERROR_USAGE). */
int engines_place(cluster_spec *s, int servers, char *said, size_t n, error *err);

/* The first rank variable set of a launcher that starts each process
 * itself (RANK, OMPI_COMM_WORLD_RANK, PMI_RANK; not Slurm's, which an
 * sbatch script passes to everything it runs), or NULL. */
const char *engines_rank_variable(void);

/* The first host of a Slurm node list ("node[01-03],gpu7" gives
 * "node01") into out[n]; -1 when the list is empty or malformed. */
int engines_first_host(const char *list, char *out, size_t n);

#endif
