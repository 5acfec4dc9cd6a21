/* net.c: ZeroMQ sockets, whole-message receive and zero-copy send. */
#include "transport/net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/rng.h"

static int s_options(void *s, int type, int64_t max_message)
{
    int zero = 0, hwm = NET_HWM, ivl = 100, ivl_max = 1000, one = 1;
    if (max_message > 0 &&
        zmq_setsockopt(s, ZMQ_MAXMSGSIZE, &max_message, sizeof max_message) != 0) {
        return -1;
    }
    /* IPv6 as well as IPv4: an address such as [fd00::1]:2222 and a host
     * name that resolves to one (a router bound to * takes both) */
    if (zmq_setsockopt(s, ZMQ_IPV6, &one, sizeof one) != 0) {
        return -1;
    }
    if (zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero) != 0 ||
        zmq_setsockopt(s, ZMQ_SNDHWM, &hwm, sizeof hwm) != 0 ||
        zmq_setsockopt(s, ZMQ_RCVHWM, &hwm, sizeof hwm) != 0 ||
        zmq_setsockopt(s, ZMQ_RECONNECT_IVL, &ivl, sizeof ivl) != 0 ||
        zmq_setsockopt(s, ZMQ_RECONNECT_IVL_MAX, &ivl_max, sizeof ivl_max) != 0) {
        return -1;
    }
    /* a shard's peers finish their handshake within this, or are dropped:
     * an idle connection held a descriptor for libzmq's default 30 s */
    int handshake = NET_HANDSHAKE_MS;
    if (type == ZMQ_ROUTER &&
        (zmq_setsockopt(s, ZMQ_ROUTER_MANDATORY, &one, sizeof one) != 0 ||
         zmq_setsockopt(s, ZMQ_HANDSHAKE_IVL, &handshake, sizeof handshake) != 0)) {
        return -1;
    }
    return 0;
}

/* CURVE: a server with its secret key under the ZAP domain "asgd", or a
 * client of the server's public key with its own pair. */
static int s_curve(void *s, const net_auth *a, bool server)
{
    if (server) {
        int one = 1;
        return zmq_setsockopt(s, ZMQ_CURVE_SERVER, &one, sizeof one) != 0 ||
               zmq_setsockopt(s, ZMQ_CURVE_SECRETKEY, a->secret_key, AUTH_Z85_LEN) != 0 ||
               zmq_setsockopt(s, ZMQ_ZAP_DOMAIN, "asgd", 4) != 0 ? -1 : 0;
    }
    return zmq_setsockopt(s, ZMQ_CURVE_SERVERKEY, a->server_public, AUTH_Z85_LEN) != 0 ||
           zmq_setsockopt(s, ZMQ_CURVE_PUBLICKEY, a->public_key, AUTH_Z85_LEN) != 0 ||
           zmq_setsockopt(s, ZMQ_CURVE_SECRETKEY, a->secret_key, AUTH_Z85_LEN) != 0 ? -1 : 0;
}

static void *s_socket(void *ctx, int type, const char *endpoint, const net_auth *auth,
                      int64_t max_message, bool bind, error *err)
{
    void *s = zmq_socket(ctx, type);
    if (!s) {
        error_set(err, ERROR_RUNTIME, "zmq_socket: %s", zmq_strerror(zmq_errno()));
        return NULL;
    }
    if (s_options(s, type, max_message) != 0 || (auth && s_curve(s, auth, bind) != 0)) {
        error_set(err, ERROR_RUNTIME, "zmq_setsockopt: %s", zmq_strerror(zmq_errno()));
        zmq_close(s);
        return NULL;
    }
    int rc = bind ? zmq_bind(s, endpoint) : zmq_connect(s, endpoint);
    if (rc != 0) {
        error_set(err, ERROR_RUNTIME, "%s %s: %s", bind ? "cannot bind" : "cannot connect to",
                  endpoint, zmq_strerror(zmq_errno()));
        zmq_close(s);
        return NULL;
    }
    return s;
}

void *net_router(void *ctx, const char *endpoint, const net_auth *auth, int64_t max_message,
                 error *err)
{
    return s_socket(ctx, ZMQ_ROUTER, endpoint, auth, max_message, true, err);
}

void *net_dealer(void *ctx, const char *endpoint, const net_auth *auth, error *err)
{
    return s_socket(ctx, ZMQ_DEALER, endpoint, auth, 0, false, err);
}

