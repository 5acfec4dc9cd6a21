/* registry.c: every update rule, by name. A new rule adds one line here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/algorithm.h"

extern const algorithm algorithm_sync, algorithm_hogwild, algorithm_downpour,
    algorithm_agn, algorithm_sagn, algorithm_dynsgd, algorithm_easgd, algorithm_aeasgd,
    algorithm_aeamsgd, algorithm_ssp, algorithm_average, algorithm_dcasgd,
    algorithm_delayadaptive, algorithm_staleweight, algorithm_gapaware,
    algorithm_fedbuff;

static const algorithm *const s_all[] = {
    &algorithm_sync,
    &algorithm_hogwild,
    &algorithm_downpour,
    &algorithm_agn,
    &algorithm_sagn,
    &algorithm_dynsgd,
    &algorithm_easgd,
    &algorithm_aeasgd,
    &algorithm_aeamsgd,
    &algorithm_ssp,
    &algorithm_average,
    &algorithm_dcasgd,
    &algorithm_delayadaptive,
    &algorithm_staleweight,
    &algorithm_gapaware,
    &algorithm_fedbuff,
    NULL,
};

const char *algorithm_check(const algorithm *a)
{
    if (a->version != ALGORITHM_VERSION) {
        return "its table is of another version than algorithm.h's ALGORITHM_VERSION";
    }
    if (!a->name || !a->name[0] || !a->summary || !a->keys) {
        return "it needs a name, a summary and its keys";
    }
    if (!a->configure || !a->worker_run || !a->server_on_push || !a->server_pull_ready) {
        return "configure, worker_run, server_on_push and server_pull_ready are required";
    }
    return NULL;
}

/* Every table, checked once: a broken one is a programmer's error. */
static const algorithm *const *s_checked(void)
{
    static bool checked;
    for (int i = 0; !checked && s_all[i]; i++) {
        const char *why = algorithm_check(s_all[i]);
        if (why) {
            fprintf(stderr, "asgd: rule %s: %s\n", s_all[i]->name ? s_all[i]->name : "?", why);
            abort();
        }
    }
    checked = true;
    return s_all;
}

const algorithm *algorithm_find(const char *name)
{
    for (const algorithm *const *a = s_checked(); *a; a++) {
        if (strcmp((*a)->name, name) == 0) {
            return *a;
        }
    }
    return NULL;
}

const algorithm *const *algorithm_all(void)
{
    return s_checked();
}
