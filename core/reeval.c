/* reeval.c: a saved model evaluated again. */
#include "core/reeval.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "core/experiment.h"
#include "core/export.h"
#include "core/provenance.h"
#include "core/run.h"

/* The run's recorded final test loss and accuracy, NaN where it has none
 * (a regression's accuracy, a diverged run's); whether its summary says
 * it diverged. */
static bool s_recorded(const char *run_dir, double *loss, double *acc)
{
    char path[4700];
    snprintf(path, sizeof path, "%s/summary.json", run_dir);
    cJSON *j = run_read_json(path);
    cJSON *l = cJSON_GetObjectItemCaseSensitive(j, "final_test_loss");
    cJSON *a = cJSON_GetObjectItemCaseSensitive(j, "final_test_acc");
    *loss = cJSON_IsNumber(l) ? l->valuedouble : NAN;
    *acc = cJSON_IsNumber(a) ? a->valuedouble : NAN;
    bool diverged = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "diverged"));
    cJSON_Delete(j);
    return diverged;
}

/* The normalisation the run's model takes its input with (model.json's
 * input mean and std); false where it records none. */
static bool s_recorded_input(const char *run_dir, double *mean, double *std)
{
    char path[4700];
    snprintf(path, sizeof path, "%s/model.json", run_dir);
    cJSON *j = run_read_json(path);
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(j, "input");
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(in, "mean");
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(in, "std");
    bool have = cJSON_IsNumber(m) && cJSON_IsNumber(s) && isfinite(m->valuedouble) &&
                s->valuedouble > 0;
    *mean = have ? m->valuedouble : 0;
    *std = have ? s->valuedouble : 1;
    cJSON_Delete(j);
    return have;
}

/* The test set d, normalised as these data give it, normalised as the
 * run's model was trained instead (x = (raw - mean) / std with the run's
 * mean and std), said on stderr: the training set's statistics differ
 * with its size or file (an override's data.train_size), and the model
 * was evaluated on inputs it never saw. */
static void s_normalise_as_the_run(const char *run_dir, dataset *d)
{
    double mean, std;
    if (!s_recorded_input(run_dir, &mean, &std)) {
        fprintf(stderr, "asgd: %s/model.json gives no input mean and std (missing or "
                "damaged): the test set is normalised as these data give it, which need not "
                "be as the run's model takes it\n", run_dir);
        return;
    }
    /* within rounding: a model.json of an older asgd holds 15 digits */
    if ((fabs(mean - d->mean) <= 1e-14 * fmax(1, fabs(mean)) &&
         fabs(std - d->std) <= 1e-14 * std)) {
        return;
    }
    fprintf(stderr, "asgd: the test set normalised as the run's model takes it (mean %.9g, "
            "std %.9g), not as these data give it (mean %.9g, std %.9g)\n", mean, std, d->mean,
            d->std);
    for (size_t i = 0; i < (size_t)d->n * (size_t)d->dim; i++) {
        d->x[i] = (float)(((double)d->x[i] * d->std + d->mean - mean) / std);
    }
    d->mean = mean;
    d->std = std;
}

/* Whether every parameter is finite. */
static bool s_finite(const float *params, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(params[i])) {
            return false;
        }
    }
    return true;
}

/* An override eval does not follow: its training's (train.lr, eval.every)
 * and its cluster's keys change nothing in a saved model's evaluation,
 * and were taken in silence. The seed makes a generated test set, and the
 * mode a threads run's BLAS threads. */
static void s_warn_unfollowed(int noverrides, char **overrides)
{
    static const char *const followed[] = {"data.", "backend.", "eval.batch=", "model.",
                                           "experiment.seed=", "experiment.mode=", NULL};
    for (int i = 0; i < noverrides; i++) {
        bool kept = false;
        for (int k = 0; followed[k] && !kept; k++) {
            kept = strncmp(overrides[i], followed[k], strlen(followed[k])) == 0;
        }
        if (!kept) {
            fprintf(stderr, "asgd: command line: %s: not used by asgd eval, which evaluates "
                    "the saved model on [data] with [backend] (and eval.batch, "
                    "experiment.seed and mode)\n", overrides[i]);
        }
    }
}

