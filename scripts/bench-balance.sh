#!/usr/bin/env bash
# bench-balance.sh — does re-splitting pay? (make bench-balance): every load scenario of
# configs/balance/ (two GPU duty-cycle replays, a PAI batch-time replay, a step change, a stable
# homogeneous world, stationary noise) under static, proportional on the gmc and last-value
# forecasts, and the oracle balancer (an UPPER BOUND), each run BENCH_REPEATS times (default 2),
# interleaved (even repeats in reverse policy order) so that a busy spell of the machine does
# not fall on one policy. Writes
# results/bench/balance.csv (every run) and results/bench/balance.md (medians: tokens/s, idle
# share, speed-up over static, fraction of the oracle, re-splits); traces go to
# results/runs/balance/ (not committed). What the figures say: docs/balance.md.
# Cost: 6 scenarios × 4 policies × 2 repeats = 48 runs of 60 steps, about 10 minutes on 2 cores.
# Usage: scripts/bench-balance.sh [BUILD_DIR]   (BENCH_REPEATS, BENCH_SCENARIOS to narrow it)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
repeats=${BENCH_REPEATS:-2}
scenarios=${BENCH_SCENARIOS:-"duty-a duty-b pai-job2 step stable noisy"}
policies=("last-value static" "gmc proportional" "last-value proportional" "oracle oracle")
runs=results/runs/balance
mkdir -p "$runs" results/bench
list=$(mktemp /tmp/strait-bench-balance.XXXXXX)
trap 'rm -f "$list"' EXIT
for rep in $(seq 1 "$repeats"); do
  for s in $scenarios; do
    # Even repeats run the policies in reverse order, so that no policy always comes first
    # after a scenario change (the machine's busy spells have no reason to respect the order).
    order=("${policies[@]}")
    if (( rep % 2 == 0 )); then
      order=(); for ((i = ${#policies[@]} - 1; i >= 0; i--)); do order+=("${policies[i]}"); done
    fi
    for p in "${order[@]}"; do
      read -r forecaster balancer <<< "$p"
      trace="$runs/$s-$forecaster-$balancer-$rep.h5"
      echo "== $s: forecaster $forecaster, balancer $balancer (run $rep of $repeats)"
      scripts/mpirun-local -np 4 "$build/strait" train --config "configs/balance/$s.toml" \
        --set "control.forecaster=$forecaster" --set "control.balancer=$balancer" \
        --out "$trace" --force | tail -2
      read -r load1 _ < /proc/loadavg  # how busy the machine was (the table reports it)
      echo "$s $forecaster $balancer $rep $trace $load1" >> "$list"
    done
  done
done
# The reaction bound (bench/balance_bound.cpp): milliseconds, no MPI.
"$build/balance_bound" --header > results/bench/balance-bound.csv
for s in $scenarios; do "$build/balance_bound" "configs/balance/$s.toml" >> results/bench/balance-bound.csv; done
BENCH_REPEATS=$repeats /usr/bin/python3 scripts/balance_table.py "$list" results/bench/balance.csv \
  results/bench/balance.md results/bench/balance-bound.csv
cat results/bench/balance.md
