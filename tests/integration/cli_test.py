#!/usr/bin/python3
"""cli_test.py — end-to-end checks of the `strait` command, one case per CTest test.

Runs the real binary under scripts/mpirun-local on small configs and checks, from outside:
exit codes and messages for bad input (and that no output file appears), trace contents with
h5py, --force protection, same-seed reproducibility of the trace, readability after SIGKILL,
and SIGTERM → clean stop with checkpoint → --resume continues to the end.
"""
import argparse
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tiny import TINY, write_config  # noqa: E402  (the shared tiny job)
from checks import check  # noqa: E402  (the one check)

ap = argparse.ArgumentParser()
ap.add_argument("case")
ap.add_argument("--strait", required=True)
ap.add_argument("--source", required=True)
args = ap.parse_args()
STRAIT, SRC = args.strait, args.source
MPIRUN = os.path.join(SRC, "scripts", "mpirun-local")
TMP = tempfile.mkdtemp(prefix="strait-cli-")
LOAD_CSV = os.path.join(TMP, "speeds.csv")  # row 3: speed 0
with open(LOAD_CSV, "w") as f:
    f.write("step,speed\n0,1.0\n4,0\n")
LOAD_TRACE = os.path.join(TMP, "trace.csv")
with open(LOAD_TRACE, "w") as f:
    f.write("worker,time,batch_time_norm\n0,1,500\n0,2,400\n0,3,450\n")


def config(name, steps=20, every=0, extra=""):
    return write_config(TMP, name, steps, every, extra)


def run(np_, *argv, timeout=240):
    cmd = [MPIRUN, "-np", str(np_), STRAIT] + list(argv)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def trace_of(name):
    return os.path.join(TMP, name + ".h5")


def steps_table(path):
    with h5py.File(path, "r", locking=False) as f:
        return f["steps"][()], f["meta"].attrs["status"], (f["offsets"][()] if "offsets" in f else None)


