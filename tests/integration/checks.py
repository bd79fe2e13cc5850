"""checks.py — the one check of the Python tests: a named condition, "ok:" when it holds, and
on the first that does not, "FAILED:" and exit 1 (CTest reports the test failed)."""
import sys


def check(cond, what):
    if not cond:
        print("FAILED:", what)
        sys.exit(1)
    print("ok:", what)
