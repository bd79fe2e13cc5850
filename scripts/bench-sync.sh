#!/usr/bin/env bash
# bench-sync.sh — gradient-sync benchmark (make bench-sync): every sync planner on every graph,
# trained for a few steps under the software shaper; per run, the median achieved sync time
# (/steps sync_ms, steps 2..) against the LP optimum, the lower bounds and the planner's own
# prediction (build/bench_sync), and the speed-up over hierarchical.
# Graphs: homogeneous full meshes of 3, 4 and 6 DCs; 4 DCs with asymmetric capacities; 4 DCs
# with one congested link; the measured us-eu-asia and mesh6 matrices (configs/). One model for
# all: 2 layers, d_model 128, d_ff 512 (433 664 parameters, a 1.73 MB gradient). The synthetic
# graphs run at network.time_scale 10 (capacities / 10, latencies × 10) so that transfers take
# tens of milliseconds, well above the per-step overheads of MPI on a shared CPU; the measured
# matrices run at their real figures (time_scale 1), where latency dominates.
# Writes results/bench/sync.csv and results/bench/sync.md and prints the table.
# Usage: scripts/bench-sync.sh [BUILD_DIR]   (STEPS=10, GRAPHS="...", PLANNERS="..." to choose)
# Kernel shaping: TC=1 adds blp and mpi-allreduce runs under scripts/netns-run (root, tc;
# network.shaper = "none") for the graphs in TC_GRAPHS, rows "<graph>@tc" (not run by default).
# Also writes results/bench/plan-scale.csv: the blp planner's time on random meshes of 4-16 DCs.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
steps=${STEPS:-10}
graphs=${GRAPHS:-"mesh3 mesh4 mesh6 asym4 congested4 us-eu-asia mesh6-real"}
planners=${PLANNERS:-"hierarchical ring-best star blp"}
tc_graphs=${TC_GRAPHS:-"us-eu-asia"}
csv=results/bench/sync.csv
md=results/bench/sync.md
tmp=$(mktemp -d /tmp/strait-bench-sync.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p results/bench

# control.lag 8: the controller's round trips over the WAN (up to 217 ms on mesh6, more than a
# step) never stall a step, so the figures are the sync's own, not the control loop's (with the
# default lag of 2 they staggered mesh6's DCs and added about 20% to every planner's sync).
model=(--set model.layers=2 --set model.d_model=128 --set model.heads=4 --set model.d_ff=512
       --set model.seq_len=32 --set train.steps="$steps" --set train.log_every=1000
       --set control.lag=8)

# mesh N CAP LAT [LINKS...]: N DCs of one rank, every link CAP Gbit/s and LAT ms unless listed
# ("a b cap" triples), time_scale 10.
mesh() {
  local n=$1 cap=$2 lat=$3; shift 3
  echo "[run]"; echo "name = \"bench\""
  for ((d = 0; d < n; d++)); do printf '[[datacenter]]\nname = "dc%d"\nranks = 1\n' "$d"; done
  printf '[network]\ntime_scale = 10.0\ndefault_capacity_gbps = %s\ndefault_latency_ms = %s\n' "$cap" "$lat"
  while [ $# -ge 3 ]; do
    printf '[[link]]\nfrom = "dc%s"\nto = "dc%s"\ncapacity_gbps = %s\nlatency_ms = %s\n' "$1" "$2" "$3" "$lat"
    shift 3
  done
  printf '[model]\nlayers = 2\nd_model = 128\nheads = 4\nd_ff = 512\nseq_len = 32\n'
  printf '[train]\nglobal_batch = %d\ncorpus = "/usr/share/common-licenses"\n' "$n"
}

config_of() {  # config_of GRAPH → path of its config
  case $1 in
    mesh3) mesh 3 1.0 0.1 > "$tmp/$1.toml" ;;
    mesh4) mesh 4 1.0 0.1 > "$tmp/$1.toml" ;;
    mesh6) mesh 6 1.0 0.1 > "$tmp/$1.toml" ;;
    asym4) mesh 4 1.0 0.1  0 1 2.0  1 0 0.25  0 2 1.0  2 0 0.5  0 3 0.5  3 0 1.0 \
                          1 2 2.0  2 1 0.25  1 3 1.0  3 1 0.5  2 3 2.0  3 2 0.25 > "$tmp/$1.toml" ;;
    congested4) mesh 4 1.0 0.1  0 1 0.1 > "$tmp/$1.toml" ;;
    us-eu-asia) cp configs/us-eu-asia.toml "$tmp/$1.toml" ;;
    mesh6-real) cp configs/mesh6.toml "$tmp/$1.toml" ;;
    *) echo "bench-sync: unknown graph $1" >&2; exit 2 ;;
  esac
  echo "$tmp/$1.toml"
}

