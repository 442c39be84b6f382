"""Model files (docs/model-files.md) from Python: reading, the model's
description, scenarios with overrides, runs equal to the CLI's
`--model-file` runs bit for bit, pickling, and typed errors."""

from __future__ import annotations

import json
import pickle
import subprocess
from pathlib import Path

import numpy as np
import pytest

import diracvi

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "models"


def bits(xs) -> list:
    return [float(x).hex() for x in np.ravel(np.asarray(xs, dtype=float))]


def test_model_from_file_describes_the_system():
    m = diracvi.Model.from_file(MODELS / "sleigh.toml")
    assert m.name == "sleigh"
    assert m.description == "Chaplygin sleigh in a circular arena"
    assert m.coordinates == ["x", "y", "theta"]
    assert m.constraints == 1 and len(m.boundary_pieces) == 1
    assert {p.name: p.default for p in m.parameters} == {"m": 1.0, "I": 0.1, "a": 0.3, "R": 2.0}
    assert m.defaults.is_model_file and not diracvi.scenario("pendulum").is_model_file
    assert (m.defaults.h, m.defaults.t_end) == (1e-3, 20.0)
    assert m.defaults.keys == ["m", "I", "a", "R", "h", "tol", "t_end", "discretization",
                               "constraint", "q", "v"]
    # from_toml of the same text: an equal model.
    assert diracvi.Model.from_toml((MODELS / "sleigh.toml").read_text()) == m
    # to_toml prints a model file that reads back to the same defaults.
    assert diracvi.Model.from_toml(m.to_toml()).defaults == m.defaults


def test_file_twin_matches_catalogue_model():
    """The pendulum written as a file runs like the compiled pendulum
    (same scheme; expression tape vs compiled code: agreement to round-off)."""
    m = diracvi.Model.from_file(MODELS / "pendulum.toml")
    f = diracvi.scenario(m, t_end=1).run(every=0)
    c = diracvi.scenario("pendulum", t_end=1).run(every=0)
    np.testing.assert_allclose(f.summary["final_state"]["q"], c.summary["final_state"]["q"],
                               rtol=0, atol=1e-12)
    assert f.summary["steps"] == c.summary["steps"] == 1000


def test_model_file_scenario_overrides_and_pickle():
    m = diracvi.Model.from_file(MODELS / "sleigh.toml")
    sc = m.scenario(t_end=2, params={"a": 0.25}, v=[1.0, 0.0, 0.5])
    assert sc.params["a"] == 0.25 and sc.t_end == 2.0 and sc.v == [1.0, 0.0, 0.5]
    assert m.defaults.params["a"] == 0.3
    back = pickle.loads(pickle.dumps(sc))
    assert back == sc and back.is_model_file
    r1, r2 = sc.run(every=0), back.run(every=0)
    assert r1.summary["final_state"] == r2.summary["final_state"]
    # The knife edge does not slide: the constraint holds to round-off.
    assert sc.run().constraint_residual.max() < 1e-12


