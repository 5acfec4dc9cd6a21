/* test_engines.c: `asgd role`'s place from each launcher's environment
 * (engines.h): the rank-to-role mapping, Slurm's node lists, which
 * launcher wins when several are set, and an error naming the variable
 * for each wrong or missing one; TF_CONFIG's task types for `asgd role`. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "core/config.h"
#include "core/experiment.h"
#include "core/real/cluster.h"
#include "core/real/engines.h"
#include "support.h"
#include "wire_client.h"

static const char *const s_vars[] = {
    "TF_CONFIG", "RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "OMPI_COMM_WORLD_RANK",
    "OMPI_COMM_WORLD_SIZE", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_STEP_NODELIST",
    "SLURM_JOB_NODELIST", "PMI_RANK", "PMI_SIZE", "GROUP_RANK", "SLURM_NODEID",
    "LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID",
    "SLURM_JOB_ID", "SLURM_STEP_ID", "OMPI_MCA_ess_base_jobid",
};

/* Sets "NAME=value" pairs (NULL-ended) after clearing every variable. */
static void s_env(const char *const *pairs)
{
    for (size_t i = 0; i < sizeof s_vars / sizeof s_vars[0]; i++) {
        unsetenv(s_vars[i]);
    }
    for (int i = 0; pairs[i]; i++) {
        char name[64];
        const char *eq = strchr(pairs[i], '=');
        snprintf(name, sizeof name, "%.*s", (int)(eq - pairs[i]), pairs[i]);
        setenv(name, eq + 1, 1);
    }
}

static int s_place(cluster_spec *s, int servers, error *err)
{
    char said[512];
    memset(s, 0, sizeof *s);
    return engines_place(s, servers, said, sizeof said, err);
}

static void test_slurm_node_lists(void **state)
{
    (void)state;
    const char *cases[][2] = {
        {"node[01-03],gpu7", "node01"}, {"c[1-2]-ib", "c1-ib"}, {"a[1-2]b[3,5]", "a1b3"},
        {"single", "single"}, {"n[7,9-10]", "n7"}, {"10.0.0.2,10.0.0.3", "10.0.0.2"},
    };
    char host[64];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(engines_first_host(cases[i][0], host, sizeof host), 0);
        assert_string_equal(host, cases[i][1]);
    }
    const char *bad[] = {"", "x[", "x[a-b]", "x]", ",n1", "n[1-2"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (engines_first_host(bad[i], host, sizeof host) == 0) {
            fail_msg("\"%s\" gave \"%s\"", bad[i], host);
        }
    }
    assert_int_equal(engines_first_host("node[0123456789]", host, 8), -1);   /* too long */
}

