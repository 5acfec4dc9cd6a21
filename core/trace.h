/* trace.h: device traces, heterogeneity from a file, in the spirit of
 * FedScale's device traces.
 *
 * A trace is a CSV file, one device per row, '#' lines are comments:
 *
 *   device,speed,bandwidth,latency,off
 *   0,1.0,1.25e9,0.0001,
 *   1,3.5,2e7,0.02,0.5-1.5 4-4.25
 *
 *   device     0, 1, 2, ... in order
 *   speed      compute time factor (2: each minibatch takes twice as long),
 *              1e-06 to 1e+06
 *   bandwidth  bytes per second of the device's link (empty: [sim]'s)
 *   latency    seconds a message of the device takes before its bytes
 *              (empty: [sim]'s)
 *   off        when the device is away: FROM-TO intervals in seconds from
 *              the run's start, separated by spaces, in order, none
 *              overlapping the next (one may end where the next begins)
 *
 * Worker k is device k mod the trace's rows, so a trace of 100 devices
 * serves any number of workers. scripts/trace.py writes synthetic ones.
 *
 * In the simulator (sim.trace), speed multiplies the worker's compute
 * time (with [sim] speed and stragglers), bandwidth and latency set its
 * messages' time on the wire, and a device that goes away leaves the run
 * at once: the step or the local steps it had not pushed are lost, as are
 * its requests in flight, and when it is back it rejoins as a new process
 * would (it pulls the model and takes up what remains of its share). Real
 * workers (cluster.trace) replay the speed and the off intervals by
 * sleeping: after each minibatch (speed - 1) times its compute time, and
 * through an off interval before the next, keeping what they hold. A real
 * worker knows no run-wide clock: its trace time starts at its own first
 * minibatch (a restarted process starts it again), whereas the
 * simulator's starts at the run's time 0, before start-up delays. */
#ifndef ASGD_TRACE_H
#define ASGD_TRACE_H

#include <stdbool.h>

#include "core/error.h"

typedef struct trace_device {
    double speed;
    double bandwidth;          /* 0: the run's */
    double latency;            /* < 0: the run's */
    double *off_from, *off_to; /* the off intervals, in order */
    int noff;
} trace_device;

typedef struct trace {
    trace_device *devices;
    int n;
} trace;

/* Reads path; a malformed file is ERROR_USAGE naming file, line and
 * column. */
int trace_load(trace *t, const char *path, error *err);
void trace_free(trace *t);
/* Worker k's device. */
const trace_device *trace_device_of(const trace *t, int k);
/* Whether the device is away at time at; *until is then when it is back:
 * the end of the last of the intervals that follow on one another from
 * at (0.01-0.2 0.2-0.4: away from 0.1 until 0.4, not 0.2). */
bool trace_away(const trace_device *d, double at, double *until);

#endif
