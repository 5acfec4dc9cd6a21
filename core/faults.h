/* faults.h: messages lost, sent twice and held back on purpose, in the
 * spirit of ps-lite's PS_DROP_MSG: asgd's own fault injection, for a
 * network worse than the one at hand (this machine's kernel has no netem).
 *
 * [cluster] keys (the simulator's [sim] latency and jitter mean the same):
 *   latency    seconds each message a worker or the evaluator sends, and
 *              each reply it receives, is held (default 0; the messages of
 *              one exchange with several shards side by side, peers.h)
 *   jitter     plus jitter x N(0,1) seconds, never below 0 (default 0)
 *   drop       probability that a message is lost (default 0)
 *   duplicate  probability that a message is sent twice (default 0; drop +
 *              duplicate at most 1: each is a share of all messages)
 * A client draws for each request it sends (and holds each reply); a
 * shard draws drop and duplicate for each reply (it holds nothing back,
 * so as not to stall every other peer). Requests carry sequence numbers,
 * so a copy is taken once; a lost one is sent again after [cluster]
 * resend seconds. With faults on, plain pushes are acknowledged too, so a
 * lost push is sent again rather than lost for good.
 *
 * Every sender has its own stream, rng_derive(seed, RNG_FAULTS, stream):
 * a run's faults repeat with its seed. */
#ifndef ASGD_FAULTS_H
#define ASGD_FAULTS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/rng.h"

typedef struct fault_spec {
    double latency, jitter;
    double drop, duplicate;
} fault_spec;

/* One sender's faults and what they did. */
typedef struct faults {
    fault_spec spec;
    rng r;
    uint64_t dropped;         /* messages not sent */
    uint64_t duplicated;      /* messages sent twice */
} faults;

/* Whether s injects anything at all. */
bool faults_on(const fault_spec *s);
void faults_init(faults *f, const fault_spec *s, uint64_t seed, uint64_t stream);
/* How many copies of the next message to send: 0 (lost), 1 or 2. */
int faults_copies(faults *f);
/* One message's latency and jitter, drawn: how long it is held, in
 * seconds (0 when both are 0). */
double faults_delay(faults *f);

#endif
