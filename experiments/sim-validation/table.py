#!/usr/bin/env python3
"""The simulator against real processes, rule by rule and worker count by
worker count, from one calibration of this host.

  experiments/sim-validation/table.py [--rules R,R] [--workers 1,2,4,8]
      [--seeds 3] [--epochs 3] [--target 0.82] [--out DIR]

It runs `asgd calibrate` on config.ini once for each rule (its worker
loop's own work and its server step are the rule's), then for every worker
count and seed one real run and one simulated run with [sim] profile =
that calibration, its values given over config.ini's hand-set [sim] keys
(cores: the host's, as the calibration says). For each metric (training time, samples
per second, time to the target test accuracy, mean and 95th-percentile
staleness, final accuracy; the time to target is where the line between
the evaluations on either side crosses it) it prints, per rule and worker count, the real
mean with its spread (min-max over seeds), the simulated mean and the
error of the simulated mean against the real one; then the mean absolute
percentage error (MAPE) of each metric over all rows, and draws the
simulated values against the measured ones (prediction.png, the data in
points.csv). Metrics are read from each run's summary.json and eval.csv.
Run folders go to --out (default runs/sim-validation-table)."""
import argparse
import csv
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
ASGD = os.path.join(ROOT, "build", "asgd")
METRICS = ["train_s", "samples_per_s", "to_target_s", "staleness_mean", "staleness_p95",
           "final_acc"]


