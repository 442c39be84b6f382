"""Type stubs of the diracvi package (the native part is diracvi._diracvi)."""

from dataclasses import dataclass
from os import PathLike
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

__version__: str

Value = Union[None, bool, int, float, str, Sequence[float], npt.NDArray[np.float64]]
"""A value ``Scenario.set`` accepts."""

DEFAULT_KEEP: tuple[str, ...]

class DiracviError(Exception):
    """Base class of every exception diracvi raises."""

    kind: Optional[str]
    """The Rust error variant, e.g. ``"UnknownModel"``, ``"NoConvergence"``."""
    step: Optional[int]
    """Step index of a numerical failure."""
    t: Optional[float]
    """Time of a numerical failure."""
    run_index: Optional[int]
    """Index of the failing run of an ensemble."""
    def __init__(
        self,
        message: str,
        *,
        kind: Optional[str] = ...,
        step: Optional[int] = ...,
        t: Optional[float] = ...,
        run_index: Optional[int] = ...,
    ) -> None: ...

class ModelError(DiracviError, ValueError):
    """Invalid input (model, parameter, initial data, h, t_end, scenario TOML,
    too many steps, Hamiltonian stepper without a Hamiltonian)."""

class ModelTypeError(ModelError, TypeError):
    """A string where a number or an array of numbers is needed (``h="x"``):
    both a ModelError (kind ``IllTypedParameter``) and a TypeError."""

class NumericalError(DiracviError, RuntimeError):
    """A failure of the numerics during an integration."""

class StepError(NumericalError):
    """A smooth step failed (Newton, singular Jacobian, inconsistent data)."""

class ImpactError(NumericalError):
    """An impact step failed (too many impacts, impact time, post-impact
    solve, rejected crossing)."""

class Scenario:
    """A model with its parameters, step, end time, discretization and initial
    data: everything a run needs, as plain data (a scenario file of the
    command-line program). Compares by value; pickles through its TOML."""

    def __init__(
        self,
        model: str,
        *,
        h: Optional[float] = ...,
        t_end: Optional[float] = ...,
        discretization: Optional[str] = ...,
        constraint: Optional[str] = ...,
        params: Optional[Dict[str, Value]] = ...,
        q: Optional[Sequence[float]] = ...,
        v: Optional[Sequence[float]] = ...,
    ) -> None:
        """The paper's defaults for ``model`` with overrides (applied in the
        order params, q, v, h, t_end, discretization, constraint).

        Raises ModelError (unknown model/key, invalid value) or TypeError."""
    @staticmethod
    def from_toml(text: str) -> Scenario:
        """Read a scenario file's text (TOML); only ``model`` is required.
        Raises ModelError."""
    @staticmethod
    def from_file(path: Union[str, PathLike[str]]) -> Scenario:
        """Read a scenario file. Raises OSError or ModelError."""
    @staticmethod
    def from_system(path: Union[str, PathLike[str]]) -> Scenario:
        """A system file (parts joined through ports, docs/systems.md) as the
        assembled model's scenario. Raises ModelError (kind ``SystemFile``)."""
    @staticmethod
    def from_netlist(
        path: Union[str, PathLike[str]],
        *,
        h: float,
        t_end: float,
        discretization: str = "forward",
    ) -> Scenario:
        """A circuit from a SPICE-subset netlist file (``diracvi run
        --netlist``), run on the sparse stepper. Raises ModelError (kind
        ``Circuit``, with the line number)."""
    @staticmethod
    def from_netlist_text(
        text: str,
        *,
        h: float,
        t_end: float,
        name: str = "netlist",
        discretization: str = "forward",
    ) -> Scenario:
        """``from_netlist`` for a netlist given as text."""
    @property
    def is_circuit(self) -> bool:
        """Whether the scenario is a circuit (a netlist or ``lc-ladder``)."""
    def to_toml(self) -> str:
        """The scenario as commented TOML; ``from_toml`` reads it back
        exactly."""
    def set(self, key: str, value: Value) -> None:
        """Override one key in place (``diracvi run --set key=value``): a
        parameter, or h, t_end, discretization, constraint, q, v. Raises
        ModelError or TypeError; on error the scenario is unchanged."""
    def replace(
        self,
        *,
        h: Optional[float] = ...,
        t_end: Optional[float] = ...,
        discretization: Optional[str] = ...,
        constraint: Optional[str] = ...,
        params: Optional[Dict[str, Value]] = ...,
        q: Optional[Sequence[float]] = ...,
        v: Optional[Sequence[float]] = ...,
    ) -> Scenario:
        """A copy with overrides."""
    def start_from_momentum(
        self, q: Sequence[float], p: Sequence[float]
    ) -> Tuple[Scenario, List[float]]:
        """A copy starting from the phase-space state (q, p): q set, v solved
        from the constrained Legendre map dL/dv(q, v) = p + A(q)^T nu,
        A(q) v = 0 (as `diracvi run --set q=... --start-p ...`), and the
        multipliers nu (the run starts from p + A(q)^T nu). Raises
        ModelError."""
    def copy(self) -> Scenario:
        """A copy."""
    def run(
        self,
        *,
        stepper: str = "lagrange",
        impacts: str = "elastic",
        backward: bool = False,
        steps: Optional[int] = None,
        every: int = 1,
        order: int = 2,
        reduce: bool = False,
        jacobian: bool = False,
        sensitivity: Union[str, Sequence[str], None] = None,
        energy_tolerance: float = 0.01,
        tol: Optional[float] = None,
        tangents: bool = False,
    ) -> RunResult:
        """Integrate from t = 0 (GIL released).

        stepper: "lagrange" or "hamiltonian"; impacts: "elastic" or
        "reject"; backward: the (−) stepper backward in time; steps: exactly
        this many steps instead of round(t_end / h); every: record every
        every-th step and the last (0: none); order: 2 (the scenario's
        discretization), 4 or 6 (triple jump / Kahan–Li composition of the
        symmetric midpoint step, continuous elastic law; lagrange only);
        tol: choose the order and a fixed step from pilot runs for an error
        of about tol in the final state and impact times (diracvi run
        --tol; not with steps or order; summary["tolerance"] records it).

        Raises ModelError, StepError, ImpactError, ValueError."""
    @property
    def model(self) -> str:
        """Registry name of the model."""
    @property
    def h(self) -> float:
        """Time step (s)."""
    @property
    def t_end(self) -> float:
        """End time (s)."""
    @property
    def discretization(self) -> str:
        """``"forward"`` or ``"midpoint"``."""
    @property
    def constraint(self) -> str:
        """``"retraction"``, ``"midpoint"`` or ``"model"``."""
    @property
    def params(self) -> Dict[str, Any]:
        """Model parameters by name (a copy)."""
    @property
    def q(self) -> List[float]:
        """Initial configuration q(0)."""
    @property
    def v(self) -> List[float]:
        """Initial velocity v(0)."""
    @property
    def keys(self) -> List[str]:
        """Every key ``set`` accepts."""
    @property
    def coordinates(self) -> List[str]:
        """Coordinate names (raises ModelError for an invalid scenario)."""
    @property
    def is_model_file(self) -> bool:
        """Whether the model was read from a model file."""
    def __eq__(self, other: object) -> bool: ...

