//! The (+) and (−) discrete nonholonomic Hamiltonian steppers of the
//! run-time-sized core (\[DDM\] 5.6b, 5.12b), with the symplectic-Euler
//! generating functions built from the system's `H` (the counterpart of
//! [`NonholonomicHamiltonian`](crate::NonholonomicHamiltonian) with
//! [`SymplecticEuler`](crate::SymplecticEuler)).
//!
//! Oriented (+) equations at `x = (d, u π_b, u μ)`, `b = a + d`:
//! ```text
//! d/h − ∂K/∂π(a, π_b) = 0,   u (π_a − π_b − h ∂K/∂a(a, π_b) − A(a)ᵀ μ) = 0,   ω_d(a, b) = 0,
//! ```
//! with `K(a, π) = H(a, π)` forward and `H(a, −π)` backward (π = −p).

use super::sparse_step::forms_transpose_times;
use super::{
    DynOneStep, DynPositionCarry, DynStepOutput, DynStepSensitivity, DynStepTangent, DynSubStep,
    DynSubStepper,
};
use crate::newton::{Newton, NewtonParams};
use crate::{Direction, DynState, StepError, StepStats};
use diracvi_geometry::dynamic::{
    DynSystem, constraint_jacobian_dyn, constraint_residual_dyn, hamiltonian_jet_dyn,
    hamiltonian_momentum_gradient_dyn, hamiltonian_position_gradient_dyn,
};
use diracvi_geometry::{ConstraintDiscretization, Discretization, GeometryError, Orientation};
use nalgebra::{DMatrix, DVector};

/// A discrete nonholonomic Hamiltonian stepper of a run-time-sized system,
/// (+) or (−), symplectic Euler.
#[derive(Debug, Clone)]
pub struct DynNonholonomicHamiltonian<Sy> {
    system: Sy,
    map: Discretization,
    constraint: ConstraintDiscretization,
    params: NewtonParams,
    direction: Direction,
    ws: Newton,
    trial_ws: Newton,
    x: DVector<f64>,
    carry: DynPositionCarry,
    unit: Option<f64>,
    /// `A(a)` row-major (`m × n`), refilled at each solve.
    forms: Vec<f64>,
}

fn no_hamiltonian() -> GeometryError {
    GeometryError::NonFinite {
        what: "discrete Hamiltonian",
        index: 0,
        value: f64::NAN,
    }
}

impl<Sy: DynSystem> DynNonholonomicHamiltonian<Sy> {
    /// A stepper: (+) for `Direction::Forward`, (−) for `Direction::Backward`.
    /// The map only selects the discrete constraint's node (the generating
    /// function is symplectic Euler).
    pub fn new(
        system: Sy,
        map: Discretization,
        constraint: ConstraintDiscretization,
        direction: Direction,
    ) -> Self {
        let (n, m) = (system.coordinate_count(), system.constraint_count());
        let size = 2 * n + m;
        Self {
            system,
            map,
            constraint,
            params: NewtonParams::default(),
            direction,
            ws: Newton::new(size),
            trial_ws: Newton::new(size),
            x: DVector::zeros(size),
            carry: DynPositionCarry::new(n),
            unit: None,
            forms: vec![0.0; m * n],
        }
    }

    /// Replace the Newton parameters.
    pub fn with_params(mut self, params: NewtonParams) -> Self {
        self.params = params;
        self
    }

    /// The system.
    pub fn system(&self) -> &Sy {
        &self.system
    }

    /// The discretization map.
    pub fn map(&self) -> Discretization {
        self.map
    }

    /// Direction of time.
    pub fn direction(&self) -> Direction {
        self.direction
    }

    /// The discrete constraint.
    pub fn constraint(&self) -> ConstraintDiscretization {
        self.constraint
    }

    fn reversed(&self) -> bool {
        self.direction.orientation() == Orientation::Reversed
    }

    /// One step from `state` (to `t + h` for (+), `t − h` for (−)).
    ///
    /// # Errors
    /// [`StepError`] naming the step and time.
    pub fn step(&mut self, state: &DynState, h: f64) -> Result<(DynState, StepStats), StepError> {
        super::dyn_step_state(self, state, h)
    }

