"""``order=4|6``: the composed methods through impacts (docs/theory.md §9),
measured against the independent reference of the pendulum in the cylinder."""

from __future__ import annotations

import pytest

import diracvi
from diracvi import ModelError

# `diracvi_models::reference::NonholonomicPendulumReference` (a 30th-order
# Taylor integrator with event location, independent of the steppers): the
# three impact times on [0, 5] and θ(5) with the paper's data.
IMPACTS = [1.2326015969617883, 2.5485206497568043, 3.8644397025518202]
THETA_5 = 2.436681453776506


def error(r):
    s = r.summary
    assert s["impacts"] == 3
    t_err = max(abs(a - b) for a, b in zip(s["impact_times"], IMPACTS))
    return max(t_err, abs(s["final_state"]["q"][0] - THETA_5))


def test_higher_orders_are_more_accurate_at_the_same_step():
    sc = diracvi.scenario("pendulum", h=1e-2, t_end=5, discretization="midpoint",
                          constraint="midpoint")
    runs = {order: sc.run(order=order, every=0) for order in (2, 4, 6)}
    errs = {order: error(r) for order, r in runs.items()}
    for order, r in runs.items():
        assert r.summary["order"] == order
    # Measured: 4.6e-4, 1.1e-5, 1.2e-9 (README "Work-precision").
    assert errs[2] < 1e-3
    assert errs[4] < errs[2] / 20
    assert errs[6] < errs[4] / 1000
    assert errs[6] < 5e-9


def test_order_is_checked_and_ensembles_agree():
    sc = diracvi.scenario("pendulum", h=2e-2, t_end=2)
    with pytest.raises(ValueError, match="order must be 2, 4 or 6"):
        sc.run(order=3)
    with pytest.raises(ModelError) as info:
        sc.run(stepper="hamiltonian", order=4)
    assert info.value.kind == "UnsupportedOrder"
    one = sc.run(order=6, every=0)
    ens = diracvi.ensemble(sc, [{}, {"h": 1e-2}], order=6, keep="summary")
    assert ens.summaries[0]["order"] == 6
    assert ens.summaries[0]["final_state"] == one.summary["final_state"]
    assert ens.summaries[0]["impact_times"] == one.summary["impact_times"]
