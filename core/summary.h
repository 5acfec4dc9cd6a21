/* summary.h: a run's summary.json, built one way by every driver.
 *
 * A driver fills the run's identity and writes the summary at once with
 * complete = false; it then feeds in what happened, every evaluation of
 * the centre model (summary_add_eval) and every shard's counters
 * (summary_add_shard: from the shard object in one process, from its
 * ps-K.json across processes), and finishes it (summary_finish) before the
 * last write. A folder whose summary says complete = false is a run that
 * did not finish. */
#ifndef ASGD_SUMMARY_H
#define ASGD_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

#define SUMMARY_STALENESS_BINS 64   /* pushes by staleness 0..62, then 63+ */

/* One shard's counters, as the shard keeps them and as ps-K.json holds
 * them. Times are the driver's clock (wall or virtual seconds). */
enum { SHARD_TIMES = 4 };   /* first_pull_at, last_push_at, resumed_at, started_at */

typedef struct shard_stats {
    int shard;
    uint64_t lo, hi;          /* its range of the parameter vector */
    uint64_t version;         /* updates applied */
    uint64_t samples;         /* examples behind the pushes received */
    uint64_t pushes;          /* applied */
    uint64_t dropped;         /* received but not applied (late sync gradients) */
    uint64_t rejected;        /* malformed messages */
    uint64_t nonfinite;       /* pushes refused for a NaN or infinite value */
    uint64_t foreign;         /* messages refused: their peer does not speak for that worker */
    uint64_t unauthenticated; /* CURVE handshakes refused (unknown keys) */
    uint64_t unread;          /* replies dropped: their peer had stopped reading */
    uint64_t duplicates;      /* pushes sent again, taken once */
    uint64_t injected_drops;  /* data messages to or from it that fault injection
                                 dropped: its replies, and (told at DONE) its peers' */
    uint64_t injected_duplicates; /* the same, sent twice */
    uint64_t restarts;        /* times the shard was restored from a checkpoint after a
                                 failure (--restore) */
    uint64_t resumes;         /* times it was restored to go on with an interrupted run
                                 (--resume): a role-per-process job's resumes */
    uint64_t lost_updates;    /* updates undone by those restorations */
    uint64_t checkpoints;     /* checkpoints written */
    uint64_t checkpoint_us;   /* time spent writing them */
    uint64_t staleness_sum, staleness_max;
    uint64_t histogram[SUMMARY_STALENESS_BINS]; /* the last bin: 63 and above */
    uint64_t bytes_in, bytes_out;   /* every message received and sent, as many times as
                                       sent, a shared segment's values included (they were
                                       the socket bytes alone) */
    uint64_t push_bytes;      /* pushes received: headers and payloads as sent */
    uint64_t push_messages;   /* pushes received (applied, dropped or refused) */
    uint64_t shared_pushes;   /* of those, read from a client's shared segment (shm.h) */
    double first_pull_at;     /* the first worker pull (0: none) */
    double last_push_at;      /* the last push received */
    double resumed_at;        /* the first worker pull since the shard was last resumed
                                 (--resume) or, never resumed, restored from a
                                 checkpoint (0: neither) */
    double trained_s;         /* resumed: the training time before the interruption;
                                 first_pull_at is that long before resumed_at */
    double started_at;        /* when this shard's process started (Unix time; 0: not
                                 known): a role-per-process job's session began no later */
    double read_at;           /* a STATS reply's: the shard's clock when it read these
                                 (Unix time), for its reader to place the times above on
                                 its own clock; 0 elsewhere (ps-K.json, checkpoints) */
    uint32_t clock_of[SHARD_TIMES];   /* per time (first_pull_at, last_push_at,
                                 resumed_at, started_at): the generation of the process
                                 on whose clock it was taken, where it is a checkpoint's
                                 (another host's clock, maybe); 0: this process's */
} shard_stats;

/* The counters as one line of JSON (caller frees), and ps-K.json itself:
 * written whole or not at all; read back, every field checked. */
