/* auth.c: CURVE key files, the allow-list and the ZAP handler. */
#define _XOPEN_SOURCE 700   /* S_ISVTX */
#include "transport/auth.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <zmq.h>

/* NAME.key (public) or NAME.key_secret (both keys, mode 0600). */
static int s_write_cert(const char *dir, const char *name, const char *pub, const char *sec,
                        error *err)
{
    char path[4200], date[32];
    snprintf(path, sizeof path, "%s/%s.key%s", dir, name, sec ? "_secret" : "");
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S", &tm);
    /* a new file only: an old one kept its mode (a secret left readable
     * by all), and a link put there led the secret wherever it pointed */
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, sec ? 0600 : 0644);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        if (fd >= 0) {
            close(fd);
        }
        return errno == EEXIST
                   ? error_set(err, ERROR_USAGE, "%s: exists already (keys are written only as "
                               "new files: remove it, or give another folder)", path)
                   : error_set(err, ERROR_RUNTIME, "%s: cannot write: %s", path, strerror(errno));
    }
    fprintf(f, "#   ****  Generated on %s by asgd  ****\n"
            "#   ZeroMQ CURVE %s Certificate\n#   %s\n\nmetadata\ncurve\n"
            "    public-key = \"%s\"\n", date, sec ? "**Secret**" : "Public",
            sec ? "DO NOT PROVIDE THIS FILE TO OTHER USERS nor change its permissions."
                : "Exchange securely, or check its contents after exchange.", pub);
    if (sec) {
        fprintf(f, "    secret-key = \"%s\"\n", sec);
    }
    if (fclose(f) != 0) {
        return error_set(err, ERROR_RUNTIME, "%s: cannot write: %s", path, strerror(errno));
    }
    return 0;
}

static int s_make_pair(const char *dir, const char *name, error *err)
{
    char pub[AUTH_Z85_LEN + 1], sec[AUTH_Z85_LEN + 1];
    if (zmq_curve_keypair(pub, sec) != 0) {
        return error_set(err, ERROR_RUNTIME, "cannot make CURVE keys: %s (is libzmq built "
                         "with libsodium?)", zmq_strerror(zmq_errno()));
    }
    return s_write_cert(dir, name, pub, NULL, err) < 0 || s_write_cert(dir, name, pub, sec, err) < 0
               ? -1 : 0;
}

/* Neither of NAME's files is there, nor a link by their names. */
static int s_check_new(const char *dir, const char *name, error *err)
{
    for (int sec = 0; sec < 2; sec++) {
        char path[4200];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s.key%s", dir, name, sec ? "_secret" : "");
        if (lstat(path, &st) == 0) {
            return error_set(err, ERROR_USAGE, "%s: exists already (keys are written only as "
                             "new files: remove it, or give another folder)", path);
        }
    }
    return 0;
}

int auth_make_keys(const char *dir, int workers, error *err)
{
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        return error_set(err, ERROR_RUNTIME, "%s: cannot make the folder: %s", dir,
                         strerror(errno));
    }
    struct stat st;
    char server[4200];
    snprintf(server, sizeof server, "%s/server.key", dir);
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        return error_set(err, ERROR_USAGE, "%s: not a folder", dir);
    }
    /* whoever may write there may swap the server's public key for theirs */
    if (st.st_uid != geteuid()) {
        return error_set(err, ERROR_USAGE, "%s: another user owns this folder: they could "
                         "replace the keys; give one of yours", dir);
    }
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {   /* sticky too: others may add keys there */
        return error_set(err, ERROR_USAGE, "%s: others may write in this folder (mode %03o): "
                         "they could add or replace keys; give a private one", dir,
                         (unsigned)(st.st_mode & 07777));
    }
    if (access(server, F_OK) == 0) {
        /* new keys over old ones (secrets too) locked out every process
         * that holds the old, and fewer workers left old ones beside */
        return error_set(err, ERROR_USAGE, "%s: holds keys already (server.key); remove them "
                         "or give another folder", dir);
    }
    /* every file checked before any is written: a refusal leaves no half set */
    for (int pass = 0; pass < 2; pass++) {
        for (int w = -2; w < workers; w++) {
            char name[AUTH_NAME_MAX];   /* the server, the evaluator, then each worker */
            if (w < 0) {
                snprintf(name, sizeof name, "%s", w == -2 ? "server" : "evaluator");
            } else {
                snprintf(name, sizeof name, "worker-%d", w);
            }
            if (pass == 0 ? s_check_new(dir, name, err) < 0 : s_make_pair(dir, name, err) < 0) {
                return -1;
            }
        }
    }
    return 0;
}

/* The value of `field = "Z85"` on line, checked, into out; 1 when the
 * line holds field, 0 when not, -1 when it holds it badly. */
