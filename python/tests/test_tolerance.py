"""``tol=``: accuracy on request (docs/theory.md §13), against the
independent Taylor reference of the pendulum in the cylinder."""

from __future__ import annotations

import pytest

import diracvi

# `diracvi_models::reference::NonholonomicPendulumReference` (as test_order.py).
IMPACTS = [1.2326015969617883, 2.5485206497568043, 3.8644397025518202]
THETA_5 = 2.436681453776506


def error(s):
    assert s["impacts"] == 3
    t_err = max(abs(a - b) for a, b in zip(s["impact_times"], IMPACTS))
    return max(t_err, abs(s["final_state"]["q"][0] - THETA_5))


@pytest.mark.parametrize("tol", [1e-4, 1e-7, 1e-9])
def test_the_error_follows_the_tolerance(tol):
    r = diracvi.scenario("pendulum").run(tol=tol, every=0)
    s = r.summary
    t = s["tolerance"]
    assert t["requested"] == tol
    assert t["chosen_order"] == s["order"]
    assert t["chosen_steps"] == s["steps"]
    assert error(s) <= 10 * tol


def test_ensembles_and_scenarios_pass_it_through():
    sc = diracvi.scenario("pendulum", t_end=2)
    one = sc.run(tol=1e-8, every=0)
    ens = diracvi.ensemble(sc, [{}, {"tol": 1e-8}], tol=1e-8)
    assert ens.summaries[0]["tolerance"]["chosen_h"] == one.summary["tolerance"]["chosen_h"]
    assert ens.summaries[0]["final_state"] == one.summary["final_state"]
    # per-run tol (set like h), which h overrides
    ens = diracvi.ensemble(sc, [{"tol": 1e-8}, {"tol": 1e-8, "h": 0.01}])
    assert ens.summaries[0]["tolerance"]["requested"] == 1e-8
    assert ens.summaries[1]["tolerance"] is None


def test_tol_excludes_steps_and_order():
    sc = diracvi.scenario("pendulum", t_end=1)
    with pytest.raises(ValueError, match="tol"):
        sc.run(tol=1e-6, steps=10)
    with pytest.raises(ValueError, match="tol"):
        sc.run(tol=1e-6, order=4)
    with pytest.raises(ValueError, match="tol"):
        sc.run(tol=-1.0)