void net_pending_init(net_pending *p)
{
    pthread_condattr_t monotonic;   /* a settle's limit on a clock nobody sets */
    pthread_condattr_init(&monotonic);
    pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->idle, &monotonic);
    pthread_condattr_destroy(&monotonic);
    p->count = 0;
}

void net_pending_destroy(net_pending *p)
{
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->idle);
}

static void s_pending_add(net_pending *p, long delta)
{
    pthread_mutex_lock(&p->lock);
    p->count += delta;
    if (p->count == 0) {
        pthread_cond_broadcast(&p->idle);
    }
    pthread_mutex_unlock(&p->lock);
}

/* Called by ZeroMQ's I/O thread once a zero-copy payload is sent. */
static void s_release(void *data, void *hint)
{
    (void)data;
    s_pending_add(hint, -1);
}

/* wait: 0, or ZMQ_DONTWAIT: the first frame fails at once (EAGAIN) when
 * the peer's queue is full; once it is taken, so is the rest. */
static long s_send(void *socket, const zmq_msg_t *identity, const wire_header *h,
                   const void *payload, size_t payload_bytes, net_pending *pending, int wait)
{
    long sent = 0;
    bool has_payload = payload != NULL;
    if (identity) {
        zmq_msg_t id;
        zmq_msg_init(&id);
        zmq_msg_copy(&id, (zmq_msg_t *)identity);
        if (zmq_msg_send(&id, socket, ZMQ_SNDMORE | wait) < 0) {
            zmq_msg_close(&id);
            return -1;
        }
    }
    uint8_t head[WIRE_HEADER_SIZE];
    wire_encode(head, h);
    if (zmq_send(socket, head, sizeof head, (has_payload ? ZMQ_SNDMORE : 0) | wait) < 0) {
        return -1;
    }
    sent += (long)sizeof head;
    if (!has_payload) {
        return sent;
    }
    zmq_msg_t body;
    if (pending) {
        s_pending_add(pending, 1);
        if (zmq_msg_init_data(&body, (void *)payload, payload_bytes, s_release, pending) != 0) {
            s_pending_add(pending, -1);
            return -1;
        }
    } else {
        if (zmq_msg_init_size(&body, payload_bytes) != 0) {
            return -1;
        }
        memcpy(zmq_msg_data(&body), payload, payload_bytes);
    }
    if (zmq_msg_send(&body, socket, wait) < 0) {
        zmq_msg_close(&body);   /* releases the payload (and the pending count) */
        return -1;
    }
    return sent + (long)payload_bytes;
}

long net_send(void *socket, const zmq_msg_t *identity, const wire_header *h,
              const void *payload, size_t payload_bytes, net_pending *pending)
{
    /* a ROUTER's reply never waits */
    return s_send(socket, identity, h, payload, payload_bytes, pending,
                  identity ? ZMQ_DONTWAIT : 0);
}

long net_try_send(void *socket, const wire_header *h, const void *payload,
                  size_t payload_bytes, net_pending *pending)
{
    return s_send(socket, NULL, h, payload, payload_bytes, pending, ZMQ_DONTWAIT);
}

int net_recv(void *socket, net_msg *m, long timeout_ms)
{
    m->count = 0;
    m->dropped = 0;
    m->bytes = 0;
    m->user[0] = '\0';
    zmq_pollitem_t item = {.socket = socket, .events = ZMQ_POLLIN};
    int rc = zmq_poll(&item, 1, timeout_ms);
    if (rc <= 0) {
        return rc < 0 && zmq_errno() != EINTR ? -1 : 0;
    }
    for (;;) {
        zmq_msg_t f;
        zmq_msg_init(&f);
        while (zmq_msg_recv(&f, socket, 0) < 0) {
            if (zmq_errno() != EINTR) {
                zmq_msg_close(&f);
                net_msg_close(m);
                return -1;
            }
        }
        m->bytes += zmq_msg_size(&f);
        bool more = zmq_msg_more(&f);
        const char *user = m->user[0] ? NULL : zmq_msg_gets(&f, "User-Id");
        if (user) {
            snprintf(m->user, sizeof m->user, "%s", user);
        }
        if (m->count < NET_MAX_FRAMES) {
            zmq_msg_init(&m->frames[m->count]);
            zmq_msg_move(&m->frames[m->count++], &f);
        } else {
            m->dropped++;
        }
        zmq_msg_close(&f);
        if (!more) {
            return 1;
        }
    }
}

void net_msg_close(net_msg *m)
{
    for (int i = 0; i < m->count; i++) {
        zmq_msg_close(&m->frames[i]);
    }
    m->count = 0;
}

