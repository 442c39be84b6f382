"""Impact counts of the bouncing ellipse under 1e-6 perturbations of the
initial angle: a sweep distributed with dask.distributed.

The bouncing ellipse of [VCI] §4.2 (q(0) = (π/2, 0, 3.5), v(0) = (−3, 2, 0),
midpoint L_d, h = 1e-2, 25 s) is chaotic: changing the initial angle θ(0) by
one part in a million changes how often it hits the floor. The published
count is one draw of a distribution; this example computes the distribution.

Each Dask task runs one chunk of the sweep with ``diracvi.ensemble`` (Rust,
all the worker's cores, GIL released); scenarios travel to the workers and
results come back by pickling. The same code runs on

* this machine (``--cluster local``, a ``LocalCluster``; the default),
* an existing scheduler (``--scheduler tcp://host:8786``),
* a SLURM cluster with dask-jobqueue (``--cluster slurm``, e.g.
  ``--jobs 8 --cores 32 --memory 16GB --walltime 00:30:00``; every job's
  Python environment must have diracvi installed: ``pip install ./python``).

Run: ``python python/examples/dask_ellipse.py --runs 1000``. The tests
(``python/tests/test_dask_example.py``) check that the Dask sweep gives the
same histogram as a local ``diracvi.ensemble``.
"""

from __future__ import annotations

import argparse
import math
from typing import Dict, List, Optional, Sequence

import numpy as np

import diracvi

#: Half-width of the perturbation of θ(0) (rad).
EPSILON = 1e-6


def base_scenario(t_end: float = 25.0) -> diracvi.Scenario:
    """The paper's ellipse run (defaults: h = 1e-2, midpoint), ``t_end`` s."""
    return diracvi.scenario("ellipse", t_end=t_end)


def perturbations(base: diracvi.Scenario, runs: int, seed: int = 0, epsilon: float = EPSILON) -> List[dict]:
    """``runs`` overrides ``{"q": [θ0 + δ, x0, y0]}`` with δ uniform in
    [−ε, ε] (seeded, so every sweep sees the same draws)."""
    rng = np.random.default_rng(seed)
    theta0, *rest = base.q
    return [{"q": [theta0 + float(d), *rest]} for d in rng.uniform(-epsilon, epsilon, runs)]


def histogram(counts: Sequence[int]) -> Dict[int, int]:
    """``{impact count: number of runs}``, sorted by count."""
    values, freq = np.unique(np.asarray(counts, dtype=np.int64), return_counts=True)
    return {int(v): int(f) for v, f in zip(values, freq)}


def impact_counts_local(base: diracvi.Scenario, overrides: List[dict], threads: Optional[int] = None) -> np.ndarray:
    """The impact count of every run, with one local ``diracvi.ensemble``."""
    return diracvi.ensemble(base, overrides, keep=("impact_times",), threads=threads).impact_counts


def impact_counts_dask(
    client,
    base: diracvi.Scenario,
    overrides: List[dict],
    chunk: int = 250,
    threads: Optional[int] = None,
) -> np.ndarray:
    """The impact count of every run, in order, with one Dask task per
    ``chunk`` runs: each task is ``diracvi.ensemble`` on a worker (the
    scenario is pickled to it, the ``EnsembleResult`` back), keeping only the
    impact times so that little crosses the network."""
    chunks = [overrides[i : i + chunk] for i in range(0, len(overrides), chunk)]
    futures = [
        client.submit(
            diracvi.ensemble,
            base,
            part,
            keep=("impact_times",),
            threads=threads,
            pure=False,
        )
        for part in chunks
    ]
    results = client.gather(futures)
    return np.concatenate([r.impact_counts for r in results]) if results else np.zeros(0, np.int64)


def make_client(args):
    """A Dask client for ``--cluster local|slurm`` or ``--scheduler``."""
    from dask.distributed import Client

    if args.scheduler:
        return Client(args.scheduler), None
    if args.cluster == "slurm":
        from dask_jobqueue import SLURMCluster  # pip install dask-jobqueue

        cluster = SLURMCluster(
            cores=args.cores,
            processes=1,  # one worker process per job; diracvi uses the job's cores
            memory=args.memory,
            walltime=args.walltime,
        )
        cluster.scale(jobs=args.jobs)
        return Client(cluster), cluster
    from dask.distributed import LocalCluster

    cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True)
    return Client(cluster), cluster


def main(argv: Optional[Sequence[str]] = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=1000, help="number of perturbed runs")
    p.add_argument("--t-end", type=float, default=25.0, help="end time (s)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--chunk", type=int, default=250, help="runs per Dask task")
    p.add_argument("--cluster", choices=["local", "slurm"], default="local")
    p.add_argument("--scheduler", help="address of a running Dask scheduler")
    p.add_argument("--workers", type=int, default=2, help="LocalCluster workers")
    p.add_argument("--jobs", type=int, default=4, help="SLURM jobs")
    p.add_argument("--cores", type=int, default=32, help="cores per SLURM job")
    p.add_argument("--memory", default="16GB", help="memory per SLURM job")
    p.add_argument("--walltime", default="00:30:00", help="SLURM walltime")
    args = p.parse_args(argv)

    base = base_scenario(args.t_end)
    overrides = perturbations(base, args.runs, args.seed)
    client, cluster = make_client(args)
    # LocalCluster: one thread per worker process; a cluster job uses its cores.
    threads = 1 if (args.cluster == "local" and not args.scheduler) else None
    try:
        counts = impact_counts_dask(client, base, overrides, args.chunk, threads)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    published = base.run(every=0).summary["impacts"]
    hist = histogram(counts)
    print(f"bouncing ellipse, {args.runs} runs of {args.t_end} s, θ(0) = π/2 ± {EPSILON:g}")
    print(f"unperturbed run: {published} impacts")
    width = max(hist.values())
    for count, n in hist.items():
        bar = "#" * max(1, math.ceil(40 * n / width))
        print(f"{count:4d} impacts: {n:6d} runs  {bar}")
    print(f"mean {np.mean(counts):.3f}, std {np.std(counts):.3f}")


if __name__ == "__main__":
    main()
