/* test_data.c: the IDX reader against good, truncated and corrupt files;
 * data set loading (Fashion-MNIST included); synthetic data; normalisation
 * (none keeps the raw pixel bytes). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "core/data.h"
#include "support.h"

static void s_images(uint8_t *px, int n, int h, int w)
{
    for (int i = 0; i < n * h * w; i++) {
        px[i] = (uint8_t)(i * 37 + 11);
    }
}

static void test_idx_reads_gz_and_plain_alike(void **state)
{
    support_fixture *f = *state;
    uint8_t px[5 * 3 * 4];
    s_images(px, 5, 3, 4);
    uint32_t dims[3] = {5, 3, 4};
    char gz[300], plain[300];
    snprintf(gz, sizeof gz, "%s/a.gz", f->dir);
    snprintf(plain, sizeof plain, "%s/a", f->dir);
    support_write_idx(gz, 1, dims, 3, px);
    support_write_idx(plain, 0, dims, 3, px);
    for (int k = 0; k < 2; k++) {
        idx_file idx;
        error err = {0};
        assert_int_equal(idx_read(&idx, k ? gz : plain, &err), 0);
        assert_int_equal(idx.ndims, 3);
        assert_int_equal(idx.dims[0], 5);
        assert_int_equal(idx.dims[1], 3);
        assert_int_equal(idx.dims[2], 4);
        assert_int_equal(idx.count, sizeof px);
        assert_memory_equal(idx.data, px, sizeof px);
        idx_free(&idx);
    }
}

/* Writes raw bytes, gzip-compressed or not. */
static void s_write_raw(const char *path, int gz, const uint8_t *bytes, size_t n)
{
    if (gz) {
        gzFile g = gzopen(path, "wb");
        assert_non_null(g);
        assert_int_equal(gzwrite(g, bytes, (unsigned)n), (int)n);
        gzclose(g);
    } else {
        FILE *o = fopen(path, "wb");
        assert_non_null(o);
        assert_int_equal(fwrite(bytes, 1, n, o), n);
        fclose(o);
    }
}

static void s_expect_corrupt(const char *path, const char *needle)
{
    idx_file idx;
    error err = {0};
    assert_int_equal(idx_read(&idx, path, &err), -1);
    assert_int_equal(err.status, ERROR_USAGE);
    assert_non_null(strstr(err.msg, path));
    if (!strstr(err.msg, needle)) {
        fail_msg("error \"%s\" lacks \"%s\"", err.msg, needle);
    }
    assert_null(strchr(err.msg, '\n'));
    assert_null(idx.data);
}

/* bytes written to f->dir/name (gzip-compressed with gz) and refused by
 * idx_read with an error holding needle. */
static void s_expect_corrupt_bytes(const support_fixture *f, const char *name, int gz,
                                   const uint8_t *bytes, size_t n, const char *needle)
{
    char path[300];
    snprintf(path, sizeof path, "%s/%s", f->dir, name);
    s_write_raw(path, gz, bytes, n);
    s_expect_corrupt(path, needle);
}

static void test_idx_rejects_truncated_files(void **state)
{
    support_fixture *f = *state;
    /* header promises 2 x 2 x 2 = 8 bytes; 5 follow */
    const uint8_t bytes[] = {0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 2, 1, 2, 3, 4, 5};
    char path[300];
    for (int gz = 0; gz < 2; gz++) {
        snprintf(path, sizeof path, "%s/trunc%d", f->dir, gz);
        s_write_raw(path, gz, bytes, sizeof bytes);
        s_expect_corrupt(path, "truncated");
        snprintf(path, sizeof path, "%s/header%d", f->dir, gz);
        s_write_raw(path, gz, bytes, 9);
        s_expect_corrupt(path, "truncated header");
        snprintf(path, sizeof path, "%s/empty%d", f->dir, gz);
        s_write_raw(path, gz, bytes, 2);
        s_expect_corrupt(path, "too short");
    }
    /* a gzip stream cut short mid-way */
    uint8_t px[4000];
    s_images(px, 10, 20, 20);
    uint32_t dims[3] = {10, 20, 20};
    char whole[300];
    snprintf(whole, sizeof whole, "%s/whole.gz", f->dir);
    support_write_idx(whole, 1, dims, 3, px);
    FILE *in = fopen(whole, "rb");
    uint8_t buf[8192];
    size_t n = fread(buf, 1, sizeof buf, in);
    fclose(in);
    snprintf(path, sizeof path, "%s/cut.gz", f->dir);
    FILE *o = fopen(path, "wb");
    fwrite(buf, 1, n / 2, o);
    fclose(o);
    s_expect_corrupt(path, "truncated");
    /* its data whole, its trailer (the CRC-32 and size) gone: zlib reads
     * it all and says so only when asked; its bytes went unchecked */
    snprintf(path, sizeof path, "%s/no-trailer.gz", f->dir);
    o = fopen(path, "wb");
    fwrite(buf, 1, n - 8, o);
    fclose(o);
    s_expect_corrupt(path, "truncated (its gzip stream ends before its checksum)");
    /* whole, but its checksum wrong: corrupt, not short (it said truncated) */
    snprintf(path, sizeof path, "%s/crc.gz", f->dir);
    buf[n - 8] ^= 0xff;   /* the trailer's CRC-32 */
    o = fopen(path, "wb");
    fwrite(buf, 1, n, o);
    fclose(o);
    s_expect_corrupt(path, "its gzip stream does not decode");
}

