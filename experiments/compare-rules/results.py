#!/usr/bin/env python3
"""results.py DIR TARGET: the default job's table, in Markdown: for each
rule (its runs grouped by summary.json's label), over its seeds, the mean
± sd of the final test accuracy, of the time until the test accuracy
first reached TARGET (eval.csv; a seed that never did is counted and left
out of the mean), of samples/s and of mean staleness. Rules in the order
of their mean final accuracy, best first."""
import csv
import glob
import json
import os
import statistics
import sys


def spread(values, digits):
    if not values:
        return "-"
    mean = statistics.fmean(values)
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{mean:.{digits}f} ± {sd:.{digits}f}"


def time_to(run_dir, target):
    with open(os.path.join(run_dir, "eval.csv")) as f:
        for row in csv.DictReader(f):
            if float(row["test_acc"]) >= target:
                return float(row["time_s"])
    return None


def main():
    root, target = sys.argv[1], float(sys.argv[2])
    rules = {}
    for path in sorted(glob.glob(os.path.join(root, "*", "summary.json"))):
        with open(path) as f:
            s = json.load(f)
        if not s.get("complete"):
            continue
        if s["algorithm"] != s["label"]:   # a row must be the rule it names
            sys.exit(f"results.py: {path}: label {s['label']} but it ran {s['algorithm']}")
        rules.setdefault(s["label"], []).append((os.path.dirname(path), s))
    first = next(iter(rules.values()))[0][1]
    seeds = max(len(runs) for runs in rules.values())
    print(f"# Every rule, {first['workers']} workers, {first['model']} on {first['dataset']}, "
          f"{first['epochs_target']:g} epochs\n")
    print(f"Mean ± standard deviation over {seeds} seeds of each rule; time to {target} is "
          f"from the first training step, over the seeds that reached it. Host: "
          f"{first['host']} ({first['cpu']}, {first['cores']} cores), asgd "
          f"{first['asgd_version']} at {first['git_commit'][:12]}.\n")
    print(f"| rule | final test accuracy | time to {target} (s) | reached | samples/s "
          f"| mean staleness |")
    print("|---|---|---|---|---|---|")
    rows = []
    for rule, runs in rules.items():
        accs = [s["final_test_acc"] for _, s in runs]
        times = [t for t in (time_to(d, target) for d, _ in runs) if t is not None]
        rows.append((statistics.fmean(accs), rule, accs, times, runs))
    for _, rule, accs, times, runs in sorted(rows, reverse=True):
        print(f"| {rule} | {spread(accs, 4)} | {spread(times, 2)} | {len(times)}/{len(runs)} "
              f"| {spread([s['samples_per_s'] for _, s in runs], 0)} "
              f"| {spread([s['staleness_mean'] for _, s in runs], 2)} |")


if __name__ == "__main__":
    main()
