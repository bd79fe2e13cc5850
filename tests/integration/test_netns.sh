#!/usr/bin/env bash
# test_netns.sh — CTest `netns_tc`: kernel shaping with tc, end to end, through scripts/netns-run.
#   1. a 2-DC tiny run (1 rank each, 20 Mbit/s, 10 ms one way) trains and writes its trace, with
#      rank 0 on host dc0 and rank 1 on host dc1 (each DC's ranks in its own namespace);
#   2. --exec mode: iperf3 dc0 -> dc1 and dc1 -> dc0 within ±15% of 20 Mbit/s, and the round trip
#      (ping -U, else TCP connect time) at least 2 x 10 ms; reno in every DC namespace, and an
#      algorithm a namespace may not choose refused (exit 2);
#   3. SIGTERM to the launcher in the middle of a run: the run stops cleanly, everything goes;
#   4. link schedules under tc on a sparse line of 3 DCs (a - b - c, no a - c link): the a <-> b
#      links drop from 20 to 4 Mbit/s at 1.5 s; tc-schedule.py applies both changes (logged,
#      tc exit 0, how late printed), the run relays a <-> c through b, and the a -> b goodput
#      measured in the trace after the change is at most 4 Mbit/s + 15%;
#   and after each launch: no namespace, NFQUEUE rule, delay stage or rank of ours is left.
# Exits 77 (CTest: skipped) with the reason when it cannot run here: not root, or netns-run --check
# says a tool or kernel feature is missing (its message says which), or iperf3 is missing.
# Usage: test_netns.sh --build DIR [--source DIR]
set -uo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) BUILD=$2; shift 2 ;;
    --source) SRC=$2; shift 2 ;;
    *) echo "usage: test_netns.sh --build DIR [--source DIR]" >&2; exit 2 ;;
  esac
done
[ -n "$BUILD" ] || { echo "usage: test_netns.sh --build DIR [--source DIR]" >&2; exit 2; }
BUILD=$(cd "$BUILD" && pwd)
RUN="$SRC/scripts/netns-run"
RATE_MBIT=20
LAT_MS=10

skip() { echo "SKIPPED: $*"; exit 77; }
fail() { echo "FAILED: $*"; exit 1; }
ok() { echo "ok: $*"; }

[ "$(id -u)" -eq 0 ] || skip "needs root (network namespaces, tc); software shaping is tested elsewhere"
command -v iperf3 >/dev/null || skip "iperf3 is missing (apt-get install iperf3)"
[ -x /usr/bin/python3 ] || skip "/usr/bin/python3 is missing"
check_out=$(timeout 60 "$RUN" --check --build "$BUILD" 2>&1)
case $? in
  0) echo "$check_out" ;;
  3) skip "$check_out" ;;
  *) fail "netns-run --check: $check_out" ;;
esac

TMP=$(mktemp -d /tmp/strait-netns-test.XXXXXX)
LAUNCHERS=()      # pids of our netns-run invocations: their namespaces are strait-<pid>-*
trap 'rm -rf "$TMP"' EXIT

cat >"$TMP/tiny.toml" <<EOF
[run]
name = "netns"
out_dir = "$TMP"
[[datacenter]]
name = "east"
ranks = 1
[[datacenter]]
name = "west"
ranks = 1
[network]
default_capacity_gbps = $(awk -v m=$RATE_MBIT 'BEGIN { print m / 1000 }')
default_latency_ms = $LAT_MS
[model]
layers = 1
d_model = 32
heads = 2
d_ff = 64
seq_len = 16
[train]
global_batch = 4
steps = 6
seed = 7
log_every = 1
EOF