static int s_field(const char *line, const char *field, char out[AUTH_Z85_LEN + 1])
{
    while (*line == ' ' || *line == '\t') {
        line++;
    }
    size_t n = strlen(field);
    if (strncmp(line, field, n) != 0) {
        return 0;
    }
    const char *open = strchr(line + n, '"');
    const char *close = open ? strchr(open + 1, '"') : NULL;
    unsigned char raw[32];
    if (!close || close - open - 1 != AUTH_Z85_LEN) {
        return -1;
    }
    memcpy(out, open + 1, AUTH_Z85_LEN);
    out[AUTH_Z85_LEN] = '\0';
    return zmq_z85_decode(raw, out) ? 1 : -1;
}

/* Whether the folder holding the file at path is one others (group or
 * anyone) may write in, or cannot be told. */
static bool s_open_folder(const char *path)
{
    char dir[4400];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) {
        *(slash == dir ? slash + 1 : slash) = '\0';
    } else {
        snprintf(dir, sizeof dir, ".");
    }
    struct stat st;
    return stat(dir, &st) != 0 || (st.st_mode & (S_IWGRP | S_IWOTH));
}

/* Reads NAME.key or NAME.key_secret: its public key, and its secret key
 * when secret is not NULL. */
static int s_read_cert(const char *path, char *pub, char *secret, error *err)
{
    /* never blocking in open (a FIFO by a key's name held the shard for
     * good); a link is followed (Kubernetes mounts a Secret's keys so) */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        return error_set(err, ERROR_USAGE, "%s: cannot open: %s", path, strerror(errno));
    }
    struct stat st;
    const char *why = fstat(fd, &st) != 0 ? "cannot tell what it is"
                      : !S_ISREG(st.st_mode) ? "not a file"
                      /* another user's key in a folder others may write in: anyone
                       * could have put it there, and it was admitted as the job's
                       * (in a private folder its owner put it: keys a user made for
                       * a container that runs as root, a teammate's) */
                      : st.st_uid != geteuid() && st.st_uid != 0 && s_open_folder(path)
                          ? "another user owns it, in a folder others may write in: they "
                            "may have put it there"
                      : st.st_mode & (S_IWGRP | S_IWOTH)
                          ? "others may write it: they could put their key in it"
                      : secret && (st.st_mode & S_IRWXO)
                          ? "a secret others may read (chmod 600 it)" : NULL;
    FILE *f = why ? NULL : fdopen(fd, "r");
    if (!f) {
        close(fd);
        return error_set(err, ERROR_USAGE, "%s: %s", path, why ? why : strerror(errno));
    }
    char line[512];
    int lineno = 0, got = 0, rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        lineno++;
        int p = s_field(line, "public-key", pub);
        int s = secret ? s_field(line, "secret-key", secret) : 0;
        if (p < 0 || s < 0) {
            rc = error_set(err, ERROR_USAGE, "%s:%d: not a Z85 CURVE key of %d characters",
                           path, lineno, AUTH_Z85_LEN);
        }
        got |= (p > 0) | (s > 0) << 1;
    }
    fclose(f);
    if (rc == 0 && got != (secret ? 3 : 1)) {
        rc = error_set(err, ERROR_USAGE, "%s: no %s in this certificate", path,
                       got & 1 ? "secret-key" : "public-key");
    }
    return rc;
}

/* A name fit for a file and a User-Id. */
static bool s_plain_name(const char *name, size_t len)
{
    if (len == 0 || len >= AUTH_NAME_MAX) {
        return false;
    }
    for (size_t i = 0; i < len; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.')) {
            return false;
        }
    }
    return true;
}

/* Every NAME.key in dir but server's: the clients a shard admits. */
static int s_load_clients(net_auth *a, const char *dir, error *err)
{
    DIR *d = opendir(dir);
    if (!d) {
        return error_set(err, ERROR_USAGE, "%s: cannot open the keys folder: %s", dir,
                         strerror(errno));
    }
    int rc = 0, cap = 0;
    struct dirent *ent;
    while (rc == 0 && (ent = readdir(d))) {
        size_t len = strlen(ent->d_name);
        if (len < 5 || strcmp(ent->d_name + len - 4, ".key") != 0 ||
            !s_plain_name(ent->d_name, len - 4) || strcmp(ent->d_name, "server.key") == 0) {
            continue;
        }
        if (a->nclients == cap) {
            cap = cap ? 2 * cap : 16;
            auth_client *grown = realloc(a->clients, (size_t)cap * sizeof *grown);
            if (!grown) {
                rc = error_set(err, ERROR_RUNTIME, "out of memory");
                break;
            }
            a->clients = grown;
        }
        auth_client *c = &a->clients[a->nclients];
        char path[4400], pub[AUTH_Z85_LEN + 1];
        snprintf(path, sizeof path, "%s/%s", dir, ent->d_name);
        snprintf(c->name, sizeof c->name, "%.*s", (int)(len - 4), ent->d_name);
        if ((rc = s_read_cert(path, pub, NULL, err)) == 0) {
            zmq_z85_decode(c->public_key, pub);
            a->nclients++;
        }
    }
    closedir(d);
    if (rc == 0 && a->nclients == 0) {
        rc = error_set(err, ERROR_USAGE, "%s: no client keys (NAME.key) to admit; make them "
                       "with `asgd keys %s`", dir, dir);
    }
    return rc;
}

