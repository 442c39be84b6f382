"""The Python API: catalogue, scenarios, runs, results, pickling, pandas."""

from __future__ import annotations

import copy
import math
import pickle

import numpy as np
import pytest

import diracvi

NAMES = [
    "particle",
    "ellipse",
    "star",
    "pendulum",
    "disk-wall",
    "disk-table",
    "lc",
    "heavy-top",
    "chaplygin-sphere",
    "bouncing-body",
]


def test_models_lists_the_catalogue():
    ms = diracvi.models()
    assert [m.name for m in ms] == NAMES
    by = {m.name: m for m in ms}
    assert len(by["pendulum"].coordinates) == 2 and by["pendulum"].constraints == 1
    assert len(by["ellipse"].coordinates) == 3 and by["ellipse"].constraints == 0
    assert len(by["star"].boundary_pieces) == 4
    assert by["lc"].boundary_pieces == []
    m = next(p for p in by["pendulum"].parameters if p.name == "m")
    assert m.unit == "kg" and m.kind == "a number" and m.default > 0
    assert by["ellipse"].defaults == diracvi.Scenario("ellipse")
    for info in ms:
        assert info.description


def test_scenario_defaults_and_overrides():
    sc = diracvi.scenario("pendulum")
    assert sc.model == "pendulum"
    assert (sc.h, sc.t_end) == (1e-3, 5.0)
    assert sc.discretization == "forward" and sc.constraint == "retraction"
    assert sc.q[0] == pytest.approx(0.75 * math.pi, abs=0)
    sc2 = diracvi.scenario(
        "pendulum", h=2e-3, t_end=1, params={"m": 2.0, "l": 1.5}, discretization="midpoint"
    )
    assert (sc2.h, sc2.t_end, sc2.discretization) == (2e-3, 1.0, "midpoint")
    assert sc2.params["m"] == 2.0 and sc2.params["l"] == 1.5
    assert "m" in sc2.keys and "q" in sc2.keys
    assert sc2 != sc and sc2 == sc2.copy() and sc2 == copy.deepcopy(sc2)
    # A parameter change re-derives default initial data: v_φ = f(θ) v_θ.
    assert sc2.v != sc.v or sc2.params["f0"] == sc.params["f0"]
    # In-place set, numpy values, exact floats.
    sc3 = diracvi.scenario("ellipse")
    theta = np.pi / 2 + 1e-6
    sc3.set("q", np.array([theta, 0.0, 3.5]))
    assert sc3.q == [theta, 0.0, 3.5]
    sc3.set("h", np.float64(0.1) + 1e-17)
    assert sc3.h == 0.1 + 1e-17
    assert sc3.replace(t_end=3).t_end == 3.0 and sc3.t_end == 25.0
    assert sc3.coordinates == diracvi.models()[1].coordinates


def test_toml_round_trip_is_exact(tmp_path):
    sc = diracvi.scenario("disk-table", h=0.1 / 3, params={"a": 4.25}, t_end=1 / 7)
    text = sc.to_toml()
    assert 'model = "disk-table"' in text
    back = diracvi.Scenario.from_toml(text)
    assert back == sc and back.h == sc.h and back.t_end == sc.t_end
    f = tmp_path / "s.toml"
    f.write_text(text)
    assert diracvi.Scenario.from_file(f) == sc
    assert diracvi.Scenario.from_toml('model = "lc"') == diracvi.scenario("lc")


def test_run_particle_arrays_impacts_summary():
    r = diracvi.scenario("particle", t_end=1).run()
    assert r.model == "particle"
    assert r.t.shape == (101,) and r.q.shape == (101, 2) and r.p.shape == (101, 2)
    assert r.k.dtype == np.int64 and list(r.k[:3]) == [0, 1, 2]
    assert np.allclose(r.t, np.arange(101) * 0.01, rtol=0, atol=1e-12)
    s = r.summary
    assert s["steps"] == 100 and s["impacts"] == 1 and s["stepper"] == "lagrange"
    assert s["energy"]["initial"] == pytest.approx(20.0987995, abs=1e-7)
    assert 0 < s["energy"]["max_relative_deviation"] < 1e-4  # O(h^2) at h = 0.01
    assert np.all(np.abs(r.energy - s["energy"]["initial"]) <= s["energy"]["max_abs_deviation"])
    # The last record is the final state, bit for bit.
    assert r.t[-1] == s["final_state"]["t"] == r.final_state["t"]
    assert list(r.q[-1]) == s["final_state"]["q"] and list(r.p[-1]) == s["final_state"]["p"]
    imp = r.impacts
    assert len(imp) == 1
    assert imp.step[0] == 63 and imp.piece[0] == 0
    assert imp.t[0] == pytest.approx(0.6388, abs=1e-3) and 0 <= imp.alpha[0] <= 1
    assert imp.t[0] == pytest.approx((imp.step[0] + imp.alpha[0]) * 0.01, abs=1e-12)
    assert imp.q[0, 1] == pytest.approx(0.0, abs=1e-9)
    assert imp.p_before[0, 1] < 0 < imp.p_after[0, 1]
    # The discrete law reflects the normal momentum up to O(h^2).
    assert imp.p_after[0, 1] == pytest.approx(-imp.p_before[0, 1], rel=1e-3)
    assert imp.p_after[0, 0] == pytest.approx(imp.p_before[0, 0], rel=1e-12)
    assert imp.energy_after[0] == pytest.approx(imp.energy_before[0], rel=1e-9)
    assert s["impact_times"] == [imp.t[0]]


