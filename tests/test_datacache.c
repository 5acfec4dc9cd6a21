/* test_datacache.c: the data loaded once per host (core/datacache.h). A
 * load through the cache is byte for byte the private load, and read-only;
 * another source or option is another file; a damaged, truncated or
 * foreign file is made again; a folder that cannot be made or a full disk
 * leaves a private copy and loses nothing; processes starting at once make
 * one file; an old unread file, or one abandoned half written, goes when
 * another is made. The data are
 * small IDX files written here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/datacache.h"
#include "support.h"

/* Four IDX files in f->dir: 60 training and 25 test examples of 5 x 4
 * pixels, labels 0..2; `salt` changes the pixels. */
static void s_write_sets(const support_fixture *f, int salt)
{
    static const char *const stems[4] = {
        "train-images-idx3-ubyte", "train-labels-idx1-ubyte",
        "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"};
    for (int set = 0; set < 2; set++) {
        uint32_t n = set ? 25 : 60, dims[3] = {n, 5, 4};
        uint8_t px[60 * 20], labels[60];
        for (uint32_t i = 0; i < n * 20; i++) {
            px[i] = (uint8_t)(i * 37 + 11 + salt);
        }
        for (uint32_t i = 0; i < n; i++) {
            labels[i] = (uint8_t)(i % 3);
        }
        char path[400];
        snprintf(path, sizeof path, "%s/%s", f->dir, stems[2 * set]);
        support_write_idx(path, 0, dims, 3, px);
        snprintf(path, sizeof path, "%s/%s", f->dir, stems[2 * set + 1]);
        support_write_idx(path, 0, dims, 1, labels);
    }
}

/* The spec of those files with `extra` config lines; c is kept for s. */
static data_spec s_spec_of(const support_fixture *f, config **c, const char *dataset,
                           const char *extra)
{
    char text[1024];
    snprintf(text, sizeof text, "[data]\ndataset = %s\npath = %s\ncache = %s/cache\n%s",
             dataset, f->dir, f->dir, extra);
    error err = {0};
    *c = config_parse_string(text, "cache.ini", &err);
    assert_non_null(*c);
    data_spec s;
    assert_int_equal(data_spec_configure(&s, *c, &err), 0);
    return s;
}

static data_spec s_spec(const support_fixture *f, config **c, const char *extra)
{
    return s_spec_of(f, c, "idx", extra);
}

static void s_expect_same(const dataset *a, const dataset *b)
{
    assert_int_equal(a->n, b->n);
    assert_int_equal(a->dim, b->dim);
    assert_int_equal(a->classes, b->classes);
    assert_true(a->mean == b->mean && a->std == b->std);
    assert_memory_equal(a->x, b->x, (size_t)a->n * (size_t)a->dim * sizeof *a->x);
    assert_memory_equal(a->y, b->y, (size_t)a->n * sizeof *a->y);
}

/* Loads s through the cache and checks it against the private load;
 * returns whether the sets came mapped. */
static bool s_load_matches(const data_spec *s)
{
    dataset train, test, private_train, private_test;
    error err = {0};
    assert_int_equal(data_load(&private_train, &private_test, s, 1, &err), 0);
    if (datacache_load(&train, &test, s, 1, &err) != 0) {
        fail_msg("%s", err.msg);
    }
    s_expect_same(&train, &private_train);
    s_expect_same(&test, &private_test);
    bool mapped = train.mapped > 0 && test.mapped > 0;
    dataset_free(&train);
    dataset_free(&test);
    dataset_free(&private_train);
    dataset_free(&private_test);
    return mapped;
}

/* The entries of f's cache folder whose names hold `part`. */
static int s_count(const support_fixture *f, const char *part)
{
    char folder[400];
    snprintf(folder, sizeof folder, "%s/cache", f->dir);
    DIR *d = opendir(folder);
    int n = 0;
    for (struct dirent *e = d ? readdir(d) : NULL; e; e = readdir(d)) {
        n += strstr(e->d_name, part) != NULL;
    }
    if (d) {
        closedir(d);
    }
    return n;
}