    /// Solve the oriented (+) equations from `(a, π_a)` with step `h`, in
    /// the steps' workspace or (`trial`) a separate one; `guess` is an
    /// initial `(d, π_b)`, else the explicit part of symplectic Euler.
    ///
    /// # Errors
    /// As [`step`](Self::step); `Unsupported` without a Hamiltonian or with a
    /// gyroscopic force.
    #[allow(clippy::too_many_arguments)]
    pub fn solve_oriented(
        &mut self,
        trial: bool,
        t: f64,
        a: &DVector<f64>,
        pi_a: &DVector<f64>,
        h: f64,
        guess: Option<(&DVector<f64>, &DVector<f64>)>,
    ) -> Result<DynSubStep, StepError> {
        let (n, m) = (
            self.system.coordinate_count(),
            self.system.constraint_count(),
        );
        if a.len() != n || pi_a.len() != n {
            return Err(StepError::Geometry {
                t,
                source: GeometryError::DimensionMismatch {
                    what: "state",
                    expected: n,
                    got: a.len().min(pi_a.len()),
                },
            });
        }
        super::validate_step_dyn(t, h, a, pi_a)?;
        let reversed = self.reversed();
        if hamiltonian_momentum_gradient_dyn(&self.system, reversed, a, pi_a).is_none() {
            return Err(StepError::Unsupported(
                "the system supplies no Hamiltonian, so the discrete Hamiltonian stepper cannot run (use the Lagrange–Dirac stepper)".into(),
            ));
        }
        let mut f = vec![0.0; n];
        if self
            .system
            .gyroscopic_force(a.as_slice(), pi_a.as_slice(), &mut f)
        {
            return Err(StepError::Unsupported(
                "the system has a gyroscopic force, which the discrete Hamiltonian stepper does not take (use the Lagrange–Dirac stepper)".into(),
            ));
        }
        let unit = match self.unit {
            Some(u) => u,
            None => {
                let impulse = hamiltonian_position_gradient_dyn(&self.system, reversed, a, pi_a)
                    .map_or(0.0, |g| h.abs() * g.amax());
                *self
                    .unit
                    .insert(crate::momentum_unit(pi_a.amax().max(impulse)))
            }
        };
        let zero = DVector::zeros(n);
        let (d0, p0) = guess.unwrap_or((&zero, pi_a));
        self.x.rows_mut(0, n).copy_from(d0);
        self.x.rows_mut(n, n).copy_from(&(p0 * unit));
        self.x.rows_mut(2 * n, m).fill(0.0);
        self.system.constraint_forms(a.as_slice(), &mut self.forms);
        let eq = Equations {
            system: &self.system,
            cd: self.constraint,
            orientation: self.direction.orientation(),
            a,
            pi_a,
            forms: &self.forms,
            h,
            unit,
            n,
            m,
        };
        let ws = if trial {
            &mut self.trial_ws
        } else {
            &mut self.ws
        };
        let info = ws
            .solve(&mut self.x, &self.params, None, |x, r, j| eq.eval(x, r, j))
            .map_err(|f| StepError::from_newton(f, t, self.params.tolerance))?;
        let d = self.x.rows(0, n).into_owned();
        let mu = self.x.rows(2 * n, m) / unit;
        let mut reaction = DVector::zeros(n);
        forms_transpose_times(&self.forms, &mu, &mut reaction);
        Ok(DynSubStep {
            b: a + &d,
            d,
            pi_b: self.x.rows(n, n) / unit,
            reaction,
            stats: StepStats::from_newton(&info, false),
            tangent: None,
            parameters: None,
        })
    }

    /// `a + d` with the compensated summation of the steps taken.
    pub fn add_with_carry(&mut self, a: &DVector<f64>, d: &DVector<f64>) -> DVector<f64> {
        self.carry.add(a, d)
    }

    /// The discrete energy `E_d = ∂H_{d+}/∂h` of the oriented step from `a`
    /// with end momentum `π_b` (symplectic Euler: `K(a, π_b)`), and its
    /// gradient with respect to `π_b`.
    ///
    /// # Errors
    /// Without a Hamiltonian, and [`GeometryError::NonFinite`] when the
    /// energy is not finite.
    pub fn discrete_energy(
        &self,
        a: &DVector<f64>,
        pi_b: &DVector<f64>,
        h: f64,
    ) -> Result<(f64, DVector<f64>), GeometryError> {
        let _ = h;
        let (energy, grad) =
            hamiltonian_momentum_gradient_dyn(&self.system, self.reversed(), a, pi_b)
                .ok_or_else(no_hamiltonian)?;
        if !energy.is_finite() {
            return Err(GeometryError::NonFinite {
                what: "discrete energy",
                index: 0,
                value: energy,
            });
        }
        Ok((energy, grad))
    }

    /// The constraint residual of the oriented step `a → a + d`.
    ///
    /// # Errors
    /// When the discrete constraint cannot be evaluated.
    pub fn constraint_residual(
        &self,
        a: &DVector<f64>,
        d: &DVector<f64>,
        h: f64,
    ) -> Result<f64, GeometryError> {
        constraint_residual_dyn(
            self.constraint,
            &self.system,
            self.direction.orientation(),
            a,
            d,
            h,
        )
    }
}

/// The oriented (+) equations at fixed `(a, π_a, h)`.
struct Equations<'s, Sy> {
    system: &'s Sy,
    cd: ConstraintDiscretization,
    orientation: Orientation,
    a: &'s DVector<f64>,
    pi_a: &'s DVector<f64>,
    forms: &'s [f64],
    h: f64,
    unit: f64,
    n: usize,
    m: usize,
}

