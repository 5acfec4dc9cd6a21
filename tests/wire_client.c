/* wire_client.c: a raw shard client for tests. */
#include "wire_client.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>

#include <zmq.h>

#include "transport/net.h"

int wire_client_free_port(void)
{
    int port = 0;   /* as the launcher draws its shards': outside the ephemeral range */
    assert_int_equal(net_free_ports("127.0.0.1", &port, 1), 0);
    return port;
}

void *wire_client_open(void *ctx, int port, const net_auth *auth)
{
    void *sock = zmq_socket(ctx, ZMQ_DEALER);
    assert_non_null(sock);
    int linger = 0, send_timeout = 1000;
    zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(sock, ZMQ_SNDTIMEO, &send_timeout, sizeof send_timeout);
    if (auth) {
        assert_int_equal(zmq_setsockopt(sock, ZMQ_CURVE_SERVERKEY, auth->server_public,
                                        AUTH_Z85_LEN), 0);
        assert_int_equal(zmq_setsockopt(sock, ZMQ_CURVE_PUBLICKEY, auth->public_key,
                                        AUTH_Z85_LEN), 0);
        assert_int_equal(zmq_setsockopt(sock, ZMQ_CURVE_SECRETKEY, auth->secret_key,
                                        AUTH_Z85_LEN), 0);
    }
    char endpoint[64];
    snprintf(endpoint, sizeof endpoint, "tcp://127.0.0.1:%d", port);
    assert_int_equal(zmq_connect(sock, endpoint), 0);
    return sock;
}

bool wire_client_frames(void *sock, const void *const *data, const size_t *sizes, int n)
{
    for (int i = 0; i < n; i++) {
        if (zmq_send(sock, data[i], sizes[i], i + 1 < n ? ZMQ_SNDMORE : 0) < 0) {
            return false;
        }
    }
    return true;
}

bool wire_client_send(void *sock, const wire_header *h, const void *payload, size_t bytes)
{
    uint8_t head[WIRE_HEADER_SIZE];
    wire_encode(head, h);
    const void *data[2] = {head, payload};
    size_t sizes[2] = {sizeof head, bytes};
    return wire_client_frames(sock, data, sizes, payload ? 2 : 1);
}

long wire_client_receive(void *sock, wire_header *h, void *buf, size_t cap, uint64_t hi,
                         long timeout_ms)
{
    uint8_t head[WIRE_HEADER_SIZE];
    int n;
    do {   /* an empty frame is a shard's probe: not a reply */
        zmq_pollitem_t item = {.socket = sock, .events = ZMQ_POLLIN};
        if (zmq_poll(&item, 1, timeout_ms) <= 0) {
            return -1;
        }
        n = zmq_recv(sock, head, sizeof head, 0);
    } while (n == 0);
    assert_int_equal(n, WIRE_HEADER_SIZE);
    int more;
    size_t len = sizeof more, got = 0;
    zmq_getsockopt(sock, ZMQ_RCVMORE, &more, &len);
    if (more) {
        int k = zmq_recv(sock, buf, cap, 0);
        assert_true(k >= 0 && (size_t)k <= cap);
        got = (size_t)k;
    }
    const char *why;
    if (wire_decode_reply(h, head, sizeof head, more ? 2 : 1, got, 0, 0, hi, &why) < 0) {
        fail_msg("bad reply: %s", why);
    }
    return (long)got;
}
