/* results.c: a sweep's results.csv. */
#include "sweep/grid.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <cJSON.h>

#include "core/run.h"

static const char *const s_fields[] = {"algorithm", "model", "workers", "mode",
    "final_test_acc", "best_test_acc", "final_test_loss", "time_s", "samples_per_s", "updates",
    "staleness_mean", "staleness_max", "complete", NULL};

int sweep_results(const sweep *s, error *err)
{
    char path[5600];
    snprintf(path, sizeof path, "%s/%s/results.csv", s->out, s->name);
    FILE *f = fopen(path, "w");
    if (!f) {
        return error_set(err, ERROR_RUNTIME, "%s: cannot write: %s", path, strerror(errno));
    }
    for (int k = 0; k < s->nkeys; k++) {
        fprintf(f, "%s,", s->keys[k].key);
    }
    fprintf(f, "seed");
    for (int i = 0; s_fields[i]; i++) {
        fprintf(f, ",%s", s_fields[i]);
    }
    fprintf(f, ",run_dir\n");
    for (int r = 0; r < s->nruns; r++) {
        const sweep_run *run = &s->runs[r];
        if (!run->complete) {
            continue;
        }
        char sp[5600];
        snprintf(sp, sizeof sp, "%s/summary.json", run->dir);
        cJSON *j = run_read_json(sp);
        if (!j) {
            continue;
        }
        for (int k = 0; k < s->nkeys; k++) {
            /* the value from the run's overrides, in grid order */
            fprintf(f, "%s,", strchr(run->overrides[k], '=') + 1);
        }
        fprintf(f, "%s", strchr(run->overrides[s->nkeys], '=') + 1);
        for (int i = 0; s_fields[i]; i++) {
            cJSON *v = cJSON_GetObjectItemCaseSensitive(j, s_fields[i]);
            if (cJSON_IsString(v)) {
                fprintf(f, ",%s", v->valuestring);
            } else if (cJSON_IsNumber(v)) {
                fprintf(f, ",%.9g", v->valuedouble);
            } else if (cJSON_IsBool(v)) {
                fprintf(f, ",%s", cJSON_IsTrue(v) ? "true" : "false");
            } else {
                fprintf(f, ",");
            }
        }
        fprintf(f, ",%s\n", run->dir);
        cJSON_Delete(j);
    }
    return fclose(f) == 0 ? 0 : error_set(err, ERROR_RUNTIME, "%s: cannot write", path);
}