char *shard_stats_json(const shard_stats *st);
int shard_stats_write(const char *path, const shard_stats *st, error *err);
int shard_stats_read(const char *path, shard_stats *st, error *err);
/* The same from the JSON text itself (a STATS reply), len bytes. */
int shard_stats_parse(const char *text, size_t len, shard_stats *st, error *err);

typedef struct run_summary {
    /* what ran (experiment_summary fills these) */
    const char *algorithm, *label, *model, *mode;
    const char *dataset;        /* its name: fashion-mnist, mnist, idx, synthetic */
    char compress[32];          /* [algorithm] compress, and "+ef" with error feedback */
    const char *data_path;      /* where its files were read from ("" for synthetic) */
    int workers;
    int servers;                /* distributed runs: shards (0: the baseline) */
    long params;
    unsigned long seed;
    double epochs_target;       /* train.epochs */
    char device[160];           /* what computed the gradients: "cpu", "cuda:0 (NAME)" */
    int blas_threads;           /* a computing process's BLAS threads (backend.threads = 0
                                   resolved: OpenBLAS's default on this host) */
    double started_at;          /* Unix time the run began (summary_init) */
    /* what came of it */
    double final_test_acc, best_test_acc, final_test_loss;
    bool diverged;              /* the test loss became non-finite; the run stopped there */
    double time_s;              /* from the first training step to the end of training */
    double startup_s;           /* from the start to the first training step */
    double train_time_s;        /* the part spent training (samples_per_s) */
    double first_pull_at;       /* the shards' earliest first pull and latest last push */
    double last_push_at;        /* (summary_add_shard), for train_time_s */
    double stopped_trained_s;   /* a shard resumed whose clock no worker's pull started
                                   again: the training it holds (every worker had
                                   finished before the interruption) */
    double wall_time_s;         /* wall-clock time of the whole run */
    double epochs;
    long updates;
    long samples;
    double samples_per_s;
    long pushes;                /* pushes applied, over every shard */
    double push_bytes;          /* pushes' bytes on the wire (header and payload), over
                                   every shard; a push through a shared segment counts
                                   its values as float32 on the wire would */
    long push_messages;         /* pushes' parts the shards received (applied, dropped or
                                   refused), over every shard */
    long shared_pushes;         /* of those, the parts read from a client's shared segment
                                   instead of a socket (transport/shm.h) */
    double bytes_per_push;      /* one worker push, all its shards' parts together: the
                                   sum over shards of push_bytes / pushes received */
    double staleness_sum;       /* over the same pushes */
    double staleness_mean;
    long staleness_max;
    long dropped;               /* pushes received but not applied (late sync gradients) */
    long rejected;              /* malformed messages the servers refused */
    long foreign;               /* messages refused for coming from a peer that does not
                                   speak for their worker, over every shard */
    long unauthenticated;       /* CURVE handshakes refused, over every shard */
    long unread;                /* replies dropped for peers that did not read them */
    long nonfinite;             /* pushes refused for a NaN or infinite value (the most
                                   any shard refused: one push reaches every shard) */
    int restarts;               /* processes restarted by the launcher */
    int resumes;                /* times asgd train --resume went on with the run */
    double base_wall_s;         /* resumed: the earlier sessions' part of wall_time_s and */
    double base_startup_s;      /* startup_s (resume_base, which an evaluator restarted in
                                   a session resumed by hand goes on from) */
    long shard_restarts;        /* shard restorations from checkpoints, over every shard */
    long lost_updates;          /* updates those restorations undid (the most of any shard) */
    long duplicates;            /* pushes sent again and taken once, over every shard */
    long injected_drops;        /* messages fault injection dropped ([cluster] drop) */
    long injected_duplicates;   /* messages it sent twice ([cluster] duplicate) */
    long checkpoints;           /* checkpoints written, over every shard */
    double checkpoint_s;        /* time spent writing them, over every shard */
    int shards_missing;         /* shards whose counters were never read (one killed before
                                   it wrote them): the sums over shards leave them out */
    bool uncounted;             /* shard 0's among them: updates, samples, epochs and
                                   samples_per_s are unknown (null in summary.json), not 0 */
    long sim_events;            /* simulated runs: events processed */
    long staleness_histogram[SUMMARY_STALENESS_BINS]; /* pushes of staleness k; the last
                                   bin every push of 63 and above, so a mean taken from
                                   it is below staleness_mean when pushes were staler */
    char inputs[4096];          /* the files the run read, a JSON object of path: checksum
                                   (experiment_summary); "" for none */
    char sessions_before[8192]; /* a resumed run's earlier sessions, a JSON array of what
                                   made each (summary_take_sessions); "" for none */
    char error[1024];           /* why the run is not complete ("" when it is) */
    bool complete;
} run_summary;

