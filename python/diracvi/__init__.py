"""diracvi: discrete Dirac mechanics and variational collision integrators
(nonholonomic systems, degenerate Lagrangians, elastic impacts) from Python.

A thin layer over the Rust crates: every run goes through the same runner as
the ``diracvi`` command-line program, so results agree with it bit for bit.

>>> import diracvi
>>> [m.name for m in diracvi.models()][:3]
['particle', 'ellipse', 'star']
>>> sim = diracvi.scenario("pendulum", h=1e-3, t_end=1)
>>> r = sim.run()
>>> r.q.shape
(1001, 2)

See :func:`models`, :func:`scenario` / :class:`Scenario`, :func:`ensemble`,
the result classes :class:`RunResult`, :class:`ImpactTable`,
:class:`EnsembleResult`, and the exceptions (:class:`DiracviError` and
subclasses).
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from typing import Any, Iterable, List, Mapping, Optional, Sequence, Union

from . import _diracvi
from ._diracvi import Scenario, __version__
from ._errors import (
    DiracviError,
    ImpactError,
    ModelError,
    ModelTypeError,
    NumericalError,
    StepError,
)
from ._results import EnsembleResult, ImpactTable, RunResult

__all__ = [
    "DiracviError",
    "EnsembleResult",
    "ImpactError",
    "ImpactTable",
    "Model",
    "ModelError",
    "ModelTypeError",
    "ModelInfo",
    "NumericalError",
    "ParameterInfo",
    "RunResult",
    "Scenario",
    "StepError",
    "System",
    "Branch",
    "PeriodicOrbit",
    "__version__",
    "continue_orbit",
    "ensemble",
    "models",
    "periodic_orbit",
    "scenario",
]

DEFAULT_KEEP = ("final_state", "impact_times", "summary")


@dataclass(frozen=True)
class ParameterInfo:
    """One model parameter: scenario key, the paper's symbol, SI unit, the
    kind of value (``"a number"``, ``"a number or 'none'"``, ...), meaning,
    and the default value (``None`` for a derived optional parameter)."""

    name: str
    symbol: str
    unit: str
    kind: str
    description: str
    default: Any


@dataclass(frozen=True)
class Model:
    """A model: a catalogued system (:func:`models`) or one read from a model
    file (:meth:`from_file`, :meth:`from_toml`; docs/model-files.md).

    Fields: name, one-line description, coordinate names, boundary pieces,
    number of constraint forms, parameters (:class:`ParameterInfo`, with
    their defaults) and the default :class:`Scenario` (for a model file: its
    ``[parameters]``, ``[run]`` and ``[initial]`` sections).
    :meth:`scenario` gives the defaults with overrides.
    """

    name: str
    description: str
    coordinates: List[str]
    boundary_pieces: List[str]
    constraints: int
    parameters: List[ParameterInfo]
    defaults: Scenario

    @classmethod
    def _from_dict(cls, d: Mapping[str, Any]) -> "Model":
        d = dict(d)
        params = [ParameterInfo(**p) for p in d.pop("parameters")]
        return cls(parameters=params, **d)

    @classmethod
    def from_file(cls, path: Union[str, "os.PathLike[str]"]) -> "Model":
        """Read a model file (TOML with a ``[model]`` table).

        Raises ``OSError`` if it cannot be read and :class:`ModelError`
        naming the file, key, line and column if it is invalid (syntax,
        unknown names, expressions, sizes), or if its initial data are
        inadmissible.
        """
        sc = Scenario.from_file(path)
        if not sc.is_model_file:
            raise ModelError(
                f"'{os.fspath(path)}' is a scenario file for the catalogued model "
                f"'{sc.model}', not a model file: use Scenario.from_file"
            )
        return cls._from_dict(_diracvi.file_model(sc))

    @classmethod
    def from_toml(cls, text: str) -> "Model":
        """Read a model file's text; errors as :meth:`from_file`."""
        sc = Scenario.from_toml(text)
        if not sc.is_model_file:
            raise ModelError(
                f"the text is a scenario for the catalogued model '{sc.model}', "
                "not a model file (no [model] table): use Scenario.from_toml"
            )
        return cls._from_dict(_diracvi.file_model(sc))

    def scenario(
        self,
        *,
        h: Optional[float] = None,
        t_end: Optional[float] = None,
        discretization: Optional[str] = None,
        constraint: Optional[str] = None,
        params: Optional[Mapping[str, Any]] = None,
        q: Optional[Sequence[float]] = None,
        v: Optional[Sequence[float]] = None,
    ) -> Scenario:
        """The model's default scenario with overrides (as :func:`scenario`)."""
        return self.defaults.replace(
            h=h,
            t_end=t_end,
            discretization=discretization,
            constraint=constraint,
            params=dict(params) if params is not None else None,
            q=q,
            v=v,
        )

    def to_toml(self) -> str:
        """The defaults as TOML: a scenario file, or for a model file the
        model file itself (it reads back with :meth:`from_toml`)."""
        return self.defaults.to_toml()


