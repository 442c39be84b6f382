"""``diracvi.periodic_orbit`` and ``diracvi.continue_orbit`` (docs/theory.md
§14): the CLI's numbers, the upright ellipse's bounce (residual, reciprocal
pair, verdict), a plain rerun from the fixed point, the branch in the
semi-axis with its two changes of stability, and the errors."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

import diracvi
from diracvi import ModelError, NumericalError

ROOT = Path(__file__).resolve().parents[2]

UPRIGHT = ["--set", "q=1.5707963267948966,0,2.0", "--set", "v=0,0,0"]


def upright(y: float = 2.0) -> diracvi.Scenario:
    m = diracvi.Model.from_file(ROOT / "models" / "ellipse.toml")
    return diracvi.scenario(m, q=[np.pi / 2, 0.0, y], v=[0.0, 0.0, 0.0])


def test_the_orbit_equals_the_cli(cli):
    proc = subprocess.run(
        [str(cli), "periodic", "--model-file", "models/ellipse.toml", *UPRIGHT,
         "--section", "0", "--summary", "json"],
        capture_output=True, text=True, check=True, cwd=ROOT,
    )
    c = json.loads(proc.stdout)
    o = diracvi.periodic_orbit(upright(), section=0)
    assert o.summary["fixed_point"] == c["fixed_point"]
    assert o.summary["multipliers"] == c["multipliers"]
    assert o.residual <= 1e-12
    assert o.monodromy.shape == (6, 6)
    nontrivial = o.multipliers[[k == "nontrivial" for k in o.kinds]]
    assert len(nontrivial) == 2
    assert abs(nontrivial[0] * nontrivial[1] - 1) < 1e-8
    assert o.stability == ("unstable" if np.abs(nontrivial).max() > 1 + 1e-6 else "stable")
    assert sorted(o.kinds).count("symmetry") == 2 and "section" in o.kinds and "energy" in o.kinds
    # the plain run from the fixed point returns to it at its first impact
    r = diracvi.scenario(
        diracvi.Model.from_file(ROOT / "models" / "ellipse.toml"),
        q=list(o.q), v=list(o.v), t_end=o.period + 0.1,
    ).run(every=0)
    np.testing.assert_allclose(r.impacts.q[0], o.q, rtol=0, atol=1e-12)
    np.testing.assert_allclose(r.impacts.p_after[0], o.p, rtol=0, atol=1e-12)


def test_continuation_reports_both_changes():
    b = diracvi.continue_orbit(upright(1.0), "a", np.linspace(0.4, 0.6, 22), section=0)
    assert b.stopped is None
    assert len(b.orbits) == 22 and b.values[0] == 0.4
    assert all(o.residual <= 1e-12 for o in b.orbits)
    changes = b.stability_changes
    assert [(c["from"], c["to"]) for c in changes] == [("unstable", "stable"), ("stable", "unstable")]
    assert changes[1]["from_value"] < 0.5 < changes[1]["to_value"]


def test_errors_are_typed():
    with pytest.raises(ModelError) as e:
        diracvi.periodic_orbit(upright(), section=7)
    assert e.value.kind == "UnknownSection"
    with pytest.raises(NumericalError) as e:
        diracvi.periodic_orbit(upright(), section=0, max_iterations=1)
    assert e.value.kind == "NotConverged"
    with pytest.raises(NumericalError) as e:
        diracvi.periodic_orbit(upright(), section=0, t_end=0.1)
    assert e.value.kind == "NoReturn"
