#!/usr/bin/env python3
"""test_validation.py: the scoring of experiments/sim-validation/table.py,
the table the simulator's error is judged by, over run folders written
here (summary.json and eval.csv as asgd writes them), through --rescore:
the time to target read between evaluations, the newest run of a seed
used, a metric compared only where every run of the row has it (a row
where some seeds never reach the target is named, not averaged over the
seeds that did), the MAPE over the rows compared and the part of it the
seeds' spread alone would give, and --resim refusing
a points.csv that does not say how many runs had each metric."""
import contextlib
import csv
import io
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "experiments", "sim-validation"))
import table  # noqa: E402

FAILED = []


def check(cond, what):
    if not cond:
        FAILED.append(what)
        print("FAIL:", what)


def write_run(out, stamp, rule, workers, seed, mode, time_s, accs, staleness=1.0,
              complete=True, diverged=False, untrained=0.1):
    """One run folder: the untrained model's evaluation at 0 s (accuracy
    untrained), then evaluations every 0.1 s with the accuracies accs;
    diverged, as asgd writes a run that stopped where it diverged."""
    folder = os.path.join(out, "sim-validation", stamp)
    os.makedirs(folder)
    summary = {"algorithm": rule, "workers": workers, "seed": seed, "mode": mode,
               "epochs_target": 1, "time_s": time_s, "samples_per_s": 1000.0 / time_s,
               "staleness_mean": staleness, "staleness_histogram": [1, 2, 1],
               "final_test_acc": None if diverged else accs[-1], "complete": complete,
               "diverged": diverged}
    with open(os.path.join(folder, "summary.json"), "w") as f:
        json.dump(summary, f)
    with open(os.path.join(folder, "eval.csv"), "w") as f:
        f.write("time_s,epoch,updates,samples,test_loss,test_acc\n")
        f.write("0,0,0,0,2.3,%g\n" % untrained)
        for i, acc in enumerate(accs):
            f.write("%g,%g,%d,%d,1.0,%g\n" % (0.1 * (i + 1), 0.1 * (i + 1), i + 1, 64 * (i + 1),
                                              acc))


def rescore(out):
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        table.rescore(out)
    return printed.getvalue()


def points(out):
    with open(os.path.join(out, "points.csv")) as f:
        return {(r["rule"], int(r["workers"]), r["metric"]): r for r in csv.DictReader(f)}


def test_rows_compared_only_where_every_run_has_the_metric(out):
    with open(os.path.join(out, "settings.json"), "w") as f:
        json.dump({"rules": ["whole", "partial"], "workers": [2], "seeds": 2, "epochs": 1,
                   "target": 0.8}, f)
    # whole: every run reaches 0.8; real at 0.15 s (0.7 -> 0.9 between 0.1
    # and 0.2 s) and 0.3 s, simulated at 0.2 s twice: -11.1%
    write_run(out, "1-a", "whole", 2, 1, "real", 2.0, [0.7, 0.9])
    write_run(out, "1-b", "whole", 2, 1, "sim", 2.2, [0.5, 0.8])
    write_run(out, "1-c", "whole", 2, 2, "real", 2.0, [0.5, 0.6, 0.8])
    write_run(out, "1-d", "whole", 2, 2, "sim", 2.2, [0.5, 0.8])
    # partial: seed 2 never reaches 0.8 in the real run; its seed 1 is
    # slow, so the mean of the seeds that did (0.3 s) is not the row's
    write_run(out, "2-a", "partial", 2, 1, "real", 3.0, [0.5, 0.6, 0.85])
    write_run(out, "2-b", "partial", 2, 1, "sim", 3.0, [0.9])
    write_run(out, "2-c", "partial", 2, 2, "real", 3.0, [0.5, 0.7])
    write_run(out, "2-d", "partial", 2, 2, "sim", 3.0, [0.9])
    # an older run of the same seed, made before: the newest wins; but not
    # a newer one that did not complete
    write_run(out, "0-z", "partial", 2, 2, "real", 30.0, [0.9])
    write_run(out, "9-z", "partial", 2, 2, "real", 99.0, [0.9], complete=False)
    # runs started in one second are named -1, -2, ... -10: -10 is newest
    write_run(out, "3-s-2", "whole", 2, 1, "real", 5.0, [0.7, 0.9])
    write_run(out, "3-s-10", "whole", 2, 1, "real", 2.0, [0.7, 0.9])
    printed = rescore(out)

    got = points(out)
    whole = got[("whole", 2, "to_target_s")]
    check(abs(float(whole["real"]) - 0.225) < 1e-9, "real time to target interpolated")
    check(abs(float(whole["sim"]) - 0.2) < 1e-9, "simulated time to target")
    check(whole["real_n"] == "2" and whole["sim_n"] == "2", "whole row's counts")
    partial = got[("partial", 2, "to_target_s")]
    check(partial["real_n"] == "1" and partial["sim_n"] == "2", "partial row's counts")
    check(partial["sim"] == "nan", "a partial row is not drawn")
    check(float(got[("partial", 2, "train_s")]["real"]) == 3.0, "the newest run of a seed")

    mape = {line.split(":")[0].strip(): line for line in printed.splitlines()
            if line.startswith("  ")}
    # the seeds' spread alone: real 0.15 and 0.3 s (sd 0.106), simulated
    # 0.2 and 0.2 s: sqrt(2 / pi) * sqrt(0.106^2 / 2 + 0) / 0.225 = 26.6%
    check(mape["to_target_s"].startswith("  to_target_s: 11.1% (1 rows); from the seeds' "
                                         "spread alone, about 26.6%; left out"),
          "time to target over the whole row only: " + mape["to_target_s"])
    check("partial 2 (1 and 2 of 2)" in mape["to_target_s"], "the partial row named")
    check(mape["train_s"] == "  train_s: 5.0% (2 rows); from the seeds' spread alone, about "
          "0.0%", "training time over both rows: " + mape["train_s"])
    with open(os.path.join(out, "table.md")) as f:
        text = f.read()
    check("(in 1 of 2 real runs, 2 of 2 simulated)" in text, "the table says how many reached")