static void test_idx_rejects_bad_magic_type_and_sizes(void **state)
{
    support_fixture *f = *state;
    const uint8_t png[] = {0x89, 'P', 'N', 'G', 0, 0, 0, 1, 0};
    s_expect_corrupt_bytes(f, "magic", 0, png, sizeof png, "not an IDX file");
    const uint8_t dims0[] = {0, 0, 8, 9, 0, 0, 0, 1};
    s_expect_corrupt_bytes(f, "ndims", 0, dims0, sizeof dims0, "not an IDX file");
    const uint8_t floats[] = {0, 0, 0x0d, 1, 0, 0, 0, 1, 0, 0, 0, 0};
    s_expect_corrupt_bytes(f, "floats", 0, floats, sizeof floats, "not supported");
    const uint8_t zero[] = {0, 0, 8, 2, 0, 0, 0, 0, 0, 0, 0, 3};
    s_expect_corrupt_bytes(f, "zero", 0, zero, sizeof zero, "implausible dimension");
    const uint8_t extra[] = {0, 0, 8, 1, 0, 0, 0, 2, 7, 7, 7};
    s_expect_corrupt_bytes(f, "extra", 0, extra, sizeof extra, "beyond");
    idx_file idx;
    error err = {0};
    assert_int_equal(idx_read(&idx, "/nonexistent/file.gz", &err), -1);
    assert_non_null(strstr(err.msg, "cannot open"));
}

/* An 18-byte file whose header promises 2^16 x 512 x 512 bytes (16 GiB)
 * is refused from its size alone, before anything is allocated or read:
 * even reading only its header fails, and a gzip file cannot promise
 * more than deflate's best ratio. */
static void test_idx_checks_sizes_before_allocating(void **state)
{
    support_fixture *f = *state;
    const uint8_t huge[] = {0, 0, 8, 3, 0, 1, 0, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0};
    char path[300];
    for (int gz = 0; gz < 2; gz++) {
        snprintf(path, sizeof path, "%s/huge%d", f->dir, gz);
        s_write_raw(path, gz, huge, sizeof huge);
        idx_file idx;
        error err = {0};
        assert_int_equal(idx_read_header(&idx, path, &err), -1);
        const char *needle = gz ? "compressed bytes can hold" : "the file holds 2)";
        if (!strstr(err.msg, "promises 17179869184 data bytes") || !strstr(err.msg, needle)) {
            fail_msg("error \"%s\" lacks \"%s\"", err.msg, needle);
        }
        s_expect_corrupt(path, "promises 17179869184");
    }
}

static void test_dataset_from_idx_pairs_and_checks(void **state)
{
    support_fixture *f = *state;
    uint8_t px[6 * 2 * 2], labels[6] = {0, 3, 1, 2, 3, 0};
    s_images(px, 6, 2, 2);
    uint32_t idims[3] = {6, 2, 2}, ldims[1] = {6}, bad[1] = {5};
    char im[300], lb[300], lb5[300];
    snprintf(im, sizeof im, "%s/im.gz", f->dir);
    snprintf(lb, sizeof lb, "%s/lb.gz", f->dir);
    snprintf(lb5, sizeof lb5, "%s/lb5.gz", f->dir);
    support_write_idx(im, 1, idims, 3, px);
    support_write_idx(lb, 1, ldims, 1, labels);
    support_write_idx(lb5, 1, bad, 1, labels);
    dataset d;
    error err = {0};
    assert_int_equal(dataset_from_idx(&d, im, lb, 0, &err), 0);
    assert_int_equal(d.n, 6);
    assert_int_equal(d.dim, 4);
    assert_int_equal(d.classes, 4);
    assert_true(fabsf(d.x[5] - px[5] / 255.0f) < 1e-7f);
    assert_int_equal(d.y[1], 3);
    dataset_free(&d);
    assert_int_equal(dataset_from_idx(&d, im, lb, 4, &err), 0);
    assert_int_equal(d.n, 4);
    dataset_free(&d);
    assert_int_equal(dataset_from_idx(&d, im, lb5, 0, &err), -1);
    assert_non_null(strstr(err.msg, "5 labels for 6 images"));
    assert_int_equal(dataset_from_idx(&d, lb, lb, 0, &err), -1);
    assert_non_null(strstr(err.msg, "expected images"));
    /* one label of 255 among 0 to 3: refused, not 256 classes */
    labels[1] = 255;
    support_write_idx(lb, 1, ldims, 1, labels);
    assert_int_equal(dataset_from_idx(&d, im, lb, 0, &err), -1);
    assert_int_equal(err.status, ERROR_USAGE);
    if (!strstr(err.msg, "label 255 (example 1) but no example of class 4")) {
        fail_msg("error \"%s\"", err.msg);
    }
}

