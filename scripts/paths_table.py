#!/usr/bin/python3
"""paths_table.py LIST CSV MD COMMIT REPEATS — the tables of make bench-paths (bench-paths.sh).

LIST has one line per run: "scenario selector backend repeat trace.h5". From each trace, over
the steps after the first two (start-up: connections, first solves):
  sync ms       per step the slowest rank's sync time (/ranks.sync_ms, each rank's own clock),
                then the mean and the 95th percentile over the steps;
  tokens/s      the steps' tokens over their wall time (sum of /steps.wall_ms, rank 0's clock);
  path changes  path_selector decision records after the start-up one (each changes a route).
The Markdown table gives medians over the repeats, per scenario and backend the fraction of the
`oracle` selector's tokens/s (oracle is an UPPER BOUND: it reads the true schedules) and the
sync time relative to `direct`.

The same over the common window (columns win_*): a scenario's link schedules run on the run's
clock from its start, so a slower run lives through more of them — on markov3 `direct` outlasts
the fastest selector by ~6 s of schedule, and its whole-run means take in states that `mdp` and
the oracles never met. The window is the shortest path-selector run of the scenario and backend (the sum of its
/steps.wall_ms, rank 0's clock, start-up steps included); each run's window figures use its steps
after the first two that ended inside it (a step's end: the sum of the wall times up to it). So
every selector is measured against the same stretch of the schedules. The blp rows get none
(their runs are much shorter: a window of theirs would cut the selectors', and theirs is the
whole run).
"""
import csv
import statistics
import sys

import h5py
import numpy as np

list_file, csv_out, md_out, commit, repeats = sys.argv[1:6]
runs = []  # (scenario, selector, backend, repeat, steps, ranks, path changes): each trace read once
for line in open(list_file):
    if not line.strip():
        continue
    scenario, selector, backend, rep, trace = line.split()
    with h5py.File(trace, "r", locking=False) as f:
        steps, ranks = f["steps"][()], f["ranks"][()]
        changes = sum(1 for d in f["decisions"][()] if d["slot"].decode() == "path_selector"
                      and d["step"] >= int(steps["step"][0]))
    runs.append((scenario, selector, backend, rep, steps, ranks, changes))
# The common window per scenario and backend: the shortest path-selector run (see the top),
# summed as the step ends below are.
window = {}
for scenario, selector, backend, _, steps, _, _ in runs:
    if not selector.startswith("blp/"):
        total = float(np.cumsum(steps["wall_ms"])[-1])
        window[(scenario, backend)] = min(window.get((scenario, backend), total), total)
rows = []
for scenario, selector, backend, rep, steps, ranks, changes in runs:
    keep = steps["step"] >= steps["step"][0] + 2
    st = steps[keep]
    sync = np.array([ranks["sync_ms"][ranks["step"] == s].max() for s in st["step"]])
    wall = float(st["wall_ms"].sum())
    # Inside the common window: the steps that ended by its end (their wall times summed from
    # the run's first step).
    ends = np.cumsum(steps["wall_ms"])[keep]
    inside = (ends <= window[(scenario, backend)] * (1 + 1e-12)
              if not selector.startswith("blp/") else None)
    if inside is not None and inside.any():
        w = st[inside]
        win = {"win_steps": int(len(w)), "win_sync_mean_ms": float(sync[inside].mean()),
               "win_tokens_per_s": float(w["tokens"].sum()) / (float(w["wall_ms"].sum()) / 1e3),
               "window_s": window[(scenario, backend)] / 1e3}
    else:
        win = {"win_steps": 0, "win_sync_mean_ms": float("nan"), "win_tokens_per_s": float("nan"),
               "window_s": float("nan")}
    rows.append({
        "scenario": scenario, "backend": backend, "selector": selector, "run": int(rep),
        "steps": int(len(st)), "sync_mean_ms": float(sync.mean()),
        "sync_p95_ms": float(np.percentile(sync, 95)),
        "tokens_per_s": float(st["tokens"].sum()) / (wall / 1e3),
        "wall_ms_mean": wall / len(st), "path_changes": changes,
        "final_loss": float(steps["loss"][-1]), **win,
    })

