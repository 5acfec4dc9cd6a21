/* simtime.c: parsing [sim] and sampling the time models. */
#include "core/simtime.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const s_models[] = {"constant", "normal", "lognormal", "exponential",
                                       "measured", "null", "empirical", NULL};
static const char *const s_placements[] = {"core", "shared", NULL};

/* The keys a profile may set (the host's costs), with the built-in
 * defaults in def, or a profile's. */
static int s_read_costs(config *c, const sim_spec *def, sim_spec *s, error *err)
{
    char quantiles[SIM_MAX_QUANTILES * 24] = "";
    for (int i = 0; i < def->nquantiles; i++) {
        size_t len = strlen(quantiles);
        snprintf(quantiles + len, sizeof quantiles - len, "%s%.9g", i ? "," : "",
                 def->quantiles[i]);
    }
    if (config_get_enum(c, "sim", "compute", s_models[def->compute], s_models, &s->compute,
                        err) < 0 ||
        config_get_double(c, "sim", "compute_mean", def->compute_mean, 0, 1e6, CONFIG_CLOSED,
                          &s->compute_mean, err) < 0 ||
        config_get_double(c, "sim", "compute_sd", def->compute_sd, 0, 1e6, CONFIG_CLOSED,
                          &s->compute_sd, err) < 0 ||
        config_get_double_list(c, "sim", "compute_quantiles", quantiles, 0, 1e6, s->quantiles,
                               SIM_MAX_QUANTILES, &s->nquantiles, err) < 0 ||
        config_get_double(c, "sim", "latency", def->latency, 0, 1e3, CONFIG_CLOSED,
                          &s->latency, err) < 0 ||
        config_get_double(c, "sim", "jitter", def->jitter, 0, 1e3, CONFIG_CLOSED, &s->jitter,
                          err) < 0 ||
        config_get_double(c, "sim", "bandwidth", def->bandwidth, 1, 1e15, CONFIG_CLOSED,
                          &s->bandwidth, err) < 0 ||
        config_get_double(c, "sim", "apply", def->apply, 0, 1e3, CONFIG_CLOSED, &s->apply,
                          err) < 0 ||
        config_get_double(c, "sim", "answer", def->answer, 0, 1e3, CONFIG_CLOSED, &s->answer,
                          err) < 0 ||
        config_get_double(c, "sim", "compress_cpu", def->compress_cpu, 0, 1e3, CONFIG_CLOSED,
                          &s->compress_cpu, err) < 0 ||
        config_get_double(c, "sim", "decode_cpu", def->decode_cpu, 0, 1e3, CONFIG_CLOSED,
                          &s->decode_cpu, err) < 0 ||
        config_get_int(c, "sim", "cores", def->cores, 0, 1 << 20, &s->cores, err) < 0 ||
        config_get_double(c, "sim", "timeslice", def->timeslice, 0, 1e3, CONFIG_CLOSED,
                          &s->timeslice, err) < 0 ||
        config_get_double(c, "sim", "wakeup", def->wakeup, 0, 1e3, CONFIG_CLOSED, &s->wakeup,
                          err) < 0 ||
        config_get_double(c, "sim", "migration", def->migration, 0, 1e3, CONFIG_CLOSED,
                          &s->migration, err) < 0 ||
        config_get_double(c, "sim", "message_cpu", def->message_cpu, 0, 1e3, CONFIG_CLOSED,
                          &s->message_cpu, err) < 0 ||
        config_get_double(c, "sim", "copy_bandwidth", def->copy_bandwidth, 0, 1e15,
                          CONFIG_CLOSED, &s->copy_bandwidth, err) < 0 ||
        config_get_double(c, "sim", "eval_cost", def->eval_cost, 0, 1e6, CONFIG_CLOSED,
                          &s->eval_cost, err) < 0 ||
        config_get_double(c, "sim", "startup_cpu", def->startup_cpu, 0, 1e6, CONFIG_CLOSED,
                          &s->startup_cpu, err) < 0 ||
        config_get_double(c, "sim", "startup_mean", def->startup_mean, 0, 1e6, CONFIG_CLOSED,
                          &s->startup_mean, err) < 0 ||
        config_get_double(c, "sim", "startup_sd", def->startup_sd, 0, 1e6, CONFIG_CLOSED,
                          &s->startup_sd, err) < 0) {
        return -1;
    }
    if (s->copy_bandwidth > 0 && s->copy_bandwidth < 1) {   /* 0 is free; 1e-300 never ended */
        return config_error(c, "sim", "copy_bandwidth", err, "%g bytes/s: at least 1, or 0 "
                            "for copies that take no time", s->copy_bandwidth);
    }
    if (s->compute == SIM_EMPIRICAL && s->nquantiles < 2) {
        return config_error(c, "sim", "compute", err, "empirical needs at least two "
                            "compute_quantiles (asgd calibrate measures them)");
    }
    for (int i = 1; i < s->nquantiles; i++) {
        if (s->quantiles[i] < s->quantiles[i - 1]) {
            return config_error(c, "sim", "compute_quantiles", err, "must not decrease (%g "
                                "after %g)", s->quantiles[i], s->quantiles[i - 1]);
        }
    }
    return 0;
}

