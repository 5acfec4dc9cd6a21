/* labels.c: field and key names in words (labels.h). */
#include "plots/labels.h"

#include <stdio.h>
#include <string.h>

static const struct {
    const char *key, *words;
} s_labels[] = {
    /* eval.csv's columns, as --x and --y name them */
    {"acc", "test accuracy"},
    {"loss", "test loss"},
    {"time", "time from first step (s)"},
    {"epoch", "epochs"},
    {"updates", "server updates"},
    /* summary.json */
    {"final_test_acc", "final test accuracy"},
    {"best_test_acc", "best test accuracy"},
    {"final_test_loss", "final test loss"},
    {"samples_per_s", "samples/s"},
    {"time_s", "training time (s)"},
    {"train_time_s", "training time for samples/s (s)"},   /* its span: not time_s's */
    {"wall_time_s", "wall time (s)"},
    {"startup_s", "start-up time (s)"},
    {"epochs", "epochs"},
    {"samples", "samples"},
    {"staleness_mean", "mean staleness (updates)"},
    {"staleness_max", "maximum staleness (updates)"},
    {"pushes", "pushes applied"},
    {"dropped", "late gradients dropped"},
    {"workers", "workers"},
    {"servers", "shards"},
    {"params", "parameters"},
    {"algorithm", "rule"},
    {"label", "rule"},
    {"seed", "seed"},
    /* config keys */
    {"experiment.label", "rule"},
    {"train.algorithm", "rule"},
    {"cluster.workers", "workers"},
    {"cluster.servers", "shards"},
    {"train.lr", "learning rate"},
    {"train.batch", "batch size"},
    {"train.epochs", "epochs"},
    {"experiment.seed", "seed"},
    {"model.type", "model"},
    {"algorithm.window", "window (steps)"},
    {"algorithm.alpha", "elastic force"},
    {"algorithm.staleness", "staleness bound"},
    {"sim.straggler_fraction", "straggler fraction"},
    {"sim.straggler_slowdown", "straggler slow-down"},
    {"sim.bandwidth", "bandwidth (bytes/s)"},
    {"sim.latency", "latency (s)"},
};

const char *label_of(const char *key)
{
    for (size_t i = 0; i < sizeof s_labels / sizeof s_labels[0]; i++) {
        if (strcmp(s_labels[i].key, key) == 0) {
            return s_labels[i].words;
        }
    }
    return key;
}

void label_group(char *out, size_t n, const char *key, const char *value)
{
    const char *words = label_of(key);
    if (strcmp(words, "rule") == 0 || value[0] == '(') {   /* "(no KEY)" says it already */
        snprintf(out, n, "%s", value);
    } else {
        snprintf(out, n, "%s = %s", words, value);
    }
}
