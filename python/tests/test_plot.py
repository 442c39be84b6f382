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
