#!/usr/bin/python3
"""paths_table.py LIST CSV MD COMMIT REPEATS — the tables of make bench-paths (bench-paths.sh).

LIST has one line per run: "scenario selector backend repeat trace.h5 [schedule]", the last
field the run's schedule set (bench-paths.sh SEEDS: set k adds 100·k to every markov_seed of the
scenario; 0 when absent). From each trace, over
the steps after the first two (start-up: connections, first solves):
  sync ms       per step the slowest rank's sync time (/ranks.sync_ms, each rank's own clock),
                then the mean and the 95th percentile over the steps;
  tokens/s      the steps' tokens over their wall time (sum of /steps.wall_ms, rank 0's clock);
  path changes  path_selector decision records after the start-up one (each changes a route).
The Markdown table gives medians over the repeats, per scenario and backend the fraction of the
`oracle` selector's tokens/s (oracle is an UPPER BOUND: it reads the true schedules), the
fraction of `oracle-now`'s (the REACTION BOUND: the true figures when it decides) and the sync
time relative to `direct`. With several schedule sets the medians are taken per set and
then pooled over the sets: tokens/s as the same work done once on each set (the harmonic mean
of the sets' figures), sync means and p95s as their mean; the last column gives the fraction of
the oracle set by set (each against the oracle on the same schedules).

The same over the common window (columns win_*): a scenario's link schedules run on the run's
clock from its start, so a slower run lives through more of them — on markov3 `direct` outlasts
the fastest selector by ~6 s of schedule, and its whole-run means take in states that `mdp` and
the oracles never met. The window is the shortest path-selector run of the scenario, backend and schedule set (the sum of its
/steps.wall_ms, rank 0's clock, start-up steps included); each run's window figures use its steps
after the first two that ended inside it (a step's end: the sum of the wall times up to it). So
every selector is measured against the same stretch of the schedules. The blp rows get none
(their runs are much shorter: a window of theirs would cut the selectors', and theirs is the
whole run). Over several schedule sets the window figures pool as the whole-run ones, tokens/s
weighted by each set's window (the same stretch for every selector of a set).
"""
import csv
import statistics
import sys

import h5py
import numpy as np

list_file, csv_out, md_out, commit, repeats = sys.argv[1:6]
runs = []  # (scenario, selector, backend, repeat, steps, ranks, path changes, schedule set)
for line in open(list_file):  # each trace read once
    if not line.strip():
        continue
    fields = line.split()
    if len(fields) not in (5, 6):
        sys.exit(f"paths_table.py: {list_file}: expected 'scenario selector backend repeat trace "
                 f"[schedule]', got {line.strip()!r}")
    scenario, selector, backend, rep, trace = fields[:5]
    if len(fields) == 6 and not fields[5].isdigit():
        sys.exit(f"paths_table.py: {list_file}: the schedule set must be a whole number, got "
                 f"{fields[5]!r} in {line.strip()!r}")
    sched = int(fields[5]) if len(fields) == 6 else 0
    with h5py.File(trace, "r", locking=False) as f:
        steps, ranks = f["steps"][()], f["ranks"][()]
        changes = sum(1 for d in f["decisions"][()] if d["slot"].decode() == "path_selector"
                      and d["step"] >= int(steps["step"][0]))
        # The scenario's capacities at each step's end (/links.configured_gbps: the schedule's
        # figure, under both backends), to find the steps in which a link changed.
        caps = {}
        for row in f["links"][()]:
            caps.setdefault(int(row["step"]), []).append(
                (int(row["src"]), int(row["dst"]), float(row["configured_gbps"])))
        caps = [sorted(caps.get(int(s), [])) for s in steps["step"]]
    runs.append((scenario, selector, backend, rep, steps, ranks, changes, sched, caps))
# The common window per scenario, backend and schedule set: the shortest path-selector run (see
# the top), summed as the step ends below are.
window = {}
for scenario, selector, backend, _, steps, _, _, sched, _ in runs:
    if not selector.startswith("blp/"):
        total = float(np.cumsum(steps["wall_ms"])[-1])
        key = (scenario, backend, sched)
        window[key] = min(window.get(key, total), total)


def around(steps, caps, keep):
    """Where the time goes: the steps (after the first two) in which a link's capacity changed,
    the wall time of each such step and the next (a step counted once), and the mean wall time of
    the other steps — what reacting to a change costs against the steady pace."""
    changed = keep & np.array([i > 0 and caps[i] != caps[i - 1] for i in range(len(caps))])
    near = changed | np.concatenate(([False], changed[:-1]))
    n, wall = int(changed.sum()), steps["wall_ms"]
    far = keep & ~near
    return {"cap_changes": n, "around_change_s": float(wall[keep & near].sum()) / 1e3,
            "elsewhere_step_ms": float(wall[far].mean()) if far.any() else float("nan")}


