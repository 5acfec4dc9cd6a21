/* datacache.c: the decoded data sets in one file per host, mapped
 * read-only by every process that trains or evaluates (datacache.h). */
#include "core/datacache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#define CACHE_MAGIC "asgdDATA"
/* 2: normalize = none holds the raw bytes (0..255); a version-1 file made
 * under none holds byte / 255 and has the same key but for the version, so
 * it is never mapped again */
#define CACHE_VERSION 2u
#define CACHE_ALIGN 65536u   /* each set starts on a page, for any page size up to 64 KiB */
#define CACHE_KEEP_DAYS 14   /* a file unread this long goes when another is made */
#define CACHE_ASIDE_HOURS 1  /* a file being written this long ago was abandoned */
#define CACHE_LOCK_WAIT 600  /* seconds to wait for another process making the file */

/* The file: this header, then each set (x, n x dim floats, then y, n
 * int32) at its offset. Native byte order: the file never leaves its host. */
typedef struct cache_header {
    char magic[8];
    uint32_t version, header_crc;   /* header_crc: of the header with it zero */
    uint64_t key;                   /* what the sets were made from (s_key) */
    int64_t n[2];                   /* train, test */
    int32_t dim, classes;
    double mean, std;
    uint64_t offset[2], bytes[2];
    uint32_t crc[2];                /* of each set's bytes */
} cache_header;

/* FNV-1a, 64 bits. */
static uint64_t s_hash(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h = (h ^ b[i]) * 1099511628211ull;
    }
    return h;
}

static uint64_t s_hash_long(uint64_t h, long long v)
{
    return s_hash(h, &v, sizeof v);
}

/* The hash of what the sets are made from; -1 where a file is missing. */
static int s_key(const data_spec *s, uint64_t *key, error *err)
{
    char paths[4][4096];
    if (data_files(paths, s, err) < 0) {
        return -1;
    }
    uint64_t h = s_hash_long(14695981039346656037ull, CACHE_VERSION);
    h = s_hash_long(h, s->source);
    h = s_hash_long(h, s->train_size);
    h = s_hash_long(h, s->test_size);
    h = s_hash_long(h, s->normalize);
    for (int i = 0; i < 4; i++) {
        struct stat st;
        if (stat(paths[i], &st) != 0) {
            return error_set(err, ERROR_USAGE, "%s: %s", paths[i], strerror(errno));
        }
        h = s_hash(h, paths[i], strlen(paths[i]) + 1);
        h = s_hash_long(h, (long long)st.st_dev);
        h = s_hash_long(h, (long long)st.st_ino);
        h = s_hash_long(h, (long long)st.st_size);
        h = s_hash_long(h, (long long)st.st_mtim.tv_sec);
        h = s_hash_long(h, (long long)st.st_mtim.tv_nsec);
        /* a file rewritten in place with its time set back (touch -r,
         * cp -p) keeps its size and mtime, never its ctime: its cache
         * gave the old labels */
        h = s_hash_long(h, (long long)st.st_ctim.tv_sec);
        h = s_hash_long(h, (long long)st.st_ctim.tv_nsec);
    }
    *key = h;
    return 0;
}

/* The folder data.cache names; "" when off. */
static void s_folder(const data_spec *s, char *out, size_t n)
{
    const char *v = s->cache ? s->cache : "off";
    const char *env = getenv("ASGD_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    if (strcmp(v, "off") == 0) {
        snprintf(out, n, "%s", "");
    } else if (strcmp(v, "auto") != 0) {
        snprintf(out, n, "%s", v);
    } else if (env && env[0]) {
        snprintf(out, n, "%s", env);
    } else if (xdg && xdg[0] == '/') {
        snprintf(out, n, "%s/asgd", xdg);
    } else if (home && home[0] == '/' && strcmp(home, "/") != 0) {
        snprintf(out, n, "%s/.cache/asgd", home);
    } else {
        snprintf(out, n, "/tmp/asgd-cache-%lu", (unsigned long)geteuid());
    }
}

