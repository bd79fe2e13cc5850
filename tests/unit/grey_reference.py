#!/usr/bin/python3
"""grey_reference.py — the expected values of tests/unit/test_grey.cpp, computed independently
of the C++ code: mpmath at 40 significant digits, straight from the formulas of
../shared/brief/system.md and Liu & Lin, Grey Systems (2010): AGO, background values, the
normal equations of the least squares solved exactly, the textbook time response
x̂1(k+1) = (x0(1) − b/a)·e^{−ak} + b/a differenced (not the C++'s expm1 form), C and P over
k = 1..n; Grey-Markov with equal-width states and Laplace-smoothed transitions; the least
class-ratio shift by bisection (not the C++'s closed form). Printed to 17 digits.
Run: /usr/bin/python3 tests/unit/grey_reference.py, and paste the constants into test_grey.cpp."""
from mpmath import mp, mpf, exp, sqrt, matrix, lu_solve

mp.dps = 40


def gm11(x):
    x = [mpf(v) for v in x]
    n = len(x)
    x1 = [sum(x[: k + 1]) for k in range(n)]
    z = [(x1[k] + x1[k - 1]) / 2 for k in range(1, n)]
    # normal equations of x0(k) = −a·z(k) + b, k = 2..n
    szz = sum(v * v for v in z); sz = sum(z); m = n - 1
    szy = sum(z[i] * x[i + 1] for i in range(m)); sy = sum(x[1:])
    a, b = lu_solve(matrix([[szz, -sz], [-sz, m]]), matrix([-szy, sy]))
    if abs(a) < mpf(10) ** -30:  # a = 0 up to rounding at 40 digits: x̂1(k+1) = x0(1) + b·k
        a = mpf(0)
        xhat1 = lambda k: x[0] + b * k
    else:
        xhat1 = lambda k: (x[0] - b / a) * exp(-a * k) + b / a  # k = 0, 1, ...
    fitted = [x[0]] + [xhat1(k) - xhat1(k - 1) for k in range(1, n)]
    fore = [xhat1(n - 1 + h) - xhat1(n - 2 + h) for h in (1, 2, 3)]
    eps = [x[k] - fitted[k] for k in range(n)]
    mean = lambda v: sum(v) / len(v)
    sd = lambda v: sqrt(mean([(e - mean(v)) ** 2 for e in v]))
    s1, s2 = sd(x), sd(eps)
    em = mean(eps)
    p = mpf(sum(1 for e in eps if abs(e - em) < mpf("0.6745") * s1)) / n
    return a, b, fitted, fore, s2 / s1, p


def markov(x, fitted, s, h):
    q = [(mpf(v) - f) / mpf(v) for v, f in zip(x, fitted)]
    lo, hi = min(q), max(q)
    w = (hi - lo) / s
    st = [min(s - 1, int((v - lo) / w)) for v in q]
    T = [[mpf(1)] * s for _ in range(s)]
    for i, j in zip(st[:-1], st[1:]):
        T[i][j] += 1
    T = [[v / sum(row) for v in row] for row in T]
    pi = [mpf(0)] * s
    pi[st[-1]] = mpf(1)
    for _ in range(h):
        pi = [sum(pi[i] * T[i][j] for i in range(s)) for j in range(s)]
    mid = [lo + w * (j + mpf("0.5")) for j in range(s)]
    return q, st, T, sum(p * m for p, m in zip(pi, mid))


def least_shift(x):
    n = len(x)
    lo, hi = exp(mpf(-2) / (n + 1)), exp(mpf(2) / (n + 1))
    ok = lambda c: all(lo < (x[k - 1] + c) / (x[k] + c) < hi for k in range(1, n))
    a, b = mpf(0), mpf(1)
    while not ok(b):
        b *= 2
    for _ in range(200):
        m = (a + b) / 2
        a, b = (a, m) if ok(m) else (m, b)
    return b


def show(name, v):
    v = v if isinstance(v, (list, tuple)) else [v]
    print(f"  {name} = {{" + ", ".join(mp.nstr(e, 17) for e in v) + "}")


print("The standard worked series of GM(1,1) texts (since Deng)")
LL = [2.874, 3.278, 3.337, 3.390, 3.679]
a, b, fitted, fore, c, p = gm11(LL)
show("a, b", [a, b]); show("fitted", fitted); show("forecast h=1..3", fore); show("C, P", [c, p])
for h in (1, 2):
    q, st, T, e = markov(LL, fitted, 3, h)
    print(f" Markov, 3 states, h={h}: states {st}")
    show("q", q); show("transition", [v for row in T for v in row]); show("E", e)
    show("corrected", fore[h - 1] / (1 - e))

print("A real window: PAI job_1 worker 0, iterations 1-6 (../shared/data/traces)")
PAI = [476, 476, 484, 484, 485, 485]
a, b, fitted, fore, c, p = gm11(PAI)
show("a, b", [a, b]); show("forecast h=1..3", fore); show("C, P", [c, p])
q, st, T, e = markov(PAI, fitted, 3, 1)
print(f" Markov, 3 states, h=1: states {st}")
show("E", e); show("corrected", fore[0] / (1 - e))

print("A window that fails the class-ratio test, shifted by the least c")
SH = [3, 9, 4, 8, 5, 10]
c0 = least_shift([mpf(v) for v in SH])
a, b, fitted, fore, c, p = gm11([mpf(v) + c0 for v in SH])
show("least shift", c0); show("a, b", [a, b]); show("forecast h=1 (unshifted)", fore[0] - c0)
show("C, P", [c, p])

print("a = 0 exactly: x0(2..n) uncorrelated with k and with z(k), for any shift")
Z = [5, 12, 4, 10, 6, 11]
c0 = least_shift([mpf(v) for v in Z])
a, b, fitted, fore, c, p = gm11([mpf(v) + c0 for v in Z])
show("least shift", c0); show("a, b", [a, b]); show("forecast h=1 (unshifted)", fore[0] - c0)
