/* sim.h: `asgd train` with experiment.mode = sim: the shards, the workers
 * and the evaluator in one process, in virtual time.
 *
 * Each simulated worker runs the rule's unmodified worker loop in a
 * coroutine of its own (simfiber.h, as SimGrid does); its primitives become
 * events: a pull is a message to each shard and a wait for the replies, a
 * push a message whose buffer is released when the shard has applied it,
 * a minibatch a wait of the compute model's time (simtime.h). Shards run
 * the same server handlers as in real mode, one message at a time in
 * arrival order, each push taking [sim] apply seconds. Gradients are real,
 * so convergence is real; only time is simulated.
 *
 * Events at equal times run in the order they were scheduled, and every
 * random draw comes from experiment.seed, so a run is reproducible byte for
 * byte (except with compute = measured); summary.json's wall_time_s is the
 * only wall-clock figure. The run folder has the same files as in real
 * mode, with time_s in virtual seconds. */
#ifndef ASGD_SIM_H
#define ASGD_SIM_H

#include "core/error.h"
#include "core/experiment.h"
#include "core/run.h"

/* e has a distributed rule: experiment_configure refuses sim without one. */
int sim_train(experiment *e, run *r, error *err);

#endif
