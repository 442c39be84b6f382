"""Ensembles: equal to the runs done one by one (bit for bit, in input
order), `keep`, errors with the run index. The parallel speed-up is a
benchmark, not a test (timings on a shared machine are not a pass/fail
criterion): `python python/examples/ensemble_speedup.py`."""

from __future__ import annotations

import numpy as np
import pytest

import diracvi
from diracvi import ModelError, StepError

#: Pendulum runs of 2 s (2000 steps each, a few impacts), gravity varied.
RUNS = 200
T_END = 2.0


def pendulum_overrides(n=RUNS):
    return [{"g": 9.8 + 1e-4 * i} for i in range(n)]


def test_ensemble_equals_one_by_one():
    base = diracvi.scenario("pendulum", t_end=T_END)
    overrides = pendulum_overrides()
    keep = ("final_state", "impact_times", "summary")
    serial = [base.replace(params=o).run(every=0) for o in overrides]
    ens = diracvi.ensemble(base, overrides, keep=keep)

    # Bit for bit, in input order.
    runs = len(overrides)
    assert len(ens) == runs
    assert ens.final_q.shape == (runs, 2) and ens.final_p.shape == (runs, 2)
    for i, r in enumerate(serial):
        fs = r.final_state
        assert ens.final_t[i] == fs["t"]
        assert list(ens.final_q[i]) == fs["q"] and list(ens.final_p[i]) == fs["p"]
        assert np.array_equal(ens.impact_times[i], r.impacts.t)
        assert ens.impact_counts[i] == len(r.impacts)
        a, b = dict(ens.summaries[i]), dict(r.summary)
        a.pop("wall_time_s"), b.pop("wall_time_s")
        assert a == b
    # The runs differ (gravity varies) and hit the wall.
    assert len(np.unique(ens.final_q[:, 0])) == runs
    assert ens.impact_counts.min() >= 1
    assert abs(ens.final_t - T_END).max() < 1e-12


def test_threads_and_keep():
    base = diracvi.scenario("ellipse", t_end=5)
    overrides = [{"q": [np.pi / 2 + 1e-6 * i, 0.0, 3.5]} for i in range(-3, 4)]
    a = diracvi.ensemble(base, overrides, keep="impact_times", threads=1)
    b = diracvi.ensemble(base, overrides, keep=["impact_times"], threads=2)
    assert a.keep == ["impact_times"] and a.final_q is None and a.summaries is None
    assert all(np.array_equal(x, y) for x, y in zip(a.impact_times, b.impact_times))
    assert np.array_equal(a.impact_counts, b.impact_counts)
    full = diracvi.ensemble(base, overrides, keep=("impacts", "trajectory"), every=50)
    assert full.impact_times is None and len(full.results) == len(overrides)
    for i, o in enumerate(overrides):
        r = base.replace(q=o["q"]).run(every=50)
        assert np.array_equal(full.results[i].q, r.q) and np.array_equal(full.results[i].k, r.k)
        assert np.array_equal(full.impacts[i].p_after, r.impacts.p_after)
        assert np.array_equal(full.impacts[i].alpha, r.impacts.alpha)
    empty = diracvi.ensemble(base, [])
    assert len(empty) == 0 and empty.final_q.shape == (0, 3)
    same = diracvi.ensemble(base, [{}, {}], stepper="hamiltonian", steps=100, backward=True)
    assert np.array_equal(same.final_q[0], same.final_q[1])
    assert same.summaries[0]["stepper"] == "hamiltonian" and same.final_t[0] == pytest.approx(-1.0)


def test_errors_carry_the_lowest_run_index():
    base = diracvi.scenario("pendulum", t_end=0.05)
    fail = {"h": 0.5, "t_end": 5.0}  # Newton does not converge
    bad = [{}, {}, fail, {}, fail, {}]
    for threads in (1, 2):
        with pytest.raises(StepError) as info:
            diracvi.ensemble(base, bad, threads=threads)
        e = info.value
        assert e.run_index == 2 and e.kind == "NoConvergence" and e.step is not None
        assert str(e).startswith("run 2: pendulum: step")
    with pytest.raises(ModelError) as info:
        diracvi.ensemble(base, [{}, {"m": -1}])
    assert info.value.run_index == 1 and info.value.kind == "InvalidParameter"
    with pytest.raises(ModelError) as info:
        diracvi.ensemble(base, [{}, {"q": [0.0, 0.0]}, {}])  # violates the constraint
    assert info.value.run_index == 1 and info.value.kind == "InitialViolatesConstraint"


@pytest.mark.parametrize(
    "kwargs, exc",
    [
        (dict(overrides=[1, 2]), TypeError),
        (dict(overrides=5), TypeError),
        (dict(overrides=[{1: 2}]), TypeError),
        (dict(overrides=[{"m": object()}]), TypeError),
        (dict(overrides=[{}], keep=("everything",)), ValueError),
        (dict(overrides=[{}], keep=3), TypeError),
        (dict(overrides=[{}], threads=0), ValueError),
        (dict(overrides=[{}], stepper="rk4"), ValueError),
        (dict(overrides=[{}], every=-1), ValueError),
    ],
)
def test_bad_arguments(kwargs, exc):
    base = diracvi.scenario("pendulum", t_end=0.01)
    with pytest.raises(exc):
        diracvi.ensemble(base, **kwargs)
    with pytest.raises(TypeError):
        diracvi.ensemble("pendulum", [{}])
