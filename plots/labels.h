/* labels.h: the words a figure uses for asgd's fields and config keys,
 * from one table, so that every axis, legend and title says "test
 * accuracy" or "samples/s", never final_test_acc or samples_per_s. */
#ifndef ASGD_LABELS_H
#define ASGD_LABELS_H

#include <stddef.h>

/* The axis label, with its unit, of a summary field, config key or
 * eval.csv column ("acc", "loss", "time", "epoch", "updates"); the key
 * itself when the table has none. */
const char *label_of(const char *key);
/* A group's legend: the value alone when the key names the group already
 * (a label, a rule), else "WORDS = VALUE" ("workers = 4"). */
void label_group(char *out, size_t n, const char *key, const char *value);

#endif