/* empirical draws from the quantiles alone: a mean or sd the experiment
 * gives beside it (over a profile's, or with its own compute = empirical)
 * changed nothing, without a word. (A profile records its measured mean
 * beside its quantiles: def holds what it gave.) A key the compute model
 * does not read is not used (said, and left out of the run's config.ini):
 * compute_sd beside exponential, say, was kept there as if it had shaped
 * the run. */
static int s_check_compute_keys(config *c, const sim_spec *def, const sim_spec *s, error *err)
{
    const char *unused = s->compute_mean != def->compute_mean ? "compute_mean"
                         : s->compute_sd != def->compute_sd   ? "compute_sd" : NULL;
    if (s->compute == SIM_EMPIRICAL && unused) {
        return config_error(c, "sim", unused, err, "compute = empirical%s draws from "
                            "compute_quantiles alone; give compute = constant, normal or "
                            "lognormal with it", def->compute == SIM_EMPIRICAL
                                                     ? " (the profile's)" : "");
    }
    int m = s->compute;
    bool mean = m == SIM_CONSTANT || m == SIM_NORMAL || m == SIM_LOGNORMAL ||
                m == SIM_EXPONENTIAL;   /* measured times its own */
    if (!mean) {
        config_forget_key(c, "sim", "compute_mean");
    }
    if (m != SIM_NORMAL && m != SIM_LOGNORMAL) {
        config_forget_key(c, "sim", "compute_sd");
    }
    if (m != SIM_EMPIRICAL) {
        config_forget_key(c, "sim", "compute_quantiles");
    }
    return 0;
}

/* What a profile says of its host and experiment, kept for the record. */
typedef struct profile_host {
    const char *model, *batch, *algorithm, *params, *device, *host, *date, *servers, *transport;
    const char *compress, *shm;
} profile_host;

static int s_host_key(void *ctx, const char *key, const char *value, int line)
{
    (void)line;
    profile_host *h = ctx;
    const char **slot = strcmp(key, "model") == 0       ? &h->model
                        : strcmp(key, "batch") == 0     ? &h->batch
                        : strcmp(key, "algorithm") == 0 ? &h->algorithm
                        : strcmp(key, "params") == 0    ? &h->params
                        : strcmp(key, "device") == 0    ? &h->device
                        : strcmp(key, "host") == 0      ? &h->host
                        : strcmp(key, "servers") == 0   ? &h->servers
                        : strcmp(key, "transport") == 0 ? &h->transport
                        : strcmp(key, "compress") == 0  ? &h->compress
                        : strcmp(key, "shm") == 0       ? &h->shm
                        : strcmp(key, "date") == 0      ? &h->date : NULL;
    if (slot) {
        *slot = value;
    }
    return 0;
}

/* Counts the [sim] entries (config_each_entry marks none read: a typo
 * in the profile is still one). */
static int s_count_sim_key(void *ctx, const char *section, const char *key, const char *value)
{
    (void)key;
    (void)value;
    *(int *)ctx += strcmp(section, "sim") == 0;
    return 0;
}

/* The defaults [sim] profile gives (the built-in ones without it), and
 * what the profile was measured for into s's profile_ fields. */
