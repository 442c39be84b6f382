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
        """The table as a ``pandas.DataFrame`` with the columns of the CLI's
        impacts file ``STEM.impacts.csv``: ``step, alpha, t, piece,
        q_<name>..., p_before_<name>..., p_after_<name>..., energy_before,
        energy_after`` (README "Output columns"). Needs pandas."""
        pd = _pandas()
        n = self.q.shape[1] if self.q.ndim == 2 else len(self.coordinates)
        _, names = _columns(self.coordinates, n)
        arrays = [self.step, self.alpha, self.t, self.piece]
        for arr in (self.q, self.p_before, self.p_after):
            arrays.extend(arr[:, i] if arr.ndim == 2 else arr[:0] for i in range(n))
        arrays += [self.energy_before, self.energy_after]
        return pd.DataFrame(dict(zip(names, arrays)), columns=names)


_PANELS = ("energy", "coords", "momenta", "residual", "xy", "phase")
_MAX_COORDINATES = 9


def _figure_class():
    try:
        from matplotlib.figure import Figure
    except ImportError as e:
        raise ImportError(
            "RunResult.plot() needs matplotlib, which is not installed: "
            "pip install matplotlib"
        ) from e
    return Figure


def _shown(n: int) -> List[int]:
    """The coordinates drawn of n: all up to 9, else 9 evenly spread (first
    and last included), as the CLI's --plot."""
    if n <= _MAX_COORDINATES:
        return list(range(n))
    return [i * (n - 1) // (_MAX_COORDINATES - 1) for i in range(_MAX_COORDINATES)]


def _limits(values: np.ndarray, reference: float, zero_half: float):
    """The CLI's axis range: the finite values padded by 5 %; a series
    varying by less than 1e-9 of max(|values|, reference) is flat, drawn in
    a symmetric range of half-width max(0.1 |middle|, zero_half) about its
    middle (0 within 1e-9 reference)."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return (-zero_half, zero_half)
    lo, hi = float(v.min()), float(v.max())
    span = hi - lo
    if span > 1e-9 * max(abs(lo), abs(hi), reference):
        return (lo - 0.05 * span, hi + 0.05 * span)
    mid = 0.5 * (lo + hi)
    if abs(mid) <= 1e-9 * reference:
        mid = 0.0
    half = max(0.1 * abs(mid), zero_half)
    return (mid - half, mid + half)


def _columns(coordinates: Sequence[str], n: int):
    """The columns of the trajectory and impacts CSV files of coordinates
    named ``coordinates`` (n of them; names of another count become
    indices), computed by the same Rust function as the CLI's."""
    from . import _diracvi

    names = [str(c) for c in coordinates] if len(coordinates) == n else [""] * n
    return _diracvi.columns(names)


_WALL = "#604020"


def _draw_wall(ax, wall: Dict[str, Any]) -> None:
    """One wall shape of :attr:`RunResult.walls` on the axes of the x–y
    panel, in the CLI's wall colour, below the path: a line across the
    view, a circle, a polyline (closed or not), a dot."""
    kind = wall.get("kind")
    style = dict(color=_WALL, linewidth=2, zorder=1.5)
    if kind == "line":
        (x, y), (dx, dy) = wall["point"], wall["direction"]
        ax.axline((x, y), (x + dx, y + dy), **style)
    elif kind == "circle":
        (x, y), r = wall["center"], wall["radius"]
        s = np.linspace(0.0, 2.0 * np.pi, 257)
        ax.plot(x + r * np.cos(s), y + r * np.sin(s), **style)
    elif kind == "polyline":
        points = np.asarray(wall["points"], dtype=float).reshape(-1, 2)
        if wall.get("closed") and len(points):
            points = np.vstack([points, points[:1]])
        ax.plot(points[:, 0], points[:, 1], **style)
    elif kind == "dot":
        x, y = wall["point"]
        ax.plot([x], [y], "o", color=_WALL, markersize=3, zorder=1.5)


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
    CLI's summary) and :attr:`walls` (computed on first access).
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
    # The walls once computed (None: not yet), and the scenario they are
    # computed from until then (it pickles through its TOML).
    _walls: Optional[List[Dict[str, Any]]] = field(default=None, repr=False)
    _walls_scenario: Any = field(default=None, repr=False)
    #: Every step's derivative ∂x_{k+1}/∂(x_k, θ), ``(N, 2n, 2n + r)``, of a
    #: run with ``tangents=True`` (the ``r`` parameters of ``sensitivity``
    #: last); ``None`` otherwise.
    tangents: Optional[np.ndarray] = field(default=None, repr=False)
    #: ∂x_0/∂θ, ``(2n, r)``, with :attr:`tangents`.
    tangent_initial: Optional[np.ndarray] = field(default=None, repr=False)

    @property
    def walls(self) -> List[Dict[str, Any]]:
        """For a model with coordinates named x and y, the walls of the x–y
        plane that :meth:`plot` draws, as the CLI's ``--plot`` and
        ``--animate`` draw them (computed in Rust around the recorded path
        and the impact points), one dict per shape: ``{"kind": "line",
        "point": [x, y], "direction": [dx, dy]}``, ``{"kind": "circle",
        "center": [x, y], "radius": r}``, ``{"kind": "polyline", "points":
        [[x, y], ...], "closed": bool}`` or ``{"kind": "dot", "point": [x,
        y]}``; empty otherwise.

        Computed on first access and kept (a model file's curved boundary
        is traced on a grid around the path: work an ensemble member that is
        never drawn does not pay); a result pickled before that computes
        them after unpickling, one pickled after carries them."""
        if self._walls is None:
            from . import _diracvi

            n = len(self.coordinates)
            points = np.concatenate(
                [
                    np.asarray(self.q, dtype=float).reshape(-1, n),
                    np.asarray(self.impacts.q, dtype=float).reshape(-1, n),
                ]
            )
            walls = list(
                _diracvi.plane_walls(self._walls_scenario, list(self.coordinates), points)
            )
            object.__setattr__(self, "_walls", walls)
            object.__setattr__(self, "_walls_scenario", None)
        return self._walls

    @property
    def final_state(self) -> Dict[str, Any]:
        """``{"t": float, "q": list, "p": list}``: the state after the last step."""
        return self.summary["final_state"]

    @property
    def jacobian(self) -> Optional[np.ndarray]:
        """∂(q_N, p_N)/∂(q_0, p_0) as a ``(2n, 2n)`` array (positions, then
        momenta; ``summary["jacobian"]`` names the rows and columns) of a
        run with ``jacobian=True``, exact through impacts
        (docs/theory.md §12); ``None`` otherwise."""
        j = self.summary.get("jacobian")
        if j is None:
            return None
        return np.array(j["matrix"], dtype=float)

    @property
    def sensitivity(self) -> Optional[Dict[str, np.ndarray]]:
        """``{name: ∂(q_N, p_N)/∂name}`` (each a ``(2n,)`` array, positions
        then momenta) of a run with ``sensitivity=(names…)``, exact through
        impacts (docs/theory.md §12.4); ``None`` otherwise."""
        s = self.summary.get("sensitivity")
        if s is None:
            return None
        return {name: np.array(column, dtype=float) for name, column in s.items()}

    def gradient(self, objective, grad=None, eps: float = 1e-6) -> Dict[str, Any]:
        """The gradient of a scalar objective ``F = objective(q_N, p_N)`` of
        the final state with respect to the initial state and the parameters
        of ``sensitivity``, by the chain rule through the exact tangent map
        of the run: ``∂F/∂(q_0, p_0) = Jᵀ ∇f`` and ``∂F/∂θ = (∂x_N/∂θ)·∇f``
        (a vector–Jacobian product on the forward-mode Jacobian; the run
        needs ``jacobian=True`` and, for parameters, ``sensitivity=...``).

        ``objective(q, p)`` takes numpy arrays and returns a float.
        ``grad(q, p)``, if given, returns ``∇f`` as a ``(2n,)`` array
        (positions then momenta); otherwise ``∇f`` is taken by central
        differences of ``objective`` alone (never of the simulation), with
        steps ``eps · max(1, |x_i|)``: for a smooth objective its error is
        about ``eps²`` relative, far below the run's own.

        With the tape of a run with ``tangents=True`` the gradient is a
        reverse (adjoint) sweep over it instead, ``λ_k = ∂x_{k+1}/∂x_kᵀ
        λ_{k+1}`` from ``λ_N = ∇f`` (docs/theory.md §12.5): one
        matrix–vector product per step, whatever the number of inputs.

        Returns ``{"value": F, "q0": (n,), "p0": (n,), name: float, ...}``.
        Raises ``ValueError`` when the run has no Jacobian and no tape.
        """
        jac = self.jacobian
        if jac is None and self.tangents is None:
            raise ValueError(
                "gradient needs the run's tangent map: run with jacobian=True "
                "or tangents=True (and sensitivity=(names...) for parameters)"
            )
        q = np.asarray(self.final_state["q"], dtype=float)
        p = np.asarray(self.final_state["p"], dtype=float)
        n = q.size
        x = np.concatenate([q, p])
        f = lambda y: float(objective(y[:n], y[n:]))  # noqa: E731
        if grad is not None:
            g = np.asarray(grad(q, p), dtype=float).reshape(-1)
            if g.shape != (2 * n,):
                raise ValueError(f"grad returned shape {g.shape}, expected ({2 * n},)")
        else:
            g = np.empty(2 * n)
            for i in range(2 * n):
                step = eps * max(1.0, abs(x[i]))
                up, down = x.copy(), x.copy()
                up[i] += step
                down[i] -= step
                g[i] = (f(up) - f(down)) / (2.0 * step)
        out: Dict[str, Any] = {"value": f(x)}
        names = list(self.summary.get("sensitivity") or {})
        if self.tangents is not None:
            lam = g.copy()
            theta = np.zeros(len(names))
            for step in self.tangents[::-1]:
                theta += step[:, 2 * n:].T @ lam
                lam = step[:, : 2 * n].T @ lam
            if names:
                theta += self.tangent_initial.T @ lam
            out["q0"], out["p0"] = lam[:n], lam[n:]
            for name, value in zip(names, theta):
                out[name] = float(value)
            return out
        back = jac.T @ g
        out["q0"], out["p0"] = back[:n], back[n:]
        for name, column in (self.sensitivity or {}).items():
            out[name] = float(column @ g)
        return out

    def cumulative_tangents(self) -> np.ndarray:
        """∂x_k/∂x_0 for ``k = 1 … N`` (``(N, 2n, 2n)``) from the tape of a
        run with ``tangents=True``: the tangent map of the flow at every
        step (its last is :attr:`jacobian`)."""
        if self.tangents is None:
            raise ValueError("cumulative_tangents needs a run with tangents=True")
        m = self.tangents.shape[1]
        out = np.empty((self.tangents.shape[0], m, m))
        j = np.eye(m)
        for k, step in enumerate(self.tangents):
            j = step[:, :m] @ j
            out[k] = j
        return out

    def __repr__(self) -> str:
        s = self.summary
        return (
            f"RunResult(model={self.model!r}, steps={s['steps']}, records={len(self.t)}, "
            f"impacts={len(self.impacts)}, final t={s['final_state']['t']!r})"
        )

    def to_pandas(self):
        """The recorded steps as a ``pandas.DataFrame`` with the columns of
        the CLI's trajectory CSV: ``k, t, q_<name>..., p_<name>..., energy,
        constraint_residual`` (README "Output columns"). Needs pandas."""
        pd = _pandas()
        n = self.q.shape[1]
        names, _ = _columns(self.coordinates, n)
        arrays = [self.k, self.t]
        for arr in (self.q, self.p):
            arrays.extend(arr[:, i] for i in range(n))
        arrays += [self.energy, self.constraint_residual]
        return pd.DataFrame(dict(zip(names, arrays)), columns=names)

    def plot(self, panels: Optional[Sequence[str]] = None, *, file: Optional[str] = None):
        """The panels of the CLI's ``--plot`` as a matplotlib ``Figure``
        (needs matplotlib; raises ImportError naming it otherwise).

        ``panels``: any of ``"energy"`` (E − E₀ against time), ``"coords"``
        (one panel per coordinate), ``"momenta"`` (one per momentum),
        ``"residual"`` (log10 of the constraint residual), ``"xy"`` (the
        path of the coordinates named x and y with the model's walls in
        brown, as the CLI draws them (:attr:`walls`), impact points marked,
        equal scales) and
        ``"phase"`` (one (q, p) portrait per coordinate), drawn in that
        order; default ``("energy", "coords", "xy")``, ``"xy"`` only when
        the model has coordinates x and y. At most 9 coordinates are drawn,
        evenly spread. Impacts are red vertical lines in the time panels.
        ``file``: also save the figure there (format from the extension).
        Raises ValueError for an unknown panel, or ``"xy"`` asked for a
        model without x and y.
        """
        Figure = _figure_class()
        names = _names(self.coordinates, self.q.shape[1])
        xy = ("x" in names and "y" in names) or None
        if panels is None:
            wanted = [p for p in ("energy", "coords", "xy") if p != "xy" or xy]
        else:
            if isinstance(panels, str):
                panels = [panels]
            for p in panels:
                if p not in _PANELS:
                    raise ValueError(f"unknown panel {p!r}: expected some of {', '.join(_PANELS)}")
            if "xy" in panels and not xy:
                raise ValueError(
                    f"panel 'xy': model {self.model!r} has no coordinates named x and y "
                    f"(its coordinates: {', '.join(names)})"
                )
            wanted = [p for p in _PANELS if p in panels]
        shown = _shown(len(names))
        impact_t = np.asarray(self.impacts.t, dtype=float)
        e0 = float(self.summary["energy"]["initial"])
        scale = float(self.summary["energy"].get("scale") or 0.0)
        scale = scale if np.isfinite(scale) and scale > 0 else 1.0

        # (kind, argument) per panel.
        layout = []
        for p in wanted:
            if p in ("coords", "momenta", "phase"):
                layout.extend((p, i) for i in shown)
            else:
                layout.append((p, None))
        n = len(layout)
        cols = 1 if n <= 1 else 2 if n <= 6 else 3
        rows = max(1, -(-n // cols))
        fig = Figure(figsize=(4.2 * cols, 3.0 * rows + 0.6), layout="constrained")
        title = f"{self.model}: {self.summary['steps']} steps"
        if len(impact_t):
            title += f", {len(impact_t)} impact{'s' if len(impact_t) > 1 else ''} (red lines)"
        if len(shown) < len(names) and any(p in wanted for p in ("coords", "momenta", "phase")):
            title += (
                f"\ncoordinates drawn: {len(shown)} of {len(names)} "
                f"({', '.join(names[i] for i in shown)}), evenly spread"
            )
        fig.suptitle(title)
        axes = fig.subplots(rows, cols, squeeze=False).ravel()
        for ax in axes[n:]:
            ax.set_visible(False)

        finite_t = self.t[np.isfinite(self.t)]
        t_span = (float(finite_t.min()), float(finite_t.max())) if finite_t.size else None

        def impacts(ax):
            for t in impact_t:
                ax.axvline(t, color="#D62728", alpha=0.6, linewidth=1)
            if t_span is not None and t_span[0] < t_span[1]:
                ax.set_xlim(*t_span)

        def against_time(ax, values, label, caption, reference=1e-3, zero_half=1.0):
            ax.plot(self.t, values, color="#1F77B4")
            ax.set_ylim(*_limits(values, reference, zero_half))
            ax.set_xlabel("t (s)")
            ax.set_ylabel(label)
            ax.set_title(caption)
            impacts(ax)

        for ax, (kind, i) in zip(axes, layout):
            if kind == "energy":
                dev = self.energy - e0
                worst = float(np.nanmax(np.abs(dev))) if dev.size else 0.0
                if worst == 0.0:
                    caption = "energy deviation E − E₀: 0 throughout"
                elif worst <= 1e-10 * scale:
                    caption = f"energy deviation E − E₀: max {worst:.1e}, round-off"
                else:
                    caption = f"energy deviation E − E₀ (E₀ = {e0:.8g})"
                against_time(ax, dev, "E − E₀", caption, 0.1 * scale, 1e-3 * scale)
            elif kind == "coords":
                against_time(ax, self.q[:, i], names[i], f"coordinate {names[i]}")
            elif kind == "momenta":
                against_time(ax, self.p[:, i], f"p_{names[i]}", f"momentum p_{names[i]}")
            elif kind == "residual":
                r = np.abs(self.constraint_residual)
                ok = r > 0
                ax.plot(self.t[ok], np.log10(r[ok]), color="#1F77B4")
                ax.set_xlabel("t (s)")
                ax.set_ylabel("log₁₀ |residual|")
                ax.set_title("constraint residual" + ("" if ok.any() else ": 0 throughout"))
                impacts(ax)
            elif kind == "xy":
                ix, iy = names.index("x"), names.index("y")
                ax.plot(self.q[:, ix], self.q[:, iy], color="#1F77B4")
                ax.plot(self.q[:1, ix], self.q[:1, iy], "o", color="#2CA02C")
                if len(impact_t):
                    ax.plot(self.impacts.q[:, ix], self.impacts.q[:, iy], "o", color="#D62728")
                for wall in self.walls:
                    _draw_wall(ax, wall)
                ax.set_aspect("equal", adjustable="datalim")
                ax.set_xlabel("x")
                ax.set_ylabel("y")
                ax.set_title(
                    "path in the x–y plane" + (", walls in brown" if self.walls else "")
                )
            else:  # phase
                ax.plot(self.q[:, i], self.p[:, i], color="#1F77B4")
                ax.plot(self.q[:1, i], self.p[:1, i], "o", color="#2CA02C")
                ax.set_xlim(*_limits(self.q[:, i], 1e-3, 1.0))
                ax.set_ylim(*_limits(self.p[:, i], 1e-3, 1.0))
                ax.set_xlabel(names[i])
                ax.set_ylabel(f"p_{names[i]}")
                ax.set_title(f"phase portrait ({names[i]}, p_{names[i]})")
        if file is not None:
            fig.savefig(file)
        return fig


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
