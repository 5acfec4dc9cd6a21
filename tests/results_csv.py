"""results_csv.py: reads a sweep's results.csv with Python's csv module, as
a researcher's script would, and fails when a row is not as wide as the
header; prints the named columns of every row, one row a line.

    python3 tests/results_csv.py results.csv COLUMN..."""
import csv
import sys

with open(sys.argv[1], newline="") as f:
    rows = list(csv.reader(f))
header = rows[0]
for line, row in enumerate(rows[1:], 2):
    if len(row) != len(header):
        sys.exit(f"line {line}: {len(row)} fields, the header has {len(header)}")
columns = {name: i for i, name in enumerate(header)}
for name in sys.argv[2:]:
    if name not in columns:
        sys.exit(f"no column {name}")
for row in rows[1:]:
    print("|".join(row[columns[name]] for name in sys.argv[2:]))