@dataclass(frozen=True)
class ParameterInfo:
    """One model parameter."""

    name: str
    symbol: str
    unit: str
    kind: str
    description: str
    default: Any

@dataclass(frozen=True)
class Model:
    """A catalogued model or one read from a model file."""

    name: str
    description: str
    coordinates: List[str]
    boundary_pieces: List[str]
    constraints: int
    parameters: List[ParameterInfo]
    defaults: Scenario
    @classmethod
    def from_file(cls, path: Union[str, PathLike[str]]) -> Model:
        """Read a model file. Raises OSError or ModelError (file, key, line, column)."""
    @classmethod
    def from_toml(cls, text: str) -> Model:
        """Read a model file's text. Raises ModelError."""
    def scenario(
        self,
        *,
        h: Optional[float] = None,
        t_end: Optional[float] = None,
        discretization: Optional[str] = None,
        constraint: Optional[str] = None,
        params: Optional[Mapping[str, Value]] = None,
        q: Optional[Sequence[float]] = None,
        v: Optional[Sequence[float]] = None,
    ) -> Scenario:
        """The default scenario with overrides."""
    def to_toml(self) -> str:
        """The defaults as TOML (the model file itself for a model file)."""

ModelInfo = Model

class System:
    """Systems assembled from parts joined through ports (docs/systems.md)."""

    @staticmethod
    def from_file(path: Union[str, PathLike[str]]) -> Model:
        """Read and assemble a system file; raises ModelError (kind ``SystemFile``)."""

@dataclass(frozen=True, eq=False)
class ImpactTable:
    """Every impact of a run, one row per impact."""

    step: npt.NDArray[np.int64]
    t: npt.NDArray[np.float64]
    alpha: npt.NDArray[np.float64]
    piece: npt.NDArray[np.int64]
    q: npt.NDArray[np.float64]
    p_before: npt.NDArray[np.float64]
    p_after: npt.NDArray[np.float64]
    energy_before: npt.NDArray[np.float64]
    energy_after: npt.NDArray[np.float64]
    coordinates: Sequence[str] = ()
    def __len__(self) -> int: ...
    def to_pandas(self) -> Any:
        """A pandas DataFrame, one row per impact (needs pandas)."""

