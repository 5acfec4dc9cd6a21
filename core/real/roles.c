/* roles.c: the worker and evaluator processes. */
#include "core/real/roles.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/real/peers.h"
#include "core/real/ps.h"
#include "core/run.h"
#include "core/stop.h"
#include "algorithms/worker.h"
#include "transport/wire.h"

/* A CSV opened for appending, with its header when new. */
static FILE *s_append_csv(const char *path, const char *header, error *err)
{
    struct stat st;
    bool fresh = stat(path, &st) != 0 || st.st_size == 0;
    FILE *f = fopen(path, "a");
    if (!f) {
        error_set(err, ERROR_RUNTIME, "%s: cannot write", path);
        return NULL;
    }
    if (fresh) {
        fprintf(f, "%s\n", header);
    }
    return f;
}

/* The ZeroMQ worker link: the primitives over peers. */
static error s_link_err;

static int s_link_pull(worker *w, float *dst, uint64_t min_version)
{
    peers *p = w->link_state;
    int rc = peers_pull(p, dst, min_version, w->versions, NULL, &w->staleness, NULL,
                        &s_link_err);
    w->bytes = p->bytes;
    return rc;
}

static int s_link_push(worker *w, const float *values, uint64_t tag, uint32_t samples)
{
    peers *p = w->link_state;
    int rc = peers_push(p, values, tag, w->versions, samples, w->round_leader, &s_link_err);
    w->bytes = p->bytes;
    return rc;
}

static void s_link_settle(worker *w)
{
    net_settle(&((peers *)w->link_state)->pending);
}

static const worker_link s_zmq_link = {
    .pull = s_link_pull,
    .push = s_link_push,
    .settle = s_link_settle,
};

int worker_main(const cluster_spec *cs, experiment *e, const char *run_dir, error *err)
{
    if (cs->task >= e->workers) {
        return error_set(err, ERROR_USAGE, "worker: --task_index %d but only %d workers",
                         cs->task, e->workers);
    }
    if (experiment_load(e, err) < 0) {
        return -1;
    }
    e->backend.ordinal = cs->task;   /* worker k on GPU k mod the visible GPUs */
    backend *b = backend_new(&e->backend, err);
    model *m = b ? model_new(&e->model, b, e->train.dim, e->train.classes, err) : NULL;
    if (b) {
        fprintf(stderr, "worker %d: backend %s\n", cs->task, backend_describe(b));
    }
    worker w;
    worker_spec spec = experiment_worker_spec(e, e->train.n);
    shard mine = {0};
    int made = m ? partition_take(&mine, e->workers, cs->task, &e->train, e->partition,
                                  e->partition_alpha, e->seed, err) : -1;
    if (made < 0 || worker_init(&w, &spec, cs->task, m, &e->train, &mine, err) < 0) {
        partition_free(&mine, 1);
        model_destroy(&m);
        backend_destroy(&b);
        return -1;
    }
    partition_free(&mine, 1);   /* the sampler keeps its own copy */
    char path[4200];
    snprintf(path, sizeof path, "%s/steps-%d.csv", run_dir, cs->task);
    w.steps_csv = s_append_csv(path, RUN_STEPS_HEADER, err);
    w.t0 = cs->t0 > 0 ? cs->t0 : run_wall();
    peers p;
    int rc = -1;
    if (w.steps_csv && peers_open(&p, cs, w.nparams, (uint32_t)cs->task, e->timeout, err) == 0) {
        w.link = &s_zmq_link;
        w.link_state = &p;
        stop_install();
        rc = e->alg->worker_run(&w);
        if (rc < 0) {
            *err = s_link_err;
            if (!err->msg[0]) {
                error_set(err, ERROR_RUNTIME, "worker %d: the rule's loop failed", cs->task);
            }
        } else {
            rc = peers_control(&p, WIRE_CONTROL_DONE, NULL, err);
        }
        stop_uninstall();
        peers_close(&p);
    }
    char name[32];
    snprintf(name, sizeof name, "steps-%d.csv", cs->task);
    error lost;
    if (run_close_file(&w.steps_csv, run_dir, name, rc == 0 ? err : &lost) < 0) {
        rc = -1;   /* its rows are the run's metrics */
    }
    worker_free(&w);
    model_destroy(&m);
    backend_destroy(&b);
    return rc;
}

/* Waits until the next evaluation is due or every worker is done;
 * returns 1 when the workers are done, 0 when due, -1 on failure. */
static int s_wait(peers *p, double next, error *err)
{
    double check = run_wall() + 0.5;
    for (;;) {
        if (stop_requested()) {
            return error_set(err, ERROR_RUNTIME, "interrupted");
        }
        double now = run_wall();
        if (next > 0 && now >= next) {
            return 0;
        }
        if (now >= check) {
            bool done;
            if (peers_control(p, WIRE_CONTROL_STATS, &done, err) < 0) {
                return -1;
            }
            if (done) {
                return 1;
            }
            check = now + 0.5;
        }
        run_sleep(0.05);
    }
}

