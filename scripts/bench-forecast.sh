#!/usr/bin/env bash
# bench-forecast.sh — the load forecasters on real traces (make bench-forecast): `strait forecast`
# over every series of ../shared/data/traces — the Alibaba PAI per-worker mini-batch times
# (job_1, job_2: 20 series) and the GPU duty cycles of 100 pods (decompressed to a temporary
# file: the tool reads plain CSV) — one step ahead (and 3 ahead on PAI), what each of gmc's
# checks contributes (ablation), and a sweep of the window and the skill window on PAI. Writes
# results/forecast/{pai,pai_h3,gpu,ablation,sweep}.csv and results/forecast/README.md (the
# tables; what they say is in docs/forecast.md).
# Goal (issue 11): gmc's MAPE on the PAI aggregate at most that of the better of last-value and
# ewma. Deterministic: the same build gives the same files.
# Usage: scripts/bench-forecast.sh [BUILD_DIR]   (DATA=folder of the traces, default ../shared/data/traces)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
data=${DATA:-../shared/data/traces}
strait="$build/strait"
out=results/forecast
pai=("$data/pai-minibatch/job_1_norm.csv" "$data/pai-minibatch/job_2_norm.csv")
pods_gz="$data/gpu-duty-cycle/pods.csv.gz"
for f in "${pai[@]}" "$pods_gz"; do
  if [ ! -r "$f" ]; then
    echo "bench-forecast: skipped: $f is missing (set DATA to the folder of the traces)"
    exit 0
  fi