def case_bad_input():
    # Each bad input: exit 2, the message once (rank 0), and no trace or checkpoint created.
    base = TINY.format(name="bad", out=TMP, steps=5, every=0)
    rows = [
        ("unknown key", base.replace("lr = 3e-3", "lr = 3e-3\nlearning_rate = 1"), "train.learning_rate"),
        ("wrong type", base.replace("steps = 5", "steps = \"five\""), "train.steps"),
        ("out of range", base.replace("layers = 2", "layers = 0"), "model.layers"),
        ("split sum", base.replace("ranks = 2", "ranks = 2\nsplit = [0.7, 0.2]"), "split"),
        ("heads vs split", base.replace("ranks = 2", "ranks = 2\nsplit = [0.7, 0.3]"), "model.heads"),
        ("unreadable corpus", base.replace("/usr/share/common-licenses", "/nonexistent/corpus"), "train.corpus"),
        ("memory", base.replace("[run]", "[run]\nmemory_limit_gb = 0.00001"), "memory"),
        ("load speed 0", base + "[[load]]\nranks = [2]\nkind = \"constant\"\nspeed = 0\n", "load.0.speed"),
        ("load markov states", base + "[[load]]\nranks = [2]\nkind = \"markov\"\nspeeds = [1.0, 0.5]\n"
         "transition = [[1.0]]\n", "load.0.transition"),
        ("forecast window < 4", base + "[control.forecast]\nwindow = 3\n", "control.forecast.window"),
        ("forecast states < 2", base + "[control.forecast]\nstates = 1\n", "control.forecast.states"),
        ("balance hysteresis", base + "[control.balance]\nhysteresis = -0.1\n", "control.balance.hysteresis"),
    ]
    # A load CSV with a bad row: the message names the CSV and its line.
    rc, out, err = run(3, "train", "--config", config("badcsv", extra=f"[[load]]\nranks = [2]\nkind = \"csv\"\nfile = \"{LOAD_CSV}\"\n"))
    check(rc == 2 and f"{LOAD_CSV}:3: load.0.file: speed 0 is out of range" in err,
          f"a load CSV error names the CSV and its line: {err.strip()[:200]}")
    check(not os.path.exists(trace_of("badcsv")), "load CSV error: no trace file")
    # A trace column that does not exist: the message points at the trace's header line.
    rc, out, err = run(3, "train", "--config", config("badcol", extra=(
        f"[[load]]\nranks = [2]\nkind = \"trace\"\nsignal = \"batch_time\"\nfile = \"{LOAD_TRACE}\"\n"
        "worker = 0\nstride = 0.1\ncolumn = \"nope\"\n")))
    check(rc == 2 and f"{LOAD_TRACE}:1: load.0.file: no column \"nope\"" in err,
          f"a missing trace column is named with the trace's header line: {err.strip()[:200]}")
    check(not os.path.exists(trace_of("badcol")), "missing trace column: no trace file")
    for what, text, key in rows:
        path = os.path.join(TMP, "bad.toml")
        with open(path, "w") as f:
            f.write(text)
        rc, out, err = run(3, "train", "--config", path)
        check(rc == 2, f"{what}: exit status 2 (got {rc})")
        check(key in err and "bad.toml" in err, f"{what}: message names file and '{key}': {err.strip()[:200]}")
        check(err.count("config error") == 1, f"{what}: reported once, not by every rank")
        check(not os.path.exists(trace_of("bad")), f"{what}: no trace file created")
    # A corpus shorter than one sequence: found after loading, still before any file exists.
    short = os.path.join(TMP, "short.txt")
    with open(short, "w") as f:
        f.write("too short")
    rc, out, err = run(3, "train", "--config", config("shortcorpus"), "--set", f'train.corpus="{short}"')
    check(rc == 2 and "train.corpus" in err and "seq_len" in err, f"a too short corpus is refused: {err.strip()[:200]}")
    check(not os.path.exists(trace_of("shortcorpus")), "too short corpus: no trace file")
    # Trace and checkpoint on one path would overwrite each other: refused.
    same = os.path.join(TMP, "same.h5")
    rc, out, err = run(3, "train", "--config", config("samepath"), "--set", f'trace.path="{same}"',
                       "--set", f'checkpoint.path="{same}"')
    check(rc == 2 and "same file" in err and not os.path.exists(same), f"trace == checkpoint refused: {err.strip()[:160]}")
    # World size different from the datacenters' ranks.
    rc, out, err = run(2, "train", "--config", config("ws"))
    check(rc == 2 and "mpirun -np 3" in err, f"world size mismatch is reported: {err.strip()[:200]}")
    check(not os.path.exists(trace_of("ws")), "world size mismatch: no trace file")
    # Bad --set goes through the same validation.
    rc, out, err = run(3, "train", "--config", config("setbad"), "--set", "model.heads=3")
    check(rc == 2 and "model.heads" in err, f"--set model.heads=3 rejected: {err.strip()[:200]}")
    # Unknown flag: CLI11 usage error, exit 2.
    p = subprocess.run([STRAIT, "train", "--config", config("flag"), "--bogus"], capture_output=True, text=True)
    check(p.returncode == 2, "unknown flag exits 2")


def case_validate():
    p = subprocess.run([STRAIT, "validate", "--config", os.path.join(SRC, "configs", "default.toml")],
                       capture_output=True, text=True)
    check(p.returncode == 0, "validate default.toml exits 0")
    for word in ("east", "west", "param", "MiB"):
        check(word in p.stdout, f"validate prints '{word}'")
    p = subprocess.run([STRAIT, "validate", "--config", os.path.join(SRC, "configs", "default.toml"),
                        "--set", "model.heads=5"], capture_output=True, text=True)
    check(p.returncode == 2 and "model.heads" in p.stderr, "validate rejects a bad --set with exit 2")
    p = subprocess.run([STRAIT, "--help"], capture_output=True, text=True)
    check(p.returncode == 0 and "train" in p.stdout and "validate" in p.stdout and "report" in p.stdout,
          "--help lists the subcommands")


