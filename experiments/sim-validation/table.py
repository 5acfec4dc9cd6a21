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
Run folders go to --out (default runs/sim-validation-table), with the
calibrations (calibrations-STAMP/profile-RULE.ini, this call's, copied to
profile-RULE.ini), the settings (settings.json, naming them and the run
folders this table is of), the table (table.md) and the points. The
settings, the copies and the points are written together, once every run
is done: a call stopped part way left its settings and some calibrations
beside the last call's points, which --resim then compared without a word
(another number of epochs: a MAPE of 69%).

  experiments/sim-validation/table.py --resim [--out DIR] [--sim KEY=VALUE ...] [--save]

runs the simulated side again, from DIR's own calibrations and settings,
against the real means its points.csv keeps (no real run, no
calibration): a change to the simulator, or a [sim] key given with --sim,
is judged against the same real runs and the same calibration (ASGD=PATH
runs another build). It prints the table and the MAPE; DIR's files are
left as they are, unless --save writes DIR's table.md, points.csv and
figure again with the new simulated column (the real columns kept).

  experiments/sim-validation/table.py --rescore [--out DIR]

makes DIR's table.md, points.csv and figure again from the run folders
of DIR's last complete table (settings.json names them; an older table's,
which does not, from the newest of each), as the metrics are defined now:
a stopped call's runs are not mixed in.

Beside each MAPE: the error a simulator that predicted every mean exactly
would still show, from the spread of the seeds alone (real and
simulated: each mean is over a few seeds), so that a MAPE near it says
the rest is the host's noise, not the model.

A metric is compared only where every run of the row has it, real and
simulated: a run that never reaches the target accuracy has no time to
target, and a mean over the seeds that happened to reach it is not the
mean of the row (the seeds that reach it first are the fast ones). Such a
row shows how many runs of each mode have the metric, and the MAPE names
it among the rows it leaves out. A run that diverged stopped there: it
has no training time, rate, time to target or final accuracy of the
row's run (only its staleness counts)."""
import argparse
import csv
import glob
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
ASGD = os.environ.get("ASGD", os.path.join(ROOT, "build", "asgd"))   # ASGD=PATH: another build
NAN = float("nan")
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
            # the untrained model's accuracy is chance, a diverged one's
            # no model's: neither reaches the target
            trained = int(row["updates"]) > 0 and math.isfinite(float(row["test_loss"]))
            if trained and acc >= target:
                # where the line between the last evaluation below the
                # target and this one crosses it: evaluations come every
                # 0.1 s, which alone would put a 0.25 s time at 0.2 or 0.3
                reached = t
                if before is not None and acc > before[1]:
                    reached = before[0] + (t - before[0]) * (target - before[1]) / (acc - before[1])
                break
            before = (t, acc)
    got = {"train_s": number(j["time_s"]), "samples_per_s": number(j["samples_per_s"]),
           "to_target_s": reached, "staleness_mean": number(j["staleness_mean"]),
           "staleness_p95": p95(j["staleness_histogram"]),
           "final_acc": number(j["final_test_acc"])}
    if j.get("diverged"):
        # it stopped where it diverged: its time and rate are a shorter
        # run's than the row's, its accuracy is unknown (null); its
        # staleness, of the updates it made, still compares
        for m in ("train_s", "samples_per_s", "to_target_s", "final_acc"):
            got[m] = NAN
    return got


