/* algorithm.h: the update-rule table.
 *
 * A rule is one file in algorithms/ that fills one `algorithm` with
 * designated initializers, plus one line in registry.c. Its worker side is
 * a plain loop over the worker primitives (worker.h: pull, push, gradient,
 * the local optimizer); its server side is handlers that each shard's
 * skeleton calls (server.h): on a push, and to ask whether a deferred pull
 * can be answered. The same functions run in real processes and, later, in
 * the simulator. */
#ifndef ASGD_ALGORITHM_H
#define ASGD_ALGORITHM_H

#include <stdbool.h>
#include <stdint.h>

#include "core/config.h"
#include "core/error.h"
#include "core/optim.h"

#define ALGORITHM_VERSION 1

struct worker;
struct server;

/* The worker field of the evaluator's pulls and DONE: no worker's index
 * (the wire format uses the same value, WIRE_EVALUATOR). */
#define ALGORITHM_EVALUATOR 0xfffffffeu

/* A push as the shard's handler sees it: values cover the shard's range. */
typedef struct push_msg {
    uint32_t worker;
    uint64_t tag;             /* round or clock, as the rule uses it */
    uint64_t base_version;    /* the shard version the worker computed on */
    uint32_t samples;         /* examples behind this push */
    const float *values;
} push_msg;

typedef struct pull_msg {
    uint32_t worker;          /* or ALGORITHM_EVALUATOR */
    uint64_t min_version;
} pull_msg;

/* What configure() is told about the run. */
typedef struct rule_context {
    int workers;
    const optim_spec *optim;  /* [train] optimizer and lr */
} rule_context;

/* What configure() tells the skeleton. The skeleton fills it with defaults
 * first: one server thread, and [train]'s optimizer for both optimizers. */
typedef struct rule_info {
    int server_threads;       /* > 1: pushes are applied concurrently, lock-free */
    optim_spec server_optim;  /* the shards' optimizer (server_step) */
    optim_spec local_optim;   /* the workers' optimizer (worker_local_step) */
} rule_info;

typedef struct algorithm {
    int version;              /* ALGORITHM_VERSION */
    const char *name;
    const char *summary;
    const char *keys;         /* its [algorithm] keys with defaults, for help */
    /* Reads the rule's [algorithm] keys; returns its parameters (released
     * with free()) or NULL with err set. */
    void *(*configure)(config *c, const rule_context *ctx, rule_info *info, error *err);
    /* The worker's loop; 0 when its work is done, -1 when a primitive failed. */
    int (*worker_run)(struct worker *w);
    /* Server side: state for one shard (NULL allowed), released with free(). */
    void *(*server_init)(struct server *s);
    void (*server_on_push)(struct server *s, const push_msg *m);
    bool (*server_pull_ready)(struct server *s, const pull_msg *m);
} algorithm;

/* The registry (registry.c). */
const algorithm *algorithm_find(const char *name);
/* NULL-terminated list of every rule's table, in registry order. */
const algorithm *const *algorithm_all(void);

#endif
