"""Exceptions raised by diracvi, mirroring the Rust error families.

::

    DiracviError                      base of everything diracvi raises
    ├── ModelError (also ValueError)  bad model name, parameter, initial data,
    │                                 step, end time, scenario TOML, or a
    │                                 stepper the model cannot use
    └── NumericalError (also RuntimeError)
        ├── StepError                 a smooth step failed (Newton did not
        │                             converge, singular Jacobian, ...)
        └── ImpactError               an impact failed (too many impacts in
                                      one step, impact time not located,
                                      post-impact solve, crossing rejected)

Arguments of the wrong Python type raise ``TypeError``; values outside a
documented set (an unknown ``stepper``, ``keep`` selector, negative
``steps``/``every``, ``threads < 1``) raise ``ValueError``.

Every diracvi exception has the attributes ``kind`` (the Rust variant, e.g.
``"UnknownModel"``, ``"InvalidParameter"``, ``"NoConvergence"``,
``"TooManyImpacts"``), ``step`` and ``t`` (step index and time of a numerical
failure, else ``None``) and ``run_index`` (the failing run of an ensemble,
else ``None``). They pickle with their attributes.
"""

from __future__ import annotations

from typing import Optional

__all__ = ["DiracviError", "ModelError", "NumericalError", "StepError", "ImpactError"]


class DiracviError(Exception):
    """Base class of every exception diracvi raises."""

    def __init__(
        self,
        message: str,
        *,
        kind: Optional[str] = None,
        step: Optional[int] = None,
        t: Optional[float] = None,
        run_index: Optional[int] = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.step = step
        self.t = t
        self.run_index = run_index


class ModelError(DiracviError, ValueError):
    """Invalid input: unknown model or parameter, ill-typed or out-of-range
    value, inadmissible or inconsistent initial data, ``h <= 0``,
    ``t_end < 0``, malformed scenario TOML, too many steps, or the
    Hamiltonian stepper for a model without a Hamiltonian. Raised before the
    first step."""


class ModelTypeError(ModelError, TypeError):
    """A value of the wrong type for its key: a string where a number or an
    array of numbers is needed (``h="x"``, ``params={"m": "heavy"}``). Both
    a :class:`ModelError` (``kind`` ``IllTypedParameter``) and a
    ``TypeError``."""


class NumericalError(DiracviError, RuntimeError):
    """A failure of the numerics during an integration; ``step`` and ``t``
    say where."""


class StepError(NumericalError):
    """A smooth step failed (Rust ``StepError``): Newton did not converge,
    non-finite values, singular Jacobian, inconsistent data of a degenerate
    system."""


class ImpactError(NumericalError):
    """An impact step failed (Rust ``ImpactError``): too many impacts in one
    step, the impact time could not be located, the post-impact solve failed,
    a crossing with ``impacts="reject"``, an inadmissible state."""