rows = []
for scenario, selector, backend, rep, steps, ranks, changes, sched, caps in runs:
    keep = steps["step"] >= steps["step"][0] + 2
    st = steps[keep]
    sync = np.array([ranks["sync_ms"][ranks["step"] == s].max() for s in st["step"]])
    wall = float(st["wall_ms"].sum())
    # Inside the common window: the steps that ended by its end (their wall times summed from
    # the run's first step).
    ends = np.cumsum(steps["wall_ms"])[keep]
    inside = (ends <= window[(scenario, backend, sched)] * (1 + 1e-12)
              if not selector.startswith("blp/") else None)
    if inside is not None and inside.any():
        w = st[inside]
        win = {"win_steps": int(len(w)), "win_sync_mean_ms": float(sync[inside].mean()),
               "win_tokens_per_s": float(w["tokens"].sum()) / (float(w["wall_ms"].sum()) / 1e3),
               "window_s": window[(scenario, backend, sched)] / 1e3}
    else:
        win = {"win_steps": 0, "win_sync_mean_ms": float("nan"), "win_tokens_per_s": float("nan"),
               "window_s": float("nan")}
    rows.append({
        "scenario": scenario, "backend": backend, "selector": selector, "run": int(rep),
        "steps": int(len(st)), "sync_mean_ms": float(sync.mean()),
        "sync_p95_ms": float(np.percentile(sync, 95)),
        "tokens_per_s": float(st["tokens"].sum()) / (wall / 1e3),
        "wall_ms_mean": wall / len(st), "path_changes": changes,
        "final_loss": float(steps["loss"][-1]), **win, "schedule": sched, **around(steps, caps, keep),
    })

with open(csv_out, "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
    w.writeheader()
    for r in rows:
        w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})

groups = {}
for r in rows:
    groups.setdefault((r["scenario"], r["backend"], r["selector"]), []).append(r)
nsets = len({r["schedule"] for r in rows})


def by_set(k, g):
    """The median of k over each schedule set's repeats: {set: median}."""
    sets = {}
    for x in g:
        sets.setdefault(x["schedule"], []).append(x[k])
    return {s: statistics.median(v) for s, v in sorted(sets.items())}


def mean(k, g):
    """Sync means and p95s, path changes, window lengths: the mean of the sets' medians (a set's
    runs have the same number of steps)."""
    v = by_set(k, g)
    return sum(v.values()) / len(v)


def rate(g):
    """tokens/s over the sets: the same work done once on each set (the harmonic mean)."""
    v = by_set("tokens_per_s", g)
    return len(v) / sum(1 / x for x in v.values())


def win_rate(g):
    """Window tokens/s over the sets, each weighted by its window (its stretch of the schedules)."""
    v, w = by_set("win_tokens_per_s", g), by_set("window_s", g)
    return sum(v[s] * w[s] for s in v) / sum(w.values())


# Ratios only between selectors run on the same schedule sets.
alike = lambda a, b: b is not None and {x["schedule"] for x in a} == {x["schedule"] for x in b}
out = ["# Path selection: sync time and throughput per selector (`make bench-paths`)", "",
       f"Command: `scripts/bench-paths.sh build` (commit {commit}; {repeats} run(s) of each "
       "selector" + (f" on each of {nsets} schedule sets (bench-paths.sh SEEDS: set k adds 100·k "
                     "to every markov_seed of the scenario)" if nsets > 1 else "")
       + ", interleaved; medians" + (", per set, then pooled over the sets: tokens/s as the "
                                     "same work once on each set, sync as the sets' mean"
                                     if nsets > 1 else "") + "). Backend `sw` = software shaper, `tc` = kernel shaping "
       "under scripts/netns-run with the link schedules applied by tc. Sync: per step the slowest "
       "rank's /ranks.sync_ms, mean and p95 over the steps after the first two; tokens/s: their "
       "tokens over their wall time (rank 0's clock). `oracle` is an UPPER BOUND (it reads the "
       "true schedules), not a method; `oracle-now` a REACTION BOUND (the same on the true "
       "figures when it decides, not when the decision takes effect: what knowing every link's "
       "state, without foreseeing a change during control.lag, reaches); `of oracle-now` is each "
       "row's tokens/s over `oracle-now`'s. `blp/measured` and `blp/configured`: every pair direct and "
       "the blp sync planner (which routes its own flows) planning on the measured links and on "
       "the configured ones (docs/sync.md, \"Believed links\"); the other rows sync with "
       "`hierarchical`. docs/paths.md says what the scenarios are and how to read this.", "",
       "The four window columns: the same over the common window — the stretch of the link "
       "schedules (which run on each run's own clock from its start) that every path-selector run "
       "of the scenario and backend lived through, the shortest one's wall time; each run's steps "
       "after the first two that ended inside it (scripts/paths_table.py). The whole-run columns "
       "measure the time each selector takes for the same work; the window's, what each did in "
       "the same stretch of the link schedules (the step ends leave out the start-up between the "
       "schedules' start and step 0, a common offset of tens of ms). No window for the blp rows; "
       "— where a run had no step inside the window." + (
           " The last column: the fraction of the oracle on each schedule set, set by set; "
           "min-max spans the runs of every set; a selector not run on the same sets as the "
           "oracle (or `oracle-now`, or `direct`) gets no ratio to it." if nsets > 1 else ""), "",
       "| scenario | backend | selector | sync mean ms | sync p95 ms | tokens/s | min-max | "
       "of oracle | of oracle-now | sync vs direct | path changes | window s | window: sync mean ms | "
       "window: of oracle | window: sync vs direct |" + (" of oracle by set |" if nsets > 1 else ""),
       "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|" + ("---:|" if nsets > 1 else "")]