def case_report_and_force():
    cfg = config("rep", steps=20)
    rc, out, err = run(3, "train", "--config", cfg)
    check(rc == 0, f"tiny run exits 0 ({err.strip()[-300:]})")
    check("loss" in out and "tok/s" in out and "done:" in out, "progress lines and summary printed")
    check("backend: cpu (" in out, "the header names the backend of the ranks")
    steps, status, offsets = steps_table(trace_of("rep"))
    check(len(steps) == 20 and status == "complete", f"trace has 20 steps, status complete ({status})")
    check(list(steps["step"]) == list(range(20)), "steps are numbered 0..19")
    check(offsets.shape == (20, 6), "offsets recorded for every step and sequence")
    check(steps["loss"][-5:].mean() < steps["loss"][:3].mean() - 0.5, "loss goes down")
    with h5py.File(trace_of("rep"), "r", locking=False) as f:
        check(len(f["ranks"]) == 60 and len(f["links"]) == 40, "per-rank and per-link rows")
        backends = [b.decode() if isinstance(b, bytes) else str(b) for b in f["meta"].attrs["backends"]]
        check(backends == ["cpu"] * 3, f"/meta@backends names each rank's backend ({backends})")
        check(len(f["decisions"]) >= 5, "initial policy of every slot recorded")
    p = subprocess.run([STRAIT, "report", trace_of("rep")], capture_output=True, text=True)
    check(p.returncode == 0 and "complete" in p.stdout and "backend      cpu (3 ranks)" in p.stdout,
          "strait report summarises the trace, backend included")
    p = subprocess.run(["h5dump", "-H", trace_of("rep")], capture_output=True, text=True,
                       env=dict(os.environ, HDF5_USE_FILE_LOCKING="FALSE"))
    check(p.returncode == 0 and "steps" in p.stdout, "h5dump reads the trace")
    digest = hashlib.sha256(open(trace_of("rep"), "rb").read()).hexdigest()
    rc, out, err = run(3, "train", "--config", cfg)
    check(rc == 2 and "--force" in err, "an existing trace is not overwritten without --force")
    check(hashlib.sha256(open(trace_of("rep"), "rb").read()).hexdigest() == digest, "the old trace is intact")
    rc, out, err = run(3, "train", "--config", cfg, "--force")
    check(rc == 0, "--force overwrites")
    p = subprocess.run([STRAIT, "report", os.path.join(TMP, "missing.h5")], capture_output=True, text=True)
    check(p.returncode == 2, "report on a missing file exits 2")


def case_same_seed():
    cfg = config("seed", steps=15)
    a, b = os.path.join(TMP, "a.h5"), os.path.join(TMP, "b.h5")
    check(run(3, "train", "--config", cfg, "--out", a)[0] == 0, "first run")
    check(run(3, "train", "--config", cfg, "--out", b)[0] == 0, "second run")
    sa, _, oa = steps_table(a)
    sb, _, ob = steps_table(b)
    for field in ("step", "expert", "loss", "tokens"):
        check(np.array_equal(sa[field], sb[field]), f"same seed: identical '{field}'")
    check(np.array_equal(oa, ob), "same seed: identical corpus offsets")
    with h5py.File(a, "r", locking=False) as fa, h5py.File(b, "r", locking=False) as fb:
        check(np.array_equal(fa["ranks"]["split"], fb["ranks"]["split"]), "same seed: identical splits")
        # The gradients' traffic is a function of the seed; when the controller's own messages
        # land (which step's row counts them) depends on timing, so they are left out.
        grad_a = fa["links"]["bytes"] - fa["links"]["control_bytes"]
        grad_b = fb["links"]["bytes"] - fb["links"]["control_bytes"]
        check(np.array_equal(grad_a, grad_b), "same seed: identical gradient traffic per link and step")
        check(np.all(fa["links"]["control_bytes"] >= 0) and fa["links"]["control_bytes"].sum() > 0,
              "the controller's traffic crosses the links")


