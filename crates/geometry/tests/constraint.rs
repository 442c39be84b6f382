//! Discrete constraints (issue #2, item 6): `ConstraintDiscretization::{
//! Retraction, Midpoint, Model}` × `Orientation::{Forward, Reversed}`.
//!
//! * values against the formulas of docs/theory.md §2 / `constraint.rs` (velocity
//!   units), 1e-14 relative:
//!   - Retraction, Forward: `ω_{d+}(a, b) = A(a) R_a^{-1}(b) / h`;
//!   - Retraction, Reversed (`a = q_{k+1}`, `b = q_k`):
//!     `ω_{d−}(b, a) = ⟨ω(a), −R_a^{-1}(b)⟩ / h`;
//!   - Midpoint: `ω_mid(q0, q1) = A((q0+q1)/2)(q1 − q0)/h` at `(a, b)`
//!     (Forward) or `(b, a)` (Reversed);
//!   - Model: the system's `discrete_constraint(q0, q1, h)`, same reading;
//! * they vanish on the discretization of admissible velocities;
//! * Jacobians in `b` against fourth-order finite differences (1e-7 relative);
//! * `Model` without a model constraint → `NoModelConstraint`;
//! * the residual of docs/theory.md §6.

use crate::common;

use approx::assert_relative_eq;
use common::*;
use diracvi_geometry::{
    Angles, ConstraintDiscretization, Discretization, DiscretizationMap, GeometryError,
    Orientation, Retraction, RetractionForward, SMatrix, SVector, Se2, System,
};
use rand::SeedableRng;
use rand::rngs::SmallRng;
use std::f64::consts::PI;

const ALL: [ConstraintDiscretization; 3] = [
    ConstraintDiscretization::Retraction,
    ConstraintDiscretization::Midpoint,
    ConstraintDiscretization::Model,
];
const ORIENTATIONS: [Orientation; 2] = [Orientation::Forward, Orientation::Reversed];
const VALUE_TOL: f64 = 1e-14;
const FD_TOL: f64 = 1e-7;

fn eval<Sy, Dm, const N: usize, const M: usize>(
    cd: ConstraintDiscretization,
    sys: &Sy,
    map: &Dm,
    o: Orientation,
    a: &SVector<f64, N>,
    b: &SVector<f64, N>,
    h: f64,
) -> Result<SVector<f64, M>, GeometryError>
where
    Sy: System<N, M>,
    Dm: DiscretizationMap<N>,
{
    cd.evaluate::<Sy, Dm, f64, N, M>(sys, map, o, a, b, h)
}

/// The docs/theory.md §2 formula, written out independently of the library's dispatch.
/// `disp(x, y)` is `R_x^{-1}(y)` of the map's retraction.
#[allow(clippy::too_many_arguments)]
fn by_formula<const N: usize, const M: usize>(
    cd: ConstraintDiscretization,
    forms: impl Fn(&SVector<f64, N>) -> SMatrix<f64, M, N>,
    disp: impl Fn(&SVector<f64, N>, &SVector<f64, N>) -> SVector<f64, N>,
    model: impl Fn(&SVector<f64, N>, &SVector<f64, N>, f64) -> SVector<f64, M>,
    o: Orientation,
    a: &SVector<f64, N>,
    b: &SVector<f64, N>,
    h: f64,
) -> SVector<f64, M> {
    // (q0, q1) in time order
    let (q0, q1) = match o {
        Orientation::Forward => (a, b),
        Orientation::Reversed => (b, a),
    };
    match (cd, o) {
        // ω_{d+}(q0, q1) = ⟨ω(q0), R_{q0}^{-1}(q1)⟩ / h
        (ConstraintDiscretization::Retraction, Orientation::Forward) => {
            forms(q0) * disp(q0, q1) / h
        }
        // ω_{d−}(q0, q1) = ⟨ω(q1), −R_{q1}^{-1}(q0)⟩ / h
        (ConstraintDiscretization::Retraction, Orientation::Reversed) => {
            forms(q1) * (-disp(q1, q0)) / h
        }
        (ConstraintDiscretization::Midpoint, _) => forms(&((q0 + q1) / 2.0)) * (q1 - q0) / h,
        (ConstraintDiscretization::Model, _) => model(q0, q1, h),
    }
}

