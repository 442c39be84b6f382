"""``run(jacobian=True)``: the tangent map of the discrete flow through
impacts (docs/theory.md §12) from Python — the CLI's numbers bit for bit,
the symplectic identity of an unconstrained flow through impacts, and the
refusal of what has no tangent map."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

import diracvi
from diracvi import ModelError


def test_jacobian_equals_the_cli(cli):
    proc = subprocess.run(
        [str(cli), "run", "pendulum", "--t-end", "3", "--jacobian", "--summary", "json", "-q"],
        capture_output=True, text=True, check=True,
    )
    c = json.loads(proc.stdout)
    r = diracvi.scenario("pendulum", t_end=3).run(jacobian=True, every=0)
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
    [("lc", {}), ("pendulum", {"order": 4}), ("ellipse", {"stepper": "hamiltonian"})],
)
def test_no_tangent_map_raises_model_error(model, kwargs):
    with pytest.raises(ModelError) as info:
        diracvi.scenario(model, t_end=0.5).run(jacobian=True, **kwargs)
    assert info.value.kind == "JacobianUnsupported"
