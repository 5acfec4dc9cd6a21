/* shm.h: a shared segment between one client (a worker or the evaluator)
 * and one shard on the same host, so that parameters and pushes move by
 * one copy into memory both map instead of through a socket.
 *
 * The client makes the segment: a sealed memfd (its size can never
 * change, so the shard can never fault on it) holding a header, a reply
 * area and a push area of n floats each. It names it to the shard by its
 * path in /proc (/proc/PID/fd/FD) and a 16-byte random token written in
 * the header, in a WIRE_CONTROL_ATTACH message over the ordinary socket;
 * the shard opens the path, and takes the segment only when it is a
 * sealed memfd of its own user, of exactly the size for its n, whose
 * header carries that token. Nothing is ever left on disk: the memory
 * goes when the last of the two mappings does.
 *
 * Who writes what, and when (the socket's messages order them):
 *  - the reply area: the shard, as it answers a pull of this client; the
 *    client reads it after the reply arrives and before it asks again;
 *  - the push area: the client, once the shard has released its previous
 *    push (shm_wait_released); the shard reads it from the push message
 *    until it releases it (shm_release: the header's count of released
 *    pushes, a futex the client can sleep on).
 * A process of the same user on the same host can do anything to either
 * side (signal it, trace it), so the segment adds no exposure; a peer on
 * the network cannot name a segment it has not seen the token of. */
#ifndef ASGD_SHM_H
#define ASGD_SHM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

#define SHM_PATH_MAX 64
#define SHM_TOKEN_SIZE 16
#define SHM_ATTACH_SIZE (SHM_PATH_MAX + SHM_TOKEN_SIZE)   /* an ATTACH's payload */

typedef struct shm_segment {
    void *base;               /* NULL: none */
    size_t bytes;
    uint64_t n;               /* floats in each area */
    float *reply, *push;
    _Atomic uint32_t *released;   /* pushes the shard has released */
    uint32_t pushed;          /* client: pushes written */
    int fd;                   /* the client's memfd (owner) */
    bool owner;               /* made here (shm_create), not attached */
    char path[SHM_PATH_MAX];
    uint8_t token[SHM_TOKEN_SIZE];
} shm_segment;

/* The size of a segment for n floats a side. */
size_t shm_bytes(uint64_t n);

/* Client side: a new segment for n floats a side; -1 with err set where
 * the host has no memfd or no memory. */
int shm_create(shm_segment *s, uint64_t n, error *err);
/* The ATTACH payload naming s: its path, NUL-padded, then its token. */
void shm_attach_payload(const shm_segment *s, uint8_t out[SHM_ATTACH_SIZE]);
/* Client side: waits until the shard has released every push written
 * to s, at most timeout seconds (a stop request ends it early); 0 once
 * released, -1 with err set on timeout or stop. */
int shm_wait_released(shm_segment *s, double timeout, error *err);
/* Client side: s's push area now holds a push the shard will release. */
void shm_pushed(shm_segment *s);

/* Shard side: maps the segment an ATTACH payload names, for n floats a
 * side; -1 with *why set (a static string) when it is not one a client of
 * this user made with that token. */
int shm_attach(shm_segment *s, const uint8_t payload[SHM_ATTACH_SIZE], uint64_t n,
               const char **why);
/* Shard side: the push in s's push area has been read; wakes the client. */
void shm_release(shm_segment *s);

/* Either side: unmaps s (and closes the client's memfd); safe on one
 * that holds none. */
void shm_close(shm_segment *s);

#endif
