/* reeval.c: a saved model evaluated again. */
#include "core/reeval.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <cJSON.h>

#include "core/experiment.h"
#include "core/export.h"
#include "core/run.h"

/* The run's recorded final test accuracy; NaN when it has none. */
static double s_recorded(const char *run_dir)
{
    char path[4700];
    snprintf(path, sizeof path, "%s/summary.json", run_dir);
    cJSON *j = run_read_json(path);
    cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "final_test_acc");
    double acc = cJSON_IsNumber(v) ? v->valuedouble : NAN;
    cJSON_Delete(j);
    return acc;
}

int reeval_main(const char *run_dir, error *err)
{
    char config[4700];
    snprintf(config, sizeof config, "%s/config.ini", run_dir);
    experiment e;
    if (experiment_configure(&e, config, 0, NULL, NULL, err) < 0) {
        return -1;
    }
    int rc = -1;
    backend *b = NULL;
    model *m = NULL;
    float *params = NULL;
    if (experiment_load(&e, err) < 0 || !(b = backend_new(&e.backend, err)) ||
        !(m = model_new(&e.model, b, e.dim, e.classes, err))) {
        goto done;
    }
    params = b->ops->host_alloc(b, m->nparams * sizeof *params);
    if (!params) {
        error_set(err, ERROR_RUNTIME, "eval: out of memory");
        goto done;
    }
    if (export_read(run_dir, params, m->nparams, err) == 0) {
        double loss, acc;
        model_evaluate_host(m, &loss, &acc, params, &e.test, (int)e.eval_batch);
        printf("test_loss %.9g test_acc %.6f (recorded: %.6f)\n", loss, acc,
               s_recorded(run_dir));
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
