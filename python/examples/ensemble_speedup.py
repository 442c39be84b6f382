"""Parallel speed-up of `diracvi.ensemble` against the same runs one by one:
1000 pendulum runs of 2 s (gravity varied), timed alternately five times;
prints the medians, the spread and the ratio, and exits 1 when the ratio
misses the bar (ensemble ≤ 0.6 × serial on ≥ 2 idle cores).

    python python/examples/ensemble_speedup.py
"""

from __future__ import annotations

import os
import statistics
import sys
import time

import diracvi

RUNS, T_END, REPEATS, BAR = 1000, 2.0, 5, 0.6


def main() -> int:
    base = diracvi.scenario("pendulum", t_end=T_END)
    overrides = [{"g": 9.8 + 1e-4 * i} for i in range(RUNS)]
    keep = ("final_state", "impact_times", "summary")
    diracvi.ensemble(base, overrides[:50], keep=keep)  # warm up the thread pool
    serial, ensemble = [], []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        for o in overrides:
            base.replace(params=o).run(every=0)
        t1 = time.perf_counter()
        diracvi.ensemble(base, overrides, keep=keep)
        t2 = time.perf_counter()
        serial.append(t1 - t0)
        ensemble.append(t2 - t1)
    ms, me = statistics.median(serial), statistics.median(ensemble)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    ratio = me / ms
    print(
        f"{RUNS} pendulum runs of {T_END} s on {cores} cores: serial median {ms:.3f} s "
        f"(spread {min(serial):.3f}–{max(serial):.3f}), ensemble median {me:.3f} s "
        f"(spread {min(ensemble):.3f}–{max(ensemble):.3f}); ratio {ratio:.3f} (bar ≤ {BAR})"
    )
    return 0 if cores < 2 or ratio <= BAR else 1


if __name__ == "__main__":
    sys.exit(main())
