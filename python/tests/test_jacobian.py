"""``run(jacobian=True)``: the tangent map of the discrete flow through
impacts (docs/theory.md §12) from Python — the CLI's numbers bit for bit,
the symplectic identity of an unconstrained flow through impacts, and the
refusal of what has no tangent map."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

import diracvi
from diracvi import ModelError


@pytest.mark.parametrize("order", [2, 4])
def test_jacobian_equals_the_cli(cli, order):
    proc = subprocess.run(
        [str(cli), "run", "pendulum", "--t-end", "3", "--jacobian", "--order", str(order),
         "--summary", "json", "-q"],
        capture_output=True, text=True, check=True,
    )
    c = json.loads(proc.stdout)
    r = diracvi.scenario("pendulum", t_end=3).run(jacobian=True, order=order, every=0)
    if order == 4:
        assert r.summary["method"]["order"] == 4
    assert r.summary["jacobian"] == c["jacobian"]
    assert r.jacobian.shape == (4, 4)
    assert r.jacobian.tolist() == c["jacobian"]["matrix"]
    assert r.summary["jacobian"]["rows"] == ["q:theta", "q:phi", "p:theta", "p:phi"]
    assert diracvi.scenario("pendulum", t_end=3).run(every=0).jacobian is None


def test_flow_through_impacts_is_symplectic():
    r = diracvi.scenario("ellipse", t_end=10).run(jacobian=True, every=0)
    assert r.summary["impacts"] >= 8
    j = r.jacobian
    n = j.shape[0] // 2
    omega = np.block([[np.zeros((n, n)), np.eye(n)], [-np.eye(n), np.zeros((n, n))]])
    defect = np.abs(j.T @ omega @ j - omega).max() / np.abs(j).max() ** 2
    assert defect < 1e-13


@pytest.mark.parametrize(
    "model, kwargs",
    [("particle", {"reduce": True})],
)
def test_no_tangent_map_raises_model_error(model, kwargs):
    with pytest.raises(ModelError) as info:
        diracvi.scenario(model, t_end=0.5).run(jacobian=True, **kwargs)
    assert info.value.kind == "JacobianUnsupported"


def test_a_degenerate_lagrangian_has_the_clis_jacobian(cli):
    """The LC circuit's degenerate steps have a tangent map (docs/theory.md
    §12.8): Python's Jacobian is the CLI's bit for bit."""
    proc = subprocess.run(
        [str(cli), "run", "lc", "--t-end", "0.5", "--jacobian", "--summary", "json", "-q"],
        capture_output=True, text=True, check=True,
    )
    c = json.loads(proc.stdout)
    r = diracvi.scenario("lc", t_end=0.5).run(jacobian=True, every=0)
    assert r.jacobian.shape == (8, 8)
    assert np.isfinite(r.jacobian).all()
    assert r.jacobian.tolist() == c["jacobian"]["matrix"]


def test_the_hamiltonian_stepper_has_the_clis_jacobian(cli):
    """The Hamiltonian stepper's tangent map (docs/theory.md §12.7) through
    the ellipse's impacts: the CLI's numbers bit for bit."""
    proc = subprocess.run(
        [str(cli), "run", "ellipse", "--t-end", "3", "--stepper", "hamiltonian",
         "--jacobian", "--summary", "json", "-q"],
        capture_output=True, text=True, check=True,
    )
    c = json.loads(proc.stdout)
    r = diracvi.scenario("ellipse", t_end=3).run(jacobian=True, stepper="hamiltonian", every=0)
    assert r.summary["impacts"] >= 2
    assert r.summary["method"]["stepper"] == "hamiltonian"
    assert r.jacobian.shape == (6, 6)
    assert r.jacobian.tolist() == c["jacobian"]["matrix"]


ELLIPSE = Path(__file__).resolve().parents[2] / "models" / "ellipse.toml"


def _ellipse_run(v0=None, b=None, **kw):
    m = diracvi.Model.from_file(ELLIPSE)
    params = {} if b is None else {"b": b}
    sc = m.scenario(t_end=1.5, v=v0, params=params)
    return sc.run(every=0, **kw)


def test_gradient_of_an_objective_matches_differences_of_whole_runs():
    """F = y_N² + sin(p_θ,N) + x_N p_x,N of the bouncing ellipse (impacts
    inside the interval): the gradient in the initial velocities and in the
    semi-axis b from the tangent map against central differences of runs."""
    def objective(q, p):
        return q[2] ** 2 + np.sin(p[0]) + q[1] * p[1]

    r = _ellipse_run(jacobian=True, sensitivity=("b",))
    assert r.summary["impacts"] >= 1
    g = r.gradient(objective)
    exact = r.gradient(
        objective,
        grad=lambda q, p: np.array([0.0, p[1], 2 * q[2], np.cos(p[0]), q[1], 0.0]),
    )
    # the objective's own differences are far below the run's accuracy
    for key in ("q0", "p0"):
        np.testing.assert_allclose(g[key], exact[key], rtol=1e-7, atol=1e-9)
    assert abs(g["b"] - exact["b"]) <= 1e-7 * abs(exact["b"])
    # against whole runs: p0 = M v0 with M = diag(I, m, m), I = m (a² + b²)/4
    v0 = np.array([-3.0, 2.0, 0.0])
    inertia = np.array([(1.0 + 0.25) / 4.0, 1.0, 1.0])
    for i in range(3):
        d = 1e-6
        up, down = v0.copy(), v0.copy()
        up[i] += d
        down[i] -= d
        fu = objective(*map(np.asarray, (_ellipse_run(list(up)).final_state[k] for k in "qp")))
        fd = objective(*map(np.asarray, (_ellipse_run(list(down)).final_state[k] for k in "qp")))
        dv = (fu - fd) / (2 * d)
        assert abs(exact["p0"][i] * inertia[i] - dv) <= 1e-5 * max(1.0, abs(dv)), (i, dv)
    fb = [objective(*map(np.asarray, (_ellipse_run(b=0.5 + s).final_state[k] for k in "qp")))
          for s in (1e-6, -1e-6)]
    db = (fb[0] - fb[1]) / 2e-6
    assert abs(exact["b"] - db) <= 1e-5 * max(1.0, abs(db)), (exact["b"], db)
    assert g["value"] == objective(np.asarray(r.final_state["q"]), np.asarray(r.final_state["p"]))


def test_gradient_needs_the_tangent_map():
    with pytest.raises(ValueError, match="jacobian=True"):
        _ellipse_run().gradient(lambda q, p: q[0])


def test_reverse_sweep_over_the_tape_equals_the_forward_gradient():
    """run(tangents=True): the per-step tangents multiply to the Jacobian,
    and the reverse (adjoint) sweep gives the forward mode's gradient."""
    def objective(q, p):
        return q[2] ** 2 + np.sin(p[0]) + q[1] * p[1]

    def grad(q, p):
        return np.array([0.0, p[1], 2 * q[2], np.cos(p[0]), q[1], 0.0])

    r = _ellipse_run(jacobian=True, sensitivity=("b", "g"), tangents=True)
    steps = r.summary["steps"]
    assert r.tangents.shape == (steps, 6, 8) and r.tangent_initial.shape == (6, 2)
    j = r.cumulative_tangents()
    np.testing.assert_allclose(j[-1], r.jacobian, rtol=0, atol=1e-13 * np.abs(r.jacobian).max())
    reverse = r.gradient(objective, grad=grad)
    forward = _ellipse_run(jacobian=True, sensitivity=("b", "g")).gradient(objective, grad=grad)
    for key in ("q0", "p0"):
        np.testing.assert_allclose(reverse[key], forward[key], rtol=1e-12, atol=1e-12)
    for name in ("b", "g"):
        assert abs(reverse[name] - forward[name]) <= 1e-12 * max(1.0, abs(forward[name]))
    # the tape alone (no forward Jacobian) is enough
    tape_only = _ellipse_run(tangents=True)
    assert tape_only.jacobian is None
    np.testing.assert_allclose(tape_only.gradient(objective, grad=grad)["p0"], forward["p0"],
                               rtol=1e-12, atol=1e-12)
