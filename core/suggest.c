/* suggest.c: edit distances for "did you mean" (suggest.h). */
#include "core/suggest.h"

#include <ctype.h>
#include <string.h>

int suggest_distance(const char *a, const char *b)
{
    size_t n = strlen(b);
    int row[64];
    if (strlen(a) >= 63 || n >= 63) {
        return 99;
    }
    for (size_t j = 0; j <= n; j++) {
        row[j] = (int)j;
    }
    for (size_t i = 1; a[i - 1]; i++) {
        int diagonal = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= n; j++) {
            int above = row[j];
            /* case costs nothing: EVERY is every mistyped */
            int best = diagonal + (tolower((unsigned char)a[i - 1]) !=
                                   tolower((unsigned char)b[j - 1]));
            best = above + 1 < best ? above + 1 : best;
            best = row[j - 1] + 1 < best ? row[j - 1] + 1 : best;
            row[j] = best;
            diagonal = above;
        }
    }
    return row[n];
}

const char *suggest_nearest(const char *word, const char *const *candidates)
{
    const char *best = NULL;
    int limit = strlen(word) <= 4 ? 1 : 2, best_d = limit + 1;
    for (int i = 0; candidates[i]; i++) {
        int d = suggest_distance(word, candidates[i]);
        if (d < best_d) {
            best = candidates[i];
            best_d = d;
        }
    }
    return best;
}
