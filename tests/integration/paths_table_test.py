#!/usr/bin/python3
"""paths_table_test.py — scripts/paths_table.py (the tables of make bench-paths) on traces made
here, so that each figure is known in advance (CTest: paths_table).

Scenario s1, four runs, each with the /steps, /ranks and /decisions of a trace: `oracle` (the
shortest: 10 steps of 100 ms), `direct` (10 steps of 125 ms, then 10 cheap ones of 20 ms: it
outlives the others), `mdp` (12 steps of 110 ms: its step 9 starts inside the window and ends
outside it) and `oracle-now` (10 × 105 ms: the table gives each row's fraction of its tokens/s
beside the oracle's), plus a `blp/measured` run shorter than all. Checked: the whole-run figures (the
slowest rank's sync, the mean and tokens/s over the steps after the first two); the common
window is the shortest path-selector run (1.0 s: the blp run does not cut it); each run's window
figures over its steps after the first two that *ended* inside it; the ratios in the Markdown
table; no window for the blp row. Scenario s2: a run with no step after the first two inside the
window gets no window cells ("—"), not "nan". A second listing, scenario s3 on two schedule sets
(bench-paths.sh SEEDS): set 0 `oracle` 10 × 100 ms, `mdp` 10 × 125 ms; set 1 both 10 × 200 ms.
Checked: each set has its own window (set 1's runs keep all their steps, not the 1.0 s of set
0); tokens/s pool as the same work once on each set (harmonic: mdp 92% of the oracle, where an
arithmetic mean of the sets would give 87%), the window's weighted by each set's window (90%),
and the last column gives the fraction set by set; no fraction of an `oracle-now` that did not
run. s4: the changes table (a change in the start-up steps not counted; a step near two changes
counted once). s5: sync pooled as the sets' mean (three sets: not their median); no ratio to an
oracle, nor an `oracle-now`, run on other sets. The CSV's first columns keep their places
(slurm_test reads them by index).
"""
import csv
import os
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check  # noqa: E402  (the one check)

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TMP = tempfile.mkdtemp(prefix="strait-paths-table-")


def trace(name, wall_ms, sync_ms, tokens=100, caps=None):
    """A trace with one step per entry: two ranks, rank 1 the slower by 5 ms; one link, 0 → 1,
    whose capacity at each step's end is caps (constant when None)."""
    path = os.path.join(TMP, name + ".h5")
    n = len(wall_ms)
    steps = np.zeros(n, dtype=[("step", "<i8"), ("tokens", "<i8"), ("wall_ms", "<f8"), ("loss", "<f8")])
    steps["step"] = np.arange(n)
    steps["tokens"] = tokens
    steps["wall_ms"] = wall_ms
    steps["loss"] = 3.0
    ranks = np.zeros(2 * n, dtype=[("step", "<i8"), ("rank", "<i4"), ("sync_ms", "<f8")])
    for i in range(n):
        ranks[2 * i] = (i, 0, sync_ms[i])
        ranks[2 * i + 1] = (i, 1, sync_ms[i] + 5)
    dec = np.zeros(1, dtype=[("step", "<i8"), ("slot", h5py.string_dtype())])
    dec[0] = (0, "path_selector")
    links = np.zeros(n, dtype=[("step", "<i8"), ("src", "<i4"), ("dst", "<i4"), ("configured_gbps", "<f8")])
    links["step"], links["src"], links["dst"] = np.arange(n), 0, 1
    links["configured_gbps"] = caps if caps is not None else 0.1
    with h5py.File(path, "w") as f:
        f["steps"], f["ranks"], f["decisions"], f["links"] = steps, ranks, dec, links
    return path


runs = {
    "oracle": trace("oracle", [100.0] * 10, [50.0] * 10),
    "direct": trace("direct", [125.0] * 10 + [20.0] * 10, [80.0] * 10 + [10.0] * 10),
    "mdp": trace("mdp", [110.0] * 12, [60.0] * 12),
    "oracle-now": trace("oracle-now", [105.0] * 10, [55.0] * 10),
    "blp/measured": trace("blp", [50.0] * 6, [30.0] * 6),
}
listing = os.path.join(TMP, "runs.txt")
with open(listing, "w") as f:
    for sel, path in runs.items():
        f.write(f"s1 {sel} sw 1 {path}\n")
    f.write(f"s2 oracle sw 1 {trace('s2-oracle', [100.0] * 3, [50.0] * 3)}\n")
    f.write(f"s2 mdp sw 1 {trace('s2-mdp', [150.0] * 3, [50.0] * 3)}\n")