int net_settle(net_pending *p, double seconds)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    double whole = floor(seconds), ns = (double)until.tv_nsec + (seconds - whole) * 1e9;
    until.tv_sec += (time_t)whole + (time_t)(ns >= 1e9);
    until.tv_nsec = (long)(ns >= 1e9 ? ns - 1e9 : ns);
    int rc = 0;
    pthread_mutex_lock(&p->lock);
    while (p->count > 0 && rc == 0) {
        rc = pthread_cond_timedwait(&p->idle, &p->lock, &until) == ETIMEDOUT && p->count > 0
                 ? -1 : 0;
    }
    pthread_mutex_unlock(&p->lock);
    return rc;
}

void net_endpoint(char *buf, size_t n, const char *address, bool for_bind)
{
    if (strncmp(address, "ipc://", 6) == 0 || strncmp(address, "tcp://", 6) == 0 ||
        strncmp(address, "inproc://", 9) == 0) {
        snprintf(buf, n, "%s", address);
        return;
    }
    const char *colon = strrchr(address, ':');
    if (!for_bind && colon && (size_t)(colon - address) == 9 &&
        strncmp(address, "localhost", 9) == 0) {   /* as a shard binds it: with IPv6 on,
                                                    * localhost could resolve to ::1 */
        snprintf(buf, n, "tcp://127.0.0.1%s", colon);
        return;
    }
    if (!for_bind || !colon) {
        snprintf(buf, n, "tcp://%s", address);
        return;
    }
    char host[256], bare[256];
    snprintf(host, sizeof host, "%.*s", (int)(colon - address), address);
    size_t len = strlen(host);   /* [addr]: an IPv6 address, written so before a port */
    snprintf(bare, sizeof bare, "%.*s", (int)(len > 1 && host[0] == '[' &&
                                               host[len - 1] == ']' ? len - 2 : len),
             host + (len > 1 && host[0] == '[' && host[len - 1] == ']'));
    struct in_addr a4;
    struct in6_addr a6;
    bool literal = inet_pton(AF_INET, bare, &a4) == 1 || inet_pton(AF_INET6, bare, &a6) == 1;
    snprintf(buf, n, "tcp://%s%s",
             strcmp(host, "localhost") == 0 ? "127.0.0.1" : literal ? host : "*", colon);
}

bool net_local_only(const char *endpoint)
{
    if (strncmp(endpoint, "ipc://", 6) == 0 || strncmp(endpoint, "inproc://", 9) == 0) {
        return true;
    }
    const char *host = strncmp(endpoint, "tcp://", 6) == 0 ? endpoint + 6 : endpoint;
    return strncmp(host, "127.", 4) == 0 || strncmp(host, "localhost:", 10) == 0 ||
           strncmp(host, "[::1]:", 6) == 0;
}

/* A socket bound to host:port (0: any), kept open; -1 if it cannot be. */
/* host's IPv4 address into a: a literal, or a name's first (localhost:
 * 127.0.0.1, as net_endpoint binds it); false when it has none. */
static bool s_ipv4(const char *host, struct in_addr *a)
{
    if (strcmp(host, "localhost") == 0) {
        host = "127.0.0.1";
    }
    if (inet_pton(AF_INET, host, a) == 1) {
        return true;
    }
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *found;
    if (getaddrinfo(host, NULL, &hints, &found) != 0) {
        return false;
    }
    *a = ((const struct sockaddr_in *)found->ai_addr)->sin_addr;
    freeaddrinfo(found);
    return true;
}

static int s_probe(const char *host, int port, int *bound)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    socklen_t len = sizeof a;
    if (fd < 0 || !s_ipv4(host, &a.sin_addr) ||
        bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
        if (fd >= 0) {
            close(fd);
        }
        return -1;
    }
    *bound = ntohs(a.sin_port);
    return fd;
}

/* Whether a socket can listen at a (with SO_REUSEADDR, as ZeroMQ binds);
 * errno tells why not. */
static bool s_listens(const struct sockaddr *a, socklen_t len)
{
    int fd = socket(a->sa_family, SOCK_STREAM, 0), on = 1;
    bool ok = fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) == 0 &&
              bind(fd, a, len) == 0 && listen(fd, 1) == 0;
    int saved = errno;
    if (fd >= 0) {
        close(fd);
    }
    errno = saved;
    return ok;
}

/* Where name resolves: 1 to an address of this host, 0 to others only
 * (the first of them into what), -1 nowhere (the resolver's reason into
 * what). */
