"""A model written in Rust, in Python: the bowl of examples/own-model
exposed by its own extension module `diracvi_bowl` (built on
`diracvi_python::own`; the README's Python steps install it) runs like the
same model as a model file through the command-line program, ensembles
equal their members, and bad input raises the documented errors."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

import diracvi
import diracvi_bowl
from test_cli_equivalence import assert_equals_cli, bits

BOWL = Path(__file__).resolve().parents[2] / "examples" / "own-model" / "bowl.toml"


@pytest.mark.parametrize(
    "overrides, run, cli_args",
    [
        ({}, {}, []),
        ({"params": {"R": 1.2, "g": 3.5}, "v": [0.5, -2.0], "discretization": "forward"}, {},
         ["--set", "R=1.2", "--set", "g=3.5", "--set", "v=[0.5, -2.0]",
          "--set", "discretization=forward"]),
        ({}, {"order": 4}, ["--order", "4"]),
        ({"t_end": 1.0}, {"backward": True, "jacobian": True},
         ["--set", "t_end=1.0", "--backward", "--jacobian"]),
        ({}, {"stepper": "hamiltonian"}, ["--stepper", "hamiltonian"]),
    ],
)
def test_rust_model_equals_its_model_file_on_the_cli(cli, tmp_path, overrides, run, cli_args):
    r = diracvi_bowl.scenario(**overrides).run(**run)
    assert isinstance(r, diracvi.RunResult)
    assert r.model == "bowl" and r.coordinates == ["x", "y"]
    cli_summary = assert_equals_cli(cli, tmp_path, ["--model-file", str(BOWL), *cli_args], r)
    assert cli_summary["impacts"] >= 1
    if run.get("jacobian"):
        assert r.jacobian.shape == (4, 4)
        assert bits(r.jacobian) == bits(cli_summary["jacobian"]["matrix"])


def test_tol_chooses_the_cli_order_and_step(cli, tmp_path):
    r = diracvi_bowl.scenario().run(tol=1e-7)
    t = r.summary["tolerance"]
    assert t["requested"] == 1e-7 and t["error_estimate"] <= 1e-7 and t["pilot_runs"] >= 3
    assert r.summary["steps"] == t["chosen_steps"] and r.summary["h"] != 1e-3
    out = tmp_path / "run.json"
    proc = subprocess.run(
        [str(cli), "run", "--model-file", str(BOWL), "--tol", "1e-7", "--out", str(out),
         "--summary", "json", "-q"],
        capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stderr
    c = json.loads(proc.stdout)
    for s in (c, r.summary):
        s.pop("wall_time_s"), s["tolerance"].pop("pilot_wall_time_s")
        for key in ("out", "plot", "animate", "poster", "start"):
            s.pop(key, None)
    assert r.summary == c
    recs = json.loads(out.read_text())["records"]
    assert bits([x["q"] for x in recs]) == bits(r.q)


def test_scenario_keys_and_parameters():
    sc = diracvi_bowl.scenario()
    assert (sc.model, sc.h, sc.t_end, sc.discretization) == ("bowl", 1e-3, 3.0, "midpoint")
    assert sc.params == {"m": 1.0, "g": 9.8, "R": 1.0}
    assert sc.q == [0.0, 0.0] and sc.v == [1.5, 0.5]
    assert sc.coordinates == ["x", "y"]
    other = sc.replace(params={"R": 2.0}, q=np.array([0.1, 0.2]), h=2e-3)
    assert other.params["R"] == 2.0 and other.q == [0.1, 0.2] and other.h == 2e-3
    # The original is unchanged.
    assert sc.params["R"] == 1.0 and sc.h == 1e-3
    # The wall of the x–y panel is the rim of the bowl the run used.
    assert other.run().walls == [{"kind": "circle", "center": [0.0, 0.0], "radius": 2.0}]


def test_ensemble_equals_its_members_run_one_by_one():
    sc = diracvi_bowl.scenario(t_end=1.5)
    overrides = [{"R": 1.0}, {"R": 1.5, "v": [2.0, 0.0]}, {"g": 1.0}, {"h": 5e-4}]
    e = diracvi.ensemble(sc, overrides, keep=["final_state", "impacts", "summary", "trajectory"],
                         threads=2)
    assert isinstance(e, diracvi.EnsembleResult)
    assert e.model == "bowl" and len(e) == 4
    for i, o in enumerate(overrides):
        params = {k: v for k, v in o.items() if k in ("R", "g")}
        rest = {k: v for k, v in o.items() if k not in params}
        one = sc.replace(params=params, **rest).run()
        assert e.impact_counts[i] == len(one.impacts) >= 1
        assert bits(e.final_q[i]) == bits(one.final_state["q"])
        assert bits(e.final_p[i]) == bits(one.final_state["p"])
        assert bits(e.impacts[i].t) == bits(one.impacts.t)
        assert bits(e.results[i].q) == bits(one.q)
        s, t = dict(e.summaries[i]), dict(one.summary)
        s.pop("wall_time_s"), t.pop("wall_time_s")
        assert s == t
    # A failing member raises the runner's error with its index.
    with pytest.raises(diracvi.ModelError, match="run 1: ") as info:
        diracvi.ensemble(sc, [{}, {"q": [2.0, 0.0]}, {}])
    assert info.value.run_index == 1


def test_bad_input_raises_the_documented_errors():
    sc = diracvi_bowl.scenario()
    with pytest.raises(TypeError, match="'h' must be a number"):
        sc.replace(h="x")
    with pytest.raises(TypeError, match="params must be a dict"):
        sc.replace(params=5)
    with pytest.raises(ValueError, match="unknown key 'zz'"):
        sc.replace(params={"zz": 1.0})
    with pytest.raises(ValueError, match="parameter 'R' = -1: must be a finite number > 0"):
        diracvi_bowl.scenario(params={"R": -1.0})
    with pytest.raises(ValueError, match="q has 3 entries, the model has 2 coordinates"):
        sc.replace(q=[0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="h must be a finite number > 0"):
        sc.replace(h=0.0)
    with pytest.raises(ValueError, match="unknown discretization 'euler'"):
        sc.replace(discretization="euler")
    with pytest.raises(ValueError, match="tol = 1e-6 chooses the order and the step"):
        sc.run(tol=1e-6, order=4)
    with pytest.raises(ValueError, match="order must be 2, 4 or 6"):
        sc.run(order=3)
    with pytest.raises(ValueError, match="run 1: .*unknown key 'zz'"):
        diracvi.ensemble(sc, [{}, {"zz": 1.0}])
    with pytest.raises(TypeError, match="keyword arguments only"):
        diracvi_bowl.scenario(1e-3)
    # An initial state outside the bowl is the runner's ModelError.
    with pytest.raises(diracvi.ModelError):
        sc.replace(q=[2.0, 0.0]).run()


def test_plot_draws_the_rim():
    pytest.importorskip("matplotlib")
    r = diracvi_bowl.scenario(params={"R": 1.5}).run()
    fig = r.plot()
    xy = fig.axes[-1]
    assert xy.get_xlabel() == "x" and xy.get_ylabel() == "y"
    # The rim: a line of radius 1.5 about the origin in the wall colour.
    rims = [ln for ln in xy.get_lines() if len(ln.get_xdata()) == 257]
    assert len(rims) == 1
    radius = np.hypot(rims[0].get_xdata(), rims[0].get_ydata())
    assert radius == pytest.approx(1.5, rel=1e-14)


def test_a_rust_scenario_pickles_through_its_module():
    import copy
    import pickle

    sc = diracvi_bowl.scenario(params={"R": 1.3}, q=[0.1, -0.2], v=[1.0, 0.7], h=2e-3,
                               t_end=1.5, discretization="forward")
    back = pickle.loads(pickle.dumps(sc))
    assert type(back) is type(sc)
    assert (back.params, back.q, back.v, back.h, back.t_end, back.discretization) == (
        sc.params, sc.q, sc.v, sc.h, sc.t_end, sc.discretization)
    a, b = sc.run(), back.run()
    assert len(a.impacts) >= 1
    assert bits(a.q) == bits(b.q) and bits(a.p) == bits(b.p)
    assert bits(copy.deepcopy(sc).run().q) == bits(a.q)
    # Its results pickle with their walls.
    r = pickle.loads(pickle.dumps(a))
    assert r.walls == a.walls and bits(r.q) == bits(a.q)


def _cli_orbit(cli, *extra):
    """`diracvi periodic` of bowl.toml from rest at (0, -0.5), section at
    the wall, with the options `extra`; its JSON summary."""
    args = [str(cli), "periodic", "--model-file", str(BOWL), "--section", "0",
            "--summary", "json", "--set", "q=0,-0.5", "--set", "v=0,0", *extra]
    proc = subprocess.run(args, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_periodic_orbits_and_their_continuation_equal_the_cli(cli):
    # The ball dropped from rest half a radius below the centre bounces on
    # the bottom of the bowl: a periodic orbit at its impacts, stable (it
    # falls from below the centre of curvature), its nontrivial multipliers
    # a pair on the unit circle.
    sc = diracvi_bowl.scenario(q=[0.0, -0.5], v=[0.0, 0.0])
    o = diracvi.periodic_orbit(sc, section=0)
    c = _cli_orbit(cli)
    for key in ("fixed_point", "multipliers", "period", "residual", "stability", "monodromy"):
        assert o.summary[key] == c[key], key
    assert o.residual <= 1e-12 and o.stability == "stable"
    pair = o.multipliers[[k == "nontrivial" for k in o.kinds]]
    assert len(pair) == 2 and np.abs(pair) == pytest.approx([1.0, 1.0], abs=1e-8)
    np.testing.assert_allclose(o.q, [0.0, -1.0], atol=1e-12)
    # A plain run from the fixed point returns to it at its first impact.
    r = sc.replace(q=list(o.q), v=list(o.v), t_end=o.period + 0.1).run(every=0)
    np.testing.assert_allclose(r.impacts.q[0], o.q, rtol=0, atol=1e-12)
    np.testing.assert_allclose(r.impacts.p_after[0], o.p, rtol=0, atol=1e-12)
    # Along the radius: the branch is the CLI's `--continue R=0.8:1.2:3`.
    b = diracvi.continue_orbit(sc, "R", [0.8, 1.0, 1.2], section=0)
    assert b.stopped is None and len(b.orbits) == 3
    assert all(x.residual <= 1e-12 and x.stability == "stable" for x in b.orbits)
    c = _cli_orbit(cli, "--continue", "R=0.8:1.2:3")
    points = c["points"]
    assert len(points) == 3
    for x, point in zip(b.orbits, points):
        for key in ("fixed_point", "multipliers", "period"):
            assert x.summary[key] == point["orbit"][key], key
    with pytest.raises(diracvi.ModelError, match="continuation is in a model parameter"):
        diracvi.continue_orbit(sc, "h", [1e-3, 2e-3], section=0)
    with pytest.raises(diracvi.ModelError):
        diracvi.periodic_orbit(sc, section="no such wall")
