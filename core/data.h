/* data.h: data sets in memory, read from IDX files (idx.h) or generated.
 *
 * A dataset is n examples of dim float features (row-major) with integer
 * labels in [0, classes); or, with classes 1, a regression set, whose y[i]
 * holds the bits of example i's float32 target (data_target), so that
 * every part of asgd that moves labels moves targets unchanged. */
#ifndef ASGD_DATA_H
#define ASGD_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "core/error.h"
#include "core/idx.h"

typedef struct dataset {
    int n;            /* examples */
    int dim;          /* features per example */
    int classes;      /* labels lie in [0, classes) */
    float *x;         /* n x dim */
    int32_t *y;       /* n */
    double mean, std; /* the normalisation applied: x = (raw - mean) / std */
    size_t mapped;    /* > 0: x and y lie in a read-only mapping of this many
                         bytes at x, shared with other processes (datacache.h) */
} dataset;

enum data_source { DATA_FASHION_MNIST, DATA_MNIST, DATA_IDX, DATA_SYNTHETIC, DATA_REGRESSION };
enum data_normalize { NORMALIZE_STANDARD, NORMALIZE_SCALE, NORMALIZE_NONE };

/* The [data] keys that choose and shape the data. */
typedef struct data_spec {
    int source;            /* enum data_source */
    const char *path;      /* folder of the four IDX files */
    long train_size;       /* 0 = all (files); examples to make (synthetic) */
    long test_size;
    int normalize;         /* enum data_normalize */
    long dim, classes;     /* synthetic only (regression: dim) */
    double noise;          /* synthetic: spread around each centre; regression: of the
                              targets around the true linear function */
    const char *cache;     /* "auto", "off" or a folder (datacache.h); NULL: off */
} data_spec;

#define DATA_FASHION_MNIST_PATH "/usr/share/datasets/fashion-mnist"

/* "fashion-mnist", "mnist", "idx", "synthetic" or "regression". */
const char *data_source_name(int source);

/* Reads the [data] keys. */
int data_spec_configure(data_spec *s, config *c, error *err);

/* The four IDX files of a file-backed spec (train images, train labels,
 * test images, test labels), each checked to exist. */
int data_files(char paths[4][4096], const data_spec *s, error *err);

/* Loads (or generates) the training and test sets, normalised as the spec
 * says with statistics of the training set: IDX pixels as byte / 255
 * (scale), that standardised (standard), or the bytes as they are (none);
 * generated data as made (scale, none) or standardised. */
int data_load(dataset *train, dataset *test, const data_spec *s,
              unsigned long seed, error *err);

/* The training set's size and shape without loading it (servers need only
 * the parameter count): reads the IDX headers and the label file. */
int data_shape(const data_spec *s, long *n_train, int *dim, int *classes, error *err);
/* The shape of the training images as their IDX header gives it: height,
 * width and channels (1 for a file of 3 dimensions); false where it gives
 * none (a generated set, a file of other dimensions, one unreadable). */
bool data_image(const data_spec *s, long image[3]);
/* The same after every check data_load makes, without keeping the data:
 * each file is read through once (the launcher's check before any process
 * starts), or not at all where one of the last four checks that passed
 * was of the same files and sizes, unchanged since (a sweep's runs).
 * Not for several threads at once. */
int data_check(const data_spec *s, long *n_train, int *dim, int *classes, error *err);

/* Builds a dataset from an image file and a label file. limit > 0 keeps
 * the first `limit` examples. Pixel bytes become floats in [0, 1]. */
int dataset_from_idx(dataset *d, const char *images, const char *labels,
                     long limit, error *err);

/* Gaussian classes, each a mixture of two clusters, so that a linear model
 * learns a good part but not all of it. Same seed, same data. */
int dataset_synthetic(dataset *train, dataset *test, long n_train, long n_test,
                      int dim, int classes, double noise, unsigned long seed,
                      error *err);

/* Least squares: x ~ N(0, I), a true w ~ N(0, I / dim) and targets x.w +
 * noise * N(0, 1), classes 1 (Mishchenko et al.'s setting). Same seed, same
 * data. */
int dataset_regression(dataset *train, dataset *test, long n_train, long n_test, int dim,
                       double noise, unsigned long seed, error *err);
/* Example i's target in a regression set. */
float data_target(const dataset *d, int i);
float data_target_of(int32_t bits);

/* standard: (x - mean) / std with the training set's scalar mean and std,
 * applied to both sets; scale and none leave values as they are (data_load
 * reads IDX bytes as byte / 255 for standard and scale, as the bytes
 * themselves, 0..255, for none). Both sets record what was applied (mean 0
 * and std 1 for scale and none; data_load then records std 1 / 255 for IDX
 * bytes under none, measured from byte / 255 as model.json says). */
void dataset_normalize(dataset *train, dataset *test, int how);

void dataset_free(dataset *d);

#endif
