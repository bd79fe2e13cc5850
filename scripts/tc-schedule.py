#!/usr/bin/python3
"""tc-schedule.py — applies a run's link schedules to the tc classes of scripts/netns-run, on time.

Started by netns-run (root, in the host namespace) before the run; not meant to be run by hand.
  tc-schedule.py CHANGES LINKS CLOCK_FILE LOG
CHANGES  `strait schedule` output: time_s,from,to,capacity_gbps,latency_ms in run time (after
         network.time_scale); rows at time 0 are what netns-run set up and are skipped.
LINKS    one line per shaped link: "from to namespace classid qdisc_handle delay" where delay is
         netem (latency changes go to the link's netem qdisc) or none (rates only).
CLOCK_FILE  written by rank 0 when the link schedules start (src/net/run_clock.hpp): the run's
         time 0 as seconds since the Unix epoch. Nothing is applied before it appears.
LOG      CSV, one row per applied change: planned_s (run time), started_s (run time when `tc`
         was started), applied_s (when it returned), late_ms = (applied - planned) * 1000, from,
         to, capacity_gbps, latency_ms, ok (tc's exit status 0 or not). Flushed row by row.
netns-run starts it at a real-time priority (chrt) where it can, so that a busy machine does not
make it late; the log says how late each change landed all the same.
The rate and burst follow netns-run's rules (payload rate × 1514/1448, burst 0.2 ms, ≥ 3028 B).
Exits when the changes run out, or on SIGTERM (netns-run's cleanup).
"""
import csv
import os
import signal
import subprocess
import sys
import time

changes_file, links_file, clock_file, log_file = sys.argv[1:5]
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))

links = {}
for line in open(links_file):
    if line.strip():
        src, dst, ns, cls, handle, delay = line.split()
        links[(src, dst)] = (ns, cls, handle, delay)
events, last_lat = [], {}  # last_lat: each link's latency in force (netns-run set time 0's)
with open(changes_file) as f:
    for r in csv.DictReader(f):
        t, key = float(r["time_s"]), (r["from"], r["to"])
        if key not in links:
            continue
        if t > 0:
            events.append((t, r["from"], r["to"], float(r["capacity_gbps"]), float(r["latency_ms"])))
        else:
            last_lat[key] = float(r["latency_ms"])


def rate_bit(g):
    return "%.0fbit" % (g * 1e9 * 1514 / 1448)


def burst_b(g):
    return "%.0f" % max(3028, g * 1e9 / 8 * 0.0002)


log = open(log_file, "w", buffering=1)
log.write("planned_s,started_s,applied_s,late_ms,from,to,capacity_gbps,latency_ms,ok\n")
while not os.path.exists(clock_file):
    time.sleep(0.005)
t0 = float(open(clock_file).read())
for t, src, dst, gbps, lat_ms in events:
    wait = t0 + t - time.time()
    if wait > 0.002:
        time.sleep(wait - 0.002)
    while time.time() < t0 + t:  # the last 2 ms spun, not slept: sleeps overshoot
        pass
    ns, cls, handle, delay = links[(src, dst)]
    rate = rate_bit(gbps)
    cmds = [["tc", "-n", ns, "class", "change", "dev", "uplink", "parent", "1:", "classid",
             "1:" + cls, "htb", "rate", rate, "ceil", rate, "burst", burst_b(gbps), "cburst",
             burst_b(gbps), "quantum", "60000"]]
    if delay == "netem" and last_lat.get((src, dst)) != lat_ms:
        cmds.append(["tc", "-n", ns, "qdisc", "change", "dev", "uplink", "parent", "1:" + cls,
                     "handle", handle + ":", "netem", "delay", "%gms" % lat_ms, "limit", "100000"])
    last_lat[(src, dst)] = lat_ms
    started = time.time() - t0
    ok = all(subprocess.call(c, stdout=subprocess.DEVNULL) == 0 for c in cmds)
    applied = time.time() - t0
    log.write("%.6f,%.6f,%.6f,%.3f,%s,%s,%g,%g,%d\n" % (t, started, applied, (applied - t) * 1e3,
                                                        src, dst, gbps, lat_ms, 0 if ok else 1))