impl<Sy: DynSystem> Equations<'_, Sy> {
    fn eval(
        &self,
        x: &DVector<f64>,
        r: &mut DVector<f64>,
        jac: &mut DMatrix<f64>,
    ) -> Result<f64, GeometryError> {
        let (n, m, h, unit) = (self.n, self.m, self.h, self.unit);
        let d = x.rows(0, n).into_owned();
        let pi_b = x.rows(n, n) / unit;
        let mu = x.rows(2 * n, m).into_owned();
        let reversed = self.orientation == Orientation::Reversed;
        let jet =
            hamiltonian_jet_dyn(self.system, reversed, self.a, &pi_b).ok_or_else(no_hamiltonian)?;
        let n2 = 2 * n;
        let inv_h = h.recip();
        let mut force = DVector::zeros(n);
        forms_transpose_times(self.forms, &mu, &mut force);
        jac.fill(0.0);
        for i in 0..n {
            r[i] = d[i] * inv_h - jet.k_pi[i];
            jac[(i, i)] = inv_h;
            for j in 0..n {
                jac[(i, n + j)] = -jet.k_pipi[(i, j)] / unit;
            }
            r[n + i] = self.pi_a[i] * unit - x[n + i] - h * jet.k_a[i] * unit - force[i];
            jac[(n + i, n + i)] = -1.0;
            for j in 0..n {
                jac[(n + i, n + j)] -= h * jet.k_api[(i, j)];
            }
            for j in 0..m {
                jac[(n + i, n2 + j)] = -self.forms[j * n + i];
            }
        }
        if m > 0 {
            let mut c = DVector::zeros(m);
            let mut dc = DMatrix::zeros(m, n);
            constraint_jacobian_dyn(
                self.cd,
                self.system,
                self.orientation,
                self.a,
                &d,
                h,
                &mut c,
                &mut dc,
            )?;
            for i in 0..m {
                r[n2 + i] = c[i];
                for j in 0..n {
                    jac[(n2 + i, j)] = dc[(i, j)];
                }
            }
        }
        Ok((self.pi_a.amax() * unit).max(jet.k_pi.amax()).max(1.0))
    }
}

impl<Sy: DynSystem> DynSubStepper for DynNonholonomicHamiltonian<Sy> {
    type System = Sy;

    fn system(&self) -> &Sy {
        &self.system
    }

    fn direction(&self) -> Direction {
        self.direction
    }

    fn sub_step(
        &mut self,
        t: f64,
        a: &DVector<f64>,
        pi_a: &DVector<f64>,
        h: f64,
    ) -> Result<DynSubStep, StepError> {
        let mut s = self.solve_oriented(false, t, a, pi_a, h, None)?;
        s.b = self.add_with_carry(a, &s.d);
        Ok(s)
    }

    fn trial_step(
        &mut self,
        t: f64,
        a: &DVector<f64>,
        pi_a: &DVector<f64>,
        h: f64,
        guess: &DVector<f64>,
    ) -> Result<DynSubStep, StepError> {
        self.solve_oriented(true, t, a, pi_a, h, Some((guess, pi_a)))
    }

    fn reset_warm_start(&mut self) {}

    /// The exact tangent map of the sub-step (docs/theory.md §12.7).
    fn sub_step_tangent(
        &self,
        t: f64,
        a: &DVector<f64>,
        sub: &DynSubStep,
        h: f64,
    ) -> Result<DynStepTangent, StepError> {
        self.oriented_tangent(t, a, sub, h)
    }

    /// The tangent map with the parameter columns (docs/theory.md §12.4,
    /// §12.7).
    fn sub_step_sensitivity(
        &self,
        t: f64,
        a: &DVector<f64>,
        sub: &DynSubStep,
        h: f64,
        directions: &DMatrix<f64>,
    ) -> Result<DynStepSensitivity, StepError> {
        self.oriented_sensitivity(t, a, sub, h, directions)
    }

    fn measures(
        &mut self,
        _t: f64,
        a: &DVector<f64>,
        sub: &DynSubStep,
        h: f64,
    ) -> Result<(f64, f64), GeometryError> {
        let (energy, _) = self.discrete_energy(a, &sub.pi_b, h)?;
        Ok((energy, self.constraint_residual(a, &sub.d, h)?))
    }
}

impl<Sy: DynSystem> DynOneStep for DynNonholonomicHamiltonian<Sy> {
    type Event = ();
    type Error = StepError;

    fn advance(
        &mut self,
        from: &DynState,
        h: f64,
        _events: &mut Vec<()>,
    ) -> Result<DynStepOutput, StepError> {
        super::dyn_advance(self, from, h)
    }
}