/* 2 shards, 6 ranks: ranks 0-1 shards, 2 the evaluator, 3-5 workers 0-2. */
static void test_ranks_become_roles(void **state)
{
    (void)state;
    const int roles[] = {ROLE_PS, ROLE_PS, ROLE_EVALUATOR, ROLE_WORKER, ROLE_WORKER, ROLE_WORKER};
    const int tasks[] = {0, 1, 0, 0, 1, 2};
    for (int rank = 0; rank < 6; rank++) {
        char r[32];
        snprintf(r, sizeof r, "RANK=%d", rank);
        s_env((const char *const[]){r, "WORLD_SIZE=6", "MASTER_ADDR=m0", "MASTER_PORT=23456",
                                    NULL});
        cluster_spec s;
        error err = {0};
        assert_int_equal(s_place(&s, 2, &err), 0);
        assert_int_equal(s.role, roles[rank]);
        assert_int_equal(s.task, tasks[rank]);
        assert_int_equal(s.servers, 2);
        assert_int_equal(s.workers, 3);
        assert_true(s.evaluator);
        assert_string_equal(s.ps[0], "m0:23457");
        assert_string_equal(s.ps[1], "m0:23458");
    }
    /* PyTorchJob tells its Master MASTER_ADDR=localhost and the rest its
     * name: a shard told localhost listens on every interface (it bound
     * loopback alone, where no other pod reached it) */
    for (int rank = 0; rank < 2; rank++) {
        char r[32];
        snprintf(r, sizeof r, "RANK=%d", rank);
        s_env((const char *const[]){r, "WORLD_SIZE=3", "MASTER_ADDR=localhost",
                                    "MASTER_PORT=23456", NULL});
        cluster_spec s;
        error err = {0};
        assert_int_equal(s_place(&s, 1, &err), 0);
        assert_string_equal(s.ps[0], rank == 0 ? "*:23457" : "localhost:23457");
    }
    /* torchrun's and MPI's localhost stays loopback (a job of one host) */
    const char *const *single[] = {
        (const char *const[]){"RANK=0", "WORLD_SIZE=3", "LOCAL_RANK=0", "MASTER_ADDR=localhost",
                              NULL},
        (const char *const[]){"OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=3",
                              "MASTER_ADDR=localhost", NULL},
    };
    for (int i = 0; i < 2; i++) {
        s_env(single[i]);
        cluster_spec s;
        error err = {0};
        assert_int_equal(s_place(&s, 1, &err), 0);
        assert_string_equal(s.ps[0], "localhost:29501");
    }
    /* Slurm: the node list's first host and the default port; MASTER_ADDR
     * replaces the host */
    s_env((const char *const[]){"SLURM_PROCID=1", "SLURM_NTASKS=3",
                                "SLURM_JOB_NODELIST=gpu[03-04]", NULL});
    cluster_spec s;
    error err = {0};
    assert_int_equal(s_place(&s, 1, &err), 0);
    assert_int_equal(s.role, ROLE_EVALUATOR);
    assert_string_equal(s.ps[0], "gpu03:29501");
    s_env((const char *const[]){"SLURM_PROCID=2", "SLURM_NTASKS=3", "SLURM_STEP_NODELIST=a1",
                                "SLURM_JOB_NODELIST=b1", NULL});
    assert_int_equal(s_place(&s, 1, &err), 0);
    assert_string_equal(s.ps[0], "a1:29501");   /* the step's list before the job's */
    s_env((const char *const[]){"SLURM_PROCID=2", "SLURM_NTASKS=3", "SLURM_STEP_NODELIST=",
                                "SLURM_JOB_NODELIST=b1", "MASTER_PORT=", NULL});
    assert_int_equal(s_place(&s, 1, &err), 0);
    assert_string_equal(s.ps[0], "b1:29501");   /* empty: as if unset */
    s_env((const char *const[]){"RANK=0", "WORLD_SIZE=3", "MASTER_ADDR=fd00::1", NULL});
    assert_int_equal(s_place(&s, 1, &err), 0);
    assert_string_equal(s.ps[0], "[fd00::1]:29501");
    s_env((const char *const[]){"SLURM_PROCID=2", "SLURM_NTASKS=3", "MASTER_ADDR=h",
                                "SLURM_JOB_NODELIST=b1", NULL});
    assert_int_equal(s_place(&s, 1, &err), 0);
    assert_string_equal(s.ps[0], "h:29501");
    /* mpirun inside a Slurm allocation: Open MPI's ranks, not the step's */
    s_env((const char *const[]){"OMPI_COMM_WORLD_RANK=3", "OMPI_COMM_WORLD_SIZE=4",
                                "MASTER_ADDR=h", "SLURM_PROCID=0", "SLURM_NTASKS=1", NULL});
    assert_int_equal(s_place(&s, 1, &err), 0);
    assert_int_equal(s.role, ROLE_WORKER);
    assert_int_equal(s.task, 1);
    /* and MPICH's or Intel MPI's mpiexec in an sbatch script, whose
     * SLURM_PROCID (0) every rank inherits: its own ranks (every rank was
     * shard 0), the shards on the allocation's first node */
    s_env((const char *const[]){"PMI_RANK=3", "PMI_SIZE=4", "SLURM_PROCID=0", "SLURM_NTASKS=4",
                                "SLURM_JOB_NODELIST=n[1-2]", NULL});
    assert_int_equal(s_place(&s, 1, &err), 0);
    assert_int_equal(s.role, ROLE_WORKER);
    assert_int_equal(s.task, 1);
    assert_string_equal(s.ps[0], "n1:29501");
    /* a shard's rank on the first node is placed; on another, refused (it
     * listened where no peer looked for it) */
    s_env((const char *const[]){"RANK=1", "WORLD_SIZE=6", "GROUP_RANK=0", "MASTER_ADDR=m0",
                                NULL});
    assert_int_equal(s_place(&s, 3, &err), 0);
    assert_int_equal(s.role, ROLE_PS);
    /* the innermost launcher places it: torchrun started once a node by
     * mpirun (its ranks inherit the node's MPI rank), and mpirun inside
     * an sbatch script (every rank inherits the script's SLURM_PROCID) */
    s_env((const char *const[]){"RANK=5", "WORLD_SIZE=8", "GROUP_RANK=1", "LOCAL_RANK=1",
                                "OMPI_COMM_WORLD_RANK=1", "MASTER_ADDR=m0", NULL});
    assert_int_equal(s_place(&s, 1, &err), 0);
    assert_true(s.role == ROLE_WORKER && s.task == 3);
    s_env((const char *const[]){"OMPI_COMM_WORLD_RANK=3", "OMPI_COMM_WORLD_SIZE=6",
                                "SLURM_PROCID=0", "MASTER_ADDR=m0", NULL});
    assert_int_equal(s_place(&s, 1, &err), 0);
    assert_true(s.role == ROLE_WORKER && s.task == 1);
    /* torchrun's rendezvous orders its nodes as it will: of mpirun's size,
     * its rank is its own all the same; and a RANK set by hand for each
     * process of an sbatch script (its SLURM_PROCID is 0 in every one, and
     * it is in no job step) places it */
    s_env((const char *const[]){"RANK=0", "WORLD_SIZE=4", "LOCAL_RANK=0", "GROUP_RANK=0",
                                "OMPI_COMM_WORLD_RANK=2", "OMPI_COMM_WORLD_SIZE=4",
                                "MASTER_ADDR=m0", NULL});
    assert_int_equal(s_place(&s, 1, &err), 0);
    assert_true(s.role == ROLE_PS && s.task == 0);
    s_env((const char *const[]){"RANK=3", "WORLD_SIZE=4", "SLURM_PROCID=0", "SLURM_NTASKS=4",
                                "MASTER_ADDR=localhost", NULL});
    assert_int_equal(s_place(&s, 1, &err), 0);
    assert_true(s.role == ROLE_WORKER && s.task == 1);
    /* a wrapper's export RANK=$SLURM_PROCID WORLD_SIZE=$SLURM_NTASKS places
     * it as srun does */
    s_env((const char *const[]){"RANK=2", "WORLD_SIZE=4", "SLURM_PROCID=2", "SLURM_NTASKS=4",
                                "SLURM_STEP_ID=0", "MASTER_ADDR=localhost", NULL});
    assert_int_equal(s_place(&s, 1, &err), 0);
    assert_true(s.role == ROLE_WORKER && s.task == 0);
    /* with 2 shards, rank 1 on another node where no node index says so
     * (mpirun --map-by node, srun --mpi=pmi2, Slurm with MASTER_ADDR) is
     * refused by its rank on its node: it listened where no peer looked */
    const char *const *apart[] = {
        (const char *const[]){"OMPI_COMM_WORLD_RANK=1", "OMPI_COMM_WORLD_SIZE=6",
                              "OMPI_COMM_WORLD_LOCAL_RANK=0", "MASTER_ADDR=h", NULL},
        (const char *const[]){"PMI_RANK=1", "PMI_SIZE=5", "SLURM_PROCID=1", "SLURM_NODEID=1",
                              "SLURM_LOCALID=0", "SLURM_JOB_NODELIST=n[1-2]", NULL},
        (const char *const[]){"SLURM_PROCID=1", "SLURM_NTASKS=5", "SLURM_NODEID=1",
                              "SLURM_LOCALID=0", "SLURM_JOB_NODELIST=n[1-2]", "MASTER_ADDR=n1",
                              NULL},
    };
    const char *names[] = {"OMPI_COMM_WORLD_LOCAL_RANK=0", "SLURM_LOCALID=0",
                           "SLURM_LOCALID=0"};
    for (int i = 0; i < 3; i++) {
        s_env(apart[i]);
        err = (error){0};
        assert_int_equal(s_place(&s, 2, &err), -1);
        if (!strstr(err.msg, "rank 1 is shard 1, but") || !strstr(err.msg, names[i])) {
            fail_msg("%s: \"%s\"", names[i], err.msg);
        }
    }
    s_env((const char *const[]){"OMPI_COMM_WORLD_RANK=1", "OMPI_COMM_WORLD_SIZE=6",
                                "OMPI_COMM_WORLD_LOCAL_RANK=1", "MASTER_ADDR=h", NULL});
    assert_int_equal(s_place(&s, 2, &err), 0);   /* ranks 0 and 1 on one node */
    assert_true(s.role == ROLE_PS && s.task == 1);
    s_env((const char *const[]){"PMI_RANK=1", "PMI_SIZE=6", "SLURM_PROCID=0", "SLURM_LOCALID=0",
                                "MASTER_ADDR=h", NULL});   /* mpiexec in sbatch: the script's */
    assert_int_equal(s_place(&s, 2, &err), 0);
    assert_true(s.role == ROLE_PS && s.task == 1);
    /* Slurm's shards are on the node list's first unless MASTER_ADDR names
     * the node they are on */
    s_env((const char *const[]){"SLURM_PROCID=0", "SLURM_NTASKS=4", "SLURM_NODEID=1",
                                "SLURM_JOB_NODELIST=n[1-2]", "MASTER_ADDR=n2", NULL});
    assert_int_equal(s_place(&s, 1, &err), 0);
    assert_string_equal(s.ps[0], "n2:29501");
}

