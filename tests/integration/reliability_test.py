#!/usr/bin/python3
"""reliability_test.py — issue 10's hostile test pass, end to end: one case per CTest test.

Each case runs the real binary (under scripts/mpirun-local, or plain mpirun where the launcher is
what is tested) the way a tester broke it, and checks from outside what must happen now: exit
status, message, what is on disk (h5py). docs/reliability.md lists every case and its test.
Cases that need to mount a small file system (a full or read-only disk) exit 77 (skipped) where
mounting is not allowed.
"""
import argparse
import hashlib
import os
import shutil
import signal
import stat
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
TMP = tempfile.mkdtemp(prefix="strait-rel-")
MOUNTS = []  # file systems this case mounted, unmounted at the end
JOBS = []    # jobs this case started (each in a session of its own), killed at the end


def config(name, steps=20, every=0, extra="", out=None):
    return write_config(TMP, name, steps, every, extra, out)


def run(np_, *argv, timeout=240, env=None):
    cmd = [MPIRUN, "-np", str(np_), STRAIT] + list(argv)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    return p.returncode, p.stdout, p.stderr


def strait(*argv, timeout=60):
    p = subprocess.run([STRAIT] + list(argv), capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def start(np_, *argv, launcher=None, env=None):
    cmd = (launcher or [MPIRUN]) + ["-np", str(np_), STRAIT] + list(argv)
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True, env=env)
    JOBS.append(p)
    return p


def steps_in(path):
    try:
        with h5py.File(path, "r", locking=False) as f:
            return len(f["steps"]) if "steps" in f else 0
    except (OSError, KeyError, RuntimeError):  # met the writer mid-flush (docs/trace.md): open again
        return -1


def wait_for_steps(path, n, proc, limit=120):
    t0 = time.time()
    while time.time() - t0 < limit:
        if proc.poll() is not None:
            return False
        if steps_in(path) >= n:
            return True
        time.sleep(0.2)
    return False


def meta(path):
    with h5py.File(path, "r", locking=False) as f:
        m = dict(f["meta"].attrs)
        return {k: (v.decode() if isinstance(v, bytes) else v) for k, v in m.items()}


def rank_pids(proc):
    """World rank -> pid of the ranks of a job started by start(): the descendants of the
    launcher whose environment names their rank (Open MPI sets OMPI_COMM_WORLD_RANK)."""
    out = {}
    todo = [proc.pid]
    while todo:
        pid = todo.pop()
        try:
            kids = open(f"/proc/{pid}/task/{pid}/children").read().split()
        except OSError:
            kids = []
        for k in kids:
            todo.append(int(k))
            try:
                env = open(f"/proc/{k}/environ", "rb").read().split(b"\0")
            except OSError:
                continue
            for e in env:
                if e.startswith(b"OMPI_COMM_WORLD_RANK="):
                    out[int(e.split(b"=")[1])] = int(k)
    return out


def kill_job(proc):
    """kill -9 of a whole job: the launcher's group, and the ranks, which Open MPI puts in process
    groups of their own; returns when every rank is gone (and with it its locks)."""
    pids = list(rank_pids(proc).values())
    os.killpg(proc.pid, signal.SIGKILL)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.wait()
    t0 = time.time()
    while any(os.path.exists(f"/proc/{pid}") for pid in pids) and time.time() - t0 < 30:
        time.sleep(0.05)


def can_mount():
    d = os.path.join(TMP, "probe")
    os.makedirs(d)
    ok = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", d],
                        capture_output=True).returncode == 0
    if ok:
        subprocess.run(["umount", d])
    return ok


def small_fs(name, kib, readonly=False):
    d = os.path.join(TMP, name)
    os.makedirs(d)
    opts = f"size={kib}k" + (",ro" if readonly else "")
    subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", d], check=True)
    MOUNTS.append(d)
    return d


def skip(why):
    print("SKIPPED:", why)
    sys.exit(77)