static void test_a_cached_load_is_the_private_load(void **state)
{
    support_fixture *f = *state;
    s_write_sets(f, 0);
    config *c;
    data_spec s = s_spec(f, &c, "");
    assert_true(s_load_matches(&s));   /* made, then mapped */
    assert_true(s_load_matches(&s));   /* mapped */
    assert_int_equal(s_count(f, ".bin"), 2);   /* the file and its lock */
    assert_int_equal(s_count(f, ".tmp"), 0);
    char path[4200];
    error err = {0};
    assert_int_equal(datacache_path(&s, path, sizeof path, &err), 0);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    config_destroy(&c);
    /* generated data and cache = off load privately */
    c = config_parse_string("[data]\ndataset = synthetic\ncache = /nonexistent\n", "g.ini", &err);
    assert_int_equal(data_spec_configure(&s, c, &err), 0);
    assert_false(s_load_matches(&s));
    assert_int_equal(datacache_path(&s, path, sizeof path, &err), -1);
    config_destroy(&c);
    s = s_spec(f, &c, "");
    s.cache = "off";
    assert_false(s_load_matches(&s));
    config_destroy(&c);
}

/* The sets are read-only: a write is a fault, not a silent change to what
 * every other process on the host trains on. */
static void test_the_mapped_sets_are_read_only(void **state)
{
    support_fixture *f = *state;
    s_write_sets(f, 0);
    config *c;
    data_spec s = s_spec(f, &c, "");
    dataset train, test;
    error err = {0};
    assert_int_equal(datacache_load(&train, &test, &s, 1, &err), 0);
    assert_true(train.mapped > 0);
    pid_t pid = fork();
    if (pid == 0) {
        /* the fault ends the child: cmocka's handler, inherited, would
         * report it and go on to run the rest of the suite in the child */
        signal(SIGSEGV, SIG_DFL);
        signal(SIGBUS, SIG_DFL);
        train.x[0] = 1.0f;
        _exit(0);
    }
    int status;
    waitpid(pid, &status, 0);
    assert_false(WIFEXITED(status) && WEXITSTATUS(status) == 0);   /* SIGSEGV (ASan: abort) */
    assert_true(train.x[0] != 1.0f);   /* a shared mapping would show the write here */
    dataset_free(&train);
    dataset_free(&test);
    config_destroy(&c);
}

static void test_another_source_or_option_is_another_file(void **state)
{
    support_fixture *f = *state;
    s_write_sets(f, 0);
    config *c1, *c2, *c3;
    data_spec s = s_spec(f, &c1, ""), none = s_spec(f, &c2, "normalize = none\n");
    data_spec scale = s_spec(f, &c3, "normalize = scale\n");
    char a[4200], b[4200], a2[4200], sc[4200];
    error err = {0};
    assert_int_equal(datacache_path(&s, a, sizeof a, &err), 0);
    assert_int_equal(datacache_path(&none, b, sizeof b, &err), 0);
    assert_int_equal(datacache_path(&scale, sc, sizeof sc, &err), 0);
    assert_string_not_equal(a, b);
    assert_string_not_equal(sc, b);   /* none's raw bytes are not scale's byte / 255 */
    assert_true(s_load_matches(&s));
    assert_true(s_load_matches(&scale));
    assert_true(s_load_matches(&none));
    sleep(1);   /* another modification time, whatever the file system keeps */
    s_write_sets(f, 1);
    assert_int_equal(datacache_path(&s, a2, sizeof a2, &err), 0);
    assert_string_not_equal(a, a2);
    assert_true(s_load_matches(&s));   /* the new pixels, not the old file */
    /* rewritten in place with the times set back (touch -r): the same
     * size, inode and mtime, and the cache gave the old pixels */
    static const char *const stems[4] = {
        "train-images-idx3-ubyte", "train-labels-idx1-ubyte",
        "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"};
    struct timespec times[4][2];
    for (int i = 0; i < 4; i++) {
        char path[400];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", f->dir, stems[i]);
        assert_int_equal(stat(path, &st), 0);
        times[i][0] = st.st_atim;
        times[i][1] = st.st_mtim;
    }
    s_write_sets(f, 2);
    for (int i = 0; i < 4; i++) {
        char path[400];
        snprintf(path, sizeof path, "%s/%s", f->dir, stems[i]);
        assert_int_equal(utimensat(AT_FDCWD, path, times[i], 0), 0);
    }
    char a3[4200];
    assert_int_equal(datacache_path(&s, a3, sizeof a3, &err), 0);
    assert_string_not_equal(a2, a3);
    assert_true(s_load_matches(&s));
    config_destroy(&c1);
    config_destroy(&c2);
    config_destroy(&c3);
}