def test_rescore_takes_the_last_whole_tables_runs(out):
    """A table's settings.json names its run folders: --rescore takes those,
    not a newer run a call stopped part way left beside them (it took the
    newest of each, and mixed two calls of two calibrations)."""
    write_run(out, "1-a", "r", 1, 1, "real", 2.0, [0.7, 0.9])
    write_run(out, "1-b", "r", 1, 1, "sim", 2.0, [0.7, 0.9])
    write_run(out, "2-a", "r", 1, 1, "real", 7.0, [0.7, 0.9])   # the stopped call's
    with open(os.path.join(out, "settings.json"), "w") as f:
        json.dump({"rules": ["r"], "workers": [1], "seeds": 1, "epochs": 1, "target": 0.8,
                   "runs": ["sim-validation/1-a", "sim-validation/1-b"]}, f)
    rescore(out)
    got = points(out)[("r", 1, "train_s")]
    check(float(got["real"]) == 2.0, "the table's own run, not the newer one: " + got["real"])


def test_the_untrained_model_reaches_no_target(out):
    """The untrained model's evaluation at 0 s reaches no target, however
    high its accuracy by chance: the first trained one does (0 s once)."""
    with open(os.path.join(out, "settings.json"), "w") as f:
        json.dump({"rules": ["u"], "workers": [1], "seeds": 1, "epochs": 1,
                   "target": 0.8}, f)
    write_run(out, "1-a", "u", 1, 1, "real", 2.0, [0.7, 0.9], untrained=0.85)
    write_run(out, "1-b", "u", 1, 1, "sim", 2.0, [0.7, 0.9], untrained=0.85)
    rescore(out)
    got = points(out)[("u", 1, "to_target_s")]
    check(abs(float(got["real"]) - 0.15) < 1e-9,
          "the first trained evaluation's time to target: " + got["real"])


def test_a_real_mean_of_zero_is_named(out):
    """A real mean of 0 has no percentage error: the MAPE line says how
    many rows that leaves out, and names one the simulator puts elsewhere."""
    with open(os.path.join(out, "settings.json"), "w") as f:
        json.dump({"rules": ["z", "y"], "workers": [1], "seeds": 1, "epochs": 1,
                   "target": 0.8}, f)
    write_run(out, "1-a", "z", 1, 1, "real", 2.0, [0.9], staleness=0.0)
    write_run(out, "1-b", "z", 1, 1, "sim", 2.0, [0.9], staleness=0.5)
    write_run(out, "1-c", "y", 1, 1, "real", 2.0, [0.9], staleness=0.0)
    write_run(out, "1-d", "y", 1, 1, "sim", 2.0, [0.9], staleness=0.0)
    printed = rescore(out)
    line = [l for l in printed.splitlines() if l.startswith("  staleness_mean:")][0]
    check("left out, real mean 0: 2 rows, 1 of them simulated 0 too (not: z 1 (simulated "
          "0.5))" in line, "rows with a real mean of 0: " + line)