# ---- defects 2, 4, 7, 8, 9, 10, 14: what validate refuses, train refuses the same way ----------
def case_validate_is_truth():
    big = "x" * 300
    short = os.path.join(TMP, "short.txt")
    open(short, "w").write("too short")
    books = os.path.join(TMP, "books")
    os.makedirs(books)
    open(os.path.join(books, "one.txt"), "w").write("b" * 1000)
    deep = os.path.join(TMP, "deep.toml")
    open(deep, "w").write("a" + ".a" * 40000 + " = 1\n")
    rows = [  # (what, --set overrides, key in the message)
        ("capacity 1e308", ["network.default_capacity_gbps=1e308"], "network.default_capacity_gbps"),
        ("capacity 1e-308", ["network.default_capacity_gbps=1e-308"], "network.default_capacity_gbps"),
        ("latency 1e308", ["network.default_latency_ms=1e308"], "network.default_latency_ms"),
        ("jitter 1e308", ["network.default_jitter_ms=1e308"], "network.default_jitter_ms"),
        ("time_scale 1e308", ["network.time_scale=1e308"], "network.time_scale"),
        ("lr 1e308", ["train.lr=1e308"], "train.lr"),
        ("init_std 1e308", ["model.init_std=1e308"], "model.init_std"),
        ("name of 300 characters", [f"run.name={big}"], "run.name"),
        ("corpus shorter than a sequence", [f"train.corpus={short}"], "train.corpus"),
        ("> 2^31 parameters", ["model.d_model=16384", "model.d_ff=65536", "run.memory_limit_gb=1e6"],
         "2^31"),
        ("trace == checkpoint", [f"trace.path={TMP}/same.h5", f"checkpoint.path={TMP}/same.h5"],
         "same file"),
        ("trace inside the corpus folder", [f"train.corpus={books}", f"trace.path={books}/t.h5"],
         "corpus folder"),
    ]
    for what, sets, key in rows:
        cfg = config("v")
        argv = sum((["--set", s] for s in sets), [])
        t0 = time.time()
        vrc, _, verr = strait("validate", "--config", cfg, *argv)
        rc, out, err = run(3, "train", "--config", cfg, *argv)
        check(vrc == 2 and key in verr, f"{what}: validate exits 2 naming {key} ({verr.strip()[:160]})")
        check(rc == 2 and key in err and err.count(key) >= 1,
              f"{what}: train exits 2 naming {key} too ({rc}: {err.strip()[:160]})")
        check(not os.path.exists(os.path.join(TMP, "v.h5")), f"{what}: no trace written")
        check(time.time() - t0 < 60, f"{what}: answered in {time.time() - t0:.1f} s")
    # A config nested 40,000 levels deep crashed the TOML parser (exit 139).
    vrc, _, verr = strait("validate", "--config", deep)
    check(vrc == 2 and "nests" in verr, f"deep nesting: exit 2, not a crash ({verr.strip()[:120]})")
    # --out onto an input.
    corpus = os.path.join(TMP, "corpus")
    shutil.copytree("/usr/share/common-licenses", corpus)
    cfg = config("io", extra="")
    open(cfg, "a").write("")
    text = open(cfg).read().replace("/usr/share/common-licenses", corpus)
    open(cfg, "w").write(text)
    for target, what in ((cfg, "the config file"), (os.path.join(corpus, "GPL-3"), "a file of the corpus")):
        before = hashlib.sha256(open(target, "rb").read()).hexdigest()
        rc, _, err = run(3, "train", "--config", cfg, "--out", target, "--force")
        check(rc == 2 and "--out" in err, f"--out {what} refused ({err.strip()[:160]})")
        check(hashlib.sha256(open(target, "rb").read()).hexdigest() == before, f"{what} untouched")


def case_corpus_exact():
    # A corpus of exactly seq_len + 1 bytes holds one sequence: it crashed at step 0 (exit 134).
    exact = os.path.join(TMP, "exact.txt")
    open(exact, "wb").write(bytes(range(65, 65 + 17)))
    rc, out, err = run(3, "train", "--config", config("exact", steps=4), "--set", f"train.corpus={exact}")
    check(rc == 0, f"a corpus of seq_len + 1 bytes trains ({err.strip()[-200:]})")
    check(meta(os.path.join(TMP, "exact.h5"))["status"] == "complete", "and its trace is complete")


