"""tiny.py — the tiny job the end-to-end tests run: 3 ranks (datacenters of 1 and 2), a
25,856-parameter model, Debian's licence texts as the corpus, seed 5. One template for
cli_test.py, reliability_test.py and slurm_test.py, so that they run the same job."""
import os

TINY = """
[run]
name = "{name}"
out_dir = "{out}"
[[datacenter]]
name = "a"
ranks = 1
[[datacenter]]
name = "b"
ranks = 2
[model]
layers = 2
d_model = 32
heads = 4
d_ff = 64
seq_len = 16
[train]
global_batch = 6
steps = {steps}
lr = 3e-3
seed = 5
corpus = "/usr/share/common-licenses"
log_every = 5
[checkpoint]
every = {every}
"""


def write_config(folder, name, steps=20, every=0, extra="", out=None):
    """Writes folder/name.toml (the run's outputs in `out`, else in folder) and returns its path."""
    path = os.path.join(folder, name + ".toml")
    with open(path, "w") as f:
        f.write(TINY.format(name=name, out=out or folder, steps=steps, every=every) + extra)
    return path