static void test_fashion_mnist_loads_with_its_shape(void **state)
{
    (void)state;
    error err = {0};
    config *c = config_parse_string("[data]\ntrain_size = 2000\n", "f.ini", &err);
    data_spec s;
    assert_int_equal(data_spec_configure(&s, c, &err), 0);
    assert_int_equal(s.source, DATA_FASHION_MNIST);
    dataset train, test;
    if (data_load(&train, &test, &s, 1, &err) < 0) {
        fail_msg("%s (./scripts/setup.sh installs dataset-fashion-mnist)", err.msg);
    }
    assert_int_equal(train.n, 2000);
    assert_int_equal(test.n, 10000);
    assert_int_equal(train.dim, 784);
    assert_int_equal(train.classes, 10);
    int counts[10] = {0};
    for (int i = 0; i < test.n; i++) {
        counts[test.y[i]]++;
    }
    for (int k = 0; k < 10; k++) {
        assert_int_equal(counts[k], 1000);   /* the test set is balanced */
    }
    /* standard normalisation: training features have mean 0, std 1 */
    double sum = 0, sq = 0;
    size_t n = (size_t)train.n * 784;
    for (size_t i = 0; i < n; i++) {
        sum += train.x[i];
        sq += (double)train.x[i] * train.x[i];
    }
    assert_true(fabs(sum / n) < 1e-3);
    assert_true(fabs(sq / n - 1) < 1e-3);
    dataset_free(&train);
    dataset_free(&test);
    config_destroy(&c);
}

static void test_missing_dataset_says_how_to_install(void **state)
{
    support_fixture *f = *state;
    error err = {0};
    char text[512];
    snprintf(text, sizeof text, "[data]\npath = %s\n", f->dir);
    config *c = config_parse_string(text, "m.ini", &err);
    data_spec s;
    assert_int_equal(data_spec_configure(&s, c, &err), 0);
    dataset train, test;
    assert_int_equal(data_load(&train, &test, &s, 1, &err), -1);
    assert_int_equal(err.status, ERROR_USAGE);
    assert_non_null(strstr(err.msg, "apt-get install dataset-fashion-mnist"));
    assert_non_null(strstr(err.msg, f->dir));
    config_destroy(&c);
}

/* dataset = mnist over Debian's Fashion-MNIST folder is refused, naming
 * both: a run's config.ini gives its path, and `asgd eval RUN
 * data.dataset=mnist` read Fashion-MNIST and said it was MNIST. */
static void test_mnist_in_fashion_mnists_folder_is_refused(void **state)
{
    (void)state;
    error err = {0};
    config *c = config_parse_string("[data]\ndataset = mnist\npath = " DATA_FASHION_MNIST_PATH
                                    "\n", "m.ini", &err);
    data_spec s;
    assert_int_equal(data_spec_configure(&s, c, &err), -1);
    assert_int_equal(err.status, ERROR_USAGE);
    assert_non_null(strstr(err.msg, "m.ini:3: [data] path: " DATA_FASHION_MNIST_PATH
                                    " is Debian's Fashion-MNIST, not MNIST"));
    config_destroy(&c);
    /* written otherwise, it is the same folder */
    c = config_parse_string("[data]\ndataset = mnist\npath = " DATA_FASHION_MNIST_PATH "//\n",
                            "m.ini", &err);
    assert_int_equal(data_spec_configure(&s, c, &err), -1);
    config_destroy(&c);
}