def number(x):
    """A summary's number; NaN for its null."""
    return float("nan") if x is None else float(x)


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
    ap.add_argument("--resim", action="store_true",
                    help="only the simulated runs again, against --out's real means")
    ap.add_argument("--sim", nargs="*", default=[], metavar="KEY=VALUE",
                    help="with --resim: overrides for every simulated run")
    ap.add_argument("--save", action="store_true",
                    help="with --resim: write table.md, points.csv and the figure of "
                         "--out again with the new simulated column")
    ap.add_argument("--rescore", action="store_true",
                    help="only table.md, points.csv and the figure again from --out's runs")
    a = ap.parse_args()
    a.out = os.path.abspath(a.out)   # the runs are made elsewhere: --out . named no profile
    need = "points.csv" if a.plot else "settings.json"
    if (a.plot or a.rescore or a.resim) and not os.path.exists(os.path.join(a.out, need)):
        sys.exit("table.py: %s has no %s: it is not a folder a table run made (run "
                 "./table.py first, or give --out such a folder, e.g. --out %s)" %
                 (a.out, need, os.path.relpath(os.path.dirname(os.path.abspath(__file__)))))
    if a.plot:
        draw(a.out)
        return
    if a.rescore:
        rescore(a.out)
        return
    if a.resim:
        resim(a.out, a.sim, a.save)
        return
    config = os.path.join(HERE, "config.ini")
    os.makedirs(a.out, exist_ok=True)
    calibrations = "calibrations-" + time.strftime("%Y%m%d-%H%M%S")   # this call's
    os.makedirs(os.path.join(a.out, calibrations), exist_ok=True)
    settings = {"rules": a.rules.split(","), "workers": [int(w) for w in a.workers.split(",")],
                "seeds": a.seeds, "epochs": a.epochs, "target": a.target,
                "calibrations": calibrations, "runs": []}
    table = Table(os.path.join(a.out, "table.md"))
    rows = []
    for rule in settings["rules"]:
        # the rule's own costs: its worker loop's local work, its server step
        profile = os.path.join(a.out, calibrations, "profile-%s.ini" % rule)
        subprocess.run([ASGD, "calibrate", config, "-o", profile, "train.algorithm=" + rule],
                       cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        for n in settings["workers"]:
            real, sim = [], []
            for seed in range(1, a.seeds + 1):
                common = run_args(a.out, rule, n, seed, a.epochs)
                folders = (run(common), run(sim_args(common, profile)))
                settings["runs"] += [os.path.relpath(d, a.out) for d in folders]
                real.append(metrics(folders[0], a.target))
                sim.append(metrics(folders[1], a.target))
            row = (rule, n, summarize(real, sim, a.seeds))
            rows.append(row)
            table.row(*row)
    table.mape(rows)
    table.done()
    for rule in settings["rules"]:   # the call's files together, once it is whole
        shutil.copyfile(os.path.join(a.out, calibrations, "profile-%s.ini" % rule),
                        os.path.join(a.out, "profile-%s.ini" % rule))
    with open(os.path.join(a.out, "settings.json.new"), "w") as f:
        json.dump(settings, f, indent=1)
    os.replace(os.path.join(a.out, "settings.json.new"), os.path.join(a.out, "settings.json"))
    write_points(rows, a.out)
    draw(a.out)


def run_args(out, rule, n, seed, epochs):
    """One run of the table, real unless sim_args makes it simulated."""
    return ["train", os.path.join(HERE, "config.ini"), "experiment.out=" + out,
            "train.algorithm=" + rule, "cluster.workers=%d" % n, "experiment.seed=%d" % seed,
            "train.epochs=%g" % epochs, "eval.every=0.1"]


def sim_args(common, profile, extra=()):
    return common + ["experiment.mode=sim", "sim.profile=" + profile] + \
        profile_keys(profile) + list(extra)


def sd(xs):
    """The sample standard deviation of xs' values (NaN ones left out);
    NaN with fewer than two."""
    xs = [x for x in xs if x == x]
    if len(xs) < 2:
        return NAN
    m = sum(xs) / len(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


def summarize(real, sim, seeds):
    """For each metric: the real runs' mean, min, max and standard
    deviation, the simulated runs' mean and standard deviation (NaN where
    no run has a value), and how many real and simulated runs have a
    value, of seeds each."""
    out = {}
    for m in METRICS:
        finite = [r[m] for r in real if r[m] == r[m]]
        out[m] = Point(mean(finite), min(finite) if finite else NAN,
                       max(finite) if finite else NAN, mean([r[m] for r in sim]),
                       len(finite), sum(1 for r in sim if r[m] == r[m]), seeds,
                       sd(finite), sd([r[m] for r in sim]))
    return out


class Point:
    """One metric of one row: the real mean, min and max, the simulated
    mean, how many runs of each mode have it, of seeds, and the standard
    deviation over seeds of each mode."""

    def __init__(self, real, lo, hi, sim, real_n, sim_n, seeds, real_sd, sim_sd):
        self.real, self.lo, self.hi, self.sim = real, lo, hi, sim
        self.real_n, self.sim_n, self.seeds = real_n, sim_n, seeds
        self.real_sd, self.sim_sd = real_sd, sim_sd

    def floor(self):
        """The error, in percent, a simulator that predicts each mean
        exactly would still show, from the seeds' spread alone: the
        expected |difference| of two means over real_n and sim_n seeds
        drawn around the same value (normal, with these deviations),
        sqrt(2 / pi) sqrt(real_sd^2 / real_n + sim_sd^2 / sim_n), over
        the real mean. NaN where the error is."""
        e = self.error()
        if e != e or self.real_sd != self.real_sd or self.sim_sd != self.sim_sd:
            return NAN
        spread = math.sqrt(self.real_sd ** 2 / self.real_n + self.sim_sd ** 2 / self.sim_n)
        return math.sqrt(2 / math.pi) * spread / abs(self.real) * 100

    def whole(self):
        """Every run of the row, real and simulated, has the metric."""
        return self.real_n == self.seeds and self.sim_n == self.seeds

    def error(self):
        """The simulated mean's error against the real mean, in percent;
        NaN where the row is not whole or the real mean is 0."""
        return error(self.sim, self.real) if self.whole() else NAN


def resim(out, extra, save=False):
    """The simulated runs of out's table again, from its calibrations and
    settings, against the real means in its points.csv; with save, out's
    table.md, points.csv and figure are made again from them (the real
    columns as they were)."""
    with open(os.path.join(out, "settings.json")) as f:
        settings = json.load(f)
    seeds = settings["seeds"]
    real = {}
    with open(os.path.join(out, "points.csv")) as f:
        for r in csv.DictReader(f):
            if "real_n" not in r:
                sys.exit("%s: points.csv does not say how many real runs had each metric "
                         "(it is older than the counts): --rescore it from the table's runs "
                         "first" % out)
            real[(r["rule"], int(r["workers"]), r["metric"])] = \
                tuple(float(r[k]) for k in ("real", "real_min", "real_max")) + \
                (int(r["real_n"]), float(r.get("real_sd", "nan")))
    with tempfile.TemporaryDirectory() as runs:
        table = Table(os.path.join(out, "table.md") if save else None)
        rows = []
        for rule in settings["rules"]:
            profile = os.path.join(out, settings.get("calibrations", ""), "profile-%s.ini" % rule)
            for n in settings["workers"]:
                sim = [metrics(run(sim_args(run_args(runs, rule, n, seed, settings["epochs"]),
                                            profile, extra)), settings["target"])
                       for seed in range(1, seeds + 1)]
                done = summarize([], sim, seeds)
                got = {}
                for m in METRICS:
                    r, lo, hi, real_n, real_sd = real.get((rule, n, m), (NAN, NAN, NAN, 0, NAN))
                    got[m] = Point(r, lo, hi, done[m].sim, real_n, done[m].sim_n, seeds,
                                   real_sd, done[m].sim_sd)
                row = (rule, n, got)
                rows.append(row)
                table.row(*row)
        table.mape(rows)
        table.done()
    if save:
        write_points(rows, out)
        draw(out)


def started(summary):
    """A run folder's order of starting, from its name: YYYYMMDD-HHMMSS,
    then -1, -2, ... -10 for runs started in the same second (as text,
    "-10" would come before "-2", and "X-1" before "X")."""
    parts = os.path.basename(os.path.dirname(summary)).split("-")
    return (parts[0], parts[1] if len(parts) > 1 else "",
            int(parts[2]) if len(parts) > 2 and parts[2].isdigit() else 0)


def rescore(out):
    """out's table.md, points.csv and figure again from the run folders its
    table left there (the newest run of each rule, worker count, seed and
    mode), with the metrics as they are defined now."""
    with open(os.path.join(out, "settings.json")) as f:
        settings = json.load(f)
    seeds = settings["seeds"]
    runs = {}
    folders = [os.path.join(out, d, "summary.json") for d in settings["runs"]] \
        if "runs" in settings else glob.glob(os.path.join(out, "*", "*", "summary.json"))
    for folder in sorted(folders, key=started):
        with open(folder) as f:
            j = json.load(f)
        key = (j["algorithm"], j["workers"], j["seed"], j["mode"])
        if j["epochs_target"] == settings["epochs"] and j.get("complete"):
            runs[key] = os.path.dirname(folder)        # in order started: the newest wins
    table = Table(os.path.join(out, "table.md"))
    rows = []
    for rule in settings["rules"]:
        for n in settings["workers"]:
            got = {}
            for mode in ("real", "sim"):
                missing = [s for s in range(1, seeds + 1) if (rule, n, s, mode) not in runs]
                if missing:
                    sys.exit("%s: no %s run of %s with %d workers, seed %d" %
                             (out, mode, rule, n, missing[0]))
                got[mode] = [metrics(runs[(rule, n, s, mode)], settings["target"])
                             for s in range(1, seeds + 1)]
            row = (rule, n, summarize(got["real"], got["sim"], seeds))
            rows.append(row)
            table.row(*row)
    table.mape(rows)
    table.done()
    write_points(rows, out)
    draw(out)


def write_points(rows, out):
    """points.csv: rule, workers, metric, real mean, min, max, simulated
    mean (nan where the simulated runs have none), how many real and
    simulated runs have the metric, and the real runs' standard deviation,
    for every metric that some real run has. The figure draws the rows
    where every run has it."""
    data = os.path.join(out, "points.csv")
    with open(data, "w") as f:
        f.write("rule,workers,metric,real,real_min,real_max,sim,real_n,sim_n,real_sd\n")
        for rule, n, got in rows:
            for m in METRICS:
                p = got[m]
                if p.real == p.real:
                    f.write("%s,%d,%s,%.6g,%.6g,%.6g,%.6g,%d,%d,%.6g\n" %
                            (rule, n, m, p.real, p.lo, p.hi, p.sim if p.whole() else NAN,
                             p.real_n, p.sim_n, p.real_sd))


def draw(out):
    """prediction.png from out/points.csv: simulated against measured, a
    point for each rule and worker count (its bar: the real spread over
    seeds), the diagonal and +-10% drawn, one panel a metric, each panel's
    axes spanning its real and simulated values (gnuplot; without it, the
    data alone)."""
    data = os.path.join(out, "points.csv")
    panels = [("train_s", "training time (s)"), ("samples_per_s", "samples/s"),
              ("to_target_s", "time to target accuracy (s)"),
              ("staleness_mean", "mean staleness (updates)"),
              ("staleness_p95", "95th-percentile staleness (updates)"),
              ("final_acc", "final test accuracy")]
    script = ['set terminal pngcairo size 1000,1300 font "Sans,10"',
              'set output "%s"' % os.path.join(out, "prediction.png"),
              'set datafile separator ","', "set grid", "set key top left Left reverse font ',9'",
              "set multiplot layout 3,2"]
    for metric, label in panels:
        # thousands on the axes where the values run to six digits
        script += ['set format x "%s"; set format y "%s"' % (("%.0s%c", "%.0s%c") if metric ==
                                                              "samples_per_s" else ("% g", "% g")),
                   'set title "%s"' % label, 'set xlabel "measured (mean over seeds)"',
                   'set ylabel "simulated"', "set autoscale",
                   # the span of the real ($4) and simulated ($7) means; a
                   # column with no number leaves STATS_ undefined
                   "lo = NaN; hi = NaN", "undefine STATS_*",
                   "stats '%s' using (strcol(3) eq '%s' ? $4 : NaN) nooutput" % (data, metric),
                   "if (exists('STATS_min')) { lo = STATS_min; hi = STATS_max }",
                   "undefine STATS_*",
                   "stats '%s' using (strcol(3) eq '%s' ? $7 : NaN) nooutput" % (data, metric),
                   "if (exists('STATS_min')) { lo = (lo == lo && lo < STATS_min) ? lo : "
                   "STATS_min; hi = (hi == hi && hi > STATS_max) ? hi : STATS_max }",
                   "if (lo != lo) { lo = 0; hi = 1 }",
                   "pad = hi > lo ? (hi - lo) * 0.08 : 0.5; lo = lo - pad; hi = hi + pad",
                   "set xrange [lo:hi]; set yrange [lo:hi]",
                   "plot x with lines lc 'black' title 'exact', "
                   "1.1 * x with lines dt 2 lc 'gray' title '+-10%%', "
                   "0.9 * x with lines dt 2 lc 'gray' notitle, "
                   "'%s' using (strcol(3) eq '%s' ? $4 : NaN):7:5:6 with xerrorbars "
                   "pt 7 ps 0.6 lc rgb '#1f77b4' title 'a rule, a worker count "
                   "(bar: seeds)'" % (data, metric)]
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
    return (sim - real) / real * 100 if real and real == real and sim == sim else NAN


class Table:
    """The table as it is made: printed, and written to path (when given)
    once done() says it is whole (a call stopped part way left the last
    whole table's table.md cut to its header)."""

    def __init__(self, path):
        self.path = path
        self.file = open(path + ".new", "w") if path else None
        self.say("| rule | workers | " + " | ".join("%s: real (spread) / sim / error" % m
                                                  for m in METRICS) + " |")
        self.say("| --- | --- |" + " --- |" * len(METRICS))

    def done(self):
        if self.file:
            self.file.close()
            os.replace(self.path + ".new", self.path)

    def say(self, line):
        print(line, flush=True)
        if self.file:
            self.file.write(line + "\n")
            self.file.flush()

    def row(self, rule, n, got):
        cells = []
        for m in METRICS:
            p = got[m]
            spread = "%.3g-%.3g" % (p.lo, p.hi) if p.real == p.real else "-"
            e = p.error()
            cell = "%.3g (%s) / %.3g / %s" % (p.real, spread, p.sim,
                                              "%+.0f%%" % e if e == e else "-")
            if not p.whole():
                cell += " (in %d of %d real runs, %d of %d simulated)" % (
                    p.real_n, p.seeds, p.sim_n, p.seeds)
            cells.append(cell)
        self.say("| %s | %d | %s |" % (rule, n, " | ".join(cells)))

    def mape(self, rows):
        self.say("\nMAPE over %d rows:" % len(rows))
        for m in METRICS:
            errs = [abs(got[m].error()) for _, _, got in rows]
            errs = [e for e in errs if e == e]
            floors = [got[m].floor() for _, _, got in rows if got[m].error() == got[m].error()]
            partial = ["%s %d (%d and %d of %d)" % (rule, n, got[m].real_n, got[m].sim_n,
                                                    got[m].seeds)
                       for rule, n, got in rows if not got[m].whole()]
            # a real mean of 0 has no percentage error: say how many, and
            # name those the simulator did not also put at 0
            zero = [(rule, n, got[m].sim) for rule, n, got in rows
                    if got[m].whole() and got[m].real == 0]
            zero_off = ["%s %d (simulated %.3g)" % z for z in zero if z[2] != 0]
            line = "%.1f%% (%d rows)" % (sum(errs) / len(errs), len(errs)) if errs else "-"
            if errs and all(x == x for x in floors):
                line += "; from the seeds' spread alone, about %.1f%%" % (sum(floors) /
                                                                           len(floors))
            if zero:
                line += "; left out, real mean 0: %d rows, %d of them simulated 0 too" % (
                    len(zero), len(zero) - len(zero_off))
                if zero_off:
                    line += " (not: " + ", ".join(zero_off) + ")"
            if partial:
                line += "; left out, where not every run has it (real and simulated " \
                        "runs that do): " + ", ".join(partial)
            self.say("  %s: %s" % (m, line))


if __name__ == "__main__":
    main()
