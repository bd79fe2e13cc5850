#!/usr/bin/env bash
# bench-paths.sh — path-selection benchmark (make bench-paths, docs/paths.md): every path
# selector on every scenario, trained under the software shaper; per run the mean and p95 sync
# time per step and tokens/s from the trace, and per scenario the fraction of `oracle` (an UPPER
# BOUND: it reads the true schedules), the fraction of `oracle-now` and the sync time relative
# to `direct`. `oracle-now` is the oracle on the true figures when it decides rather than when
# the decision takes effect: the REACTION BOUND of any selector that cannot foresee a change
# during control.lag.
# Scenarios (configs/paths/ and the measured matrices of configs/):
#   markov3       3 DCs, full mesh, every link Markov-congested (its own seed)
#   detour3       3 DCs, the a<->b links congested most of the time, the detour via c clear
#   clear3        3 DCs, full mesh, nothing congested: no detour helps (mdp must not lose)
#   sparse-ring4  4 DCs on a ring, no chords (direct is refused there), a->b Markov-congested
#   us-eu-asia-c  the measured us-eu-asia matrix, eu->asia Markov-congested
#   mesh6-c       the measured 6-region matrix, us-west->eu-west and netherlands->tokyo congested
# The two measured matrices run at their real figures with a larger model (1.73 MB gradient) so
# that bytes, not only latency, decide; their congestion is added here (congest() below), as a
# Markov process with factors [1, 0.01] and a dwell of 4 s.
# Also, on BLP_SCENARIOS (default detour3 us-eu-asia-c mesh6-c), the blp sync planner (all
# pairs direct, blp routes its own flows) planning on the measured links (control.beliefs =
# "measured", the default) and on the configured ones (the baseline): rows "blp/measured" and
# "blp/configured" (docs/sync.md, "Believed links").
# SEEDS=N (default 1) runs every scenario on N schedule sets: set k adds 100·k to every
# markov_seed of the scenario (set 0 is the scenario as written; a scenario with no Markov link,
# clear3, runs N times alike), so that a figure is not one seeded draw's luck alone (docs/paths.md,
# "Several schedule sets"); the table pools the sets. The sets run one after another.
# Each policy runs BENCH_REPEATS times (default 1) on each set, interleaved; the table gives medians, over
# whole runs and over the common window (the stretch of the link schedules, which run on each
# run's clock, that every path-selector run of a scenario lived through: scripts/paths_table.py),
# and a second table: per link change the wall time of its step and the next, and the steady
# pace elsewhere (docs/paths.md, "Where the oracle's lead is").
# Writes results/bench/paths.csv (every run) and results/bench/paths.md; traces in a temporary
# folder. BENCH_NAME=N writes results/bench/N.csv and N.md instead — for a narrowed run, so
# that it does not replace the record (docs/paths.md, "Measured"). Cost: about 22 minutes on 2 cores with 1 repeat and TC=1 (measured), 44 with
# BENCH_REPEATS=2, 47 with BENCH_REPEATS=2 TC_REPEATS=4, 48–50 with TC_REPEATS=6, 73 with
# SEEDS=3 TC_REPEATS=2 (the record of ce525bf: three schedule sets, one run each; measured).
# Usage: scripts/bench-paths.sh [BUILD_DIR]
#   SCENARIOS="..." POLICIES="..." BENCH_REPEATS=N to narrow or widen it (SCENARIOS="" TC=1: tc only);
#   TC=1 also runs TC_SCENARIOS (default detour3) under scripts/netns-run (root, tc; shaper none;
#   the link schedules applied by tc on time) with direct, mdp, oracle-now and oracle, rows marked "tc".
#   TC_REPEATS=N runs those N times each (default BENCH_REPEATS): tc runs spread wider than the
#   software shaper's (detour3's mdp 3144-3336 tok/s over four runs of one build) and cost ~30 s.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
repeats=${BENCH_REPEATS:-1}
tc_repeats=${TC_REPEATS:-$repeats}
seeds=${SEEDS:-1}
name=${BENCH_NAME:-paths}
[[ $name =~ ^[A-Za-z0-9._-]+$ ]] || { echo "bench-paths: BENCH_NAME must be a plain file name (got '$name')" >&2; exit 2; }
[[ $seeds =~ ^[1-9][0-9]*$ ]] || { echo "bench-paths: SEEDS must be a positive integer (got '$seeds')" >&2; exit 2; }
scenarios=${SCENARIOS-"markov3 detour3 clear3 sparse-ring4 us-eu-asia-c mesh6-c"}
policies=${POLICIES:-"direct shortest widest ewma-widest mdp oracle-now oracle"}
tc_scenarios=${TC_SCENARIOS:-"detour3"}
blp_scenarios=${BLP_SCENARIOS-"detour3 us-eu-asia-c mesh6-c"}
tmp=$(mktemp -d /tmp/strait-bench-paths.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p results/bench

# congest BASE OUT SEED FROM:TO ... — BASE with Markov congestion added to the listed links.
congest() {
  /usr/bin/python3 - "$@" <<'PY'
import re, sys
base, out, seed, pairs = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
text = open(base).read()
blocks = re.split(r"(?m)^(?=\[)", text)
done = set()
for i, b in enumerate(blocks):
    if not b.startswith("[[link]]"):
        continue
    src = re.search(r'(?m)^from\s*=\s*"([^"]+)"', b).group(1)
    dst = re.search(r'(?m)^to\s*=\s*"([^"]+)"', b).group(1)
    if f"{src}:{dst}" in pairs:
        blocks[i] = b.rstrip("\n") + ("\nmarkov_factors = [1.0, 0.01]\n"
                                      "markov_transition = [[0.7, 0.3], [0.3, 0.7]]\n"
                                      "markov_dwell_s = 4.0\nmarkov_seed = %d\n\n" % (seed + len(done)))
        done.add(f"{src}:{dst}")
missing = set(pairs) - done
if missing:
    sys.exit("bench-paths: no link %s in %s" % (", ".join(sorted(missing)), base))
open(out, "w").write("".join(blocks))
PY
}

# reseed CONFIG OUT K — CONFIG with 100·K added to every markov_seed (schedule set K).
reseed() {
  /usr/bin/python3 - "$@" <<'PY'
import re, sys
src, out, k = sys.argv[1], sys.argv[2], int(sys.argv[3])
text = re.sub(r"(?m)^(markov_seed\s*=\s*)(\d+)",
              lambda m: m.group(1) + str(int(m.group(2)) + 100 * k), open(src).read())
open(out, "w").write(text)
PY
}

big_model=(--set model.layers=2 --set model.d_model=128 --set model.heads=4 --set model.d_ff=512
           --set model.seq_len=32)

config_of() {  # config_of SCENARIO → "config path" and the extra --set arguments, one per line
  case $1 in
    markov3|detour3|sparse-ring4) echo "configs/paths/$1.toml" ;;
    clear3)
      sed -e '/^markov_/d' -e 's/^name = "markov3"/name = "clear3"/' configs/paths/markov3.toml \
        > "$tmp/clear3.toml"
      echo "$tmp/clear3.toml" ;;
    us-eu-asia-c)
      congest configs/us-eu-asia.toml "$tmp/$1.toml" 31 eu:asia
      echo "$tmp/$1.toml"; printf '%s\n' "${big_model[@]}" --set train.steps=40 ;;
    mesh6-c)
      congest configs/mesh6.toml "$tmp/$1.toml" 41 us-west:eu-west netherlands:tokyo
      echo "$tmp/$1.toml"; printf '%s\n' "${big_model[@]}" --set train.steps=30 ;;
    *) echo "bench-paths: unknown scenario $1" >&2; exit 2 ;;
  esac
}

