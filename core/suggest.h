/* suggest.h: "did you mean" for a mistyped command, flag or config key. */
#ifndef ASGD_SUGGEST_H
#define ASGD_SUGGEST_H

/* The edit distance of a and b (insertions, deletions, substitutions;
 * a letter in the other case is no substitution);
 * 99 for words of 63 characters or more. */
int suggest_distance(const char *a, const char *b);
/* The candidate (a NULL-terminated list) closest to word, if it is close
 * enough to be a typo of it (1 edit for words of 4 characters or fewer,
 * else 2); NULL when none is. */
const char *suggest_nearest(const char *word, const char *const *candidates);

#endif