static int s_profile_costs(config *c, sim_spec *costs, sim_spec *s, error *err)
{
    const sim_spec builtin = {.compute = SIM_CONSTANT, .compute_mean = 0.001,
                              .latency = 50e-6, .bandwidth = 1.25e9};
    const char *path;
    if (config_get_path(c, "sim", "profile", "", &path, err) < 0) {
        return -1;
    }
    if (!path[0]) {
        *costs = builtin;
        return 0;
    }
    error why = {0};
    config *profile = config_load(path, &why);
    int keys = 0;
    if (profile) {
        config_each_entry(profile, s_count_sim_key, &keys);
    }
    /* an empty file gave the built-in costs without a word */
    int rc = !profile ? -1 : keys == 0 ? error_set(&why, ERROR_USAGE, "%s: no [sim] key: not a "
                                                   "profile (asgd calibrate writes one)", path)
                                       : s_read_costs(profile, &builtin, costs, &why);
    if (rc == 0) {
        profile_host h = {0};
        config_each(profile, "host", s_host_key, &h);
        snprintf(s->profile_model, sizeof s->profile_model, "%s", h.model ? h.model : "");
        snprintf(s->profile_algorithm, sizeof s->profile_algorithm, "%s",
                 h.algorithm ? h.algorithm : "");
        snprintf(s->profile_device, sizeof s->profile_device, "%s", h.device ? h.device : "");
        s->profile_batch = h.batch ? atol(h.batch) : 0;
        s->profile_params = h.params ? atol(h.params) : 0;
        s->profile_servers = h.servers ? atol(h.servers) : 0;
        snprintf(s->profile_transport, sizeof s->profile_transport, "%s",
                 h.transport ? h.transport : "");
        snprintf(s->profile_compress, sizeof s->profile_compress, "%s",
                 h.compress ? h.compress : "");
        snprintf(s->profile_shm, sizeof s->profile_shm, "%s", h.shm ? h.shm : "");
        snprintf(s->profile_host, sizeof s->profile_host, "%s on %s", h.host ? h.host : "a host",
                 h.date ? h.date : "a day it does not say");
        rc = config_check_unused(profile, NULL, NULL, NULL, &why);
    }
    config_destroy(&profile);
    return rc < 0 ? config_fail(c, "sim", "profile", err, "%s", why.msg) : 0;
}

/* "K@T1" or "K@T1-T2", comma-separated, into windows; with shards > 0,
 * "psK@..." names shard K instead of worker K. */
static int s_parse_windows(config *c, const char *key, const char *text, int workers,
                           int shards, bool need_end, sim_window *out, int *n, error *err)
{
    *n = 0;
    config_mark_list(c, "sim", key);
    const char *p = text;
    while (*p) {
        while (*p == ' ') {
            p++;
        }
        if (!*p) {
            break;
        }
        const char *item = p;
        bool shard = shards > 0 && strncmp(p, "ps", 2) == 0;
        p += shard ? 2 : 0;
        char *end;
        long k = strtol(p, &end, 10);
        if (end == p || *end != '@' || !isdigit((unsigned char)*p)) {
            return config_error(c, "sim", key, err, "expected %s@T1-T2 items, got \"%s\"",
                                shards > 0 ? "WORKER or psSHARD" : "WORKER", item);
        }
        if (k < 0 || k >= (shard ? shards : workers)) {
            return config_error(c, "sim", key, err, "%s %ld does not exist (%d %s)",
                                shard ? "shard" : "worker", k, shard ? shards : workers,
                                shard ? "shards" : "workers");
        }
        p = end + 1;
        double from, to = -1;
        if (!config_parse_number_at(p, &end, &from) || from < 0) {
            return config_error(c, "sim", key, err, "bad time in \"%s\"", text);
        }
        p = end;
        if (*p == '-') {
            if (!config_parse_number_at(p + 1, &end, &to)) {
                return config_error(c, "sim", key, err, "bad time in \"%s\"", text);
            }
            if (!(to > from)) {
                return config_error(c, "sim", key, err, "the end of a window must come after "
                                    "its start, in \"%s\"", text);
            }
            p = end;
        } else if (need_end) {
            return config_error(c, "sim", key, err, "expected WORKER@T1-T2, got \"%s\"", text);
        }
        while (*p == ' ') {
            p++;
        }
        if (*p && *p != ',') {
            return config_error(c, "sim", key, err, "unexpected \"%s\"", p);
        }
        if (*n == SIM_MAX_EVENTS_LISTED) {
            return config_error(c, "sim", key, err, "more than %d items", SIM_MAX_EVENTS_LISTED);
        }
        out[(*n)++] = (sim_window){.index = (int)k, .shard = shard, .from = from, .to = to};
        if (*p == ',') {
            p++;
            while (*p == ' ') {
                p++;
            }
            if (!*p) {   /* "0@1-2,": an item missing, not none */
                return config_error(c, "sim", key, err, "a comma with no item after it, in "
                                    "\"%s\"", text);
            }
        }
    }
    return 0;
}