csv_out, md_out = os.path.join(TMP, "paths.csv"), os.path.join(TMP, "paths.md")
p = subprocess.run([sys.executable, os.path.join(SRC, "scripts", "paths_table.py"), listing, csv_out,
                    md_out, "abc", "1"], capture_output=True, text=True)
check(p.returncode == 0, f"paths_table.py exits 0 ({p.stderr.strip()[-300:]})")
rows = {r["selector"]: r for r in csv.DictReader(open(csv_out)) if r["scenario"] == "s1"}
f = lambda sel, k: float(rows[sel][k])

# Whole runs: steps 2.. ; the slowest rank's sync (rank 1, +5 ms).
check(abs(f("direct", "sync_mean_ms") - (8 * 85 + 10 * 15) / 18) < 1e-3,
      "whole run: direct's sync is the mean of the slowest rank's over steps 2..19")
check(abs(f("direct", "tokens_per_s") - 18 * 100 / (1.0 + 0.2)) < 1e-2,
      "whole run: direct's tokens/s over its steps' wall time")
# The window: the shortest path-selector run, 10 × 100 ms (the 0.3 s blp run does not count).
check(all(abs(f(s, "window_s") - 1.0) < 1e-9 for s in ("oracle", "direct", "mdp")),
      "the common window is the shortest path-selector run, 1.0 s")
check(int(rows["direct"]["win_steps"]) == 6 and abs(f("direct", "win_sync_mean_ms") - 85) < 1e-9,
      "in the window direct has steps 2..7 only (85 ms), not its cheap tail")
check(abs(f("direct", "win_tokens_per_s") - 600 / 0.75) < 1e-6,
      "window tokens/s over the steps inside it (direct: 6 steps of 125 ms)")
check(int(rows["mdp"]["win_steps"]) == 7 and abs(f("mdp", "win_sync_mean_ms") - 65) < 1e-9,
      "mdp has its steps 2..8, the ones that ended by 1.0 s (step 9 starts at 0.99 s, ends at 1.1)")
check(rows["blp/measured"]["win_steps"] == "0" and rows["blp/measured"]["win_sync_mean_ms"] == "nan",
      "no window figures for a blp row")
md = open(md_out).read()
line = lambda sel: next(l for l in md.splitlines() if l.startswith(f"| s1 | sw | {sel} |"))
cells = lambda sel: [c.strip() for c in line(sel).strip("|").split("|")]
m = cells("mdp")
# whole run: mdp 65 against direct's (8·85 + 10·15)/18 = 46.1 → 1.41×; window: 65/85 = 0.76×.
check(m[9] == "1.41×" and m[14] == "0.76×",
      f"the table's sync vs direct, whole run 1.41× and window 0.76× ({m[9]}, {m[14]})")
# tokens/s: oracle 1000; mdp 909 (whole and window); direct 1500 whole, 800 in the window.
check(m[7] == "91%" and m[13] == "91%", f"mdp's tokens/s of the oracle's, whole and window ({m[7]}, {m[13]})")
# of oracle-now (10 × 105 ms: 952 tok/s): mdp 95%, the oracle 105%, oracle-now itself 100%.
check(m[8] == "95%" and cells("oracle")[8] == "105%" and cells("oracle-now")[8] == "100%",
      f"the fraction of oracle-now's tokens/s ({m[8]}, {cells('oracle')[8]}, {cells('oracle-now')[8]})")
d = cells("direct")
check(d[7] == "150%" and d[13] == "80%",
      f"direct's: 150% over its whole run (its cheap tail), 80% in the window ({d[7]}, {d[13]})")
check(cells("blp/measured")[11:] == ["—"] * 4, "the blp row has no window columns")
s2 = next(l for l in md.splitlines() if l.startswith("| s2 | sw | mdp |"))
check(s2.rstrip().endswith("| — | — | — | — |") and "nan" not in s2,
      f"a run with no step inside the window gets no window cells ({s2})")

