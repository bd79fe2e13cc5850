#!/usr/bin/python3
"""slurm_test.py — slurm/train.sbatch end to end on a one-machine Slurm (scripts/slurm-local).

One case per CTest test; each starts its own cluster (on ports no other holds) and stops it:
  train           a 3-rank job trains; its trace equals a scripts/mpirun-local run of the same
                  config and seed (losses, tokens, corpus offsets, splits, gradient traffic);
  nodes           on two nodes (network namespaces of their own, joined by veths), a job of
                  --nodes=2 --ntasks-per-node=2 puts each datacenter of 2 ranks on a node of
                  its own, and its trace equals an mpirun-local run's;
  time_limit      the script asks for SIGTERM a minute or more before the time limit; a job
                  with a one-minute limit and a 45 s margin ends before its limit (FAILED, not
                  TIMEOUT) with strait's status 3, the trace `interrupted`, the checkpoint at its
                  last step, and a resubmitted --resume job reproduces the uninterrupted losses;
  sigterm_shell   SIGTERM to the batch shell alone reaches the ranks the same way (status 3);
  bad_ntasks      a job whose task count is not the config's world size fails with status 2, a
                  message naming --ntasks and both counts, and no trace or checkpoint;
  bench           slurm/bench.sbatch runs bench-paths (narrowed to clear3, direct and oracle;
                  BENCH_NAME=paths-clear3) in a copy of scripts/ and configs/, and its table lands
                  there with both rows, the record (results/bench/paths.md) left as it was.
Exits 77 (CTest: skipped) with slurm-local's reason where it cannot run (not root, Slurm or munge
missing).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tiny import write_config  # noqa: E402  (the shared tiny job)
from checks import check  # noqa: E402  (the one check)

ap = argparse.ArgumentParser()
ap.add_argument("case")
ap.add_argument("--strait", required=True)
ap.add_argument("--source", required=True)
ap.add_argument("--inside", action="store_true", help="already under scripts/slurm-local")
args = ap.parse_args()
STRAIT, SRC = os.path.abspath(args.strait), os.path.abspath(args.source)
SLURM_LOCAL = os.path.join(SRC, "scripts", "slurm-local")
SBATCH = os.path.join(SRC, "slurm", "train.sbatch")
MPIRUN = os.path.join(SRC, "scripts", "mpirun-local")
CASES = ("train", "nodes", "time_limit", "sigterm_shell", "bad_ntasks", "bench")
NODES = {"nodes": 2}  # cases on a cluster of several nodes (slurm-local --nodes); others have one

if not args.inside:
    if args.case not in CASES:
        print("unknown case", args.case)
        sys.exit(2)
    nodes = ["--nodes", str(NODES.get(args.case, 1))]
    chk = subprocess.run([SLURM_LOCAL] + nodes + ["--check"], capture_output=True, text=True)
    if chk.returncode == 3:
        print("SKIPPED:", chk.stderr.strip())
        sys.exit(77)
    if chk.returncode != 0:
        print("FAILED: slurm-local --check:", chk.stdout, chk.stderr)
        sys.exit(1)
    # The cluster lives exactly as long as this case (on two ports no other one holds); its
    # daemons, jobs and folder go with it.
    cmd = [SLURM_LOCAL] + nodes + ["--", sys.executable, os.path.abspath(__file__),
                                   args.case, "--strait", STRAIT, "--source", SRC, "--inside"]

    def machine():
        """What the cluster must leave as it was: links, named namespaces, hostname, hosts, mounts."""
        links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
        names = sorted(line.split(":")[1].strip().split("@")[0] for line in links.splitlines())
        netns = sorted(os.listdir("/run/netns")) if os.path.isdir("/run/netns") else None
        with open("/etc/hosts", "rb") as f:
            hosts = f.read()
        with open("/proc/self/mountinfo") as f:
            mounts = len(f.read().splitlines())
        return {"links": names, "/run/netns": netns, "hostname": os.uname().nodename, "/etc/hosts": hosts,
                "mounts": mounts}
    before = machine()
    rc = subprocess.run(cmd).returncode
    after = machine()
    if rc == 0:
        for what in before:
            if before[what] != after[what]:
                print(f"FAILED: the cluster changed the machine's {what}: {before[what]!r} -> {after[what]!r}")
                sys.exit(1)
        print("ok: the machine's links, named namespaces, hostname, /etc/hosts and mounts are as before")
    sys.exit(rc)

TMP = tempfile.mkdtemp(prefix="strait-slurm-")


def config(name, steps):
    return write_config(TMP, name, steps=steps)


def submit(ntasks, *argv, opts=()):
    env = dict(os.environ, STRAIT_BIN=STRAIT, STRAIT_HOME=SRC)
    p = subprocess.run(["sbatch", "--parsable", f"--ntasks={ntasks}", "-o", os.path.join(TMP, "job-%j.out")]
                       + list(opts) + [SBATCH] + list(argv), capture_output=True, text=True, cwd=TMP, env=env)
    check(p.returncode == 0, f"sbatch accepts the job ({p.stderr.strip()})")
    return p.stdout.strip().split(";")[0]


def job_state(job):
    """(JobState, exit status): the status is -signal for a job whose script a signal ended."""
    out = subprocess.run(["scontrol", "-o", "show", "job", job], capture_output=True, text=True).stdout
    state = re.search(r"JobState=(\S+)", out)
    code = re.search(r"ExitCode=(\d+):(\d+)", out)
    status = -1 if not code else (-int(code.group(2)) if int(code.group(2)) else int(code.group(1)))
    return (state.group(1) if state else "?"), status


LAST_STATE = {}
# The states of a job that has ended (squeue(1), "JOB STATE CODES"); any other is still going.
ENDED = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "OUT_OF_MEMORY",
         "BOOT_FAIL", "DEADLINE")


def wait_job(job, limit=240):
    """Polls the job (sbatch --wait polls every 10 s) and returns its exit status and output."""
    t0 = time.time()
    while time.time() - t0 < limit:
        state, code = job_state(job)
        if state in ENDED:
            break
        time.sleep(0.3)
    else:
        check(False, f"job {job} ended within {limit} s")
    LAST_STATE[job] = state
    with open(os.path.join(TMP, f"job-{job}.out")) as f:
        return code, f.read()


def steps_table(path):
    with h5py.File(path, "r", locking=False) as f:
        return f["steps"][()], f["meta"].attrs["status"]


def mpirun(np_, *argv):
    p = subprocess.run([MPIRUN, "-np", str(np_), STRAIT] + list(argv), capture_output=True, text=True,
                       timeout=240)
    check(p.returncode == 0, f"the mpirun-local reference run ({p.stderr.strip()[-200:]})")


def case_train():
    cfg = config("job", steps=12)
    job = submit(3, cfg, "--out", os.path.join(TMP, "job.h5"))
    code, out = wait_job(job)
    check(code == 0, f"the job exits 0 (exit code {code}; output: {out.strip()[-300:]})")
    check("3 ranks" in out and "train.sbatch: exit status 0" in out, "its output names the ranks and the status")
    mpirun(3, "train", "--config", cfg, "--out", os.path.join(TMP, "ref.h5"))
    sa, status = steps_table(os.path.join(TMP, "job.h5"))
    sb, _ = steps_table(os.path.join(TMP, "ref.h5"))
    check(status == "complete" and len(sa) == 12, f"the trace is complete with 12 steps ({status}, {len(sa)})")
    for field in ("step", "expert", "loss", "tokens"):
        check(np.array_equal(sa[field], sb[field]), f"srun and mpirun: identical '{field}'")
    with h5py.File(os.path.join(TMP, "job.h5"), "r", locking=False) as fa, \
         h5py.File(os.path.join(TMP, "ref.h5"), "r", locking=False) as fb:
        check(np.array_equal(fa["offsets"][()], fb["offsets"][()]), "identical corpus offsets")
        check(np.array_equal(fa["ranks"]["split"], fb["ranks"]["split"]), "identical splits")
        grad_a = fa["links"]["bytes"] - fa["links"]["control_bytes"]
        grad_b = fb["links"]["bytes"] - fb["links"]["control_bytes"]
        check(np.array_equal(grad_a, grad_b), "identical gradient traffic per link and step")


def wait_for_steps(path, n, job, limit=120):
    t0 = time.time()
    while time.time() - t0 < limit:
        if job_state(job)[0] in ENDED:
            return False
        try:
            with h5py.File(path, "r", locking=False) as f:
                if "steps" in f and len(f["steps"]) >= n:
                    return True
        except (OSError, KeyError, RuntimeError):  # met the writer mid-flush (docs/trace.md): open again
            pass
        time.sleep(0.2)
    return False


def case_nodes():
    # Two datacenters of 2 ranks: strait gives them ranks 0-1 and 2-3, Slurm fills node1 then
    # node2, so each datacenter has a node, and the inter-datacenter traffic crosses the veths.
    cfg = config("nodes", steps=12)
    with open(cfg) as f:
        text = f.read()
    two = text.replace('name = "a"\nranks = 1', 'name = "a"\nranks = 2').replace("global_batch = 6", "global_batch = 8")
    check(two.count("ranks = 2") == 2 and "global_batch = 8" in two, "a config of two datacenters of 2 ranks")
    with open(cfg, "w") as f:
        f.write(two)
    # Each node a network of its own: the nodes' namespaces differ, at 10.77.0.1 and .2.
    r = subprocess.run(["srun", "--nodes=2", "--ntasks-per-node=1", "sh", "-c",
                        "echo $(hostname) $(readlink /proc/self/ns/net) $(ip -4 -o addr show eth0 | awk '{print $4}')"],
                       capture_output=True, text=True, timeout=60)
    seen = sorted(r.stdout.split("\n")[:2])
    check(len(seen) == 2 and seen[0].split()[0] == "node1" and seen[1].split()[0] == "node2" and
          seen[0].split()[1] != seen[1].split()[1] and seen[0].split()[2] == "10.77.0.1/24" and
          seen[1].split()[2] == "10.77.0.2/24", f"node1 and node2 have networks of their own: {seen}")

    def veth_bytes():
        """Bytes through node1's and node2's veths, seen from the bridge's side."""
        total = 0
        for k in (1, 2):  # ip, not /sys/class/net: this sysfs is the machine's network's
            out = subprocess.run(["ip", "-j", "-s", "link", "show", "dev", f"v{k}"], capture_output=True, text=True)
            stats = json.loads(out.stdout)[0]["stats64"]
            total += stats["rx"]["bytes"] + stats["tx"]["bytes"]
        return total
    v0 = veth_bytes()
    job = submit(4, cfg, "--out", os.path.join(TMP, "nodes.h5"), opts=["--nodes=2", "--ntasks-per-node=2"])
    code, out = wait_job(job)
    check(code == 0, f"the job exits 0 (exit code {code}; output: {out.strip()[-300:]})")
    check(re.search(r"(?m)^datacenter a .*hosts: node1 node1$", out) is not None and
          re.search(r"(?m)^datacenter b .*hosts: node2 node2$", out) is not None,
          "datacenter a runs on node1, b on node2 (strait's rank map)")
    mpirun(4, "train", "--config", cfg, "--out", os.path.join(TMP, "ref.h5"))
    sa, status = steps_table(os.path.join(TMP, "nodes.h5"))
    sb, _ = steps_table(os.path.join(TMP, "ref.h5"))
    check(status == "complete" and len(sa) == 12, f"the trace is complete with 12 steps ({status}, {len(sa)})")
    with h5py.File(os.path.join(TMP, "nodes.h5"), "r", locking=False) as f:
        wan = int(f["links"]["bytes"][()].sum())
    crossed = veth_bytes() - v0
    check(wan > 0 and crossed >= wan, f"the inter-datacenter traffic crossed the veths ({crossed} bytes there, "
          f"{wan} in the trace's links)")
    for field in ("loss", "tokens"):
        check(np.array_equal(sa[field], sb[field]), f"two nodes and mpirun on one: identical '{field}'")


