#!/usr/bin/python3
"""balance_table.py LIST CSV MD [BOUND_CSV] — the tables of make bench-balance (scripts/bench-balance.sh).

LIST has one line per run: "scenario forecaster balancer repeat trace.h5 [load]" (load: the
machine's 1-minute load average when the run ended, ours included). From each trace:
  tokens/s      the run's tokens over its wall time (sum of /steps.wall_ms);
  idle share    the mean over steps of sum_r (L_max - L_r) / (ranks x L_max), with L_r a rank's
                load (compute outside the DC's reductions + emulated, /ranks): the share of the
                compute phase the ranks spend waiting for the slowest one, 0 when balanced;
  re-splits     balancer decisions that re-split, and those that moved only the batch shares;
  made early    of those, the ones made on their first ask (act_early, docs/balance.md);
  device tok/s  the run's tokens over the sum over steps of the slowest rank's load + the slowest
                re-split: the compute phase on the emulated devices' clock, without the sync and
                without most of the machine's noise (loads are paced to the device, pacer.hpp);
                what the balancer controls, for reading through the noise of tokens/s;
  settled tok/s the same from step 10 on (the first 10 steps left out): the start-up transient
                apart — a rank slow from step 0 is answered in the rule's warm-up (4 steps
                after the first, then a confirmation), the oracle at step 1 — so that what
                remains is how well a policy follows the load as it drifts;
  re-split ms   the time the re-splits took (per step the slowest rank's /ranks.reshard_ms; the
                start-up probe that measures the cost is included) and its share of the run.
The Markdown table gives medians over the repeats, the spread of tokens/s (min-max), the
speed-up over `static` and the fraction of the `oracle` balancer (an UPPER BOUND) per scenario.
BOUND_CSV (bench/balance_bound.cpp, one row per scenario) adds a second table: on the device
clock and the scenario's true speeds, what the oracle's plans reach when they come d steps late
(the reaction bound of any balancer that cannot foresee a change), beside the runs' own
device-clock fraction of the oracle.
"""
import csv
import json
import statistics
import subprocess
import sys

import h5py
import numpy as np

SETTLED_FROM = 10  # first step of "settled tok/s" (see above)

list_file, csv_out, md_out = sys.argv[1:4]
bound_csv = sys.argv[4] if len(sys.argv) > 4 else None
rows = []
for line in open(list_file):
    scenario, forecaster, balancer, rep, trace, *rest = line.split()
    load1 = float(rest[0]) if rest else float("nan")
    with h5py.File(trace, "r", locking=False) as f:
        steps, ranks = f["steps"][()], f["ranks"][()]
        decisions = [json.loads(d["detail"]) for d in f["decisions"][()]
                     if d["slot"].decode() == "balancer"]
    load = ranks["compute_ms"] - ranks["reduce_ms"] + ranks["emulated_ms"]
    idle, reshard, device = [], 0.0, 0.0
    for s in steps["step"]:
        at = ranks["step"] == s
        lm = load[at].max()
        idle.append(float(np.mean((lm - load[at]) / lm)) if lm > 0 else 0.0)
        reshard += float(ranks["reshard_ms"][at].max())
        device += lm + float(ranks["reshard_ms"][at].max())
    wall = float(steps["wall_ms"].sum())
    settled = steps["step"] >= SETTLED_FROM
    settled_wall = float(steps["wall_ms"][settled].sum())
    rows.append({
        "scenario": scenario, "forecaster": forecaster, "balancer": balancer, "run": int(rep),
        "steps": len(steps), "tokens_per_s": float(steps["tokens"].sum()) / (wall / 1e3),
        "wall_ms_mean": wall / len(steps), "idle_share": float(np.mean(idle)),
        "settled_tokens_per_s": (float(steps["tokens"][settled].sum()) / (settled_wall / 1e3)
                                 if settled_wall > 0 else float("nan")),
        "device_tokens_per_s": float(steps["tokens"].sum()) / (device / 1e3),
        "resplits": sum(d.get("decision") == "resplit" for d in decisions),
        "share_moves": sum(d.get("decision") == "shares" for d in decisions),
        "made_early": sum(d.get("decision") in ("resplit", "shares")
                          and bool(d.get("lasted", {}).get("early")) for d in decisions),
        "resplit_ms": reshard, "resplit_share": reshard / wall,
        "final_loss": float(steps["loss"][-1]), "load_avg_1min": load1,
    })

with open(csv_out, "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
    w.writeheader()
    for r in rows:
        w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})

# Medians per scenario and policy, in the order the runs were listed.
groups = {}
for r in rows:
    groups.setdefault((r["scenario"], r["forecaster"], r["balancer"]), []).append(r)
med = lambda k, g: statistics.median(x[k] for x in g)
scenarios = list(dict.fromkeys(r["scenario"] for r in rows))
repeats = max(r["run"] for r in rows)
loads = [r["load_avg_1min"] for r in rows if r["load_avg_1min"] == r["load_avg_1min"]] or [float("nan")]
lo_load, hi_load, med_load = min(loads), max(loads), statistics.median(loads)
spreads = [max(x["tokens_per_s"] for x in g) / min(x["tokens_per_s"] for x in g) - 1
           for g in groups.values()]