/* Each wrong or partial environment is one line naming the variable. */
/* Shard 0's port in the environment pairs (NULL-ended), with one shard. */
static int s_port_of(const char *const *pairs)
{
    s_env(pairs);
    cluster_spec s;
    error err = {0};
    assert_int_equal(s_place(&s, 1, &err), 0);
    return atoi(strrchr(s.ps[0], ':') + 1);
}

/* Without MASTER_PORT, two jobs on one node meet at different ports:
 * Slurm's job id (srun, or an MPI inside an allocation) or Open MPI's
 * picks one, the same for every rank of a job; a fixed 29501 let one
 * job's workers train another's shards. MASTER_PORT still decides. */
static void test_a_jobs_port_is_its_own(void **state)
{
    (void)state;
    int a = s_port_of((const char *const[]){"SLURM_PROCID=0", "SLURM_NTASKS=3",
                                            "SLURM_JOB_NODELIST=n1", "SLURM_JOB_ID=4401", NULL});
    int a2 = s_port_of((const char *const[]){"SLURM_PROCID=2", "SLURM_NTASKS=3",
                                             "SLURM_JOB_NODELIST=n1", "SLURM_JOB_ID=4401", NULL});
    int b = s_port_of((const char *const[]){"SLURM_PROCID=0", "SLURM_NTASKS=3",
                                            "SLURM_JOB_NODELIST=n1", "SLURM_JOB_ID=4402", NULL});
    assert_int_equal(a, a2);
    assert_true(a != b);
    /* two srun steps of one allocation are two jobs; one step's tasks agree */
    int step1 = s_port_of((const char *const[]){"SLURM_PROCID=0", "SLURM_NTASKS=3",
                                                "SLURM_JOB_NODELIST=n1", "SLURM_JOB_ID=4401",
                                                "SLURM_STEP_ID=1", NULL});
    int step1b = s_port_of((const char *const[]){"SLURM_PROCID=2", "SLURM_NTASKS=3",
                                                 "SLURM_JOB_NODELIST=n1", "SLURM_JOB_ID=4401",
                                                 "SLURM_STEP_ID=1", NULL});
    int step2 = s_port_of((const char *const[]){"SLURM_PROCID=0", "SLURM_NTASKS=3",
                                                "SLURM_JOB_NODELIST=n1", "SLURM_JOB_ID=4401",
                                                "SLURM_STEP_ID=2", NULL});
    assert_int_equal(step1, step1b);
    assert_true(step1 != step2);
    assert_true(a > ENGINES_JOB_PORT_BASE && a <= ENGINES_JOB_PORT_BASE + ENGINES_JOB_PORTS);
    /* mpiexec in an allocation: every rank inherits the job's id, while its
     * ranks on other nodes run in steps of their own */
    int mpich = s_port_of((const char *const[]){"PMI_RANK=3", "PMI_SIZE=4", "SLURM_PROCID=0",
                                                "SLURM_NTASKS=4", "SLURM_JOB_NODELIST=n1",
                                                "SLURM_JOB_ID=4401", "SLURM_STEP_ID=7", NULL});
    assert_int_equal(mpich, a);
    int ompi = s_port_of((const char *const[]){"OMPI_COMM_WORLD_RANK=1",
                                               "OMPI_COMM_WORLD_SIZE=4", "MASTER_ADDR=h",
                                               "OMPI_MCA_ess_base_jobid=3312058369", NULL});
    int ompi2 = s_port_of((const char *const[]){"OMPI_COMM_WORLD_RANK=1",
                                                "OMPI_COMM_WORLD_SIZE=4", "MASTER_ADDR=h",
                                                "OMPI_MCA_ess_base_jobid=3312058370", NULL});
    assert_true(ompi != ompi2 && ompi > ENGINES_JOB_PORT_BASE);
    assert_int_equal(s_port_of((const char *const[]){"SLURM_PROCID=0", "SLURM_NTASKS=3",
                                                     "SLURM_JOB_NODELIST=n1",
                                                     "SLURM_JOB_ID=4401", "MASTER_PORT=4000",
                                                     NULL}),
                     4001);
    assert_int_equal(s_port_of((const char *const[]){"RANK=0", "WORLD_SIZE=3",
                                                     "MASTER_ADDR=h", NULL}),
                     ENGINES_DEFAULT_PORT + 1);   /* torchrun's own */
}

