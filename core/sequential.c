/* sequential.c: the sequential baseline's training loop. */
#include "core/sequential.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/partition.h"
#include "core/stop.h"
#include "core/summary.h"

typedef struct progress {
    bool tty;
    double last;
} progress;

static void s_progress(progress *p, double now, const experiment *e, double epoch,
                       double samples_per_s, double acc, bool final)
{
    if (!p->tty || (!final && now - p->last < 0.25)) {
        return;
    }
    p->last = now;
    fprintf(stderr, "\r%s: epoch %.2f/%g | %.0f samples/s | test acc %s",
            e->name, epoch, e->epochs, samples_per_s,
            acc < 0 ? "-" : "");
    if (acc >= 0) {
        fprintf(stderr, "%.4f", acc);
    }
    fprintf(stderr, "   %s", final ? "\n" : "");
    fflush(stderr);
}

int sequential_train(experiment *e, run *r, error *err)
{
    int rc = -1;
    backend *b = NULL;
    model *m = NULL;
    optim *o = NULL;
    float *params = NULL, *grad = NULL, *x = NULL;
    int32_t *y = NULL;
    sampler sp = {0};
    shard all = {0};
    const dataset *train = &e->train;
    int batch = (int)e->batch;

    if (!(b = backend_new(&e->backend, err)) ||
        !(m = model_new(&e->model, b, train->dim, train->classes, err))) {
        goto done;
    }
    params = b->ops->alloc(b, m->nparams * sizeof *params);
    grad = b->ops->alloc(b, m->nparams * sizeof *grad);
    x = malloc((size_t)batch * (size_t)train->dim * sizeof *x);
    y = malloc((size_t)batch * sizeof *y);
    o = optim_new_on(&e->optim, m->nparams, b);
    if (!params || !grad || !x || !y || !o) {
        error_set(err, ERROR_RUNTIME, "sequential: out of memory");
        goto done;
    }
    model_init_params(m, params, e->seed);
    rng masks = rng_derive(e->seed, RNG_DROPOUT, 0);
    model_seed_dropout(m, rng_next(&masks));
    if (partition_make(&all, 1, train, e->partition, e->partition_alpha, e->seed, err) < 0 ||
        sampler_init(&sp, train, &all, rng_derive(e->seed, RNG_BATCH, 0)) < 0) {
        error_set(err, ERROR_RUNTIME, "sequential: out of memory");
        goto done;
    }

    run_summary sum;
    summary_init(&sum);
    sum.algorithm = "sequential";
    sum.model = model_type_name(e->model.type);
    sum.mode = experiment_mode_name(e->mode);
    sum.dataset = e->data.source == DATA_SYNTHETIC ? "synthetic" : e->data.path;
    sum.workers = 1;
    sum.params = (long)m->nparams;
    sum.seed = e->seed;
    if (summary_write(r->dir, &sum, err) < 0) {
        goto done;
    }
    long total_steps = experiment_total_steps(e, train->n);
    run_log(r, "backend: %s", backend_describe(b));
    run_log(r, "sequential: %s model, %zu parameters, %d training and %d test "
            "examples, %ld steps of batch %d", model_type_name(e->model.type),
            m->nparams, train->n, e->test.n, total_steps, batch);

    stop_install();

    progress prog = {.tty = isatty(STDERR_FILENO) != 0, .last = 0};
    double wall_start = run_now();
    double eval_time = 0;          /* seconds spent evaluating */
    double last_eval = 0, acc = -1, loss = NAN;
    long step = 0;

    for (;;) {
        double t = run_now() - wall_start - eval_time;
        bool finished = step == total_steps;
        if (finished || step == 0 || (e->eval_every > 0 && t - last_eval >= e->eval_every)) {
            double t0 = run_now();
            model_evaluate(m, &loss, &acc, params, &e->test, (int)e->eval_batch);
            eval_time += run_now() - t0;
            last_eval = t;
            run_eval_row(r->eval, t, (double)step * batch / train->n, step, step * batch, loss, acc);
            summary_add_eval(&sum, loss, acc);
        }
        if (finished || stop_requested()) {
            sum.time_s = t;
            break;
        }
        sampler_next(&sp, x, y, batch);
        float step_loss = model_gradient(m, grad, params, x, y, batch);
        optim_step(o, params, grad);
        step++;
        if (step % e->steps_every == 0) {
            run_step_row(r->steps, t, 0, step, step_loss, 0, 0);
        }
        s_progress(&prog, t, e, (double)step * batch / train->n,
                   t > 0 ? step * batch / t : 0, acc, false);
    }
    int stopped = stop_requested();
    stop_uninstall();

    sum.updates = step;
    sum.samples = step * batch;
    sum.train_time_s = sum.time_s;
    summary_finish(&sum, train->n);
    sum.wall_time_s = run_now() - wall_start;
    sum.complete = !stopped;
    s_progress(&prog, sum.time_s, e, sum.epochs, sum.samples_per_s, acc, true);
    if (stopped) {
        run_log(r, "interrupted by signal %d after %ld steps", stopped, step);
        summary_write(r->dir, &sum, NULL);
        error_set(err, ERROR_RUNTIME, "interrupted after %ld of %ld steps; %s is "
                  "incomplete", step, total_steps, r->dir);
        goto done;
    }
    run_log(r, "finished: test accuracy %.4f (best %.4f), loss %.4f, %.0f samples/s",
            acc, sum.best_test_acc, loss, sum.samples_per_s);
    rc = summary_write(r->dir, &sum, err);
done:
    sampler_free(&sp);
    partition_free(&all, 1);
    free(x);
    free(y);
    optim_destroy(&o);
    if (b) {
        b->ops->release(b, params);
        b->ops->release(b, grad);
    }
    model_destroy(&m);
    backend_destroy(&b);
    return rc;
}
