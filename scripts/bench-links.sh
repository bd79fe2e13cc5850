#!/usr/bin/env bash
# bench-links.sh — link fidelity benchmark (make bench-links) for both shaping backends.
# For each configured capacity (10 Mbit/s … 1 Gbit/s) and latency (1 … 100 ms) it writes a
# 3-DC config with every link at those figures and runs build/bench_links (3 ranks):
#   software: scripts/mpirun-local, network.shaper = "software";
#   tc:       scripts/netns-run (root, tc), network.shaper = "none", plus an iperf3 cross-check
#             between the namespaces of two DCs (rows with backend "iperf3").
# Goal: throughput within ±5% and latency within ±(1 ms + 5%) of configured.
# Writes results/bench/links.csv and prints it as a table; then scripts/bench-wan.sh, the
# cross-backend table of a training job (WAN=0 skips it; about 10 minutes with tc).
# Usage: scripts/bench-links.sh [BUILD_DIR]   (BACKENDS="software tc" to choose)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
backends=${BACKENDS:-"software tc"}
caps=${CAPS:-"0.01 0.1 0.5 1.0"}
lats=${LATS:-"1 10 100"}
out=results/bench/links.csv
tmp=$(mktemp -d /tmp/strait-bench-links.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p results/bench
echo "backend,kind,src,dst,configured_gbps,achieved_gbps,configured_ms,achieved_ms,bytes,repeats" > "$tmp/links.csv"

config() {  # config CAP LAT SHAPER > file
  cat <<TOML
[[datacenter]]
name = "a"
ranks = 1
[[datacenter]]
name = "b"
ranks = 1
[[datacenter]]
name = "c"
ranks = 1
[network]
shaper = "$3"
default_capacity_gbps = $1
default_latency_ms = $2
[model]
layers = 1
d_model = 8
heads = 1
d_ff = 8
seq_len = 4
[train]
global_batch = 3
corpus = "/usr/share/common-licenses"
TOML
}

tc_ok=0
if [[ " $backends " == *" tc "* ]]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "bench-links: tc backend skipped: needs root (network namespaces, tc)"
  elif [ ! -x scripts/netns-run ]; then
    echo "bench-links: tc backend skipped: scripts/netns-run is missing"
  else
    tc_ok=1
  fi
fi

for cap in $caps; do
  for lat in $lats; do
    if [[ " $backends " == *" software "* ]]; then
      config "$cap" "$lat" software > "$tmp/sw.toml"
      scripts/mpirun-local -np 3 "$build/bench_links" "$tmp/sw.toml" software "$tmp/links.csv"
    fi
    if [ "$tc_ok" = 1 ]; then
      config "$cap" "$lat" none > "$tmp/tc.toml"
      scripts/netns-run --config "$tmp/tc.toml" --build "$build" --mpi -- \
        "$PWD/$build/bench_links" "$tmp/tc.toml" tc "$tmp/links.csv" \
        || echo "bench-links: tc run for $cap Gbit/s $lat ms failed"
      # iperf3 a→b inside the namespaces (dc0 = 10.213.0.1, dc1 = 10.213.1.1; docs/netns.md).
      scripts/netns-run --config "$tmp/tc.toml" --build "$build" --exec -- \
        /usr/bin/python3 "$PWD/scripts/iperf3-pair.py" "$cap" "$lat" >> "$tmp/links.csv" \
        || echo "bench-links: iperf3 cross-check for $cap Gbit/s $lat ms failed"
    fi
  done
done
cp "$tmp/links.csv" "$out"
echo
column -s, -t < "$out"
echo "wrote $out"
# One world, two emulators: the same job under both backends (results/bench/wan.csv, wan.md).
if [ "${WAN:-1}" = 1 ]; then bash scripts/bench-wan.sh "$build"; fi
