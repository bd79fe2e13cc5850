#!/usr/bin/python3
"""forecast_test.py — `strait forecast` end to end, one case per CTest test (cli_forecast_*).

table:     a small grouped CSV → exit 0, every forecaster in the table, the --out CSV's
           aggregate rows; the baselines' MAE, RMSE, MAPE and MASE recomputed here in plain
           Python and compared; grey fallbacks counted.
bad_input: a missing file, a missing column, a non-numeric value (file:line), a short row,
           --window 3, --states 1, --alpha 0, --skill-window 2, an unknown --fallback, a
           gzip-compressed file, no series long enough → exit 2, one "strait: forecast: ..."
           line naming the flag or file, and no --out file.
"""
import argparse
import csv
import gzip
import math
import os
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check  # noqa: E402  (the one check)

ap = argparse.ArgumentParser()
ap.add_argument("case")
ap.add_argument("--strait", required=True)
ap.add_argument("--source", required=True)
args = ap.parse_args()
STRAIT = args.strait
TMP = tempfile.mkdtemp(prefix="strait-forecast-")


def write(name, text):
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def run(*argv):
    p = subprocess.run([STRAIT, "forecast"] + list(argv), capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


# Two workers, interleaved as in the PAI files; worker 1 has a zero (MAPE skips it).
SERIES = {
    "0": [100, 102, 101, 105, 107, 106, 110, 111, 115, 114, 118, 120],
    "1": [50, 50, 52, 53, 51, 53, 0, 55, 54, 56, 57, 57],
}


def grouped_csv():
    rows = ["idx,worker,time,load"]
    for t in range(12):
        for w in ("0", "1"):
            rows.append(f"{len(rows) - 1},{w},{t + 1},{SERIES[w][t]}")
    return write("grouped.csv", "\n".join(rows) + "\n")


def expected(window, fc):
    """Pooled MAE, RMSE, MAPE, MASE of forecaster fc(x[:t]) over both series, origins t >= window."""
    n = abs_ = sq = ape = ape_n = scaled = 0.0
    for x in SERIES.values():
        scale = sum(abs(x[t] - x[t - 1]) for t in range(1, len(x))) / (len(x) - 1)
        for t in range(window, len(x)):
            e = fc(x[:t]) - x[t]
            n += 1
            abs_ += abs(e)
            sq += e * e
            scaled += abs(e) / scale
            if x[t] != 0:
                ape += abs(e / x[t])
                ape_n += 1
    return abs_ / n, math.sqrt(sq / n), 100 * ape / ape_n, scaled / n


def case_table():
    path = grouped_csv()
    out = os.path.join(TMP, "table.csv")
    rc, so, se = run("--series", path, "--window", "4", "--out", out)
    check(rc == 0, f"exit 0 ({se.strip()[:200]})")
    check("one series per worker, 2 series" in so, "grouped by the worker column")
    for name in ("last-value", "moving-mean", "ewma", "gm11-textbook", "gmc-textbook", "gm11", "gmc"):
        check(any(line.split()[:1] == [name] for line in so.splitlines()), f"{name} in the table")
    with open(out) as f:
        rows = list(csv.DictReader(f))
    agg = {r["forecaster"]: r for r in rows if r["series"] == "all"}
    check(len(agg) == 7 and len(rows) == 7 * 3, "--out: 7 aggregate rows and 7 per series")
    check(agg["last-value"]["points"] == "16" and agg["last-value"]["mape_points"] == "15",
          "16 forecasts, 15 with a non-zero actual value")
    baselines = {
        "last-value": lambda h: h[-1],
        "moving-mean": lambda h: sum(h[-4:]) / 4,
    }
    for name, fc in baselines.items():
        want = expected(4, fc)
        got = [float(agg[name][k]) for k in ("mae", "rmse", "mape_pct", "mase")]
        check(all(abs(g - w) <= 1e-5 * abs(w) for g, w in zip(got, want)),
              f"{name}: MAE, RMSE, MAPE, MASE {got} = {[round(w, 6) for w in want]} (Python)")
    # The zero in worker 1 reaches every window of 4 holding it: positivity fallbacks.
    check(int(agg["gm11-textbook"]["fallback_positivity"]) == 4, "4 windows hold the zero")
    check(int(agg["gm11"]["fell_back"]) >= 4, "gm11 falls back at least there")


def case_bad_input():
    good = grouped_csv()
    out = os.path.join(TMP, "never.csv")
    cases = [
        (["--series", os.path.join(TMP, "nope.csv")], "nope.csv: the file does not exist"),
        (["--series", good, "--column", "speed"], "grouped.csv:1: --column: no column \"speed\"; expected one of"),
        (["--series", good, "--group", "rack"], "--group: no column \"rack\""),
        (["--series", write("nan.csv", "t,v\n1,3\n2,x3\n"), "--group", "none"],
         "nan.csv:3: column \"v\": \"x3\" is not a number; expected a finite number"),
        (["--series", write("short.csv", "t,v\n1,3\n2\n")], "short.csv:3: 1 field; expected 2"),
        (["--series", good, "--window", "3"], "--window: 3 is out of range; expected an integer >= 4"),
        (["--series", good, "--states", "1"], "--states: 1 is out of range"),
        (["--series", good, "--alpha", "0"], "--alpha: 0 is out of range; expected a number in (0, 1]"),
        (["--series", good, "--skill-window", "2"], "--skill-window: 2 is out of range"),
        (["--series", good, "--fallback", "gmc"], "--fallback: unknown baseline \"gmc\"; expected one of"),
        (["--series", good, "--window", "20"], "--series: no series has the 21 values"),
        (["--series", write("empty.csv", "")], "empty.csv:0: no header line"),
    ]
    gz = os.path.join(TMP, "packed.csv.gz")
    with open(good, "rb") as src, gzip.open(gz, "wb") as dst:
        shutil.copyfileobj(src, dst)
    cases.append((["--series", gz], "packed.csv.gz: gzip-compressed; expected an uncompressed CSV (gzip -dc"))
    for argv, want in cases:
        rc, so, se = run(*argv, "--out", out)
        check(rc == 2 and want in se and se.startswith("strait: forecast: ") and se.count("\n") == 1,
              f"exit 2 with {want!r} (got {rc}: {se.strip()[:160]})")
        check(not os.path.exists(out), "no --out file")
    rc, so, se = run()
    check(rc == 2 and "--series" in se, "--series is required (exit 2)")


try:
    {"table": case_table, "bad_input": case_bad_input}[args.case]()
finally:
    shutil.rmtree(TMP, ignore_errors=True)