def case_messages():
    rc, out, err = strait("bogus")
    check(rc == 2 and "unknown subcommand 'bogus'" in err and "train" in err,
          f"strait bogus names the subcommand ({err.strip()[:120]})")
    rc, out, err = strait("train", "--help")
    check(rc == 0 and "--resume" in out and "trace" in out.split("--resume", 1)[1][:400]
          and "split" in out.split("--resume", 1)[1][:600], "--resume help says what happens to the trace and split")
    # A million unknown keys printed a million lines; the list is capped.
    many = os.path.join(TMP, "many.toml")
    text = TINY.format(name="m", out=TMP, steps=2, every=0)
    text = text.replace("[model]\n", "[model]\n" + "".join(f"k{i} = 1\n" for i in range(200000)))
    open(many, "w").write(text)
    rc, out, err = strait("validate", "--config", many)
    check(rc == 2 and err.count("\n") <= 22 and "199980 more errors" in err,
          f"200000 unknown keys: {err.count(chr(10))} lines, the rest counted")
    # A NUL in a key cut the line where it was printed.
    nul = os.path.join(TMP, "nul.toml")
    open(nul, "w").write('[run]\n"na\\u0000me" = 1\n')
    rc, out, err = strait("validate", "--config", nul)
    check(rc == 2 and "run.na\\x00me: unknown key; expected one of" in err, f"NUL in a key: {err.strip()}")
    # The heads message for [0.5, 0.5000009] read "(1, 1 heads)".
    rc, out, err = strait("validate", "--config", config("h"), "--set", "datacenter.1.split=[0.5, 0.5000009]",
                          "--set", "model.heads=2")
    check(rc == 2 and "1.0000018" in err, f"the heads message shows the fraction ({err.strip()[:200]})")
    # Steps in the log are the trace's (0-based); the trace's share of wall time is not > 100%.
    rc, out, err = run(3, "train", "--config", config("log", steps=10))
    logged = [int(l.split()[1].split("/")[0]) for l in out.splitlines() if l.startswith("step ")]
    with h5py.File(os.path.join(TMP, "log.h5"), "r", locking=False) as f:
        traced = list(f["steps"]["step"])
    check(rc == 0 and logged and set(logged) <= set(traced) and logged[-1] == 9,
          f"log steps {logged} are trace steps (0..9)")
    check("% of wall time" not in out or all(
        float(w.rstrip("%")) <= 100 for w in out.split() if w.endswith("%")), "no share above 100%")


def case_report_fifo():
    fifo = os.path.join(TMP, "fifo")
    os.mkfifo(fifo)
    t0 = time.time()
    rc, out, err = strait("report", fifo, timeout=20)
    check(rc == 2 and "not a regular file" in err and time.time() - t0 < 10,
          f"report on a FIFO exits 2 at once ({err.strip()[:120]})")


# ---- defect 1: a refused second run destroyed a running run's trace -----------------------------
def case_concurrent_force():
    cfg = config("busy", steps=100000)
    first = start(3, "train", "--config", cfg)
    trace = os.path.join(TMP, "busy.h5")
    check(wait_for_steps(trace, 5, first), "the first run is going")
    rc, out, err = run(3, "train", "--config", cfg, "--force")
    check(rc == 2 and "in use by another live run" in err, f"the second run is refused ({err.strip()[:200]})")
    n = steps_in(trace)
    check(n >= 5, f"the first run's trace is still readable ({n} steps)")
    time.sleep(1.0)
    check(steps_in(trace) > n, "and still growing")
    first.send_signal(signal.SIGTERM)
    out, err = first.communicate(timeout=120)
    check(first.returncode == 3 and meta(trace)["status"] == "interrupted",
          f"the first run ends as it should ({first.returncode}, {meta(trace)['status']})")
    # Free again once its holder is gone, even after kill -9 (the kernel drops the lock).
    again = start(3, "train", "--config", cfg, "--force")
    check(wait_for_steps(trace, 2, again), "a third run takes the path once it is free")
    kill_job(again)
    rc, out, err = run(3, "train", "--config", config("busy", steps=3), "--force")
    check(rc == 0, f"after a kill -9 the path is free ({err.strip()[-200:]})")