class System:
    """Systems assembled from parts (model files, netlists) joined through
    ports (gyrator, transformer, inductance): docs/systems.md, ``diracvi run
    --system``. The assembled system is an ordinary :class:`Model`, with
    names ``part.name`` (``params={"coil.Bl": 2.0}``)."""

    @staticmethod
    def from_file(path: Union[str, "os.PathLike[str]"]) -> Model:
        """Read a system file and its parts, and assemble them into one
        model. Raises :class:`ModelError` (kind ``SystemFile``) naming the
        file, key, line and column (a part's own errors name the part's
        file) if it is invalid."""
        return Model._from_dict(_diracvi.file_model(Scenario.from_system(path)))


#: The former name of :class:`Model`.
ModelInfo = Model


def models() -> List[Model]:
    """Every catalogued model, in registry order."""
    return [Model._from_dict(d) for d in _diracvi.models()]


def scenario(
    model: Union[str, Model],
    *,
    h: Optional[float] = None,
    t_end: Optional[float] = None,
    discretization: Optional[str] = None,
    constraint: Optional[str] = None,
    params: Optional[Mapping[str, Any]] = None,
    q: Optional[Sequence[float]] = None,
    v: Optional[Sequence[float]] = None,
) -> Scenario:
    """The default scenario of ``model`` (a catalogue name, or a
    :class:`Model`, e.g. read with :meth:`Model.from_file`) with overrides;
    for a name the same as ``Scenario(model, ...)``.

    ``params`` maps parameter names to values (``None`` selects a derived
    optional parameter). Changing a parameter while the initial data are
    still the defaults recomputes them (as ``diracvi run --set`` does).
    Overrides apply in the order params, q, v, h, t_end, discretization,
    constraint.

    Raises :class:`ModelError` (a ``ValueError``) for an unknown model or
    key or an invalid value, ``TypeError`` for values of the wrong type.
    """
    if isinstance(model, Model):
        return model.scenario(
            h=h,
            t_end=t_end,
            discretization=discretization,
            constraint=constraint,
            params=params,
            q=q,
            v=v,
        )
    if not isinstance(model, str):
        raise TypeError(f"model must be a str or a diracvi.Model, got {type(model).__name__}")
    return Scenario(
        model,
        h=h,
        t_end=t_end,
        discretization=discretization,
        constraint=constraint,
        params=dict(params) if params is not None else None,
        q=q,
        v=v,
    )