def run(args):
    out = subprocess.run([ASGD] + args, cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("asgd %s: %s" % (" ".join(args), out.stderr.strip()))
    return out.stdout.strip().splitlines()[-1]


def all_rules():
    """Every distributed rule, as `asgd help algorithms` lists them (not
    the sequential baseline)."""
    out = subprocess.run([ASGD, "help", "algorithms"], capture_output=True, text=True,
                         check=True).stdout
    rules = []
    for line in out.splitlines():
        if line.startswith("  ") and not line.startswith("   ") and line.split():
            name = line.split()[0]
            if name != "sequential" and name not in rules:
                rules.append(name)
    return rules


def p95(histogram):
    total = sum(histogram)
    seen = 0
    for s, n in enumerate(histogram):
        seen += n
        if seen >= 0.95 * total:
            return s
    return len(histogram) - 1


def metrics(folder, target):
    with open(os.path.join(folder, "summary.json")) as f:
        j = json.load(f)
    reached = float("nan")
    with open(os.path.join(folder, "eval.csv")) as f:
        before = None
        for row in csv.DictReader(f):
            t, acc = float(row["time_s"]), float(row["test_acc"])
            if acc >= target:
                # where the line between the last evaluation below the
                # target and this one crosses it: evaluations come every
                # 0.1 s, which alone would put a 0.25 s time at 0.2 or 0.3
                reached = t
                if before is not None and acc > before[1]:
                    reached = before[0] + (t - before[0]) * (target - before[1]) / (acc - before[1])
                break
            before = (t, acc)
    return {"train_s": j["time_s"], "samples_per_s": j["samples_per_s"],
            "to_target_s": reached, "staleness_mean": j["staleness_mean"],
            "staleness_p95": p95(j["staleness_histogram"]),
            "final_acc": j["final_test_acc"]}


def mean(xs):
    xs = [x for x in xs if x == x]
    return sum(xs) / len(xs) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rules", default=",".join(all_rules()),
                    help="default: every distributed rule asgd lists")
    ap.add_argument("--workers", default="1,2,4,8")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--epochs", type=float, default=3)
    ap.add_argument("--target", type=float, default=0.82)
    ap.add_argument("--out", default=os.path.join(ROOT, "runs", "sim-validation-table"))
    ap.add_argument("--plot", action="store_true",
                    help="only draw prediction.png again from --out's points.csv")
    a = ap.parse_args()
    if a.plot:
        draw(a.out)
        return
    config = os.path.join(HERE, "config.ini")
    os.makedirs(a.out, exist_ok=True)
    print("| rule | workers | " + " | ".join("%s: real (spread) / sim / error" % m
                                             for m in METRICS) + " |")
    print("| --- | --- |" + " --- |" * len(METRICS))
    rows = []
    for rule in a.rules.split(","):
        # the rule's own costs: its worker loop's local work, its server step
        profile = os.path.join(a.out, "profile-%s.ini" % rule)
        subprocess.run([ASGD, "calibrate", config, "-o", profile, "train.algorithm=" + rule],
                       cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        for n in [int(w) for w in a.workers.split(",")]:
            got = {"real": [], "sim": []}
            for seed in range(1, a.seeds + 1):
                common = ["train", config, "experiment.out=" + a.out,
                          "train.algorithm=" + rule, "cluster.workers=%d" % n,
                          "experiment.seed=%d" % seed, "train.epochs=%g" % a.epochs,
                          "eval.every=0.1"]
                got["real"].append(metrics(run(common), a.target))
                sim = common + ["experiment.mode=sim", "sim.profile=" + profile]
                got["sim"].append(metrics(run(sim + profile_keys(profile)), a.target))
            rows.append((rule, n, got))
            print_row(rule, n, got)
    print_mape(rows)
    write_points(rows, a.out)
    draw(a.out)


def write_points(rows, out):
    """points.csv: rule, workers, metric, real mean, min, max, simulated
    mean."""
    data = os.path.join(out, "points.csv")
    with open(data, "w") as f:
        f.write("rule,workers,metric,real,real_min,real_max,sim\n")
        for rule, n, got in rows:
            for m in METRICS:
                real = [r[m] for r in got["real"] if r[m] == r[m]]
                sim = mean([r[m] for r in got["sim"]])
                if real and sim == sim:
                    f.write("%s,%d,%s,%.6g,%.6g,%.6g,%.6g\n" % (rule, n, m, mean(real),
                                                               min(real), max(real), sim))


def draw(out):
    """prediction.png from out/points.csv: simulated against measured, a
    point for each rule and worker count (its bar: the real spread over
    seeds), the diagonal and +-10% drawn, one panel a metric (gnuplot;
    without it, the data alone)."""
    data = os.path.join(out, "points.csv")
    panels = [("train_s", "training time (s)"), ("samples_per_s", "samples/s"),
              ("to_target_s", "time to target accuracy (s)"),
              ("staleness_mean", "mean staleness (updates)")]
    script = ['set terminal pngcairo size 1000,900 font "Sans,10"',
              'set output "%s"' % os.path.join(out, "prediction.png"),
              'set datafile separator ","', "set grid", "set key bottom right font ',9'",
              "set multiplot layout 2,2"]
    for metric, label in panels:
        script += ['set title "%s"' % label, 'set xlabel "measured (mean over seeds)"',
                   'set ylabel "simulated"', "set autoscale",
                   "stats '%s' using (strcol(3) eq '%s' ? $4 : NaN) nooutput" % (data, metric),
                   "lo = STATS_min * 0.8; hi = STATS_max * 1.2",
                   "set xrange [lo:hi]; set yrange [lo:hi]",
                   "plot x with lines lc 'black' title 'exact', "
                   "1.1 * x with lines dt 2 lc 'gray' title '+-10%%', "
                   "0.9 * x with lines dt 2 lc 'gray' notitle, "
                   "'%s' using (strcol(3) eq '%s' ? $4 : NaN):7:5:6 with xerrorbars "
                   "pt 7 ps 0.6 lc rgb '#1f77b4' title 'a rule at a worker count "
                   "(bar: spread over seeds)'" % (data, metric)]
    script.append("unset multiplot")
    try:
        subprocess.run(["gnuplot"], input="\n".join(script), text=True, check=True)
        print("\nfigure: %s; data: %s" % (os.path.join(out, "prediction.png"), data))
    except (OSError, subprocess.CalledProcessError):
        print("\nno figure (gnuplot is missing or failed); data: %s" % data)


def profile_keys(profile):
    """The profile's [sim] keys as overrides: config.ini sets the same keys
    by hand, and a key the experiment gives wins over the profile's."""
    keys, section = [], None
    with open(profile) as f:
        for line in f:
            line = line.strip()
            if line.startswith("["):
                section = line.strip("[]")
            elif section == "sim" and "=" in line and not line.startswith(";"):
                k, v = (x.strip() for x in line.split("=", 1))
                keys.append("sim.%s=%s" % (k, v))
    return keys


def error(sim, real):
    return (sim - real) / real * 100 if real and real == real and sim == sim else float("nan")


def print_row(rule, n, got):
    cells = []
    for m in METRICS:
        real = [r[m] for r in got["real"]]
        sim = mean([r[m] for r in got["sim"]])
        finite = [x for x in real if x == x]
        spread = "%.3g-%.3g" % (min(finite), max(finite)) if finite else "-"
        e = error(sim, mean(real))
        cells.append("%.3g (%s) / %.3g / %s" % (mean(real), spread, sim,
                                               "%+.0f%%" % e if e == e else "-"))
    print("| %s | %d | %s |" % (rule, n, " | ".join(cells)), flush=True)


def print_mape(rows):
    print("\nMAPE over %d rows:" % len(rows))
    for m in METRICS:
        errs = [abs(error(mean([r[m] for r in got["sim"]]), mean([r[m] for r in got["real"]])))
                for _, _, got in rows]
        errs = [e for e in errs if e == e]
        print("  %s: %s" % (m, "%.1f%% (%d rows)" % (sum(errs) / len(errs), len(errs))
                            if errs else "-"))


if __name__ == "__main__":
    main()
