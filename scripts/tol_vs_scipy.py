#!/usr/bin/env python3
"""Time to solution: `diracvi run --tol` against SciPy (issue #31, "Fastest at
every accuracy").

    cargo build --release -p diracvi-cli
    python3 scripts/tol_vs_scipy.py [--diracvi target/release/diracvi] [--reps 7]
        [--baseline OTHER_DIRACVI]

`--baseline` times a second diracvi binary (e.g. one built from an earlier
commit) with the plain `--tol T` in the same interleaved passes: a
before/after comparison under the same machine load.

Needs numpy and scipy (`pip install numpy scipy`; not CI dependencies).

Both sides integrate the SAME full models with the same elastic impact law
and their errors are measured by the same function against the same
independent references:

* pendulum of [VCI] §4.3 on [0, 5] (m = 1, g = 9.8, l = 2, R = 1.5,
  f = π + cos²θ, q0 = (3π/4, 0), θ̇0 = π/4): SciPy integrates the 2-DOF
  nonholonomic ODE in (θ, φ, θ̇, φ̇) with the multiplier of the constraint
  φ̇ = f(θ) θ̇ eliminated,
      θ̈ (1 + f² sin²θ) = sinθ cosθ φ̇² + (g/l) sinθ − f f' sin²θ θ̇² − 2 f sinθ cosθ θ̇ φ̇,
      φ̈ = f θ̈ + f' θ̇²,
  with the gap R² − l² sin²θ ≥ 0 as a terminal event; the elastic impact
  (energy kept, constraint kept, 1-dimensional velocity space) reverses the
  velocity, (θ̇, φ̇) → −(θ̇, φ̇). diracvi integrates the same Lagrangian,
  constraint and gap (`diracvi run pendulum`). Error = worst of |θ(5) − θ*|
  and the first three impact times' errors against the 30th-order Taylor
  reference of the reduced equation (`NonholonomicPendulumReference`, values
  below, accurate to 1e-13); a run with fewer than three impacts has error ∞.
* particle on [0, 10] (m = 1, g = 9.8, q0 = (0, 2), v0 = (1, 0)) under
  gravity above the floor y ≥ 0, elastic bounce v_y → −v_y: error = mixed
  max norm |Δx| / max(1, |x*|) of the final q, p and all impact times
  against the closed form; a different impact count has error ∞.

Protocol: (1) accuracy map: every solver runs once at every setting of a grid
(SciPy rtol = atol = 10^(−k/2); diracvi --tol = 10^(−k/2)); (2) for each
target T = 1e-3 … 1e-11 and solver, the loosest setting whose error is ≤ T is
selected (tuned after the fact: the most favourable setting for every solver,
SciPy included; not a setting a user could know in advance), and for diracvi
also the plain `--tol T` a user would type (its error may be up to ~10× T);
(3) every selected run is timed `--reps` times, interleaved (one pass over all
selected runs per repetition), and medians with min–max are reported.

diracvi's time is the process's own measurement, pilots included
(`tolerance.pilot_wall_time_s + wall_time_s` of `--summary json`); the whole
process (spawn, parse, JSON) is reported too. SciPy's is `time.perf_counter`
around the whole event loop (Python right-hand sides, as users write them).
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import scipy
from scipy.integrate import solve_ivp

# --- pendulum --------------------------------------------------------------
M_P, G, ELL, R, F0, F1 = 1.0, 9.8, 2.0, 1.5, math.pi, 1.0
THETA0, THETA_DOT0, T_PEND = 0.75 * math.pi, 0.25 * math.pi, 5.0
# `NonholonomicPendulumReference` (30th-order Taylor series with event
# location, crates/models/src/reference/pendulum.rs; the copies are checked
# by crates/models/tests/reference_pendulum.rs).
PENDULUM_IMPACTS = [1.2326015969617883, 2.5485206497568043, 3.8644397025518202]
PENDULUM_THETA_5 = 2.436681453776506


def f_of(theta):
    c = math.cos(theta)
    return F0 + F1 * c * c


def pendulum_rhs(_t, y):
    th, _phi, w, u = y
    s, c = math.sin(th), math.cos(th)
    f = F0 + F1 * c * c
    fp = -2.0 * F1 * c * s
    acc = (s * c * u * u + (G / ELL) * s - f * fp * s * s * w * w - 2.0 * f * s * c * w * u) / (
        1.0 + f * f * s * s
    )
    return [w, u, acc, f * acc + fp * w * w]


def pendulum_gap(_t, y):
    return R * R - ELL * ELL * math.sin(y[0]) ** 2


pendulum_gap.terminal = True
pendulum_gap.direction = -1


def pendulum_scipy(method, tol):
    t, y, impacts = 0.0, [THETA0, 0.0, THETA_DOT0, f_of(THETA0) * THETA_DOT0], []
    while True:
        sol = solve_ivp(pendulum_rhs, (t, T_PEND), y, method=method, rtol=tol, atol=tol,
                        events=pendulum_gap)
        if sol.status == 1 and sol.t_events[0].size:
            t = float(sol.t_events[0][0])
            th, phi, w, u = sol.y_events[0][0]
            impacts.append(t)
            y = [th, phi, -w, -u]
            if t >= T_PEND:
                return impacts, [th, phi], None
        elif sol.status == 0:
            return impacts, list(sol.y[:2, -1]), None
        else:
            return None


def pendulum_error(impacts, q, _p):
    if len(impacts) < len(PENDULUM_IMPACTS):
        return math.inf
    e = abs(q[0] - PENDULUM_THETA_5)
    for a, b in zip(impacts, PENDULUM_IMPACTS):
        e = max(e, abs(a - b))
    return e


# --- particle --------------------------------------------------------------
M_Q, G_Q, T_PART = 1.0, 9.8, 10.0
Q0, V0 = (0.0, 2.0), (1.0, 0.0)


def particle_exact():
    t1 = (V0[1] + math.sqrt(V0[1] ** 2 + 2.0 * G_Q * Q0[1])) / G_Q
    v_hit = G_Q * t1 - V0[1]
    period = 2.0 * v_hit / G_Q
    impacts, k = [], 0
    while t1 + k * period <= T_PART:
        impacts.append(t1 + k * period)
        k += 1
    tau = T_PART - impacts[-1]
    q = [Q0[0] + V0[0] * T_PART, v_hit * tau - 0.5 * G_Q * tau * tau]
    p = [M_Q * V0[0], M_Q * (v_hit - G_Q * tau)]
    return impacts, q, p


PARTICLE_IMPACTS, PARTICLE_Q, PARTICLE_P = particle_exact()


def particle_rhs(_t, y):
    return [y[2], y[3], 0.0, -G_Q]


def particle_gap(_t, y):
    return y[1]


particle_gap.terminal = True
particle_gap.direction = -1


def particle_scipy(method, tol):
    t, y, impacts = 0.0, [Q0[0], Q0[1], V0[0], V0[1]], []
    while True:
        sol = solve_ivp(particle_rhs, (t, T_PART), y, method=method, rtol=tol, atol=tol,
                        events=particle_gap)
        if sol.status == 1 and sol.t_events[0].size:
            t = float(sol.t_events[0][0])
            x, yy, vx, vy = sol.y_events[0][0]
            impacts.append(t)
            y = [x, yy, vx, -vy]
            if t >= T_PART:
                return impacts, [x, yy], [M_Q * vx, -M_Q * vy]
        elif sol.status == 0:
            x, yy, vx, vy = sol.y[:, -1]
            return impacts, [x, yy], [M_Q * vx, M_Q * vy]
        else:
            return None


def mixed(x, ref):
    return abs(x - ref) / max(1.0, abs(ref))


def particle_error(impacts, q, p):
    if len(impacts) != len(PARTICLE_IMPACTS):
        return math.inf
    e = max(mixed(a, b) for a, b in zip(q, PARTICLE_Q))
    e = max(e, max(mixed(a, b) for a, b in zip(p, PARTICLE_P)))
    return max(e, max(mixed(a, b) for a, b in zip(impacts, PARTICLE_IMPACTS)))


MODELS = {
    "pendulum": (pendulum_scipy, pendulum_error),
    "particle": (particle_scipy, particle_error),
}
SCIPY_METHODS = ["DOP853", "RK45", "Radau"]
TARGETS = [10.0 ** -k for k in range(3, 12)]
GRID = [10.0 ** (-k / 2) for k in range(4, 27)]  # 1e-2 … 1e-13
# A SciPy setting slower than this (s) ends its method's grid: finer ones
# are slower still.
SLOW = 30.0


def diracvi_run(binary, model, tol):
    """One `diracvi run MODEL --tol TOL`: (impacts, q, p, internal s, process s)."""
    start = time.perf_counter()
    out = subprocess.run(
        [binary, "run", model, "--tol", repr(tol), "--summary", "json", "-q"],
        capture_output=True, text=True, check=False,
    )
    process = time.perf_counter() - start
    if out.returncode != 0:
        raise RuntimeError(f"diracvi run {model} --tol {tol}: {out.stderr.strip()}")
    s = json.loads(out.stdout)
    internal = s["wall_time_s"] + s["tolerance"]["pilot_wall_time_s"]
    fs = s["final_state"]
    return s["impact_times"], fs["q"], fs["p"], internal, process, s


def scipy_time(model, method, tol):
    run, _ = MODELS[model]
    start = time.perf_counter()
    result = run(method, tol)
    return result, time.perf_counter() - start


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--diracvi", default=os.path.join(here, "..", "target", "release", "diracvi"),
                        help="the release CLI (default: target/release/diracvi)")
    parser.add_argument("--reps", type=int, default=7, help="timed repetitions (interleaved)")
    parser.add_argument("--models", default="pendulum,particle")
    parser.add_argument("--baseline", default=None,
                        help="a second diracvi binary timed with --tol T in the same passes")
    args = parser.parse_args()
    models = args.models.split(",")
    binaries = {"diracvi": args.diracvi, "baseline": args.baseline}
    print(f"# numpy {np.__version__}, scipy {scipy.__version__}, python {sys.version.split()[0]}")
    print(f"# diracvi: {args.diracvi}; baseline: {args.baseline}")
    print(f"# load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")

    # (1) accuracy map
    errors = {}  # (model, solver, setting) -> error
    for model in models:
        _, error = MODELS[model]
        for setting in GRID:
            imp, q, p, *_ = diracvi_run(args.diracvi, model, setting)
            errors[(model, "diracvi", setting)] = error(imp, q, p)
        for method in SCIPY_METHODS:
            for setting in GRID:
                result, seconds = scipy_time(model, method, setting)
                errors[(model, method, setting)] = (
                    math.inf if result is None else error(*result))
                if seconds > SLOW:
                    print(f"# {model} {method}: {seconds:.1f} s at rtol {setting:.1e}; finer not tried")
                    break
        for solver in ["diracvi"] + SCIPY_METHODS:
            row = " ".join(
                f"{errors.get((model, solver, s), math.nan):8.1e}" for s in GRID)
            print(f"# map {model:8} {solver:7} {row}")

    # (2) selection
    def loosest(model, solver, target):
        for setting in GRID:
            if errors.get((model, solver, setting), math.inf) <= target:
                return setting
        return None

    selected = {}  # (model, target, column) -> (solver, setting)
    for model in models:
        for target in TARGETS:
            for solver in ["diracvi"] + SCIPY_METHODS:
                s = loosest(model, solver, target)
                if s is not None:
                    selected[(model, target, solver)] = (solver, s)
            selected[(model, target, "diracvi --tol T")] = ("diracvi", target)
            if (model, "diracvi", target) not in errors:
                imp, q, p, *_ = diracvi_run(args.diracvi, model, target)
                errors[(model, "diracvi", target)] = MODELS[model][1](imp, q, p)
            if args.baseline:
                selected[(model, target, "baseline --tol T")] = ("baseline", target)
                imp, q, p, *_ = diracvi_run(args.baseline, model, target)
                errors[(model, "baseline", target)] = MODELS[model][1](imp, q, p)

    # (3) interleaved timing
    runs = sorted({(m, solver, s) for (m, _, _), (solver, s) in selected.items()})
    internal = {r: [] for r in runs}
    process = {r: [] for r in runs}
    for _ in range(args.reps):
        for r in runs:
            model, solver, setting = r
            if solver in binaries:
                *_, inner, whole, _s = diracvi_run(binaries[solver], model, setting)
                internal[r].append(inner)
                process[r].append(whole)
            else:
                _, seconds = scipy_time(model, solver, setting)
                internal[r].append(seconds)

    def cell(r):
        t = internal[r]
        return statistics.median(t), min(t), max(t)

    def ms(r):
        med, lo, hi = cell(r)
        return f"{med * 1e3:.2f} [{lo * 1e3:.2f}–{hi * 1e3:.2f}]"

    print()
    print(f"Medians of {args.reps} interleaved repetitions [min–max], ms; after each time: the"
          " achieved error @ the setting (--tol or rtol = atol). † = error above the target.")
    print()
    base = ["baseline `--tol T`"] if args.baseline else []
    header = (["model", "target", "diracvi `--tol T`"] + base
              + ["diracvi, loosest --tol ≤ target", "DOP853", "RK45", "Radau",
                 "`--tol T` / fastest SciPy", "loosest / fastest SciPy"]
              + (["baseline / fastest SciPy"] if args.baseline else []))
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for model in models:
        for target in TARGETS:
            cols = []
            plain = (model,) + selected[(model, target, "diracvi --tol T")]
            mark = "†" if errors[plain] > target else ""
            cols.append(f"{ms(plain)}, {errors[plain]:.1e}{mark}")
            if args.baseline:
                old = (model, "baseline", target)
                cols.append(f"{ms(old)}, {errors[old]:.1e}{'†' if errors[old] > target else ''}")
            best_scipy, best_name, tuned = math.inf, "", math.inf
            for solver in ["diracvi"] + SCIPY_METHODS:
                key = (model, target, solver)
                if key not in selected:
                    cols.append("not reached")
                    continue
                r = (model,) + selected[key]
                cols.append(f"{ms(r)}, {errors[r]:.1e} @{r[2]:.0e}")
                med = cell(r)[0]
                if solver == "diracvi":
                    tuned = med
                elif med < best_scipy:
                    best_scipy, best_name = med, solver
            if math.isfinite(best_scipy):
                cols.append(f"{cell(plain)[0] / best_scipy:.2f} ({best_name})")
                cols.append(f"{tuned / best_scipy:.2f}" if math.isfinite(tuned) else "—")
                if args.baseline:
                    cols.append(f"{cell((model, 'baseline', target))[0] / best_scipy:.2f}")
            else:
                cols += ["—", "—"] + (["—"] if args.baseline else [])
            print(f"| {model} | {target:.0e} | " + " | ".join(cols) + " |")
    print()
    print("diracvi process wall time (spawn + pilots + run + JSON), medians, ms: " + ", ".join(
        f"{m} {t:.0e}: {statistics.median(process[(m,) + selected[(m, t, 'diracvi --tol T')]]) * 1e3:.1f}"
        for m in models for t in TARGETS))
    print(f"# load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
