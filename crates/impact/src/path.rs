//! The search of a sub-step's discrete path for a dip into a boundary piece
//! (docs/theory.md §4.2), shared by the compile-time-sized and the
//! run-time-sized impact integrators: they supply the path points (trial
//! solves), this module decides where to look.
//!
//! The path `q̃(α)`, `α ∈ [0, 1]`, is bisected from the whole sub-step down:
//! an interval `[l, r]` is split only while a dip below a piece cannot be
//! excluded on it. A dip takes `g_j` down by `g_j(l)` and back up by `g_j(r)`,
//! a variation of `g_j(l) + g_j(r)`, which only a path long enough can make:
//! `|dg_j| · length`. The length of the path on `[l, r]` is its chord
//! `|q̃(r) − q̃(l)|` times a slack for its bend, `1.5 (1 + b)` with `b` eight
//! times the sagitta of the parent interval over its chord (the turn of the
//! path there, in radians, times two). So `[l, r]` is safe when
//! ```text
//! g_j(l) + g_j(r) ≥ 1.5 (1 + b) max(|dg_j(l)|, |dg_j(r)|) |q̃(r) − q̃(l)|
//! ```
//! for every piece. The whole sub-step is always split once (the caller found
//! a wall near it, or a suspect). Compared with sampling at eight fixed
//! points first, the same certificate is reached with the points near the
//! wall only.

use diracvi_geometry::dynamic::touch_band_slice;

/// The bisection depth below the whole sub-step: intervals down to `2⁻⁷`.
const MAX_DEPTH: u32 = 7;

/// Most path points sampled in one sub-step.
const MAX_SAMPLES: usize = 32;

/// Slack of the length bound (the path's curvature within an interval).
const SLACK: f64 = 1.5;

/// One point of the discrete path: `α`, `q̃(α)`, and `g_j`, `dg_j` of every
/// piece there (`dg` row after row, `count × n`).
#[derive(Debug, Clone)]
pub(crate) struct PathPoint {
    pub(crate) alpha: f64,
    pub(crate) q: Vec<f64>,
    pub(crate) g: Vec<f64>,
    pub(crate) dg: Vec<f64>,
}

/// What sampling the path at one `α` found.
pub(crate) enum Sample {
    /// `q̃(α)` is inside this piece (beyond its round-off band).
    Inside(usize),
    /// `q̃(α)` is admissible.
    Outside(PathPoint),
}

fn norm(x: &[f64]) -> f64 {
    x.iter().map(|a| a * a).sum::<f64>().sqrt()
}

fn distance(x: &[f64], y: &[f64]) -> f64 {
    x.iter()
        .zip(y)
        .map(|(a, b)| (a - b) * (a - b))
        .sum::<f64>()
        .sqrt()
}

/// Whether a dip below some piece cannot be excluded between `l` and `r`
/// for a path of bend `bend`. A piece the path starts on (`g_j(a)` within
/// its band, e.g. just reflected from) is left to §4.3's test at `α → 0`.
fn may_dip(l: &PathPoint, r: &PathPoint, bend: f64, bands: &[f64]) -> bool {
    let n = l.q.len();
    let chord = distance(&l.q, &r.q);
    (0..bands.len()).any(|j| {
        let slope = norm(&l.dg[j * n..(j + 1) * n]).max(norm(&r.dg[j * n..(j + 1) * n]));
        l.g[j] > bands[j] && l.g[j] + r.g[j] < SLACK * (1.0 + bend) * slope * chord
    })
}

/// The first point found inside a piece, `(piece, α)`, of the path whose
/// points `point(α)` gives: `α = 0` the sub-step's start (never inside),
/// `α = 1` its end, other `α` a trial solve. The round-off bands of the
/// pieces are taken at the start ([`touch_band_slice`]).
pub(crate) fn search<E>(
    mut point: impl FnMut(f64) -> Result<Sample, E>,
) -> Result<Option<(usize, f64)>, E> {
    let start = match point(0.0)? {
        Sample::Outside(p) => p,
        Sample::Inside(j) => return Ok(Some((j, 0.0))),
    };
    let n = start.q.len();
    let bands: Vec<f64> = (0..start.g.len())
        .map(|j| touch_band_slice(start.g[j], &start.dg[j * n..(j + 1) * n], &start.q))
        .collect();
    let end = match point(1.0)? {
        Sample::Outside(p) => p,
        Sample::Inside(j) => return Ok(Some((j, 1.0))),
    };
    first_dip(start, end, &bands, point)
}