static void test_bad_environments_name_the_variable(void **state)
{
    (void)state;
    struct {
        const char *env[8];
        const char *says;
    } cases[] = {
        {{NULL}, "no launcher's environment"},
        {{"RANK=1", NULL}, "WORLD_SIZE is not set"},
        {{"RANK=1", "WORLD_SIZE=four", "MASTER_ADDR=h", NULL}, "WORLD_SIZE=four"},
        {{"RANK=4", "WORLD_SIZE=4", "MASTER_ADDR=h", NULL}, "RANK=4: expected an integer from 0 to 3"},
        {{"RANK=-1", "WORLD_SIZE=4", "MASTER_ADDR=h", NULL}, "RANK=-1"},
        {{"RANK=0", "WORLD_SIZE=4", NULL}, "MASTER_ADDR is not set"},
        {{"OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=4", NULL}, "mpirun -x MASTER_ADDR"},
        {{"RANK=0", "WORLD_SIZE=2", "MASTER_ADDR=h", NULL}, "WORLD_SIZE=2, but 1 shard"},
        {{"RANK=0", "WORLD_SIZE=4", "MASTER_ADDR=h", "MASTER_PORT=70000", NULL}, "MASTER_PORT=70000"},
        {{"RANK=0", "WORLD_SIZE=4", "MASTER_ADDR=10.0.0.1:29500", NULL},
         "MASTER_ADDR=10.0.0.1:29500: a host without a port"},
        {{"RANK=0", "WORLD_SIZE=4", "MASTER_ADDR=[fd00::1]:29500", NULL}, "a host without"},
        {{"SLURM_PROCID=0", "SLURM_NTASKS=4", NULL}, "SLURM_JOB_NODELIST is not set"},
        {{"SLURM_PROCID=0", "SLURM_NTASKS=4", "SLURM_JOB_NODELIST=n[1-", NULL},
         "SLURM_JOB_NODELIST=n[1-: no node list"},
        {{"PMI_RANK=0", "PMI_SIZE=4", NULL}, "mpiexec -genv MASTER_ADDR"},
        {{"RANK=0", "WORLD_SIZE=6", "GROUP_RANK=1", "MASTER_ADDR=m0", NULL},
         "rank 0 is shard 0, but GROUP_RANK=1"},
        {{"SLURM_PROCID=0", "SLURM_NTASKS=4", "SLURM_NODEID=1", "SLURM_JOB_NODELIST=n[1-2]",
          NULL}, "SLURM_NODEID=1: the shards listen on the first node (n1)"},
        /* a RANK and WORLD_SIZE left exported under mpirun or srun, of as
         * many ranks or not: every rank took RANK for its own */
        {{"RANK=0", "WORLD_SIZE=4", "MASTER_ADDR=h", "OMPI_COMM_WORLD_RANK=2",
          "OMPI_COMM_WORLD_SIZE=4", NULL},
         "RANK=0 WORLD_SIZE=4 is set without LOCAL_RANK (which torchrun sets) beside Open "
         "MPI's OMPI_COMM_WORLD_RANK=2 OMPI_COMM_WORLD_SIZE=4"},
        {{"RANK=2", "WORLD_SIZE=3", "MASTER_ADDR=h", "PMI_RANK=0", "PMI_SIZE=4", NULL},
         "beside MPICH or Intel MPI's PMI_RANK=0"},
        {{"RANK=0", "WORLD_SIZE=4", "MASTER_ADDR=h", "SLURM_PROCID=1", "SLURM_NTASKS=4",
          "SLURM_STEP_ID=0", NULL}, "beside Slurm's SLURM_PROCID=1 SLURM_NTASKS=4"},
        {{"RANK=1", "WORLD_SIZE=4", "MASTER_ADDR=h", "SLURM_PROCID=1", "SLURM_NTASKS=5",
          "SLURM_STEP_ID=0", NULL}, "beside Slurm's SLURM_PROCID=1 SLURM_NTASKS=5"},
        /* two MPIs' ranks of one size that disagree */
        {{"PMI_RANK=1", "PMI_SIZE=4", "MASTER_ADDR=h", "OMPI_COMM_WORLD_RANK=2",
          "OMPI_COMM_WORLD_SIZE=4", NULL},
         "OMPI_COMM_WORLD_RANK=2 and PMI_RANK=1 both place this process"},
        {{"RANK= 2", "WORLD_SIZE=4", "MASTER_ADDR=h", NULL}, "RANK= 2: expected an integer"},
        {{"RANK=+2", "WORLD_SIZE=4", "MASTER_ADDR=h", NULL}, "RANK=+2: expected an integer"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        s_env(cases[i].env);
        cluster_spec s;
        error err = {0};
        assert_int_equal(s_place(&s, 1, &err), -1);
        assert_int_equal(err.status, ERROR_USAGE);
        if (!strstr(err.msg, cases[i].says)) {
            fail_msg("case %zu: \"%s\" does not say \"%s\"", i, err.msg, cases[i].says);
        }
    }
}

/* `asgd role` takes its role from TF_CONFIG's task; chief and master (the
 * older TFJob's) run the evaluator, and either entry makes the shards
 * wait for it. Without TF_CONFIG the role is left to engines_place. */
static void test_tf_config_chooses_the_role(void **state)
{
    (void)state;
    char *argv[] = {"config.ini", NULL};
    const char *types[][2] = {{"ps", "0"}, {"worker", "1"}, {"master", "2"}, {"chief", "2"}};
    for (int i = 0; i < 4; i++) {
        char tf[256];
        snprintf(tf, sizeof tf, "{\"cluster\": {\"ps\": [\"h:1\"], \"worker\": [\"a\", \"b\"], "
                 "\"master\": [\"m:1\"]}, \"task\": {\"type\": \"%s\", \"index\": %d}}",
                 types[i][0], i == 1);
        s_env((const char *const[]){NULL});
        setenv("TF_CONFIG", tf, 1);
        cluster_spec s;
        error err = {0};
        assert_int_equal(cluster_parse(&s, ROLE_ANY, 1, argv, &err), 0);
        assert_int_equal(s.role, atoi(types[i][1]));
        assert_true(s.evaluator);
        assert_int_equal(s.servers, 1);
        cluster_free(&s);
    }
    s_env((const char *const[]){NULL});
    cluster_spec s;
    error err = {0};
    assert_int_equal(cluster_parse(&s, ROLE_ANY, 1, argv, &err), 0);
    assert_int_equal(s.role, ROLE_ANY);
    assert_int_equal(s.servers, 0);
    cluster_free(&s);
    /* a task index past its list, and a list of no shards, are TF_CONFIG's
     * to name (they read "--task_index 2 but only 2 workers", a flag never
     * given, and "no servers: give --ps_hosts or TF_CONFIG") */
    const char *bad[][2] = {
        {"{\"cluster\": {\"ps\": [\"h:1\"], \"worker\": [\"a\", \"b\"]}, \"task\": "
         "{\"type\": \"worker\", \"index\": 2}}", "TF_CONFIG: task worker 2, but cluster.worker "
         "lists 2"},
        {"{\"cluster\": {\"ps\": [\"h:1\"], \"worker\": [\"a\"]}, \"task\": "
         "{\"type\": \"ps\", \"index\": 1}}", "TF_CONFIG: task ps 1, but cluster.ps lists 1"},
        {"{\"cluster\": {\"ps\": [], \"worker\": [\"a\"]}, \"task\": "
         "{\"type\": \"worker\", \"index\": 0}}", "TF_CONFIG: cluster.ps lists no shards"},
    };
    for (int i = 0; i < 3; i++) {
        setenv("TF_CONFIG", bad[i][0], 1);
        err = (error){0};
        assert_int_equal(cluster_parse(&s, ROLE_ANY, 1, argv, &err), -1);
        if (strcmp(err.msg, bad[i][1]) != 0) {
            fail_msg("\"%s\": \"%s\"", bad[i][0], err.msg);
        }
        cluster_free(&s);
    }
    unsetenv("TF_CONFIG");
}

/* Kubeflow's training operator leaves an Evaluator replica out of the
 * cluster spec (TensorFlow's convention: the evaluator is not part of the
 * training cluster), so TF_CONFIG alone cannot tell a shard to wait for
 * it: an explicit --evaluator flag must win over TF_CONFIG's guess, and an
 * evaluator task knows there is one. */
static void test_evaluator_flag_wins_over_tf_config(void **state)
{
    (void)state;
    const char *cluster = "{\"cluster\": {\"ps\": [\"h:1\"], \"worker\": [\"a\", \"b\"]}, "
                          "\"task\": {\"type\": \"%s\", \"index\": 0}}";
    struct {
        const char *type, *flag;
        int role;
        bool expect;
    } cases[] = {
        {"ps", "--evaluator=1", ROLE_PS, true},        /* was false: the flag was dropped */
        {"ps", NULL, ROLE_PS, false},                   /* no chief, no flag: none */
        {"evaluator", NULL, ROLE_EVALUATOR, true},      /* it is the evaluator */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char tf[256];
        snprintf(tf, sizeof tf, cluster, cases[i].type);
        s_env((const char *const[]){NULL});
        setenv("TF_CONFIG", tf, 1);
        char *argv[] = {"config.ini", (char *)cases[i].flag, NULL};
        cluster_spec s;
        error err = {0};
        assert_int_equal(cluster_parse(&s, cases[i].role, cases[i].flag ? 2 : 1, argv, &err), 0);
        assert_int_equal(s.evaluator, cases[i].expect);
        cluster_free(&s);
    }
    /* and --evaluator=0 with a chief in TF_CONFIG: the flag still decides */
    s_env((const char *const[]){NULL});
    setenv("TF_CONFIG", "{\"cluster\": {\"ps\": [\"h:1\"], \"chief\": [\"c:1\"]}, "
           "\"task\": {\"type\": \"ps\", \"index\": 0}}", 1);
    char *argv[] = {"config.ini", "--evaluator=0", NULL};
    cluster_spec s;
    error err = {0};
    assert_int_equal(cluster_parse(&s, ROLE_PS, 2, argv, &err), 0);
    assert_false(s.evaluator);
    cluster_free(&s);
    s_env((const char *const[]){NULL});
}

/* The shards' addresses, from --ps_hosts or TF_CONFIG: a port out of
 * range or not a number, an IPv6 address without brackets, or one shard
 * listed twice is refused, naming the shard (each once bound some other
 * port, or IPv4's, and the job waited for a shard that was not there). A
 * TF_CONFIG evaluator task in a job with a chief is refused (both ran the
 * evaluator). Flags that place a process where TF_CONFIG or the launcher's
 * environment does are refused, not dropped without a word. */
static void test_shard_addresses_and_placing_flags(void **state)
{
    (void)state;
    struct {
        const char *hosts, *says;
    } cases[] = {
        {"psh:70000", "shard 0 at \"psh:70000\": the port must be a number from 1 to 65535"},
        {"127.0.0.1:0", "the port must be"},
        {"psh:41102x", "the port must be"},
        {"fd00::5", "an IPv6 address goes in brackets"},
        {"h:1,h:1", "shards 0 and 1 are both at h:1"},
        {"h:1,:2", "shard 1 at \":2\": expected host:port"},
    };
    s_env((const char *const[]){NULL});
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char flag[128], tf[256];
        snprintf(flag, sizeof flag, "--ps_hosts=%s", cases[i].hosts);
        char *argv[] = {"config.ini", flag, NULL};
        cluster_spec s;
        error err = {0};
        assert_int_equal(cluster_parse(&s, ROLE_WORKER, 2, argv, &err), -1);
        if (!strstr(err.msg, cases[i].says)) {
            fail_msg("%s: \"%s\"", flag, err.msg);
        }
        cluster_free(&s);
        char list[128] = "";
        for (const char *h = cases[i].hosts; *h;) {   /* as TF_CONFIG's JSON list */
            size_t len = strcspn(h, ",");
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s\"%.*s\"",
                     list[0] ? "," : "", (int)len, h);
            h += len + (h[len] == ',');
        }
        snprintf(tf, sizeof tf, "{\"cluster\": {\"ps\": [%s]}, \"task\": {\"type\": \"ps\", "
                 "\"index\": 0}}", list);
        setenv("TF_CONFIG", tf, 1);
        char *bare[] = {"config.ini", NULL};
        assert_int_equal(cluster_parse(&s, ROLE_ANY, 1, bare, &err), -1);
        if (!strstr(err.msg, "TF_CONFIG: cluster.ps") || !strstr(err.msg, cases[i].says)) {
            fail_msg("TF_CONFIG %s: \"%s\"", tf, err.msg);
        }
        cluster_free(&s);
        unsetenv("TF_CONFIG");
    }
    char *good[] = {"config.ini", "--ps_hosts=[fd00::5]:2222,h:1,ipc:///tmp/x",
                    "--worker_hosts=w:1,w:1", "--task_index=1", NULL};
    cluster_spec s;
    error err = {0};
    assert_int_equal(cluster_parse(&s, ROLE_WORKER, 4, good, &err), 0);
    assert_int_equal(s.servers, 3);
    assert_true(s.workers == 2 && s.task == 1);
    cluster_free(&s);
    /* placed by flags, every process says the cluster's shape: without
     * --worker_hosts a shard told of 2 workers and workers that read 4 from
     * the config trained on half the data, complete; without --task_index
     * two workers were both worker 0 */
    assert_int_equal(cluster_parse(&s, ROLE_EVALUATOR, 3, good, &err), 0);   /* no index */
    cluster_free(&s);
    const char *empty_lists[] = {"--worker_hosts=", "--worker_hosts=a,,b", "--worker_hosts=a,"};
    for (int i = 0; i < 3; i++) {   /* "a,,b" was 3 workers */
        char *argv[] = {"config.ini", "--ps_hosts=h:1", (char *)empty_lists[i], "--task_index=0",
                        NULL};
        err = (error){0};
        assert_int_equal(cluster_parse(&s, ROLE_WORKER, 4, argv, &err), -1);
        assert_non_null(strstr(err.msg, "a host is empty"));
        cluster_free(&s);
    }
    char *no_list[] = {"config.ini", "--ps_hosts=h:1", "--task_index=0", NULL};
    char *no_index[] = {"config.ini", "--ps_hosts=h:1", "--worker_hosts=w:1", NULL};
    const int roles[3] = {ROLE_PS, ROLE_WORKER, ROLE_EVALUATOR};
    for (int r = 0; r < 3; r++) {
        err = (error){0};
        assert_int_equal(cluster_parse(&s, roles[r], 3, no_list, &err), -1);
        assert_non_null(strstr(err.msg, "give --worker_hosts"));
        cluster_free(&s);
        err = (error){0};
        int rc = cluster_parse(&s, roles[r], 3, no_index, &err);
        assert_int_equal(rc, roles[r] == ROLE_EVALUATOR ? 0 : -1);
        assert_true(rc == 0 || strstr(err.msg, "give --task_index"));
        cluster_free(&s);
    }
    setenv("TF_CONFIG", "{\"cluster\": {\"ps\": [\"h:1\"], \"chief\": [\"c:1\"]}, "
           "\"task\": {\"type\": \"evaluator\", \"index\": 0}}", 1);
    char *bare[] = {"config.ini", NULL};
    assert_int_equal(cluster_parse(&s, ROLE_ANY, 1, bare, &err), -1);
    assert_non_null(strstr(err.msg, "an evaluator task in a job with a chief"));
    cluster_free(&s);
    char *both[] = {"config.ini", "--task_index=1", NULL};   /* TF_CONFIG places it */
    setenv("TF_CONFIG", "{\"cluster\": {\"ps\": [\"h:1\"]}, \"task\": {\"type\": "
           "\"ps\", \"index\": 0}}", 1);
    assert_int_equal(cluster_parse(&s, ROLE_PS, 2, both, &err), -1);
    assert_non_null(strstr(err.msg, "--task_index=1: TF_CONFIG places this process"));
    cluster_free(&s);
    s_env((const char *const[]){"RANK=3", "WORLD_SIZE=4", "MASTER_ADDR=127.0.0.1", NULL});
    const char *flags[] = {"--ps_hosts=h:1", "--task_index=7", "--evaluator=0"};
    for (int i = 0; i < 3; i++) {   /* `asgd role`: the environment places it */
        char *argv[] = {"config.ini", (char *)flags[i], NULL};
        assert_int_equal(cluster_parse(&s, ROLE_ANY, 2, argv, &err), -1);
        if (!strstr(err.msg, flags[i]) || !strstr(err.msg, "launcher's environment")) {
            fail_msg("asgd role %s: \"%s\"", flags[i], err.msg);
        }
        cluster_free(&s);
    }
    s_env((const char *const[]){NULL});
}