static void test_synthetic_is_seeded_and_learnable_shape(void **state)
{
    (void)state;
    dataset a, b, c, ta, tb, tc;
    error err = {0};
    assert_int_equal(dataset_synthetic(&a, &ta, 500, 100, 16, 4, 1.0, 9, &err), 0);
    assert_int_equal(dataset_synthetic(&b, &tb, 500, 100, 16, 4, 1.0, 9, &err), 0);
    assert_int_equal(dataset_synthetic(&c, &tc, 500, 100, 16, 4, 1.0, 10, &err), 0);
    assert_memory_equal(a.x, b.x, 500 * 16 * sizeof(float));
    assert_memory_equal(a.y, b.y, 500 * sizeof(int32_t));
    assert_memory_not_equal(a.x, c.x, 500 * 16 * sizeof(float));
    assert_memory_not_equal(a.x, ta.x, 100 * 16 * sizeof(float));
    int counts[4] = {0};
    for (int i = 0; i < a.n; i++) {
        assert_in_range(a.y[i], 0, 3);
        counts[a.y[i]]++;
    }
    for (int k = 0; k < 4; k++) {
        assert_true(counts[k] > 80);
    }
    dataset *all[6] = {&a, &b, &c, &ta, &tb, &tc};
    for (int i = 0; i < 6; i++) {
        dataset_free(all[i]);
    }
    /* without noise every example is its cluster's centre, on the sphere
     * of radius 3 whatever the dimension (a mutation to 4 passed) */
    for (int dim = 2; dim <= 64; dim *= 8) {
        assert_int_equal(dataset_synthetic(&a, &ta, 200, 10, dim, 3, 0.0, 5, &err), 0);
        for (int i = 0; i < a.n; i++) {
            double norm = 0;
            for (int j = 0; j < dim; j++) {
                norm += (double)a.x[i * dim + j] * a.x[i * dim + j];
            }
            if (fabs(sqrt(norm) - 3) > 1e-5) {
                fail_msg("dim %d, example %d: %g from the origin, not 3", dim, i, sqrt(norm));
            }
        }
        dataset_free(&a);
        dataset_free(&ta);
    }
}

/* Loads four IDX files in f->dir (12 training and 6 test images of 3 x 4
 * pixels, labels 0..2) with `normalize = how`, uncached. */
static void s_load_idx_as(const support_fixture *f, const char *how, dataset *train,
                          dataset *test, uint8_t px[12 * 12])
{
    static const char *const stems[4] = {
        "train-images-idx3-ubyte", "train-labels-idx1-ubyte",
        "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"};
    s_images(px, 12, 3, 4);
    uint8_t labels[12];
    for (int i = 0; i < 12; i++) {
        labels[i] = (uint8_t)(i % 3);
    }
    for (int set = 0; set < 2; set++) {
        uint32_t dims[3] = {set ? 6u : 12u, 3, 4};
        char path[400];
        snprintf(path, sizeof path, "%s/%s", f->dir, stems[2 * set]);
        support_write_idx(path, 0, dims, 3, px);
        snprintf(path, sizeof path, "%s/%s", f->dir, stems[2 * set + 1]);
        support_write_idx(path, 0, dims, 1, labels);
    }
    char text[800];
    snprintf(text, sizeof text, "[data]\ndataset = idx\npath = %s\ncache = off\n"
             "normalize = %s\n", f->dir, how);
    error err = {0};
    config *c = config_parse_string(text, "n.ini", &err);
    assert_non_null(c);
    data_spec s;
    assert_int_equal(data_spec_configure(&s, c, &err), 0);
    if (data_load(train, test, &s, 1, &err) < 0) {
        fail_msg("%s", err.msg);
    }
    config_destroy(&c);
}

/* normalize = none keeps an IDX file's pixel bytes (0..255), scale divides
 * them by 255 (none was scale's twin); either way model.json's transform,
 * (byte / 255 - mean) / std, gives the values trained on. */
static void test_normalize_none_keeps_raw_pixels(void **state)
{
    support_fixture *f = *state;
    dataset none, none_test, scale, scale_test;
    uint8_t px[12 * 12];
    s_load_idx_as(f, "none", &none, &none_test, px);
    s_load_idx_as(f, "scale", &scale, &scale_test, px);
    assert_int_equal(none.n * none.dim, 12 * 12);
    bool some_above_one = false;
    for (int i = 0; i < none.n * none.dim; i++) {
        if (none.x[i] != (float)px[i]) {
            fail_msg("pixel %d: none gives %g, the file holds %d", i, none.x[i], px[i]);
        }
        if (fabsf(none.x[i] - 255.0f * scale.x[i]) > 1e-4f * (none.x[i] + 1.0f)) {
            fail_msg("pixel %d: none %g is not 255 x scale %g", i, none.x[i], scale.x[i]);
        }
        float described = (float)((px[i] / 255.0 - none.mean) / none.std);
        assert_true(fabsf(described - none.x[i]) < 1e-3f);
        some_above_one |= none.x[i] > 1.0f;
    }
    assert_true(some_above_one);
    assert_true(none_test.x[0] == (float)px[0]);
    assert_true(scale.mean == 0 && scale.std == 1);
    /* standard: both sets by the training set's mean and sd, which leave
     * the training set at mean 0 and sd 1 (a mutation that left the test
     * set in bytes / 255 passed every test) */
    dataset std, std_test;
    s_load_idx_as(f, "standard", &std, &std_test, px);
    double sum = 0, squares = 0;
    for (int i = 0; i < std.n * std.dim; i++) {
        float want = (float)((scale.x[i] - std.mean) / std.std);
        assert_true(fabsf(std.x[i] - want) < 1e-5f);
        sum += std.x[i];
        squares += (double)std.x[i] * std.x[i];
    }
    double n = std.n * std.dim, mean = sum / n;
    assert_true(fabs(mean) < 1e-5 && fabs(sqrt(squares / n - mean * mean) - 1) < 1e-4);
    for (int i = 0; i < std_test.n * std_test.dim; i++) {
        float want = (float)((scale_test.x[i] - std.mean) / std.std);
        if (fabsf(std_test.x[i] - want) > 1e-5f) {
            fail_msg("test pixel %d: %g, not (%g - %g) / %g", i, std_test.x[i], scale_test.x[i],
                     std.mean, std.std);
        }
    }
    assert_true(std_test.mean == std.mean && std_test.std == std.std);
    dataset *all[6] = {&none, &none_test, &scale, &scale_test, &std, &std_test};
    for (int i = 0; i < 6; i++) {
        dataset_free(all[i]);
    }
}

