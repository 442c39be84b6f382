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
//! A model file declares its symmetry in a `[symmetry]` table
//! (`cyclic = ["x", …]`, docs/model-files.md); it is reduced on the
//! run-time-sized core, whatever its size
//! ([`Scenario::visit_dyn_reduced`], [`DynReducedModelVisitor`]).
//!
//! The disk-table's rotation about the table centre is a symmetry too, but
//! it turns `(x, y)` and shifts `φ`: not a coordinate shift in this chart,
//! so it is not declared (and `x`, `y` alone are not cyclic: the table's
//! wall sees them, which the symmetry check reports).

use crate::scenario::build;
use crate::{
    DiskTable, DynRunSetup, Model, ModelError, NamedDynSystem, NamedSystem, Particle, Pendulum,
    RunSetup, Scenario,
};
use diracvi_geometry::dynamic::{DynCyclicSymmetry, DynReduced};
use diracvi_geometry::{CyclicSymmetry, ReductionKind};

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

/// A generic operation on a model of any size with a declared symmetry
/// (a model file's `[symmetry]` table) and its run setup: the run-time-sized
/// counterpart of [`ReducedModelVisitor`].
pub trait DynReducedModelVisitor {
    /// What the visit produces.
    type Output;
    /// Called with the model, its declared cyclic coordinates (not yet
    /// checked to be cyclic: [`DynReduced::new`] checks them) and the setup.
    fn visit<Mo: NamedDynSystem>(
        self,
        model: &Mo,
        symmetry: DynCyclicSymmetry,
        setup: &DynRunSetup,
    ) -> Self::Output;
}

impl Scenario {
    /// Whether the scenario is read from a model file that declares a
    /// symmetry (a `[symmetry]` table): reduced runs of it go through
    /// [`visit_dyn_reduced`](Self::visit_dyn_reduced).
    pub fn declares_file_symmetry(&self) -> bool {
        self.circuit.is_none() && self.file.as_ref().is_some_and(|f| !f.symmetry.is_empty())
    }

    /// Build the model of a model-file scenario (a
    /// [`FileModel`](crate::FileModel) of any size, with every check of
    /// [`visit_dyn`](Self::visit_dyn)) and hand it, the cyclic coordinates
    /// its `[symmetry]` table declares and the setup to `visitor`.
    ///
    /// # Errors
    /// [`ModelError::FileNoSymmetry`] for a file without `[symmetry]`;
    /// [`ModelError::NoSymmetry`] for a scenario not read from a model file
    /// (the catalogue's symmetries go through
    /// [`visit_reduced`](Self::visit_reduced)); every error of
    /// [`visit_dyn`](Self::visit_dyn); [`ModelError::Scenario`] for a
    /// declaration that does not fit the model (files are checked when
    /// read).
    pub fn visit_dyn_reduced<V: DynReducedModelVisitor>(
        &self,
        visitor: V,
    ) -> Result<V::Output, ModelError> {
        let file = match &self.file {
            Some(file) if self.circuit.is_none() => file,
            _ => {
                return Err(ModelError::NoSymmetry {
                    model: self.model.clone(),
                    valid: SYMMETRIC_MODELS.iter().map(|s| s.to_string()).collect(),
                });
            }
        };
        if file.symmetry.is_empty() {
            return Err(ModelError::FileNoSymmetry {
                model: self.model.clone(),
                path: file.path.clone(),
            });
        }
        let indices = file
            .symmetry
            .iter()
            .map(|name| {
                file.coordinates
                    .iter()
                    .position(|c| c == name)
                    .ok_or_else(|| {
                        ModelError::Scenario(format!(
                            "symmetry.cyclic: `{name}` is not a coordinate of '{}'",
                            self.model
                        ))
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let symmetry = DynCyclicSymmetry::new(file.n(), &indices)
            .map_err(|e| ModelError::Scenario(format!("symmetry.cyclic: {e}")))?;
        let (model, setup) = crate::scenario::file_dyn_model(self, file)?;
        Ok(visitor.visit(&model, symmetry, &setup))
    }
}

/// The reduced system of a named system is named: the full system's name,
/// the shape coordinates' names, the full system's boundary pieces; its
/// constraint rows are the full system's (Routh) or the one row left on
/// shape space (Chaplygin).
impl<Sy: NamedDynSystem> NamedDynSystem for DynReduced<Sy> {
    fn name(&self) -> &str {
        self.full().name()
    }
    fn description(&self) -> &str {
        self.full().description()
    }
    fn coordinates(&self) -> Vec<String> {
        let all = self.full().coordinates();
        self.shape_indices()
            .iter()
            .map(|&i| all[i].clone())
            .collect()
    }
    fn piece_name(&self, j: usize) -> String {
        self.full().piece_name(j)
    }
    fn constraint_name(&self, a: usize) -> String {
        match self.kind() {
            ReductionKind::Routh => self.full().constraint_name(a),
            ReductionKind::Chaplygin => {
                format!("the constraint left on shape space, n(s)ᵀ A_S(s) ṡ = 0 (row {a})")
            }
        }
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
