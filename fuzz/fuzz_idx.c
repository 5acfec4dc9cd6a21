/* fuzz_idx.c: libFuzzer harness for the IDX reader (MNIST's format, plain
 * or gzip), which reads whatever files [data] folder names.
 *
 * Input: one mode byte (bit 0: gzip the image file; bit 1: gzip the label
 * file; bits 2-7: a limit on the examples kept, 0 for none), the image
 * file's length (2 bytes, little-endian), the image file, then the label
 * file. A data set the reader accepts must be one training can index
 * without checks: every label below the class count, every pixel in
 * [0, 1], and the shape the files promised. */
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "core/data.h"
#include "core/idx.h"
#include "fuzz/common.h"

/* Writes bytes to name, gzipped when asked, and puts its path in path. */
static void s_write(char *path, size_t n, const char *name, const uint8_t *bytes, size_t len,
                    int gzip)
{
    if (!gzip) {
        fuzz_write_file(path, n, name, bytes, len);
        return;
    }
    uLongf cap = compressBound(len) + 32;
    uint8_t *z = malloc(cap);
    z_stream zs = {0};
    if (deflateInit2(&zs, 1, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        fuzz_fail("zlib");
    }
    zs.next_in = (Bytef *)bytes;
    zs.avail_in = (uInt)len;
    zs.next_out = z;
    zs.avail_out = (uInt)cap;
    if (deflate(&zs, Z_FINISH) != Z_STREAM_END) {
        fuzz_fail("zlib");
    }
    fuzz_write_file(path, n, name, z, zs.total_out);
    deflateEnd(&zs);
    free(z);
}

static void s_check_dataset(const dataset *d, long limit)
{
    if (d->n < 1 || d->dim < 1 || d->classes < 1 || (limit > 0 && d->n > limit)) {
        fuzz_fail("accepted an empty data set or one over the limit");
    }
    for (long i = 0; i < d->n; i++) {
        if (d->y[i] < 0 || d->y[i] >= d->classes) {
            fuzz_fail("accepted a label outside the classes");
        }
    }
    for (size_t i = 0; i < (size_t)d->n * (size_t)d->dim; i++) {
        if (!(d->x[i] >= 0.0f && d->x[i] <= 1.0f)) {
            fuzz_fail("accepted a pixel outside [0, 1]");
        }
    }
}

/* idx_scan and idx_read_header (the launcher's checks) agree with idx_read. */
static void s_check_readers_agree(const char *path)
{
    idx_file full = {0}, head = {0}, scan = {0};
    error e1 = {0}, e2 = {0}, e3 = {0};
    int r_full = idx_read(&full, path, &e1);
    int r_head = idx_read_header(&head, path, &e2);
    int r_scan = idx_scan(&scan, path, &e3);
    if (r_full != r_scan || (r_full == 0 && r_head != 0)) {
        fuzz_fail("idx_read, idx_read_header and idx_scan disagree on a file");
    }
    if (r_full == 0 && (full.count != scan.count || full.count != head.count ||
                        full.ndims != head.ndims)) {
        fuzz_fail("idx_read, idx_read_header and idx_scan read different shapes");
    }
    for (int i = 0; i < 3; i++) {
        const error *e = i == 0 ? &e1 : i == 1 ? &e2 : &e3;
        int r = i == 0 ? r_full : i == 1 ? r_head : r_scan;
        if (r < 0) {
            fuzz_check_error(e);
        }
    }
    idx_free(&full);
    idx_free(&head);
    idx_free(&scan);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3) {
        return 0;
    }
    int mode = data[0];
    size_t images_len = (size_t)data[1] | (size_t)data[2] << 8;
    data += 3;
    size -= 3;
    if (images_len > size) {
        images_len = size;
    }
    char images[128], labels[128];
    s_write(images, sizeof images, "images-idx3-ubyte", data, images_len, mode & 1);
    s_write(labels, sizeof labels, "labels-idx1-ubyte", data + images_len, size - images_len,
            mode & 2);
    s_check_readers_agree(images);
    long limit = mode >> 2;
    dataset d;
    error err = {0};
    if (dataset_from_idx(&d, images, labels, limit, &err) < 0) {
        fuzz_check_error(&err);
    } else {
        s_check_dataset(&d, limit);
        dataset_free(&d);
    }
    return 0;
}