/* Flips one byte at `at` (from the end when negative) or cuts the file
 * to `cut` bytes (cut >= 0). */
static void s_damage(const char *path, long at, long cut)
{
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    if (cut >= 0) {
        assert_int_equal(ftruncate(fd, cut), 0);
    } else {
        off_t where = at >= 0 ? (off_t)at : lseek(fd, 0, SEEK_END) + at;
        unsigned char b;
        assert_int_equal(pread(fd, &b, 1, where), 1);
        b ^= 0x40;
        assert_int_equal(pwrite(fd, &b, 1, where), 1);
    }
    close(fd);
}

static void test_a_damaged_file_is_made_again(void **state)
{
    support_fixture *f = *state;
    s_write_sets(f, 0);
    config *c;
    data_spec s = s_spec(f, &c, "");
    char path[4200];
    error err = {0};
    assert_int_equal(datacache_path(&s, path, sizeof path, &err), 0);
    assert_true(s_load_matches(&s));
    const long damage[][2] = {{-3, -1},        /* a test label */
                              {65536 + 7, -1}, /* a training pixel */
                              {20, -1},        /* the header */
                              {55, -1},        /* the mean, in the header */
                              {0, 70000}};     /* cut short */
    for (int k = 0; k < 5; k++) {
        s_damage(path, damage[k][0], damage[k][1]);
        assert_true(s_load_matches(&s));   /* right, and from a file made again */
    }
    if (geteuid() == 0) {   /* another user's file is not read, but replaced */
        assert_int_equal(chown(path, 1, 1), 0);
        assert_true(s_load_matches(&s));
        struct stat st;
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(st.st_uid, 0);
    }
    config_destroy(&c);
}

static void test_without_a_cache_folder_the_run_goes_on(void **state)
{
    support_fixture *f = *state;
    s_write_sets(f, 0);
    char blocked[400], below[500];
    snprintf(blocked, sizeof blocked, "%s/not-a-folder", f->dir);
    support_write_file(blocked, "a file\n");
    snprintf(below, sizeof below, "%s/sub", blocked);
    config *c;
    data_spec s = s_spec(f, &c, "");
    s.cache = below;
    assert_false(s_load_matches(&s));   /* private, and right */
    config_destroy(&c);
}

/* A disk that fills while the file is written: the load is a private copy,
 * and no partial file is left. Files bigger than 16 KiB cannot be written
 * (RLIMIT_FSIZE, SIGXFSZ ignored: write says EFBIG). */
static void test_a_full_disk_loses_nothing(void **state)
{
    support_fixture *f = *state;
    s_write_sets(f, 0);
    config *c;
    data_spec s = s_spec(f, &c, "");
    pid_t pid = fork();
    if (pid == 0) {
        struct rlimit limit = {16384, 16384};
        signal(SIGXFSZ, SIG_IGN);
        setrlimit(RLIMIT_FSIZE, &limit);
        dataset train, test, private_train, private_test;
        error err = {0};
        bool good = datacache_load(&train, &test, &s, 1, &err) == 0 && train.mapped == 0 &&
                    data_load(&private_train, &private_test, &s, 1, &err) == 0 &&
                    memcmp(train.x, private_train.x, 60 * 20 * sizeof(float)) == 0 &&
                    memcmp(test.y, private_test.y, 25 * sizeof(int32_t)) == 0;
        _exit(good ? 0 : 1);
    }
    int status;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_int_equal(s_count(f, ".tmp"), 0);
    assert_int_equal(s_count(f, ".bin"), 1);   /* the lock only */
    assert_true(s_load_matches(&s));          /* with room, the file is made */
    config_destroy(&c);
}

/* The inode of the cache file this process maps (from /proc/self/maps),
 * 0 when it maps none. */
static unsigned long s_mapped_inode(void)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[4600];
    unsigned long inode = 0;
    while (maps && fgets(line, sizeof line, maps)) {
        unsigned long node;
        char path[4400] = "";
        if (strstr(line, "/cache/data-") &&
            sscanf(line, "%*s %*s %*s %*s %lu %4399s", &node, path) == 2) {
            inode = node;
        }
    }
    if (maps) {
        fclose(maps);
    }
    return inode;
}

