//! The catalogue's declared symmetries (docs/theory.md §7): which models can
//! be run reduced on shape space, by which cyclic coordinates, and with
//! which reduced sizes.
//!
//! | model | cyclic | reduction | shape `s` | `NR`, `MR` |
//! |---|---|---|---|---|
//! | `particle` | `x` | Routh: `p_x` conserved | `(y)` | 1, 0 |
//! | `pendulum` | `φ` | Chaplygin: `φ̇ = f(θ) θ̇` | `(θ)` | 1, 0 |
//! | `disk-table` | `θ` (rolling angle) | Chaplygin: `θ̇ = (cos φ ẋ + sin φ ẏ)/R` | `(x, y, φ)` | 3, 1 |
//!
//! The disk-table's rotation about the table centre is a symmetry too, but
//! it turns `(x, y)` and shifts `φ`: not a coordinate shift in this chart,
//! so it is not declared (and `x`, `y` alone are not cyclic: the table's
//! wall sees them, which the symmetry check reports).

use crate::scenario::build;
use crate::{DiskTable, Model, ModelError, NamedSystem, Particle, Pendulum, RunSetup, Scenario};
use diracvi_geometry::CyclicSymmetry;

/// A catalogued model that declares an abelian symmetry by coordinate
/// shifts.
pub trait Symmetric<const N: usize, const M: usize>: Model<N, M> {
    /// The cyclic coordinates (checked when the reduction is built).
    fn symmetry(&self) -> CyclicSymmetry<N>;
}

/// The catalogue's declaration of the cyclic coordinates `indices` (a
/// constant list, valid by construction: one index below `N`).
fn cyclic<const N: usize>(indices: &[usize]) -> CyclicSymmetry<N> {
    CyclicSymmetry::new(indices).unwrap_or_else(|e| unreachable!("catalogue declaration: {e}"))
}

impl Symmetric<2, 0> for Particle {
    fn symmetry(&self) -> CyclicSymmetry<2> {
        cyclic(&[0])
    }
}

impl Symmetric<2, 1> for Pendulum {
    fn symmetry(&self) -> CyclicSymmetry<2> {
        cyclic(&[1])
    }
}

impl Symmetric<4, 2> for DiskTable {
    fn symmetry(&self) -> CyclicSymmetry<4> {
        cyclic(&[2])
    }
}

/// The models that declare a symmetry.
pub const SYMMETRIC_MODELS: [&str; 3] = [Particle::NAME, Pendulum::NAME, DiskTable::NAME];

/// A generic operation on a model with a declared symmetry, its run setup,
/// and the reduced sizes `NR` (shape coordinates) and `MR` (constraints
/// left on shape space).
pub trait ReducedModelVisitor {
    /// What the visit produces.
    type Output;
    /// Called with the concrete model type and sizes.
    fn visit<const N: usize, const M: usize, const NR: usize, const MR: usize, Mo>(
        self,
        model: &Mo,
        symmetry: CyclicSymmetry<N>,
        setup: &RunSetup<N>,
    ) -> Self::Output
    where
        Mo: NamedSystem<N, M>;
}

impl Scenario {
    /// Build the scenario's model (with every check of
    /// [`visit`](Self::visit)) and hand it, its declared symmetry and the
    /// reduced sizes to `visitor`.
    ///
    /// # Errors
    /// [`ModelError::NoSymmetry`] for a model that declares none (model
    /// files included); every error of [`visit`](Self::visit).
    pub fn visit_reduced<V: ReducedModelVisitor>(
        &self,
        visitor: V,
    ) -> Result<V::Output, ModelError> {
        fn go<const N: usize, const M: usize, const NR: usize, const MR: usize, Mo, V>(
            sc: &Scenario,
            visitor: V,
        ) -> Result<V::Output, ModelError>
        where
            Mo: Symmetric<N, M>,
            V: ReducedModelVisitor,
        {
            let (model, setup) = build::<N, M, Mo>(sc)?;
            let symmetry = model.symmetry();
            Ok(visitor.visit::<N, M, NR, MR, Mo>(&model, symmetry, &setup))
        }
        if self.file.is_none() {
            match self.model.as_str() {
                Particle::NAME => return go::<2, 0, 1, 0, Particle, V>(self, visitor),
                Pendulum::NAME => return go::<2, 1, 1, 0, Pendulum, V>(self, visitor),
                DiskTable::NAME => return go::<4, 2, 3, 1, DiskTable, V>(self, visitor),
                _ => {}
            }
        }
        Err(ModelError::NoSymmetry {
            model: self.model.clone(),
            valid: SYMMETRIC_MODELS.iter().map(|s| s.to_string()).collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declared_symmetries_pass_their_check() {
        struct Check;
        impl ReducedModelVisitor for Check {
            type Output = Result<(), diracvi_geometry::SymmetryError>;
            fn visit<const N: usize, const M: usize, const NR: usize, const MR: usize, Mo>(
                self,
                model: &Mo,
                symmetry: CyclicSymmetry<N>,
                setup: &RunSetup<N>,
            ) -> Self::Output
            where
                Mo: NamedSystem<N, M>,
            {
                assert_eq!(symmetry.dimension(), N - NR);
                symmetry.check::<Mo, M>(model, &setup.q0, &setup.v0)
            }
        }
        for name in SYMMETRIC_MODELS {
            let sc = Scenario::defaults(name).unwrap();
            sc.visit_reduced(Check).unwrap().unwrap();
        }
        let err = Scenario::defaults("ellipse")
            .unwrap()
            .visit_reduced(Check)
            .unwrap_err();
        assert!(matches!(err, ModelError::NoSymmetry { .. }), "{err}");
    }
}
