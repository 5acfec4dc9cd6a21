/* idx.c: reading IDX files (the MNIST format) through zlib. */
#include "core/idx.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <zlib.h>

static int s_read_exact(gzFile f, void *buf, size_t n)
{
    uint8_t *p = buf;
    while (n > 0) {
        unsigned chunk = n > (1u << 30) ? (1u << 30) : (unsigned)n;
        int got = gzread(f, p, chunk);
        if (got <= 0) {
            return -1;
        }
        p += got;
        n -= (size_t)got;
    }
    return 0;
}

/* How much of an IDX file to read: its header, the header and every data
 * byte checked but not kept, or all of it. */
enum idx_mode { IDX_HEADER, IDX_SCAN, IDX_LOAD };

static int s_idx_read(idx_file *out, const char *path, enum idx_mode mode, error *err);

int idx_read(idx_file *out, const char *path, error *err)
{
    return s_idx_read(out, path, IDX_LOAD, err);
}

int idx_read_header(idx_file *out, const char *path, error *err)
{
    return s_idx_read(out, path, IDX_HEADER, err);
}

int idx_scan(idx_file *out, const char *path, error *err)
{
    return s_idx_read(out, path, IDX_SCAN, err);
}

/* Reads and drops count bytes, 64 KiB at a time. */
static int s_skip_exact(gzFile f, size_t count)
{
    uint8_t buf[65536];
    while (count > 0) {
        size_t chunk = count < sizeof buf ? count : sizeof buf;
        if (s_read_exact(f, buf, chunk) < 0) {
            return -1;
        }
        count -= chunk;
    }
    return 0;
}

/* Deflate cannot compress better than about 1032 to 1. */
#define IDX_MAX_GZIP_RATIO 1032

/* Whether the file can hold the count data bytes its header promises:
 * exactly, when it is not compressed; within deflate's best ratio when it
 * is. Checked before anything is allocated, so that a short file that
 * promises gigabytes costs nothing. */
static int s_check_size(gzFile f, const char *path, size_t header, size_t count, error *err)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
        return 0;   /* a pipe or device: the read finds out */
    }
    size_t size = (size_t)st.st_size;
    size_t data = size > header ? size - header : 0;
    if (gzdirect(f) && data < count) {
        return error_set(err, ERROR_USAGE, "%s: corrupt IDX file: truncated (the header promises "
                         "%zu data bytes, the file holds %zu)", path, count, data);
    }
    if (gzdirect(f) && data > count) {
        return error_set(err, ERROR_USAGE, "%s: corrupt IDX file: data beyond the %zu bytes its "
                         "header promises (the file holds %zu)", path, count, data);
    }
    if (!gzdirect(f) && count / IDX_MAX_GZIP_RATIO > size) {
        return error_set(err, ERROR_USAGE, "%s: corrupt IDX file: the header promises %zu data "
                         "bytes, more than %zu compressed bytes can hold", path, count, size);
    }
    return 0;
}

/* A read of f that came up short: a gzip stream that does not decode (a
 * bad checksum: corrupt, and said so, not short), else short as `what`
 * says. Returns -1. */
static int s_short(gzFile f, const char *path, const char *what, error *err)
{
    int zerr;
    const char *why = gzerror(f, &zerr);
    if (zerr == Z_DATA_ERROR) {
        return error_set(err, ERROR_USAGE, "%s: corrupt IDX file: its gzip stream does not "
                         "decode (zlib: %s)", path, why);
    }
    return error_set(err, ERROR_USAGE, "%s: corrupt IDX file: %s%s%s", path, what,
                     zerr < 0 ? ": " : "", zerr < 0 ? why : "");
}

static int s_idx_read(idx_file *out, const char *path, enum idx_mode mode, error *err)
{
    memset(out, 0, sizeof *out);
    gzFile f = gzopen(path, "rb");
    if (!f) {
        return error_set(err, ERROR_USAGE, "%s: cannot open: %s", path,
                         errno ? strerror(errno) : "out of memory");
    }
    int rc = -1;
    uint8_t magic[4];
    if (s_read_exact(f, magic, 4) < 0) {
        s_short(f, path, "too short for a header", err);
        goto done;
    }
    if (magic[0] != 0 || magic[1] != 0 || magic[3] < 1 || magic[3] > 4) {
        error_set(err, ERROR_USAGE, "%s: not an IDX file (magic number "
                  "%02x%02x%02x%02x)", path, magic[0], magic[1], magic[2], magic[3]);
        goto done;
    }
    if (magic[2] != 0x08) {
        error_set(err, ERROR_USAGE, "%s: IDX element type 0x%02x is not "
                  "supported (only unsigned bytes, 0x08)", path, magic[2]);
        goto done;
    }
    out->ndims = magic[3];
    size_t count = 1;
    for (int i = 0; i < out->ndims; i++) {
        uint8_t b[4];
        if (s_read_exact(f, b, 4) < 0) {
            s_short(f, path, "truncated header", err);
            goto done;
        }
        out->dims[i] = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
                       (uint32_t)b[2] << 8 | b[3];
        if (out->dims[i] == 0 || out->dims[i] > (1u << 28) ||
            count > ((size_t)1 << 34) / out->dims[i]) {
            error_set(err, ERROR_USAGE, "%s: corrupt IDX file: implausible "
                      "dimension %u", path, out->dims[i]);
            goto done;
        }
        count *= out->dims[i];
    }
    out->count = count;
    if (s_check_size(f, path, 4 + 4 * (size_t)out->ndims, count, err) < 0) {
        goto done;
    }
    if (mode == IDX_HEADER) {
        rc = 0;
        goto done;
    }
    out->data = mode == IDX_LOAD ? malloc(count) : NULL;
    if (mode == IDX_LOAD && !out->data) {
        error_set(err, ERROR_RUNTIME, "%s: out of memory for %zu bytes", path, count);
        goto done;
    }
    if ((mode == IDX_LOAD ? s_read_exact(f, out->data, count) : s_skip_exact(f, count)) < 0) {
        char what[96];
        snprintf(what, sizeof what, "truncated (the header promises %zu data bytes)", count);
        s_short(f, path, what, err);
        goto done;
    }
    uint8_t extra;
    int beyond = gzread(f, &extra, 1), zerr = Z_OK;
    if (beyond == 0) {
        gzerror(f, &zerr);
    }
    if (beyond < 0 || zerr == Z_BUF_ERROR) {
        /* the checksum, checked at the stream's end; a gzip stream that
         * ends without it (cut short: zlib's "unexpected end of file" at
         * a read of 0 bytes, no error returned) was taken unchecked */
        s_short(f, path, zerr == Z_BUF_ERROR ? "truncated (its gzip stream ends before its "
                         "checksum)" : "unreadable past its data", err);
        goto done;
    }
    if (beyond > 0) {
        error_set(err, ERROR_USAGE, "%s: corrupt IDX file: data beyond the %zu "
                  "bytes its header promises", path, count);
        goto done;
    }
    rc = 0;
done:
    gzclose(f);
    if (rc < 0) {
        idx_free(out);
    }
    return rc;
}

void idx_free(idx_file *f)
{
    free(f->data);
    memset(f, 0, sizeof *f);
}
