#!/usr/bin/env python3
"""One order-2 step of diracvi against the same scheme written in pure Python
(issue #31, "A faster step"), timed side by side in one run.

    cargo build --release -p diracvi-cli
    python3 scripts/step_vs_python.py [--diracvi target/release/diracvi] [--reps 7]

Needs only the Python standard library.

The problem: the nonholonomic pendulum of [VCI] §4.3 (m = 1, g = 9.8, l = 2,
f(θ) = π + cos²θ, q0 = (3π/4, 0), θ̇0 = π/4, φ̇0 = f(θ0) θ̇0) with its wall
moved out of reach (`--set r=10`: no impact, so both sides time the smooth
step), h = 1e-3, N = 20 000 steps. The scheme: the (+) discrete
Lagrange–Dirac step with the midpoint discrete Lagrangian and the midpoint
discrete constraint (`--discretization midpoint --constraint midpoint`),

    p_k + D1 L_d(q_k, q_k + d) − A(q_k)ᵀ μ = 0,   A(q_k + d/2) d = 0,
    p_{k+1} = D2 L_d(q_k, q_k + d),

solved for the increment d and μ by Newton's method as diracvi does it: the
increment extrapolated from the last two as the first guess, the exact
Jacobian (here by hand), a 3 × 3 LU with partial pivoting, convergence at
‖r‖∞ ≤ 1e-12 · max(1, |p_k|, |D1 L_d|), then one last correction with the
factors at hand. The Python scheme's final state is checked against
diracvi's (same equations, same Newton: they agree to round-off).

diracvi's time is its own measurement of the run (`wall_time_s` of
`--summary json`: every step with its impact check, discrete energy and
constraint residual), the Python scheme's is `time.perf_counter` around its
loop. Both exclude start-up. Repetitions are interleaved; medians with
min–max.
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

M, G, L = 1.0, 9.8, 2.0
ML2 = M * L * L
H = 1e-3
STEPS = 20_000


def f(th):
    c = math.cos(th)
    return math.pi + c * c


def df(th):
    return -2.0 * math.cos(th) * math.sin(th)


def solve3(a, b):
    """Solve the 3 × 3 system a x = b (rows of a) by LU with partial pivoting;
    returns the factors' solve as a closure (for the last correction)."""
    lu = [row[:] for row in a]
    piv = [0, 1, 2]
    for k in range(3):
        p = max(range(k, 3), key=lambda i: abs(lu[i][k]))
        if p != k:
            lu[k], lu[p] = lu[p], lu[k]
            piv[k], piv[p] = piv[p], piv[k]
        for i in range(k + 1, 3):
            lu[i][k] /= lu[k][k]
            for j in range(k + 1, 3):
                lu[i][j] -= lu[i][k] * lu[k][j]

    def solve(rhs):
        x = [rhs[piv[0]], rhs[piv[1]], rhs[piv[2]]]
        for i in range(3):
            for j in range(i):
                x[i] -= lu[i][j] * x[j]
        for i in (2, 1, 0):
            for j in range(i + 1, 3):
                x[i] -= lu[i][j] * x[j]
            x[i] /= lu[i][i]
        return x

    return solve, solve(b)


def residual(a, pa, d, mu, with_jacobian):
    """The step equations at (d, μ), their scale, D2 L_d, and optionally the
    Jacobian with respect to (d, μ)."""
    th = a[0] + 0.5 * d[0]
    s, c = math.sin(th), math.cos(th)
    vt, vp = d[0] / H, d[1] / H
    # L = ½ ml² (θ̇² + sin²θ φ̇²) − mgl cos θ at the midpoint
    l_th = ML2 * s * c * vp * vp + M * G * L * s
    l_vt, l_vp = ML2 * vt, ML2 * s * s * vp
    d1 = (0.5 * H * l_th - l_vt, -l_vp)
    d2 = (0.5 * H * l_th + l_vt, l_vp)
    fa = f(a[0])
    fm = f(th)
    r = [pa[0] + d1[0] - fa * mu, pa[1] + d1[1] + mu, fm * d[0] - d[1]]
    scale = max(1.0, abs(pa[0]), abs(pa[1]), abs(d1[0]), abs(d1[1]))
    if not with_jacobian:
        return r, scale, d2, None
    l_th_th = ML2 * (c * c - s * s) * vp * vp + M * G * L * c
    jac = [
        [0.25 * H * l_th_th - ML2 / H, ML2 * s * c * vp, -fa],
        [-ML2 * s * c * vp, -ML2 * s * s / H, 1.0],
        [0.5 * df(th) * d[0] + fm, -1.0, 0.0],
    ]
    return r, scale, d2, jac


