/* sequential.h: the sequential baseline, one process training one model
 * with a local optimizer: the trajectory every distributed rule is compared
 * with. */
#ifndef ASGD_SEQUENTIAL_H
#define ASGD_SEQUENTIAL_H

#include "core/error.h"
#include "core/experiment.h"
#include "core/run.h"

/* Trains e (already loaded) for e->epochs, writing metrics into r and the
 * summary at the end. Evaluates at time 0, every e->eval_every seconds of
 * training time and at the end; time spent evaluating is not counted as
 * training time. Returns -1 on failure or interruption (SIGINT/SIGTERM),
 * leaving summary.json with complete = false. */
int sequential_train(experiment *e, run *r, error *err);

#endif
