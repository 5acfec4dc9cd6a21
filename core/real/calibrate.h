/* calibrate.h: `asgd calibrate CONFIG [-o PROFILE]`, this host's costs for
 * one experiment, as a profile the simulator reads ([sim] profile).
 *
 * It measures, in a few seconds:
 *   compute      the time of one worker minibatch (a minibatch drawn and
 *                its gradient, as worker_gradient takes it) of the
 *                configured model and batch, 200 times after a warm-up:
 *                its deciles (compute = empirical; the two ends as
 *                sim_quantiles_of sets them), mean and sd;
 *   messages     round trips of a header alone over the configured
 *                transport (ipc or tcp on this host) to an echo process:
 *                message_cpu is the CPU time both processes spend on one
 *                message at each end (ZeroMQ's calls and I/O threads),
 *                latency the rest of a one-way trip when the far end was
 *                idle before it (waking it is part of the trip); with
 *                shared segments ([cluster] shm) no values cross the
 *                socket (bandwidth is left unlimited), and copy_bandwidth
 *                is one copy of the model's vector from memory no cache
 *                holds; without, the bandwidth of a round trip of the
 *                whole vector;
 *   apply        the rule's server step on a shard of the whole vector, per
 *                push;
 *   eval_cost    one evaluation of the test set, as the evaluator makes it;
 *   startup_cpu  loading the data and making the model, 3 times;
 *   cores        the host's online cores, which simulated processes share,
 *   timeslice    and how long the kernel runs a CPU-bound task while
 *                another waits for its core (two threads spinning on one);
 *   migration    how long a task that ran on a CPU stays there rather than
 *                move to an idle one (the kernel's sched_migration_cost,
 *                read where it shows it, else its default, 0.5 ms).
 * It prints what it measured; the profile (an INI file) records the host,
 * its CPU, the date, the config and asgd's version in [host], and the costs
 * in [sim]. */
#ifndef ASGD_CALIBRATE_H
#define ASGD_CALIBRATE_H

#include <stdbool.h>
#include <stddef.h>

/* argv: CONFIG [-o PROFILE] [section.key=value ...]; returns the exit
 * status. */
int calibrate_main(int argc, char **argv);

/* What the message measurements are (seconds): a round trip of a header,
 * the CPU time both ends spent on one, what a far end idle before it adds,
 * a round trip of `bytes` (header included), and whether values go
 * through shared segments instead of the socket. */
typedef struct message_timing {
    double round_trip, cpu_per_trip, wake, large_round_trip;
    size_t bytes;
    bool shared;
} message_timing;

/* The simulator's costs they give: message_cpu a message's work at each
 * end (a quarter of a round trip's, and at most a quarter of the trip:
 * `overlapped` where the work measured was more), latency the rest of a
 * one-way trip, wakeup half the idle far end's extra, bandwidth the large
 * message's payload over its one-way time beyond a header's (unlimited,
 * 1e15, through shared segments or where it took none). The simulated
 * header's round trip, 2 (latency + 2 message_cpu), is the measured one. */
typedef struct message_costs {
    double message_cpu, latency, wakeup, bandwidth;
    bool overlapped;
} message_costs;
void calibrate_message_costs(const message_timing *t, message_costs *out);

#endif