/// The first point of the path found inside a piece, `(piece, α)`, or
/// `None` when every interval is safe or the budget ([`MAX_DEPTH`],
/// [`MAX_SAMPLES`]) is spent. `start` and `end` are the path at `α = 0` and
/// `α = 1`; `bands[j]` is piece `j`'s round-off band at the start; `sample`
/// gives the path at `α ∈ (0, 1)`. Left halves are searched first: the
/// first dip is the one that counts.
fn first_dip<E>(
    start: PathPoint,
    end: PathPoint,
    bands: &[f64],
    mut sample: impl FnMut(f64) -> Result<Sample, E>,
) -> Result<Option<(usize, f64)>, E> {
    // (left, right, depth, bend of the parent); the whole sub-step is split.
    let mut stack = vec![(start, end, 0u32, 0.0f64)];
    let mut samples = 0;
    while let Some((l, r, depth, bend)) = stack.pop() {
        if depth > 0 && !may_dip(&l, &r, bend, bands) {
            continue;
        }
        if depth >= MAX_DEPTH || samples >= MAX_SAMPLES {
            continue;
        }
        let alpha = 0.5 * (l.alpha + r.alpha);
        samples += 1;
        let m = match sample(alpha)? {
            Sample::Inside(j) => return Ok(Some((j, alpha))),
            Sample::Outside(m) => m,
        };
        // The bend of the path on [l, r]: its sagitta over the chord.
        let middle: Vec<f64> = l.q.iter().zip(&r.q).map(|(a, b)| 0.5 * (a + b)).collect();
        let chord = distance(&l.q, &r.q);
        let bend = if chord > 0.0 {
            8.0 * distance(&m.q, &middle) / chord
        } else {
            1.0
        };
        stack.push((m.clone(), r, depth + 1, bend));
        stack.push((l, m, depth + 1, bend));
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A piece `g(q) = q_y` and a path given in closed form.
    fn point(alpha: f64, q: [f64; 2]) -> PathPoint {
        PathPoint {
            alpha,
            q: q.to_vec(),
            g: vec![q[1]],
            dg: vec![0.0, 1.0],
        }
    }

    fn search(path: impl Fn(f64) -> [f64; 2]) -> (Option<(usize, f64)>, usize) {
        let mut calls = 0;
        let found = first_dip::<()>(
            point(0.0, path(0.0)),
            point(1.0, path(1.0)),
            &[1e-12],
            |a| {
                calls += 1;
                let q = path(a);
                Ok(if q[1] < 0.0 {
                    Sample::Inside(0)
                } else {
                    Sample::Outside(point(a, q))
                })
            },
        )
        .unwrap();
        (found, calls)
    }

    #[test]
    fn a_parabolic_dip_between_admissible_ends_is_found() {
        // y = 0.05 − 0.5 α (1 − α) · 2: below zero on (0.053, 0.947).
        let (found, _) = search(|a| [a, 0.05 - a * (1.0 - a)]);
        let (piece, alpha) = found.expect("the dip is found");
        assert_eq!(piece, 0);
        assert!(alpha > 0.053 && alpha < 0.947, "α = {alpha}");
    }

    #[test]
    fn a_narrow_dip_is_found_by_bisection() {
        // A V-shaped dip of width 0.01 around α = 0.3: no assumption on the
        // path's smoothness misses it.
        let (found, calls) = search(|a| [a, (a - 0.3).abs() - 0.005]);
        let (_, alpha) = found.expect("the narrow dip is found");
        assert!((alpha - 0.3).abs() < 0.005, "α = {alpha}");
        assert!(calls <= 9, "{calls} samples");
    }

    #[test]
    fn a_path_far_from_the_wall_is_certified_with_one_sample() {
        // 0.8 above the wall over a straight step of length 1.
        let (found, calls) = search(|a| [a, 0.8]);
        assert_eq!(found, None);
        assert_eq!(calls, 1);
    }

    #[test]
    fn a_path_heading_for_the_wall_is_split_near_it_only() {
        // From y = 0.2 down to y = 0.01, straight: no dip; the samples
        // crowd towards the wall end, down to intervals of 2⁻⁷.
        let (found, calls) = search(|a| [a, 0.2 - 0.19 * a]);
        assert_eq!(found, None);
        assert!(calls <= 17, "{calls} samples");
    }
}