list="$tmp/runs.txt"
: > "$list"
run_one() {  # run_one SCENARIO POLICY REPEAT BACKEND SCHEDULE_SET
  local s=$1 p=$2 rep=$3 backend=$4 k=$5
  mapfile -t spec < <(config_of "$s")
  local cfg=${spec[0]} sets=("${spec[@]:1}")
  if [ "$k" != 0 ]; then  # written once per scenario and set
    [ -f "$tmp/$s-set$k.toml" ] || reseed "$cfg" "$tmp/$s-set$k.toml" "$k"
    cfg="$tmp/$s-set$k.toml"
  fi
  local np
  np=$(/usr/bin/python3 scripts/world-size.py "$cfg")
  local trace="$tmp/$s-${p//\//-}-$backend-$k-$rep.h5"
  case $p in
    blp/*) sets+=(--set control.path_selector=direct --set control.sync_planner=blp
                  --set control.beliefs="${p#blp/}") ;;
    *) sets+=(--set control.path_selector="$p") ;;
  esac
  sets+=(--set train.log_every=1000)
  echo "bench-paths: $s, $p, $backend (schedule set $k, run $rep, $np ranks)"
  local t0
  t0=$(date +%s)
  if [ "$backend" = tc ]; then
    scripts/netns-run --config "$cfg" --build "$build" -- "${sets[@]}" --set network.shaper=none \
      --out "$trace" --force > "$tmp/log" 2>&1 || { cat "$tmp/log"; exit 1; }
  else
    scripts/mpirun-local -np "$np" "$build/strait" train --config "$cfg" "${sets[@]}" \
      --out "$trace" --force > "$tmp/log" 2>&1 || { cat "$tmp/log"; exit 1; }
  fi
  echo "  $(grep '^mean per step' "$tmp/log" || true) [$(( $(date +%s) - t0 )) s]"
  echo "$s $p $backend $rep $trace $k" >> "$list"
}

for k in $(seq 0 $((seeds - 1))); do
  for rep in $(seq 1 "$repeats"); do
    for s in $scenarios; do
      for p in $policies; do
        # "direct" cannot run on a graph where some pair has no link: it is refused at start.
        [ "$s" = sparse-ring4 ] && [ "$p" = direct ] && continue
        run_one "$s" "$p" "$rep" sw "$k"
      done
    done
  done
  for rep in $(seq 1 "$repeats"); do
    for s in $blp_scenarios; do
      for p in blp/measured blp/configured; do run_one "$s" "$p" "$rep" sw "$k"; done
    done
  done
  if [ "${TC:-0}" = 1 ]; then
    for rep in $(seq 1 "$tc_repeats"); do
      for s in $tc_scenarios; do
        for p in direct mdp oracle-now oracle; do run_one "$s" "$p" "$rep" tc "$k"; done
      done
    done
  fi
done

/usr/bin/python3 scripts/paths_table.py "$list" "results/bench/$name.csv" "results/bench/$name.md" \
  "$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)" \
  "$repeats$([ "${TC:-0}" = 1 ] && [ "$tc_repeats" != "$repeats" ] && echo " ($tc_repeats under tc)")"
cat "results/bench/$name.md"
