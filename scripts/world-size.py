#!/usr/bin/python3
"""world-size.py CONFIG — print the number of MPI ranks a strait config needs (the sum of
[[datacenter]] ranks). The Makefile uses it to pick `mpirun -np`. Exits 1 with a message on
stderr when the file cannot be read or has no usable datacenters; `strait validate` gives the
full diagnosis."""
import sys
import tomllib


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: world-size.py CONFIG.toml", file=sys.stderr)
        return 1
    try:
        with open(sys.argv[1], "rb") as f:
            cfg = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        print(f"world-size.py: {sys.argv[1]}: {e}", file=sys.stderr)
        return 1
    dcs = cfg.get("datacenter")
    if not isinstance(dcs, list) or not dcs:
        print(f"world-size.py: {sys.argv[1]}: no [[datacenter]] entries", file=sys.stderr)
        return 1
    total = 0
    for i, dc in enumerate(dcs):
        ranks = dc.get("ranks") if isinstance(dc, dict) else None
        if not isinstance(ranks, int) or isinstance(ranks, bool) or ranks < 1:
            print(f"world-size.py: {sys.argv[1]}: datacenter.{i}.ranks must be an integer >= 1",
                  file=sys.stderr)
            return 1
        total += ranks
    print(total)
    return 0


if __name__ == "__main__":
    sys.exit(main())