def interrupted(name, job, limit):
    """Waits for a job stopped by SIGTERM; checks status 3, the trace and the checkpoint."""
    code, out = wait_job(job, limit=limit)
    check(code == 3, f"the job exits with strait's status 3 (got {code}, {LAST_STATE[job]}; output: {out.strip()[-300:]})")
    check("stopped by signal" in out and "train.sbatch: exit status 3" in out, "the output says why")
    steps, status = steps_table(os.path.join(TMP, name + ".h5"))
    check(status == "interrupted", f"trace closed as 'interrupted' after {len(steps)} steps")
    with h5py.File(os.path.join(TMP, name + ".ckpt.h5"), "r", locking=False) as f:
        nxt = int(f.attrs["next_step"])
    check(nxt == len(steps) and nxt > 0, f"the checkpoint continues at step {nxt}")
    return nxt


def case_time_limit():
    # The script asks for SIGTERM to its ranks ahead of the time limit, by a margin of a minute
    # or more (a step and a checkpoint of a large model).
    with open(SBATCH) as f:
        margin = re.search(r"(?m)^#SBATCH --signal=TERM@(\d+)$", f.read())
    check(margin and int(margin.group(1)) >= 60, "train.sbatch asks for SIGTERM a minute or more before its limit")
    # A one-minute job that would run for an hour, its margin 45 s so that the signal is due
    # after the ranks have started (the default's 120 s would be due at once): Slurm signals
    # the ranks at its next time check, and the job ends before its limit (FAILED, exit 3),
    # not at it (TIMEOUT).
    cfg = config("limit", steps=100000)
    t0 = time.time()
    job = submit(3, cfg, opts=["--time=1", "--signal=TERM@45"])
    nxt = interrupted("limit", job, limit=150)
    check(LAST_STATE[job] == "FAILED" and time.time() - t0 < 60,
          f"the job ended by the early signal ({LAST_STATE[job]} after {time.time() - t0:.0f} s), not the limit")
    short = config("limit", steps=nxt + 4)
    resumed = os.path.join(TMP, "resumed.h5")
    job2 = submit(3, short, "--resume", os.path.join(TMP, "limit.ckpt.h5"), "--out", resumed)
    code, out = wait_job(job2)
    check(code == 0, f"the --resume job runs to the end ({out.strip()[-300:]})")
    rsteps, _ = steps_table(resumed)
    check(list(rsteps["step"]) == list(range(nxt, nxt + 4)), "the resumed trace continues the step numbers")
    ref = config("ref", steps=nxt + 4)
    mpirun(3, "train", "--config", ref)
    fsteps, _ = steps_table(os.path.join(TMP, "ref.h5"))
    check(np.array_equal(fsteps["loss"][nxt:], rsteps["loss"]), "resumed losses equal the uninterrupted run's")


