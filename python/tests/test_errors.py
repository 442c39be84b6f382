"""Bad arguments raise the documented Python exceptions (never a crash)."""

from __future__ import annotations

import pickle

import pytest

import diracvi
from diracvi import DiracviError, ImpactError, ModelError, NumericalError, StepError


def test_hierarchy():
    assert issubclass(ModelError, DiracviError) and issubclass(ModelError, ValueError)
    assert issubclass(StepError, NumericalError) and issubclass(ImpactError, NumericalError)
    assert issubclass(NumericalError, DiracviError) and issubclass(NumericalError, RuntimeError)


@pytest.mark.parametrize(
    "call, kind, needle",
    [
        (lambda: diracvi.scenario("nope"), "UnknownModel", "valid models: particle, ellipse"),
        (lambda: diracvi.Scenario("nope"), "UnknownModel", "unknown model 'nope'"),
        (lambda: diracvi.scenario("pendulum", params={"zz": 1}), "UnknownParameter", "'zz'"),
        (lambda: diracvi.scenario("pendulum", params={"m": -1.0}), "InvalidParameter", "m = -1"),
        (lambda: diracvi.scenario("pendulum", params={"m": "heavy"}), "IllTypedParameter", "heavy"),
        (lambda: diracvi.scenario("pendulum", h=-1e-3), "InvalidStep", "h must be"),
        (lambda: diracvi.scenario("pendulum", h=float("nan")), "InvalidStep", "NaN"),
        (lambda: diracvi.scenario("pendulum", t_end=-1), "InvalidEndTime", "t_end"),
        (lambda: diracvi.scenario("pendulum", q=[1.0, 2.0, 3.0]), "WrongLength", "3 components"),
        (lambda: diracvi.scenario("pendulum", discretization="sideways"), "IllTypedParameter", "sideways"),
        (lambda: diracvi.Scenario.from_toml("model = "), "Scenario", "TOML"),
        (lambda: diracvi.Scenario.from_toml("h = 1"), "Scenario", "missing required key 'model'"),
        (lambda: diracvi.scenario("particle", q=[0.0, -1.0]).run(), "InitialInadmissible", "admissible"),
        (lambda: diracvi.scenario("pendulum", v=[1.0, 0.0]).run(), "InitialViolatesConstraint", "constraint"),
        (lambda: diracvi.scenario("particle", q=[float("inf"), 1.0]).run(), "NonFiniteInitial", "non-finite"),
        (lambda: diracvi.scenario("lc").run(stepper="hamiltonian"), "NoHamiltonian", "no Hamiltonian"),
        (lambda: diracvi.scenario("particle", h=1e-300).run(), "TooManySteps", "steps"),
    ],
)
def test_model_errors(call, kind, needle):
    with pytest.raises(ModelError) as info:
        call()
    e = info.value
    assert isinstance(e, ValueError) and isinstance(e, DiracviError)
    assert e.kind == kind, (e.kind, str(e))
    assert needle in str(e), str(e)
    assert e.step is None and e.t is None and e.run_index is None


def test_set_is_atomic_and_typed():
    sc = diracvi.scenario("pendulum")
    before = sc.copy()
    with pytest.raises(ModelError):
        sc.set("m", -2)
    with pytest.raises(ModelError):
        sc.set("nope", 1)
    with pytest.raises(TypeError):
        sc.set("m", object())
    with pytest.raises(TypeError):
        sc.set("q", {"a": 1})
    assert sc == before


@pytest.mark.parametrize(
    "call, exc",
    [
        (lambda sc: sc.run(stepper="euler"), ValueError),
        (lambda sc: sc.run(impacts="sticky"), ValueError),
        (lambda sc: sc.run(every=-1), ValueError),
        (lambda sc: sc.run(steps=-5), ValueError),
        (lambda sc: sc.run(steps="many"), TypeError),
        (lambda sc: sc.run(backward="yes"), TypeError),
        (lambda sc: diracvi.Scenario(3), TypeError),
        (lambda sc: diracvi.scenario("pendulum", params=5), TypeError),
        (lambda sc: diracvi.scenario("pendulum", h=object()), TypeError),
        (lambda sc: diracvi.scenario("pendulum", h="x"), TypeError),
        (lambda sc: diracvi.scenario("pendulum", t_end="long"), TypeError),
        (lambda sc: diracvi.scenario("pendulum", params={"m": "heavy"}), TypeError),
        (lambda sc: diracvi.scenario("pendulum", q="up"), TypeError),
        (lambda sc: sc.set("h", "x"), TypeError),
        (lambda sc: diracvi.Scenario.from_file("/nonexistent/scenario.toml"), FileNotFoundError),
    ],
)
def test_argument_errors(call, exc):
    sc = diracvi.scenario("pendulum", t_end=0.01)
    with pytest.raises(exc):
        call(sc)


def test_step_error_names_step_and_time():
    with pytest.raises(StepError) as info:
        diracvi.scenario("pendulum", h=0.5).run(steps=10)
    e = info.value
    assert e.kind == "NoConvergence" and isinstance(e.step, int) and isinstance(e.t, float)
    assert str(e).startswith("pendulum: step") and "Newton did not converge" in str(e)
    assert e.t == pytest.approx(0.5 * e.step)


def test_inconsistent_initial_data_are_a_model_error():
    # The LC's capacitor voltages differ around its loop: no solution starts
    # there, whatever the direction and the scheme.
    for kwargs in ({}, {"discretization": "midpoint", "constraint": "midpoint"}):
        with pytest.raises(ModelError) as info:
            diracvi.scenario("lc", q=[0, 1, 0, 0], **kwargs).run(steps=3)
        assert info.value.kind == "InconsistentStart" and info.value.step is None
        assert "hidden constraint" in str(info.value)


def test_impact_error():
    for stepper in ("lagrange", "hamiltonian"):
        with pytest.raises(ImpactError) as info:
            diracvi.scenario("particle").run(stepper=stepper, impacts="reject")
        e = info.value
        assert e.kind == "Crossing" and e.step == 63
        assert 0.63 <= e.t <= 0.64
        assert "crosses boundary piece 0" in str(e)


def test_exceptions_pickle():
    with pytest.raises(StepError) as info:
        diracvi.scenario("pendulum", h=0.5).run(steps=10)
    e = pickle.loads(pickle.dumps(info.value))
    assert type(e) is StepError and str(e) == str(info.value)
    assert (e.kind, e.step, e.t) == (info.value.kind, info.value.step, info.value.t)


def test_a_string_for_a_number_is_a_type_error_and_a_model_error():
    # h="x": the wrong type, raised as ModelTypeError (a TypeError and a
    # ModelError with kind IllTypedParameter); a bad value of a string key
    # stays a ModelError that is not a TypeError.
    with pytest.raises(diracvi.ModelTypeError) as info:
        diracvi.scenario("pendulum", h="x")
    e = info.value
    assert isinstance(e, TypeError) and isinstance(e, diracvi.ModelError)
    assert e.kind == "IllTypedParameter" and "'h'" in str(e) and "x" in str(e)
    with pytest.raises(diracvi.ModelError) as info:
        diracvi.scenario("pendulum", discretization="sideways")
    assert not isinstance(info.value, TypeError)
    # A number written as a string is still read, as in scenario files.
    assert diracvi.scenario("pendulum", h="0.01").h == pytest.approx(0.01)
