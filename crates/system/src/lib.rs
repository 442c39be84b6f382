//! # diracvi-system: systems built from parts joined through ports
//!
//! A *system file* (TOML, docs/systems.md) names parts — model files and
//! netlists — and the ports that join them, and this crate assembles them
//! into **one ordinary model file**: the interconnected system is again a
//! (possibly degenerate) Lagrange–Dirac system (docs/theory.md §15), so it
//! runs through the same runner, steppers, impact law, outputs and Python
//! as every model, with every option of `diracvi run`.
//!
//! ```toml
//! [system]
//! name = "loudspeaker"
//! [[part]]
//! name = "cone"
//! model_file = "cone.toml"        # paths relative to this file
//! [[part]]
//! name = "tank"
//! netlist = "tank.cir"            # branch charges named by element: tank.L1, tank.C1
//! [[port]]
//! name = "coil"
//! kind = "gyrator"                # L += Bl · a · ḃ: force Bl·i on a, EMF Bl·ȧ in b
//! a = "cone.x"
//! b = "tank.L1"
//! Bl = 1.5                        # a parameter: coil.Bl
//! [run]                           # as in model files
//! h = 1e-3
//! [initial]                       # optional overrides: positions and `_dot` velocities
//! "cone.x" = 0.01
//! ```
//!
//! **Names.** Every name of a part is qualified by the part: coordinates
//! `cone.x` (velocities `cone.x_dot`), parameters `cone.m`, definitions;
//! a netlist part's coordinates are its elements' branch charges
//! (`tank.L1`, currents `tank.L1_dot`). A port's parameters are qualified by
//! the port (`coil.Bl`). The same names appear in `--set`, the CSV columns
//! and the summary.
//!
//! **Ports** ([`PortKind`]): `gyrator` (the term `Bl · a · ḃ`),
//! `transformer` (the constraint row `ȧ − ratio · ḃ = 0`), `inductance`
//! (a netlist inductor's term becomes `½ L(q) ḃ²` with `L` an expression of
//! coordinates, the magnetic co-energy of a reluctance actuator) and `joint`
//! (a holonomic relation `φ(q) = 0`, `relation = "a.x - r*b.x"`: the row
//! `∂φ/∂q`, derived symbolically; `φ(q0) = 0` and the independence of the
//! port rows at `q0` are checked).
//!
//! **Accounting** ([`Accounting`]): fed the recorded steps of a run, it
//! reports each part's energy and the work through each port, node by node
//! from the discrete impulses (docs/theory.md §15.1).
//!
//! Entry points: [`System::from_path`], [`System::model`] (the assembled
//! [`ModelFile`]), [`System::describe`], [`System::components`].
#![doc = include_str!("../../../docs/dependent-profile.md")]

mod accounting;
mod assemble;
mod error;
mod read;

pub use accounting::{Accounting, AccountingReport, PartReport, PortReport};
pub use assemble::Component;
pub use error::{SystemFileError, SystemFileErrorKind};
pub use read::{PORT_KINDS, PartSource, PartSpec, PortKind, PortSpec, SystemSpec};

use diracvi_expr::model_file::read_text;
use diracvi_expr::{Expr, InitialValue, ModelFile, Scope};
use std::fmt::Write as _;
use std::ops::Range;
use std::path::Path;

/// Largest system file read (1 MiB), as for model files.
pub const MAX_FILE_BYTES: u64 = diracvi_expr::model_file::MAX_FILE_BYTES;

/// A system file read and assembled.
#[derive(Debug, Clone)]
pub struct System {
    spec: SystemSpec,
    model: ModelFile,
    components: Vec<Component>,
    ranges: Vec<Range<usize>>,
}