def start(np_, *argv):
    cmd = [MPIRUN, "-np", str(np_), STRAIT] + list(argv)
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def wait_for_steps(path, n, proc, limit=120):
    t0 = time.time()
    while time.time() - t0 < limit:
        if proc.poll() is not None:
            return False
        try:
            with h5py.File(path, "r", locking=False) as f:
                if "steps" in f and len(f["steps"]) >= n:
                    return True
        except (OSError, KeyError, RuntimeError):  # met the writer mid-flush (docs/trace.md): open again
            pass
        time.sleep(0.2)
    return False


def case_sigkill():
    cfg = config("kill", steps=100000)
    p = start(3, "train", "--config", cfg)
    check(wait_for_steps(trace_of("kill"), 5, p), "a live trace is readable while the run goes on")
    os.killpg(p.pid, signal.SIGKILL)  # the whole job: mpirun and every rank
    subprocess.run(["pkill", "-KILL", "-f", trace_of("kill").replace(".h5", ".toml")])
    p.wait()
    time.sleep(0.5)
    steps, status, offsets = steps_table(trace_of("kill"))
    check(len(steps) >= 5 and status == "running", f"after SIGKILL: {len(steps)} steps readable, status 'running'")
    check(offsets.shape[0] >= len(steps), "offsets of every committed step are there")
    r = subprocess.run(["h5dump", "-d", "/steps", trace_of("kill")], capture_output=True, text=True,
                       env=dict(os.environ, HDF5_USE_FILE_LOCKING="FALSE"))
    check(r.returncode == 0, "h5dump reads the killed trace")


def case_sigterm_resume():
    cfg = config("term", steps=400)
    p = start(3, "train", "--config", cfg)
    check(wait_for_steps(trace_of("term"), 5, p), "run started")
    # Slurm's time limit sends SIGTERM to every task; do the same to the ranks.
    subprocess.run(["pkill", "-TERM", "-f", "^" + STRAIT + " train --config " + cfg])
    out, err = p.communicate(timeout=120)
    check(p.returncode != 0, f"stopped run exits non-zero ({p.returncode})")
    check("stopped by signal" in err, f"and says why: {err.strip()[-200:]}")
    steps, status, _ = steps_table(trace_of("term"))
    check(status == "interrupted", f"trace closed as 'interrupted' after {len(steps)} steps")
    ck = os.path.join(TMP, "term.ckpt.h5")
    check(os.path.exists(ck), "checkpoint written on the way out")
    with h5py.File(ck, "r", locking=False) as f:
        nxt = int(f.attrs["next_step"])
    check(nxt == len(steps), f"checkpoint continues at step {nxt}")
    # Resume with a short horizon; the trajectory must equal an uninterrupted run's.
    short = config("term", steps=nxt + 5)
    rc, out, err = run(3, "train", "--config", short, "--resume", ck, "--out", os.path.join(TMP, "resumed.h5"))
    check(rc == 0, f"--resume runs to the end ({err.strip()[-200:]})")
    rsteps, _, _ = steps_table(os.path.join(TMP, "resumed.h5"))
    check(list(rsteps["step"]) == list(range(nxt, nxt + 5)), "resumed trace continues the step numbers")
    ref = config("ref", steps=nxt + 5)
    rc, out, err = run(3, "train", "--config", ref)
    fsteps, _, _ = steps_table(trace_of("ref"))
    check(np.array_equal(fsteps["loss"][nxt:], rsteps["loss"]), "resumed losses equal the uninterrupted run's")