int datacache_path(const data_spec *s, char *path, size_t n, error *err)
{
    char folder[4096];
    uint64_t key;
    s_folder(s, folder, sizeof folder);
    bool file = s->source != DATA_SYNTHETIC && s->source != DATA_REGRESSION;
    if (!file || !folder[0]) {
        return error_set(err, ERROR_USAGE, "data.cache: %s", file ? "off" :
                         "generated data is not cached");
    }
    if (s_key(s, &key, err) < 0) {
        return -1;
    }
    snprintf(path, n, "%s/data-%016llx.bin", folder, (unsigned long long)key);
    return 0;
}

/* The folder and its parents, private to this user where made here; the
 * folder itself must be a folder of this user's that others may not
 * write in (there they could hold its lock for good, or put files of
 * theirs under its names): errno EPERM where it is not. */
static int s_make_folder(const char *path)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            if (mkdir(buf, 0700) != 0 && errno != EEXIST) {
                return -1;
            }
            *p = '/';
        }
    }
    struct stat st;
    if ((mkdir(buf, 0700) != 0 && errno != EEXIST) || lstat(buf, &st) != 0) {
        return -1;
    }
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
        errno = S_ISDIR(st.st_mode) ? EPERM : ENOTDIR;
        return -1;
    }
    return 0;
}

static uint32_t s_header_crc(cache_header h)
{
    h.header_crc = 0;
    return (uint32_t)crc32_z(0, (const Bytef *)&h, sizeof h);
}

static uint64_t s_align(uint64_t v)
{
    return (v + CACHE_ALIGN - 1) / CACHE_ALIGN * CACHE_ALIGN;
}

/* The header is whole and fits a file of `size` bytes. */
static bool s_header_sound(const cache_header *h, uint64_t key, uint64_t size)
{
    if (memcmp(h->magic, CACHE_MAGIC, 8) != 0 || h->version != CACHE_VERSION ||
        h->header_crc != s_header_crc(*h) || h->key != key || h->dim < 1 || h->classes < 1) {
        return false;
    }
    uint64_t end = CACHE_ALIGN;
    for (int k = 0; k < 2; k++) {
        uint64_t want = (uint64_t)h->n[k] * ((uint64_t)h->dim + 1) * 4;
        if (h->n[k] < 1 || h->n[k] > INT32_MAX || h->bytes[k] != want ||
            h->offset[k] != s_align(end)) {
            return false;
        }
        end = h->offset[k] + h->bytes[k];
    }
    return end == size;
}

/* Set k of the file, mapped read-only and checked against its CRC. */
static int s_map_set(dataset *d, int fd, const cache_header *h, int k)
{
    void *p = mmap(NULL, h->bytes[k], PROT_READ, MAP_SHARED, fd, (off_t)h->offset[k]);
    if (p == MAP_FAILED) {
        return -1;
    }
    if ((uint32_t)crc32_z(0, p, h->bytes[k]) != h->crc[k]) {
        munmap(p, h->bytes[k]);
        return -1;
    }
    d->n = (int)h->n[k];
    d->dim = h->dim;
    d->classes = h->classes;
    d->x = p;
    d->y = (int32_t *)(d->x + (size_t)d->n * (size_t)d->dim);
    d->mean = h->mean;
    d->std = h->std;
    d->mapped = h->bytes[k];
    return 0;
}

/* Maps the cache file at path when it is this user's and passes every
 * check; 0 when mapped, -1 when not (absent, or to be made again). */
static int s_map(dataset *train, dataset *test, const char *path, uint64_t key)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        return -1;
    }
    struct stat st;
    cache_header h;
    int rc = -1;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
        pread(fd, &h, sizeof h, 0) == (ssize_t)sizeof h &&
        s_header_sound(&h, key, (uint64_t)st.st_size) &&
        s_map_set(train, fd, &h, 0) == 0) {
        rc = s_map_set(test, fd, &h, 1);
        if (rc < 0) {
            dataset_free(train);
        }
    }
    if (rc == 0) {   /* used now, whatever the mount does with access times (s_evict) */
        const struct timespec times[2] = {{.tv_nsec = UTIME_NOW}, {.tv_nsec = UTIME_OMIT}};
        futimens(fd, times);
    }
    close(fd);
    return rc;
}

