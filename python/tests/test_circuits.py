"""Circuits from Python: a netlist and `lc-ladder` are scenarios like every
model (same `run`, `ensemble`, summary and errors as the CLI)."""

from __future__ import annotations

import json
import pickle
import subprocess
from pathlib import Path

import numpy as np
import pytest

import diracvi
from diracvi import ModelError

ROOT = Path(__file__).resolve().parents[2]
DDM = ROOT / "circuits" / "ddm-lc.cir"


def test_netlist_runs_like_the_built_in_lc():
    lc = diracvi.scenario("lc")
    net = diracvi.Scenario.from_netlist(DDM, h=lc.h, t_end=lc.t_end)
    assert net.is_circuit and not lc.is_circuit
    assert net.model == "ddm-lc"
    assert net.coordinates == ["q_L1", "q_C1", "q_C2", "q_C3"]
    a = lc.run(steps=200, every=50)
    b = net.run(steps=200, every=50)
    assert b.summary["method"]["core"] == "run-time"
    np.testing.assert_allclose(b.q, a.q, rtol=0, atol=1e-11 * np.abs(a.q).max())
    assert b.summary["energy"]["initial"] == pytest.approx(37.5, abs=1e-12)
    assert b.summary["constraint_residual_max"] <= 1e-14


def test_netlist_summary_equals_the_cli(cli):
    net = diracvi.Scenario.from_netlist(DDM, h=0.05, t_end=2.0)
    r = net.run(every=0)
    out = subprocess.run(
        [str(cli), "run", "--netlist", str(DDM), "--h", "0.05", "--t-end", "2",
         "--summary", "json", "-q"],
        check=True, capture_output=True, text=True,
    ).stdout
    want = json.loads(out)
    for key in ("out", "plot", "animate", "poster", "wall_time_s"):
        want.pop(key, None)
    got = dict(r.summary)
    got.pop("wall_time_s", None)
    # The CLI names the circuit after the file's stem, as from_netlist does.
    assert got == want


def test_ladder_scenario_ensemble_and_pickle():
    base = diracvi.scenario("lc-ladder", params={"cells": 20}, t_end=5.0)
    assert base.is_circuit
    assert len(base.coordinates) == 41
    overrides = [{"mode": m} for m in (1, 2, 3)]
    ens = diracvi.ensemble(base, overrides, keep=("final_state", "summary"))
    assert ens.final_q.shape == (3, 41)
    for i, o in enumerate(overrides):
        one = base.replace(params=o).run(every=0)
        np.testing.assert_array_equal(ens.final_q[i], one.final_state["q"])
    # Zero steps: the energy of the initial data, c v0² (N + 1) / 4.
    r = base.run(steps=0)
    assert r.summary["energy"]["initial"] == pytest.approx(21 / 4, rel=1e-12)
    # Pickled through its TOML, a netlist scenario included.
    assert pickle.loads(pickle.dumps(base)) == base
    net = diracvi.Scenario.from_netlist(DDM, h=0.1, t_end=1.0)
    assert pickle.loads(pickle.dumps(net)) == net


def test_circuit_errors_are_typed():
    with pytest.raises(ModelError, match="line 2") as e:
        diracvi.Scenario.from_netlist_text("L1 1 0 1\nC1 1 0 one\n", h=0.1, t_end=1.0)
    assert e.value.kind == "Circuit"
    with pytest.raises(ModelError, match="no Hamiltonian"):
        diracvi.scenario("lc-ladder").run(steps=3, stepper="hamiltonian")
    # Orders 4 and 6 run on the run-time core at any size (200 cells: 601
    # coordinates + Kirchhoff rows, above the old cap of 400 unknowns).
    for cells in (10, 200):
        r = diracvi.scenario("lc-ladder", params={"cells": cells}).run(steps=3, order=4)
        assert r.summary["method"]["core"] == "run-time"
        assert r.summary["method"]["order"] == 4
    with pytest.raises(ModelError, match="reduce"):
        diracvi.scenario("lc-ladder").run(steps=3, reduce=True)
    with pytest.raises(ModelError, match="cells"):
        diracvi.scenario("lc-ladder", params={"cells": 0})
    with pytest.raises(ModelError, match="no-such.cir"):
        diracvi.Scenario.from_netlist(ROOT / "no-such.cir", h=0.1, t_end=1.0)


def test_driven_netlists_run_at_order_four_in_python_as_in_the_cli(cli, tmp_path):
    # A sine voltage and a cosine current source (docs/theory.md §8.8): the
    # sources run on the run-time core at orders 4 and 6; the current
    # source's charge passes its Kirchhoff row exactly.
    text = "V1 1 0 SIN(0 1 0.3)\nL1 1 2 1\nC1 2 0 0.5\nI1 0 2 SIN(0 0.5 0.2 0 0 90)\n"
    net = diracvi.Scenario.from_netlist_text(text, h=0.05, t_end=2.0, name="driven")
    r4 = net.run(every=0, order=4)
    r6 = net.run(every=0, order=6)
    assert r4.summary["method"]["core"] == "run-time"
    assert r4.summary["constraint_residual_max"] <= 1e-15
    # Orders 4 and 6 agree to the order-4 error at this step (measured 2e-6).
    np.testing.assert_allclose(r4.final_state["q"], r6.final_state["q"], rtol=0, atol=1e-5)
    path = tmp_path / "driven.cir"
    path.write_text(text)
    out = subprocess.run(
        [str(cli), "run", "--netlist", str(path), "--h", "0.05", "--t-end", "2",
         "--order", "4", "--summary", "json", "-q"],
        check=True, capture_output=True, text=True,
    ).stdout
    assert json.loads(out)["final_state"] == r4.summary["final_state"]


def test_netlist_derivatives_equal_the_cli(cli):
    """A circuit's Jacobian and its sensitivities in element values
    (docs/theory.md §12.8): the [DDM] circuit, whose capacitor pair is a
    loop (a degenerate forward step), gives the CLI's numbers bit for bit."""
    net = diracvi.Scenario.from_netlist(DDM, h=0.01, t_end=1.0)
    r = net.run(jacobian=True, sensitivity=("L1", "C2"), every=0)
    c = json.loads(subprocess.run(
        [str(cli), "run", "--netlist", str(DDM), "--h", "0.01", "--t-end", "1",
         "--jacobian", "--sensitivity", "L1,C2", "--summary", "json", "-q"],
        check=True, capture_output=True, text=True,
    ).stdout)
    assert r.jacobian.shape == (8, 8)
    assert r.jacobian.tolist() == c["jacobian"]["matrix"]
    for name in ("L1", "C2"):
        assert r.sensitivity[name].tolist() == c["sensitivity"][name]
    assert np.abs(r.sensitivity["L1"]).max() > 1e-3


def test_a_netlist_takes_tol_from_its_h():
    """A netlist's ``h`` is the step the pilot runs of ``tol=`` start from
    (as with ``diracvi run --netlist ... --h H --tol T``): the [DDM] netlist
    chooses as the built-in ``lc`` does."""
    lc = diracvi.scenario("lc")
    net = diracvi.Scenario.from_netlist(DDM, h=lc.h, t_end=lc.t_end)
    a = lc.run(tol=1e-4, every=0).summary["tolerance"]
    b = net.run(tol=1e-4, every=0).summary["tolerance"]
    assert (a["chosen_order"], a["chosen_steps"]) == (2, 22620)
    assert (b["chosen_order"], b["chosen_steps"]) == (2, 22620)