spread, med_spread = max(spreads), statistics.median(spreads)
commit = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True,
                        text=True).stdout.strip() or "unknown"
out = [
    "# Does re-splitting pay? (`make bench-balance`)",
    "",
    f"Command: `BENCH_REPEATS={repeats} scripts/bench-balance.sh build` (= `make bench-balance`; "
    f"commit {commit}; {repeats} runs of each policy, "
    "interleaved; medians, tokens/s with its min-max over the runs). Scenarios: "
    "`configs/balance/*.toml`, 2 DCs x 2 ranks, 60 steps, every rank an emulated device of 8 "
    "model GFLOP/s; docs/balance.md says what they are and what the figures mean. "
    "`oracle` is an UPPER BOUND (it reads the scenario's true speeds), not a method.",
    "",
    f"Noise: the machine (2 cores) was shared; its 1-minute load average at the end of each run was "
    f"{lo_load:.1f}-{hi_load:.1f} (median {med_load:.1f}) (our 4 ranks included). Runs of the same "
    f"policy and scenario differ by up to {spread:.0%} in tokens/s (median {med_spread:.0%}); read "
    "a speed-up within that as no difference.",
    "",
    "| scenario | forecaster | balancer | tokens/s | min-max | idle share | vs static | "
    "of oracle | re-splits | share moves | made early | re-split time | device tok/s | "
    f"vs static (device) | of oracle (device) | of oracle from step {SETTLED_FROM} |",
    "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
]
for s in scenarios:
    static = [g for k, g in groups.items() if k[0] == s and k[2] == "static"]
    oracle = [g for k, g in groups.items() if k[0] == s and k[2] == "oracle"]
    base = med("tokens_per_s", static[0]) if static else None
    best = med("tokens_per_s", oracle[0]) if oracle else None
    dbase = med("device_tokens_per_s", static[0]) if static else None
    dbest = med("device_tokens_per_s", oracle[0]) if oracle else None
    sbest = med("settled_tokens_per_s", oracle[0]) if oracle else None
    for (sc, fc, bal), g in groups.items():
        if sc != s:
            continue
        t = med("tokens_per_s", g)
        lo, hi = min(x["tokens_per_s"] for x in g), max(x["tokens_per_s"] for x in g)
        out.append(
            f"| {sc} | {fc} | {bal} | {t:.0f} | {lo:.0f}-{hi:.0f} | {med('idle_share', g):.3f} | "
            + (f"{t / base:.2f}x" if base else "-") + " | "
            + (f"{t / best:.0%}" if best else "-") + " | "
            + f"{med('resplits', g):g} | {med('share_moves', g):g} | "
            # static and oracle never confirm a change, so none can be made early: no figure.
            + (f"{med('made_early', g):g}" if bal not in ("static", "oracle") else "-") + " | "
            + f"{med('resplit_share', g):.2%} | "
            + f"{med('device_tokens_per_s', g):.0f} | "
            + (f"{med('device_tokens_per_s', g) / dbase:.2f}x" if dbase else "-") + " | "
            + (f"{med('device_tokens_per_s', g) / dbest:.0%}" if dbest else "-") + " | "
            + (f"{med('settled_tokens_per_s', g) / sbest:.0%}" if sbest else "-") + " |")
if bound_csv:
    bounds = {r["scenario"].removeprefix("balance-"): r for r in csv.DictReader(open(bound_csv))}
    out += [
        "",
        "## What reacting can reach (`balance_bound`, device clock, no noise)",
        "",
        "Per scenario, the compute time of the whole run on the emulated devices' clock with the "
        "scenario's true speeds (no sync, no re-split cost), as a fraction of the oracle's "
        "throughput: `static` keeps the configured plan; `late d` takes at every step the "
        "oracle's plan for the speeds of d steps before (it knows every speed the moment a step "
        "ends, re-plans for free, and cannot foresee a change). The scenarios run with "
        "`control.lag = 1` and `control.report = \"after-compute\"`: a decision applies to the "
        "step after the one it heard, so `late 1` bounds any balancer whose forecaster cannot "
        "predict a jump, and `late 2` one that also confirms a change once (`confirm = 2`). "
        "Beside it, the runs' own device-clock fraction of the oracle (above).",
        "",
        "| scenario | static | late 1 | late 2 | late 3 | late 4 | gmc + proportional (runs) | "
        "last-value + proportional (runs) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for s in scenarios:
        b = bounds.get(s)
        if not b:
            continue
        oracle = [g for k, g in groups.items() if k[0] == s and k[2] == "oracle"]
        dbest = med("device_tokens_per_s", oracle[0]) if oracle else None
        def runs(fc):
            g = groups.get((s, fc, "proportional"))
            return f"{med('device_tokens_per_s', g) / dbest:.0%}" if g and dbest else "-"
        out.append(f"| {s} | " + " | ".join(f"{float(b[k]):.0%}" for k in (
            "static_of_oracle", "late1_of_oracle", "late2_of_oracle", "late3_of_oracle",
            "late4_of_oracle")) + f" | {runs('gmc')} | {runs('last-value')} |")
open(md_out, "w").write("\n".join(out) + "\n")