static int s_write_all(int fd, const void *p, size_t n)
{
    const char *b = p;
    while (n > 0) {
        ssize_t w = write(fd, b, n);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            return -1;
        }
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Writes the sets to path (aside, then renamed into place); -1 with errno. */
static int s_write(const dataset *train, const dataset *test, const char *path, uint64_t key)
{
    const dataset *sets[2] = {train, test};
    cache_header h = {.version = CACHE_VERSION, .key = key, .dim = train->dim,
                      .classes = train->classes, .mean = train->mean, .std = train->std};
    memcpy(h.magic, CACHE_MAGIC, 8);
    uint64_t end = CACHE_ALIGN;
    for (int k = 0; k < 2; k++) {
        size_t xb = (size_t)sets[k]->n * (size_t)sets[k]->dim * sizeof(float);
        size_t yb = (size_t)sets[k]->n * sizeof(int32_t);
        h.n[k] = sets[k]->n;
        h.offset[k] = s_align(end);
        h.bytes[k] = xb + yb;
        h.crc[k] = (uint32_t)crc32_z(crc32_z(0, (const Bytef *)sets[k]->x, xb),
                                     (const Bytef *)sets[k]->y, yb);
        end = h.offset[k] + h.bytes[k];
    }
    h.header_crc = s_header_crc(h);
    char aside[4300];
    snprintf(aside, sizeof aside, "%s.%ld.tmp", path, (long)getpid());
    unlink(aside);   /* a killed writer's of the same pid: a new file, this one's */
    int fd = open(aside, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        return -1;
    }
    int rc = s_write_all(fd, &h, sizeof h);
    for (int k = 0; k < 2 && rc == 0; k++) {
        size_t xb = (size_t)sets[k]->n * (size_t)sets[k]->dim * sizeof(float);
        rc = lseek(fd, (off_t)h.offset[k], SEEK_SET) < 0 ||
             s_write_all(fd, sets[k]->x, xb) < 0 ||
             s_write_all(fd, sets[k]->y, (size_t)sets[k]->n * sizeof(int32_t)) < 0 ? -1 : 0;
    }
    int saved = errno;
    if (close(fd) != 0 && rc == 0) {
        saved = errno;
        rc = -1;
    }
    if (rc == 0 && rename(aside, path) != 0) {
        saved = errno;
        rc = -1;
    }
    if (rc < 0) {
        unlink(aside);
        errno = saved;
    }
    return rc;
}

/* Whether name is data-*SUFFIX. */
/* Whether name is one of the cache's own: "data-" and a key of 16 hex
 * digits, ".bin", then suffix ("", ".lock", or ".PID.tmp" for ".tmp"):
 * never a file of the user's that happens to share a folder with them. */
static bool s_named(const char *name, const char *suffix)
{
    if (strncmp(name, "data-", 5) != 0 || strspn(name + 5, "0123456789abcdef") != 16 ||
        strncmp(name + 21, ".bin", 4) != 0) {
        return false;
    }
    const char *rest = name + 25;
    if (strcmp(suffix, ".tmp") == 0) {
        size_t digits = rest[0] == '.' ? strspn(rest + 1, "0123456789") : 0;
        return digits > 0 && strcmp(rest + 1 + digits, ".tmp") == 0;
    }
    return strcmp(rest, suffix) == 0;
}

/* Removes, besides `keep` and its lock: cache files nothing has mapped for
 * CACHE_KEEP_DAYS (with their locks), locks as old whose file was never
 * made (its data failed to load) and that no process holds, and files
 * written aside more than CACHE_ASIDE_HOURS ago (their writer was killed):
 * a sweep over many sizes must not fill the disk with copies. A process
 * still mapping a removed file keeps its pages. */
static void s_evict(const char *folder, const char *keep)
{
    DIR *d = opendir(folder);
    time_t now = time(NULL), cutoff = now - (time_t)CACHE_KEEP_DAYS * 86400;
    for (struct dirent *e = d ? readdir(d) : NULL; e; e = readdir(d)) {
        char path[4400];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", folder, e->d_name);
        if (strncmp(path, keep, strlen(keep)) == 0 || lstat(path, &st) != 0 ||
            !S_ISREG(st.st_mode)) {
            continue;
        }
        if (s_named(e->d_name, ".tmp")) {
            if (st.st_mtime < now - CACHE_ASIDE_HOURS * 3600) {
                unlink(path);
            }
        } else if (s_named(e->d_name, "") && st.st_atime < cutoff) {
            unlink(path);
            strncat(path, ".lock", sizeof path - strlen(path) - 1);
            unlink(path);
        } else if (s_named(e->d_name, ".lock") && st.st_mtime < cutoff) {
            path[strlen(path) - 5] = '\0';
            bool orphan = access(path, F_OK) != 0;
            strcat(path, ".lock");
            int fd = orphan ? open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC) : -1;
            if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0) {   /* nobody making it */
                unlink(path);
            }
            if (fd >= 0) {
                close(fd);
            }
        }
    }
    if (d) {
        closedir(d);
    }
}

