"""System files (parts joined through ports, docs/systems.md) from Python:
the assembled model, runs equal to the CLI's `--system` runs bit for bit,
ensembles over a port parameter, and typed errors."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

import diracvi

ROOT = Path(__file__).resolve().parents[2]
SPEAKER = ROOT / "models" / "systems" / "loudspeaker.toml"


def bits(xs) -> list:
    return [float(x).hex() for x in np.ravel(np.asarray(xs, dtype=float))]


def test_system_from_file_is_the_assembled_model():
    m = diracvi.System.from_file(SPEAKER)
    assert m.name == "loudspeaker"
    assert m.coordinates == ["cone.x", "tank.L1", "tank.C1"]
    assert m.constraints == 1 and len(m.boundary_pieces) == 1
    assert {p.name: p.default for p in m.parameters} == {
        "cone.m": 0.01, "cone.k": 1000.0, "cone.xmax": 0.0005, "coil.Bl": 5.0}
    assert (m.defaults.h, m.defaults.t_end) == (1e-5, 0.05)


def test_system_run_equals_the_cli_bit_for_bit(cli):
    r = diracvi.System.from_file(SPEAKER).scenario(params={"coil.Bl": 4.0}).run(every=0)
    out = subprocess.run(
        [str(cli), "run", "--system", str(SPEAKER), "--set", "coil.Bl=4", "--summary", "json", "-q"],
        check=True, capture_output=True, text=True).stdout
    s = json.loads(out)
    assert r.summary["impacts"] == s["impacts"] >= 1
    assert bits(r.summary["impact_times"]) == bits(s["impact_times"])
    assert bits(r.summary["final_state"]["q"]) == bits(s["final_state"]["q"])
    assert bits(r.summary["final_state"]["p"]) == bits(s["final_state"]["p"])
    # the energy of the parts and the work through the ports, as the CLI's
    assert set(r.summary["parts"]) == {"cone", "tank"}
    for key in ("parts", "ports", "accounting"):
        assert r.summary[key] == s[key]
    work = r.summary["ports"]["coil"]["work"]
    assert work["cone"] != 0 and abs(work["cone"] + work["tank"]) <= 1e-9 * abs(work["cone"])


def test_a_composed_system_run_is_accounted_stage_by_stage():
    sc = diracvi.System.from_file(SPEAKER).scenario(t_end=0.001)
    r = sc.run(every=0, order=4)
    assert not any("no energy accounting" in w for w in r.summary["warnings"])
    a = r.summary["accounting"]
    # three stages a step: 3 * 100 - 1 interior nodes, none skipped (no impact)
    assert (a["nodes"], a["nodes_skipped"]) == (299, 0)
    # the runner's energy is the composed step's, not the stages': no comparison
    assert a["energy_sum_deviation_max"] is None
    work = r.summary["ports"]["coil"]["work"]
    assert work["cone"] != 0 and abs(work["cone"] + work["tank"]) <= 1e-12 * abs(work["cone"])


def test_ensemble_over_a_port_parameter_equals_single_runs():
    sc = diracvi.System.from_file(SPEAKER).scenario(t_end=0.01)
    values = (0.0, 2.0, 5.0)
    e = diracvi.ensemble(sc, [{"coil.Bl": bl} for bl in values], keep="final_state")
    assert e.final_q.shape == (3, 3)
    for i, bl in enumerate(values):
        r = sc.replace(params={"coil.Bl": bl}).run(every=0)
        assert bits(e.final_q[i]) == bits(r.summary["final_state"]["q"])
    # without the coil the cone stays at rest and the tank rings on its own
    assert e.final_q[0][0] == 0.0 and e.final_q[2][0] != 0.0


def test_bad_system_file_raises_model_error_with_its_place(tmp_path):
    bad = tmp_path / "s.toml"
    bad.write_text('[system]\nname = "s"\n[[part]]\nname = "a"\nmodel_file = "nowhere.toml"\n')
    with pytest.raises(diracvi.ModelError) as err:
        diracvi.System.from_file(bad)
    assert err.value.kind == "SystemFile"
    assert "s.toml:5:14: part[0].model_file" in str(err.value)