/// The joints hold at the initial state, and no port row depends on the
/// rows before it there (a cycle of joints or transformers that
/// over-constrains).
fn check_ports(
    spec: &SystemSpec,
    assembly: &assemble::Assembly,
    model: &ModelFile,
) -> Result<(), SystemFileError> {
    if assembly.port_rows.is_empty() {
        return Ok(());
    }
    let assembled = |e: diracvi_expr::ModelFileError| {
        let err = spec.error("", SystemFileErrorKind::Assembled(e));
        err.without_key()
    };
    let compiled = model.compile(&[]).map_err(assembled)?;
    // the positions only (velocities marked "solve" are solved later)
    let mut positions = model.clone();
    if let Some(initial) = positions.initial.as_mut() {
        initial.v = vec![InitialValue::Number(0.0); initial.v.len()];
    }
    let q0 = positions
        .initial_values(&compiled, None)
        .map_err(assembled)?
        .q;
    let port_key = |i: usize| {
        let f = if spec.ports[i].kind == PortKind::Joint {
            "relation"
        } else {
            "ratio"
        };
        format!("port[{i}].{f}")
    };
    for (i, phi) in &assembly.joints {
        let value = (|| {
            let mut scope = Scope::with_variables(&model.coordinates).ok()?;
            for (name, value) in compiled.parameters() {
                scope.add_parameter(name, *value).ok()?;
            }
            Some(Expr::compile(phi, &scope).ok()?.eval(&q0))
        })()
        .unwrap_or(f64::NAN);
        let size = q0.iter().fold(1.0f64, |m, x| m.max(x.abs()));
        if value.is_nan() || value.abs() > 1e-9 * size {
            return Err(spec.error(
                &port_key(*i),
                SystemFileErrorKind::JointViolated {
                    port: spec.ports[*i].name.clone(),
                    relation: phi.clone(),
                    value,
                },
            ));
        }
    }
    // Gram–Schmidt over the rows in order: a port row with (almost) nothing
    // left is a combination of the rows before it.
    let (m, n) = (compiled.m(), compiled.n());
    let owner = |r: usize| -> String {
        match assembly.port_rows.iter().find(|(_, row)| *row == r) {
            Some((i, _)) => format!("port `{}`", spec.ports[*i].name),
            None => assembly
                .components
                .iter()
                .find(|c| c.port.is_none() && c.rows.contains(&r))
                .map_or_else(|| "a part".to_owned(), |c| format!("part `{}`", c.name)),
        }
    };
    let mut basis: Vec<Vec<f64>> = Vec::new();
    for r in 0..m {
        let row: Vec<f64> = (0..n).map(|c| compiled.constraint(r, c, &q0)).collect();
        let norm = row.iter().map(|x| x * x).sum::<f64>().sqrt();
        let mut rest = row;
        for b in &basis {
            let d: f64 = rest.iter().zip(b).map(|(x, y)| x * y).sum();
            rest.iter_mut().zip(b).for_each(|(x, y)| *x -= d * y);
        }
        let left = rest.iter().map(|x| x * x).sum::<f64>().sqrt();
        if left > 1e-10 * norm && left > 0.0 {
            basis.push(rest.iter().map(|x| x / left).collect());
        } else if let Some((i, _)) = assembly.port_rows.iter().find(|(_, row)| *row == r) {
            let mut before: Vec<String> = (0..r).map(owner).collect();
            before.dedup();
            if before.is_empty() {
                before.push("its row vanishes there".to_owned());
            }
            return Err(spec.error(
                &port_key(*i),
                SystemFileErrorKind::OverConstrained {
                    port: spec.ports[*i].name.clone(),
                    before,
                },
            ));
        }
    }
    Ok(())
}

impl System {
    /// Read a system file and the parts it names (paths relative to its
    /// folder), and assemble them.
    ///
    /// # Errors
    /// [`SystemFileError`] with the file, key, line and column: I/O, TOML
    /// syntax, schema, unknown parts, coordinates or port kinds, ports on
    /// the wrong things, a part's own model-file or netlist error (with its
    /// own location), and an assembled model that does not read.
    pub fn from_path(path: impl AsRef<Path>) -> Result<System, SystemFileError> {
        let path = path.as_ref();
        let shown = path.display().to_string();
        let source = read_text(path).map_err(|e| {
            SystemFileError::new(
                shown.clone(),
                String::new(),
                None,
                SystemFileErrorKind::Io(e.to_string()),
            )
        })?;
        Self::from_toml_str(&source, &shown)
    }