for (s, b, p), g in groups.items():
    orc = groups.get((s, b, "oracle"))
    now = groups.get((s, b, "oracle-now"))
    dr = groups.get((s, b, "direct"))
    orc, dr = (orc if alike(g, orc) else None), (dr if alike(g, dr) else None)
    now = now if alike(g, now) else None
    tps = rate(g)
    lo, hi = min(x["tokens_per_s"] for x in g), max(x["tokens_per_s"] for x in g)
    # A run with no step inside the window has NaN figures there: no window cells then.
    in_window = lambda grp: grp if grp and all(x["win_steps"] > 0 for x in grp) else None
    windowed = not p.startswith("blp/") and in_window(g) is not None
    w_orc, w_dr = in_window(orc), in_window(dr)
    cells = [s, b, p, "%.1f" % mean("sync_mean_ms", g), "%.1f" % mean("sync_p95_ms", g),
             "%.0f" % tps, "%.0f-%.0f" % (lo, hi),
             "%.0f%%" % (100 * tps / rate(orc)) if orc else "—",
             "%.0f%%" % (100 * tps / rate(now)) if now else "—",
             "%.2f×" % (mean("sync_mean_ms", g) / mean("sync_mean_ms", dr)) if dr else "—",
             "%.0f" % mean("path_changes", g),
             "%.1f" % mean("window_s", g) if windowed else "—",
             "%.1f" % mean("win_sync_mean_ms", g) if windowed else "—",
             "%.0f%%" % (100 * win_rate(g) / win_rate(w_orc)) if windowed and w_orc else "—",
             "%.2f×" % (mean("win_sync_mean_ms", g) / mean("win_sync_mean_ms", w_dr))
             if windowed and w_dr else "—"]
    if nsets > 1:
        mine, theirs = by_set("tokens_per_s", g), by_set("tokens_per_s", orc) if orc else {}
        cells.append(" / ".join("%.0f" % (100 * mine[k] / theirs[k]) for k in mine) + "%"
                     if orc else "—")
    out.append("| " + " | ".join(cells) + " |")
out += ["", "Around the link changes: the steps after the first two in which a link's capacity "
        "changed (/links.configured_gbps at the step's end differs from the step before's: the "
        "schedule's figure, under both backends), the wall time of each such step and the next "
        "per change (rank 0's clock; a step near two changes counted once), and the mean wall "
        "time of the other steps. A slower run meets more changes (the schedules run on its "
        "clock); what a selector loses in reacting shows in the second column, what it loses in "
        "steady states in the third. Medians over the repeats, means over the schedule sets.", "",
        "| scenario | backend | selector | changes | ms per change (its step and the next) | "
        "ms a step elsewhere |", "|---|---|---|---:|---:|---:|"]
for (s, b, p), g in groups.items():
    if p.startswith("blp/"):
        continue
    n = mean("cap_changes", g)
    per = mean("around_change_s", g) * 1e3 / n if n > 0 else float("nan")
    far = mean("elsewhere_step_ms", g)
    out.append("| %s | %s | %s | %.0f | %s | %s |" % (
        s, b, p, n, "%.0f" % per if n > 0 else "—", "%.1f" % far if far == far else "—"))
open(md_out, "w").write("\n".join(out) + "\n")
