"""Python runs equal CLI runs bit for bit on every catalogue model: the same
records, the same impacts, the same final state and summary (both go
through `diracvi_run::execute`)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

import diracvi

#: Every model with its paper defaults (Lagrange–Dirac), plus the
#: Hamiltonian stepper where the model has a Hamiltonian, backward runs, and
#: the reduced runs of every model that declares a symmetry.
CASES = [(m.name, "lagrange", False, False) for m in diracvi.models()] + [
    ("particle", "hamiltonian", False, False),
    ("ellipse", "hamiltonian", False, False),
    ("pendulum", "hamiltonian", False, False),
    ("disk-table", "hamiltonian", False, False),
    ("star", "lagrange", True, False),
    ("pendulum", "lagrange", True, False),
    ("particle", "lagrange", False, True),
    ("pendulum", "lagrange", False, True),
    ("disk-table", "lagrange", False, True),
]

MODELS = Path(__file__).resolve().parents[2] / "models"


def bits(xs) -> list:
    return [float(x).hex() for x in np.ravel(np.asarray(xs, dtype=float))]


def assert_equals_cli(cli, tmp_path, cli_args, r):
    """`diracvi run <cli_args>` with a JSON trajectory and summary equals the
    Python run `r`: records, impacts and the summary, key for key."""
    out = tmp_path / "run.json"
    args = [str(cli), "run", *cli_args, "--out", str(out), "--summary", "json", "-q"]
    proc = subprocess.run(args, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    cli_summary = json.loads(proc.stdout)
    cli_run = json.loads(out.read_text())

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
    cli_keys = set(cli_summary) - {"out", "plot", "animate", "poster", "start"}
    assert set(s) == cli_keys
    for key in cli_keys - {"wall_time_s"}:
        assert s[key] == cli_summary[key], key
    for key in ("h", "t_end", "constraint_residual_max"):
        assert float(s[key]).hex() == float(cli_summary[key]).hex(), key
    assert bits(s["impact_times"]) == bits(cli_summary["impact_times"])
    assert bits(s["final_state"]["q"]) == bits(cli_summary["final_state"]["q"])
    assert float(s["final_state"]["t"]).hex() == float(cli_summary["final_state"]["t"]).hex()
    return cli_summary


@pytest.mark.parametrize("model, stepper, backward, reduce", CASES)
def test_python_equals_cli(cli, tmp_path, model, stepper, backward, reduce):
    args = [model, "--stepper", stepper]
    if backward:
        args.append("--backward")
    if reduce:
        args.append("--reduce")
    r = diracvi.scenario(model).run(stepper=stepper, backward=backward, reduce=reduce)
    cli_summary = assert_equals_cli(cli, tmp_path, args, r)
    if reduce:
        assert cli_summary["reduction"] is not None
        assert r.summary["reduction"]["kind"] in ("Routh", "Chaplygin")
    else:
        assert cli_summary["reduction"] is None


#: Model files (with walls, nonholonomic, composed, one of the run-time
#: core's larger sizes, backward) with the options they take.
FILE_CASES = [
    ("ellipse", {}),
    ("sleigh", {}),
    ("double-pendulum", {"order": 4}),
    ("three-sleighs", {"backward": True}),
    ("particle", {"backward": True}),
]


@pytest.mark.parametrize("name, options", FILE_CASES)
def test_model_file_python_equals_cli(cli, tmp_path, name, options):
    path = MODELS / f"{name}.toml"
    args = ["--model-file", str(path), "--t-end", "1"]
    if options.get("order"):
        args += ["--order", str(options["order"])]
    if options.get("backward"):
        args.append("--backward")
    r = diracvi.Model.from_file(path).scenario(t_end=1.0).run(**options)
    assert_equals_cli(cli, tmp_path, args, r)


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


#: A model file whose coordinates are named like fixed columns of the
#: output files (the impact-time fraction ``alpha``, ``t``, ``energy``).
CLASHING = """
[model]
name = "clash"
coordinates = ["alpha", "t", "energy"]
lagrangian = "0.5*(alpha_dot^2 + t_dot^2 + energy_dot^2)"
boundaries = ["0.95 - alpha"]

