#!/usr/bin/env python3
"""Writes a synthetic device trace for sim.trace and cluster.trace.

The format is core/trace.h's: one device per row, with its compute speed
factor, its link's bandwidth (bytes/s) and latency (s), and the intervals in
which it is away. The devices are drawn as FedScale's traces show them:
speeds lognormal around 1 (so a few devices are several times slower),
bandwidths lognormal around a median, latencies uniform, and a fraction of
the devices that come and go, on for exponential times (mean --on seconds)
and away for exponential times (mean --off seconds), up to --duration.

  scripts/trace.py DEVICES [--seed S] [--speed-sigma 0.5] [--bandwidth 1e8]
                   [--bandwidth-sigma 1] [--latency 0.001:0.05]
                   [--away-fraction 0.25] [--on 2] [--off 0.5]
                   [--duration 60] [-o FILE]

The same arguments and seed write the same file."""
import argparse
import math
import random
import sys


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("devices", type=int)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--speed-sigma", type=float, default=0.5,
                   help="sigma of log(speed factor); 0: all devices alike")
    p.add_argument("--bandwidth", type=float, default=1e8, help="median bytes/s")
    p.add_argument("--bandwidth-sigma", type=float, default=1.0)
    p.add_argument("--latency", default="0.001:0.05", help="MIN:MAX seconds, uniform")
    p.add_argument("--away-fraction", type=float, default=0.25,
                   help="share of the devices that come and go")
    p.add_argument("--on", type=float, default=2.0, help="mean seconds on, between absences")
    p.add_argument("--off", type=float, default=0.5, help="mean seconds of an absence")
    p.add_argument("--duration", type=float, default=60.0, help="seconds the trace covers")
    p.add_argument("-o", "--output", default="-")
    a = p.parse_args()
    lo, hi = (float(x) for x in a.latency.split(":"))
    if a.devices < 1 or a.on <= 0 or a.off <= 0 or not 0 <= a.away_fraction <= 1 or lo > hi:
        p.error("devices >= 1, --on and --off > 0, --away-fraction in [0, 1], "
                "--latency MIN <= MAX")
    r = random.Random(a.seed)
    away = set(r.sample(range(a.devices), round(a.away_fraction * a.devices)))
    lines = ["# asgd device trace: scripts/trace.py " + " ".join(sys.argv[1:]),
             "device,speed,bandwidth,latency,off"]
    for d in range(a.devices):
        speed = math.exp(r.gauss(0, a.speed_sigma))
        bandwidth = a.bandwidth * math.exp(r.gauss(0, a.bandwidth_sigma))
        latency = r.uniform(lo, hi)
        intervals = []
        t = r.expovariate(1 / a.on)
        while d in away and t < a.duration:
            end = t + max(r.expovariate(1 / a.off), 1e-3)
            intervals.append("%.9g-%.9g" % (t, end))
            t = end + r.expovariate(1 / a.on)
        lines.append("%d,%.4g,%.4g,%.4g,%s" % (d, speed, bandwidth, latency, " ".join(intervals)))
    text = "\n".join(lines) + "\n"
    if a.output == "-":
        sys.stdout.write(text)
    else:
        with open(a.output, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