@pytest.mark.parametrize("name", ["sleigh", "double-pendulum", "ellipse"])
def test_model_file_run_equals_cli(cli, tmp_path, name):
    path = MODELS / f"{name}.toml"
    out = tmp_path / "run.json"
    proc = subprocess.run(
        [str(cli), "run", "--model-file", str(path), "--set", "t_end=3", "--out", str(out),
         "--summary", "json", "-q"],
        capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stderr
    cli_summary = json.loads(proc.stdout)
    recs = json.loads(out.read_text())["records"]
    r = diracvi.Model.from_file(path).scenario(t_end=3).run()
    assert len(recs) == len(r.t)
    assert bits([x["q"] for x in recs]) == bits(r.q)
    assert bits([x["p"] for x in recs]) == bits(r.p)
    assert bits(r.summary["impact_times"]) == bits(cli_summary["impact_times"])
    assert r.summary["final_state"] == cli_summary["final_state"]


def test_model_file_ensemble_equals_serial():
    m = diracvi.Model.from_file(MODELS / "double-pendulum.toml")
    sc = m.scenario(t_end=0.5)
    overrides = [{"m1": 1.0 + 0.01 * i} for i in range(8)]
    ens = diracvi.ensemble(sc, overrides, keep="final_state")
    for i, o in enumerate(overrides):
        one = sc.replace(params=o).run(every=0)
        assert bits(ens.final_q[i]) == bits(one.summary["final_state"]["q"])


def test_model_file_errors(tmp_path):
    with pytest.raises(OSError):
        diracvi.Model.from_file(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text('[model]\nname = "x"\ncoordinates = ["q"]\nlagrangian = "0.5*q_dot^2 - k*q"\n')
    with pytest.raises(diracvi.ModelError, match="bad.toml") as e:
        diracvi.Model.from_file(bad)
    assert "k" in str(e.value)
    with pytest.raises(diracvi.ModelError, match="not a model file"):
        diracvi.Model.from_toml(diracvi.scenario("pendulum").to_toml())
    m = diracvi.Model.from_file(MODELS / "sleigh.toml")
    with pytest.raises(diracvi.ModelError, match="nope"):
        m.scenario(params={"nope": 1.0})
    with pytest.raises(TypeError):
        diracvi.scenario(3)


@pytest.mark.parametrize("name, t_end", [("three-sleighs", 2.0), ("masses-in-a-box", 3.0),
                                          ("chain-50", 0.2)])
def test_large_model_files_run_and_equal_cli(cli, tmp_path, name, t_end):
    """Model files of any size (n = 9 with m = 3, n = 12 with 13 walls,
    n = 50) run on the run-time-sized core, from Python as from the CLI,
    bit for bit."""
    path = MODELS / f"{name}.toml"
    proc = subprocess.run(
        [str(cli), "run", "--model-file", str(path), "--t-end", str(t_end), "--summary", "json",
         "-q"],
        capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stderr
    c = json.loads(proc.stdout)
    m = diracvi.Model.from_file(path)
    r = m.scenario(t_end=t_end).run(every=0)
    assert len(r.summary["final_state"]["q"]) == len(m.coordinates)
    assert bits(r.summary["final_state"]["q"]) == bits(c["final_state"]["q"])
    assert bits(r.summary["final_state"]["p"]) == bits(c["final_state"]["p"])
    assert bits(r.summary["impact_times"]) == bits(c["impact_times"])
    if m.constraints:
        assert r.summary["constraint_residual_max"] < 1e-12


def test_large_model_file_ensemble_equals_serial():
    """An ensemble over a 12-coordinate model file with 13 walls."""
    m = diracvi.Model.from_file(MODELS / "masses-in-a-box.toml")
    sc = m.scenario(t_end=1.0)
    overrides = [{"L": 12.0 + 0.1 * i} for i in range(4)]
    ens = diracvi.ensemble(sc, overrides, keep="final_state")
    for i, o in enumerate(overrides):
        one = sc.replace(params=o).run(every=0)
        assert bits(ens.final_q[i]) == bits(one.summary["final_state"]["q"])


def test_model_file_with_symmetry_runs_reduced(cli, tmp_path):
    """A model file declaring ``[symmetry]`` runs reduced from Python
    (``Scenario.from_file`` + ``run(reduce=True)``) as from the CLI, bit for
    bit; the eight-coordinate carts keep their four Routh momenta to
    round-off, and a false declaration is refused naming the coordinate."""
    path = MODELS / "carts-pendulums.toml"
    sc = diracvi.Scenario.from_file(path)
    r = sc.run(reduce=True, steps=300, every=0)
    red = r.summary["reduction"]
    assert red["kind"] == "Routh"
    assert red["cyclic"] == ["x1", "x2", "x3", "x4"]
    for i, mu in enumerate(red["momentum"]):
        inv = r.summary["invariants"][f"mu{i + 1}"]
        assert abs(inv["initial"] - mu) < 1e-14
        assert inv["max_abs_deviation"] < 1e-13
    proc = subprocess.run(
        [str(cli), "run", "--model-file", str(path), "--reduce", "--steps", "300",
         "--summary", "json", "-q"],
        capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stderr
    c = json.loads(proc.stdout)
    assert bits(r.summary["final_state"]["q"]) == bits(c["final_state"]["q"])
    assert bits(r.summary["impact_times"]) == bits(c["impact_times"])
    # the full run agrees to solver tolerance (Routh reduction is exact)
    full = sc.run(steps=300, every=0)
    assert np.max(np.abs(np.array(full.summary["final_state"]["q"])
                         - np.array(r.summary["final_state"]["q"]))) < 1e-10
    bad = tmp_path / "false.toml"
    bad.write_text((MODELS / "particle.toml").read_text().replace('cyclic = ["x"]', 'cyclic = ["y"]'))
    with pytest.raises(diracvi.ModelError, match="`y` is not a cyclic coordinate"):
        diracvi.Scenario.from_file(bad).run(reduce=True, steps=3)
