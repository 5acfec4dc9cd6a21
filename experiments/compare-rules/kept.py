#!/usr/bin/env python3
"""Whether a complete run is of the config run.sh would run now.

    asgd help config CONFIG OVERRIDES... | kept.py RUN_DIR [RESOLVED]

Exit 0 when RUN_DIR/config.ini gives every key of the resolved config
(the file RESOLVED, or stdin) the same value (experiment.out and experiment.run_id aside: where
the folder is, not what ran), as `asgd sweep` checks a complete run it
resumes; otherwise print the first key that differs, with both values,
and exit 1. A run of an edited experiments/RULE/config.ini is another
experiment's: results.md would mix it with runs of the new config."""
import sys


def read_ini(text):
    """{(section, key): value} of an INI file as asgd writes it."""
    entries, section = {}, ""
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
        elif "=" in line:
            key, value = line.split("=", 1)
            entries[(section, key.strip())] = value.strip()
    return entries


def main():
    run_dir = sys.argv[1]
    if len(sys.argv) > 2:
        with open(sys.argv[2], encoding="utf-8") as f:
            now = read_ini(f.read())
    else:
        now = read_ini(sys.stdin.read())
    if not now:
        print("its config cannot be resolved now")
        return 1
    try:
        with open(run_dir + "/config.ini", encoding="utf-8") as f:
            ran = read_ini(f.read())
    except OSError as e:
        print("its config.ini cannot be read (%s)" % e.strerror)
        return 1
    for (section, key), value in now.items():
        if section == "experiment" and key in ("out", "run_id"):
            continue
        if ran.get((section, key)) != value:
            was = ("[%s] %s = %s" % (section, key, ran[(section, key)])
                   if (section, key) in ran else "no [%s] %s" % (section, key))
            print("its config.ini has %s, the config now gives %s" % (was, value))
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
