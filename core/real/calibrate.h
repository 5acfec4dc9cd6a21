/* calibrate.h: `asgd calibrate CONFIG [-o PROFILE]`, this host's costs for
 * one experiment, as a profile the simulator reads ([sim] profile).
 *
 * It measures, in well under a minute:
 *   compute      the time of one worker minibatch (a minibatch drawn and
 *                its gradient, as worker_gradient takes it) of the
 *                configured model and batch, 200 times after a warm-up:
 *                its deciles (compute = empirical), mean and sd;
 *   messages     round trips over the configured transport (ipc or tcp on
 *                this host) between two ZeroMQ sockets, of a header alone
 *                and of the model's whole vector: latency is half the small
 *                one (the per-message cost of both ends included), and the
 *                extra time of the large one gives the bandwidth;
 *   apply        the rule's server step on a shard of the whole vector, per
 *                push;
 *   startup      loading the data and making the model, 3 times;
 *   cores        the host's online cores, which simulated workers share.
 * It prints what it measured; the profile (an INI file) records the host,
 * its CPU, the date, the config and asgd's version in [host], and the costs
 * in [sim]. */
#ifndef ASGD_CALIBRATE_H
#define ASGD_CALIBRATE_H

/* argv: CONFIG [-o PROFILE] [section.key=value ...]; returns the exit
 * status. */
int calibrate_main(int argc, char **argv);

#endif