#[track_caller]
#[allow(clippy::too_many_arguments)]
fn check_jacobian<Sy, Dm, const N: usize, const M: usize>(
    what: &str,
    cd: ConstraintDiscretization,
    sys: &Sy,
    map: &Dm,
    o: Orientation,
    a: &SVector<f64, N>,
    b: &SVector<f64, N>,
    h: f64,
) where
    Sy: System<N, M>,
    Dm: DiscretizationMap<N>,
{
    let (value, jac) = cd.jacobian::<Sy, Dm, N, M>(sys, map, o, a, b, h).unwrap();
    let direct = eval(cd, sys, map, o, a, b, h).unwrap();
    assert_rel(
        &format!("{what}: jacobian value = evaluate"),
        &value,
        &direct,
        VALUE_TOL,
    );
    let delta = 1e-3 * (b - a).amax().clamp(1e-2, 1.0);
    let fd = fd_jacobian(|y| eval(cd, sys, map, o, a, y, h).unwrap(), b, delta);
    // a zero Jacobian (e.g. constant forms and the model's own zero rows) is
    // compared in absolute terms
    let e = rel_err(&jac, &fd, 1.0 / h);
    assert!(
        e <= FD_TOL,
        "{what}: Jacobian vs FD: {e:e}\n AD {jac}\n FD {fd}"
    );
}

/// The nonholonomic pendulum's form by hand: `[π + cos²θ, −1]`.
fn pendulum_forms(q: &SVector<f64, 2>) -> SMatrix<f64, 1, 2> {
    SMatrix::from([[PI + q[0].cos().powi(2)], [-1.0]])
}

fn euclid<const N: usize>(x: &SVector<f64, N>, y: &SVector<f64, N>) -> SVector<f64, N> {
    y - x
}

#[test]
fn pendulum_values_and_jacobians() {
    let sys = NonholonomicPendulum::default();
    let mut rng = SmallRng::seed_from_u64(0xC0);
    let no_model = |_: &SVector<f64, 2>, _: &SVector<f64, 2>, _: f64| SVector::<f64, 1>::zeros();
    for k in 0..100 {
        let h = rand_step(&mut rng, 1e-3, 0.1);
        let a = rand_vec::<2>(&mut rng, 4.0);
        let b = a + rand_vec::<2>(&mut rng, 3.0) * if k % 2 == 0 { h } else { 0.3 };
        for o in ORIENTATIONS {
            for cd in [
                ConstraintDiscretization::Retraction,
                ConstraintDiscretization::Midpoint,
            ] {
                for (name, map) in [
                    ("forward", Discretization::Forward),
                    ("midpoint", Discretization::Midpoint),
                ] {
                    let got = eval(cd, &sys, &map, o, &a, &b, h).unwrap();
                    let want = by_formula(cd, pendulum_forms, euclid, no_model, o, &a, &b, h);
                    assert_rel(
                        &format!("pendulum {cd} {o:?} [{name}]"),
                        &got,
                        &want,
                        VALUE_TOL,
                    );
                    check_jacobian(
                        &format!("pendulum {cd} {o:?} [{name}]"),
                        cd,
                        &sys,
                        &map,
                        o,
                        &a,
                        &b,
                        h,
                    );
                }
                // through the angle retraction: the displacement is wrapped, so
                // whole turns added to b change nothing for `Retraction`
                let map = RetractionForward(Angles);
                let turns = SVector::from([2.0 * PI, -4.0 * PI]);
                let got = eval(cd, &sys, &map, o, &a, &(b + turns), h).unwrap();
                if cd == ConstraintDiscretization::Retraction {
                    let want = by_formula(cd, pendulum_forms, euclid, no_model, o, &a, &b, h);
                    assert_rel(&format!("pendulum {cd} {o:?} [angles]"), &got, &want, 1e-12);
                }
                check_jacobian(
                    &format!("pendulum {cd} {o:?} [angles]"),
                    cd,
                    &sys,
                    &map,
                    o,
                    &a,
                    &b,
                    h,
                );
            }
        }
    }
}

