#!/usr/bin/env python3
"""Work-precision study: error against time for diracvi's orders 2, 4, 6 and
`--tol`, and SciPy's DOP853, RK45 and Radau with event location, on the same
full models, timed side by side in one run (issue #31, README
"Work-precision").

    cargo build --release -p diracvi-cli
    python3 scripts/work_precision.py [--diracvi target/release/diracvi] [--reps 7]
        [--csv docs/work-precision.csv] [--svg docs/work-precision.svg] [--quick]

Needs numpy and scipy (`pip install numpy scipy`; not CI dependencies).

Problems (both sides integrate the same model with the same elastic law at
impacts; one error function per problem, against independent references):

* pendulum of [VCI] §4.3 on [0, 5]: SciPy integrates the full 2-DOF
  nonholonomic ODE with the multiplier eliminated (scripts/tol_vs_scipy.py);
  error = worst of |θ(5) − θ*| and the first three impact times' errors
  against the 30th-order Taylor reference;
* ellipse of [VCI] §4.2 on [0, 3] (3 impacts): SciPy integrates the free
  flight (θ, x, y)'' = (0, 0, −g) with the frictionless elastic impact along
  dg; error = worst of the impact-time errors and max |q(3) − q*(3)| against
  the exact flights and root-found impacts of `RigidBodyReference::ellipse()`.
  SciPy's steps are capped at 0.05 (diracvi's grid step): without the cap
  its error control steps over the polynomial flight and misses impacts.

diracvi: order 2 is the midpoint L_d and constraint with the discrete law of
[VCI] Theorem 3.1 (`--discretization midpoint --constraint midpoint`); orders
4 and 6 are `--order 4|6`; each over a ladder of steps h = T/n. `--tol T` for
T = 1e-3 … 1e-11 lets diracvi choose. SciPy: rtol = atol over a ladder.

Protocol: (1) every setting runs once for its error; (2) every point is timed
`--reps` times, interleaved (one pass over all points per repetition), and
the median with min–max is kept. diracvi's time is its own measurement of the
integration (`wall_time_s` of `--summary json`; for `--tol` plus the pilots'
`tolerance.pilot_wall_time_s`), SciPy's is `time.perf_counter` around the
whole event loop (Python right-hand sides, as users write them). Neither
includes process start-up.
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tol_vs_scipy import pendulum_error, pendulum_scipy  # noqa: E402

# --- ellipse (paper defaults) ----------------------------------------------
A, B, M, GE = 1.0, 0.5, 1.0, 9.8
INERTIA = M * (A * A + B * B) / 4.0
ELLIPSE_Q0 = [math.pi / 2.0, 0.0, 3.5]
ELLIPSE_V0 = [-3.0, 2.0, 0.0]
T_ELLIPSE = 3.0
# `RigidBodyReference::ellipse()` (exact flights, root-found impacts).
ELLIPSE_IMPACTS = [0.750550251917011, 1.1525081230017626, 2.3244233169648503]
ELLIPSE_Q3 = [11.190890277030913, 6.0, 3.411303574404841]
ELLIPSE_MAX_STEP = 0.05


def ellipse_rhs(_t, y):
    return [y[3], y[4], y[5], 0.0, 0.0, -GE]


def phi(th):
    s, c = math.sin(th), math.cos(th)
    return math.sqrt(A * A * s * s + B * B * c * c)


def ellipse_gap(_t, y):
    return y[2] - phi(y[0])


ellipse_gap.terminal = True
ellipse_gap.direction = -1


def ellipse_scipy(method, tol):
    t, y, impacts = 0.0, ELLIPSE_Q0 + ELLIPSE_V0, []
    while True:
        sol = solve_ivp(ellipse_rhs, (t, T_ELLIPSE), y, method=method, rtol=tol, atol=tol,
                        events=ellipse_gap, max_step=ELLIPSE_MAX_STEP)
        if sol.status == 1 and sol.t_events[0].size:
            t = float(sol.t_events[0][0])
            ye = sol.y_events[0][0]
            s, c = math.sin(ye[0]), math.cos(ye[0])
            dg = np.array([-(A * A - B * B) * s * c / phi(ye[0]), 0.0, 1.0])
            minv_dg = dg / np.array([INERTIA, M, M])
            v = ye[3:] - 2.0 * dg.dot(ye[3:]) / dg.dot(minv_dg) * minv_dg
            impacts.append(t)
            y = list(ye[:3]) + list(v)
        elif sol.status == 0:
            return impacts, list(sol.y[:3, -1]), None
        else:
            return None


def ellipse_error(impacts, q, _p):
    if len(impacts) != len(ELLIPSE_IMPACTS):
        return math.inf
    e = max(abs(a - b) for a, b in zip(q, ELLIPSE_Q3))
    return max(e, max(abs(a - b) for a, b in zip(impacts, ELLIPSE_IMPACTS)))


PROBLEMS = {
    # name: (T, SciPy run, error, diracvi step ladders by order (n0, n1))
    "pendulum": (5.0, pendulum_scipy, pendulum_error,
                 {2: (100, 4e5), 4: (100, 1e4), 6: (100, 2e3)}),
    "ellipse": (T_ELLIPSE, ellipse_scipy, ellipse_error,
                {2: (30, 3e5), 4: (30, 3e3), 6: (30, 3e3)}),
}
SCIPY_METHODS = ["DOP853", "RK45", "Radau"]
SCIPY_GRID = [10.0 ** (-k / 2) for k in range(6, 27)]  # 1e-3 … 1e-13
TOL_TARGETS = [10.0 ** -k for k in range(3, 12)]
# A setting slower than this (s) ends its solver's ladder: finer ones are
# slower still.
SLOW = 3.0


def ladder(n0, n1, factor):
    out, n = [], float(n0)
    while n <= n1 * 1.0001:
        k = round(n)
        if not out or out[-1] != k:
            out.append(k)
        n *= factor
    return out


def diracvi_args(model, solver, setting):
    t_end = PROBLEMS[model][0]
    if solver == "diracvi --tol":
        return ["run", model, "--tol", repr(setting), "--t-end", repr(t_end)]
    order = int(solver.split()[-1])
    args = ["run", model, "--h", repr(t_end / setting), "--t-end", repr(t_end)]
    if order == 2:
        return args + ["--discretization", "midpoint", "--constraint", "midpoint"]
    return args + ["--order", str(order)]


def run_point(binary, model, solver, setting):
    """One run: ((impacts, q, p) or None, seconds)."""
    if solver.startswith("diracvi"):
        out = subprocess.run([binary] + diracvi_args(model, solver, setting)
                             + ["--summary", "json", "-q"],
                             capture_output=True, text=True, check=False)
        if out.returncode != 0:
            return None, math.nan
        s = json.loads(out.stdout)
        seconds = s["wall_time_s"] + (s["tolerance"]["pilot_wall_time_s"]
                                      if s.get("tolerance") else 0.0)
        fs = s["final_state"]
        return (s["impact_times"], fs["q"], fs["p"]), seconds
    run = PROBLEMS[model][1]
    start = time.perf_counter()
    result = run(solver, setting)
    return result, time.perf_counter() - start


def svg_plot(path, points, models, solvers):
    """Log-log error against median time, one panel per model."""
    colours = ["#1f77b4", "#2ca02c", "#d62728", "#000000", "#9467bd", "#ff7f0e", "#8c564b"]
    w, h, pad = 520, 420, 62
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w * len(models)}" height="{h}" '
           'font-family="sans-serif" font-size="12">',
           f'<rect width="{w * len(models)}" height="{h}" fill="white"/>']
    for i, model in enumerate(models):
        pts = [p for p in points if p["model"] == model and math.isfinite(p["error"])
               and p["error"] > 0 and math.isfinite(p["median"])]
        tx = [math.log10(p["median"]) for p in pts]
        ey = [math.log10(max(p["error"], 1e-16)) for p in pts]
        x0, x1 = math.floor(min(tx)), math.ceil(max(tx))
        y0, y1 = math.floor(min(ey)), math.ceil(max(ey))
        ox = i * w

        def X(v):
            return ox + pad + (v - x0) / (x1 - x0) * (w - pad - 20)

        def Y(v):
            return 30 + (y1 - v) / (y1 - y0) * (h - pad - 30)

        out.append(f'<text x="{ox + w / 2}" y="18" text-anchor="middle" font-size="14">'
                   f'{model}</text>')
        out.append(f'<rect x="{X(x0)}" y="{Y(y1)}" width="{X(x1) - X(x0)}" '
                   f'height="{Y(y0) - Y(y1)}" fill="none" stroke="#444"/>')
        for d in range(x0, x1 + 1):
            out.append(f'<line x1="{X(d)}" y1="{Y(y0)}" x2="{X(d)}" y2="{Y(y1)}" '
                       'stroke="#ddd"/>')
            out.append(f'<text x="{X(d)}" y="{Y(y0) + 16}" text-anchor="middle">'
                       f'1e{d}</text>')
        for d in range(y0, y1 + 1):
            out.append(f'<line x1="{X(x0)}" y1="{Y(d)}" x2="{X(x1)}" y2="{Y(d)}" '
                       'stroke="#ddd"/>')
            out.append(f'<text x="{X(x0) - 6}" y="{Y(d) + 4}" text-anchor="end">1e{d}</text>')
        out.append(f'<text x="{ox + w / 2}" y="{h - 14}" text-anchor="middle">'
                   'time to solution (s), median</text>')
        out.append(f'<text x="{ox + 14}" y="{h / 2}" text-anchor="middle" '
                   f'transform="rotate(-90 {ox + 14} {h / 2})">error</text>')
        for j, solver in enumerate(solvers):
            series = sorted((p for p in pts if p["solver"] == solver), key=lambda p: p["median"])
            if not series:
                continue
            c = colours[j % len(colours)]
            xy = [(X(math.log10(p["median"])), Y(math.log10(max(p["error"], 1e-16))))
                  for p in series]
            dash = ' stroke-dasharray="5,3"' if not solver.startswith("diracvi") else ""
            out.append(f'<polyline fill="none" stroke="{c}" stroke-width="1.5"{dash} points="'
                       + " ".join(f"{a:.1f},{b:.1f}" for a, b in xy) + '"/>')
            for a, b in xy:
                out.append(f'<circle cx="{a:.1f}" cy="{b:.1f}" r="2.5" fill="{c}"/>')
            ly = Y(y1) + 14 + 15 * j
            out.append(f'<line x1="{X(x1) - 150}" y1="{ly}" x2="{X(x1) - 130}" y2="{ly}" '
                       f'stroke="{c}" stroke-width="2"{dash}/>')
            out.append(f'<text x="{X(x1) - 125}" y="{ly + 4}">{solver}</text>')
    out.append("</svg>")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--diracvi", default=os.path.join(here, "..", "target", "release", "diracvi"))
    parser.add_argument("--reps", type=int, default=7, help="timed repetitions (interleaved)")
    parser.add_argument("--csv", default=os.path.join(here, "..", "docs", "work-precision.csv"))
    parser.add_argument("--svg", default=os.path.join(here, "..", "docs", "work-precision.svg"))
    parser.add_argument("--quick", action="store_true", help="coarse ladders (a smoke run)")
    args = parser.parse_args()
    factor = 4.0 if args.quick else 1.5
    models = list(PROBLEMS)
    solvers = ["diracvi order 2", "diracvi order 4", "diracvi order 6", "diracvi --tol"] \
        + SCIPY_METHODS
    print(f"# numpy {np.__version__}, scipy {scipy.__version__}, python {sys.version.split()[0]}")
    print(f"# load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")

    # (1) every setting once: its error
    points = []
    for model in models:
        _, _, error, ladders = PROBLEMS[model]
        settings = {f"diracvi order {o}": ladder(n0, n1, factor)
                    for o, (n0, n1) in ladders.items()}
        settings["diracvi --tol"] = TOL_TARGETS[::4] if args.quick else TOL_TARGETS
        for method in SCIPY_METHODS:
            settings[method] = SCIPY_GRID[::4] if args.quick else SCIPY_GRID
        for solver in solvers:
            for setting in settings[solver]:
                result, seconds = run_point(args.diracvi, model, solver, setting)
                e = math.inf if result is None else error(*result)
                points.append({"model": model, "solver": solver, "setting": setting,
                               "error": e, "times": []})
                if seconds > SLOW:
                    print(f"# {model} {solver}: {seconds:.1f} s at {setting:.3g}; finer not tried")
                    break

    # (2) interleaved timing
    timed = [p for p in points if math.isfinite(p["error"])]
    for _ in range(args.reps):
        for p in timed:
            _, seconds = run_point(args.diracvi, p["model"], p["solver"], p["setting"])
            p["times"].append(seconds)
    for p in points:
        t = [x for x in p["times"] if math.isfinite(x)]
        p["median"] = statistics.median(t) if t else math.nan
        p["min"] = min(t) if t else math.nan
        p["max"] = max(t) if t else math.nan

    with open(args.csv, "w", encoding="utf-8") as f:
        f.write("model,solver,setting,error,time_median_s,time_min_s,time_max_s,reps\n")
        for p in points:
            f.write(f"{p['model']},{p['solver']},{p['setting']:.6e},{p['error']:.6e},"
                    f"{p['median']:.6e},{p['min']:.6e},{p['max']:.6e},{len(p['times'])}\n")
    svg_plot(args.svg, points, models, solvers)

    # (3) the table: for each target, the fastest point of each solver at or below it
    print()
    print(f"Fastest run with error ≤ target: median of {args.reps} interleaved repetitions, ms "
          "[min–max], and its error.")
    print()
    print("| problem | target | " + " | ".join(solvers) + " |")
    print("|" + "---|" * (len(solvers) + 2))
    for model in models:
        for target in [1e-3, 1e-5, 1e-7, 1e-9, 1e-11]:
            cols = []
            for solver in solvers:
                ok = [p for p in points if p["model"] == model and p["solver"] == solver
                      and p["error"] <= target and math.isfinite(p["median"])]
                if not ok:
                    cols.append("—")
                    continue
                b = min(ok, key=lambda p: p["median"])
                cols.append(f"{b['median'] * 1e3:.2f} [{b['min'] * 1e3:.2f}–{b['max'] * 1e3:.2f}]"
                            f" ({b['error']:.0e})")
            print(f"| {model} | {target:.0e} | " + " | ".join(cols) + " |")
    print()
    print(f"# load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"# wrote {args.csv} and {args.svg}")


if __name__ == "__main__":
    main()