/* The header's limits: four dimensions at most (a fifth would be written
 * past dims[4]), both leading magic bytes 0, no dimensions whose product
 * wraps size_t (65536^4 is 0 in 64 bits: a header with no data after it
 * would pass as whole), and, gzip-compressed too, nothing after the data. */
static void test_idx_header_limits(void **state)
{
    support_fixture *f = *state;
    char path[300];
    const uint8_t four[] = {0, 0, 8, 4, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 1, 5, 6};
    snprintf(path, sizeof path, "%s/four", f->dir);
    s_write_raw(path, 0, four, sizeof four);
    idx_file idx;
    error err = {0};
    assert_int_equal(idx_read(&idx, path, &err), 0);
    assert_int_equal(idx.ndims, 4);
    assert_int_equal(idx.count, 2);
    assert_int_equal(idx.data[1], 6);
    idx_free(&idx);
    const uint8_t five[] = {0, 0, 8, 5, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1,
                            0, 0, 0, 1, 9};
    s_expect_corrupt_bytes(f, "five", 0, five, sizeof five, "not an IDX file");
    const uint8_t magic[] = {0, 1, 8, 1, 0, 0, 0, 1, 9};
    s_expect_corrupt_bytes(f, "magic1", 0, magic, sizeof magic, "not an IDX file");
    const uint8_t wraps[] = {0, 0, 8, 4, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0};
    s_expect_corrupt_bytes(f, "wraps", 0, wraps, sizeof wraps, "implausible dimension");
    const uint8_t extra[] = {0, 0, 8, 1, 0, 0, 0, 2, 7, 7, 7};
    s_expect_corrupt_bytes(f, "extra.gz", 1, extra, sizeof extra, "beyond");
}

/* Writes the four IDX files of dataset = idx in f->dir: 12 training images
 * of 3 x 4 pixels with labels 0..2, and 6 test images of 3 x `test_w`
 * pixels with labels test_labels; loads the first 9 training examples and
 * returns data_load's result, checked against data_check's and
 * data_shape's. */
static int s_load_pair(const support_fixture *f, uint32_t test_w, const uint8_t test_labels[6],
                       error *err)
{
    static const char *const stems[4] = {
        "train-images-idx3-ubyte", "train-labels-idx1-ubyte",
        "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"};
    uint8_t px[12 * 3 * 5], labels[12];
    s_images(px, 12, 3, 5);
    for (int i = 0; i < 12; i++) {
        labels[i] = (uint8_t)(i % 3);
    }
    uint32_t dims[2][3] = {{12, 3, 4}, {6, 3, test_w}};
    char path[2][400];
    for (int set = 0; set < 2; set++) {
        snprintf(path[0], sizeof path[0], "%s/%s", f->dir, stems[2 * set]);
        snprintf(path[1], sizeof path[1], "%s/%s", f->dir, stems[2 * set + 1]);
        support_write_idx(path[0], 0, dims[set], 3, px);
        support_write_idx(path[1], 0, dims[set], 1, set ? test_labels : labels);
    }
    char text[800];
    snprintf(text, sizeof text, "[data]\ndataset = idx\npath = %s\ncache = off\n"
             "train_size = 9\n", f->dir);
    config *c = config_parse_string(text, "p.ini", err);
    assert_non_null(c);
    data_spec s;
    assert_int_equal(data_spec_configure(&s, c, err), 0);
    dataset train, test;
    long n_train;
    int dim, classes;
    error check_err = {0};
    int checked = data_check(&s, &n_train, &dim, &classes, &check_err);
    int rc = data_load(&train, &test, &s, 1, err);
    assert_int_equal(checked, rc);   /* the launcher's check refuses what the load does */
    if (rc == 0) {
        assert_int_equal(train.n, 9);
        assert_int_equal(train.classes, 3);
        assert_int_equal(test.classes, 3);
        assert_true(n_train == train.n && dim == train.dim && classes == train.classes);
        /* the shape servers take from the headers alone */
        assert_int_equal(data_shape(&s, &n_train, &dim, &classes, err), 0);
        assert_true(n_train == train.n && dim == train.dim && classes == train.classes);
        dataset_free(&train);
        dataset_free(&test);
    }
    config_destroy(&c);
    return rc;
}