# ---- a run whose trace became unwritable fails loudly ---------------------------------------
def case_trace_replaced():
    cfg = config("gone", steps=100000, every=0)
    p = start(3, "train", "--config", cfg)
    trace = os.path.join(TMP, "gone.h5")
    check(wait_for_steps(trace, 3, p), "run started")
    os.rename(trace, trace + ".moved")  # another process replaces it
    shutil.copy(trace + ".moved", trace)
    out, err = p.communicate(timeout=120)
    check(p.returncode == 4, f"the run stops with exit status 4 ({p.returncode})")
    check("removed or replaced" in err and "run failed" in err, f"and says why ({err.strip()[-300:]})")
    ck = os.path.join(TMP, "gone.ckpt.h5")
    with h5py.File(ck, "r") as f:
        check(int(f.attrs["next_step"]) > 3, "its state is in the final checkpoint (nothing lost)")


# ---- defects 3 and 13: full and read-only disks ---------------------------------------------
def case_disk():
    if not can_mount():
        skip("cannot mount a tmpfs here (needs root or CAP_SYS_ADMIN)")
    full = small_fs("full", 256)
    subprocess.run(["dd", "if=/dev/zero", f"of={full}/fill", "bs=1k", "count=256"], capture_output=True)
    rc, out, err = run(3, "train", "--config", config("f", out=full))
    check(rc == 2 and "free" in err, f"full at start: exit 2, saying so ({err.strip()[:200]})")
    check("infinite loop" not in err, "no HDF5 'infinite loop closing library'")
    check(sorted(os.listdir(full)) == ["fill"], f"nothing created ({os.listdir(full)})")
    ro = small_fs("ro", 1024, readonly=True)
    rc, out, err = run(3, "train", "--config", config("r", out=ro))
    check(rc == 2 and "read-only file system" in err, f"read-only at start: exit 2 ({err.strip()[:200]})")
    vrc, _, verr = strait("validate", "--config", config("r", out=ro))
    check(vrc == 2 and "read-only" in verr, "validate says so too")
    # Late: the checkpoint's disk fills up during the run. Trace elsewhere, checkpoint on a
    # small file system; a first checkpoint fits, the next one does not.
    small = small_fs("late", 4096)
    cfg = config("late", steps=100000)
    text = open(cfg).read().replace("[checkpoint]\nevery = 0\n", f"[checkpoint]\nevery = 4\npath = \"{small}/late.ckpt.h5\"\n")
    open(cfg, "w").write(text)
    p = start(3, "train", "--config", cfg)
    ck = os.path.join(small, "late.ckpt.h5")
    t0 = time.time()
    while not os.path.exists(ck) and time.time() - t0 < 120 and p.poll() is None:
        time.sleep(0.1)
    check(os.path.exists(ck), "the first checkpoint is written")
    with h5py.File(ck, "r") as f:
        first = int(f.attrs["next_step"])
    subprocess.run(["dd", "if=/dev/zero", f"of={small}/fill", "bs=4k"], capture_output=True)
    out, err = p.communicate(timeout=180)
    check(p.returncode == 4, f"the run fails with exit status 4 ({p.returncode})")
    check("No space left on device" in err, f"naming the cause ({err.strip()[-300:]})")
    m = meta(os.path.join(TMP, "late.h5"))
    check(m["status"] == "failed" and "No space left on device" in m["reason"],
          f"the trace is closed as failed, with the reason ({m['status']}: {m['reason'][:160]})")
    with h5py.File(ck, "r") as f:
        kept = int(f.attrs["next_step"])
    check(kept >= first, f"the last checkpoint that fitted is intact (step {kept})")
    check(not [x for x in os.listdir(small) if ".tmp" in x], "no temporary file left behind")