int sim_spec_configure(sim_spec *s, config *c, int workers, int shards, unsigned long seed,
                       error *err)
{
    memset(s, 0, sizeof *s);
    s->workers = workers;
    const char *pause, *fail, *trace_path;
    int nspeed;
    double *given = malloc((size_t)workers * sizeof *given);
    s->speed = malloc((size_t)workers * sizeof *s->speed);
    if (!given || !s->speed) {
        free(given);
        return error_set(err, ERROR_RUNTIME, "sim: out of memory");
    }
    int rc = -1;
    sim_spec costs;
    if (s_profile_costs(c, &costs, s, err) < 0 || s_read_costs(c, &costs, s, err) < 0 ||
        s_check_compute_keys(c, &costs, s, err) < 0 ||
        config_get_double_list(c, "sim", "speed", "", 1e-6, 1e6, given, workers, &nspeed,
                               err) < 0 ||
        config_get_double(c, "sim", "shard_bandwidth", 0, 0, 1e15, CONFIG_CLOSED,
                          &s->shard_bandwidth, err) < 0 ||
        config_get_double(c, "sim", "straggler_fraction", 0, 0, 1, CONFIG_CLOSED,
                          &s->straggler_fraction, err) < 0 ||
        config_get_double(c, "sim", "straggler_slowdown", 4, 1, 1e6, CONFIG_CLOSED,
                          &s->straggler_slowdown, err) < 0 ||
        config_get_enum(c, "sim", "placement", "core", s_placements, &s->placement, err) < 0 ||
        config_get_string(c, "sim", "pause", "", &pause, err) < 0 ||
        config_get_string(c, "sim", "fail", "", &fail, err) < 0 ||
        config_get_path(c, "sim", "trace", "", &trace_path, err) < 0) {
        goto done;
    }
    error why = {0};
    if (trace_path[0] && trace_load(&s->trace, trace_path, &why) < 0) {
        config_fail(c, "sim", "trace", err, "%s", why.msg);
        goto done;
    }
    if (s->shard_bandwidth > 0 && s->shard_bandwidth < 1) {   /* 1e-300 never ended */
        config_error(c, "sim", "shard_bandwidth", err, "%g bytes/s: at least 1, or 0 for no "
                     "link of the shard's own", s->shard_bandwidth);
        goto done;
    }
    if (nspeed != 0 && nspeed != workers) {
        config_error(c, "sim", "speed", err, "%d factors for %d workers (give one per worker, "
                     "or none)", nspeed, workers);
        goto done;
    }
    if ((s->compute == SIM_NORMAL || s->compute == SIM_LOGNORMAL) && s->compute_mean <= 0) {
        config_error(c, "sim", "compute_mean", err, "must be above 0 for compute = %s",
                     s_models[s->compute]);
        goto done;
    }
    if (s_parse_windows(c, "pause", pause, workers, 0, true, s->pauses, &s->npauses, err) < 0 ||
        s_parse_windows(c, "fail", fail, workers, shards, false, s->failures, &s->nfailures,
                        err) < 0) {
        goto done;
    }
    for (int k = 0; k < workers; k++) {
        s->speed[k] = nspeed ? given[k] : 1.0;
    }
    /* the slow ones: a seeded choice, the same for every rule */
    int slow = (int)ceil(s->straggler_fraction * workers - 1e-9);
    uint32_t *order = malloc((size_t)workers * sizeof *order);
    if (!order) {
        error_set(err, ERROR_RUNTIME, "sim: out of memory");
        goto done;
    }
    for (int k = 0; k < workers; k++) {
        order[k] = (uint32_t)k;
    }
    rng r = rng_derive(seed, RNG_SIM, 0);
    rng_shuffle(&r, order, (size_t)workers);
    for (int i = 0; i < slow; i++) {
        s->speed[order[i]] *= s->straggler_slowdown;
    }
    for (int k = 0; s->trace.n > 0 && k < workers; k++) {
        s->speed[k] *= trace_device_of(&s->trace, k)->speed;
    }
    free(order);
    rc = 0;
done:
    free(given);
    if (rc < 0) {
        sim_spec_free(s);
    }
    return rc;
}