with open(csv_out, "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
    w.writeheader()
    for r in rows:
        w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})

groups = {}
for r in rows:
    groups.setdefault((r["scenario"], r["backend"], r["selector"]), []).append(r)
med = lambda k, g: statistics.median(x[k] for x in g)
out = ["# Path selection: sync time and throughput per selector (`make bench-paths`)", "",
       f"Command: `scripts/bench-paths.sh build` (commit {commit}; {repeats} run(s) of each "
       "selector, interleaved; medians). Backend `sw` = software shaper, `tc` = kernel shaping "
       "under scripts/netns-run with the link schedules applied by tc. Sync: per step the slowest "
       "rank's /ranks.sync_ms, mean and p95 over the steps after the first two; tokens/s: their "
       "tokens over their wall time (rank 0's clock). `oracle` is an UPPER BOUND (it reads the "
       "true schedules), not a method; `oracle-now` a REACTION BOUND (the same on the true "
       "figures when it decides, not when the decision takes effect: what knowing every link's "
       "state, without foreseeing a change during control.lag, reaches). `blp/measured` and `blp/configured`: every pair direct and "
       "the blp sync planner (which routes its own flows) planning on the measured links and on "
       "the configured ones (docs/sync.md, \"Believed links\"); the other rows sync with "
       "`hierarchical`. docs/paths.md says what the scenarios are and how to read this.", "",
       "The last four columns: the same over the common window — the stretch of the link "
       "schedules (which run on each run's own clock from its start) that every path-selector run "
       "of the scenario and backend lived through, the shortest one's wall time; each run's steps "
       "after the first two that ended inside it (scripts/paths_table.py). The whole-run columns "
       "measure the time each selector takes for the same work; the window's, what each did in "
       "the same stretch of the link schedules (the step ends leave out the start-up between the "
       "schedules' start and step 0, a common offset of tens of ms). No window for the blp rows; "
       "— where a run had no step inside the window.", "",
       "| scenario | backend | selector | sync mean ms | sync p95 ms | tokens/s | min-max | "
       "of oracle | sync vs direct | path changes | window s | window: sync mean ms | "
       "window: of oracle | window: sync vs direct |",
       "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
for (s, b, p), g in groups.items():
    orc = groups.get((s, b, "oracle"))
    dr = groups.get((s, b, "direct"))
    tps = med("tokens_per_s", g)
    lo, hi = min(x["tokens_per_s"] for x in g), max(x["tokens_per_s"] for x in g)
    # A run with no step inside the window has NaN figures there: no window cells then.
    in_window = lambda grp: grp if grp and all(x["win_steps"] > 0 for x in grp) else None
    windowed = not p.startswith("blp/") and in_window(g) is not None
    wtps = med("win_tokens_per_s", g) if windowed else None
    w_orc, w_dr = in_window(orc), in_window(dr)
    out.append("| %s | %s | %s | %.1f | %.1f | %.0f | %.0f-%.0f | %s | %s | %d | %s | %s | %s | %s |" % (
        s, b, p, med("sync_mean_ms", g), med("sync_p95_ms", g), tps, lo, hi,
        "%.0f%%" % (100 * tps / med("tokens_per_s", orc)) if orc else "—",
        "%.2f×" % (med("sync_mean_ms", g) / med("sync_mean_ms", dr)) if dr else "—",
        med("path_changes", g),
        "%.1f" % med("window_s", g) if windowed else "—",
        "%.1f" % med("win_sync_mean_ms", g) if windowed else "—",
        "%.0f%%" % (100 * wtps / med("win_tokens_per_s", w_orc)) if windowed and w_orc else "—",
        "%.2f×" % (med("win_sync_mean_ms", g) / med("win_sync_mean_ms", w_dr)) if windowed and w_dr
        else "—"))
open(md_out, "w").write("\n".join(out) + "\n")