"$build/bench_sync" --header > "$tmp/sync.csv"
for g in $graphs; do
  cfg=$(config_of "$g")
  np=$(/usr/bin/python3 scripts/world-size.py "$cfg")
  for p in $planners; do
    sets=("${model[@]}" --set control.sync_planner="$p" --set run.name="$g-$p" --set run.out_dir="$tmp")
    echo "bench-sync: $g, $p ($np ranks, $steps steps)"
    t0=$(date +%s)
    scripts/mpirun-local -np "$np" "$build/strait" train --config "$cfg" "${sets[@]}" --force \
      > "$tmp/$g-$p.log" 2>&1 || { cat "$tmp/$g-$p.log"; exit 1; }
    "$build/bench_sync" "$cfg" "$tmp/$g-$p.h5" "$g" "${sets[@]}" >> "$tmp/sync.csv"
    echo "  $(tail -1 "$tmp/sync.csv")  [$(( $(date +%s) - t0 )) s]"
  done
done

if [ "${TC:-0}" = 1 ]; then
  # Kernel shaping: the same runs with network.shaper = "none" inside one namespace per DC
  # (docs/netns.md); rows get the graph name "<graph>@tc".
  for g in $tc_graphs; do
    cfg=$(config_of "$g")
    np=$(/usr/bin/python3 scripts/world-size.py "$cfg")
    for p in blp mpi-allreduce; do
      sets=("${model[@]}" --set network.shaper=none --set control.sync_planner="$p"
            --set run.name="$g-tc-$p" --set run.out_dir="$tmp")
      scripts/netns-run --config "$cfg" --build "$build" --mpi -- \
        "$PWD/$build/strait" train --config "$cfg" "${sets[@]}" --force > "$tmp/$g-tc-$p.log" 2>&1 \
        || { cat "$tmp/$g-tc-$p.log"; exit 1; }
      "$build/bench_sync" "$cfg" "$tmp/$g-tc-$p.h5" "$g@tc" "${sets[@]}" >> "$tmp/sync.csv"
    done
  done
fi

cp "$tmp/sync.csv" "$csv"
# Planning scale: the blp planner on random full meshes of 4–16 DCs (bench_sync --plan-scale).
echo "dcs,seed,lp_rows,lp_cols,lp_nonzeros,plan_s_min,plan_s_median" > "$tmp/scale.csv"
for n in 4 8 12 16; do "$build/bench_sync" --plan-scale "$n" 42 >> "$tmp/scale.csv"; done
cp "$tmp/scale.csv" results/bench/plan-scale.csv
cat results/bench/plan-scale.csv
/usr/bin/python3 - "$csv" "$md" "$steps" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
base = {r["graph"]: float(r["achieved_ms"]) for r in rows if r["planner"] == "hierarchical"}
out = ["# Gradient sync: achieved against the LP",
       "",
       "Regenerate: `make bench-sync` (scripts/bench-sync.sh). Software shaper; %s steps per run, "
       "the median sync time of steps 2.. (max over ranks, /steps sync_ms). LP = the phased LP "
       "optimum (what the owners strategy can reach; bandwidth only), joint = the BLP optimum with "
       "both phases in one interval (a pipelined executor's bound), cut and traffic = lower bounds "
       "for any allreduce, predicted = the planner's own prediction with latency (docs/sync.md). "
       "All in run time (time-scaled), ms." % sys.argv[3],
       "",
       "| graph | DCs | gradient MB | planner | achieved ms (min-max) | LP ms | joint ms | cut ms | "
       "traffic ms | predicted ms | achieved/LP | achieved/predicted | speed-up over hierarchical |",
       "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
for r in rows:
    a = float(r["achieved_ms"])
    sp = base.get(r["graph"])
    out.append("| %s | %s | %.2f | %s | %.1f (%.1f-%.1f) | %.1f | %.1f | %.1f | %.1f | %.1f | %.2f | %.2f | %s |" % (
        r["graph"], r["dcs"], float(r["gradient_bytes"]) / 1e6, r["planner"], a,
        float(r["achieved_min_ms"]), float(r["achieved_max_ms"]), float(r["lp_ms"]),
        float(r["joint_ms"]), float(r["cut_ms"]), float(r["traffic_ms"]), float(r["predicted_ms"]),
        float(r["achieved_over_lp"]), float(r["achieved_over_predicted"]),
        "%.2f×" % (sp / a) if sp else "—"))
open(sys.argv[2], "w").write("\n".join(out) + "\n")
print("\n".join(out))
PY
echo "wrote $csv and $md"
