#!/usr/bin/env python3
"""results.py DIR TARGET [SEEDS]: the default job's table, in Markdown: for
each rule (its runs grouped by summary.json's label), over its seeds (with
SEEDS, seeds 1 to SEEDS alone: DIR keeps the runs of earlier calls, which
may have run more; a rule with fewer of them complete says how many), the mean
± sd of the final test accuracy, of the time until the test accuracy
first reached TARGET (eval.csv; a seed that never did is counted and left
out of the mean), of samples/s and of mean staleness. Rules in the order
of their mean final accuracy, best first, a rule with a diverged seed
saying how many (its accuracy is unknown: the mean is the others'); then
every host and build the runs came from."""
import csv
import glob
import json
import math
import os
import statistics
import sys


def spread(values, digits):
    """The mean ± the sample standard deviation of the known values (None,
    a null: a diverged run's accuracy, a summary without a shard's
    counters, left out); of one value, the value alone (its spread is
    unknown, not 0)."""
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    mean = statistics.fmean(values)
    if len(values) == 1:
        return f"{mean:.{digits}f} (one run)"
    return f"{mean:.{digits}f} ± {statistics.stdev(values):.{digits}f}"


def time_to(run_dir, target):
    """The first evaluation of a trained model at or above target; a row
    whose loss is not finite is a diverged model's, whose accuracy is
    whatever argmax makes of NaN parameters, and the untrained model's
    (no updates) is chance: neither reaches anything (as in asgd plot)."""
    with open(os.path.join(run_dir, "eval.csv")) as f:
        for row in csv.DictReader(f):
            if (int(row["updates"]) > 0 and math.isfinite(float(row["test_loss"]))
                    and float(row["test_acc"]) >= target):
                return float(row["time_s"])
    return None


def provenance(rules):
    """Where and by what build the runs were made: every host and commit
    among them, with how many runs each, since run.sh keeps complete runs
    from earlier calls (another build, or another machine) beside new ones;
    naming the first run's alone claimed it for all of them."""
    made = {}
    for runs in rules.values():
        for _, s in runs:
            dirty = " with uncommitted changes" if s.get("git_dirty") else ""
            key = (f"{s['host']} ({s['cpu']}, {s['cores']} cores), asgd "
                   f"{s['asgd_version']} at {s['git_commit'][:12]}{dirty}")
            made[key] = made.get(key, 0) + 1
    if len(made) == 1:
        return f"Host: {next(iter(made))}"
    return "Hosts and builds: " + "; ".join(f"{k} ({n} run{'s' if n > 1 else ''})"
                                        for k, n in made.items())


def main():
    root, target = sys.argv[1], float(sys.argv[2])
    wanted = int(sys.argv[3]) if len(sys.argv) > 3 else None
    rules = {}
    for path in sorted(glob.glob(os.path.join(root, "*", "summary.json"))):
        with open(path) as f:
            s = json.load(f)
        if not s.get("complete") or (wanted and not 1 <= s.get("seed", 0) <= wanted):
            continue
        if s["algorithm"] != s["label"]:   # a row must be the rule it names
            sys.exit(f"results.py: {path}: label {s['label']} but it ran {s['algorithm']}")
        rules.setdefault(s["label"], []).append((os.path.dirname(path), s))
    first = next(iter(rules.values()))[0][1]
    counts = [len(runs) for runs in rules.values()]
    seeds = wanted or max(counts)
    if not wanted and min(counts) < seeds:   # "over 3 seeds" claimed of a rule of 2
        seeds = f"{min(counts)}-{seeds}"
    print(f"# Every rule, {first['workers']} workers, {first['model']} on {first['dataset']}, "
          f"{first['epochs_target']:g} epochs\n")
    plural = "" if seeds == 1 else "s"
    print(f"Mean ± standard deviation over {seeds} seed{plural} of each rule; time to {target} is "
          f"from the first training step, over the seeds that reached it. "
          f"{provenance(rules)}.\n")
    print(f"| rule | final test accuracy | time to {target} (s) | reached | samples/s "
          f"| mean staleness |")
    print("|---|---|---|---|---|---|")
    rows = []
    for rule, runs in rules.items():
        accs = [s["final_test_acc"] for _, s in runs]
        known = [a for a in accs if a is not None]
        times = [t for t in (time_to(d, target) for d, _ in runs) if t is not None]
        rows.append((statistics.fmean(known) if known else -1.0, rule, accs, times, runs))
    for _, rule, accs, times, runs in sorted(rows, key=lambda r: (r[0], r[1]), reverse=True):
        # a diverged seed's accuracy is unknown (null), left out of the mean
        # of the others: said on the row, as the figures' "(diverged)" says
        diverged = sum(1 for _, s in runs if s.get("diverged"))
        if diverged:
            rule = f"{rule} ({diverged} of {len(runs)} diverged: the others' mean)"
        if wanted and len(runs) < wanted:
            rule = f"{rule} ({len(runs)} of {wanted} seeds complete)"
        print(f"| {rule} | {spread(accs, 4)} | {spread(times, 2)} | {len(times)}/{len(runs)} "
              f"| {spread([s['samples_per_s'] for _, s in runs], 0)} "
              f"| {spread([s['staleness_mean'] for _, s in runs], 2)} |")


if __name__ == "__main__":
    main()