    /// [`from_path`](Self::from_path) from text; `path` names the file in
    /// messages and its folder is where the parts are looked for.
    ///
    /// # Errors
    /// As [`from_path`](Self::from_path).
    pub fn from_toml_str(source: &str, path: &str) -> Result<System, SystemFileError> {
        let spec = read::read(source, path)?;
        let parts = assemble::load_parts(&spec)?;
        let assembly = assemble::assemble(&spec, parts)?;
        let text = assembly.model.to_toml_string();
        let model =
            ModelFile::from_toml_str(&text, &format!("{path} (assembled)")).map_err(|e| {
                // a `[run]` value is the system file's own: point there
                let key = e.key().to_owned();
                let err = spec.error(&key, SystemFileErrorKind::Assembled(e));
                if err.position().is_none() {
                    err.without_key()
                } else {
                    err
                }
            })?;
        check_ports(&spec, &assembly, &model)?;
        Ok(System {
            spec,
            model,
            components: assembly.components,
            ranges: assembly.ranges,
        })
    }

    /// The parts and ports as pieces of the assembled Lagrangian and
    /// constraints (parts first, in file order, then ports), for the
    /// energy accounting ([`Accounting`]).
    pub fn components(&self) -> &[Component] {
        &self.components
    }

    /// The range of each part's coordinates in the assembled list.
    pub fn part_ranges(&self) -> &[Range<usize>] {
        &self.ranges
    }

    /// The system file as read.
    pub fn spec(&self) -> &SystemSpec {
        &self.spec
    }

    /// The assembled model, an ordinary model file (its path is the system
    /// file's, marked `(assembled)`).
    pub fn model(&self) -> &ModelFile {
        &self.model
    }

    /// The assembled model, consumed.
    pub fn into_model(self) -> ModelFile {
        self.model
    }

    /// The parts and ports as comment lines, then the assembled model file:
    /// what `diracvi show --system` prints.
    pub fn describe(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "# system `{}` ({})", self.spec.name, self.spec.path);
        for p in &self.spec.parts {
            let (kind, file) = match &p.source {
                PartSource::ModelFile(f) => ("model file", f),
                PartSource::Netlist(f) => ("netlist", f),
            };
            let _ = writeln!(out, "# part `{}`: {kind} {}", p.name, file.display());
        }
        for port in &self.spec.ports {
            let _ = write!(out, "# port `{}`: {}", port.name, port.kind.as_str());
            if let Some(a) = &port.a {
                let _ = write!(out, " a = {a}");
            }
            if !port.b.is_empty() {
                let _ = write!(out, " b = {}", port.b);
            }
            if let Some(r) = &port.relation {
                let _ = write!(out, " relation = {r}");
            }
            if let Some(l) = &port.inductance {
                let _ = write!(out, " L = {l}");
            }
            for (k, x) in &port.parameters {
                let _ = write!(out, " {k} = {x}");
            }
            let _ = writeln!(out);
        }
        let m = &self.model;
        let _ = writeln!(
            out,
            "# assembled: {} coordinates, {} constraint rows, {} wall pieces",
            m.n(),
            m.constraints.len(),
            m.boundaries.len()
        );
        out.push_str(&m.to_toml_string());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two springs `a` (x) and `b` (y) in `dir`, and a system joining them
    /// with `ports` (TOML text); the system read.
    fn two_springs(dir: &Path, ports: &str, initial: &str) -> Result<System, SystemFileError> {
        for (name, m, k, x) in [("a", 1.0, 4.0, 0.5), ("b", 2.0, 1.0, 1.0)] {
            std::fs::write(
                dir.join(format!("{name}.toml")),
                format!(
                    "[model]\nname = \"{name}\"\ncoordinates = [\"x\"]\n\
                     lagrangian = \"0.5*m*x_dot^2 - 0.5*k*x^2\"\n\
                     [parameters]\nm = {m:?}\nk = {k:?}\n[initial]\nq = [{x:?}]\nv = [0.0]\n"
                ),
            )
            .unwrap();
        }
        let text = format!(
            "[system]\nname = \"s\"\n[[part]]\nname = \"a\"\nmodel_file = \"a.toml\"\n\
             [[part]]\nname = \"b\"\nmodel_file = \"b.toml\"\n{ports}[initial]\n{initial}"
        );
        System::from_toml_str(&text, dir.join("s.toml").to_str().unwrap())
    }