done
tmp=$(mktemp -d /tmp/strait-bench-forecast.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
series=(--series "${pai[0]}" --series "${pai[1]}")

echo "== PAI job_1 + job_2, one step ahead (defaults: window 6, skill window 20, fallback auto) =="
"$strait" forecast "${series[@]}" --out "$out/pai.csv" --points "$tmp/points.csv" | tee "$tmp/pai.txt"
echo "== PAI, 3 steps ahead =="
"$strait" forecast "${series[@]}" --horizon 3 --out "$out/pai_h3.csv" | tee "$tmp/pai_h3.txt"
# system.md's other two baselines: EWMA(0.3) and the mean of 5.
"$strait" forecast "${series[@]}" --alpha 0.3 --out "$tmp/alpha03.csv" > /dev/null
"$strait" forecast "${series[@]}" --window 5 --out "$tmp/window5.csv" > /dev/null
echo "== GPU duty cycle, 100 pods =="
gzip -dc "$pods_gz" > "$tmp/pods.csv"
"$strait" forecast --series "$tmp/pods.csv" --out "$tmp/gpu.csv" | tee "$tmp/gpu.txt"
# Series ids name the temporary copy: name the original file instead.
sed "s|pods.csv:pod=|pods.csv.gz:pod=|" "$tmp/gpu.csv" > "$out/gpu.csv"

echo "== ablation: gmc with each check on or off =="
echo "data,horizon,variant,forecaster,points,mae,rmse,mape_pct,mase,fell_back" > "$out/ablation.csv"
variants=("grade:--fallback last-value --skill-window 0"
          "grade+skill:--fallback last-value"
          "grade+auto:--skill-window 0"
          "grade+skill+auto:")
for v in "${variants[@]}"; do
  name=${v%%:*}
  read -r -a flags <<< "${v#*:}"
  for d in "pai 1" "pai 3" "gpu 1"; do
    read -r data h <<< "$d"
    if [ "$data" = pai ]; then src=("${series[@]}"); else src=(--series "$tmp/pods.csv"); fi
    "$strait" forecast "${src[@]}" --horizon "$h" "${flags[@]}" --out "$tmp/a.csv" > /dev/null
    awk -F, -v d="$data" -v h="$h" -v n="$name" \
      '$1 == "all" { print d "," h "," n "," $2 "," $3 "," $4 "," $5 "," $6 "," $8 "," $9 }' \
      "$tmp/a.csv" >> "$out/ablation.csv"
  done
done

echo "== sweep on PAI: window x skill window =="
echo "window,skill_window,forecaster,points,mae,rmse,mape_pct,mase,fell_back" > "$out/sweep.csv"
for w in 4 5 6 8 12; do
  for m in 0 10 20 40; do
    "$strait" forecast "${series[@]}" --window "$w" --skill-window "$m" --out "$tmp/s.csv" > /dev/null
    awk -F, -v w="$w" -v m="$m" '$1 == "all" { print w "," m "," $2 "," $3 "," $4 "," $5 "," $6 "," $8 "," $9 }' \
      "$tmp/s.csv" >> "$out/sweep.csv"
  done
done

/usr/bin/python3 - "$out" "$tmp" <<'PY'
import csv, sys
out, tmp = sys.argv[1], sys.argv[2]

def agg(path):
    return {r["forecaster"]: r for r in csv.DictReader(open(path)) if r["series"] == "all"}

def f(x, d=4):
    return "" if x == "" else f"{float(x):.{d}f}"

def table(rows, note=""):
    names = ["last-value", "moving-mean", "ewma", "gm11-textbook", "gmc-textbook", "gm11", "gmc"]
    s = "| forecaster | MAE | RMSE | MAPE % | MASE | fell back |\n|---|---|---|---|---|---|\n"
    for n in names:
        r = rows[n]
        fb = f"{100 * int(r['fell_back']) / int(r['points']):.2f}%" if n.startswith("gm") else ""
        s += f"| `{n}` | {f(r['mae'], 3)} | {f(r['rmse'], 3)} | {f(r['mape_pct'])} | {f(r['mase'])} | {fb} |\n"
    return s + note

def reasons(rows):
    checks = ["window", "positivity", "fit", "development", "forecast", "markov", "grade", "skill"]
    s = "| forecaster | " + " | ".join(checks) + " |\n|---|" + "---|" * len(checks) + "\n"
    for n in ["gm11-textbook", "gmc-textbook", "gm11", "gmc"]:
        r = rows[n]
        s += f"| `{n}` | " + " | ".join(
            f"{100 * int(r['fallback_' + c]) / int(r['points']):.1f}%" for c in checks) + " |\n"
    return s

pai, h3, gpu = agg(f"{out}/pai.csv"), agg(f"{out}/pai_h3.csv"), agg(f"{out}/gpu.csv")
a03, w5 = agg(f"{tmp}/alpha03.csv"), agg(f"{tmp}/window5.csv")
abl = list(csv.DictReader(open(f"{out}/ablation.csv")))
best = min(float(pai["last-value"]["mape_pct"]), float(pai["ewma"]["mape_pct"]))

# Why GM(1,1) loses: the fits' checks on the points where it lost, and the series themselves.
pts = list(csv.DictReader(open(f"{tmp}/points.csv")))
def grade(c, p):
    return 1 if c <= .35 and p >= .95 else 2 if c <= .5 and p >= .8 else 3 if c <= .65 and p >= .7 else 4
def mape(rows, k):
    return 100 * sum(abs(float(r[k]) - float(r["actual"])) / float(r["actual"]) for r in rows) / len(rows)
n = len(pts)
unshifted = sum(1 for r in pts if float(r["shift"]) == 0)
absa = sorted(abs(float(r["a"])) for r in pts)
why = "| windows (points) | passed the class-ratio test unshifted | median abs(a) | largest abs(a) |\n|---|---|---|---|\n"
why += f"| {n} | {100 * unshifted / n:.1f}% | {absa[n // 2]:.4f} | {absa[-1]:.4f} |\n\n"
why += "| C/P grade of the window | share | MAPE % gm11-textbook | MAPE % last-value |\n|---|---|---|---|\n"
for g in (1, 2, 3, 4):
    rows = [r for r in pts if grade(float(r["c"]), float(r["p"])) == g]
    if rows:
        why += f"| {'I II III IV'.split()[g - 1]} | {100 * len(rows) / n:.1f}% | {mape(rows, 'gm11-textbook'):.3f} | {mape(rows, 'last-value'):.3f} |\n"
rep_rows = [r for r in pts if r["actual"] == r["last-value"]]
new_rows = [r for r in pts if r["actual"] != r["last-value"]]
why += "\n| targets | share | MAPE % last-value | MAPE % ewma | MAPE % gm11-textbook |\n|---|---|---|---|---|\n"
for label, rows in (("equal to the previous value (a repeated sample)", rep_rows), ("a new value", new_rows)):
    why += f"| {label} | {100 * len(rows) / n:.1f}% | {mape(rows, 'last-value'):.3f} | {mape(rows, 'ewma'):.3f} | {mape(rows, 'gm11-textbook'):.3f} |\n"
def lag1(v):
    m = sum(v) / len(v)
    return sum((a - m) * (b - m) for a, b in zip(v[1:], v[:-1])) / sum((a - m) ** 2 for a in v)
by = {}
for r in pts:
    by.setdefault(r["series"], []).append(float(r["actual"]))
levels = sorted(lag1(v) for v in by.values())
changes = sorted(lag1([b - a for a, b in zip(v[:-1], v[1:])]) for v in by.values())
used = sum(1 for r in pts if r["gmc_model"] == "gmc")
by_model = {}
for r in pts:
    by_model[r["gmc_model"]] = by_model.get(r["gmc_model"], 0) + 1
answered = ", ".join(f"`{m}` {100 * k / n:.1f}%" for m, k in sorted(by_model.items(), key=lambda x: -x[1]))
why += (f"\nLag-1 autocorrelation over the {len(by)} series (median, range): of the level "
        f"{levels[len(levels) // 2]:.2f} ({levels[0]:.2f} to {levels[-1]:.2f}), of the one-step change "
        f"{changes[len(changes) // 2]:.2f} ({changes[0]:.2f} to {changes[-1]:.2f}). `gmc` answered with "
        f"its own model on {used} of the {n} points; who answered: {answered}.\n")
gmc = float(pai["gmc"]["mape_pct"])
md = f"""# Load forecasters on real traces

Generated by `make bench-forecast` (`scripts/bench-forecast.sh build`) from
`../shared/data/traces` (Alibaba cluster traces, CC BY 4.0: `cluster-trace-gpu-v2020`
mini-batch times, Weng et al., NSDI 2022; `cluster-trace-v2026-GenAI` pod GPU duty cycles).
How each forecaster works and what these tables say: `docs/forecast.md`. Per-series rows are in
the CSV files next to this one.

Every forecaster is scored on the same points: each origin where the window is full, one value
(or 3) ahead. MAPE is over points whose actual value is not 0; MASE divides by each series' own
in-sample naive one-step MAE (Hyndman & Koehler 2006); aggregates pool all points of all
series. `fell back`: share of forecasts a grey model handed to its fallback.

## PAI job_1 + job_2, every worker (20 series), one step ahead

`strait forecast --series job_1_norm.csv --series job_2_norm.csv` (window 6, 3 states, ewma α 0.5,
skill window 20, fallback auto) → `pai.csv`

{table(pai)}
**Goal:** `gmc` MAPE {gmc:.4f}% against the better of `last-value` and `ewma`, {best:.4f}%:
{"met" if gmc <= best else "NOT met"} ({gmc - best:+.4f} points).

Why the grey models fell back (share of all forecasts):

{reasons(pai)}
system.md's figures, reproduced (same points, same definitions):

| system.md | figure there | here | command |
|---|---|---|---|
| last value | 1.50% | {f(pai['last-value']['mape_pct'], 2)}% | defaults |
| EWMA(0.5) | 1.74% | {f(pai['ewma']['mape_pct'], 2)}% | defaults |
| EWMA(0.3) | 1.88% | {f(a03['ewma']['mape_pct'], 2)}% | `--alpha 0.3` |
| mean of 5 | 2.04% | {f(w5['moving-mean']['mape_pct'], 2)}% | `--window 5` |
| textbook GM(1,1), window 6 | 2.20% | {f(pai['gm11-textbook']['mape_pct'], 2)}% | defaults |
| Grey-Markov, 3 states | 2.26% | {f(pai['gmc-textbook']['mape_pct'], 2)}% | defaults |

## Why GM(1,1) loses on these series

From every scored point of the run above (`--points`): the gm11-textbook fit behind each
forecast, and the errors of `gm11-textbook` and `last-value` on the same points.

{why}
## PAI, three steps ahead

`--horizon 3` → `pai_h3.csv` (the skill test then scores 3-step forecasts)

{table(h3)}
## What each check contributes (gmc)

Every variant keeps the checks that leave GM(1,1) undefined; `textbook` acts on nothing else
(its fallback here: `last-value`). `grade`: a grade IV fit falls back; `skill`: the model
answers only while it beats its fallback significantly on its last 20 forecasts
(Diebold–Mariano, one-sided 5%); `auto`: the fallback is the baseline with the lowest mean
absolute error on all past forecasts of the series (otherwise `last-value`). → `ablation.csv`

"""
def abl_cell(data, h, v, k, name="gmc"):
    return next(r[k] for r in abl if r["data"] == data and r["horizon"] == h and r["variant"] == v and r["forecaster"] == name)
md += "| gmc variant | PAI h=1 MAPE % | PAI h=3 MAPE % | GPU MAE | GPU MASE | PAI h=1 fell back |\n|---|---|---|---|---|---|\n"
tb = lambda d, h, k: abl_cell(d, h, "grade", k, "gmc-textbook")  # its fallback: last-value
md += f"| textbook | {f(tb('pai', '1', 'mape_pct'))} | {f(tb('pai', '3', 'mape_pct'))} | {f(tb('gpu', '1', 'mae'), 3)} | {f(tb('gpu', '1', 'mase'))} | 0.00% |\n"
for v in ("grade", "grade+skill", "grade+auto", "grade+skill+auto"):
    fb = 100 * int(abl_cell("pai", "1", v, "fell_back")) / int(abl_cell("pai", "1", v, "points"))
    md += (f"| {v}{' (default)' if v == 'grade+skill+auto' else ''} | {f(abl_cell('pai', '1', v, 'mape_pct'))} | "
           f"{f(abl_cell('pai', '3', v, 'mape_pct'))} | {f(abl_cell('gpu', '1', v, 'mae'), 3)} | "
           f"{f(abl_cell('gpu', '1', v, 'mase'))} | {fb:.2f}% |\n")
md += f"""| *best baseline* | {min(float(pai[n]['mape_pct']) for n in ('last-value', 'moving-mean', 'ewma')):.4f} | {min(float(h3[n]['mape_pct']) for n in ('last-value', 'moving-mean', 'ewma')):.4f} | {min(float(gpu[n]['mae']) for n in ('last-value', 'moving-mean', 'ewma')):.3f} | {min(float(gpu[n]['mase']) for n in ('last-value', 'moving-mean', 'ewma')):.4f} | |

## Sweep on PAI: window × skill window (MAPE %, one step ahead)

`--window W --skill-window M` → `sweep.csv`; M = 0 is no skill test.

"""
sweep = list(csv.DictReader(open(f"{out}/sweep.csv")))
md += "| window | last-value | ewma | gm11-textbook | gmc-textbook | " + " | ".join(
    f"gmc, M={m}" for m in ("0", "10", "20", "40")) + " |\n|---|" + "---|" * 8 + "\n"
for w in ("4", "5", "6", "8", "12"):
    cell = lambda n, m="20": f(next(r["mape_pct"] for r in sweep if r["window"] == w and r["skill_window"] == m and r["forecaster"] == n))
    md += f"| {w} | {cell('last-value')} | {cell('ewma')} | {cell('gm11-textbook')} | {cell('gmc-textbook')} | " + \
          " | ".join(cell("gmc", m) for m in ("0", "10", "20", "40")) + " |\n"
md += f"""
## GPU duty cycle, 100 pods (97 with enough samples), one step ahead

`gzip -dc pods.csv.gz > pods.csv; strait forecast --series pods.csv` → `gpu.csv`. About two
thirds of the samples are 0 (idle pods): a window holding a 0 is outside GM(1,1)'s domain
(x0 > 0) and goes to the fallback (`positivity`), and MAPE, over the non-zero samples only, is
dominated by near-idle values of a few percent — read MAE and MASE here.

{table(gpu)}
{reasons(gpu)}"""
open(f"{out}/README.md", "w").write(md)
print(f"bench-forecast: wrote {out}/README.md, pai.csv, pai_h3.csv, gpu.csv, ablation.csv, sweep.csv")
print(f"bench-forecast: gmc MAPE {gmc:.4f}% vs best baseline {best:.4f}%: {'met' if gmc <= best else 'NOT met'}")
PY