# ---- defect 5: resume continues the run's own trace -----------------------------------------
def case_resume_appends():
    cfg = config("res", steps=100000, every=5)
    p = start(3, "train", "--config", cfg)
    trace = os.path.join(TMP, "res.h5")
    check(wait_for_steps(trace, 12, p), "run started")
    kill_job(p)  # killed: the trace runs ahead of the checkpoint
    ck = os.path.join(TMP, "res.ckpt.h5")
    with h5py.File(ck, "r") as f:
        nxt = int(f.attrs["next_step"])
    before = steps_in(trace)
    check(before >= nxt, f"killed with {before} traced steps, checkpoint at step {nxt}")
    final = nxt + 7
    text = open(cfg).read().replace("steps = 100000", f"steps = {final}")
    open(cfg, "w").write(text)
    rc, out, err = run(3, "train", "--config", cfg, "--resume", ck)
    check(rc == 0, f"--resume into the same trace needs no --force ({err.strip()[:300]})")
    with h5py.File(trace, "r", locking=False) as f:
        steps = f["steps"][()]
        segs = [s.decode() if isinstance(s, bytes) else s for s in f["meta"].attrs["segments"]]
        status = f["meta"].attrs["status"]
        offsets = f["offsets"].shape[0]
    check(list(steps["step"]) == list(range(final)), f"one history: steps 0..{final - 1}, each once")
    check(offsets == final, "an offsets row per step")
    check(len(segs) == 2 and '"killed"' in segs[0] and f'"first_step": {nxt}' in segs[1],
          f"two segments, the second from step {nxt} ({segs})")
    check((status.decode() if isinstance(status, bytes) else status) == "complete", "complete")
    rc, out, err = run(3, "train", "--config", config("ref", steps=final))
    with h5py.File(os.path.join(TMP, "ref.h5"), "r", locking=False) as f:
        ref = f["steps"]["loss"][()]
    check(np.array_equal(ref, steps["loss"]), "the losses equal an uninterrupted run's, bit for bit")
    rc, out, err = strait("report", trace)
    check(rc == 0 and "segments     2" in out, "strait report shows the segments")


# ---- defect 6: tampered checkpoints, and a config whose split differs ------------------------
def case_tampered_checkpoint():
    cfg = config("tc", steps=6)
    rc, out, err = run(3, "train", "--config", cfg)
    ck = os.path.join(TMP, "tc.ckpt.h5")
    check(rc == 0 and os.path.exists(ck), "a run leaves its checkpoint")
    longer = config("tc2", steps=10)

    def tampered(kind):
        dst = os.path.join(TMP, f"t_{kind}.h5")
        shutil.copy(ck, dst)
        with h5py.File(dst, "r+") as f:
            if kind == "flip":
                d = f["expert0/params/wte"]
                a = d[...]
                a.view(np.uint32)[3, :] ^= 0x40000000
                d[...] = a
            elif kind == "int32":
                a = f["expert0/params/wte"][...]
                del f["expert0/params/wte"]
                f["expert0/params/wte"] = a.astype(np.int32)
            elif kind == "nan":
                d = f["expert0/params/wte"]
                a = d[...]
                a[0, 0] = np.nan
                d[...] = a
                import zlib
                d.attrs["crc32"] = zlib.crc32(a.astype("<f4").tobytes())
            elif kind == "format":
                f.attrs["format"] = "other"
            elif kind in ("split", "shares"):
                name = "splits/dc1" if kind == "split" else "batch_shares"
                v = np.array([0.9, 0.1] if kind == "split" else [0.0, 1.0])
                f[name][...] = v
                import zlib
                f[name].attrs["crc32"] = zlib.crc32(v.astype("<f8").tobytes())
        return dst
    for kind, needle in (("flip", "checksum mismatch"), ("int32", "not float32"), ("nan", "not finite"),
                         ("format", "not a strait checkpoint"), ("split", "invalid split"),
                         ("shares", "invalid batch shares")):
        rc, out, err = run(3, "train", "--config", longer, "--resume", tampered(kind), "--out",
                           os.path.join(TMP, f"r_{kind}.h5"))
        check(rc == 2 and needle in err, f"{kind}: refused with '{needle}' ({err.strip()[:200]})")
    # The config's split differs from the checkpoint's: with the static balancer the config's
    # applies from the first resumed step (a re-split), and the run says so.
    text = open(longer).read().replace('name = "b"\nranks = 2', 'name = "b"\nranks = 2\nsplit = [0.75, 0.25]')
    open(longer, "w").write(text)
    rc, out, err = run(3, "train", "--config", longer, "--resume", ck, "--out", os.path.join(TMP, "rs.h5"))
    check(rc == 0 and "the config's apply from step 6" in out, f"static: the config's split applies ({out[-300:]})")
    with h5py.File(os.path.join(TMP, "rs.h5"), "r", locking=False) as f:
        r = f["ranks"][()]
    check(sorted(set(np.round(r[r["rank"] == 1]["split"], 3))) == [0.75], "and the trace shows it")
    rc, out, err = run(3, "train", "--config", longer, "--resume", ck, "--out", os.path.join(TMP, "rs2.h5"),
                       "--set", "control.balancer=scheduled")
    check(rc == 0 and "the checkpoint's hold" in out, f"scheduled: the checkpoint's split holds ({out[-300:]})")


