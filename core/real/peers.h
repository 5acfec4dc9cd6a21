/* peers.h: a worker's or the evaluator's connections to every shard: one
 * DEALER each, with the shard's element range, and the request/reply
 * exchanges both roles need. */
#ifndef ASGD_PEERS_H
#define ASGD_PEERS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/real/cluster.h"
#include "core/compress.h"
#include "core/error.h"
#include "core/faults.h"
#include "core/summary.h"
#include "transport/net.h"
#include "transport/shm.h"

/* A push sent to a shard: what to send again while no answer comes. */
typedef struct peers_push_sent {
    wire_header h;
    const void *payload;
    size_t bytes;
} peers_push_sent;

/* How a client talks to the shards. */
typedef struct peers_options {
    double timeout;           /* seconds a shard may stay silent before the client fails */
    double resend;            /* seconds without an answer before a request is sent again */
    const net_auth *auth;     /* CURVE keys; NULL: none */
    fault_spec faults;        /* injected into pulls, pushes and their replies */
    uint64_t seed;            /* the faults' and compression's streams */
    compress_spec compress;   /* how pushes are compressed (kind none: float32) */
    bool shm;                 /* [cluster] shm: share a segment with each shard of this
                                 host (ipc or loopback) when it will; pushes and replies
                                 then carry their values through it */
    bool count_steps;         /* pushes carry their worker's examples so far (wire.h's
                                 total), so that a shard takes each step once; not a
                                 lockstep rule's, whose rounds take a worker once each
                                 and whose shards count rounds, not steps */
    uint32_t job;             /* experiment_job: every request carries it, and a reply
                                 of another (a shard of another job's settings) fails
                                 the client, ERROR_USAGE */
} peers_options;

typedef struct peers {
    void *ctx;
    int count;
    void **sockets;
    uint64_t *lo, *hi;
    uint64_t *seq;            /* per shard: the last request's number */
    uint32_t *generation;     /* per shard: the generation last heard (0: none) */
    uint64_t *seen;           /* per shard: the version in its last reply */
    uint64_t *counted;        /* per shard: the examples of this worker's pushes it has
                                 counted, as its last reply said (every worker's, for
                                 the evaluator) */
    uint64_t *examples;       /* per shard: those this worker's pushes to it carried,
                                 across its processes (peers_take_up), each push's
                                 total */
    uint32_t self;            /* worker index or WIRE_EVALUATOR */
    long refused;             /* refusals (WIRE_FLAG_REFUSED: another process holds this
                                 one's index) since a shard last answered */
    peers_options o;
    long bytes;               /* sent and received */
    long resent;              /* requests sent again for want of an answer */
    long restarts;            /* shard restorations seen (WIRE_FLAG_RESTARTED) */
    net_pending pending;      /* zero-copy payloads not yet released */
    faults *faults;           /* per shard, when o.faults injects any; else NULL */
    compressor *compress;     /* a worker's, when o.compress compresses; else NULL */
    wire_header *asked;       /* per shard: the pull request last sent */
    peers_push_sent *pushed;  /* per shard: the push last sent (to send again) */
    double begun;             /* run_now() when this exchange with the shards began:
                                 with faults, each request is held from it */
    double held_until;        /* with faults: when the replies received are let in */
    shm_segment *segments;    /* per shard: the one it took (base NULL: none) */
    zmq_pollitem_t *poll;     /* per shard: s_receive_any's */
    struct peers_awaited *awaiting;   /* per shard: peers_pull's requests not answered yet */
    bool prefetched;          /* asked holds a prefetch not yet received */
    bool retaking;            /* a shard other than 0 came back from its checkpoint:
                                 the rounds shard 0 has closed are retaken without
                                 its verdict (peers_push) */
    uint64_t prefetch_min;    /* its min_version */
    char dropped[200];        /* why the connections were dropped ("": they stand) */
} peers;

/* One dealer per shard of cs, a CURVE client with o->auth. With o->shm,
 * a worker or the evaluator without compression or injected faults offers
 * each shard at a local endpoint a shared segment (transport/shm.h) and
 * waits for its answer; a shard that cannot take it (another host, another
 * pid namespace) is spoken to through the socket alone, and so is one that
 * restarts (its new process holds no segment). Requests that
 * wait for an answer (pulls, verdict pushes, controls) are numbered and
 * sent again, under the same number, until the shard answers: after
 * o->resend seconds, then twice as long each time up to a second (or
 * o->resend, if longer); a shard restarted from a checkpoint gets them
 * anew, and a client whose shard has gone fails at o->timeout. Any
 * answer with another number (to a request sent again) is dropped. With
 * o->faults on, pulls and pushes (now all acknowledged) and their replies
 * are dropped, doubled and held as it says; control messages are not,
 * and DONE tells each shard what was done to the messages sent to it.
 * The messages of one exchange (a pull, a push) with several shards are
 * held side by side, as on links of their own: each request from the
 * exchange's start, each reply from when it is read, and the exchange
 * ends when the last reply's hold does (one latency each way, whatever
 * the shards, as [sim] latency means; a hold drawn longer with jitter may
 * delay the requests after it). */
