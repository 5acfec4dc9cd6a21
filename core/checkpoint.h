/* checkpoint.h: a shard's whole state on disk, to restart or resume from.
 *
 * RUN_DIR/checkpoints/ps-K.ckpt is written whole or not at all (a
 * temporary file flushed to the disk, then renamed: run_write_atomic).
 * Little-endian, in this order:
 *
 *   "ASGDCKP4"                          magic and format version
 *   u32 shard, shards, workers          whose it is
 *   u64 lo, hi                          its range of the parameters
 *   u32 len, len bytes                  the rule's name (64 bytes at most)
 *   u32 optimizer                       the shard's optimizer (enum optim_kind)
 *   u32 len, len bytes                  the job's settings (experiment_settings),
 *                                       or none
 *   u32 generation                      of the process that wrote it
 *   u64 version, samples                the shard's counters...
 *   u64 len, len bytes                  ... and the rest, as ps-K.json's JSON
 *   per worker: u64 samples, u64 push seq, u8 verdict, u8 done,
 *               u8 in the round (its push is in the round's sum)
 *   u8 evaluator done
 *   u64 optimizer steps, u8 has s1, [s1], u8 has s2, [s2]   (n floats each)
 *   u64 state bytes, state              the rule's (server_state_bytes)
 *   u64 round arrived, u8 has sum, [round sum]              (n floats)
 *   theta                               n floats
 *   u32 CRC-32 of everything before it
 *
 * Loading checks all of it: a file cut short, corrupt, or of another
 * shard, shape or rule is refused with a clear error, never half used;
 * and one of another job's settings (a job run again in the folder of an
 * earlier one, with another seed or learning rate) with ERROR_USAGE, the
 * first setting that differs named: restored, it had taken up the other
 * job's model and counters and reported them as its own. */
#ifndef ASGD_CHECKPOINT_H
#define ASGD_CHECKPOINT_H

#include <stdbool.h>
#include <stdint.h>

#include "algorithms/server.h"
#include "core/error.h"

/* What a shard's process remembers of each client, beyond the server. */
typedef struct shard_client {
    uint64_t push_seq;        /* the client's last push taken (0: none) */
    uint8_t verdict;          /* that push's verdict, answered again if it is resent */
} shard_client;

/* path for shard k of the run in dir: dir/checkpoints/ps-K.ckpt. */
void checkpoint_path(char *buf, size_t n, const char *dir, int shard);

/* Writes s (its counters, optimizer, rule state, round and theta), the
 * clients (s->workers of them), generation and the job's settings (NULL:
 * none) to path, making its folder. Call with no push being applied. */
int checkpoint_save(const char *path, server *s, const shard_client *clients,
                    uint32_t generation, const char *settings, error *err);

/* Restores s, the clients and *generation (the writer's) from path. s must
 * be the same shard of the same rule and shape, fresh from server_new,
 * and, where settings is not NULL, the file of a job of those settings
 * (ERROR_USAGE, naming the first that differs, where not); on failure s
 * is unchanged. */
int checkpoint_load(const char *path, server *s, shard_client *clients, uint32_t *generation,
                    const char *settings, error *err);

/* The counters (ps-K.json's) that the checkpoint at path holds, checked
 * as checkpoint_load checks them, whoever's shard it is. */
int checkpoint_stats(const char *path, shard_stats *st, error *err);
/* Whether the checkpoint at path (of a job of `workers` workers) holds
 * every worker done, and (evaluator_done, may be NULL) the evaluator. */
int checkpoint_workers_done(const char *path, int workers, bool *all_done, bool *evaluator_done,
                            error *err);

#endif