def ensemble(
    scenario: Scenario,
    overrides: Iterable[Mapping[str, Any]],
    *,
    keep: Union[str, Sequence[str]] = DEFAULT_KEEP,
    threads: Optional[int] = None,
    stepper: str = "lagrange",
    impacts: str = "elastic",
    backward: bool = False,
    steps: Optional[int] = None,
    every: int = 1,
    order: int = 2,
    tol: Optional[float] = None,
) -> EnsembleResult:
    """Run ``scenario`` once per override, in parallel on all cores.

    Each override is a dict of :meth:`Scenario.set` keys (parameters, ``h``,
    ``t_end``, ``discretization``, ``constraint``, ``q``, ``v``) applied to
    a copy of ``scenario`` in dict order, e.g. ``{"q": [1.5708, 0, 3.5]}``
    or ``{"m": 2.0}``; ``{}`` runs the scenario as is.

    The runs execute in Rust on a rayon thread pool with the GIL released
    (``threads=None``: all cores; ``threads=n``: a pool of ``n`` threads).
    Each run keeps only what ``keep`` selects, so memory stays bounded by
    the selection, not by the number of steps: ``"final_state"``,
    ``"impact_times"``, ``"impacts"`` (full impact tables), ``"summary"``,
    ``"trajectory"`` (full records, every ``every``-th step). Results are in
    the order of ``overrides``, and equal the same runs done one by one with
    :meth:`Scenario.run` bit for bit.

    Errors: a bad override raises before anything runs. If runs fail, the
    failure of the *lowest* failing run index is raised (deterministically:
    later runs are skipped once a run failed, earlier ones still finish), as
    :class:`ModelError` / :class:`StepError` / :class:`ImpactError` with
    ``run_index`` set and the message prefixed ``run i:``. ``TypeError`` for
    overrides that are not dicts, ``ValueError`` for bad ``keep``,
    ``stepper``, ``impacts``, ``steps``, ``every``, ``order`` or ``threads``.

    ``order`` is that of :meth:`Scenario.run`: 2 (the scenario's own
    discretization), 4 or 6 (triple jump / Kahan–Li composition of the
    symmetric midpoint step, impacts by the continuous elastic law).
    ``tol`` is that of :meth:`Scenario.run`: each run chooses its order and
    step from pilot runs for an error of about ``tol`` (``diracvi run
    --tol``; an override ``{"tol": 1e-8}`` sets it per run, ``{"h": ...}``
    clears it); its summary's ``"tolerance"`` records the choice.

    ``scenario`` may also be the ``RustScenario`` of a model written in Rust
    (an extension module built with ``diracvi_python::own``, see the
    README's "Your own model in Rust"): overrides then set its parameters by
    name, ``h``, ``t_end``, ``discretization``, ``constraint``, ``q`` and
    ``v``; ``tol`` is refused there.
    """
    if isinstance(scenario, Scenario):
        run = functools.partial(_diracvi.ensemble, scenario)
    elif callable(getattr(scenario, "_ensemble", None)):
        # A scenario of a model written in Rust (an extension module built
        # with diracvi_python::own): it runs its own members.
        run = scenario._ensemble
    else:
        raise TypeError(f"scenario must be a diracvi.Scenario, got {type(scenario).__name__}")
    d = run(
        overrides,
        keep=keep,
        threads=threads,
        stepper=stepper,
        impacts=impacts,
        backward=backward,
        steps=steps,
        every=every,
        order=order,
        tol=tol,
    )
    return EnsembleResult(**d)


def _rust_scenario(module: str, kwargs: Mapping[str, Any]) -> Any:
    """Unpickle the ``RustScenario`` of a model written in Rust: its
    extension module's ``scenario(**kwargs)``."""
    import importlib

    return importlib.import_module(module).scenario(**kwargs)


def _scenario_from_toml(text: str) -> Scenario:
    """Unpickle a :class:`Scenario` (pickled through its TOML)."""
    return Scenario.from_toml(text)


@dataclass(frozen=True)
class PeriodicOrbit:
    """A periodic orbit of the discrete flow (:func:`periodic_orbit`,
    docs/theory.md §14).

    Fields: the fixed point ``q``, ``p``, ``v`` (numpy; ``v`` reruns it as
    initial data), ``period`` (s), ``residual`` (``max |P(x) - x|``),
    ``iterations`` (Newton), ``multipliers`` (complex numpy array, the
    eigenvalues of ``monodromy``, trivial ones first), ``kinds`` (one per
    multiplier: ``"section"``, ``"energy"``, ``"time-shift-energy"``,
    ``"symmetry"``, ``"constraint"`` or ``"nontrivial"``), ``stability``
    (``"stable"``, ``"unstable"`` or ``"neutral"``), ``monodromy``
    (``2n x 2n`` numpy, positions then momenta), ``reciprocity_defect``
    and ``summary``: the dict ``diracvi periodic --summary json`` prints.
    """

    q: Any
    p: Any
    v: Any
    period: float
    residual: float
    iterations: int
    multipliers: Any
    kinds: List[str]
    stability: str
    monodromy: Any
    reciprocity_defect: float
    summary: Mapping[str, Any]

    @classmethod
    def _from_summary(cls, d: Mapping[str, Any]) -> "PeriodicOrbit":
        import numpy as np

        fp = d["fixed_point"]
        mult = d["multipliers"]
        return cls(
            q=np.asarray(fp["q"], dtype=float),
            p=np.asarray(fp["p"], dtype=float),
            v=np.asarray(fp["v"], dtype=float),
            period=float(d["period"]),
            residual=float(d["residual"]),
            iterations=int(d["iterations"]),
            multipliers=np.asarray([complex(m["re"], m["im"]) for m in mult]),
            kinds=[m["kind"] for m in mult],
            stability=d["stability"],
            monodromy=np.asarray(d["monodromy"]["matrix"], dtype=float),
            reciprocity_defect=float(d["reciprocity_defect"]),
            summary=d,
        )