/* The cluster's shape from a launcher or the host lists goes into the
 * config, so that the run folder's config.ini says what ran (5 torchrun
 * ranks ran 3 workers while config.ini said 4), and a shape other than
 * the one the file gives is said, naming the file and line; one the same,
 * or one the file leaves to the default, is not. */
static void test_a_launchers_shape_is_the_configs(void **state)
{
    (void)state;
    char dir[64] = "/tmp/asgd-engines-XXXXXX", path[128];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/c.ini", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("[train]\nalgorithm = hogwild\n[cluster]\nworkers = 4\n", f);
    assert_int_equal(fclose(f), 0);
    const struct { experiment_shape shape; int workers, servers; bool said; } cases[] = {
        {{3, 0}, 3, 1, true}, {{4, 0}, 4, 1, false},
        {{4, 2}, 4, 2, false},   /* servers left to its default: the launcher's to choose */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        experiment e;
        error err = {0};
        assert_int_equal(experiment_configure(&e, path, 0, NULL, &cases[i].shape, &err), 0);
        assert_true(e.workers == cases[i].workers && e.servers == cases[i].servers);
        long workers, servers;
        assert_int_equal(config_get_int(e.c, "cluster", "workers", 0, 0, 1000, &workers, &err), 0);
        assert_int_equal(config_get_int(e.c, "cluster", "servers", 0, 0, 1000, &servers, &err), 0);
        assert_true(workers == cases[i].workers && servers == cases[i].servers);
        bool said = strstr(e.warnings, "but the launcher or the host lists make") != NULL;
        assert_true(said == cases[i].said);
        assert_true(!cases[i].said || strstr(e.warnings, "c.ini:4: [cluster] workers: 4, but "
                                                          "the launcher or the host lists make 3"));
        experiment_destroy(&e);
    }
    remove(path);
    rmdir(dir);
}