# ---- defect 7: a non-finite loss or update stops the run ------------------------------------
def case_nonfinite():
    trace = os.path.join(TMP, "nf.h5")
    ck = os.path.join(TMP, "nf.ckpt.h5")
    env = dict(os.environ, STRAIT_FAULT="nan-loss:6:2")  # rank 2 is in datacenter b
    t0 = time.time()
    rc, out, err = run(3, "train", "--config", config("nf", steps=40, every=4), env=env)
    check(rc == 4, f"exit status 4 ({rc}) in {time.time() - t0:.1f} s")
    check("non-finite loss" in err and "step 6" in err and "expert 0" in err and "datacenter b" in err,
          f"naming step, expert and datacenter ({err.strip()[-300:]})")
    m = meta(trace)
    check(m["status"] == "failed" and "step 6" in m["reason"], f"trace: failed, {m['reason'][:120]}")
    with h5py.File(ck, "r") as f:
        kept = int(f.attrs["next_step"])
        finite = all(np.all(np.isfinite(f[f"expert0/{g}/{n}"][...])) for g in ("params", "adam_m", "adam_v")
                     for n in f["expert0/params"].attrs["order"])
    check(kept == 4 and finite, f"the last good checkpoint (step 4) is kept, finite ({kept})")
    check(steps_in(trace) <= 9, "every rank stopped within control.lag steps")
    # A non-finite update (the loss of that step is finite) is caught at the next step's loss.
    env = dict(os.environ, STRAIT_FAULT="nan-grad:9:0")
    rc, out, err = run(3, "train", "--config", config("ng", steps=40, every=4), env=env)
    check(rc == 4 and "non-finite loss" in err and "step 10" in err, f"nan update: exit 4 at step 10 ({err.strip()[-200:]})")
    with h5py.File(os.path.join(TMP, "ng.ckpt.h5"), "r") as f:
        check(int(f.attrs["next_step"]) == 8, "the checkpoint before it is kept")


