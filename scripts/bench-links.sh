#!/usr/bin/env bash
# bench-links.sh — link fidelity benchmark (make bench-links) for both shaping backends.
# For each configured capacity (10 Mbit/s … 1 Gbit/s) and latency (1 … 100 ms) it writes a
# 3-DC config with every link at those figures and runs build/bench_links (3 ranks):
#   software: scripts/mpirun-local, network.shaper = "software";
#   tc:       scripts/netns-run (root, tc), network.shaper = "none", plus an iperf3 cross-check
#             between the namespaces of two DCs (rows with backend "iperf3").
# Goal: throughput within ±5% and latency within ±(1 ms + 5%) of configured.
# Writes results/bench/links.csv and prints it as a table. With tc, also how late the link
# schedules land under tc (results/bench/schedule.csv: a 2-DC run whose links are Markov-
# congested, changing every 0.25 s; every change tc-schedule.py applied, its lateness = when
# `tc` returned minus its planned run time, split into the applier's wake-up and the `tc`
# command; goal < 10 ms). Then scripts/bench-wan.sh, the
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

if [ "$tc_ok" = 1 ]; then
  # Schedules under tc: a Markov link each way between two DCs, 400 steps (several seconds).
  cat > "$tmp/sched.toml" <<TOML
[run]
name = "schedule"
out_dir = "$tmp"
[[datacenter]]
name = "a"
ranks = 1
[[datacenter]]
name = "b"
ranks = 1
[network]
default_capacity_gbps = 0.1
default_latency_ms = 2
[[link]]
from = "a"
to = "b"
markov_factors = [1.0, 0.5, 0.1]
markov_transition = [[0.4, 0.3, 0.3], [0.3, 0.4, 0.3], [0.3, 0.3, 0.4]]
markov_dwell_s = 0.25
markov_seed = 5
[[link]]
from = "b"
to = "a"
markov_factors = [1.0, 0.5, 0.1]
markov_transition = [[0.4, 0.3, 0.3], [0.3, 0.4, 0.3], [0.3, 0.3, 0.4]]
markov_dwell_s = 0.25
markov_seed = 6
[model]
layers = 1
d_model = 32
heads = 2
d_ff = 64
seq_len = 16
[train]
global_batch = 2
steps = 400
log_every = 100000
TOML
  if scripts/netns-run --config "$tmp/sched.toml" --build "$build" --schedule-log "$tmp/applied.csv" \
       -- --force > "$tmp/sched.log" 2>&1; then
    /usr/bin/python3 - "$tmp/applied.csv" results/bench/schedule.csv <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
late = sorted(float(r["late_ms"]) for r in rows)
spawn = [1e3 * (float(r["applied_s"]) - float(r["started_s"])) for r in rows]
wake = sorted(1e3 * (float(r["started_s"]) - float(r["planned_s"])) for r in rows)
with open(sys.argv[2], "w") as f:
    f.write("changes,failed,late_median_ms,late_p95_ms,late_max_ms,tc_command_median_ms,"
            "tc_command_max_ms,wake_median_ms,wake_max_ms\n")
    f.write("%d,%d,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f\n" % (
        len(rows), sum(r["ok"] != "0" for r in rows), statistics.median(late),
        late[int(0.95 * (len(late) - 1))], late[-1], statistics.median(spawn), max(spawn),
        statistics.median(wake), wake[-1]))
print(open(sys.argv[2]).read())
PY
  else
    tail -20 "$tmp/sched.log"; echo "bench-links: the schedule run under tc failed"
  fi
fi
# One world, two emulators: the same job under both backends (results/bench/wan.csv, wan.md).
if [ "${WAN:-1}" = 1 ]; then bash scripts/bench-wan.sh "$build"; fi