/* The test set must fit the model trained on the training set: test
 * images of another size (their pixels read as other features) and a test
 * label no training example has (past the model's outputs) are refused,
 * by the load and by data_check alike; data_shape, read from the headers,
 * is the loaded shape (12 features of 3 x 4, not 3 or 4). */
static void test_the_test_set_must_match_training(void **state)
{
    support_fixture *f = *state;
    const uint8_t good[6] = {0, 1, 2, 2, 1, 0}, unseen[6] = {0, 1, 3, 2, 1, 0};
    error err = {0};
    assert_int_equal(s_load_pair(f, 4, good, &err), 0);
    assert_int_equal(s_load_pair(f, 5, good, &err), -1);
    assert_int_equal(err.status, ERROR_USAGE);
    if (!strstr(err.msg, "test examples have 15 features, training examples 12")) {
        fail_msg("error \"%s\"", err.msg);
    }
    assert_int_equal(s_load_pair(f, 4, unseen, &err), -1);
    assert_int_equal(err.status, ERROR_USAGE);
    if (!strstr(err.msg, "label 3 never occurs in training")) {
        fail_msg("error \"%s\"", err.msg);
    }
    /* a test set need not hold every class the training set has (one
     * without class 1 was refused as "corrupt labels") */
    const uint8_t without_one[6] = {0, 2, 2, 2, 0, 0};
    if (s_load_pair(f, 4, without_one, &err) != 0) {
        fail_msg("a test set without class 1: \"%s\"", err.msg);
    }
}

/* f->dir as an idx data set: 12 training images of 3 x 4 with labels
 * train_labels, 6 test images with labels 0 1 2 2 1 0. */
static void s_idx_set(const support_fixture *f, const uint8_t train_labels[12])
{
    static const char *const stems[4] = {
        "train-images-idx3-ubyte", "train-labels-idx1-ubyte",
        "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"};
    static const uint8_t test_labels[6] = {0, 1, 2, 2, 1, 0};
    uint8_t px[12 * 3 * 4];
    s_images(px, 12, 3, 4);
    uint32_t dims[2][3] = {{12, 3, 4}, {6, 3, 4}};
    for (int set = 0; set < 2; set++) {
        char path[400];
        snprintf(path, sizeof path, "%s/%s", f->dir, stems[2 * set]);
        support_write_idx(path, 0, dims[set], 3, px);
        snprintf(path, sizeof path, "%s/%s", f->dir, stems[2 * set + 1]);
        support_write_idx(path, 0, dims[set], 1, set ? test_labels : train_labels);
    }
}

/* data_check and data_load on f->dir with [data] lines `more`: both fail
 * (the launcher's check refuses what the load does) with an error holding
 * want. */
static void s_expect_refused(const support_fixture *f, const char *more, const char *want)
{
    char text[800];
    snprintf(text, sizeof text, "[data]\ndataset = idx\npath = %s\ncache = off\n%s", f->dir,
             more);
    error err = {0};
    config *c = config_parse_string(text, "p.ini", &err);
    assert_non_null(c);
    data_spec s;
    assert_int_equal(data_spec_configure(&s, c, &err), 0);
    long n_train;
    int dim, classes;
    dataset train, test;
    for (int load = 0; load < 2; load++) {
        err = (error){0};
        int rc = load ? data_load(&train, &test, &s, 1, &err)
                      : data_check(&s, &n_train, &dim, &classes, &err);
        if (rc != -1 || err.status != ERROR_USAGE || !strstr(err.msg, want)) {
            fail_msg("%s with \"%s\": %d, \"%s\"", load ? "data_load" : "data_check", more,
                     rc, err.msg);
        }
    }
    config_destroy(&c);
}

/* Test images of another shape with as many pixels (4 x 3 for 3 x 4) are
 * refused: they were evaluated as the training images' shape, a CNN's
 * rows cut and joined anew, without a word. */
static void test_test_images_of_another_shape_are_refused(void **state)
{
    support_fixture *f = *state;
    uint8_t labels[12];
    for (int i = 0; i < 12; i++) {
        labels[i] = (uint8_t)(i % 3);
    }
    s_idx_set(f, labels);
    uint8_t px[6 * 4 * 3];
    s_images(px, 6, 4, 3);
    char path[400];
    snprintf(path, sizeof path, "%s/t10k-images-idx3-ubyte", f->dir);
    const uint32_t turned[3] = {6, 4, 3};
    support_write_idx(path, 0, turned, 3, px);
    s_expect_refused(f, "", "t10k-images-idx3-ubyte: test images are 4 x 3, training images "
                            "3 x 4");
}