#[test]
fn lc_values_and_jacobians() {
    let sys = LcCircuit::default();
    let forms = |_: &SVector<f64, 4>| {
        SMatrix::<f64, 2, 4>::from_row_slice(&[-1.0, 0.0, 1.0, 0.0, 0.0, -1.0, 1.0, -1.0])
    };
    let no_model = |_: &SVector<f64, 4>, _: &SVector<f64, 4>, _: f64| SVector::<f64, 2>::zeros();
    let mut rng = SmallRng::seed_from_u64(0xC1);
    for _ in 0..50 {
        let h = rand_step(&mut rng, 1e-3, 0.2);
        let (a, b) = (rand_vec::<4>(&mut rng, 5.0), rand_vec::<4>(&mut rng, 5.0));
        for o in ORIENTATIONS {
            for cd in [
                ConstraintDiscretization::Retraction,
                ConstraintDiscretization::Midpoint,
            ] {
                let map = Discretization::Forward;
                let got = eval(cd, &sys, &map, o, &a, &b, h).unwrap();
                let want = by_formula(cd, forms, euclid, no_model, o, &a, &b, h);
                assert_rel(&format!("lc {cd} {o:?}"), &got, &want, VALUE_TOL);
                check_jacobian(&format!("lc {cd} {o:?}"), cd, &sys, &map, o, &a, &b, h);
                // constant forms: the Jacobian is ±A/h exactly
                let (_, jac) = cd.jacobian::<_, _, 4, 2>(&sys, &map, o, &a, &b, h).unwrap();
                let sign = if o == Orientation::Forward { 1.0 } else { -1.0 };
                assert_rel(
                    &format!("lc {cd} {o:?} Jacobian"),
                    &jac,
                    &(forms(&a) * (sign / h)),
                    VALUE_TOL,
                );
            }
        }
        // Kirchhoff currents: q1 − q0 ∈ ker A ⇒ every discrete constraint vanishes
        let i_l = rand_vec::<2>(&mut rng, 5.0);
        let currents = SVector::from([i_l[0], i_l[1], i_l[0], i_l[0] - i_l[1]]);
        let b = a + currents * h;
        for cd in [
            ConstraintDiscretization::Retraction,
            ConstraintDiscretization::Midpoint,
        ] {
            for o in ORIENTATIONS {
                let c = eval(cd, &sys, &Discretization::Midpoint, o, &a, &b, h).unwrap();
                assert!(c.amax() <= 1e-12 * currents.amax(), "lc {cd} {o:?}: {c}");
            }
        }
    }
}

#[test]
fn non_quadratic_values_jacobians_and_model() {
    let sys = NonQuadratic;
    let forms =
        |q: &SVector<f64, 2>| SMatrix::<f64, 1, 2>::from([[1.0 + q[1] * q[1]], [q[0].sin()]]);
    let model = |q0: &SVector<f64, 2>, q1: &SVector<f64, 2>, h: f64| {
        SVector::from([NonQuadratic::model_constraint_f64(q0, q1, h)])
    };
    let mut rng = SmallRng::seed_from_u64(0xC2);
    for _ in 0..100 {
        let h = rand_step(&mut rng, 1e-3, 0.1);
        let a = rand_vec::<2>(&mut rng, 2.0);
        let b = a + rand_vec::<2>(&mut rng, 0.5);
        for map in Discretization::ALL {
            for o in ORIENTATIONS {
                for cd in ALL {
                    let got = eval(cd, &sys, &map, o, &a, &b, h).unwrap();
                    let want = by_formula(cd, forms, euclid, model, o, &a, &b, h);
                    assert_rel(
                        &format!("non-quadratic {cd} {o:?} [{map}]"),
                        &got,
                        &want,
                        VALUE_TOL,
                    );
                    check_jacobian(
                        &format!("non-quadratic {cd} {o:?} [{map}]"),
                        cd,
                        &sys,
                        &map,
                        o,
                        &a,
                        &b,
                        h,
                    );
                }
            }
        }
    }
}

