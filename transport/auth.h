/* auth.h: CurveZMQ for asgd's sockets (cluster.auth = curve).
 *
 * Keys live in one folder, a pair per role, in pyzmq's certificate format
 * (zmq.auth.load_certificate reads them): NAME.key holds the public key,
 * NAME.key_secret (mode 0600) both. The names are the roles: "server" for
 * every shard, "evaluator", and "worker-0" ... "worker-N-1".
 *
 * A shard is a CURVE server with server's secret key and answers the ZAP
 * requests of its own context (RFC 27): a client whose public key is one of
 * the folder's NAME.key files is admitted as NAME, the User-Id its every
 * message then carries; any other key, or a client that does not speak
 * CURVE, gets no connection: nothing it sends reaches the shard and nothing
 * comes back. Clients hold the server's public key and their own pair, so
 * a shard is authenticated to them too, and every message is encrypted. */
#ifndef ASGD_AUTH_H
#define ASGD_AUTH_H

#include <stdatomic.h>
#include <stdbool.h>

#include "core/error.h"

#define AUTH_NAME_MAX 64
#define AUTH_Z85_LEN 40   /* a 32-byte key in Z85 */

typedef struct auth_client {
    char name[AUTH_NAME_MAX];
    unsigned char public_key[32];
} auth_client;

/* What one process needs: the server's public key, its own pair and, in a
 * shard, the clients it admits. */
typedef struct net_auth {
    char server_public[AUTH_Z85_LEN + 1];
    char public_key[AUTH_Z85_LEN + 1];
    char secret_key[AUTH_Z85_LEN + 1];
    bool server;              /* this process serves (a shard) */
    auth_client *clients;     /* server: every NAME.key but server's */
    int nclients;
} net_auth;

/* Writes a fresh pair for server, evaluator and worker-0 .. worker-(workers
 * - 1) into dir (made, mode 0700, when missing). A dir that holds
 * server.key already, or is not a folder, is refused (ERROR_USAGE): new
 * keys over old ones lock out every process that holds them. */
int auth_make_keys(const char *dir, int workers, error *err);

/* Loads what role `self` ("server", "evaluator", "worker-K") needs from
 * dir; every file and key is checked, errors name the file and line. */
int auth_load(net_auth *a, const char *dir, const char *self, error *err);
void auth_free(net_auth *a);

/* The name of the client whose public key is key (32 bytes), or NULL. */
const char *auth_admits(const net_auth *a, const unsigned char *key);

/* The ZAP handler of a shard's context: a thread answering every CURVE
 * handshake from a's clients. Start it before the server socket binds;
 * stop it after that socket has closed. */
typedef struct auth_zap auth_zap;
auth_zap *auth_zap_start(void *zmq_ctx, const net_auth *a, error *err);
/* Handshakes refused so far (unknown keys). */
long auth_zap_refused(const auth_zap *z);
void auth_zap_stop(auth_zap **z);

#endif