    #[test]
    fn components_add_up_to_the_assembled_lagrangian_and_own_their_rows() {
        let dir = tempfile::tempdir().unwrap();
        let s = two_springs(
            dir.path(),
            "[[port]]\nname = \"g\"\nkind = \"gyrator\"\na = \"a.x\"\nb = \"b.x\"\nBl = 0.7\n\
             [[port]]\nname = \"j\"\nkind = \"joint\"\nrelation = \"a.x - r*sin(b.x)\"\nr = 2.0\n",
            &format!("\"b.x\" = {:?}\n", 0.25f64.asin()),
        )
        .unwrap();
        let names: Vec<_> = s.components().iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "g", "j"]);
        assert_eq!(s.part_ranges(), &[0..1, 1..2]);
        let j = &s.components()[3];
        assert_eq!(
            (j.rows.as_slice(), j.parts.as_slice()),
            (&[0][..], &[0, 1][..])
        );
        assert!(s.components()[2].rows.is_empty());
        // Σ L_c = L at a point, and the joint's row is ∂φ/∂q
        let model = s.model();
        let full = model.compile(&[]).unwrap();
        let (q, v) = ([0.3, -0.8], [1.1, 0.4]);
        let sum: f64 = s
            .components()
            .iter()
            .map(|c| {
                let mut piece = model.clone();
                piece.lagrangian = c.lagrangian.clone();
                piece.compile(&[]).unwrap().lagrangian(&q, &v)
            })
            .sum();
        assert!((sum - full.lagrangian(&q, &v)).abs() < 1e-15);
        assert!((full.constraint(0, 0, &q) - 1.0).abs() < 1e-15);
        assert!((full.constraint(0, 1, &q) + 2.0 * (-0.8f64).cos()).abs() < 1e-15);
    }

    #[test]
    fn joints_are_checked_at_the_initial_state() {
        let dir = tempfile::tempdir().unwrap();
        let joint = |relation: &str| {
            format!("[[port]]\nname = \"j\"\nkind = \"joint\"\nrelation = \"{relation}\"\n")
        };
        // a.x = 0.5, b.x = 1: `a.x - b.x` does not hold
        let e = two_springs(dir.path(), &joint("a.x - b.x"), "").unwrap_err();
        assert_eq!(e.key(), "port[0].relation");
        assert!(
            matches!(e.kind(), SystemFileErrorKind::JointViolated { value, .. } if (*value + 0.5).abs() < 1e-15)
        );
        assert_eq!(e.position().map(|p| p.line), Some(12));
        // a cycle: the second joint's row is the first one's, scaled
        let cycle = format!("{}{}", joint("2*a.x - b.x"), joint("b.x - 2*a.x"));
        let cycle = cycle.replacen("name = \"j\"", "name = \"k\"", 1);
        let e = two_springs(dir.path(), &cycle, "").unwrap_err();
        assert_eq!(e.key(), "port[1].relation");
        assert!(
            matches!(e.kind(), SystemFileErrorKind::OverConstrained { port, before } if port == "j" && before == &["port `k`"]),
            "{e}"
        );
        // a transformer and a joint on the same pair: the same cycle
        let e = two_springs(
            dir.path(),
            &format!(
                "[[port]]\nname = \"t\"\nkind = \"transformer\"\na = \"a.x\"\nb = \"b.x\"\nratio = 0.5\n{}",
                joint("2*a.x - b.x")
            ),
            "",
        )
        .unwrap_err();
        assert!(
            matches!(e.kind(), SystemFileErrorKind::OverConstrained { .. }),
            "{e}"
        );
        // a relation whose row vanishes at the initial state
        let e = two_springs(dir.path(), &joint("(a.x - 0.5)^2 - (b.x - 1)^2"), "").unwrap_err();
        assert!(
            matches!(e.kind(), SystemFileErrorKind::OverConstrained { .. }),
            "{e}"
        );
    }

    /// The midpoint (+) trajectory of two springs joined by a gyrator,
    /// `L = ½ m1 ẋ² − ½ k1 x² + ½ m2 ẏ² − ½ k2 y² + B x ẏ`, solved here
    /// step by step (a 2 × 2 linear solve) and fed to the accounting, the
    /// momentum of step `jump` reversed as if it had an impact.
    fn gyrator_run(s: &System, jump: Option<usize>) -> AccountingReport {
        let (m1, k1, m2, k2, bl, h) = (1.0, 4.0, 2.0, 1.0, 0.7, 1e-2);
        let mut acc = Accounting::new(s, &[], h, true, false).unwrap();
        // p = ∂L/∂v at rest: (m1·0, m2·0 + B x)
        let (mut q, mut p) = ([0.5, 1.0], [0.0, bl * 0.5]);
        let energy = |q0: [f64; 2], q1: [f64; 2]| {
            let v = [(q1[0] - q0[0]) / h, (q1[1] - q0[1]) / h];
            0.5 * m1 * v[0] * v[0]
                + 0.5 * k1 * (0.5 * (q0[0] + q1[0])).powi(2)
                + 0.5 * m2 * v[1] * v[1]
                + 0.5 * k2 * (0.5 * (q0[1] + q1[1])).powi(2)
        };
        acc.record(0, 0.0, &q, &p, 0.0);
        for k in 1..=400 {
            // p + h/2 ∂L/∂q − ∂L/∂v = 0 at (mid, Δ/h), linear in q1:
            // x: p0 + h/2 (−k1 xm + B (y1 − y0)/h) − m1 (x1 − x0)/h = 0
            // y: p1 + h/2 (−k2 ym) − m2 (y1 − y0)/h − B xm = 0
            let (x0, y0) = (q[0], q[1]);
            let a = [
                [-h * k1 / 4.0 - m1 / h, bl / 2.0],
                [-bl / 2.0, -h * k2 / 4.0 - m2 / h],
            ];
            let r = [
                -(p[0] - h * k1 / 4.0 * x0 - bl / 2.0 * y0 + m1 / h * x0),
                -(p[1] - h * k2 / 4.0 * y0 + m2 / h * y0 - bl / 2.0 * x0),
            ];
            let det = a[0][0] * a[1][1] - a[0][1] * a[1][0];
            let q1 = [
                (r[0] * a[1][1] - a[0][1] * r[1]) / det,
                (a[0][0] * r[1] - a[1][0] * r[0]) / det,
            ];
            // p1 = h/2 ∂L/∂q + ∂L/∂v
            let (xm, ym) = (0.5 * (x0 + q1[0]), 0.5 * (y0 + q1[1]));
            let v = [(q1[0] - x0) / h, (q1[1] - y0) / h];
            let mut p1 = [
                h / 2.0 * (-k1 * xm + bl * v[1]) + m1 * v[0],
                h / 2.0 * (-k2 * ym) + m2 * v[1] + bl * xm,
            ];
            if Some(k) == jump {
                p1[0] = -p1[0];
            }
            acc.record(k, k as f64 * h, &q1, &p1, energy(q, q1));
            (q, p) = (q1, p1);
        }
        acc.report()
    }

    /// The gyrator's two works cancel node by node to round-off, each
    /// (quadratic) part's energy changes by the work done on it to
    /// round-off, the energies add up to the discrete energy; a jump of
    /// momentum (an impact) skips the two nodes next to its step.
    #[test]
    fn the_accounting_of_a_gyrator_between_two_springs() {
        let dir = tempfile::tempdir().unwrap();
        let s = two_springs(
            dir.path(),
            "[[port]]\nname = \"g\"\nkind = \"gyrator\"\na = \"a.x\"\nb = \"b.x\"\nBl = 0.7\n",
            "",
        )
        .unwrap();
        let r = gyrator_run(&s, None);
        assert_eq!((r.nodes, r.nodes_skipped), (399, 0));
        let (name, g) = &r.ports[0];
        assert_eq!((name.as_str(), g.kind), ("g", "gyrator"));
        assert_eq!(g.parts, ["a", "b"]);
        assert!(g.work_scale > 1e-3 && g.balance_max < 1e-15, "{g:?}");
        assert!((g.work[0] + g.work[1]).abs() < 1e-14, "{g:?}");
        assert!(g.work[0].abs() > 1e-2, "{g:?}");
        assert!(r.energy_sum_deviation_max.unwrap() < 1e-14, "{r:?}");
        for (name, part) in &r.parts {
            // round-off summed over 400 nodes, against energies of 0.5
            let u = part.unaccounted.unwrap();
            assert!(u.abs() < 1e-12, "{name}: {part:?}");
        }
        let r = gyrator_run(&s, Some(300));
        assert_eq!((r.nodes, r.nodes_skipped), (397, 2));
    }
}