/// SE(2) retraction: `ω_{d±}` through `R^{-1} = log`, and the knife-edge
/// constraint vanishes on `R_{q0}(h v)` for admissible `v ∈ ker A(q0)`
/// (`ω_{d+}`), and on `q0 = R_{q1}(−h v)`, `v ∈ ker A(q1)` (`ω_{d−}`).
#[test]
fn knife_edge_se2() {
    let sys = KnifeEdge;
    let map = RetractionForward(Se2);
    let forms = |q: &SVector<f64, 3>| sys.constraint_forms(q);
    let disp = |x: &SVector<f64, 3>, y: &SVector<f64, 3>| Se2.inverse(x, y).unwrap();
    let no_model = |_: &SVector<f64, 3>, _: &SVector<f64, 3>, _: f64| SVector::<f64, 1>::zeros();
    let mut rng = SmallRng::seed_from_u64(0xC3);
    for _ in 0..100 {
        let h = rand_step(&mut rng, 1e-3, 0.1);
        let a = rand_vec::<3>(&mut rng, 3.0);
        let b = Se2.retract(&a, &(rand_vec::<3>(&mut rng, 4.0) * h));
        for o in ORIENTATIONS {
            for cd in [
                ConstraintDiscretization::Retraction,
                ConstraintDiscretization::Midpoint,
            ] {
                let got = eval(cd, &sys, &map, o, &a, &b, h).unwrap();
                let want = by_formula(cd, forms, disp, no_model, o, &a, &b, h);
                assert_rel(&format!("knife {cd} {o:?}"), &got, &want, VALUE_TOL);
                check_jacobian(&format!("knife {cd} {o:?}"), cd, &sys, &map, o, &a, &b, h);
            }
        }
        // admissible velocities: v = (ω, u cos θ, u sin θ)
        let (w, u) = (rng_pair(&mut rng), rng_pair(&mut rng));
        let speed = SVector::from([w, u * a[0].cos(), u * a[0].sin()]);
        let q1 = Se2.retract(&a, &(speed * h));
        let c = eval(
            ConstraintDiscretization::Retraction,
            &sys,
            &map,
            Orientation::Forward,
            &a,
            &q1,
            h,
        )
        .unwrap();
        assert!(
            c.amax() <= 1e-12 * speed.amax(),
            "ω_d+ on admissible step: {c}"
        );
        // backward: a = q_{k+1}, b = q_k = R_{q_{k+1}}(−h v), v ∈ ker A(q_{k+1})
        let q0 = Se2.retract(&a, &(-speed * h));
        let c = eval(
            ConstraintDiscretization::Retraction,
            &sys,
            &map,
            Orientation::Reversed,
            &a,
            &q0,
            h,
        )
        .unwrap();
        assert!(
            c.amax() <= 1e-12 * speed.amax(),
            "ω_d− on admissible step: {c}"
        );
    }
}

fn rng_pair(rng: &mut SmallRng) -> f64 {
    rand_vec::<1>(rng, 3.0)[0]
}

/// Forward pendulum step along an admissible velocity: `ω_{d+}` vanishes,
/// `ω_{d−}` of the mirrored step too.
#[test]
fn pendulum_admissible_steps() {
    let sys = NonholonomicPendulum::default();
    let map = Discretization::Forward;
    let mut rng = SmallRng::seed_from_u64(0xC4);
    for _ in 0..100 {
        let h = rand_step(&mut rng, 1e-3, 0.1);
        let q = rand_vec::<2>(&mut rng, 4.0);
        let th_dot = rng_pair(&mut rng);
        let v = SVector::from([th_dot, (PI + q[0].cos().powi(2)) * th_dot]); // A(q) v = 0
        let c = eval(
            ConstraintDiscretization::Retraction,
            &sys,
            &map,
            Orientation::Forward,
            &q,
            &(q + v * h),
            h,
        )
        .unwrap();
        assert!(c.amax() <= 1e-12 * v.amax(), "{c}");
        let c = eval(
            ConstraintDiscretization::Retraction,
            &sys,
            &map,
            Orientation::Reversed,
            &q,
            &(q - v * h),
            h,
        )
        .unwrap();
        assert!(c.amax() <= 1e-12 * v.amax(), "{c}");
    }
}