void sim_spec_free(sim_spec *s)
{
    free(s->speed);
    s->speed = NULL;
    trace_free(&s->trace);
}

double sim_compute_time(const sim_spec *s, int k, rng *r)
{
    double m = s->compute_mean, sd = s->compute_sd, t;
    switch (s->compute) {
    case SIM_NORMAL:
    case SIM_MEASURED:
        t = fmax(0, m + sd * rng_normal(r));
        break;
    case SIM_LOGNORMAL: {
        double sigma2 = log(1 + sd * sd / (m * m));
        t = exp(log(m) - sigma2 / 2 + sqrt(sigma2) * rng_normal(r));
        break;
    }
    case SIM_EXPONENTIAL: {
        double u;
        do {
            u = rng_uniform(r);
        } while (u <= 0);
        t = -m * log(u);
        break;
    }
    case SIM_NULL:
        t = 0;
        break;
    case SIM_EMPIRICAL: {   /* the inverse of the measured distribution, linear between */
        double at = rng_uniform(r) * (s->nquantiles - 1);
        int i = (int)at;
        i = i < s->nquantiles - 1 ? i : s->nquantiles - 2;
        t = s->quantiles[i] + (s->quantiles[i + 1] - s->quantiles[i]) * (at - i);
        break;
    }
    default:
        t = m;
        break;
    }
    return t * s->speed[k];
}

/* The mean of the samples' quantile function (x[i] over probabilities
 * [i / n, (i + 1) / n)) between probabilities lo and hi. */
static double s_mean_between(const double *x, int n, double lo, double hi)
{
    double sum = 0;
    for (int i = 0; i < n; i++) {
        double a = fmax(lo, (double)i / n), b = fmin(hi, (double)(i + 1) / n);
        sum += b > a ? x[i] * (b - a) : 0;
    }
    return sum / (hi - lo);
}

void sim_quantiles_of(const double *sorted, int n, double *q, int nq)
{
    for (int k = 0; k < nq; k++) {
        double at = (double)k / (nq - 1) * (n - 1);
        int i = (int)at < n - 1 ? (int)at : n - 2;
        q[k] = sorted[i] + (sorted[i + 1] - sorted[i]) * (at - i);
    }
    double step = 1.0 / (nq - 1);
    double low = s_mean_between(sorted, n, 0, step), high = s_mean_between(sorted, n, 1 - step, 1);
    q[0] = fmin(q[1], fmax(0, 2 * low - q[1]));
    q[nq - 1] = fmax(q[nq - 2], 2 * high - q[nq - 2]);
}

double sim_copy_time(const sim_spec *s, double bytes)
{
    return s->copy_bandwidth > 0 ? bytes / s->copy_bandwidth : 0;
}

double sim_startup_time(const sim_spec *s, rng *r)
{
    return s->startup_sd > 0 ? fmax(0, s->startup_mean + s->startup_sd * rng_normal(r))
                             : s->startup_mean;
}

double sim_link_bandwidth(const sim_spec *s, int k)
{
    const trace_device *d = s->trace.n > 0 ? trace_device_of(&s->trace, k) : NULL;
    return d && d->bandwidth > 0 ? d->bandwidth : s->bandwidth;
}

double sim_message_time(const sim_spec *s, int k, double bytes, rng *r)
{
    double latency = s->latency;
    if (s->trace.n > 0) {
        const trace_device *d = trace_device_of(&s->trace, k);
        latency = d->latency >= 0 ? d->latency : latency;
    }
    if (s->jitter > 0) {
        latency = fmax(0, latency + s->jitter * rng_normal(r));
    }
    return latency + bytes / sim_link_bandwidth(s, k);
}

double sim_next_pause(const sim_spec *s, int k, double t)
{
    double next = INFINITY;
    for (int i = 0; i < s->npauses; i++) {
        const sim_window *p = &s->pauses[i];
        if (p->index == k && p->from > t && p->from < next) {
            next = p->from;
        }
    }
    return next;
}

double sim_after_pauses(const sim_spec *s, int k, double t)
{
    for (int i = 0; i < s->npauses; i++) {
        const sim_window *p = &s->pauses[i];
        if (p->index == k && t >= p->from && t < p->to) {
            t = p->to;
            i = -1;   /* a later window may start where this one ends */
        }
    }
    return t;
}
