#!/usr/bin/env bash
# bench-wan.sh — one world, two emulators: the same training job and scenario under the software
# shaper and under tc (scripts/netns-run: one network namespace per datacenter, kernel-shaped
# links), beside a plain MPI_Allreduce of the gradient over the same tc links — the reference a
# user would reach for. Part of `make bench-links` (root needed for tc; without it only the
# software rows are made).
# Grid: 2 and 3 datacenters of one rank, every link at CAP Gbit/s and LAT ms one way (CAPS, LATS,
# DCS to narrow it); then (ASYM=1, the default) one uneven world: 3 DCs at 1 Gbit/s and 5 ms
# where the one link dc0 -> dc1 has 100 ms, so the ring's steps drift apart and a gateway that
# waited for its own deliveries would show it (scenario "asym"; the grid's is "uniform"). Job: a 120,576-parameter model (482 KB of gradient), STEPS steps (default
# 30), the first 5 left out of the medians.
# Columns (results/bench/wan.csv; scripts/wan_table.py reads the traces):
#   step_ms, sync_ms      median over steps of /steps wall_ms and sync_ms (rank 0's clock; max over ranks)
#   goodput_gbps          all gradient bytes / all wire time over the links (/links, measured at the wire)
#   control_rtt_ms        median /steps.control_rtt_ms: the controller's round trip over the WAN
#   allreduce_ms          median plain MPI_Allreduce of 482 KB over the tc links (bench_allreduce)
# Goals: tc step within 15% of software; for 2 DCs strait's sync under tc <= 1.0× MPI_Allreduce.
# Usage: scripts/bench-wan.sh [BUILD_DIR]   → results/bench/wan.csv and wan.md
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
dcs=${DCS:-"2 3"}
caps=${CAPS:-"0.05 0.2 1.0"}
lats=${LATS:-"5 20 100"}
steps=${STEPS:-30}
tmp=$(mktemp -d /tmp/strait-bench-wan.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p results/bench

tc_ok=0
if [ "$(id -u)" -eq 0 ] && scripts/netns-run --check --build "$build" >/dev/null 2>&1; then tc_ok=1; else
  echo "bench-wan: tc rows skipped (needs root and what scripts/netns-run --check asks for)"
fi

config() {  # config N CAP LAT SHAPER [SLOW_MS: dc0 -> dc1 at this latency]
  echo "[run]"
  echo "name = \"wan\""
  for ((d = 0; d < $1; d++)); do printf '[[datacenter]]\nname = "dc%d"\nranks = 1\n' "$d"; done
  cat <<TOML
[network]
shaper = "$4"
default_capacity_gbps = $2
default_latency_ms = $3
[model]
layers = 2
d_model = 64
heads = 4
d_ff = 256
seq_len = 64
[train]
global_batch = 8
steps = $steps
log_every = 1000
corpus = "/usr/share/common-licenses"
TOML
  if [ -n "${5:-}" ]; then
    printf '[[link]]\nfrom = "dc0"\nto = "dc1"\ncapacity_gbps = %s\nlatency_ms = %s\n' "$2" "$5"
  fi
}

echo "scenario,dcs,capacity_gbps,latency_ms,backend,trace" > "$tmp/runs.csv"
echo "label,bytes,ranks,median_ms,min_ms,wrong" > "$tmp/allreduce.csv"
cell_runs() {  # cell_runs SCENARIO N CAP LAT [SLOW_MS]
  local scen=$1 n=$2 cap=$3 lat=$4 slow=${5:-}
  local cell="$n-$cap-$lat-$scen"
  config "$n" "$cap" "$lat" software "$slow" > "$tmp/sw-$cell.toml"
  scripts/mpirun-local -np "$n" "$build/strait" train --config "$tmp/sw-$cell.toml" \
    --out "$tmp/sw-$cell.h5" --force > /dev/null
  echo "$scen,$n,$cap,$lat,software,$tmp/sw-$cell.h5" >> "$tmp/runs.csv"
  if [ "$tc_ok" = 1 ]; then
    config "$n" "$cap" "$lat" none "$slow" > "$tmp/tc-$cell.toml"
    if scripts/netns-run --config "$tmp/tc-$cell.toml" --build "$build" -- \
         --out "$tmp/tc-$cell.h5" --force > "$tmp/tc-$cell.log" 2>&1; then
      echo "$scen,$n,$cap,$lat,tc,$tmp/tc-$cell.h5" >> "$tmp/runs.csv"
    else
      echo "bench-wan: tc run $cell failed (log: kept below)"; tail -5 "$tmp/tc-$cell.log"
    fi
    scripts/netns-run --config "$tmp/tc-$cell.toml" --build "$build" --mpi -- \
      "$PWD/$build/bench_allreduce" 482304 10 "$tmp/allreduce.csv" "$cell" > /dev/null 2>&1 \
      || echo "bench-wan: MPI_Allreduce reference $cell failed"
  fi
  echo "bench-wan: $cell done"
}
for n in $dcs; do
  for cap in $caps; do
    for lat in $lats; do cell_runs uniform "$n" "$cap" "$lat"; done
  done
done
if [ "${ASYM:-1}" = 1 ]; then cell_runs asym 3 1.0 5 100; fi
/usr/bin/python3 scripts/wan_table.py "$tmp/runs.csv" "$tmp/allreduce.csv" results/bench/wan.csv \
  results/bench/wan.md "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
cat results/bench/wan.md