def run_python(steps):
    """The scheme over `steps` steps from the paper's initial data: the
    final (q, p) and the seconds the loop took."""
    th0 = 0.75 * math.pi
    vt0 = 0.25 * math.pi
    vp0 = f(th0) * vt0
    q = [th0, 0.0]
    p = [ML2 * vt0, ML2 * math.sin(th0) ** 2 * vp0]
    last = previous = None
    mu = 0.0
    start = time.perf_counter()
    for _ in range(steps):
        if last is not None and previous is not None:
            d = [2.0 * last[0] - previous[0], 2.0 * last[1] - previous[1]]
        elif last is not None:
            d = list(last)
        else:
            d = [0.0, 0.0]
        # the Jacobian at the guess is factored first (as diracvi does, to
        # tell a regular step from a degenerate one)
        r, scale, d2, jac = residual(q, p, d, mu, True)
        solve, _ = solve3(jac, r)
        fresh = True  # the factors are of the Jacobian at the current iterate
        kept = False  # older factors in use (Newton's quadratic regime)
        exact = False  # the last step used the Jacobian at its iterate
        previous_res = math.inf
        for _ in range(41):
            largest = max(abs(x) for x in r)
            res = largest / scale
            if largest <= 1e-12 * scale:
                # the last correction with the factors at hand
                dx = solve(r)
                d = [d[0] - dx[0], d[1] - dx[1]]
                mu -= dx[2]
                d2 = residual(q, p, d, mu, False)[2]
                break
            # as diracvi's Newton (newton::REUSE_CONTRACTION): a full step
            # that reduced the residual a thousandfold hands its factors to
            # the next steps, used while they reduce it tenfold
            if kept and res > 0.1 * previous_res:
                kept = False
            if exact and not fresh and not kept and res <= 1e-3 * previous_res:
                kept = True
            if not fresh and not kept:
                r, scale, d2, jac = residual(q, p, d, mu, True)
                solve, _ = solve3(jac, r)
                fresh = True
            exact = not kept
            previous_res = res
            dx = solve(r)
            d = [d[0] - dx[0], d[1] - dx[1]]
            mu -= dx[2]
            fresh = False
            r, scale, d2, _ = residual(q, p, d, mu, False)
        else:
            raise RuntimeError("Newton did not converge")
        previous, last = last, d
        q = [q[0] + d[0], q[1] + d[1]]
        p = [d2[0], d2[1]]
    return q, p, time.perf_counter() - start


def run_diracvi(binary, steps):
    """diracvi's run of the same scheme: final (q, p) and `wall_time_s`."""
    out = subprocess.run(
        [binary, "run", "pendulum", "--discretization", "midpoint", "--constraint",
         "midpoint", "--set", "r=10", "--h", repr(H), "--steps", str(steps),
         "--summary", "json"],
        check=True, capture_output=True, text=True).stdout
    s = json.loads(out)
    assert s["impacts"] == 0, "the wall is out of reach"
    return s["final_state"]["q"], s["final_state"]["p"], s["wall_time_s"]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--diracvi", default=os.path.join(here, "..", "target", "release", "diracvi"))
    parser.add_argument("--reps", type=int, default=7, help="timed repetitions (interleaved)")
    args = parser.parse_args()
    print(f"# python {sys.version.split()[0]}, load average at start: "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")

    # the same method: final states agree to round-off
    qp, pp, _ = run_python(STEPS)
    qd, pd, _ = run_diracvi(args.diracvi, STEPS)
    gap = max(abs(a - b) / max(1.0, abs(b)) for a, b in zip(qp + pp, qd + pd))
    print(f"# final states after {STEPS} steps: Python {qp + pp}, diracvi {qd + pd}; "
          f"largest relative difference {gap:.1e}")
    if gap > 1e-9:
        sys.exit(f"the two schemes differ by {gap:.1e}: not the same method")

    py, rs = [], []
    for _ in range(args.reps):
        py.append(run_python(STEPS)[2] / STEPS)
        rs.append(run_diracvi(args.diracvi, STEPS)[2] / STEPS)
    med_py, med_rs = statistics.median(py), statistics.median(rs)
    print(f"pure Python: {med_py * 1e6:.2f} µs/step [{min(py) * 1e6:.2f}–{max(py) * 1e6:.2f}]")
    print(f"diracvi:     {med_rs * 1e6:.3f} µs/step [{min(rs) * 1e6:.3f}–{max(rs) * 1e6:.3f}]")
    print(f"ratio (medians): {med_py / med_rs:.0f}x "
          f"(range {min(py) / max(rs):.0f}–{max(py) / min(rs):.0f}x)")
    print(f"# load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