#[test]
fn model_without_model_constraint_is_an_error() {
    let sys = NonholonomicPendulum::default();
    let (a, b) = (SVector::from([2.0, 0.0]), SVector::from([2.01, 0.03]));
    let cd = ConstraintDiscretization::Model;
    for map in Discretization::ALL {
        for o in ORIENTATIONS {
            assert_eq!(
                eval(cd, &sys, &map, o, &a, &b, 0.01),
                Err(GeometryError::NoModelConstraint)
            );
            assert_eq!(
                cd.jacobian::<_, _, 2, 1>(&sys, &map, o, &a, &b, 0.01)
                    .unwrap_err(),
                GeometryError::NoModelConstraint
            );
        }
        assert_eq!(
            cd.residual::<_, _, 2, 1>(&sys, &map, &a, &b, 0.01),
            Err(GeometryError::NoModelConstraint)
        );
    }
    // with M = 0 there is nothing to discretize: no error, empty constraint
    let particle = BouncingParticle::default();
    let (a, b) = (SVector::from([0.0, 1.0]), SVector::from([0.1, 1.2]));
    let c: SVector<f64, 0> = eval(
        cd,
        &particle,
        &Discretization::Forward,
        Orientation::Forward,
        &a,
        &b,
        0.1,
    )
    .unwrap();
    assert_eq!(c.len(), 0);
    assert_eq!(
        cd.residual::<_, _, 2, 0>(&particle, &Discretization::Forward, &a, &b, 0.1),
        Ok(0.0)
    );
}

/// docs/theory.md §6: `max_a |h ω_d^a(q_k, q_{k+1})| / max(1, |q_{k+1}|)` with the
/// forward-oriented constraint.
#[test]
fn residual_formula() {
    let sys = LcCircuit::default();
    let map = Discretization::Forward;
    let forms = SMatrix::<f64, 2, 4>::from_row_slice(&[-1.0, 0.0, 1.0, 0.0, 0.0, -1.0, 1.0, -1.0]);
    let mut rng = SmallRng::seed_from_u64(0xC5);
    for k in 0..100 {
        let h = rand_step(&mut rng, 1e-3, 0.5);
        // |q1| below and above 1, to exercise both sides of max(1, |q1|)
        let r = if k % 2 == 0 { 0.2 } else { 10.0 };
        let (q0, q1) = (rand_vec::<4>(&mut rng, r), rand_vec::<4>(&mut rng, r));
        let want_num = (forms * (q1 - q0)).amax(); // |h ω_d| = |A (q1 − q0)|
        let want = want_num / q1.norm().max(1.0);
        for cd in [
            ConstraintDiscretization::Retraction,
            ConstraintDiscretization::Midpoint,
        ] {
            let got = cd.residual::<_, _, 4, 2>(&sys, &map, &q0, &q1, h).unwrap();
            assert_relative_eq!(got, want, max_relative = 1e-13);
        }
    }
    // the pendulum with its θ-dependent form, by hand
    let sys = NonholonomicPendulum::default();
    let (q0, q1, h) = (SVector::from([2.0, 0.5]), SVector::from([2.1, 0.2]), 0.05);
    let c = pendulum_forms(&q0) * (q1 - q0) / h;
    let want = (h * c[0]).abs() / q1.norm();
    let got = ConstraintDiscretization::Retraction
        .residual::<_, _, 2, 1>(&sys, &map, &q0, &q1, h)
        .unwrap();
    assert_relative_eq!(got, want, max_relative = 1e-14);
    // the residual is the forward (+) constraint, not the reversed one
    let reversed = pendulum_forms(&q1) * (q1 - q0) / h;
    assert!((got - (h * reversed[0]).abs() / q1.norm()).abs() > 1e-3);
}

#[test]
fn names_and_parsing() {
    for cd in ALL {
        assert_eq!(cd.to_string().parse::<ConstraintDiscretization>(), Ok(cd));
    }
    assert_eq!(
        ConstraintDiscretization::Retraction.to_string(),
        "retraction"
    );
    assert!("rk4".parse::<ConstraintDiscretization>().is_err());
}