/* What the files do not hold is refused, never made up: a test_size past
 * the test file (it was cut to the file's: the run's config.ini said
 * 25,000 test examples, its accuracy was over 10,000), a training file
 * of one class (read on as a regression set of targets 0), and images
 * of 2^31 values or more (the dimension wrapped to a negative int that
 * data_shape and the launcher's check let through). */
static void test_what_the_files_do_not_hold_is_refused(void **state)
{
    support_fixture *f = *state;
    uint8_t labels[12];
    for (int i = 0; i < 12; i++) {
        labels[i] = (uint8_t)(i % 3);
    }
    s_idx_set(f, labels);
    s_expect_refused(f, "test_size = 7\n", "[data] test_size: 7, but the test set holds 6");
    s_expect_refused(f, "train_size = 13\n",
                     "[data] train_size: 13, but the training set holds 12");
    /* a test subset of one class is a test set: it takes the training set's */
    char text[800];
    snprintf(text, sizeof text, "[data]\ndataset = idx\npath = %s\ncache = off\n"
             "test_size = 1\n", f->dir);
    error err = {0};
    config *c = config_parse_string(text, "p.ini", &err);
    data_spec s;
    assert_int_equal(data_spec_configure(&s, c, &err), 0);
    dataset train, test;
    assert_int_equal(data_load(&train, &test, &s, 1, &err), 0);
    assert_true(test.n == 1 && train.classes == 3);
    dataset_free(&train);
    dataset_free(&test);
    config_destroy(&c);
    /* a file both plain and gzip-compressed: which is meant is no guess
     * (the plain one was read, whatever the other held) */
    char both[400];
    snprintf(both, sizeof both, "%s/train-labels-idx1-ubyte.gz", f->dir);
    const uint32_t twelve[1] = {12};
    support_write_idx(both, 1, twelve, 1, labels);
    s_expect_refused(f, "", "both it and train-labels-idx1-ubyte.gz exist");
    remove(both);
    memset(labels, 0, sizeof labels);
    s_idx_set(f, labels);
    s_expect_refused(f, "", "every label is 0: a classification set needs 2 classes");
    s_expect_refused(f, "train_size = 5\n", "the first 5 examples");
    /* one image of 65536 x 32768 bytes: a sparse file, nothing written */
    char path[400];
    snprintf(path, sizeof path, "%s/train-images-idx3-ubyte", f->dir);
    FILE *big = fopen(path, "wb");
    const uint8_t header[16] = {0, 0, 8, 3, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0x80, 0};
    assert_non_null(big);
    assert_int_equal(fwrite(header, 1, 16, big), 16);
    assert_int_equal(fclose(big), 0);
    assert_int_equal(truncate(path, 16 + (off_t)65536 * 32768), 0);
    const uint32_t one[1] = {1};
    snprintf(path, sizeof path, "%s/train-labels-idx1-ubyte", f->dir);
    support_write_idx(path, 0, one, 1, (const uint8_t[]){1});
    snprintf(text, sizeof text, "[data]\ndataset = idx\npath = %s\ncache = off\n", f->dir);
    err = (error){0};
    c = config_parse_string(text, "p.ini", &err);
    assert_int_equal(data_spec_configure(&s, c, &err), 0);
    long n_train;
    int dim, classes;
    assert_int_equal(data_shape(&s, &n_train, &dim, &classes, &err), -1);
    assert_non_null(strstr(err.msg, "2147483648 values an image"));
    config_destroy(&c);
    s_expect_refused(f, "", "2147483648 values an image");
}

/* [data] cache: a word meant as off or auto is refused on its line (as a
 * folder, "false" made ./false and cached the data there), a folder that
 * exists becomes absolute, and auto and off are themselves. */
static void test_the_cache_key_is_auto_off_or_a_folder(void **state)
{
    support_fixture *f = *state;
    const char *cases[][2] = {{"false", "off"}, {"Off", "off"}, {"no", "off"}, {"yes", "auto"},
                              {"AUTO", "auto"}};
    for (int i = 0; i < 5; i++) {
        char text[200], want[120];
        snprintf(text, sizeof text, "[data]\ndataset = synthetic\ncache = %s\n", cases[i][0]);
        error err = {0};
        config *c = config_parse_string(text, "p.ini", &err);
        data_spec s;
        assert_int_equal(data_spec_configure(&s, c, &err), -1);
        snprintf(want, sizeof want, "p.ini:3: [data] cache: \"%s\": auto, off or a folder (did "
                 "you mean %s?)", cases[i][0], cases[i][1]);
        if (!strstr(err.msg, want)) {
            fail_msg("cache = %s: \"%s\"", cases[i][0], err.msg);
        }
        config_destroy(&c);
    }
    char cwd[4096], text[600];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(f->dir), 0);
    mkdir("here", 0755);
    snprintf(text, sizeof text, "[data]\ndataset = synthetic\ncache = here\n");
    error err = {0};
    config *c = config_parse_string(text, "p.ini", &err);
    data_spec s;
    assert_int_equal(data_spec_configure(&s, c, &err), 0);
    char here[4096], want[4200];
    assert_non_null(getcwd(here, sizeof here));   /* f->dir, its links resolved */
    snprintf(want, sizeof want, "%s/here", here);
    assert_string_equal(s.cache, want);
    config_destroy(&c);
    assert_int_equal(chdir(cwd), 0);
}