def case_links():
    # `strait links` on the Skyplane subset: TOML that parses, values equal to the CSV rows,
    # accepted by `strait validate` with a small model; errors exit 2; the shipped configs
    # hold exactly what the command recorded in their header generates.
    import csv
    import shlex
    import tomllib
    data = os.path.join(SRC, "configs", "data")
    thr = os.path.join(data, "skyplane-throughput-subset.csv")
    rtt = os.path.join(data, "skyplane-rtt-subset.csv")
    regions = ["aws:us-east-1", "aws:eu-west-1", "aws:ap-northeast-1"]
    p = subprocess.run([STRAIT, "links", "--throughput", thr, "--rtt", rtt, "--regions", ",".join(regions),
                        "--names", "east,eu,asia", "--ranks", "2,1,1"], capture_output=True, text=True)
    check(p.returncode == 0, f"strait links exits 0 ({p.stderr.strip()[:200]})")
    check("Skyplane project, skyplane-project/skyplane, Apache-2.0" in p.stdout, "header carries the attribution")
    check("# command:    strait links --throughput" in p.stdout, "header records the command")
    doc = tomllib.loads(p.stdout)
    check([d["name"] for d in doc["datacenter"]] == ["east", "eu", "asia"], "three datacenters, in order")
    check([d["ranks"] for d in doc["datacenter"]] == [2, 1, 1], "ranks 2, 1, 1")
    check(len(doc["link"]) == 6, "six directed links")
    gbps = {(r["src_region"], r["dst_region"]): float(r["gbps"]) for r in csv.DictReader(open(thr))}
    rtt_ms = {(r["src_region"], r["dst_region"]): float(r["avg_rtt_ms"]) for r in csv.DictReader(open(rtt))}
    by_name = dict(zip(["east", "eu", "asia"], regions))
    for link in doc["link"]:
        pair = (by_name[link["from"]], by_name[link["to"]])
        check(link["capacity_gbps"] == gbps[pair] and link["latency_ms"] == rtt_ms[pair] / 2,
              f"{pair}: capacity = CSV gbps, latency = avg_rtt_ms / 2")
    cfg = os.path.join(TMP, "links.toml")
    with open(cfg, "w") as f:
        f.write(p.stdout + "\n[model]\nlayers = 1\nd_model = 16\nheads = 2\nd_ff = 32\nseq_len = 8\n"
                "[train]\nglobal_batch = 4\n")
    v = subprocess.run([STRAIT, "validate", "--config", cfg], capture_output=True, text=True)
    check(v.returncode == 0 and "links: 6" in v.stdout and "42.468" in v.stdout,
          f"strait validate accepts it ({v.stderr.strip()[:200]})")
    # --out and --force.
    out = os.path.join(TMP, "frag.toml")
    base = [STRAIT, "links", "--throughput", thr, "--rtt", rtt, "--regions", "aws:us-east-1,azure:westus"]
    check(subprocess.run(base + ["--out", out], capture_output=True).returncode == 0 and os.path.exists(out),
          "--out writes the file")
    e = subprocess.run(base + ["--out", out], capture_output=True, text=True)
    check(e.returncode == 2 and "--force" in e.stderr, "an existing --out is kept without --force")
    check(subprocess.run(base + ["--out", out, "--force"], capture_output=True).returncode == 0, "--force overwrites")
    check('name = "aws_us_east_1"' in open(out).read(), "default names are sanitised region ids")
    # Errors: exit 2, one line "strait: links: ...".
    bad = os.path.join(TMP, "bad.csv")
    with open(bad, "w") as f:
        f.write("src_region,dst_region,gbps\naws:us-east-1,azure:westus,fast\n")
    for what, argv, needle in [
        ("unknown region", ["--throughput", thr, "--rtt", rtt, "--regions", "aws:us-east-9,aws:eu-west-1"],
         "close names: aws:us-east-1"),
        ("no --rtt", ["--throughput", thr, "--regions", "aws:us-east-1,aws:eu-west-1"], "--rtt"),
        ("bad number", ["--throughput", bad, "--rtt", rtt, "--regions", "aws:us-east-1,azure:westus"], "bad.csv:2:"),
    ]:
        e = subprocess.run([STRAIT, "links"] + argv, capture_output=True, text=True)
        check(e.returncode == 2 and e.stderr.startswith("strait: links: ") and needle in e.stderr,
              f"{what}: exit 2 and '{needle}' ({e.stderr.strip()[:200]})")
    # The shipped configs: valid, and their tables are what their recorded command generates.
    for name in ("us-eu-asia", "mesh6"):
        path = os.path.join(SRC, "configs", name + ".toml")
        v = subprocess.run([STRAIT, "validate", "--config", path], capture_output=True, text=True)
        check(v.returncode == 0, f"{name}.toml validates ({v.stderr.strip()[:200]})")
        text = open(path).read()
        cmd = [l for l in text.splitlines() if l.startswith("# command:")][0].split(":", 1)[1].strip()
        argv = shlex.split(cmd)
        check(argv[:2] == ["strait", "links"], f"{name}.toml records its strait links command")
        g = subprocess.run([STRAIT] + argv[1:], capture_output=True, text=True, cwd=SRC)
        check(g.returncode == 0, f"{name}: the recorded command runs")
        shipped, fresh = tomllib.loads(text), tomllib.loads(g.stdout)
        check(shipped["link"] == fresh["link"] and shipped["datacenter"] == fresh["datacenter"],
              f"{name}: [[datacenter]] and [[link]] equal the regenerated ones")