@dataclass(frozen=True)
class Branch:
    """A branch of periodic orbits (:func:`continue_orbit`): ``parameter``,
    its ``values`` (numpy, the points found), the ``orbits``
    (:class:`PeriodicOrbit`), ``stability_changes`` (dicts: ``from_value``,
    ``to_value``, ``from``, ``to``, ``estimate``) and ``stopped`` (``None``,
    or a dict with the ``value`` where no orbit was found and the
    ``error``)."""

    parameter: str
    values: Any
    orbits: List[PeriodicOrbit]
    stability_changes: List[Mapping[str, Any]]
    stopped: Optional[Mapping[str, Any]]


def _as_scenario(scenario: Union[Scenario, str]) -> Scenario:
    if isinstance(scenario, str):
        return globals()["scenario"](scenario)
    return scenario


def periodic_orbit(
    scenario: Union[Scenario, str],
    *,
    section: Union[int, str, None] = None,
    impact: int = 1,
    period: Optional[float] = None,
    steps: Optional[int] = None,
    tolerance: float = 1e-12,
    max_iterations: int = 30,
    t_end: Optional[float] = None,
) -> PeriodicOrbit:
    """Find a periodic orbit of ``scenario``'s discrete flow by Newton
    shooting with the exact tangent map, from its initial data (the CLI's
    ``diracvi periodic``; docs/theory.md §14).

    ``section``: a wall piece (index or name): the orbit closes at the
    post-impact state of its ``impact``-th impact with it. Without it, the
    orbit closes after a whole number of steps: ``period`` (s, rounded to
    steps), ``steps``, or the first close return of the run. ``t_end``: how
    long to search for the return (default the scenario's). Raises
    :class:`NumericalError` when Newton's method does not converge (``kind``
    ``"NotConverged"``), the section is not reached (``"NoReturn"``) or an
    equilibrium is found, :class:`ModelError` for an unknown section or a
    method or model without a tangent map.

    ``scenario`` may also be the ``RustScenario`` of a model written in Rust
    whose module gives the search (``diracvi_python::own::PythonModel::periodic``).
    """
    import json

    run = getattr(scenario, "_periodic_orbit", None)
    if not callable(run):
        run = functools.partial(_diracvi.periodic_orbit, _as_scenario(scenario))
    text = run(
        section=section,
        impact=impact,
        period=period,
        steps=steps,
        tolerance=tolerance,
        max_iterations=max_iterations,
        t_end=t_end,
    )
    return PeriodicOrbit._from_summary(json.loads(text))


def continue_orbit(
    scenario: Union[Scenario, str],
    parameter: str,
    values: Iterable[float],
    *,
    section: Union[int, str, None] = None,
    impact: int = 1,
    period: Optional[float] = None,
    steps: Optional[int] = None,
    tolerance: float = 1e-12,
    max_iterations: int = 30,
    t_end: Optional[float] = None,
) -> Branch:
    """Natural-parameter continuation of a periodic orbit (the CLI's
    ``diracvi periodic --continue PARAM=a:b:n``): the orbit at each of
    ``values`` of the model parameter ``parameter``, each from the previous
    ones; stops at the first value without an orbit (``Branch.stopped``).
    The other arguments as for :func:`periodic_orbit`."""
    import json

    import numpy as np

    run = getattr(scenario, "_continue_orbit", None)
    if not callable(run):
        run = functools.partial(_diracvi.continue_orbit, _as_scenario(scenario))
    text = run(
        parameter,
        [float(x) for x in values],
        section=section,
        impact=impact,
        period=period,
        steps=steps,
        tolerance=tolerance,
        max_iterations=max_iterations,
        t_end=t_end,
    )
    d = json.loads(text)
    return Branch(
        parameter=d["parameter"],
        values=np.asarray([pt["value"] for pt in d["points"]], dtype=float),
        orbits=[PeriodicOrbit._from_summary(pt["orbit"]) for pt in d["points"]],
        stability_changes=d["stability_changes"],
        stopped=d["stopped"],
    )