/* Regression data as data.h states: x ~ N(0, I) and w ~ N(0, I / dim), so
 * that the targets' signal has variance near 1 whatever dim (an unscaled w
 * made it dim); noise adds noise x N(0, 1) to each target and changes
 * nothing else. */
static void test_regression_targets_have_their_scale(void **state)
{
    (void)state;
    enum { N = 4000, DIM = 400 };
    dataset a, ta, b, tb;
    error err = {0};
    assert_int_equal(dataset_regression(&a, &ta, N, 10, DIM, 0.0, 3, &err), 0);
    assert_int_equal(dataset_regression(&b, &tb, N, 10, DIM, 0.5, 3, &err), 0);
    assert_int_equal(a.classes, 1);
    assert_memory_equal(a.x, b.x, (size_t)N * DIM * sizeof *a.x);
    double features = 0, signal = 0, noise = 0;
    for (size_t i = 0; i < (size_t)N * DIM; i++) {
        features += (double)a.x[i] * a.x[i];
    }
    for (int i = 0; i < N; i++) {
        double t = data_target(&a, i), d = data_target(&b, i) - t;
        signal += t * t;
        noise += d * d;
    }
    features /= (double)N * DIM;
    signal /= N;
    noise /= N;
    if (fabs(features - 1) > 0.03 || signal < 0.75 || signal > 1.3 || fabs(noise - 0.25) > 0.05) {
        fail_msg("E[x^2] %g (1), E[t^2] %g (about 1), E[noise^2] %g (0.25)", features, signal,
                 noise);
    }
    dataset *all[4] = {&a, &ta, &b, &tb};
    for (int i = 0; i < 4; i++) {
        dataset_free(all[i]);
    }
}

/* A training set of one value throughout has no spread to divide by:
 * standard leaves its scale (std 1) and only subtracts the mean, where a
 * std of 0 made every feature NaN. */
static void test_standard_keeps_a_constant_set_finite(void **state)
{
    (void)state;
    float x[6] = {0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f}, tx[2] = {0.25f, 1.25f};
    int32_t y[3] = {0, 1, 0}, ty[1] = {1};
    dataset train = {.n = 3, .dim = 2, .classes = 2, .x = x, .y = y};
    dataset test = {.n = 1, .dim = 2, .classes = 2, .x = tx, .y = ty};
    dataset_normalize(&train, &test, NORMALIZE_STANDARD);
    assert_true(train.mean == 0.25 && train.std == 1 && test.std == 1);
    for (int i = 0; i < 6; i++) {
        assert_true(x[i] == 0);
    }
    assert_true(tx[0] == 0 && tx[1] == 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_idx_reads_gz_and_plain_alike, support_fixture_setup, support_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_idx_checks_sizes_before_allocating, support_fixture_setup, support_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_idx_rejects_truncated_files, support_fixture_setup, support_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_idx_rejects_bad_magic_type_and_sizes, support_fixture_setup, support_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_dataset_from_idx_pairs_and_checks, support_fixture_setup, support_fixture_teardown),
        cmocka_unit_test(test_fashion_mnist_loads_with_its_shape),
        cmocka_unit_test_setup_teardown(test_missing_dataset_says_how_to_install, support_fixture_setup, support_fixture_teardown),
        cmocka_unit_test(test_mnist_in_fashion_mnists_folder_is_refused),
        cmocka_unit_test(test_synthetic_is_seeded_and_learnable_shape),
        cmocka_unit_test_setup_teardown(test_normalize_none_keeps_raw_pixels, support_fixture_setup, support_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_idx_header_limits, support_fixture_setup, support_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_the_test_set_must_match_training, support_fixture_setup, support_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_what_the_files_do_not_hold_is_refused, support_fixture_setup, support_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_test_images_of_another_shape_are_refused, support_fixture_setup, support_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_the_cache_key_is_auto_off_or_a_folder, support_fixture_setup, support_fixture_teardown),
        cmocka_unit_test(test_regression_targets_have_their_scale),
        cmocka_unit_test(test_standard_keeps_a_constant_set_finite),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