# Two schedule sets (the sixth field).
listing2, csv2, md2 = (os.path.join(TMP, n) for n in ("runs2.txt", "paths2.csv", "paths2.md"))
with open(listing2, "w") as f:
    f.write(f"s3 oracle sw 1 {trace('s3-oracle-0', [100.0] * 10, [50.0] * 10)} 0\n")
    f.write(f"s3 mdp sw 1 {trace('s3-mdp-0', [125.0] * 10, [60.0] * 10)} 0\n")
    f.write(f"s3 oracle sw 1 {trace('s3-oracle-1', [200.0] * 10, [50.0] * 10)} 1\n")
    f.write(f"s3 mdp sw 1 {trace('s3-mdp-1', [200.0] * 10, [50.0] * 10)} 1\n")
    # s4: capacity changes at step 1 (a start-up step: not counted) and at steps 4 and 5, whose
    # steps and the next take 300 ms (step 5 is near both: counted once).
    f.write("s4 mdp sw 1 %s 0\n" % trace("s4-mdp", [100.0] * 4 + [300.0] * 3 + [100.0] * 3, [50.0] * 10,
                                          caps=[0.2] + [0.1] * 3 + [0.05] + [0.02] * 5))
    # s5: mdp on three sets, its sync 15, 25 and 65 ms (slowest rank), the oracle on two of them.
    for k, sync in enumerate((10.0, 20.0, 60.0)):
        f.write(f"s5 mdp sw 1 {trace(f's5-mdp-{k}', [100.0] * 10, [sync] * 10)} {k}\n")
    for k in (0, 1):
        f.write(f"s5 oracle sw 1 {trace(f's5-oracle-{k}', [100.0] * 10, [10.0] * 10)} {k}\n")
        f.write(f"s5 oracle-now sw 1 {trace(f's5-oracle-now-{k}', [100.0] * 10, [10.0] * 10)} {k}\n")
p = subprocess.run([sys.executable, os.path.join(SRC, "scripts", "paths_table.py"), listing2, csv2,
                    md2, "abc", "1"], capture_output=True, text=True)
check(p.returncode == 0, f"paths_table.py exits 0 on two schedule sets ({p.stderr.strip()[-300:]})")
rows2 = list(csv.DictReader(open(csv2)))
header = next(csv.reader(open(csv2)))
check(header[:8] == ["scenario", "backend", "selector", "run", "steps", "sync_mean_ms", "sync_p95_ms",
                     "tokens_per_s"], f"the CSV's first columns keep their places (slurm_test reads them; {header[:8]})")
set1 = [r for r in rows2 if r["scenario"] == "s3" and r["schedule"] == "1"]
check(len(set1) == 2 and all(r["win_steps"] == "8" and float(r["window_s"]) == 2.0 for r in set1),
      "each schedule set has its own window (set 1: 2.0 s, all 8 steps after the first two)")
m = next(l for l in open(md2).read().splitlines() if l.startswith("| s3 | sw | mdp |"))
m = [c.strip() for c in m.strip("|").split("|")]
# whole: oracle 1000 and 500 tok/s → 666.7; mdp 800 and 500 → 615.4: 92%. Window: oracle
# (1000·1 + 500·2)/3, mdp (800·1 + 500·2)/3 = 600: 90%.
check(m[5] == "615" and m[7] == "92%", f"tokens/s pooled as the same work on each set ({m[5]}, {m[7]})")
check(m[13] == "90%", f"window tokens/s weighted by each set's window ({m[13]})")
check(m[15] == "80 / 100%", f"the fraction of the oracle set by set ({m[15]})")
check(m[8] == "—", f"no ratio to an oracle-now that did not run ({m[8]})")
a4 = next(l for l in open(md2).read().splitlines() if l.startswith("| s4 | sw | mdp |") and
          l.count("|") == 7)
check(a4 == "| s4 | sw | mdp | 2 | 450 | 100.0 |",
      f"around the link changes: two changes after the start-up, their steps and the next 900 ms "
      f"(a step near both counted once): 450 ms per change, 100 ms a step elsewhere ({a4})")
m5 = next(l for l in open(md2).read().splitlines() if l.startswith("| s5 | sw | mdp |") and l.count("|") > 7)
m5 = [c.strip() for c in m5.strip("|").split("|")]
check(m5[3] == "35.0", f"sync pooled as the sets' mean, (15 + 25 + 65) / 3, not their median ({m5[3]})")
check(m5[7] == "—" and m5[8] == "—" and m5[15] == "—",
      f"no ratio to an oracle or oracle-now run on other sets than the selector ({m5[7]}, {m5[8]}, {m5[15]})")
bad = os.path.join(TMP, "bad.txt")
open(bad, "w").write("s1 mdp sw 1\n")
p = subprocess.run([sys.executable, os.path.join(SRC, "scripts", "paths_table.py"), bad, csv2, md2,
                    "abc", "1"], capture_output=True, text=True)
check(p.returncode != 0 and "bad.txt" in p.stderr, f"a short line is refused, naming the list ({p.stderr.strip()})")
shutil.rmtree(TMP)