/* A summary with no evaluation yet (accuracies and loss NaN). */
void summary_init(run_summary *s);
/* One evaluation of the centre model after `updates` updates: the last is
 * final, the best of those after an update with a finite loss kept (the
 * initial model's is no result of training: a run that never learns has
 * no best above its evaluations; nor is a diverged model's, whatever its
 * NaN parameters score). A non-finite loss marks the run diverged (the
 * driver stops it there) and returns true. */
bool summary_add_eval(run_summary *s, long updates, double loss, double acc);
/* The accuracies of an eval.csv's whole rows (a run going on, or an
 * evaluator restarted): final and best start over (NaN), then each row
 * is taken as summary_add_eval; a last row cut short (no newline) is no
 * row, and none are taken when the file cannot be read. */
void summary_take_evals(run_summary *s, const char *eval_csv);
/* The time, updates and samples of an eval.csv's last whole row; false
 * when it has none or cannot be read. */
bool summary_evals_last_row(const char *eval_csv, double *time_s, long *updates, long *samples);
/* The updates of an eval.csv's last whole row (0 when it has none or
 * cannot be read): shard 0's version as the evaluator last saw it, in the
 * session that wrote it last. */
uint64_t summary_evals_last_updates(const char *eval_csv);
/* A resumed run goes on from shard 0's checkpoint: version `updates`, at
 * training time `t`. Cuts eval.csv from its first row past either (a
 * model the interruption lost: to the microsecond eval.csv writes t) to
 * its end, in place (an evaluator may hold it open to append). Returns
 * the rows cut (0 when the file is missing), or -1 with err set. */
long summary_evals_cut(const char *eval_csv, uint64_t updates, double t, error *err);
/* The one line that says a run diverged, on stderr. */
void summary_say_diverged(const run_summary *s, const char *dir);
/* An interrupted run's summary.json (old, may be NULL) as the earlier
 * sessions of this one: its "sessions", or one made of its own identity
 * where an older summary has none. summary_write lists them, then this
 * session, in "sessions": the first session's command and commit are kept
 * whatever a resume was run with (past sessions_before's size, those after
 * the first go, oldest first). */
struct cJSON;
void summary_take_sessions(run_summary *s, const struct cJSON *old);
/* One shard's counters. Every shard sees every push, so shard 0's
 * version, samples, drops and times stand for the run's updates,
 * samples, dropped pushes and training phase; staleness and malformed
 * messages add up over the shards. */
void summary_add_shard(run_summary *s, const shard_stats *st);
/* The means and rates, once every shard and evaluation is in: staleness
 * mean, epochs over n_train examples, samples/s over train_time_s (where
 * the driver set none: from the shards' earliest first pull to their
 * latest last push). */
void summary_finish(run_summary *s, long n_train);
struct run;
/* The run's end: its metric files closed and checked (run_finish), and
 * whether it is complete: rc == 0 and no file lost data. Returns rc, or -1
 * (err naming the file) when data was lost; s->error says why an
 * incomplete run is so. */
int summary_end(run_summary *s, struct run *r, int rc, error *err);

/* DIR/summary.json, with this process's provenance (provenance.h),
 * written then renamed, so a reader never sees half. */
int summary_write(const char *dir, const run_summary *s, error *err);

#endif
