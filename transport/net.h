/* net.h: the ZeroMQ side of the transport.
 *
 * Servers bind a ROUTER; workers and the evaluator connect one DEALER per
 * shard. Socket options are set deliberately:
 *  - ZMQ_LINGER 0: closing never blocks on a dead peer (a worker confirms
 *    delivery of its last pushes with a DONE round trip instead; a server
 *    ending normally lingers 2 s for its last acks);
 *  - high-water marks NET_HWM messages: a worker that pushes faster than a
 *    shard applies blocks (back-pressure) instead of queueing without bound;
 *  - ZMQ_ROUTER_MANDATORY: a reply to a peer that has gone is an error the
 *    server counts, never a silent drop;
 *  - reconnection every 100 ms up to 1 s, so workers may start before the
 *    servers bind and survive a server's restart.
 * Payload frames are sent without copying (zmq_msg_init_data); the sender
 * learns through net_pending() when ZeroMQ no longer reads its buffer. */
#ifndef ASGD_NET_H
#define ASGD_NET_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <zmq.h>

#include "core/error.h"
#include "transport/auth.h"
#include "transport/wire.h"

#define NET_HWM 64
/* A shard's peer that has not finished its ZeroMQ (or CURVE) handshake
 * within this many ms is disconnected. */
#define NET_HANDSHAKE_MS 10000
#define NET_MAX_FRAMES 4     /* identity, header, payload, and one to spot extras */

/* Counts payload buffers that ZeroMQ still reads (zero-copy sends); its
 * I/O thread signals when the count drops to zero. */
typedef struct net_pending {
    pthread_mutex_t lock;
    pthread_cond_t idle;
    long count;
} net_pending;

void net_pending_init(net_pending *p);
void net_pending_destroy(net_pending *p);

/* A received message: up to NET_MAX_FRAMES frames, and how many more came. */
typedef struct net_msg {
    zmq_msg_t frames[NET_MAX_FRAMES];
    int count;                /* frames held */
    int dropped;              /* frames beyond NET_MAX_FRAMES, discarded */
    size_t bytes;             /* over all frames */
    char user[AUTH_NAME_MAX]; /* with CURVE: the sender's name (its User-Id); else "" */
} net_msg;

/* With auth (NULL: none), a router is a CURVE server whose handshakes the
 * context's ZAP handler answers (auth_zap_start first), and a dealer a
 * CURVE client of the server's key. A router's peer that sends a frame
 * (a handshake's command too, before any key is checked) of more than
 * max_message bytes is disconnected before the frame is read, never
 * held whole in memory (ZMQ_MAXMSGSIZE; 0: no limit). The frames of one
 * message are not limited in number: ZeroMQ holds them all until the
 * message is complete (net_recv drops those past NET_MAX_FRAMES only
 * then), so without CURVE any peer can make a router hold one message
 * as large as it likes. */
void *net_router(void *ctx, const char *endpoint, const net_auth *auth, int64_t max_message,
                 error *err);
void *net_dealer(void *ctx, const char *endpoint, const net_auth *auth, error *err);

/* Sends an optional identity frame, the header and an optional payload.
 * With `pending`, the payload is sent without copying and counted there
 * until ZeroMQ releases it; without, it is copied. Returns bytes sent or -1
 * (errno from ZeroMQ). With an identity (a ROUTER's reply) it never
 * blocks: when that peer's queue is full because it does not read, it
 * returns -1 at once with EAGAIN and nothing is sent; a peer that has gone
 * gives EHOSTUNREACH. */
long net_send(void *socket, const zmq_msg_t *identity, const wire_header *h,
              const void *payload, size_t payload_bytes, net_pending *pending);
/* The same for a DEALER, never blocking: -1 with EAGAIN at once, nothing
 * sent, when its queue to the peer is full (the peer has gone, or does
 * not read). A request sent again uses it, so that a client whose shard
 * has gone still reaches its timeout. */
long net_try_send(void *socket, const wire_header *h, const void *payload,
                  size_t payload_bytes, net_pending *pending);

/* Receives one whole message, waiting up to timeout_ms (-1: forever).
 * Returns 1 with a message, 0 on timeout or interruption, -1 on error.
 * net_msg_close() releases it. */
int net_recv(void *socket, net_msg *m, long timeout_ms);
void net_msg_close(net_msg *m);

/* Waits until every zero-copy payload counted in p is released: 0, or -1
 * when some is still held after `seconds` (a peer that stopped reading in
 * the middle of it; closing its socket releases it). */
int net_settle(net_pending *p, double seconds);

/* The ZeroMQ endpoint of "HOST:PORT" (an IPv6 address in brackets,
 * "[fd00::1]:2222"): tcp://HOST:PORT to connect; to bind, the same when
 * HOST is an IP address, else every interface (tcp, star, PORT), IPv4 and
 * IPv6. localhost is 127.0.0.1 both ways. Full ipc:// and tcp:// endpoints
 * pass as they are. */
void net_endpoint(char *buf, size_t n, const char *address, bool for_bind);
/* Whether an endpoint can be reached from this host alone: ipc, inproc,
 * or tcp on a loopback address. */
bool net_local_only(const char *endpoint);

/* n distinct TCP ports free on host (a local IPv4 address, or a name of one) into ports,
 * for a job's shards to bind; -1 where none can be bound there. They are
 * drawn below the kernel's ephemeral range
 * (/proc/sys/net/ipv4/ip_local_port_range), from NET_PORT_LOW up: a port
 * the kernel hands out for bind(0) is one an outgoing connection (a
 * worker's DEALER reconnecting before its shard binds, another job's) may
 * take first, and the shard then fails to bind. Where that range is too
 * small, from the kernel (bind to 0). */
#define NET_PORT_LOW 10000
int net_free_ports(const char *host, int *ports, int n);
/* Whether a shard could listen on host:port here (port 0: whether host
 * is an address of this host at all), as net_endpoint binds it: an IP
 * address (IPv6 in brackets) must be one of this host's, a name must
 * resolve to one (and binds every interface). A port a listener holds is
 * refused; one in TIME_WAIT is not (ZeroMQ binds with SO_REUSEADDR). The
 * reason, when not, goes into why. */
bool net_can_listen(const char *host, int port, char *why, size_t n);

/* Whether address ("host:port") names a host that resolves, and only to
 * addresses that are not this host's: a shard given it would listen on
 * every interface here (net_endpoint) while its peers look for it there.
 * An IP address, localhost, "*" or ipc is no name; a name that does not
 * resolve (yet: a Kubernetes service's record comes after its pod) is
 * not elsewhere. What it is, when it is, goes into why. */
bool net_name_elsewhere(const char *address, char *why, size_t n);

#endif