[run]
h = 0.1
t_end = 1.5

[initial]
q = [0.0, 0.0, 0.0]
v = [1.0, 2.0, 3.0]
"""


def test_to_pandas_columns_are_the_csv_headers(cli, tmp_path):
    """One naming (README "Output columns"): RunResult.to_pandas() has the
    trajectory CSV's columns and ImpactTable.to_pandas() the impacts CSV's,
    with the same numbers, for coordinates named like fixed columns."""
    pytest.importorskip("pandas")
    model = tmp_path / "clash.toml"
    model.write_text(CLASHING)
    out = tmp_path / "clash.csv"
    proc = subprocess.run(
        [str(cli), "run", "--model-file", str(model), "--out", str(out), "-q"],
        capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stderr
    r = diracvi.scenario(diracvi.Model.from_file(str(model))).run()
    for path, df in ((out, r.to_pandas()), (tmp_path / "clash.impacts.csv", r.impacts.to_pandas())):
        lines = path.read_text().splitlines()
        header = lines[0].split(",")
        assert list(df.columns) == header, path.name
        rows = [[float(x) for x in line.split(",")] for line in lines[1:]]
        assert len(rows) == len(df)
        assert bits(rows) == bits(df.to_numpy(dtype=float)), path.name
    assert list(r.to_pandas().columns) == [
        "k", "t", "q_alpha", "q_t", "q_energy", "p_alpha", "p_t", "p_energy",
        "energy", "constraint_residual",
    ]
    imp = r.impacts.to_pandas()
    assert list(imp.columns[:5]) == ["step", "alpha", "t", "piece", "q_alpha"]
    # the impact-time fraction (0.5: alpha = 0.95 half-way through the step
    # 0.9 -> 1.0) and the coordinate alpha (0.95) are different columns
    assert len(imp) == 1
    assert imp["alpha"][0] == pytest.approx(0.5, abs=1e-9)
    assert imp["q_alpha"][0] == pytest.approx(0.95, abs=1e-9)


@pytest.mark.parametrize("model", ["pendulum", "ellipse"])
def test_start_from_momentum_equals_cli_start_p(cli, tmp_path, model):
    """A round trip: forward to t = 2, then back from the final (q, p) with
    `Scenario.start_from_momentum` and `run(backward=True)`, equals
    `diracvi run --set q=… --start-p … --backward` bit for bit (the velocity
    solved, the multipliers, records, impacts, summary), and returns near
    the initial configuration."""
    # the midpoint maps: the (-) step undoes the (+) step
    sc = diracvi.scenario(model, t_end=2.0, discretization="midpoint", constraint="midpoint")
    fwd = sc.run(every=0)
    q_n, p_n = fwd.summary["final_state"]["q"], fwd.summary["final_state"]["p"]
    back_sc, nu = sc.start_from_momentum(q_n, p_n)
    assert back_sc.q == q_n
    r = back_sc.run(backward=True)
    listed = lambda xs: ",".join(repr(float(x)) for x in xs)  # noqa: E731
    args = [model, "--t-end", "2", "--backward", "--set", f"q={listed(q_n)}",
            "--start-p", listed(p_n), "--discretization", "midpoint", "--constraint", "midpoint"]
    c = assert_equals_cli(cli, tmp_path, args, r)
    assert bits(back_sc.v) == bits(c["start"]["v"])
    assert bits(nu) == bits(c["start"]["multipliers"])
    assert len(nu) == (1 if model == "pendulum" else 0)
    assert np.max(np.abs(np.asarray(r.summary["final_state"]["q"]) - sc.q)) < 1e-9


def test_start_from_momentum_refusals():
    sc = diracvi.scenario("pendulum")
    with pytest.raises(diracvi.ModelError, match="p"):
        sc.start_from_momentum(sc.q, [0.1])
    with pytest.raises(diracvi.ModelError):
        diracvi.scenario("lc-ladder").start_from_momentum([0.0], [0.0])