def test_a_diverged_run_is_not_compared(out):
    """A real run that diverged stopped early, with a null accuracy: its
    short time is not the row's (the table once scored such a row +78%,
    and a null accuracy stopped it); its staleness still compares."""
    with open(os.path.join(out, "settings.json"), "w") as f:
        json.dump({"rules": ["d"], "workers": [16], "seeds": 2, "epochs": 1,
                   "target": 0.8}, f)
    write_run(out, "1-a", "d", 16, 1, "real", 0.5, [0.85, 0.1], staleness=11, diverged=True)
    write_run(out, "1-b", "d", 16, 1, "sim", 1.0, [0.9], staleness=10)
    write_run(out, "1-c", "d", 16, 2, "real", 1.0, [0.9], staleness=11)
    write_run(out, "1-d", "d", 16, 2, "sim", 1.0, [0.9], staleness=10)
    printed = rescore(out)
    got = points(out)
    for m in ("train_s", "samples_per_s", "to_target_s", "final_acc"):
        check(got[("d", 16, m)]["real_n"] == "1" and got[("d", 16, m)]["sim"] == "nan",
              "%s of a diverged run left out: %s" % (m, got[("d", 16, m)]))
    check(float(got[("d", 16, "train_s")]["real"]) == 1.0, "the other seed's time is kept")
    check(got[("d", 16, "staleness_mean")]["real_n"] == "2", "staleness of both runs")
    line = [l for l in printed.splitlines() if l.startswith("  train_s:")][0]
    check("d 16 (1 and 2 of 2)" in line, "the MAPE names the row: " + line)


def test_a_missing_run_is_an_error(out):
    with open(os.path.join(out, "settings.json"), "w") as f:
        json.dump({"rules": ["r"], "workers": [1], "seeds": 2, "epochs": 1, "target": 0.8}, f)
    write_run(out, "1-a", "r", 1, 1, "real", 2.0, [0.9])
    write_run(out, "1-b", "r", 1, 1, "sim", 2.0, [0.9])
    write_run(out, "1-c", "r", 1, 2, "real", 2.0, [0.9])
    try:
        rescore(out)
        check(False, "a missing simulated run went unnoticed")
    except SystemExit as e:
        check("no sim run of r with 1 workers, seed 2" in str(e), "the error names it: %s" % e)


def test_resim_refuses_points_without_counts(out):
    """A points.csv from before the counts were kept cannot say whether
    a real mean is over every seed: --resim stops rather than compare a
    mean over the seeds that reached the target as the row's."""
    with open(os.path.join(out, "settings.json"), "w") as f:
        json.dump({"rules": ["r"], "workers": [4], "seeds": 3, "epochs": 1, "target": 0.8}, f)
    with open(os.path.join(out, "points.csv"), "w") as f:
        f.write("rule,workers,metric,real,real_min,real_max,sim\n"
                "r,4,to_target_s,0.488,0.488,0.488,1.667\n")
    try:
        table.resim(out, [])
        check(False, "an old points.csv was used")
    except SystemExit as e:
        check("--rescore" in str(e), "the error says what to do: %s" % e)


def test_resim_save_keeps_the_real_columns(out):
    """--resim --save writes the table, points and figure again: the real
    columns as they were, the simulated one from runs made now (one short
    simulated Hogwild run of config.ini with this folder's profile)."""
    with open(os.path.join(out, "settings.json"), "w") as f:
        json.dump({"rules": ["hogwild"], "workers": [1], "seeds": 1, "epochs": 0.02,
                   "target": 0.99}, f)
    with open(os.path.join(out, "profile-hogwild.ini"), "w") as f:
        f.write("[sim]\ncores = 1\ncompute = constant\ncompute_mean = 0.001\n")
    with open(os.path.join(out, "points.csv"), "w") as f:
        f.write("rule,workers,metric,real,real_min,real_max,sim,real_n,sim_n,real_sd\n"
                "hogwild,1,train_s,123,120,126,999,1,1,nan\n")
    # as a user runs it, from the folder itself (--out . named profiles
    # relative to the folder the runs were made in)
    ran = subprocess.run([sys.executable, table.__file__, "--resim", "--save", "--out", ".",
                          "--sim", "data.dataset=synthetic", "eval.every=0"], cwd=out,
                         capture_output=True, text=True)
    check(ran.returncode == 0, "--resim --out . ran: %s" % ran.stdout[-500:])
    got = points(out)[("hogwild", 1, "train_s")]
    check(float(got["real"]) == 123 and float(got["real_max"]) == 126, "real kept: %s" % got)
    sim = float(got["sim"])
    check(0 < sim < 10, "the simulated mean is the new run's: %s" % got["sim"])
    with open(os.path.join(out, "table.md")) as f:
        check("MAPE" in f.read(), "table.md written with the MAPE")


for test in (test_rows_compared_only_where_every_run_has_the_metric,
             test_rescore_takes_the_last_whole_tables_runs,
             test_the_untrained_model_reaches_no_target,
             test_a_real_mean_of_zero_is_named,
             test_a_diverged_run_is_not_compared,
             test_a_missing_run_is_an_error,
             test_resim_refuses_points_without_counts,
             test_resim_save_keeps_the_real_columns):
    with tempfile.TemporaryDirectory() as work:
        test(work)
if FAILED:
    sys.exit("%d checks failed" % len(FAILED))
print("test_validation: all checks passed")
