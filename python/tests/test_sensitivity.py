"""``run(sensitivity=...)``: derivatives of the final state in a model
file's parameters (docs/theory.md §12.4) from Python — the CLI's numbers
bit for bit, the order asked, and the typed refusals."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

import diracvi
from diracvi import ModelError

ROOT = Path(__file__).resolve().parents[2]
PENDULUM = ROOT / "models" / "pendulum.toml"


def _pendulum(t_end: float) -> diracvi.Scenario:
    return diracvi.scenario(diracvi.Model.from_file(PENDULUM), t_end=t_end)


def test_sensitivity_equals_the_cli(cli):
    proc = subprocess.run(
        [str(cli), "run", "--model-file", str(PENDULUM), "--set", "t_end=2.5",
         "--sensitivity", "r,g", "--summary", "json", "-q"],
        capture_output=True, text=True, check=True,
    )
    c = json.loads(proc.stdout)
    assert c["impacts"] >= 1
    r = _pendulum(2.5).run(sensitivity=("r", "g"), every=0)
    assert r.summary["sensitivity"] == c["sensitivity"]
    assert set(r.sensitivity) == {"r", "g"}
    for name in ("r", "g"):
        assert isinstance(r.sensitivity[name], np.ndarray)
        assert r.sensitivity[name].shape == (4,)
        assert r.sensitivity[name].tolist() == c["sensitivity"][name]
    # one string with commas, as on the command line
    r2 = _pendulum(2.5).run(sensitivity="r,g", every=0)
    assert r2.summary["sensitivity"] == c["sensitivity"]
    assert _pendulum(2.5).run(every=0).sensitivity is None


def test_composed_orders_have_sensitivities_through_impacts(cli):
    """Orders 4 and 6 carry the parameter columns over their stages: the
    CLI's numbers bit for bit, before the first impact and through it (the
    continuous elastic law has its parameter derivative)."""
    proc = subprocess.run(
        [str(cli), "run", "--model-file", str(PENDULUM), "--set", "t_end=0.3",
         "--order", "4", "--sensitivity", "g,l", "--summary", "json", "-q"],
        capture_output=True, text=True, check=True,
    )
    c = json.loads(proc.stdout)
    assert c["impacts"] == 0 and c["method"]["order"] == 4
    r = _pendulum(0.3).run(order=4, sensitivity=("g", "l"), every=0)
    for name in ("g", "l"):
        assert r.sensitivity[name].shape == (4,)
        assert r.sensitivity[name].tolist() == c["sensitivity"][name]
    proc = subprocess.run(
        [str(cli), "run", "--model-file", str(PENDULUM), "--set", "t_end=2.5",
         "--order", "4", "--sensitivity", "g,r", "--summary", "json", "-q"],
        capture_output=True, text=True, check=True,
    )
    c = json.loads(proc.stdout)
    assert c["impacts"] >= 1
    r = _pendulum(2.5).run(order=4, sensitivity=("g", "r"), every=0)
    for name in ("g", "r"):
        assert r.sensitivity[name].tolist() == c["sensitivity"][name]


@pytest.mark.parametrize(
    "model, names, kwargs, kind",
    [
        (None, ("g",), {}, "SensitivityUnsupported"),
        (PENDULUM, ("nope",), {}, "UnknownSensitivityParameter"),
    ],
)
def test_refusals_raise_model_error(model, names, kwargs, kind):
    with pytest.raises(ModelError) as info:
        sc = diracvi.scenario("pendulum", t_end=0.1) if model is None else _pendulum(0.1)
        sc.run(sensitivity=names, **kwargs)
    assert info.value.kind == kind