/* `asgd role` with TF_CONFIG beside a launcher's rank is refused (a
 * TF_CONFIG left in a torchrun job made every rank its one task); beside
 * an sbatch script's SLURM_PROCID it is not. */
static void test_tf_config_beside_a_rank_is_refused(void **state)
{
    (void)state;
    char dir[64] = "/tmp/asgd-engines-XXXXXX";
    assert_non_null(mkdtemp(dir));
    s_env((const char *const[]){"TF_CONFIG={\"cluster\": {\"ps\": [\"h:1\"], \"worker\": "
                                "[\"w:1\"]}, \"task\": {\"type\": \"worker\", \"index\": 0}}",
                                "RANK=2", "WORLD_SIZE=4", "MASTER_ADDR=m0", NULL});
    static support_result r;
    const char *args[] = {"role", "/dev/null", NULL};
    support_run_asgd(&r, dir, args);
    s_env((const char *const[]){NULL});
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "TF_CONFIG and RANK=2 both place this process"));
    /* an sbatch script's SLURM_PROCID, which everything it runs inherits,
     * places nothing: TF_CONFIG does */
    s_env((const char *const[]){"TF_CONFIG={\"cluster\": {\"ps\": [\"h:1\"]}, \"task\": "
                                "{\"type\": \"ps\", \"index\": 0}}", "SLURM_PROCID=0", NULL});
    const char *beside[] = {"role", "/dev/null", "cluster.bogus=1", NULL};
    support_run_asgd(&r, dir, beside);
    s_env((const char *const[]){NULL});
    assert_int_equal(r.status, 2);
    assert_null(strstr(r.err, "both place this process"));
    assert_non_null(strstr(r.err, "TF_CONFIG: ps 0"));
    rmdir(dir);
}