int peers_open(peers *p, const cluster_spec *cs, uint64_t nparams, uint32_t self,
               const peers_options *o, error *err);
void peers_close(peers *p);

/* Sends a pull for min_version to every shard and copies each reply's
 * parameters into theta (nparams). versions[k] and flags[k] (may be NULL)
 * receive each reply's version and flags; *staleness and *total shard 0's
 * report (total: the examples this client's pushes carried, or every
 * worker's for the evaluator). A shard restored from a checkpoint since
 * the last pull answers at once, flagged WIRE_FLAG_RESTARTED; when its
 * version went back below min_version, the shards that have not answered
 * yet are asked again for that version (a lockstep rule's pull could wait
 * there for a round that only workers retaking the restored shard's
 * rounds could close). The replies are taken in the order they come. */
int peers_pull(peers *p, float *theta, uint64_t min_version, uint64_t *versions,
               uint16_t *flags, uint64_t *staleness, uint64_t *total, error *err);
/* Sends a pull for min_version to every shard without waiting: the next
 * peers_pull with a min_version no higher receives its replies instead of
 * asking again (a higher one asks again, and the early replies are
 * dropped as answers to another request). */
int peers_prefetch(peers *p, uint64_t min_version, error *err);
/* The fewest examples of this worker's pushes that any shard had counted
 * at the last pull: where a new process of the worker takes up, so that
 * no shard misses a step (a shard restored from an older checkpoint than
 * another's, or a push that reached one shard and not the next). */
uint64_t peers_counted(const peers *p);
/* Numbers this process's pushes on from `examples` (what its earlier
 * processes did, in whole minibatches): a shard drops a push whose total
 * it has counted already, a step it has (wire.h's total). After the first
 * pull: a shard other than 0 behind shard 0 both in its version and in
 * this worker's pushes counted was restored from an older checkpoint, and
 * its rounds are retaken (retaking). */
void peers_take_up(peers *p, uint64_t examples);

/* A verdict reply's tag: the push made shard 0's round, or came late. */
enum { PEERS_IN_ROUND = 1, PEERS_LATE = 2 };

/* Sends values split by shard: into each shard's shared segment where it
 * took one (once the shard has read the last push there), else without
 * copying (see peers_settle; a part under 64 KiB is copied). With
 * leader (rule_info.round_leader) and several shards, shard 0 gets the
 * push first and answers whether it made the round; the others then get
 * it with that verdict, so every shard's round has the same workers. A
 * round shard 0 has closed, which a shard restored from an older
 * checkpoint retakes, is no round shard 0 can judge (its verdict was
 * "late", and the restored shard never moved): such a push goes to every
 * shard without a verdict, each taking the first pushes of the round, as
 * without a leader. */
int peers_push(peers *p, const float *values, uint64_t tag, const uint64_t *versions,
               uint32_t samples, bool leader, error *err);
/* Sends shard k's part of values alone, as peers_push does without a
 * leader (not with compression, whose parts are made together). */
int peers_push_part(peers *p, int k, const float *values, uint64_t tag,
                    const uint64_t *versions, uint32_t samples, error *err);
/* Waits until every push sent without copying is taken by its shard, at
 * most o->timeout, a bound on the rest of a push's transfer as on a
 * pull's reply: past it (a shard that stopped reading in the middle of
 * one: its host froze, or the process was stopped) every connection is
 * dropped, which releases the payload, and this and every later exchange
 * fail (the worker waited for good, its [cluster] timeout never came).
 * A buffer pushed is free to write once this returns, either way. */
int peers_settle(peers *p, error *err);

/* Sends a control message to every shard and waits for each ack; stores
 * whether every shard reported all workers done (workers_done may be
 * NULL) and, for WIRE_CONTROL_STATS, each shard's counters (stats: one per
 * shard, or NULL). */
int peers_control(peers *p, uint64_t control, bool *workers_done, shard_stats *stats,
                  error *err);

#endif
