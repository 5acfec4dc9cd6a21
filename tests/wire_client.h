/* wire_client.h: a raw client of a shard for tests, as anyone on the
 * network could write one: a DEALER on a loopback port (a CURVE client
 * with keys), any frames sent, replies received with a deadline and
 * checked. Failures fail the test (cmocka). */
#ifndef ASGD_TEST_WIRE_CLIENT_H
#define ASGD_TEST_WIRE_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "transport/auth.h"
#include "transport/wire.h"

/* A free TCP port on 127.0.0.1, outside the ephemeral range (net_free_ports). */
int wire_client_free_port(void);
/* A DEALER connected to tcp://127.0.0.1:port; with auth, a CURVE client.
 * A send waits at most 1 s (a client the shard refused has nowhere to
 * send). */
void *wire_client_open(void *ctx, int port, const net_auth *auth);
/* Sends the frames as one message; false when it could not be sent. */
bool wire_client_frames(void *sock, const void *const *data, const size_t *sizes, int n);
/* The header h and, when payload is not NULL, one payload frame. */
bool wire_client_send(void *sock, const wire_header *h, const void *payload, size_t bytes);
/* Waits up to timeout_ms for a reply from shard 0, which owns [0, hi), and
 * checks it (a shard's empty liveness probes are skipped); its payload, if
 * any, goes into buf. Returns the payload's bytes, or -1 when nothing came
 * in time. */
long wire_client_receive(void *sock, wire_header *h, void *buf, size_t cap, uint64_t hi,
                         long timeout_ms);

#endif