# ---- defect 11: signals to mpirun and to the process group ----------------------------------
def case_signals():
    for how in ("mpirun", "pgrp"):
        name = "sig" + how
        cfg = config(name, steps=100000)
        p = start(3, "train", "--config", cfg)
        check(wait_for_steps(os.path.join(TMP, name + ".h5"), 3, p), f"{how}: run started")
        if how == "mpirun":  # the mpirun process itself (scripts/mpirun-local's child)
            kids = open(f"/proc/{p.pid}/task/{p.pid}/children").read().split()
            mpirun = [int(k) for k in kids if "mpirun" in open(f"/proc/{k}/cmdline").read()]
            check(len(mpirun) == 1, "found mpirun")
            os.kill(mpirun[0], signal.SIGTERM)
        else:  # Ctrl-C: SIGINT to the whole foreground process group
            os.killpg(p.pid, signal.SIGINT)
        out, err = p.communicate(timeout=120)
        check(p.returncode == 3, f"{how}: exit status 3 ({p.returncode}; {err.strip()[-160:]})")
        check(meta(os.path.join(TMP, name + ".h5"))["status"] == "interrupted", f"{how}: trace interrupted")


# ---- BLAS threads: each rank sets its own ---------------------------------------------------
def case_blas_threads():
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENBLAS")}
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    cmd = ["mpirun", "--oversubscribe", "-np", "3", STRAIT, "train", "--config", config("bl", steps=2)]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    check(p.returncode == 0 and "1 OpenBLAS thread per rank" in p.stdout,
          f"plain mpirun: 1 OpenBLAS thread per rank by default ({p.stdout[:400]})")
    one = os.path.join(TMP, "one.toml")
    open(one, "w").write(TINY.format(name="one", out=TMP, steps=2, every=0)
                         .replace('[[datacenter]]\nname = "b"\nranks = 2\n', "")
                         .replace("global_batch = 6", "global_batch = 2")
                         .replace("[run]\n", "[run]\nblas_threads = 0\n"))
    # 0: the cores the rank may use, shared by the ranks of its node; a launcher's binding counts.
    for bind, n in (("none", len(os.sched_getaffinity(0))), ("core", 1)):
        p = subprocess.run(["mpirun", "--oversubscribe", "--bind-to", bind, "-np", "1", STRAIT, "train",
                            "--config", one, "--force"], capture_output=True, text=True, env=env, timeout=120)
        want = f"{n} OpenBLAS thread{'s' if n > 1 else ''} per rank"
        check(p.returncode == 0 and want in p.stdout,
              f"blas_threads = 0, --bind-to {bind}: {want} ({p.stderr[-300:]})")


# ---- the watchdog: a stopped rank, SIGTERM while a peer is stuck, rank 0 stopped --------------
def stopped_job(name, victim, run_keys, every=4):
    cfg = config(name, steps=100000, every=every)
    text = open(cfg).read().replace("[run]\n", "[run]\n" + run_keys)
    open(cfg, "w").write(text)
    p = start(3, "train", "--config", cfg)
    trace = os.path.join(TMP, name + ".h5")
    check(wait_for_steps(trace, 9, p), f"{name}: run started")
    pid = rank_pids(p)[victim]
    os.kill(pid, signal.SIGSTOP)
    return p, trace, pid, time.time()


def checkpoint_intact(name):
    with h5py.File(os.path.join(TMP, name + ".ckpt.h5"), "r") as f:
        nxt = int(f.attrs["next_step"])
        ok = all(np.all(np.isfinite(f[f"expert0/params/{n}"][...])) for n in f["expert0/params"].attrs["order"])
    return nxt, ok


def case_watchdog_sigstop():
    p, trace, pid, t0 = stopped_job("wd", 2, "stall_timeout_s = 4\n")
    out, err = p.communicate(timeout=120)
    took = time.time() - t0
    check(p.returncode == 5, f"the job is ended with exit status 5 ({p.returncode})")
    # The rank's last move came a little before SIGSTOP: the timeout counts from that move.
    import re
    idle = re.search(r"no progress for ([0-9.]+) s", err)
    check(idle and float(idle.group(1)) >= 4.0 and 2 <= took <= 30,
          f"after the stall timeout, not before ({took:.1f} s after SIGSTOP; "
          f"{idle.group(0) if idle else 'no figure'})")
    check("watchdog" in err and "rank 2 (datacenter b) sent nothing" in err and "step" in err,
          f"naming the stopped rank and where it was ({err.strip()[:400]})")
    m = meta(trace)
    check(m["status"] == "stalled" and "rank 2" in m["reason"], f"trace closed as stalled ({m['reason'][:200]})")
    nxt, ok = checkpoint_intact("wd")
    check(nxt >= 4 and ok, f"the last checkpoint (step {nxt}) is intact")
    check(not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split()[2] == "Z",
          "the stopped rank is gone too")


