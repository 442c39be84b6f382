"""RunResult.plot(): the panels of the CLI's --plot as a matplotlib Figure,
and a clear ImportError when matplotlib is missing."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import diracvi


def test_plot_without_matplotlib_raises_an_import_error_naming_it(monkeypatch):
    r = diracvi.scenario("particle", t_end=0.1).run()
    # `import matplotlib.figure` fails as when it is not installed.
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(ImportError, match="plot\\(\\) needs matplotlib.*pip install matplotlib"):
        r.plot()


def _axes(fig):
    return [ax for ax in fig.axes if ax.get_visible()]


def test_default_panels_of_a_planar_model():
    pytest.importorskip("matplotlib")
    r = diracvi.scenario("particle", t_end=3).run()
    fig = r.plot()
    axes = _axes(fig)
    # energy, x, y against time; the x–y path.
    assert [ax.get_ylabel() for ax in axes] == ["E − E₀", "x", "y", "y"]
    assert [ax.get_xlabel() for ax in axes] == ["t (s)", "t (s)", "t (s)", "x"]
    n = len(r.impacts)
    assert n >= 2
    # One red vertical line per impact in every time panel, at the impact time.
    for ax in axes[:3]:
        red = [ln for ln in ax.get_lines() if ln.get_color() == "#D62728"]
        assert len(red) == n
        assert sorted(ln.get_xdata()[0] for ln in red) == pytest.approx(sorted(r.impacts.t))
    # The path is the recorded (x, y), the impact points are marked.
    path = axes[3].get_lines()[0]
    assert np.array_equal(path.get_xdata(), r.q[:, 0])
    assert np.array_equal(path.get_ydata(), r.q[:, 1])
    hits = axes[3].get_lines()[2]
    assert np.array_equal(hits.get_xdata(), r.impacts.q[:, 0])
    assert f"{n} impacts" in fig.get_suptitle()


def test_optional_panels_flat_series_and_refusals(tmp_path):
    pytest.importorskip("matplotlib")
    r = diracvi.scenario("pendulum", t_end=1).run()
    fig = r.plot(["phase", "residual", "momenta", "coords"], file=str(tmp_path / "p.svg"))
    labels = [ax.get_ylabel() for ax in _axes(fig)]
    assert labels == ["theta", "phi", "p_theta", "p_phi", "log₁₀ |residual|", "p_theta", "p_phi"]
    svg = (tmp_path / "p.svg").read_text()
    assert svg.lstrip().startswith("<?xml") and "</svg>" in svg
    # A flat coordinate (x without horizontal velocity) gets −1..1 about 0.
    flat = diracvi.scenario("particle", t_end=1, v=[0.0, 0.0]).run()
    x_axis = _axes(flat.plot(["coords"]))[0]
    assert x_axis.get_ylim() == (-1.0, 1.0)
    with pytest.raises(ValueError, match="unknown panel 'bogus'"):
        r.plot(["coords", "bogus"])
    with pytest.raises(ValueError, match="panel 'xy': model 'lc' has no coordinates named x and y"):
        diracvi.scenario("lc").run(steps=10).plot(["xy"])


WALL = "#604020"
MODELS = __import__("pathlib").Path(__file__).resolve().parents[2] / "models"

# A particle in the disk x² + y² <= R², the rim declared as a circle of the
# drawing (and the zero set of its piece left out: boundaries = []).
BILLIARD = """
[model]
name = "billiard"
description = "a free particle in a circular table"
coordinates = ["x", "y"]
lagrangian = "0.5*m*(x_dot^2 + y_dot^2)"
constraints = []
boundaries = ["R^2 - x^2 - y^2"]

[parameters]
m = 1.0
R = 2.0

[run]
h = 1e-2
t_end = 4.0

[initial]
q = [0.0, 0.5]
v = [1.0, 0.3]

[drawing]
boundaries = []

[[drawing.walls]]
kind = "circle"
x = 0.0
y = 0.0
r = "R"

[[drawing.body]]
kind = "point"
x = "x"
y = "y"
"""

FREE = """
[model]
name = "free"
description = "a free particle: no walls"
coordinates = ["x", "y"]
lagrangian = "0.5*(x_dot^2 + y_dot^2)"
constraints = []

[run]
h = 1e-2
t_end = 1.0

