/* datacache.h: the data loaded once per host.
 *
 * The decoded, normalised training and test sets of an IDX source
 * (fashion-mnist, mnist, idx) are kept in a cache file that every process
 * on the host maps read-only (mmap, MAP_SHARED): sixteen workers and the
 * evaluator hold one copy of the data in memory, not seventeen.
 *
 * The file is named by a hash of what it was made from (each IDX file's
 * path, device, inode, size and modification time; train_size, test_size
 * and normalize), made once, under an exclusive lock, by the first process
 * that needs it (written aside, then renamed into place), and checked
 * whenever it is mapped: owned by this user, its header's own CRC, its size,
 * and a CRC-32 of each set. A file that fails a check is made again. Making
 * one removes the folder's others that nothing has read for two weeks (the
 * cache's own names only). A folder others may write in, or another user
 * owns, is not used; nor is a file another process is making after ten
 * minutes' wait: the process loads a private copy, saying why.
 * Generated data (synthetic, regression) is not cached: a seed makes it.
 *
 * data.cache = auto (the default) puts the files in $ASGD_CACHE_DIR, else
 * $XDG_CACHE_HOME/asgd, else $HOME/.cache/asgd, else /tmp/asgd-cache-UID;
 * a folder puts them there; off loads a private copy in each process. */
#ifndef ASGD_DATACACHE_H
#define ASGD_DATACACHE_H

#include "core/data.h"
#include "core/error.h"

/* Loads train and test as data_load does, through the cache where the
 * source is a file and the cache is on; the sets are then read-only
 * (dataset.mapped > 0). Where the cache cannot be made or read (a folder
 * that cannot be made, a full disk), says why on stderr and loads a
 * private copy: the run goes on. -1 only where data_load fails. */
int datacache_load(dataset *train, dataset *test, const data_spec *s, unsigned long seed,
                   error *err);

/* The cache file for s (in the folder data.cache names), written into
 * path; -1 with err set where s is not cached. For tests and tools. */
int datacache_path(const data_spec *s, char *path, size_t n, error *err);

#endif
