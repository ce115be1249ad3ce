#!/usr/bin/env python3
"""Independent reference values for the population-uniqueness models in src/core/risk/.

Written from the papers' formulas with mpmath (50 digits), without digamma shortcuts or the Rust
code's solvers: the Pitman score equations as explicit sums solved with mpmath.findroot, Zayatz with
exact binomial coefficients, SNB's two moment equations solved with findroot. Run: python3 scripts/risk_reference.py
"""
from mpmath import mp, mpf, binomial, findroot, gamma, log, exp

mp.dps = 50


def freqs(sizes):
    out = {}
    for s in sizes:
        out[s] = out.get(s, 0) + 1
    return out


def pitman(sizes, population, start=(10, 0.5)):
    c = freqs(sizes)
    n = sum(sizes)
    u = len(sizes)

    def score(t, a):
        d_t = sum(1 / (t + i * a) for i in range(1, u)) - sum(1 / (t + i) for i in range(1, n))
        d_a = sum(i / (t + i * a) for i in range(1, u)) - sum(
            cnt * sum(1 / (k - a) for k in range(1, j)) for j, cnt in c.items())
        return [d_t, d_a]

    t, a = findroot(score, [mpf(start[0]), mpf(start[1])], tol=mpf("1e-40"), maxsteps=500)
    uniques = gamma(t + 1) / gamma(t + a) * mpf(population) ** a
    return t, a, uniques


def zayatz(sizes, population):
    c = freqs(sizes)
    n = sum(sizes)
    N = population

    def p(j):
        if j > N:
            return mpf(0)
        return j * binomial(N - j, n - 1) / binomial(N, n)

    c1 = c.get(1, 0)
    chance = c1 * p(1) / sum(cnt * p(j) for j, cnt in c.items())
    return c1 * chance * mpf(N) / n


def shlosser(sizes, q):
    """Haas et al.'s refinement of Shlosser's estimator of the number of population classes."""
    c = freqs(sizes)
    d = len(sizes)
    f1 = c.get(1, 0)
    s1 = sum(i * q ** 2 * (1 - q ** 2) ** (i - 1) * ci for i, ci in c.items())
    s2 = sum((1 - q) ** i * ((1 + q) ** i - 1) * ci for i, ci in c.items())
    s3 = sum((1 - q) ** i * ci for i, ci in c.items())
    s4 = sum(i * q * (1 - q) ** (i - 1) * ci for i, ci in c.items())
    return d + f1 * (s1 / s2) * (s3 / s4) ** 2


def snb(sizes, population, start):
    c = freqs(sizes)
    n = sum(sizes)
    f = mpf(n) / population
    k = shlosser(sizes, f)
    c1, c2 = c.get(1, 0), c.get(2, 0)

    def equations(a, b):
        d = (1 - f) * (1 - b)
        e1 = k * f * (b / (1 - d)) ** a * (1 + a * d / (1 - d))
        e2 = k * f ** 2 / 2 * a * (1 - b) * b ** a * (1 - d) ** (-a - 2) * (2 - (1 - a) * d)
        return [log(e1) - log(c1), log(e2) - log(c2)]

    a, b = findroot(equations, [mpf(start[0]), mpf(start[1])], tol=mpf("1e-40"), maxsteps=500)
    return k, a, b, k * b ** a


if __name__ == "__main__":
    # sample B: 30 uniques, 6 pairs, 2 triples, one class of 4 and one of 6 (n = 58, u = 40)
    b_sizes = [1] * 30 + [2] * 6 + [3] * 2 + [4, 6]
    for N in (1000, 10000):
        t, a, u = pitman(b_sizes, N)
        print("pitman B N=%d: theta" % N, mp.nstr(t, 17), "alpha", mp.nstr(a, 17), "uniques", mp.nstr(u, 17))
    for N in (58, 59, 100, 1000):
        print("zayatz B N=%d:" % N, mp.nstr(zayatz(b_sizes, N), 17))
    for N, start in ((100, (1, 0.5)), (1000, (1, 0.1))):
        k, al, be, un = snb(b_sizes, N, start)
        print("snb B N=%d: K" % N, mp.nstr(k, 17), "alpha", mp.nstr(al, 17), "beta", mp.nstr(be, 17),
              "uniques", mp.nstr(un, 17))
    # sample A: 10 uniques, 5 pairs, 3 triples, 2 classes of 5, one of 10 (n = 49): Pitman's alpha < 0
    a_sizes = [1] * 10 + [2] * 5 + [3] * 3 + [5] * 2 + [10]
    t, a, u = pitman(a_sizes, 1000)
    print("pitman A: theta", mp.nstr(t, 17), "alpha", mp.nstr(a, 17))