int auth_load(net_auth *a, const char *dir, const char *self, error *err)
{
    memset(a, 0, sizeof *a);
    a->server = strcmp(self, "server") == 0;
    char path[4400];
    snprintf(path, sizeof path, "%s/server.key", dir);
    if (s_read_cert(path, a->server_public, NULL, err) < 0) {
        return -1;
    }
    snprintf(path, sizeof path, "%s/%s.key_secret", dir, self);
    if (s_read_cert(path, a->public_key, a->secret_key, err) < 0 ||
        (a->server && s_load_clients(a, dir, err) < 0)) {
        auth_free(a);
        return -1;
    }
    return 0;
}

void auth_free(net_auth *a)
{
    free(a->clients);
    memset(a, 0, sizeof *a);
}

const char *auth_admits(const net_auth *a, const unsigned char *key)
{
    for (int i = 0; i < a->nclients; i++) {
        if (memcmp(a->clients[i].public_key, key, 32) == 0) {
            return a->clients[i].name;
        }
    }
    return NULL;
}

struct auth_zap {
    void *socket;             /* REP on inproc://zeromq.zap.01 */
    const net_auth *auth;
    pthread_t thread;
    atomic_bool stop;
    atomic_long refused;
};

/* Answers one ZAP request (RFC 27): version, request id, domain, address,
 * identity, mechanism, credentials; 200 with the client's name as User-Id
 * when its key is admitted, 400 otherwise. */
static void s_answer(auth_zap *z)
{
    zmq_msg_t part[8];
    int n = 0, more = 1;
    while (more) {
        zmq_msg_t f;
        zmq_msg_init(&f);
        if (zmq_msg_recv(&f, z->socket, 0) < 0) {
            zmq_msg_close(&f);
            break;
        }
        more = zmq_msg_more(&f);
        if (n < 8) {
            zmq_msg_init(&part[n]);
            zmq_msg_move(&part[n++], &f);
        }
        zmq_msg_close(&f);
    }
    const char *name = NULL;
    if (n == 7 && zmq_msg_size(&part[5]) == 5 && memcmp(zmq_msg_data(&part[5]), "CURVE", 5) == 0 &&
        zmq_msg_size(&part[6]) == 32) {
        name = auth_admits(z->auth, zmq_msg_data(&part[6]));
    }
    if (!name) {
        atomic_fetch_add(&z->refused, 1);
    }
    zmq_send(z->socket, "1.0", 3, ZMQ_SNDMORE);
    if (n >= 2) {
        zmq_msg_send(&part[1], z->socket, ZMQ_SNDMORE);   /* the request id, moved */
    } else {
        zmq_send(z->socket, "", 0, ZMQ_SNDMORE);
    }
    zmq_send(z->socket, name ? "200" : "400", 3, ZMQ_SNDMORE);
    const char *text = name ? "OK" : "unknown key";
    zmq_send(z->socket, text, strlen(text), ZMQ_SNDMORE);
    zmq_send(z->socket, name ? name : "", name ? strlen(name) : 0, ZMQ_SNDMORE);
    zmq_send(z->socket, "", 0, 0);
    for (int i = 0; i < n; i++) {
        zmq_msg_close(&part[i]);
    }
}

static void *s_zap_thread(void *arg)
{
    auth_zap *z = arg;
    while (!atomic_load(&z->stop)) {
        zmq_pollitem_t item = {.socket = z->socket, .events = ZMQ_POLLIN};
        if (zmq_poll(&item, 1, 100) > 0) {
            s_answer(z);
        }
    }
    return NULL;
}

auth_zap *auth_zap_start(void *zmq_ctx, const net_auth *a, error *err)
{
    auth_zap *z = calloc(1, sizeof *z);
    if (!z) {
        error_set(err, ERROR_RUNTIME, "out of memory");
        return NULL;
    }
    z->auth = a;
    int zero = 0;
    z->socket = zmq_socket(zmq_ctx, ZMQ_REP);
    if (!z->socket || zmq_setsockopt(z->socket, ZMQ_LINGER, &zero, sizeof zero) != 0 ||
        zmq_bind(z->socket, "inproc://zeromq.zap.01") != 0 ||
        pthread_create(&z->thread, NULL, s_zap_thread, z) != 0) {
        error_set(err, ERROR_RUNTIME, "cannot start the CURVE authenticator: %s",
                  zmq_strerror(zmq_errno()));
        if (z->socket) {
            zmq_close(z->socket);
        }
        free(z);
        return NULL;
    }
    return z;
}

long auth_zap_refused(const auth_zap *z)
{
    return z ? atomic_load(&((auth_zap *)z)->refused) : 0;
}

void auth_zap_stop(auth_zap **pz)
{
    auth_zap *z = *pz;
    if (!z) {
        return;
    }
    atomic_store(&z->stop, true);
    pthread_join(z->thread, NULL);
    zmq_close(z->socket);
    free(z);
    *pz = NULL;
}
