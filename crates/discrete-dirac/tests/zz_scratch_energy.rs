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