/* A worker or an evaluator that never heard from its shard within
 * [cluster] timeout exits 138 (Kubeflow's retryable code), naming it: its
 * pod may have started before the shard's (pods start in any order), and
 * exit 1 made restartPolicy ExitCode fail the whole job for good. The
 * shard's port is bound here but not listening: nobody else takes it. */
static void test_a_role_before_its_shard_exits_retryable(void **state)
{
    (void)state;
    char dir[64] = "/tmp/asgd-engines-XXXXXX";
    assert_non_null(mkdtemp(dir));
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in at = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t size = sizeof at;
    assert_int_equal(bind(fd, (struct sockaddr *)&at, sizeof at), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&at, &size), 0);
    char ps[64];
    snprintf(ps, sizeof ps, "--ps_hosts=127.0.0.1:%d", ntohs(at.sin_port));
    s_env((const char *const[]){NULL});
    static support_result r;
    const char *roles[] = {"worker", "evaluator"};
    for (int i = 0; i < 2; i++) {
        const char *args[] = {roles[i], "/dev/null", ps, "--worker_hosts=127.0.0.1:0",
                              "--task_index=0", "data.dataset=synthetic",
                              "train.algorithm=hogwild", "cluster.workers=1",
                              "cluster.timeout=0.5", NULL};
        support_run_asgd(&r, dir, args);
        assert_int_equal(r.status, ERROR_RETRYABLE);
        assert_non_null(strstr(r.err, "ps 0 did not answer within 0.5 s ([cluster] timeout), "
                                      "nor ever before"));
        assert_non_null(strstr(r.err, i == 0 ? "asgd worker 0: ps 0" : "asgd evaluator: ps 0"));
    }
    close(fd);
    support_rmtree(dir);
}

