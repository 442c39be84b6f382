mod common;
use common::*;
use diracvi_discrete_dirac::*;
use diracvi_geometry::*;
use std::f64::consts::PI;

#[test]
#[ignore]
fn scratch_energy() {
    let pend = Pendulum::default();
    let th0 = 0.75 * PI;
    let q0 = SVector::from([th0, 0.0]);
    let v0 = SVector::from([0.25 * PI, f_pend(th0) * 0.25 * PI]);
    let s0 = state_from_velocity(&pend, 0.0, &q0, &v0).unwrap();
    let steps: usize = std::env::var("STEPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    for h in [1e-3, 1e-4] {
        for (name, params) in [
            ("default", NewtonParams::default()),
            ("polish1", NewtonParams::default().with_polish(1)),
            ("tol1e-14", NewtonParams::default().with_tolerance(1e-14)),
        ] {
            let mut st = LagrangeDirac::plus(
                pend,
                Discretization::Forward,
                ConstraintDiscretization::Retraction,
            )
            .with_params(params);
            let (mut ts, mut es) = (vec![], vec![]);
            let t0 = std::time::Instant::now();
            let r = integrate(
                &mut st,
                s0,
                h,
                RunOptions::new(steps).every(100).discard_records(),
                |r| {
                    ts.push(r.t);
                    es.push(r.energy);
                },
                |_| {},
            );
            match r {
                Ok(traj) => {
                    let e0 = es[0];
                    let de: Vec<f64> = es.iter().map(|e| e - e0).collect();
                    let (_, slope) = linear_fit(&ts, &de);
                    let s = traj.summary;
                    eprintln!(
                        "h={h:e} {name}: max dev {:.3e}, drift {slope:.3e}/s, its/step {:.3}, {:?}",
                        s.max_abs_energy_deviation,
                        s.newton_iterations as f64 / steps as f64,
                        t0.elapsed()
                    );
                }
                Err(e) => eprintln!("h={h:e} {name}: {e}"),
            }
        }
    }
}

#[test]
#[ignore]
fn scratch_count_pendulum() {
    let pend = Pendulum::default();
    let th0 = 0.75 * PI;
    let s0 = state_from_velocity(
        &pend,
        0.0,
        &SVector::from([th0, 0.0]),
        &SVector::from([0.25 * PI, f_pend(th0) * 0.25 * PI]),
    )
    .unwrap();
    let which = std::env::var("WHICH").unwrap_or_default();
    let mut its = 0;
    let t0 = std::time::Instant::now();
    let n = 200_000;
    if which == "fwd" || which == "mid" {
        let (d, c) = if which == "fwd" {
            (
                Discretization::Forward,
                ConstraintDiscretization::Retraction,
            )
        } else {
            (Discretization::Midpoint, ConstraintDiscretization::Midpoint)
        };
        let mut st = LagrangeDirac::plus(pend, d, c);
        let mut s = s0;
        for k in 0..n {
            let (x, stt) = st.step(k, &s, 1e-3).unwrap();
            s = x;
            its += stt.iterations;
        }
    } else if which == "ham" {
        let mut st = NonholonomicHamiltonian::new(
            pend,
            Discretization::Forward,
            ConstraintDiscretization::Retraction,
            SymplecticEuler,
            Direction::Forward,
        );
        let mut s = s0;
        for k in 0..n {
            let (x, stt) = st.step(k, &s, 1e-3).unwrap();
            s = x;
            its += stt.iterations;
        }
    } else if which == "lc" {
        let lc = Lc::default();
        let h = 2.0 * PI / lc.omega() / 40.0;
        let s0 = state_from_velocity(
            &lc,
            0.0,
            &SVector::zeros(),
            &SVector::from([10.0, 2.5, 10.0, 7.5]),
        )
        .unwrap();
        for _ in 0..250 {
            let mut st = LagrangeDirac::plus(
                lc,
                Discretization::Forward,
                ConstraintDiscretization::Retraction,
            );
            let tr = integrate(
                &mut st,
                s0,
                h,
                RunOptions::new(800).every(0),
                |_| {},
                |_| {},
            )
            .unwrap();
            its += tr.summary.newton_iterations;
        }
    }
    eprintln!(
        "{which}: {:?} per unit, its {its}",
        t0.elapsed() / if which == "lc" { 250 } else { n as u32 }
    );
}
