/* shm.c: shared segments between a client and a shard on one host. */
#define _GNU_SOURCE
#include "transport/shm.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/stop.h"
#include "transport/wire.h"

_Static_assert(SHM_ATTACH_SIZE == WIRE_ATTACH_SIZE, "an ATTACH carries one segment's name");

#define SHM_MAGIC "ASGDSHM1"
#define SHM_HEADER 64          /* magic 8, n 8, token 16, released 4, the rest 0 */
#define SHM_SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)

static size_t s_area(uint64_t n)
{
    return ((size_t)n * sizeof(float) + 63) / 64 * 64;
}

size_t shm_bytes(uint64_t n)
{
    return SHM_HEADER + 2 * s_area(n);
}

/* Points s's areas and counter into its mapping. */
static void s_layout(shm_segment *s)
{
    uint8_t *b = s->base;
    s->released = (_Atomic uint32_t *)(b + 32);
    s->reply = (float *)(b + SHM_HEADER);
    s->push = (float *)(b + SHM_HEADER + s_area(s->n));
}

int shm_create(shm_segment *s, uint64_t n, error *err)
{
    memset(s, 0, sizeof *s);
    s->n = n;
    s->bytes = shm_bytes(n);
    s->owner = true;
    s->fd = memfd_create("asgd-segment", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (s->fd < 0 || ftruncate(s->fd, (off_t)s->bytes) < 0 ||
        fcntl(s->fd, F_ADD_SEALS, SHM_SEALS) < 0 ||
        getrandom(s->token, sizeof s->token, 0) != (ssize_t)sizeof s->token) {
        int e = errno;
        shm_close(s);
        return error_set(err, ERROR_RUNTIME, "shared segment: %s", strerror(e));
    }
    s->base = mmap(NULL, s->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
    if (s->base == MAP_FAILED) {
        int e = errno;
        s->base = NULL;
        shm_close(s);
        return error_set(err, ERROR_RUNTIME, "shared segment: %s", strerror(e));
    }
    uint8_t *b = s->base;
    memcpy(b, SHM_MAGIC, 8);
    memcpy(b + 8, &n, sizeof n);
    memcpy(b + 16, s->token, sizeof s->token);
    s_layout(s);
    snprintf(s->path, sizeof s->path, "/proc/%d/fd/%d", (int)getpid(), s->fd);
    return 0;
}

void shm_attach_payload(const shm_segment *s, uint8_t out[SHM_ATTACH_SIZE])
{
    memset(out, 0, SHM_ATTACH_SIZE);
    memcpy(out, s->path, strlen(s->path));
    memcpy(out + SHM_PATH_MAX, s->token, SHM_TOKEN_SIZE);
}

static long s_futex(_Atomic uint32_t *addr, int op, uint32_t val, const struct timespec *t)
{
    return syscall(SYS_futex, (uint32_t *)addr, op, val, t, NULL, 0);
}

int shm_wait_released(shm_segment *s, double timeout, error *err)
{
    const struct timespec slice = {.tv_nsec = 100000000};   /* 0.1 s: a stop is seen */
    for (double waited = 0;;) {
        uint32_t released = atomic_load_explicit(s->released, memory_order_acquire);
        if (released == s->pushed) {
            return 0;
        }
        if (stop_requested()) {
            return error_set(err, ERROR_RUNTIME, "interrupted");
        }
        if (waited >= timeout) {
            return error_set(err, ERROR_RUNTIME, "the shard did not take a push from the "
                             "shared segment within %g s ([cluster] timeout)", timeout);
        }
        /* sleeps only while the count is still what was read */
        if (s_futex(s->released, FUTEX_WAIT, released, &slice) < 0 && errno == ETIMEDOUT) {
            waited += 0.1;
        }
    }
}

void shm_pushed(shm_segment *s)
{
    s->pushed++;
}

/* Whether path is /proc/PID/fd/FD, digits only. */
static bool s_proc_fd_path(const char *path)
{
    int pid, fd, end = 0;
    return strncmp(path, "/proc/", 6) == 0 &&
           strspn(path + 6, "0123456789/fd") == strlen(path + 6) &&   /* no sign, no space */
           sscanf(path, "/proc/%9d/fd/%9d%n", &pid, &fd, &end) == 2 && path[end] == '\0' &&
           pid > 0 && fd >= 0;
}

int shm_attach(shm_segment *s, const uint8_t payload[SHM_ATTACH_SIZE], uint64_t n,
               const char **why)
{
    memset(s, 0, sizeof *s);
    s->n = n;
    s->bytes = shm_bytes(n);
    if (!memchr(payload, '\0', SHM_PATH_MAX)) {
        *why = "segment path not terminated";
        return -1;
    }
    memcpy(s->path, payload, SHM_PATH_MAX);
    memcpy(s->token, payload + SHM_PATH_MAX, SHM_TOKEN_SIZE);
    if (!s_proc_fd_path(s->path)) {
        *why = "segment path is not /proc/PID/fd/FD";
        return -1;
    }
    /* a memfd's and nothing else (a peer names any fd of any process
     * here: a FIFO held the shard in open, a device was opened as the
     * shard's user), opened without blocking or becoming a terminal */
    char target[64];
    ssize_t len = readlink(s->path, target, sizeof target - 1);
    if (len < 0) {
        *why = "segment cannot be opened (another host?)";
        return -1;
    }
    target[len] = '\0';
    if (strncmp(target, "/memfd:asgd-segment", 19) != 0) {
        *why = "segment is not one of asgd's shared memory files";
        return -1;
    }
    int fd = open(s->path, O_RDWR | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        *why = "segment cannot be opened (another host?)";
        return -1;
    }
    /* what was opened, by this process's own fd: the peer could have put
     * another file under its fd's number between the look and the open */
    char own[64];
    snprintf(own, sizeof own, "/proc/self/fd/%d", fd);
    len = readlink(own, target, sizeof target - 1);
    target[len > 0 ? len : 0] = '\0';
    if (strncmp(target, "/memfd:asgd-segment", 19) != 0) {
        close(fd);
        *why = "segment is not one of asgd's shared memory files";
        return -1;
    }
    struct stat st;
    int seals = fcntl(fd, F_GET_SEALS);
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
        *why = "segment is not a file of this user";
    } else if (seals < 0 || (seals & SHM_SEALS) != SHM_SEALS) {
        *why = "segment is not sealed at its size";
    } else if ((size_t)st.st_size != s->bytes) {
        *why = "segment is not the size of this shard's part";
    } else {
        s->base = mmap(NULL, s->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (s->base == MAP_FAILED) {
            s->base = NULL;
            *why = "segment cannot be mapped";
        }
    }
    close(fd);
    if (!s->base) {
        return -1;
    }
    uint8_t *b = s->base;
    uint64_t made_for;
    memcpy(&made_for, b + 8, sizeof made_for);
    if (memcmp(b, SHM_MAGIC, 8) != 0 || made_for != n ||
        memcmp(b + 16, s->token, SHM_TOKEN_SIZE) != 0) {
        *why = "segment's header does not carry the token";
        shm_close(s);
        return -1;
    }
    s_layout(s);
    return 0;
}

void shm_release(shm_segment *s)
{
    atomic_fetch_add_explicit(s->released, 1, memory_order_release);
    s_futex(s->released, FUTEX_WAKE, 1, NULL);
}

void shm_close(shm_segment *s)
{
    if (s->base) {
        munmap(s->base, s->bytes);
    }
    if (s->owner && s->fd >= 0) {
        close(s->fd);
    }
    memset(s, 0, sizeof *s);
}
