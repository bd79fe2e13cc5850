#!/usr/bin/python3
"""iperf3-pair.py — the tc backend's independent cross-check for scripts/bench-links.sh.

Runs inside dc0 under `scripts/netns-run --exec` (docs/netns.md): starts an iperf3 server in dc1
through scripts/netns-rsh, measures TCP throughput dc0 → dc1 for a few seconds after slow start
(below) and the round trip with `ping -U` (user-to-user timestamps: plain ping stamps before the
queue), and prints two CSV rows in bench-links' columns to stdout:
  iperf3,throughput,0,1,<configured_gbps>,<achieved_gbps>,<configured_ms>,0,<bytes>,1
  iperf3,latency,0,1,<configured_gbps>,0,<configured_ms>,<min rtt / 2>,0,<pings>
Usage: iperf3-pair.py CONFIGURED_GBPS CONFIGURED_MS [SECONDS]
"""
import json
import math
import os
import re
import subprocess
import sys
import time

cap, lat = float(sys.argv[1]), float(sys.argv[2])
secs = int(sys.argv[3]) if len(sys.argv) > 3 else 5
src = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
rsh = os.path.join(src, "scripts", "netns-rsh")
a1 = os.environ["STRAIT_NETNS_DC1_ADDR"]

server = subprocess.Popen([rsh, "dc1", f"iperf3 -s -1 -B {a1} -p 5202"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
for _ in range(50):  # wait until the server listens
    ss = subprocess.run([rsh, "dc1", "ss -ltn"], capture_output=True, text=True).stdout
    if ":5202 " in ss:
        break
    time.sleep(0.1)
# One TCP stream starts in slow start: its window doubles every round trip from 10 segments, so
# it needs about log2(BDP / 10 MSS) round trips to fill the link — 2.1 s at 1 Gbit/s and 200 ms,
# where omitting only the first second read 0.78 of the rate. The steady state is the link's
# rate: omit the ramp (and a second more), then measure `secs` seconds.
rtt = 2 * lat / 1e3
bdp = cap * 1e9 / 8 * rtt
omit = 1 + math.ceil(max(0.0, math.log2(max(1.0, bdp / (10 * 1448)))) * rtt)
client = subprocess.run(["timeout", str(secs + omit + 30), "iperf3", "-c", a1, "-p", "5202", "-t",
                         str(secs + omit), "-O", str(omit), "-J"], capture_output=True, text=True)
server.wait(timeout=30)
res = json.loads(client.stdout)
end = res["end"]["sum_received"]
print(f"iperf3,throughput,0,1,{cap},{end['bits_per_second'] / 1e9:.6g},{lat},0,{end['bytes']:.0f},1")

pings = 10
p = subprocess.run(["timeout", "60", "ping", "-U", "-n", "-c", str(pings), "-i", "0.2", a1],
                   capture_output=True, text=True)
m = re.search(r"= ([0-9.]+)/", p.stdout)
if m:
    print(f"iperf3,latency,0,1,{cap},0,{lat},{float(m.group(1)) / 2:.6g},0,{pings}")
else:
    print(f"iperf3-pair: no ping result: {p.stdout[-200:]}", file=sys.stderr)
