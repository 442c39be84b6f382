//! The midpoint discretization on a smooth unconstrained system: the Kepler
//! problem against its exact solution (Kepler's equation). Second order in
//! `q` and `p` (the energy over 10^6 steps: tests/long/tests/long_horizons.rs,
//! at opt-level 2).

use crate::common;
use common::{KEPLER_A as A, KEPLER_E as E, Kepler, fitted_order, kepler_exact, kepler_pericenter};
use diracvi_discrete_dirac::{LagrangeDirac, RunOptions, integrate, state_from_velocity};
use diracvi_geometry::{ConstraintDiscretization, Discretization};

#[test]
fn kepler_midpoint_is_second_order() {
    let (q0, v0) = kepler_pericenter(A, E);
    let s0 = state_from_velocity(&Kepler, 0.0, &q0, &v0).unwrap();
    // Not a whole period, so the error is not only a phase error at pericenter.
    let t_end = 5.0;
    let (q_ref, v_ref) = kepler_exact(A, E, t_end);
    let (mut hs, mut eq, mut ep) = (vec![], vec![], vec![]);
    for n in [250, 500, 1000, 2000] {
        let h = t_end / n as f64;
        let mut st = LagrangeDirac::plus(
            Kepler,
            Discretization::Midpoint,
            ConstraintDiscretization::Retraction,
        );
        let traj = integrate(&mut st, s0, h, RunOptions::new(n).every(0), |_| {}, |_| {}).unwrap();
        let end = traj.summary.final_state;
        assert!((end.t - t_end).abs() <= 1e-12);
        let (dq, dp) = ((end.q - q_ref).norm(), (end.p - v_ref).norm());
        eprintln!(
            "Kepler midpoint h = {h:.4}: |q − q_exact| = {dq:.3e}, |p − p_exact| = {dp:.3e}, max |E_d − E_d0| = {:.2e}",
            traj.summary.max_abs_energy_deviation
        );
        hs.push(h);
        eq.push(dq);
        ep.push(dp);
    }
    let (oq, op) = (fitted_order(&hs, &eq), fitted_order(&hs, &ep));
    eprintln!("Kepler midpoint fitted order: q {oq:.3}, p {op:.3}");
    assert!((oq - 2.0).abs() <= 0.1, "q order {oq}");
    assert!((op - 2.0).abs() <= 0.1, "p order {op}");
}