int evaluator_main(const cluster_spec *cs, experiment *e, const char *run_dir, error *err)
{
    if (experiment_load(e, err) < 0) {
        return -1;
    }
    long n_train = e->train.n;
    int dim = e->train.dim, classes = e->train.classes;
    dataset_free(&e->train);   /* only its size is needed */
    e->backend.ordinal = e->workers;   /* the GPU after the workers', mod the visible */
    backend *b = backend_new(&e->backend, err);
    model *m = b ? model_new(&e->model, b, dim, classes, err) : NULL;
    float *theta = m ? b->ops->host_alloc(b, m->nparams * sizeof *theta) : NULL;
    uint64_t *versions = calloc((size_t)cs->servers, sizeof *versions);
    uint16_t *flags = calloc((size_t)cs->servers, sizeof *flags);
    char path[4200];
    snprintf(path, sizeof path, "%s/eval.csv", run_dir);
    FILE *csv = theta && versions && flags
                    ? s_append_csv(path, RUN_EVAL_HEADER, err)
                    : NULL;
    peers p;
    int rc = -1;
    if (cs->report_fd >= 0) {
        signal(SIGPIPE, SIG_IGN);   /* a launcher that has gone is no reason to die */
    }
    if (csv && peers_open(&p, cs, m->nparams, WIRE_EVALUATOR, e->timeout, err) == 0) {
        double t0 = cs->t0;   /* 0: time starts at the first evaluation */
        stop_install();
        for (;;) {
            uint64_t total;
            if (peers_pull(&p, theta, 0, versions, flags, NULL, &total, err) < 0) {
                break;
            }
            bool final = true;
            for (int k = 0; k < cs->servers; k++) {
                final = final && (flags[k] & WIRE_FLAG_WORKERS_DONE);
            }
            double now = run_wall();
            if (t0 <= 0) {
                t0 = now;
            }
            double t = now - t0, loss, acc;
            model_evaluate_host(m, &loss, &acc, theta, &e->test, (int)e->eval_batch);
            run_eval_row(csv, t, (double)total / (double)n_train, (long)versions[0], (long)total,
                         loss, acc);
            if (cs->report_fd >= 0) {
                /* the same row to the launcher; it has gone if this fails */
                char row[256];
                run_eval_text(row, sizeof row, t, (double)total / (double)n_train,
                              (long)versions[0], (long)total, loss, acc);
                dprintf(cs->report_fd, "%s", row);
            }
            if (final || !isfinite(loss)) {   /* the end, or diverged: no more to see */
                rc = peers_control(&p, WIRE_CONTROL_DONE, NULL, err);
                break;
            }
            double next = e->eval_every > 0 ? run_wall() + e->eval_every : 0;
            if (s_wait(&p, next, err) < 0) {
                break;
            }
        }
        stop_uninstall();
        peers_close(&p);
    } else if (!csv && !err->msg[0]) {
        error_set(err, ERROR_RUNTIME, "evaluator: out of memory");
    }
    error lost;
    if (run_close_file(&csv, run_dir, "eval.csv", rc == 0 ? err : &lost) < 0) {
        rc = -1;
    }
    free(versions);
    free(flags);
    if (theta) {
        b->ops->host_release(b, theta);
    }
    model_destroy(&m);
    backend_destroy(&b);
    return rc;
}

/* The run folder a role writes into: --run_dir, or OUT/NAME/RUN_ID, or
 * OUT/NAME/cluster. */
static int s_run_dir(char *dir, size_t n, const cluster_spec *cs, const experiment *e, error *err)
{
    if (cs->run_dir) {
        snprintf(dir, n, "%s", cs->run_dir);
    } else {
        snprintf(dir, n, "%s/%s/%s", e->out_root, e->name, e->run_id[0] ? e->run_id : "cluster");
    }
    return run_make_dirs(dir, err);
}

int role_main(int role, int argc, char **argv)
{
    error err = {0};
    cluster_spec cs;
    experiment e = {0};
    int rc = -1;
    char dir[4700];
    if (cluster_parse(&cs, role, argc, argv, &err) < 0) {
        goto done;
    }
    /* the host lists give the cluster's shape */
    experiment_shape shape = {.workers = cs.workers, .servers = cs.servers};
    if (experiment_configure(&e, cs.config_path, cs.noverrides, cs.overrides, &shape, &err) < 0) {
        goto done;
    }
    fputs(e.warnings, stderr);
    if (!e.alg) {
        error_set(&err, ERROR_USAGE, "%s: [train] algorithm = sequential runs in one process; "
                  "`asgd %s` needs a distributed rule", cs.config_path, cluster_role_name(role));
        goto done;
    }
    if (s_run_dir(dir, sizeof dir, &cs, &e, &err) < 0) {
        goto done;
    }
    switch (role) {
    case ROLE_PS:
        rc = ps_main(&cs, &e, dir, &err);
        break;
    case ROLE_WORKER:
        rc = worker_main(&cs, &e, dir, &err);
        break;
    default:
        rc = evaluator_main(&cs, &e, dir, &err);
        break;
    }
done:
    experiment_destroy(&e);
    cluster_free(&cs);
    if (rc < 0) {
        fprintf(stderr, "asgd %s %d: %s\n", cluster_role_name(role), cs.task, err.msg);
        return err.status ? err.status : ERROR_RUNTIME;
    }
    return 0;
}