/* Under the lock: the file another process made, or made here from a
 * private load. 1 when the sets came from the file, 0 when they are a
 * private copy (the file could not be written: why is on stderr). */
static int s_make(dataset *train, dataset *test, const data_spec *s, unsigned long seed,
                  const char *folder, const char *path, uint64_t key, error *err)
{
    if (s_map(train, test, path, key) == 0) {
        return 1;
    }
    if (data_load(train, test, s, seed, err) < 0) {
        return -1;
    }
    if (s_write(train, test, path, key) < 0) {
        fprintf(stderr, "asgd: data cache %s: %s; this process keeps its own copy of the "
                "data (data.cache = off says so quietly)\n", path, strerror(errno));
        return 0;
    }
    s_evict(folder, path);
    dataset mapped_train = {0}, mapped_test = {0};
    if (s_map(&mapped_train, &mapped_test, path, key) < 0) {
        return 0;
    }
    dataset_free(train);
    dataset_free(test);
    *train = mapped_train;
    *test = mapped_test;
    return 1;
}

/* Takes the cache file's lock on fd, waiting while another process makes
 * the file, at most CACHE_LOCK_WAIT seconds (one stopped while making it
 * held every other for good), and saying so; NULL, or why not. */
static const char *s_lock(int fd, const char *lock)
{
    for (double waited = 0;; waited += 0.05) {
        if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
            return NULL;
        }
        if (errno != EWOULDBLOCK && errno != EINTR) {
            return strerror(errno);
        }
        if (waited == 0) {
            fprintf(stderr, "asgd: data cache %s: another process is making it; waiting up to "
                    "%d s\n", lock, CACHE_LOCK_WAIT);
        }
        if (waited >= CACHE_LOCK_WAIT) {
            return "still held by the process making it";
        }
        nanosleep(&(struct timespec){.tv_nsec = 50000000}, NULL);
    }
}

int datacache_load(dataset *train, dataset *test, const data_spec *s, unsigned long seed,
                   error *err)
{
    memset(train, 0, sizeof *train);
    memset(test, 0, sizeof *test);
    char folder[4096], path[4200], lock[4300];
    uint64_t key;
    s_folder(s, folder, sizeof folder);
    error none = {0};
    if (datacache_path(s, path, sizeof path, &none) < 0 || s_key(s, &key, &none) < 0) {
        return data_load(train, test, s, seed, err);   /* not cached, or its error */
    }
    if (s_map(train, test, path, key) == 0) {
        return 0;
    }
    snprintf(lock, sizeof lock, "%s.lock", path);
    int fd = s_make_folder(folder) == 0 ?
             open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600) : -1;
    const char *why = fd < 0 ? (errno == EPERM ? "not a folder of this user's alone (others "
                                                 "may write in it, or another user owns it)"
                                               : strerror(errno))
                             : s_lock(fd, lock);
    if (why) {
        fprintf(stderr, "asgd: data cache %s: %s; this process keeps its own copy of the "
                "data\n", fd < 0 ? folder : lock, why);
        if (fd >= 0) {
            close(fd);
        }
        return data_load(train, test, s, seed, err);
    }
    int rc = s_make(train, test, s, seed, folder, path, key, err);
    close(fd);   /* and with it the lock */
    return rc < 0 ? -1 : 0;
}
