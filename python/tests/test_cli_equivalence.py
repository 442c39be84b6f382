"""Python runs equal CLI runs bit for bit on every catalogue model: the same
records, the same impacts, the same final state and summary (both go
through `diracvi_run::execute`)."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

import diracvi

#: Every model with its paper defaults (Lagrange–Dirac), plus the
#: Hamiltonian stepper where the model has a Hamiltonian, and backward runs.
CASES = [(m.name, "lagrange", False) for m in diracvi.models()] + [
    ("particle", "hamiltonian", False),
    ("ellipse", "hamiltonian", False),
    ("pendulum", "hamiltonian", False),
    ("disk-table", "hamiltonian", False),
    ("star", "lagrange", True),
    ("pendulum", "lagrange", True),
]


def bits(xs) -> list:
    return [float(x).hex() for x in np.ravel(np.asarray(xs, dtype=float))]


@pytest.mark.parametrize("model, stepper, backward", CASES)
def test_python_equals_cli(cli, tmp_path, model, stepper, backward):
    out = tmp_path / "run.json"
    args = [str(cli), "run", model, "--stepper", stepper, "--out", str(out), "--summary", "json", "-q"]
    if backward:
        args.append("--backward")
    proc = subprocess.run(args, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    cli_summary = json.loads(proc.stdout)
    cli_run = json.loads(out.read_text())

    r = diracvi.scenario(model).run(stepper=stepper, backward=backward)

    # Records: every step, bit for bit.
    recs = cli_run["records"]
    assert len(recs) == len(r.t) == cli_summary["steps"] + 1
    assert [x["k"] for x in recs] == r.k.tolist()
    for key, arr in (("t", r.t), ("q", r.q), ("p", r.p), ("energy", r.energy),
                     ("constraint_residual", r.constraint_residual)):
        assert bits([x[key] for x in recs]) == bits(arr), key

    # Impacts: same count, steps, pieces, α, times, points, momenta, energies.
    imps = cli_run["impacts"]
    assert len(imps) == len(r.impacts) == cli_summary["impacts"]
    assert [x["step"] for x in imps] == r.impacts.step.tolist()
    assert [x["piece"] for x in imps] == r.impacts.piece.tolist()
    for key in ("alpha", "t", "q", "p_before", "p_after", "energy_before", "energy_after"):
        assert bits([x[key] for x in imps]) == bits(getattr(r.impacts, key)), key

    # Summary: the CLI's JSON key for key (warnings, energy_tolerance,
    # method, reduction included), but wall time and the file names.
    s = r.summary
    cli_keys = set(cli_summary) - {"out", "plot", "animate"}
    assert set(s) == cli_keys
    for key in cli_keys - {"wall_time_s"}:
        assert s[key] == cli_summary[key], key
    for key in ("h", "t_end", "constraint_residual_max"):
        assert float(s[key]).hex() == float(cli_summary[key]).hex(), key
    assert bits(s["impact_times"]) == bits(cli_summary["impact_times"])
    assert bits(s["final_state"]["q"]) == bits(cli_summary["final_state"]["q"])
    assert float(s["final_state"]["t"]).hex() == float(cli_summary["final_state"]["t"]).hex()


def test_overrides_equal_cli_set(cli):
    """`--set`, `--h`, `--t-end` and the Python keywords give the same run."""
    proc = subprocess.run(
        [str(cli), "run", "ellipse", "--set", "q=1.5707973267948966,0,3.5", "--set", "m=1.25",
         "--h", "0.004", "--t-end", "7", "--summary", "json", "-q"],
        capture_output=True, text=True, check=True,
    )
    c = json.loads(proc.stdout)
    r = diracvi.scenario(
        "ellipse", params={"m": 1.25}, q=[1.5707973267948966, 0, 3.5], h=0.004, t_end=7
    ).run(every=0)
    assert r.summary["final_state"] == c["final_state"]
    assert r.summary["impact_times"] == c["impact_times"]
    assert r.summary["steps"] == c["steps"] == 1750
