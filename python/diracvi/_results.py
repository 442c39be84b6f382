"""Results of runs and ensembles: plain data (numpy arrays, lists, dicts), so
they pickle (e.g. to and from Dask workers). diracvi computes everything in
Rust; these classes only hold and present the numbers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

__all__ = ["ImpactTable", "RunResult", "EnsembleResult"]


def _pandas():
    try:
        import pandas as pd
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("to_pandas() needs pandas: pip install pandas") from e
    return pd


@dataclass(frozen=True, eq=False)
class ImpactTable:
    """Every impact of a run, one row per impact, in order.

    Attributes: ``step`` (int64, the grid step containing the impact),
    ``t`` (impact time), ``alpha`` (impact-time fraction of the step, in
    [0, 1]), ``piece`` (int64, boundary piece hit), ``q`` (impact point,
    shape (m, n)), ``p_before`` / ``p_after`` (momenta, shape (m, n)),
    ``energy_before`` / ``energy_after`` (discrete energies), and
    ``coordinates`` (the n coordinate names).
    """

    step: np.ndarray
    t: np.ndarray
    alpha: np.ndarray
    piece: np.ndarray
    q: np.ndarray
    p_before: np.ndarray
    p_after: np.ndarray
    energy_before: np.ndarray
    energy_after: np.ndarray
    coordinates: Sequence[str] = ()

    def __len__(self) -> int:
        return len(self.t)

    def __repr__(self) -> str:
        return f"ImpactTable({len(self)} impacts)"

    def to_pandas(self):
        """The table as a ``pandas.DataFrame`` (columns ``step, t, alpha,
        piece, q_<name>..., p_before_<name>..., p_after_<name>...,
        energy_before, energy_after``). Needs pandas."""
        pd = _pandas()
        names = _names(self.coordinates, self.q.shape[1] if self.q.ndim == 2 else 0)
        cols: Dict[str, Any] = {
            "step": self.step,
            "t": self.t,
            "alpha": self.alpha,
            "piece": self.piece,
        }
        for prefix, arr in (("q", self.q), ("p_before", self.p_before), ("p_after", self.p_after)):
            for i, name in enumerate(names):
                cols[f"{prefix}_{name}"] = arr[:, i]
        cols["energy_before"] = self.energy_before
        cols["energy_after"] = self.energy_after
        return pd.DataFrame(cols)


def _names(coordinates: Sequence[str], n: int) -> List[str]:
    if len(coordinates) == n:
        return list(coordinates)
    return [str(i) for i in range(n)]


@dataclass(frozen=True, eq=False)
class RunResult:
    """One run: the recorded steps (every ``every``-th step and the last),
    the impacts and the summary over every step.

    Attributes: ``model``, ``coordinates`` (names of the n coordinates),
    ``k`` (int64 step indices), ``t`` (times), ``q`` and ``p`` (shape
    (records, n)), ``energy`` (discrete energy of the step ending at each
    record), ``constraint_residual``, ``impacts`` (an :class:`ImpactTable`)
    and ``summary`` (a dict with the keys of the CLI's ``--summary json``:
    ``model, coordinates, discretization, constraint, stepper, order,
    direction, h, steps, t_end, impacts, impact_times, energy{initial, final,
    max_abs_deviation, scale, max_relative_deviation},
    constraint_residual_max, final_state{t, q, p}, statistics{...},
    wall_time_s``; ``order``, the method's order 2, 4 or 6, is not in the
    CLI's summary).
    """

    model: str
    coordinates: List[str]
    k: np.ndarray
    t: np.ndarray
    q: np.ndarray
    p: np.ndarray
    energy: np.ndarray
    constraint_residual: np.ndarray
    impacts: ImpactTable
    summary: Dict[str, Any]

    @property
    def final_state(self) -> Dict[str, Any]:
        """``{"t": float, "q": list, "p": list}``: the state after the last step."""
        return self.summary["final_state"]

    def __repr__(self) -> str:
        s = self.summary
        return (
            f"RunResult(model={self.model!r}, steps={s['steps']}, records={len(self.t)}, "
            f"impacts={len(self.impacts)}, final t={s['final_state']['t']!r})"
        )

    def to_pandas(self):
        """The recorded steps as a ``pandas.DataFrame`` (columns ``k, t,
        q_<name>..., p_<name>..., energy, constraint_residual``). Needs
        pandas."""
        pd = _pandas()
        names = _names(self.coordinates, self.q.shape[1])
        cols: Dict[str, Any] = {"k": self.k, "t": self.t}
        for prefix, arr in (("q", self.q), ("p", self.p)):
            for i, name in enumerate(names):
                cols[f"{prefix}_{name}"] = arr[:, i]
        cols["energy"] = self.energy
        cols["constraint_residual"] = self.constraint_residual
        return pd.DataFrame(cols)


@dataclass(frozen=True, eq=False)
class EnsembleResult:
    """The runs of :func:`diracvi.ensemble`, in the order of the overrides.

    Always present: ``model``, ``coordinates``, ``keep`` (the selectors
    used) and ``impact_counts`` (int64, one per run). The others are
    ``None`` unless selected by ``keep``:

    * ``"final_state"``: ``final_t`` (runs,), ``final_q``, ``final_p``
      (runs, n);
    * ``"impact_times"``: ``impact_times``, one float array per run;
    * ``"impacts"``: ``impacts``, one :class:`ImpactTable` per run;
    * ``"summary"``: ``summaries``, one summary dict per run (as
      :attr:`RunResult.summary`);
    * ``"trajectory"``: ``results``, one full :class:`RunResult` per run
      (memory grows with the steps: use ``every``).
    """

    model: str
    coordinates: List[str]
    keep: List[str]
    impact_counts: np.ndarray
    final_t: Optional[np.ndarray] = None
    final_q: Optional[np.ndarray] = None
    final_p: Optional[np.ndarray] = None
    impact_times: Optional[List[np.ndarray]] = None
    impacts: Optional[List[ImpactTable]] = None
    summaries: Optional[List[Dict[str, Any]]] = None
    results: Optional[List[RunResult]] = field(default=None)

    def __len__(self) -> int:
        return len(self.impact_counts)

    def __repr__(self) -> str:
        return f"EnsembleResult(model={self.model!r}, runs={len(self)}, keep={self.keep!r})"