def case_watchdog_sigterm():
    # A long stall timeout: SIGTERM must not wait for it while a peer is stuck.
    p, trace, pid, t0 = stopped_job("wt", 1, "stop_grace_s = 3\n")
    time.sleep(0.5)
    p.send_signal(signal.SIGTERM)  # the launcher passes it to every rank; rank 1 is stopped
    out, err = p.communicate(timeout=120)
    took = time.time() - t0
    check(p.returncode == 3, f"exit status 3 ({p.returncode})")
    check(took <= 3 + 15, f"within run.stop_grace_s (3 s) and a few seconds ({took:.1f} s)")
    check("stopped by signal" in err and "rank 1" in err, f"naming the stuck rank ({err.strip()[:300]})")
    m = meta(trace)
    check(m["status"] == "interrupted" and "rank 1" in m["reason"], f"trace: interrupted ({m['reason'][:200]})")
    nxt, ok = checkpoint_intact("wt")
    check(ok, f"the last checkpoint (step {nxt}) is intact")


def case_watchdog_rank0():
    p, trace, pid, t0 = stopped_job("w0", 0, "stall_timeout_s = 4\n")
    out, err = p.communicate(timeout=120)
    took = time.time() - t0
    check(p.returncode == 5, f"exit status 5 ({p.returncode})")
    check("rank 0 sent nothing" in err, f"another rank names rank 0 ({err.strip()[:300]})")
    # The abort sends SIGCONT before SIGTERM and SIGKILL: rank 0 may wake long enough to close the
    # trace itself, as stalled and naming itself; otherwise it stays 'running', as after a kill.
    m = meta(trace)
    check(m["status"] == "running" or (m["status"] == "stalled" and "rank 0" in m["reason"]),
          f"the trace stays 'running', or rank 0 closed it naming itself ({m['status']}: {m['reason'][:200]})")
    nxt, ok = checkpoint_intact("w0")
    check(ok, f"the last checkpoint (step {nxt}) is intact")


# ---- a CPU run loads no CUDA library ----------------------------------------------------------
def case_cpu_no_cuda():
    import re
    cuda = re.compile(r"libcuda|libcudart|libcublas|libnccl|libstrait_cuda")
    ldd = subprocess.run(["ldd", STRAIT], capture_output=True, text=True).stdout
    check(not cuda.search(ldd), "the strait binary links no CUDA library")
    p = start(3, "train", "--config", config("cpu", steps=100000))
    check(wait_for_steps(os.path.join(TMP, "cpu.h5"), 3, p), "a CPU run is going")
    pids = rank_pids(p)
    loaded = {r: sorted(set(cuda.findall(open(f"/proc/{pid}/maps").read()))) for r, pid in pids.items()}
    kill_job(p)
    check(len(pids) == 3 and not any(loaded.values()), f"no rank mapped a CUDA library ({loaded})")
    env = dict(os.environ, STRAIT_CUDA_MODULE=os.path.join(TMP, "missing", "libstrait_cuda.so"))
    rc, out, err = run(3, "train", "--config", config("gpu"), "--set", "run.backend=cuda", env=env)
    check(rc == 2 and ("CUDA module" in err or "no CUDA backend" in err),
          f"backend = cuda without the module: exit 2, saying why ({err.strip()[:200]})")


try:
    globals()["case_" + args.case]()
finally:
    for j in JOBS:  # nothing of ours outlives the case
        try:
            os.killpg(j.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    for m in MOUNTS:
        subprocess.run(["umount", "-l", m])
    shutil.rmtree(TMP, ignore_errors=True)
print("1 passed, 0 failed")
