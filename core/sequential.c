/* sequential.c: the sequential baseline's training loop. */
#include "core/sequential.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/export.h"
#include "core/partition.h"
#include "core/progress.h"
#include "core/stop.h"
#include "core/summary.h"

/* Where training stands (core/progress.h). */
static void s_progress(progress *p, const experiment *e, double epoch, double samples_per_s,
                       double acc, bool final)
{
    if (!progress_due(p, final)) {
        return;
    }
    char accuracy[16] = "-";
    if (acc >= 0) {
        snprintf(accuracy, sizeof accuracy, "%.4f", acc);
    }
    progress_say(p, final, epoch / e->epochs, "%s: sequential, epoch %.2f/%g | %.0f samples/s | "
                 "test acc %s", e->name, epoch, e->epochs, samples_per_s, accuracy);
}

/* The baseline's state: one model, its parameters on the backend, one
 * sampler over the whole training set. */
typedef struct trainer {
    experiment *e;
    run *r;
    backend *b;
    model *m;
    optim *o;
    float *params, *grad, *x;
    int32_t *y;
    sampler sp;
    shard all;
    run_summary sum;
    double eval_time;         /* seconds spent evaluating, not training */
    double acc, loss;         /* the last evaluation */
} trainer;

static int s_open(trainer *t, error *err)
{
    experiment *e = t->e;
    const dataset *train = &e->train;
    size_t batch = (size_t)e->batch;
    if (!(t->b = backend_new(&e->backend, err)) ||
        !(t->m = model_new(&e->model, t->b, train->dim, train->classes, err))) {
        return -1;
    }
    backend *b = t->b;
    t->params = b->ops->alloc(b, t->m->nparams * sizeof *t->params);
    t->grad = b->ops->alloc(b, t->m->nparams * sizeof *t->grad);
    t->x = malloc(batch * (size_t)train->dim * sizeof *t->x);
    t->y = malloc(batch * sizeof *t->y);
    t->o = optim_new_on(&e->optim, t->m->nparams, b);
    if (!t->params || !t->grad || !t->x || !t->y || !t->o) {
        return error_set(err, ERROR_RUNTIME, "sequential: out of memory");
    }
    model_init_params(t->m, t->params, e->seed);
    rng masks = rng_derive(e->seed, RNG_DROPOUT, 0);
    model_seed_dropout(t->m, rng_next(&masks), 0);
    if (partition_make(&t->all, 1, train, e->partition, e->partition_alpha, e->seed, err) < 0 ||
        sampler_init(&t->sp, train, &t->all, rng_derive(e->seed, RNG_BATCH, 0)) < 0) {
        return error_set(err, ERROR_RUNTIME, "sequential: out of memory");
    }
    return 0;
}

static void s_close(trainer *t)
{
    sampler_free(&t->sp);
    partition_free(&t->all, 1);
    free(t->x);
    free(t->y);
    optim_destroy(&t->o);
    if (t->b) {
        t->b->ops->release(t->b, t->params);
        t->b->ops->release(t->b, t->grad);
    }
    model_destroy(&t->m);
    backend_destroy(&t->b);
}

/* Evaluates the model after `step` steps at run time time_s; the time it
 * takes is not training time. True when the test loss is not finite. */
static bool s_evaluate(trainer *t, long step, double time_s)
{
    experiment *e = t->e;
    double start = run_now();
    model_evaluate(t->m, &t->loss, &t->acc, t->params, &e->test, (int)e->eval_batch);
    t->eval_time += run_now() - start;
    run_eval_row(t->r->eval, time_s, (double)step * e->batch / e->train.n, step,
                 step * e->batch, t->loss, t->acc);
    return summary_add_eval(&t->sum, step, t->loss, t->acc);
}

/* Trains for total_steps (or until stopped), evaluating at step 0 (time
 * 0), every eval.every seconds of training time and at the end; returns
 * the steps taken. A step's row is stamped when its gradient is done, as a
 * worker stamps its own (it was stamped before it, one step early against
 * a one-worker run). */
