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
//! `transformer` (the constraint row `ȧ − ratio · ḃ = 0`) and `inductance`
//! (a netlist inductor's term becomes `½ L(q) ḃ²` with `L` an expression of
//! coordinates, the magnetic co-energy of a reluctance actuator).
//!
//! Entry points: [`System::from_path`], [`System::model`] (the assembled
//! [`ModelFile`]), [`System::describe`].

mod assemble;
mod error;
mod read;

pub use error::{SystemFileError, SystemFileErrorKind};
pub use read::{PORT_KINDS, PartSource, PartSpec, PortKind, PortSpec, SystemSpec};

use diracvi_expr::ModelFile;
use diracvi_expr::model_file::read_text;
use std::fmt::Write as _;
use std::path::Path;

/// Largest system file read (1 MiB), as for model files.
pub const MAX_FILE_BYTES: u64 = diracvi_expr::model_file::MAX_FILE_BYTES;

/// A system file read and assembled.
#[derive(Debug, Clone)]
pub struct System {
    spec: SystemSpec,
    model: ModelFile,
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
        let text = assemble::assemble(&spec, parts)?.to_toml_string();
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
        Ok(System { spec, model })
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
            let _ = write!(out, " b = {}", port.b);
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