@dataclass(frozen=True, eq=False)
class RunResult:
    """One run: recorded steps, impacts, summary."""

    model: str
    coordinates: List[str]
    k: npt.NDArray[np.int64]
    t: npt.NDArray[np.float64]
    q: npt.NDArray[np.float64]
    p: npt.NDArray[np.float64]
    energy: npt.NDArray[np.float64]
    constraint_residual: npt.NDArray[np.float64]
    impacts: ImpactTable
    summary: Dict[str, Any]
    @property
    def walls(self) -> List[Dict[str, Any]]:
        """The walls of the x–y plane plot() draws (as the CLI): dicts with
        "kind" in line, circle, polyline, dot; empty without x and y.
        Computed on first access (survives pickling either way)."""
    @property
    def final_state(self) -> Dict[str, Any]:
        """``{"t", "q", "p"}`` after the last step."""
    @property
    def jacobian(self) -> Optional[npt.NDArray[np.float64]]:
        """d(q_N, p_N)/d(q_0, p_0), (2n, 2n), of a run with jacobian=True; else None."""
    @property
    def sensitivity(self) -> Optional[Dict[str, npt.NDArray[np.float64]]]:
        """{name: d(q_N, p_N)/d name, (2n,)} of a run with sensitivity=(names...); else None."""
    tangents: Optional[npt.NDArray[np.float64]]
    tangent_initial: Optional[npt.NDArray[np.float64]]
    def cumulative_tangents(self) -> npt.NDArray[np.float64]:
        """d x_k / d x_0 for k = 1..N from the tape of a run with tangents=True."""
    def gradient(
        self,
        objective: Callable[[npt.NDArray[np.float64], npt.NDArray[np.float64]], float],
        grad: Optional[
            Callable[[npt.NDArray[np.float64], npt.NDArray[np.float64]], npt.NDArray[np.float64]]
        ] = None,
        eps: float = 1e-6,
    ) -> Dict[str, Any]:
        """dF/d(q0, p0) = J^T grad f and dF/d(parameter) of F = objective(q_N, p_N),
        for a run with jacobian=True (and sensitivity=...)."""
    def to_pandas(self) -> Any:
        """A pandas DataFrame, one row per record (needs pandas)."""
    def plot(
        self, panels: Optional[Sequence[str]] = None, *, file: Optional[str] = None
    ) -> Any:
        """The CLI's --plot panels as a matplotlib Figure (needs matplotlib;
        ImportError otherwise). Raises ValueError for a bad panel."""

@dataclass(frozen=True, eq=False)
class EnsembleResult:
    """The runs of an ensemble, in the order of the overrides; fields not
    selected by ``keep`` are None."""

    model: str
    coordinates: List[str]
    keep: List[str]
    impact_counts: npt.NDArray[np.int64]
    final_t: Optional[npt.NDArray[np.float64]] = None
    final_q: Optional[npt.NDArray[np.float64]] = None
    final_p: Optional[npt.NDArray[np.float64]] = None
    impact_times: Optional[List[npt.NDArray[np.float64]]] = None
    impacts: Optional[List[ImpactTable]] = None
    summaries: Optional[List[Dict[str, Any]]] = None
    results: Optional[List[RunResult]] = None
    def __len__(self) -> int: ...

def models() -> List[Model]:
    """Every catalogued model, in registry order."""

def scenario(
    model: Union[str, Model],
    *,
    h: Optional[float] = None,
    t_end: Optional[float] = None,
    discretization: Optional[str] = None,
    constraint: Optional[str] = None,
    params: Optional[Mapping[str, Value]] = None,
    q: Optional[Sequence[float]] = None,
    v: Optional[Sequence[float]] = None,
) -> Scenario:
    """The default scenario of ``model`` with overrides (= ``Scenario(...)``).
    Raises ModelError or TypeError."""

def ensemble(
    scenario: Union[Scenario, Any],
    overrides: Iterable[Mapping[str, Value]],
    *,
    keep: Union[str, Sequence[str]] = ("final_state", "impact_times", "summary"),
    threads: Optional[int] = None,
    stepper: str = "lagrange",
    impacts: str = "elastic",
    backward: bool = False,
    steps: Optional[int] = None,
    every: int = 1,
    order: int = 2,
    tol: Optional[float] = None,
) -> EnsembleResult:
    """Run ``scenario`` once per override on all cores (rayon, GIL released),
    keeping only what ``keep`` selects ("final_state", "impact_times",
    "impacts", "summary", "trajectory"). Results in input order, equal to
    the runs done one by one. The lowest-index failure is raised, with
    ``run_index`` set. ``scenario`` may be the ``RustScenario`` of a model
    written in Rust (an extension module built on ``diracvi_python::own``)."""


class PeriodicOrbit:
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

class Branch:
    parameter: str
    values: Any
    orbits: List[PeriodicOrbit]
    stability_changes: List[Mapping[str, Any]]
    stopped: Optional[Mapping[str, Any]]

def periodic_orbit(
    scenario: Union[Scenario, str, Any],
    *,
    section: Union[int, str, None] = ...,
    impact: int = ...,
    period: Optional[float] = ...,
    steps: Optional[int] = ...,
    tolerance: float = ...,
    max_iterations: int = ...,
    t_end: Optional[float] = ...,
) -> PeriodicOrbit: ...
def continue_orbit(
    scenario: Union[Scenario, str, Any],
    parameter: str,
    values: Iterable[float],
    *,
    section: Union[int, str, None] = ...,
    impact: int = ...,
    period: Optional[float] = ...,
    steps: Optional[int] = ...,
    tolerance: float = ...,
    max_iterations: int = ...,
    t_end: Optional[float] = ...,
) -> Branch: ...