# Nothing of ours may remain: namespaces of our launchers (or of any dead launcher), NFQUEUE rules
# in the root namespace, delay stages of this build, ranks of our config.
check_clean() {
  local what=$1 pid ns f left=() p
  sleep 0.2
  for pid in "${LAUNCHERS[@]}"; do
    for f in /run/netns/strait-"$pid"-*; do [ -e "$f" ] && left+=("namespace ${f##*/}"); done
  done
  for f in /run/netns/strait-*; do
    [ -e "$f" ] || continue
    ns=${f##*/}; pid=${ns#strait-}; pid=${pid%%-*}
    kill -0 "$pid" 2>/dev/null || left+=("stale namespace $ns")
  done
  if command -v iptables >/dev/null && iptables -S 2>/dev/null | grep -q NFQUEUE; then
    left+=("iptables NFQUEUE rule(s): $(iptables -S | grep NFQUEUE | tr '\n' ' ')")
  fi
  for p in $(pgrep -f "^$BUILD/strait-nfq-delay" 2>/dev/null); do left+=("strait-nfq-delay pid $p"); done
  for p in $(pgrep -f "$TMP/" 2>/dev/null); do left+=("process $p: $(tr '\0' ' ' </proc/"$p"/cmdline 2>/dev/null)"); done
  [ ${#left[@]} -eq 0 ] || fail "$what left behind: ${left[*]}"
  ok "$what: no namespace, NFQUEUE rule, delay stage or rank left behind"
}

# The netns-run started by `timeout` (pid $1): its pid names its namespaces.
launcher_of() {
  local l=""
  for _ in $(seq 50); do
    l=$(pgrep -P "$1" -f netns-run | head -1)
    [ -n "$l" ] && break
    sleep 0.05
  done
  echo "$l"
}

# A signal gives netns-run up to 20 s for its ranks to stop, then 5 s for what is left and its
# delay stages, before it removes its namespaces: a KILL sooner leaves them behind (and every later
# run of this test fails on them as stale), so `timeout` waits this long after its signal.
KILL_AFTER=60

# launch LOG TIMEOUT_S ARGS...: runs netns-run in the background, bounded; sets RC.
launch() {
  local log=$1 secs=$2
  shift 2
  timeout -k "$KILL_AFTER" "$secs" "$RUN" --build "$BUILD" "$@" >"$log" 2>&1 &
  local t=$! l
  l=$(launcher_of "$t")
  [ -n "$l" ] && LAUNCHERS+=("$l")
  wait "$t"
  RC=$?
}

# ---- 1. training run --------------------------------------------------------------------------
launch "$TMP/train.log" 240 --config "$TMP/tiny.toml" -- --force
[ "$RC" -eq 0 ] || { cat "$TMP/train.log"; fail "training through netns-run exited $RC"; }
[ -s "$TMP/netns.h5" ] || { cat "$TMP/train.log"; fail "no trace $TMP/netns.h5"; }
ok "2-DC run through netns-run exits 0 and writes its trace"
grep -q "delay via" "$TMP/train.log" && grep "delay via" "$TMP/train.log"
hosts=$(/usr/bin/python3 - "$TMP/netns.h5" <<'EOF' 2>&1
import sys, h5py
with h5py.File(sys.argv[1], "r", locking=False) as f:
    print(" ".join(h.decode() if isinstance(h, bytes) else str(h) for h in f["meta"].attrs["hosts"]))
EOF
)
[ "$hosts" = "dc0 dc1" ] || fail "ranks should run on hosts dc0 and dc1 (one namespace per DC); trace says '$hosts'"
ok "rank 0 ran in dc0's namespace, rank 1 in dc1's"
# The controller's traffic crosses the tc links too, and the links are measured at the wire.
wire=$(/usr/bin/python3 - "$TMP/netns.h5" <<'EOF' 2>&1
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r", locking=False) as f:
    l = f["links"][:]
ok = (l["control_bytes"].sum() > 0 and l["bytes"].sum() > l["control_bytes"].sum()
      and l["wire_ms"].sum() > 0 and l["latency_samples"].sum() > 0
      and np.isnan(l["queued_ms"]).all() and np.isnan(l["shaper_busy_ms"]).all())
print("ok" if ok else "control %s of %s bytes, wire %s ms, %s latency samples"
      % (l["control_bytes"].sum(), l["bytes"].sum(), l["wire_ms"].sum(), l["latency_samples"].sum()))
EOF
)
[ "$wire" = ok ] || fail "links under tc: $wire"
ok "under tc the controller's messages cross the links and /links is measured at the wire"
check_clean "training run"

# ---- 2. rate and delay, measured --------------------------------------------------------------
cat >"$TMP/measure.sh" <<'EOF'
# Runs in dc0 under netns-run --exec; dc1 is reached through scripts/netns-rsh.
set -u
A0=$STRAIT_NETNS_DC0_ADDR A1=$STRAIT_NETNS_DC1_ADDR
cat /proc/sys/net/ipv4/tcp_congestion_control >"$OUT/cc-dc0"
"$SRC/scripts/netns-rsh" dc1 "cat /proc/sys/net/ipv4/tcp_congestion_control" >"$OUT/cc-dc1"
for dir in fwd rev; do
  timeout 30 "$SRC/scripts/netns-rsh" dc1 "iperf3 -s -1 -B $A1 -p 5201" >/dev/null 2>&1 &
  srv=$!
  for i in $(seq 50); do "$SRC/scripts/netns-rsh" dc1 "ss -ltn" 2>/dev/null | grep -q ":5201 " && break; sleep 0.1; done
  flag=""; [ "$dir" = rev ] && flag="-R"
  timeout 30 iperf3 -c "$A1" -p 5201 -t 6 -O 1 $flag -J >"$OUT/iperf-$dir.json"
  wait "$srv"
done
if command -v ping >/dev/null; then
  timeout 20 ping -U -n -c 10 -i 0.2 "$A1" | sed -n 's|^r[a-z-]* min/avg/max.* = \([0-9.]*\)/.*|\1|p' >"$OUT/rtt_ms"  # the minimum
else  # TCP connect time: SYN out, SYN-ACK back = one round trip
  timeout 30 "$SRC/scripts/netns-rsh" dc1 "/usr/bin/python3 -c 'import socket, sys
s = socket.create_server((sys.argv[1], 5202))
for _ in range(5): s.accept()[0].close()' $A1" &
  sleep 1
  /usr/bin/python3 -c '
import socket, sys, time
best = 1e9
for _ in range(5):
    s = socket.socket(); t = time.perf_counter(); s.connect((sys.argv[1], 5202)); best = min(best, time.perf_counter() - t); s.close()
print(best * 1000)' "$A1" >"$OUT/rtt_ms"
  wait
fi
EOF
export OUT="$TMP" SRC
launch "$TMP/measure.log" 120 --config "$TMP/tiny.toml" --exec -- bash "$TMP/measure.sh"
[ "$RC" -eq 0 ] || { cat "$TMP/measure.log"; fail "netns-run --exec (iperf3, ping) exited $RC"; }
for dir in fwd rev; do
  mbit=$(/usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print("%.2f" % (d["end"]["sum_received"]["bits_per_second"] / 1e6))' "$TMP/iperf-$dir.json") ||
    { cat "$TMP/measure.log"; fail "no iperf3 result ($dir)"; }
  awk -v m="$mbit" -v r=$RATE_MBIT 'BEGIN { exit !(m >= 0.85 * r && m <= 1.15 * r) }' ||
    fail "iperf3 $dir: $mbit Mbit/s, not within ±15% of $RATE_MBIT Mbit/s"
  ok "iperf3 $dir: $mbit Mbit/s on a $RATE_MBIT Mbit/s link (±15%)"
done
rtt=$(cat "$TMP/rtt_ms" 2>/dev/null)
[ -n "$rtt" ] || { cat "$TMP/measure.log"; fail "no round-trip measurement"; }
awk -v t="$rtt" -v l=$LAT_MS 'BEGIN { exit !(t >= 2 * l) }' ||
  fail "round trip $rtt ms is below 2 x $LAT_MS ms: the delay is not applied"
awk -v t="$rtt" -v l=$LAT_MS 'BEGIN { exit !(t <= 2 * l + 50) }' ||
  fail "round trip $rtt ms is far above 2 x $LAT_MS ms"
ok "round trip $rtt ms >= 2 x $LAT_MS ms one-way latency"
# reno in every DC namespace, whatever the host's default (bbr paces sync bursts far below the
# link's rate; docs/netns.md, TCP).
for k in 0 1; do
  [ "$(cat "$TMP/cc-dc$k" 2>/dev/null)" = reno ] || fail "dc$k congestion control: '$(cat "$TMP/cc-dc$k" 2>/dev/null)', expected reno"
done
ok "congestion control reno in dc0 and dc1 (host: $(cat /proc/sys/net/ipv4/tcp_congestion_control))"
check_clean "--exec run"
# An algorithm no namespace may choose is refused before anything runs, naming the option.
launch "$TMP/cc.log" 60 --config "$TMP/tiny.toml" --congestion no-such-algorithm --exec -- true
[ "$RC" -eq 2 ] && grep -q -- "--congestion no-such-algorithm" "$TMP/cc.log" ||
  { cat "$TMP/cc.log"; fail "--congestion no-such-algorithm: exit $RC, expected 2 naming the option"; }
ok "--congestion no-such-algorithm refused (exit 2, option named)"
check_clean "refused --congestion"

# ---- 3. SIGTERM in the middle of a run --------------------------------------------------------
timeout -k "$KILL_AFTER" 120 "$RUN" --build "$BUILD" --config "$TMP/tiny.toml" -- --force --set train.steps=100000 \
  >"$TMP/term.log" 2>&1 &
t=$!
l=$(launcher_of "$t")
[ -n "$l" ] && LAUNCHERS+=("$l")
for _ in $(seq 600); do grep -q "^step" "$TMP/term.log" && break; sleep 0.1; done
grep -q "^step" "$TMP/term.log" || { cat "$TMP/term.log"; fail "long run did not start within 60 s"; }
kill -TERM "${l:-$t}"
wait "$t"
rc=$?
[ "$rc" -eq 143 ] || { cat "$TMP/term.log"; fail "netns-run after SIGTERM exited $rc, expected 143"; }
grep -q "cleanup: removed" "$TMP/term.log" || { cat "$TMP/term.log"; fail "no cleanup report after SIGTERM"; }
grep -q "stopped by signal" "$TMP/term.log" && ok "ranks stopped cleanly at a step boundary"
ok "SIGTERM: netns-run exits 143 and reports its cleanup"
check_clean "SIGTERM"

# ---- 4. link schedules under tc, on a sparse graph ----------------------------------------------
cat >"$TMP/line.toml" <<EOF
[run]
name = "line"
out_dir = "$TMP"
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
full_mesh = false
default_capacity_gbps = 0.02
default_latency_ms = 5
[[link]]
from = "a"
to = "b"
step_at_s = 1.5
step_capacity_gbps = 0.004
step_latency_ms = 5
[[link]]
from = "b"
to = "a"
step_at_s = 1.5
step_capacity_gbps = 0.004
step_latency_ms = 5
[[link]]
from = "b"
to = "c"
[[link]]
from = "c"
to = "b"
[control]
path_selector = "shortest"
[model]
layers = 1
d_model = 32
heads = 2
d_ff = 64
seq_len = 16
[train]
global_batch = 3
steps = 40
seed = 7
log_every = 1000
EOF
launch "$TMP/line.log" 240 --config "$TMP/line.toml" --schedule-log "$TMP/applied.csv" -- --force
[ "$RC" -eq 0 ] || { cat "$TMP/line.log"; fail "sparse line with schedules through netns-run exited $RC"; }
grep -q "no link a -> c" "$TMP/line.log" || { cat "$TMP/line.log"; fail "netns-run should say a -> c is not a link"; }
grep "link schedules:" "$TMP/line.log"
sched=$(/usr/bin/python3 - "$TMP/applied.csv" "$TMP/line.h5" <<'EOF' 2>&1
import csv, sys, h5py, numpy as np
rows = list(csv.DictReader(open(sys.argv[1])))
got = sorted((r["from"], r["to"]) for r in rows)
if got != [("a", "b"), ("b", "a")] or any(r["ok"] != "0" for r in rows):
    sys.exit("applied changes %s, tc status %s" % (got, [r["ok"] for r in rows]))
late = [float(r["late_ms"]) for r in rows]
if min(late) < 0 or any(abs(float(r["planned_s"]) - 1.5) > 1e-9 for r in rows):
    sys.exit("changes planned %s, late %s ms" % ([r["planned_s"] for r in rows], late))
with h5py.File(sys.argv[2], "r", locking=False) as f:
    steps, links = f["steps"][:], f["links"][:]
# Run time at each step's start, from rank 0's step walls (the schedules start just before step 0).
start = dict(zip(steps["step"], np.cumsum(steps["wall_ms"]) / 1e3 - steps["wall_ms"] / 1e3))
ab = links[(links["src"] == 0) & (links["dst"] == 1)]
after = [r for r in ab if start[r["step"]] > 1.5 + 0.3 + max(late) / 1e3 and r["wire_ms"] > 0]
ac = links[(links["src"] == 0) & (links["dst"] == 2)]
if len(ac) and ac["bytes"].sum() > 0:
    sys.exit("%d bytes crossed a -> c, which is not a link" % ac["bytes"].sum())
if len(after) < 3:
    sys.exit("only %d steps with a -> b traffic after the change" % len(after))
gbps = sum(r["bytes"] for r in after) * 8 / (sum(r["wire_ms"] for r in after) * 1e6)
if gbps > 0.004 * 1.15:
    sys.exit("a -> b delivered %.4f Gbit/s after the change to 0.004" % gbps)
print("ok %.2f %.4f" % (max(late), gbps))
EOF
)
case $sched in
  ok*) read -r _ late gbps <<<"$sched"
       ok "schedules under tc: both changes applied (at most $late ms late), a -> b then delivered $gbps Gbit/s (0.004 scheduled); nothing crossed a -> c" ;;
  *) cat "$TMP/line.log"; fail "schedules under tc: $sched" ;;
esac
check_clean "sparse line with schedules"
echo "PASSED"