[initial]
q = [0.0, 0.0]
v = [1.0, 0.5]
"""


def _walls_of(ax):
    return [ln for ln in ax.get_lines() if ln.get_color() == WALL]


def _xy_axes(fig):
    return next(ax for ax in _axes(fig) if ax.get_title().startswith("path in the x–y plane"))


def test_the_xy_panel_draws_the_walls_the_cli_draws():
    pytest.importorskip("matplotlib")
    # A catalogued model: its drawing's floor y = 0, a line across the view.
    r = diracvi.scenario("particle", t_end=2).run()
    assert r.walls == [{"kind": "line", "point": [0.0, 0.0], "direction": [1.0, 0.0]}]
    ax = _xy_axes(r.plot())
    assert ax.get_title() == "path in the x–y plane, walls in brown"
    (floor,) = _walls_of(ax)
    # The path is still the first line, the walls come below it.
    assert np.array_equal(ax.get_lines()[0].get_xdata(), r.q[:, 0])
    assert floor.get_zorder() < ax.get_lines()[0].get_zorder()

    # A model file's [[drawing.walls]] (its piece depends on theta, so its
    # zero set is not drawn in the x–y plane): the floor.
    e = diracvi.scenario(diracvi.Model.from_file(MODELS / "ellipse.toml"), t_end=2).run()
    assert [w["kind"] for w in e.walls] == ["line"]
    assert len(_walls_of(_xy_axes(e.plot()))) == 1

    # A circle of the drawing: the rim, radius R, around the whole path.
    b = diracvi.scenario(diracvi.Model.from_toml(BILLIARD)).run()
    assert len(b.impacts) >= 1
    assert b.walls == [{"kind": "circle", "center": [0.0, 0.0], "radius": 2.0}]
    (rim,) = _walls_of(_xy_axes(b.plot(["xy"])))
    x, y = rim.get_xdata(), rim.get_ydata()
    assert np.allclose(np.hypot(x, y), 2.0)
    assert x.min() == pytest.approx(-2.0) and x.max() == pytest.approx(2.0)

    # The sleigh's arena (R = 2): the zero set of its piece over x and y,
    # sampled around the path into a polyline on the circle.
    s = diracvi.scenario(diracvi.Model.from_file(MODELS / "sleigh.toml"), t_end=12).run()
    assert len(s.impacts) >= 1
    (arena,) = s.walls
    assert arena["kind"] == "polyline" and len(arena["points"]) > 100
    points = np.asarray(arena["points"])
    assert np.allclose(np.hypot(points[:, 0], points[:, 1]), 2.0, rtol=1e-3)
    assert len(_walls_of(_xy_axes(s.plot()))) == 1


def test_a_model_without_walls_draws_none_and_results_pickle():
    pytest.importorskip("matplotlib")
    import pickle

    r = diracvi.scenario(diracvi.Model.from_toml(FREE)).run()
    assert r.walls == []
    ax = _xy_axes(r.plot(["xy"]))
    assert ax.get_title() == "path in the x–y plane"
    assert _walls_of(ax) == []
    # A model without x and y has no walls to draw in that plane.
    assert diracvi.scenario("pendulum", t_end=0.1).run().walls == []
    # The walls travel with the result.
    b = diracvi.scenario(diracvi.Model.from_toml(BILLIARD)).run()
    assert pickle.loads(pickle.dumps(b)).walls == b.walls


def test_walls_are_computed_on_first_access_and_survive_pickling():
    import pickle

    sleigh = diracvi.scenario(diracvi.Model.from_file(MODELS / "sleigh.toml"), t_end=12)
    # An ensemble keeping trajectories traces no wall: each member keeps
    # its scenario until `walls` is read.
    e = diracvi.ensemble(sleigh, [{}, {"m": 2.0}], keep="trajectory")
    for r in e.results:
        assert r._walls is None and r._walls_scenario is not None
    eager = diracvi.scenario(diracvi.Model.from_file(MODELS / "sleigh.toml"), t_end=12).run()
    first = e.results[0]
    # Pickled before the first access: computed after unpickling, equal.
    before = pickle.loads(pickle.dumps(first))
    assert before._walls is None
    walls = first.walls
    (arena,) = walls
    assert arena["kind"] == "polyline" and len(arena["points"]) > 100
    assert walls == eager.walls, "the member's walls are the single run's"
    assert before.walls == walls
    # Computed once, then kept (the same list), the scenario let go.
    assert first.walls is walls
    assert first._walls_scenario is None
    # Pickled after: the walls travel, nothing left to compute.
    after = pickle.loads(pickle.dumps(first))
    assert after._walls == walls and after._walls_scenario is None
    # The other member's walls come from its own run.
    assert [w["kind"] for w in e.results[1].walls] == ["polyline"]
    # No x and y (or a circuit): nothing to compute, nothing kept.
    p = diracvi.scenario("pendulum", t_end=0.1).run()
    assert p._walls == [] and p._walls_scenario is None and p.walls == []
    # repr and equality of the data are unchanged.
    assert "walls" not in repr(first)
