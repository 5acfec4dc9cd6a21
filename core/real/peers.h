/* peers.h: a worker's or the evaluator's connections to every shard: one
 * DEALER each, with the shard's element range, and the request/reply
 * exchanges both roles need. */
#ifndef ASGD_PEERS_H
#define ASGD_PEERS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/real/cluster.h"
#include "core/error.h"
#include "core/summary.h"
#include "transport/net.h"

typedef struct peers {
    void *ctx;
    int count;
    void **sockets;
    uint64_t *lo, *hi;
    uint32_t self;            /* worker index or WIRE_EVALUATOR */
    double timeout;           /* seconds a shard may take to answer */
    long bytes;               /* sent and received */
    net_pending pending;      /* zero-copy payloads not yet released */
} peers;

/* One dealer per shard of cs; with auth (NULL: none) each is a CURVE
 * client. */
int peers_open(peers *p, const cluster_spec *cs, uint64_t nparams, uint32_t self,
               double timeout, const net_auth *auth, error *err);
void peers_close(peers *p);

/* Sends a pull for min_version to every shard and copies each reply's
 * parameters into theta (nparams). versions[k] and flags[k] (may be NULL)
 * receive each reply's version and flags; *staleness the first shard's
 * report. */
int peers_pull(peers *p, float *theta, uint64_t min_version, uint64_t *versions,
               uint16_t *flags, uint64_t *staleness, uint64_t *total, error *err);
/* A verdict reply's tag: the push made shard 0's round, or came late. */
enum { PEERS_IN_ROUND = 1, PEERS_LATE = 2 };

/* Sends values split by shard without copying (see net_settle). With
 * leader (rule_info.round_leader) and several shards, shard 0 gets the
 * push first and answers whether it made the round; the others then get
 * it with that verdict, so every shard's round has the same workers. */
int peers_push(peers *p, const float *values, uint64_t tag, const uint64_t *versions,
               uint32_t samples, bool leader, error *err);
/* Sends a control message to every shard and waits for each ack; stores
 * whether every shard reported all workers done (workers_done may be
 * NULL) and, for WIRE_CONTROL_STATS, each shard's counters (stats: one per
 * shard, or NULL). */
int peers_control(peers *p, uint64_t control, bool *workers_done, shard_stats *stats,
                  error *err);

#endif