/* Whether process pid has a handler for sig (/proc/PID/status's SigCgt). */
static bool s_catches(int pid, int sig)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    FILE *f = fopen(path, "r");
    unsigned long long caught = 0;
    while (f && fgets(line, sizeof line, f)) {
        if (sscanf(line, "SigCgt: %llx", &caught) == 1) {
            break;
        }
    }
    if (f) {
        fclose(f);
    }
    return (caught >> (sig - 1)) & 1;
}

/* A role that is PID 1 (a container's first process) catches SIGTERM
 * from its first step, before it loads its data (2 million examples:
 * seconds), and given one then stops with 128 + 15 once loaded: PID 1
 * ignores a signal it has no handler for, and the handler came only after
 * the loading, so the role ran on and failed a timeout later (a pod
 * waited out its grace period to be killed). */
static void test_a_role_as_pid_1_stops_on_sigterm_while_it_starts(void **state)
{
    (void)state;
    if (!support_have("unshare") || system("unshare --pid --fork true 2>/dev/null") != 0) {
        skip();   /* no PID namespace here */
    }
    char dir[64] = "/tmp/asgd-engines-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char hosts[64], run_dir[128];
    snprintf(hosts, sizeof hosts, "--ps_hosts=127.0.0.1:%d", wire_client_free_port());
    snprintf(run_dir, sizeof run_dir, "--run_dir=%s/run", dir);
    const char *args[] = {"--pid", "--fork", "--kill-child", ASGD_BINARY, "worker", "/dev/null",
                          hosts, "--worker_hosts=w0:1", "--task_index=0", run_dir,
                          "train.algorithm=hogwild", "data.dataset=synthetic",
                          "data.train_size=2000000", "cluster.timeout=60", NULL};
    int outer = support_spawn(dir, "unshare", args), role = -1;
    for (int i = 0; i < 2000 && support_children(outer, "worker", &role, 1) == 0; i++) {
        nanosleep(&(struct timespec){0, 5 * 1000 * 1000}, NULL);
    }
    assert_true(role > 0);
    /* a handler within a second, while it loads (before its first step,
     * the program itself loading, no process can have one) */
    for (int i = 0; i < 1000 && !s_catches(role, SIGTERM); i++) {
        nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
    }
    if (!s_catches(role, SIGTERM)) {
        kill(role, SIGKILL);
        support_wait(outer);
        fail_msg("no handler for SIGTERM a second after it started (loading its data)");
    }
    kill(role, SIGTERM);
    int status = support_wait_within(outer, 60, "a role as PID 1 given SIGTERM");
    char path[128];
    snprintf(path, sizeof path, "%s/stderr", dir);
    char *err = support_read_file(path);
    if (status != 128 + SIGTERM) {
        fail_msg("status %d: %s", status, err ? err : "");
    }
    free(err);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slurm_node_lists),
        cmocka_unit_test(test_ranks_become_roles),
        cmocka_unit_test(test_a_jobs_port_is_its_own),
        cmocka_unit_test(test_bad_environments_name_the_variable),
        cmocka_unit_test(test_tf_config_chooses_the_role),
        cmocka_unit_test(test_evaluator_flag_wins_over_tf_config),
        cmocka_unit_test(test_shard_addresses_and_placing_flags),
        cmocka_unit_test(test_a_launchers_shape_is_the_configs),
        cmocka_unit_test(test_tf_config_beside_a_rank_is_refused),
        cmocka_unit_test(test_a_role_before_its_shard_exits_retryable),
        cmocka_unit_test(test_a_role_as_pid_1_stops_on_sigterm_while_it_starts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
