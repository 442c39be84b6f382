//! Derivatives of the Hamiltonian of a [`DynSystem`] for the discrete
//! nonholonomic Hamiltonian steppers of the run-time-sized core: the
//! symplectic-Euler kernel `K(a, π)` = `H(a, π)` forward and `H(a, −π)`
//! reversed (docs/theory.md §3.5), with its first and second derivatives
//! in chunks of directions.

use super::DynSystem;
use super::chunk::{
    Scratch, blocks, constants, hyper_parts, read_block, seed_block, seed_first, seed_second,
    seed_second_into, with_width,
};
use crate::AdScalar;
use nalgebra::{DMatrix, DVector};
use num_dual::{DualSVec, HyperDualSVec64};

/// `K(a, π)` and its derivatives.
#[derive(Debug, Clone, PartialEq)]
pub struct DynHamiltonianJet {
    /// `K(a, π)`.
    pub value: f64,
    /// `∂K/∂a`.
    pub k_a: DVector<f64>,
    /// `∂K/∂π`.
    pub k_pi: DVector<f64>,
    /// `∂²K/∂a∂π`, entry `(i, j) = ∂²K/∂a_i ∂π_j`.
    pub k_api: DMatrix<f64>,
    /// `∂²K/∂π²`.
    pub k_pipi: DMatrix<f64>,
}

/// `K(a, π)` over any scalar: `H(a, π)`, or `H(a, −π)` when `reversed`.
pub(super) fn kernel<Sy: DynSystem, S: AdScalar>(
    system: &Sy,
    reversed: bool,
    a: &[S],
    pi: &mut [S],
) -> Option<S> {
    if reversed {
        for x in pi.iter_mut() {
            *x = -*x;
        }
    }
    system.hamiltonian(a, pi)
}

/// `K`, `∂K/∂a`, `∂K/∂π`, `∂²K/∂a∂π` and `∂²K/∂π²` at `(a, π)`; `None`
/// when the system has no Hamiltonian.
pub fn hamiltonian_jet_dyn<Sy: DynSystem>(
    system: &Sy,
    reversed: bool,
    a: &DVector<f64>,
    pi: &DVector<f64>,
) -> Option<DynHamiltonianJet> {
    let n = a.len();
    let mut jet = DynHamiltonianJet {
        value: 0.0,
        k_a: DVector::zeros(n),
        k_pi: DVector::zeros(n),
        k_api: DMatrix::zeros(n, n),
        k_pipi: DMatrix::zeros(n, n),
    };
    let (a, pi) = (a.as_slice(), pi.as_slice());
    with_width!(n, W => {
        for bi in blocks::<W>(n) {
            let x = seed_first::<W, W>(a, bi);
            for bj in blocks::<W>(n) {
                let mut y = seed_second::<W, W>(pi, bj);
                let k = kernel(system, reversed, &x, &mut y)?;
                let (e1, e2, e12) = hyper_parts(&k);
                jet.value = k.re;
                if bj.0 == 0 {
                    jet.k_a.as_mut_slice()[bi.0..bi.0 + bi.1].copy_from_slice(&e1[..bi.1]);
                }
                if bi.0 == 0 {
                    jet.k_pi.as_mut_slice()[bj.0..bj.0 + bj.1].copy_from_slice(&e2[..bj.1]);
                }
                for k in 0..bi.1 {
                    for l in 0..bj.1 {
                        jet.k_api[(bi.0 + k, bj.0 + l)] = e12[k][l];
                    }
                }
            }
        }
        let x: Scratch<HyperDualSVec64<W, W>, W> = constants(a);
        for bi in blocks::<W>(n) {
            for bj in blocks::<W>(n) {
                let mut y = seed_first::<W, W>(pi, bi);
                seed_second_into(&mut y, bj);
                let k = kernel(system, reversed, &x, &mut y)?;
                let (_, _, e12) = hyper_parts(&k);
                for k in 0..bi.1 {
                    for l in 0..bj.1 {
                        jet.k_pipi[(bi.0 + k, bj.0 + l)] = e12[k][l];
                    }
                }
            }
        }
    });
    Some(jet)
}

/// `K(a, π)` and `∂K/∂π` (the discrete energy of a symplectic-Euler step and
/// its gradient in the end momentum); `None` without a Hamiltonian.
pub fn hamiltonian_momentum_gradient_dyn<Sy: DynSystem>(
    system: &Sy,
    reversed: bool,
    a: &DVector<f64>,
    pi: &DVector<f64>,
) -> Option<(f64, DVector<f64>)> {
    let n = a.len();
    let mut grad = DVector::zeros(n);
    let mut value = 0.0;
    with_width!(n, W => {
        let x: Scratch<DualSVec<f64, W>, W> = constants(a.as_slice());
        for blk in blocks::<W>(n) {
            let mut y = seed_block::<W>(pi.as_slice(), blk);
            let k = kernel(system, reversed, &x, &mut y)?;
            value = k.re;
            read_block(&k, blk.1, &mut grad.as_mut_slice()[blk.0..]);
        }
    });
    Some((value, grad))
}

/// `∂K/∂a` at `(a, π)`; `None` without a Hamiltonian.
pub fn hamiltonian_position_gradient_dyn<Sy: DynSystem>(
    system: &Sy,
    reversed: bool,
    a: &DVector<f64>,
    pi: &DVector<f64>,
) -> Option<DVector<f64>> {
    let n = a.len();
    let mut grad = DVector::zeros(n);
    with_width!(n, W => {
        for blk in blocks::<W>(n) {
            let x = seed_block::<W>(a.as_slice(), blk);
            let mut y: Scratch<DualSVec<f64, W>, W> = constants(pi.as_slice());
            let k = kernel(system, reversed, &x, &mut y)?;
            read_block(&k, blk.1, &mut grad.as_mut_slice()[blk.0..]);
        }
    });
    Some(grad)
}