def case_sigterm_shell():
    # SIGTERM to the batch shell alone (scancel --batch, --signal=B:TERM@...): its trap passes
    # it to the ranks through Slurm, and the shell waits for their checkpoint.
    cfg = config("shell", steps=100000)
    job = submit(3, cfg)
    check(wait_for_steps(os.path.join(TMP, "shell.h5"), 5, job), "the job runs and writes steps")
    r = subprocess.run(["scancel", "--signal=TERM", "--batch", job], capture_output=True, text=True)
    check(r.returncode == 0, f"scancel --signal=TERM --batch ({r.stderr.strip()})")
    interrupted("shell", job, limit=120)


def case_bad_ntasks():
    cfg = config("bad", steps=5)
    job = submit(2, cfg)
    code, out = wait_job(job)
    check(code == 2, f"the job exits 2 (got {code})")
    check("--ntasks" in out and "has 2 tasks" in out and "needs 3" in out,
          f"the message names --ntasks and both counts: {out.strip()}")
    check(not os.path.exists(os.path.join(TMP, "bad.h5")) and not os.path.exists(os.path.join(TMP, "bad.ckpt.h5")),
          "no trace or checkpoint was written")


def case_bench():
    # The benchmark writes into the checkout it runs from: give it a copy, not the source tree.
    home = os.path.join(TMP, "home")
    for d in ("scripts", "configs"):
        shutil.copytree(os.path.join(SRC, d), os.path.join(home, d))
    # A narrowed run named apart (BENCH_NAME) leaves the record as it was.
    os.makedirs(os.path.join(home, "results", "bench"))
    record = os.path.join(home, "results", "bench", "paths.md")
    with open(record, "w") as f:
        f.write("the record\n")
    env = dict(os.environ, STRAIT_HOME=home, STRAIT_BUILD=os.path.dirname(STRAIT), SCENARIOS="clear3",
               POLICIES="direct oracle", BLP_SCENARIOS="", BENCH_NAME="paths-clear3")
    bench = os.path.join(SRC, "slurm", "bench.sbatch")
    p = subprocess.run(["sbatch", "--parsable", "-o", os.path.join(TMP, "job-%j.out"), bench, "nosuch"],
                       capture_output=True, text=True, cwd=TMP, env=env)
    check(p.returncode == 0, f"sbatch accepts the job ({p.stderr.strip()})")
    code, out = wait_job(p.stdout.strip().split(";")[0])
    check(code == 2 and "no benchmark 'nosuch'" in out, f"an unknown benchmark is refused, exit 2 ({out.strip()})")
    p = subprocess.run(["sbatch", "--parsable", "-o", os.path.join(TMP, "job-%j.out"), bench, "paths"],
                       capture_output=True, text=True, cwd=TMP, env=env)
    check(p.returncode == 0, f"sbatch accepts the bench job ({p.stderr.strip()})")
    code, out = wait_job(p.stdout.strip().split(";")[0], limit=400)
    check(code == 0 and "bench-paths exit status 0" in out, f"the bench job exits 0 ({out.strip()[-400:]})")
    with open(os.path.join(home, "results", "bench", "paths-clear3.csv")) as f:
        rows = [line.split(",") for line in f.read().splitlines()[1:]]
    check(sorted((r[0], r[2]) for r in rows) == [("clear3", "direct"), ("clear3", "oracle")],
          f"results/bench/paths-clear3.csv holds clear3's direct and oracle rows ({rows})")
    check(all(int(r[4]) > 100 and float(r[7]) > 0 for r in rows), "each with its steps and a measured tokens/s")
    with open(os.path.join(home, "results", "bench", "paths-clear3.md")) as f:
        check("| clear3 | sw | direct |" in f.read(), "and the Markdown table has them")
    with open(record) as f:
        check(f.read() == "the record\n" and not os.path.exists(os.path.join(home, "results", "bench", "paths.csv")),
              "the record (results/bench/paths.md) is left as it was")


def cancel_all():
    """Ends every job of this cluster before TMP goes: a live rank would write into it again."""
    jobs = subprocess.run(["squeue", "-h", "-o", "%i"], capture_output=True, text=True).stdout.split()
    if jobs:
        subprocess.run(["scancel", "--full", "--signal=KILL"] + jobs)
        subprocess.run(["scancel"] + jobs)
        for _ in range(100):
            if not subprocess.run(["squeue", "-h", "-o", "%i"], capture_output=True, text=True).stdout.split():
                break
            time.sleep(0.1)


try:
    globals()["case_" + args.case]()
finally:
    cancel_all()
    shutil.rmtree(TMP, ignore_errors=True)
print("1 passed, 0 failed")