/* Six processes starting at once make the file once: all map the very
 * file that stays (without the lock each would write its own and rename
 * it over the others', and they would map different files). */
static void test_processes_starting_at_once_make_one_file(void **state)
{
    support_fixture *f = *state;
    s_write_sets(f, 0);
    config *c;
    data_spec s = s_spec(f, &c, "");
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pids[6];
    for (int k = 0; k < 6; k++) {
        pids[k] = fork();
        if (pids[k] == 0) {
            dataset train, test;
            error err = {0};
            unsigned long inode = 0;
            if (datacache_load(&train, &test, &s, 1, &err) == 0) {
                inode = s_mapped_inode();
            }
            _exit(write(fds[1], &inode, sizeof inode) == (ssize_t)sizeof inode ? 0 : 1);
        }
    }
    close(fds[1]);
    for (int k = 0; k < 6; k++) {
        int status;
        waitpid(pids[k], &status, 0);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    char path[4200];
    error err = {0};
    struct stat st;
    assert_int_equal(datacache_path(&s, path, sizeof path, &err), 0);
    assert_int_equal(stat(path, &st), 0);
    for (int k = 0; k < 6; k++) {
        unsigned long inode;
        assert_int_equal(read(fds[0], &inode, sizeof inode), sizeof inode);
        assert_true(inode == (unsigned long)st.st_ino);
    }
    close(fds[0]);
    assert_int_equal(s_count(f, ".bin"), 2);
    assert_int_equal(s_count(f, ".tmp"), 0);
    assert_true(s_load_matches(&s));
    config_destroy(&c);
}

static void test_an_old_unread_file_goes(void **state)
{
    support_fixture *f = *state;
    s_write_sets(f, 0);
    char old[400], recent[400];
    snprintf(old, sizeof old, "%s/cache", f->dir);
    mkdir(old, 0700);
    snprintf(old, sizeof old, "%s/cache/data-00000000000000aa.bin", f->dir);
    snprintf(recent, sizeof recent, "%s/cache/data-00000000000000bb.bin", f->dir);
    char lone_lock[400], abandoned[400], writing[400];
    snprintf(lone_lock, sizeof lone_lock, "%s/cache/data-00000000000000cc.bin.lock", f->dir);
    snprintf(abandoned, sizeof abandoned, "%s/cache/data-00000000000000dd.bin.7.tmp", f->dir);
    snprintf(writing, sizeof writing, "%s/cache/data-00000000000000ee.bin.8.tmp", f->dir);
    /* the user's own files in a folder data.cache names: never the cache's */
    char theirs[400], their_bin[400];
    snprintf(theirs, sizeof theirs, "%s/cache/data-experiment1.tmp", f->dir);
    snprintf(their_bin, sizeof their_bin, "%s/cache/data-weights.bin", f->dir);
    support_write_file(theirs, "mine");
    support_write_file(their_bin, "mine");
    support_write_file(old, "old");
    support_write_file(recent, "recent");
    support_write_file(lone_lock, "");
    support_write_file(abandoned, "half");
    support_write_file(writing, "half");
    struct timespec month_ago[2] = {{time(NULL) - 30 * 86400, 0}, {time(NULL) - 30 * 86400, 0}};
    struct timespec hours_ago[2] = {{time(NULL) - 7200, 0}, {time(NULL) - 7200, 0}};
    assert_int_equal(utimensat(AT_FDCWD, old, month_ago, 0), 0);
    assert_int_equal(utimensat(AT_FDCWD, lone_lock, month_ago, 0), 0);
    assert_int_equal(utimensat(AT_FDCWD, abandoned, hours_ago, 0), 0);
    assert_int_equal(utimensat(AT_FDCWD, theirs, hours_ago, 0), 0);
    assert_int_equal(utimensat(AT_FDCWD, their_bin, month_ago, 0), 0);
    config *c;
    data_spec s = s_spec(f, &c, "");
    assert_true(s_load_matches(&s));
    assert_int_equal(access(old, F_OK), -1);
    assert_int_equal(access(lone_lock, F_OK), -1);
    assert_int_equal(access(abandoned, F_OK), -1);
    assert_int_equal(access(recent, F_OK), 0);
    assert_int_equal(access(writing, F_OK), 0);   /* perhaps still being written */
    assert_int_equal(access(theirs, F_OK), 0);    /* removed as if abandoned, */
    assert_int_equal(access(their_bin, F_OK), 0);   /* and as if unread */
    config_destroy(&c);
}

/* A cache folder others may write in is not used (a process keeps its own
 * copy, and says so): there another user could hold a file's lock for good
 * (every run waited in silence) or put files of theirs under its names. */
static void test_a_folder_others_may_write_in_is_not_used(void **state)
{
    support_fixture *f = *state;
    s_write_sets(f, 0);
    char folder[400];
    snprintf(folder, sizeof folder, "%s/cache", f->dir);
    assert_int_equal(mkdir(folder, 0700), 0);
    assert_int_equal(chmod(folder, 01777), 0);
    config *c;
    data_spec s = s_spec(f, &c, "");
    assert_false(s_load_matches(&s));   /* private, and right */
    assert_int_equal(s_count(f, "data-"), 0);   /* no lock, no file */
    assert_int_equal(chmod(folder, 0700), 0);
    assert_true(s_load_matches(&s));
    config_destroy(&c);
}

/* How many examples are kept is part of what a file holds: train_size =
 * 30 or test_size = 10 is another file, not the whole sets' (a key without
 * them mapped 60 training examples for 30); so is the dataset's kind. */
static void test_the_sizes_are_part_of_the_key(void **state)
{
    support_fixture *f = *state;
    s_write_sets(f, 0);
    config *c1, *c2, *c3;
    data_spec all = s_spec(f, &c1, ""), train = s_spec(f, &c2, "train_size = 30\n");
    data_spec test = s_spec(f, &c3, "test_size = 10\n");
    char a[4200], b[4200], t[4200];
    error err = {0};
    assert_int_equal(datacache_path(&all, a, sizeof a, &err), 0);
    assert_int_equal(datacache_path(&train, b, sizeof b, &err), 0);
    assert_int_equal(datacache_path(&test, t, sizeof t, &err), 0);
    assert_string_not_equal(a, b);
    assert_string_not_equal(a, t);
    assert_string_not_equal(b, t);
    /* and so is how the files are read: dataset = mnist on the same files
     * (ten classes whatever the labels hold) is another file too */
    char m[4200];
    config *c4;
    data_spec mnist = s_spec_of(f, &c4, "mnist", "");
    assert_int_equal(datacache_path(&mnist, m, sizeof m, &err), 0);
    assert_string_not_equal(a, m);
    config_destroy(&c4);
    assert_true(s_load_matches(&all));
    assert_true(s_load_matches(&train));   /* 30 examples, from a file of its own */
    assert_true(s_load_matches(&test));
    config_destroy(&c1);
    config_destroy(&c2);
    config_destroy(&c3);
}

/* A file is mapped only under the key it was made for: one copied to
 * another option's name (as a colliding hash would) is made again, not
 * taken with the other option's normalisation. */
static void test_a_file_under_another_key_is_made_again(void **state)
{
    support_fixture *f = *state;
    s_write_sets(f, 0);
    config *c1, *c2;
    data_spec standard = s_spec(f, &c1, ""), scale = s_spec(f, &c2, "normalize = scale\n");
    char from[4200], to[4200];
    error err = {0};
    assert_int_equal(datacache_path(&standard, from, sizeof from, &err), 0);
    assert_int_equal(datacache_path(&scale, to, sizeof to, &err), 0);
    assert_true(s_load_matches(&standard));
    assert_int_equal(link(from, to), 0);
    assert_true(s_load_matches(&scale));   /* byte / 255, not standardised */
    config_destroy(&c1);
    config_destroy(&c2);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, support_fixture_setup, \
                                                support_fixture_teardown)
    const struct CMUnitTest tests[] = {
        T(test_a_cached_load_is_the_private_load),
        T(test_the_mapped_sets_are_read_only),
        T(test_another_source_or_option_is_another_file),
        T(test_a_damaged_file_is_made_again),
        T(test_without_a_cache_folder_the_run_goes_on),
        T(test_a_full_disk_loses_nothing),
        T(test_processes_starting_at_once_make_one_file),
        T(test_an_old_unread_file_goes),
        T(test_a_folder_others_may_write_in_is_not_used),
        T(test_the_sizes_are_part_of_the_key),
        T(test_a_file_under_another_key_is_made_again),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