static long s_train(trainer *t, long total_steps, progress *prog)
{
    experiment *e = t->e;
    int batch = (int)e->batch;
    double last_eval = 0, origin = run_now();
    long step = 0;
    for (;;) {
        double now = step == 0 ? 0 : run_now() - origin - t->eval_time;
        bool finished = step == total_steps;
        bool diverged = false;
        if (finished || step == 0 || (e->eval_every > 0 && now - last_eval >= e->eval_every)) {
            diverged = s_evaluate(t, step, now);
            last_eval = now;
        }
        if (finished || diverged || stop_requested() || run_files_failing(t->r)) {
            t->sum.time_s = now;
            return step;
        }
        sampler_next(&t->sp, t->x, t->y, batch);
        float step_loss = model_gradient(t->m, t->grad, t->params, t->x, t->y, batch);
        double computed = run_now() - origin - t->eval_time;
        optim_step(t->o, t->params, t->grad);
        step++;
        if (step % e->steps_every == 0) {
            run_step_row(t->r->steps, computed, 0, step, step_loss, 0, 0);
        }
        s_progress(prog, e, (double)step * batch / e->train.n, now > 0 ? step * batch / now : 0,
                   t->acc, false);
    }
}

/* The trained model into the run folder (model.npy, model.json). */
static int s_save(trainer *t, error *err)
{
    size_t bytes = t->m->nparams * sizeof(float);
    float *host = malloc(bytes);
    if (!host) {
        return error_set(err, ERROR_RUNTIME, "sequential: out of memory");
    }
    t->b->ops->to_host(t->b, host, t->params, bytes);
    int rc = export_model(t->m, host, &t->e->test, t->r->dir, err);
    free(host);
    return rc;
}

/* The summary's identity, written at once (complete = false). */
static int s_start_summary(trainer *t, error *err)
{
    run_summary *sum = &t->sum;
    experiment_summary(t->e, sum);
    snprintf(sum->device, sizeof sum->device, "%s", backend_describe(t->b));
    return summary_write(t->r->dir, sum, err);
}

int sequential_train(experiment *e, run *r, error *err)
{
    trainer t = {.e = e, .r = r, .acc = -1, .loss = NAN};
    int rc = -1;
    if (s_open(&t, err) < 0 || s_start_summary(&t, err) < 0) {
        goto done;
    }
    long total_steps = experiment_total_steps(e, e->train.n);
    run_log(r, "backend: %s", backend_describe(t.b));
    run_log(r, "sequential: %s model, %zu parameters, %d training and %d test "
            "examples, %ld steps of batch %ld", model_type_name(e->model.type),
            t.m->nparams, e->train.n, e->test.n, total_steps, e->batch);
    stop_install();
    double wall_start = run_now();
    progress prog;
    progress_start(&prog);
    long step = s_train(&t, total_steps, &prog);
    int stopped = stop_requested();
    stop_uninstall();
    run_summary *sum = &t.sum;
    sum->updates = step;
    sum->samples = step * e->batch;
    sum->train_time_s = sum->time_s;
    summary_finish(sum, e->train.n);
    sum->startup_s = e->load_s;   /* loading the data, as a real run's processes do */
    sum->wall_time_s = e->load_s + run_now() - wall_start;
    s_progress(&prog, e, sum->epochs, sum->samples_per_s, sum->final_test_acc, true);
    /* a file that lost rows is named before the model is saved */
    rc = stopped ? error_set(err, ERROR_RUNTIME, "interrupted after %ld of %ld steps; %s is "
                             "incomplete", step, total_steps, r->dir)
         : run_finish(r, err) < 0 ? -1 : s_save(&t, err);
    rc = summary_end(sum, r, rc, err);
    if (rc < 0) {
        run_log(r, "failed after %ld steps: %s", step, err->msg);
        error ignored;
        summary_write(r->dir, sum, &ignored);
        goto done;
    }
    if (sum->diverged) {
        run_log(r, "diverged: test loss %g after %ld steps", t.loss, step);
        summary_say_diverged(sum, r->dir);
    }
    run_log(r, "finished: test accuracy %.4f (best %.4f), loss %.4f, %.0f samples/s",
            sum->final_test_acc, sum->best_test_acc, t.loss, sum->samples_per_s);
    rc = summary_write(r->dir, sum, err);
done:
    s_close(&t);
    return rc;
}
