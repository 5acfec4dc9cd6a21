#!/usr/bin/env python3
"""results.py TARGET SEEDS RUN_DIR...: the default job's table, in
Markdown, of the run folders given (this call's: run.sh draws its figures
of the same ones; a folder of earlier calls may keep other runs, which were
averaged in without a word): for each rule (its runs grouped by
summary.json's label), over its SEEDS seeds (a rule with fewer complete
says how many, one with none is a row that says so), the mean ± sd of the
final test accuracy, of the time until the test accuracy first reached
TARGET (eval.csv; only where every seed did: a mean of the seeds that
reached it flattered a rule that missed it on others, the reached column
says how many did), of samples/s and of mean staleness. A diverged seed's
numbers are no result (its accuracy is null, its samples/s of the steps
before it stopped): left out of every column, and the row says how many.
Rules that never diverged first, in the order of their mean final
accuracy, best first; then every host and build the runs came from."""
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
    if len(sys.argv) < 4:
        sys.exit("usage: results.py TARGET SEEDS RUN_DIR...")
    target, wanted, dirs = float(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
    rules, first = {}, None
    for run_dir in dirs:
        label = os.path.basename(run_dir.rstrip("/")).rsplit("-seed", 1)[0]
        rules.setdefault(label, [])
        path = os.path.join(run_dir, "summary.json")
        if not os.path.exists(path):
            continue
        with open(path) as f:
            s = json.load(f)
        if not s.get("complete"):
            continue
        if s["algorithm"] != s["label"] or s["label"] != label:   # a row is the rule it names
            sys.exit(f"results.py: {path}: its folder names {label}, its label is {s['label']} "
                     f"and it ran {s['algorithm']}: a row must be the rule it names")
        rules[label].append((run_dir, s))
        first = first or s
    if first is None:
        sys.exit("results.py: no complete run among the folders given")
    print(f"# Every rule, {first['workers']} workers, {first['model']} on {first['dataset']}, "
          f"{first['epochs_target']:g} epochs\n")
    plural = "" if wanted == 1 else "s"
    print(f"Mean ± standard deviation over {wanted} seed{plural} of each rule, a diverged "
          f"seed left out of every column; time to {target} is from the first training step, "
          f"given where every seed reached it. {provenance(rules)}.\n")
    print(f"| rule | final test accuracy | time to {target} (s) | reached | samples/s "
          f"| mean staleness |")
    print("|---|---|---|---|---|---|")
    rows = []
    for rule, runs in rules.items():
        usable = [(d, s) for d, s in runs if not s.get("diverged")]
        accs = [s["final_test_acc"] for _, s in usable]
        known = [a for a in accs if a is not None]
        times = [time_to(d, target) for d, _ in usable]
        rows.append((len(usable) == len(runs) and bool(runs),
                     statistics.fmean(known) if known else -1.0, rule, runs, usable, times))
    for _, _, rule, runs, usable, times in sorted(rows, key=lambda r: (r[0], r[1], r[2]),
                                                   reverse=True):
        name = rule
        if not runs:
            print(f"| {rule} (none of {wanted} seeds complete) | - | - | - | - | - |")
            continue
        diverged = len(runs) - len(usable)
        if diverged:
            others = "the others' numbers" if usable else "no numbers"
            name = f"{name} ({diverged} of {len(runs)} diverged: {others})"
        if len(runs) < wanted:
            name = f"{name} ({len(runs)} of {wanted} seeds complete)"
        reached = [t for t in times if t is not None]
        every = len(reached) == len(usable) and usable
        print(f"| {name} | {spread([s['final_test_acc'] for _, s in usable], 4)} "
              f"| {spread(reached, 2) if every else '-'} | {len(reached)}/{len(usable)} "
              f"| {spread([s['samples_per_s'] for _, s in usable], 0)} "
              f"| {spread([s['staleness_mean'] for _, s in usable], 2)} |")

if __name__ == "__main__":
    main()
