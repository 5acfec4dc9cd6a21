/* reeval.h: `asgd eval RUN_DIR`: a run's saved model (model.npy) evaluated
 * again on the test set its resolved config names, beside the figure the
 * run itself recorded (summary.json's final_test_acc). */
#ifndef ASGD_REEVAL_H
#define ASGD_REEVAL_H

#include "core/error.h"

/* Prints "test_loss L test_acc A (recorded: R)" for RUN_DIR, its config
 * with the noverrides "section.key=value" overrides applied (a run on a GPU
 * evaluated on a host without one: backend.device=cpu; its data moved:
 * data.path=...); -1 with err when the folder, its config, its data or its
 * model cannot be read. */
int reeval_main(const char *run_dir, int noverrides, char **overrides, error *err);

#endif
