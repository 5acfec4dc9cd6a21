/* registry.c: every update rule, by name. A new rule adds one line here. */
#include <string.h>

#include "algorithms/algorithm.h"

extern const algorithm algorithm_sync, algorithm_hogwild, algorithm_downpour,
    algorithm_agn, algorithm_sagn, algorithm_dynsgd, algorithm_easgd, algorithm_aeasgd,
    algorithm_aeamsgd, algorithm_ssp, algorithm_average;

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
    NULL,
};

const algorithm *algorithm_find(const char *name)
{
    for (int i = 0; s_all[i]; i++) {
        if (strcmp(s_all[i]->name, name) == 0) {
            return s_all[i];
        }
    }
    return NULL;
}

const algorithm *const *algorithm_all(void)
{
    return s_all;
}
