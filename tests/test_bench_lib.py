#!/usr/bin/env python3
"""test_bench_lib.py: the helpers of bench/lib.sh, which the benchmark
scripts and the experiments' run.sh compute their tables with, run by bash
over run folders written here as asgd writes them: a failed or diverged
run is no number in a median or a mean (a diverged run's samples/s is of
the few steps before it stopped, its accuracy null), each table row says
how many runs it kept, and the untrained model reaches no target."""
import json
import os
import subprocess
import sys
import tempfile

LIB = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench",
                   "lib.sh")
FAILED = []


def check(cond, what):
    if not cond:
        FAILED.append(what)
        print("FAIL:", what)


def bash(script, stdin=""):
    """script run by bash with bench/lib.sh sourced under set -euo
    pipefail, as the scripts source it; its stdout, stripped."""
    done = subprocess.run(["bash", "-c", "set -euo pipefail; . \"$0\"; " + script, LIB],
                          input=stdin, capture_output=True, text=True, check=False)
    check(done.returncode == 0, "%r exits 0: %s" % (script, done.stderr))
    return done.stdout.strip()


def write_run(folder, rate, acc, complete=True, diverged=False, evals=None):
    """A run folder: summary.json as asgd writes it (tabs after the
    colons), and eval.csv when evals (time, updates, loss, accuracy) are
    given."""
    os.makedirs(folder)
    summary = {"algorithm": "hogwild", "final_test_acc": acc, "diverged": diverged,
               "samples_per_s": rate, "staleness_mean": 1.5, "complete": complete}
    with open(os.path.join(folder, "summary.json"), "w") as f:
        f.write(json.dumps(summary, indent="\t", separators=(",", ":\t")))
    if evals:
        with open(os.path.join(folder, "eval.csv"), "w") as f:
            f.write("time_s,epoch,updates,samples,test_loss,test_acc\n")
            for t, updates, loss, a in evals:
                f.write("%g,0,%d,0,%s,%g\n" % (t, updates, loss, a))


def test_median_and_mean(work):
    check(bash("median", "3\n1\n2\n") == "2", "the middle one")
    check(bash("median", "4\n1\nfailed\n\nnan\n2\n") == "2", "non-numbers left out")
    check(bash("median", "failed\n") == "nan", "nothing: nan, never 0")
    check(bash("mean_all", "0.8\n0.9\n") == "0.85", "a mean")
    for bad in ("0.8\n\n0.9\n", "0.8\nnan\n", "0.8\nnull\n", "0.8\n\n"):
        check(bash("mean_all", bad) == "nan", "mean_all of %r is nan" % bad)


def test_only_usable_runs_are_kept(work):
    write_run(os.path.join(work, "good"), 1000.0, 0.8)
    write_run(os.path.join(work, "diverged"), 250000.0, None, diverged=True)
    write_run(os.path.join(work, "cut"), 900.0, 0.7, complete=False)
    verdicts = bash('cd "%s"; for d in good diverged cut none; do run_verdict "$d"; done'
                    % work)
    check(verdicts.split() == ["ok", "diverged", "failed", "failed"], "verdicts: %s" % verdicts)
    table = bash('cd "%s"; for d in good diverged cut none good; do '
                 'record_run "$d" rows samples_per_s final_test_acc; done; '
                 'awk \'{print $1}\' rows | median; awk \'{print $2}\' rows | median; '
                 'kept_runs rows; kept_runs nothing' % work)
    rate, acc, kept, none = table.split("\n")
    check(rate == "1000", "the diverged run's 250,000 samples/s left out: %s" % rate)
    check(acc == "0.8", "accuracy of the kept runs: %s" % acc)
    check(kept == "2 of 5, 1 diverged, 2 failed", "the row counts its runs: %s" % kept)
    check(none == "0 of 0", "no runs: %s" % none)
    fields = bash('cd "%s"; for d in good diverged; do result_field "$d" samples_per_s; '
                  'result_field "$d" staleness_mean; done' % work).split()
    check(fields == ["1000.0", "1.5", "nan", "1.5"],
          "a diverged run's rate is no result, its staleness is: %s" % fields)


def test_time_to_target(work):
    evals = [(0, 0, "2.3", 0.85), (0.5, 10, "1.0", 0.6), (1.0, 20, "nan", 0.9),
             (1.5, 30, "0.5", 0.82)]
    write_run(os.path.join(work, "run"), 1000.0, 0.82, evals=evals)
    run = os.path.join(work, "run")
    check(bash('time_to_target "%s" 0.8' % run) == "1.5",
          "the untrained model (updates 0) and a non-finite loss reach no target")
    check(bash('time_to_target "%s" 0.95 never' % run) == "never", "NEVER where none is")


for test in (test_median_and_mean, test_only_usable_runs_are_kept, test_time_to_target):
    with tempfile.TemporaryDirectory() as work:
        test(work)
if FAILED:
    sys.exit("%d checks failed" % len(FAILED))
print("test_bench_lib: all checks passed")
