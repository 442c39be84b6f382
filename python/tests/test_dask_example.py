"""The Dask example: a sweep on a LocalCluster (worker processes, so
scenarios and results cross by pickling) gives the same histogram as the
local ensemble."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "dask_ellipse.py"


def load_example():
    spec = importlib.util.spec_from_file_location("dask_ellipse", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_dask_sweep_equals_local_ensemble():
    distributed = pytest.importorskip("distributed")
    ex = load_example()
    base = ex.base_scenario()  # the paper's 25 s
    overrides = ex.perturbations(base, 200, seed=1)
    thetas = np.array([o["q"][0] for o in overrides])
    assert np.all(np.abs(thetas - base.q[0]) <= ex.EPSILON) and len(np.unique(thetas)) == 200

    local = ex.impact_counts_local(base, overrides)
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, distributed.Client(cluster) as client:
        remote = ex.impact_counts_dask(client, base, overrides, chunk=50, threads=1)

    assert np.array_equal(remote, local)  # run by run, in order
    hist = ex.histogram(remote)
    assert hist == ex.histogram(local)
    assert sum(hist.values()) == 200
    # Chaos: a perturbation of 1e-6 rad changes the count.
    assert len(hist) >= 2, hist
    assert all(15 <= c <= 40 for c in hist), hist


def test_example_main_runs_locally(capsys):
    pytest.importorskip("distributed")
    ex = load_example()
    ex.main(["--runs", "20", "--t-end", "5", "--chunk", "10", "--workers", "1"])
    out = capsys.readouterr().out
    assert "unperturbed run:" in out and "20 runs of 5.0 s" in out