def case_emulated_load():
    # Rank 2 (DC b, local rank 1) is given relative speed 0.5: it idles as long as it computed
    # itself (its compute outside the DC's reductions, where it may wait for its peer).
    cfg = config("slow", steps=12, extra="")
    text = open(cfg).read().replace("name = \"b\"\nranks = 2", "name = \"b\"\nranks = 2\nspeed = [1.0, 0.5]")
    open(cfg, "w").write(text)
    rc, out, err = run(3, "train", "--config", cfg)
    check(rc == 0, f"run with a slow rank ({err.strip()[-200:]})")
    with h5py.File(trace_of("slow"), "r", locking=False) as f:
        r = f["ranks"][()]
        steps = f["steps"][()]
    slow, fast = r[r["rank"] == 2], r[r["rank"] != 2]
    check(np.all(fast["emulated_ms"] == 0), "full-speed ranks record no emulated load")
    ratio = slow["emulated_ms"] / (slow["compute_ms"] - slow["reduce_ms"])
    check(np.allclose(ratio, 1.0, rtol=1e-6), f"speed 0.5 idles (1/0.5 - 1) x own compute: {ratio[:3]}")
    check(np.all(slow["speed"] == 0.5) and np.all(fast["speed"] == 1.0), "/ranks.speed is the scenario's")
    check(np.all(r[r["dc"] == 0]["reduce_ms"] == 0), "a DC of one rank makes no reductions")
    # The slow rank's idle is inside the compute, at the DC's reductions: its peer (rank 1) waits
    # there for it, so their reductions take about as long as the slow rank's own compute.
    peer = r[r["rank"] == 1]
    check(np.median(peer["reduce_ms"]) > 0.5 * np.median(slow["compute_ms"] - slow["reduce_ms"]),
          f"the peer waits in the reductions: {np.median(peer['reduce_ms']):.2f} ms")
    check(np.all(steps["emulated_ms"] == slow["emulated_ms"]), "the step row carries the max over ranks")


def case_sigterm_launcher():
    # A user's Ctrl-C / kill on the launcher: scripts/mpirun-local passes SIGTERM to the ranks.
    cfg = config("launch", steps=100000)
    p = start(3, "train", "--config", cfg)
    check(wait_for_steps(trace_of("launch"), 3, p), "run started")
    p.send_signal(signal.SIGTERM)  # p is the launcher script itself
    out, err = p.communicate(timeout=60)
    check(p.returncode == 3, f"launcher exits with the ranks' status 3 ({p.returncode})")
    steps, status, _ = steps_table(trace_of("launch"))
    check(status == "interrupted", f"trace closed as 'interrupted' after {len(steps)} steps")
    check(os.path.exists(os.path.join(TMP, "launch.ckpt.h5")), "checkpoint written")


try:
    globals()["case_" + args.case]()
finally:
    subprocess.run(["pkill", "-KILL", "-f", TMP])  # nothing of ours outlives the case
    shutil.rmtree(TMP, ignore_errors=True)
print("1 passed, 0 failed")
