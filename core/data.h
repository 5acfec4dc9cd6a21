/* data.h: data sets in memory, read from IDX files (idx.h) or generated.
 *
 * A dataset is n examples of dim float features (row-major) with integer
 * labels in [0, classes). */
#ifndef ASGD_DATA_H
#define ASGD_DATA_H

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
} dataset;

enum data_source { DATA_FASHION_MNIST, DATA_MNIST, DATA_IDX, DATA_SYNTHETIC };
enum data_normalize { NORMALIZE_STANDARD, NORMALIZE_SCALE, NORMALIZE_NONE };

/* The [data] keys that choose and shape the data. */
typedef struct data_spec {
    int source;            /* enum data_source */
    const char *path;      /* folder of the four IDX files */
    long train_size;       /* 0 = all (files); examples to make (synthetic) */
    long test_size;
    int normalize;         /* enum data_normalize */
    long dim, classes;     /* synthetic only */
    double noise;          /* synthetic only: spread around each centre */
} data_spec;

#define DATA_FASHION_MNIST_PATH "/usr/share/datasets/fashion-mnist"

/* "fashion-mnist", "mnist", "idx" or "synthetic". */
const char *data_source_name(int source);

/* Reads the [data] keys. */
int data_spec_configure(data_spec *s, config *c, error *err);

/* Loads (or generates) the training and test sets, normalised as the spec
 * says with statistics of the training set. */
int data_load(dataset *train, dataset *test, const data_spec *s,
              unsigned long seed, error *err);

/* The training set's size and shape without loading it (servers need only
 * the parameter count): reads the IDX headers and the label file. */
int data_shape(const data_spec *s, long *n_train, int *dim, int *classes, error *err);
/* The same after every check data_load makes, without keeping the data:
 * each file is read through once (the launcher's check before any process
 * starts). */
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

/* standard: (x - mean) / std with the training set's scalar mean and std,
 * applied to both sets; scale and none leave values as they are (IDX
 * bytes are already scaled to [0, 1]). Both sets record what was applied
 * (mean 0 and std 1 for none). */
void dataset_normalize(dataset *train, dataset *test, int how);

void dataset_free(dataset *d);

#endif