def test_every_and_steps():
    sc = diracvi.scenario("pendulum", t_end=0.5)
    full = sc.run()
    thin = sc.run(every=100)
    assert list(thin.k) == [0, 100, 200, 300, 400, 500]
    assert np.array_equal(thin.q, full.q[::100]) and np.array_equal(thin.energy, full.energy[::100])
    none = sc.run(every=0)
    assert none.t.shape == (0,) and none.q.shape == (0, 2)
    assert none.summary["final_state"] == full.summary["final_state"]
    assert sc.run(steps=7).summary["steps"] == 7
    back = sc.run(backward=True, every=250)
    assert back.summary["direction"] == "backward"
    assert back.t[-1] == pytest.approx(-0.5, abs=1e-12) and np.all(np.diff(back.t) < 0)
    # Nonholonomic constraint residual stays at round-off.
    assert full.summary["constraint_residual_max"] < 1e-9


def test_hamiltonian_stepper_agrees_with_lagrange_dirac_forward():
    sc = diracvi.scenario("particle", discretization="forward", t_end=2)
    a, b = sc.run(every=0), sc.run(stepper="hamiltonian", every=0)
    assert b.summary["stepper"] == "hamiltonian"
    assert len(a.impacts) == len(b.impacts) == 2
    assert np.allclose(a.final_state["q"], b.final_state["q"], rtol=0, atol=1e-11)


def test_results_and_scenarios_pickle():
    sc = diracvi.scenario("ellipse", t_end=2, q=[math.pi / 2 + 1e-6, 0.0, 3.5])
    for proto in range(2, pickle.HIGHEST_PROTOCOL + 1):
        back = pickle.loads(pickle.dumps(sc, protocol=proto))
        assert back == sc and back.q == sc.q
    r = sc.run(every=10)
    r2 = pickle.loads(pickle.dumps(r))
    assert np.array_equal(r2.q, r.q) and np.array_equal(r2.impacts.t, r.impacts.t)
    assert r2.summary == r.summary
    e = diracvi.ensemble(sc, [{}, {"h": 0.005}], keep=("final_state", "impacts", "summary"))
    e2 = pickle.loads(pickle.dumps(e))
    assert np.array_equal(e2.final_q, e.final_q) and e2.summaries == e.summaries
    assert np.array_equal(e2.impacts[1].p_after, e.impacts[1].p_after)


def test_to_pandas():
    pd = pytest.importorskip("pandas")
    r = diracvi.scenario("particle", t_end=1).run(every=10)
    df = r.to_pandas()
    assert isinstance(df, pd.DataFrame)
    names = r.coordinates
    assert list(df.columns) == (
        ["k", "t"] + [f"q_{c}" for c in names] + [f"p_{c}" for c in names]
        + ["energy", "constraint_residual"]
    )
    assert np.array_equal(df[f"q_{names[1]}"].to_numpy(), r.q[:, 1])
    assert len(df) == len(r.t) and np.array_equal(df["t"].to_numpy(), r.t)
    imp = r.impacts.to_pandas()
    assert len(imp) == 1 and imp["piece"].iloc[0] == 0
    assert imp["t"].iloc[0] == r.impacts.t[0]


def test_repr_and_version():
    sc = diracvi.scenario("lc")
    assert repr(sc).startswith("Scenario('lc'")
    assert "RunResult(model='lc'" in repr(sc.run(steps=3))
    assert diracvi.__version__


def test_heavy_top_reports_its_invariants():
    r = diracvi.scenario("heavy-top").run(steps=500)
    inv = r.summary["invariants"]
    assert list(inv) == ["pi_z", "Pi_3"]
    assert inv["Pi_3"]["initial"] == pytest.approx(2.0, abs=1e-14)
    assert inv["pi_z"]["initial"] == pytest.approx(2.0 * math.cos(0.5), abs=1e-14)
    assert all(v["max_abs_deviation"] < 1e-12 for v in inv.values())
    free = diracvi.scenario("heavy-top", params={"g": 0.0}).run(steps=10)
    assert list(free.summary["invariants"]) == ["pi_x", "pi_y", "pi_z", "Pi_3"]
    assert diracvi.scenario("pendulum").run(steps=10).summary["invariants"] == {}
    # a reduced run reports them on its reconstructed states
    inv = diracvi.scenario("particle").run(reduce=True).summary["invariants"]
    assert list(inv) == ["p_x"] and inv["p_x"]["max_abs_deviation"] <= 1e-14
