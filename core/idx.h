/* idx.h: IDX files, the MNIST format, read through zlib so that `.gz` and
 * plain files both work. Every header field and the file length are
 * checked before any data is trusted. */
#ifndef ASGD_IDX_H
#define ASGD_IDX_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

/* An IDX file of unsigned bytes (type 0x08): dims[0] is the item count. */
typedef struct idx_file {
    int ndims;
    uint32_t dims[4];
    size_t count;     /* product of dims */
    uint8_t *data;
} idx_file;

/* Reads path (gzip or plain). Checks the magic number (0x0000 08 NDIMS,
 * 1 <= NDIMS <= 4), that no dimension is zero, and that the file holds
 * exactly the bytes the header promises. */
int idx_read(idx_file *out, const char *path, error *err);
/* Only the header: ndims, dims and count; data stays NULL. */
int idx_read_header(idx_file *out, const char *path, error *err);
/* The header, and every data byte read and checked but not kept (data
 * stays NULL). */
int idx_scan(idx_file *out, const char *path, error *err);
void idx_free(idx_file *f);

#endif