static int s_name_here(const char *name, char *what, size_t n)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *found;
    int rc = getaddrinfo(name, NULL, &hints, &found);
    if (rc != 0) {
        snprintf(what, n, "%s", gai_strerror(rc));
        return -1;
    }
    bool here = false;
    char first[INET6_ADDRSTRLEN] = "";
    for (const struct addrinfo *a = found; a && !here; a = a->ai_next) {
        here = s_listens(a->ai_addr, a->ai_addrlen);   /* port 0: the address alone */
        if (!first[0]) {
            const void *in = a->ai_family == AF_INET
                                 ? (const void *)&((struct sockaddr_in *)a->ai_addr)->sin_addr
                                 : (const void *)&((struct sockaddr_in6 *)a->ai_addr)->sin6_addr;
            inet_ntop(a->ai_family, in, first, sizeof first);
        }
    }
    freeaddrinfo(found);
    snprintf(what, n, "%s", first);
    return here;
}

bool net_name_elsewhere(const char *address, char *why, size_t n)
{
    const char *colon = strrchr(address, ':');
    if (strstr(address, "://") || !colon || address[0] == '[') {
        return false;   /* ipc, or an IPv6 address: no name */
    }
    char name[256], first[256];
    snprintf(name, sizeof name, "%.*s", (int)(colon - address), address);
    struct in_addr a4;
    if (strcmp(name, "*") == 0 || strcmp(name, "localhost") == 0 ||
        inet_pton(AF_INET, name, &a4) == 1) {
        return false;
    }
    /* not resolved: not yet known (a Kubernetes service's record comes late) */
    if (s_name_here(name, first, sizeof first) != 0) {
        return false;
    }
    snprintf(why, n, "%s is %s, no address of this host", name, first);
    return true;
}

bool net_can_listen(const char *host, int port, char *why, size_t n)
{
    char bare[256];
    size_t len = strlen(host);
    bool brackets = len > 1 && host[0] == '[' && host[len - 1] == ']';
    snprintf(bare, sizeof bare, "%.*s", (int)(brackets ? len - 2 : len), host + brackets);
    if (!brackets && strchr(bare, ':')) {   /* HOST:PORT could not be told apart */
        snprintf(why, n, "an IPv6 address goes in brackets ([%s])", bare);
        return false;
    }
    struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port)};
    struct sockaddr *a = (struct sockaddr *)&a4;
    socklen_t alen = sizeof a4;
    if (strcmp(bare, "localhost") == 0) {
        a4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    } else if (inet_pton(AF_INET6, bare, &a6.sin6_addr) == 1) {
        a = (struct sockaddr *)&a6;
        alen = sizeof a6;
    } else if (inet_pton(AF_INET, bare, &a4.sin_addr) != 1) {
        int here = s_name_here(bare, why, n);   /* workers would connect elsewhere */
        if (here != 1) {
            if (here == 0) {
                snprintf(why, n, "it resolves to no address of this host");
            }
            return false;
        }
        a4.sin_addr.s_addr = htonl(INADDR_ANY);   /* a name binds every interface */
    }
    if (!s_listens(a, alen)) {
        snprintf(why, n, "%s%s", errno == EADDRNOTAVAIL ? "not an address of this host: " : "",
                 strerror(errno));
        return false;
    }
    return true;
}

/* The first port of the kernel's ephemeral range (32768 where unreadable). */
static int s_ephemeral_low(void)
{
    int low = 32768, high;
    FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
    if (f) {
        if (fscanf(f, "%d %d", &low, &high) != 2) {
            low = 32768;
        }
        fclose(f);
    }
    return low;
}

int net_free_ports(const char *host, int *ports, int n)
{
    int *held = malloc((size_t)(n > 0 ? n : 1) * sizeof *held);
    if (!held) {
        return -1;
    }
    /* every probe stays bound until all are chosen: no port twice */
    int got = 0, span = s_ephemeral_low() - NET_PORT_LOW;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    rng r;   /* jobs started at once draw apart */
    rng_seed(&r, (uint64_t)now.tv_nsec ^ ((uint64_t)getpid() << 32));
    for (int tries = 0; got < n && span >= 1000 && tries < 100 * n; tries++) {
        int port = NET_PORT_LOW + (int)rng_below(&r, (uint64_t)span);
        if ((held[got] = s_probe(host, port, &ports[got])) >= 0) {
            got++;
        }
    }
    while (got < n && (held[got] = s_probe(host, 0, &ports[got])) >= 0) {
        got++;
    }
    for (int i = 0; i < got; i++) {
        close(held[i]);
    }
    free(held);
    return got == n ? 0 : -1;
}