int reeval_main(const char *run_dir, int noverrides, char **overrides, error *err)
{
    s_warn_unfollowed(noverrides, overrides);
    char config[4700];
    snprintf(config, sizeof config, "%s/config.ini", run_dir);
    experiment e;
    if (experiment_configure(&e, config, noverrides, overrides, NULL, err) < 0) {
        return -1;
    }
    int rc = -1;
    backend *b = NULL;
    model *m = NULL;
    float *params = NULL;
    e.data.cache = NULL;   /* the test set in memory of its own: it may be normalised again */
    if (experiment_load(&e, err) < 0) {
        goto done;
    }
    s_normalise_as_the_run(run_dir, &e.test);
    backend_spec spec = experiment_backend_spec(&e, 0);   /* the run's evaluator's */
    if (!(b = backend_new(&spec, err))) {
        if (noverrides == 0) {   /* the run's own device, which this host may lack */
            char why[sizeof err->msg];
            snprintf(why, sizeof why, "%s", err->msg);
            error_set(err, err->status, "%s (`asgd eval %s backend.device=cpu` evaluates it "
                      "on the CPU)", why, run_dir);
        }
        goto done;
    }
    if (!(m = model_new(&e.model, b, e.dim, e.classes, err))) {
        goto done;
    }
    params = b->ops->host_alloc(b, m->nparams * sizeof *params);
    if (!params) {
        error_set(err, ERROR_RUNTIME, "eval: out of memory");
        goto done;
    }
    if (export_read(run_dir, params, m->nparams, err) == 0) {
        /* what it is evaluated on: the run's data, unless a file changed;
         * the data files read now stand for the run's of the same name (an
         * override's data.path: the recorded path was checked, and called
         * unreadable) */
        char changed[4096], then[64], now[64], files[4][4096];
        const char *read_now[5] = {NULL};
        error ignored;
        if (e.data.source != DATA_SYNTHETIC && e.data.source != DATA_REGRESSION &&
            data_files(files, &e.data, &ignored) == 0) {
            for (int i = 0; i < 4; i++) {
                read_now[i] = files[i];
            }
        }
        if (provenance_input_changed(run_dir, read_now, changed, sizeof changed, then, now,
                                     sizeof now)) {
            fprintf(stderr, "asgd: %s changed since the run (%s then, %s now): this is not "
                    "the evaluation the run made\n", changed, then, now);
        }
        double loss, acc, was_loss, was_acc;
        bool diverged = s_recorded(run_dir, &was_loss, &was_acc);
        if (!s_finite(params, m->nparams)) {
            fprintf(stderr, "asgd: %s/model.npy holds NaN or infinite parameters (%s): no "
                    "accuracy to give\n", run_dir, diverged ? "the run diverged"
                    : "its summary.json does not say it diverged: the file changed since?");
        }
        model_evaluate_host(m, &loss, &acc, params, &e.test, (int)e.eval_batch);
        if (!isfinite(loss)) {   /* a NaN model's argmax is no accuracy, as in the summary */
            loss = isnan(loss) ? NAN : loss;   /* "nan", as eval.csv writes it, not "-nan" */
            acc = NAN;
        }
        printf("test_loss %.9g test_acc %.6f over %d test examples of %s%s%s%s (recorded: "
               "test_loss %.9g test_acc %.6f)\n", loss, acc, e.test.n,
               data_source_name(e.data.source), read_now[2] ? " (" : "",
               read_now[2] ? read_now[2] : "", read_now[2] ? ")" : "", was_loss, was_acc);
        rc = 0;
    }
done:
    if (params) {
        b->ops->host_release(b, params);
    }
    model_destroy(&m);
    backend_destroy(&b);
    experiment_destroy(&e);
    return rc;
}
