//! The catalogue: the one place that maps model names to model types.

use crate::{
    BouncingBody, ChaplyginSphere, DiskTable, DiskWall, Ellipse, HeavyTop, Lc, Model, ModelError,
    ModelInfo, ParameterInfo, Particle, Pendulum, Star,
};

/// An operation on a model *type* (before any instance exists); the one
/// place the registry maps names to types.
pub(crate) trait ModelTypeVisitor {
    type Output;
    fn visit<const N: usize, const M: usize, Mo: Model<N, M>>(self) -> Self::Output;
}

macro_rules! registry {
    (
        compiled { $($ty:ty => ($n:literal, $m:literal)),* $(,)? }
        run_time { $($rty:ty => ($rn:literal, $rm:literal)),* $(,)? }
    ) => {
        /// Every catalogued model, in registry order.
        pub fn catalogue() -> Vec<ModelInfo> {
            vec![
                $(ModelInfo {
                    name: <$ty as Model<$n, $m>>::NAME,
                    description: <$ty as Model<$n, $m>>::DESCRIPTION,
                },)*
                $(ModelInfo {
                    name: <$rty as Model<$rn, $rm>>::NAME,
                    description: <$rty as Model<$rn, $rm>>::DESCRIPTION,
                },)*
            ]
        }

        /// Call `visitor` with the model type registered under `name`.
        pub(crate) fn dispatch_type<V: ModelTypeVisitor>(
            name: &str,
            visitor: V,
        ) -> Result<V::Output, ModelError> {
            $(
                if name == <$ty as Model<$n, $m>>::NAME {
                    return Ok(visitor.visit::<$n, $m, $ty>());
                }
            )*
            $(
                if name == <$rty as Model<$rn, $rm>>::NAME {
                    return Ok(visitor.visit::<$rn, $rm, $rty>());
                }
            )*
            Err(unknown(name))
        }

        /// [`dispatch_type`] for the models the compile-time-sized runners
        /// take ([`runs_on_compile_time_core`]): `Ok(None)` for a model that
        /// runs on the run-time-sized core only, so that `visitor` is never
        /// instantiated for it.
        pub(crate) fn dispatch_compiled_type<V: ModelTypeVisitor>(
            name: &str,
            visitor: V,
        ) -> Result<Option<V::Output>, ModelError> {
            $(
                if name == <$ty as Model<$n, $m>>::NAME {
                    return Ok(Some(visitor.visit::<$n, $m, $ty>()));
                }
            )*
            $(
                if name == <$rty as Model<$rn, $rm>>::NAME {
                    return Ok(None);
                }
            )*
            Err(unknown(name))
        }

        /// Whether the catalogued model `name` runs on the compile-time-sized
        /// core (every stepper and law instantiated for its sizes) rather
        /// than on the run-time-sized core only (docs/theory.md §11.5).
        /// `false` for names not in the catalogue.
        pub fn runs_on_compile_time_core(name: &str) -> bool {
            false $(|| name == <$ty as Model<$n, $m>>::NAME)*
        }
    };
}

/// The error for a name not in the catalogue.
fn unknown(name: &str) -> ModelError {
    ModelError::UnknownModel {
        name: name.to_string(),
        valid: catalogue().iter().map(|i| i.name.to_string()).collect(),
    }
}

// `compiled`: the models every stepper and impact law of the compile-time
// core is instantiated for (the fastest steps; each costs build time, about
// 4 CPU minutes for a model of 7 coordinates). `run_time`: models that run
// on the run-time-sized core only, through `Fixed` (every method there too;
// README "Build time", docs/theory.md §11.5).
registry! {
    compiled {
        Particle => (2, 0),
        Ellipse => (3, 0),
        Star => (3, 0),
        Pendulum => (2, 1),
        DiskWall => (4, 2),
        DiskTable => (4, 2),
        Lc => (4, 2),
        HeavyTop => (4, 1),
        ChaplyginSphere => (6, 3),
    }
    run_time {
        BouncingBody => (7, 1),
    }
}

/// The [`ModelInfo`] of the model registered under `name`.
///
/// # Errors
/// [`ModelError::UnknownModel`] listing the valid names.
pub fn model_info(name: &str) -> Result<ModelInfo, ModelError> {
    struct Info;
    impl ModelTypeVisitor for Info {
        type Output = ModelInfo;
        fn visit<const N: usize, const M: usize, Mo: Model<N, M>>(self) -> ModelInfo {
            ModelInfo {
                name: Mo::NAME,
                description: Mo::DESCRIPTION,
            }
        }
    }
    dispatch_type(name, Info)
}

/// The parameters of the model registered under `name`.
///
/// # Errors
/// [`ModelError::UnknownModel`] listing the valid names.
pub fn parameters(name: &str) -> Result<&'static [ParameterInfo], ModelError> {
    struct Params;
    impl ModelTypeVisitor for Params {
        type Output = &'static [ParameterInfo];
        fn visit<const N: usize, const M: usize, Mo: Model<N, M>>(self) -> Self::Output {
            Mo::PARAMETERS
        }
    }
    dispatch_type(name, Params)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ModelVisitor, NamedSystem, RunSetup, Scenario};

    /// For every catalogued model: the default scenario's setup is the
    /// model's `run_defaults`, the default parameters round-trip through
    /// `new`/`params`, and the coordinate names match `N`.
    #[test]
    fn default_scenarios_are_the_models_run_defaults() {
        struct Check(&'static str);
        impl ModelTypeVisitor for Check {
            type Output = ();
            fn visit<const N: usize, const M: usize, Mo: Model<N, M>>(self) {
                let model = Mo::new(Mo::Params::default()).unwrap();
                assert_eq!(model.params(), &Mo::Params::default(), "{}", self.0);
                assert_eq!(Mo::coordinate_names().len(), N);
                struct Setup<const K: usize>(RunSetup<K>);
                impl<const K: usize> ModelVisitor for Setup<K> {
                    type Output = ();
                    fn visit<const N: usize, const M: usize, Mo: NamedSystem<N, M>>(
                        self,
                        _model: &Mo,
                        setup: &RunSetup<N>,
                    ) {
                        assert_eq!(self.0.q0.as_slice(), setup.q0.as_slice());
                        assert_eq!(self.0.v0.as_slice(), setup.v0.as_slice());
                        assert_eq!(
                            (
                                self.0.h,
                                self.0.t_end,
                                self.0.discretization,
                                self.0.constraint
                            ),
                            (setup.h, setup.t_end, setup.discretization, setup.constraint)
                        );
                    }
                }
                Scenario::defaults(self.0)
                    .unwrap()
                    .visit_catalogue(Setup(model.run_defaults()))
                    .unwrap();
            }
        }
        for info in catalogue() {
            dispatch_type(info.name, Check(info.name)).unwrap();
        }
    }
}
