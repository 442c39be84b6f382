//! Errors of system files.

use diracvi_circuit::CircuitError;
use diracvi_expr::{ModelFileError, Position};
use thiserror::Error;

/// A system file problem, located: the file, the TOML key of the offending
/// value (e.g. `port[0].a`, empty when no key applies) and its 1-based line
/// and column. Displayed as `path:line:column: key: message`. (Boxed, so
/// results stay small.)
#[derive(Debug, Clone, PartialEq, Error)]
#[error("{}{}: {}{}", .0.path, at(.0.position.as_ref()), key_prefix(&.0.key), .0.kind)]
pub struct SystemFileError(Box<Inner>);

#[derive(Debug, Clone, PartialEq)]
struct Inner {
    path: String,
    key: String,
    position: Option<Position>,
    kind: SystemFileErrorKind,
}

impl SystemFileError {
    pub(crate) fn new(
        path: String,
        key: String,
        position: Option<Position>,
        kind: SystemFileErrorKind,
    ) -> Self {
        Self(Box::new(Inner {
            path,
            key,
            position,
            kind,
        }))
    }

    /// The system file's path as given.
    pub fn path(&self) -> &str {
        &self.0.path
    }

    /// The TOML key of the offending value (empty when none applies).
    pub fn key(&self) -> &str {
        &self.0.key
    }

    /// Where in the file, if anywhere.
    pub fn position(&self) -> Option<Position> {
        self.0.position
    }

    /// What went wrong.
    pub fn kind(&self) -> &SystemFileErrorKind {
        &self.0.kind
    }

    /// The same error without a key (when the key is not the system file's).
    pub(crate) fn without_key(mut self) -> Self {
        self.0.key.clear();
        self
    }
}

fn at(position: Option<&Position>) -> String {
    position.map_or_else(String::new, |p| format!(":{}:{}", p.line, p.column))
}

fn key_prefix(key: &str) -> String {
    if key.is_empty() {
        String::new()
    } else {
        format!("{key}: ")
    }
}

/// What is wrong in a system file.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum SystemFileErrorKind {
    /// The file cannot be read.
    #[error("cannot read the file: {0}")]
    Io(String),
    /// Not TOML.
    #[error("TOML syntax: {0}")]
    Syntax(String),
    /// A required key is missing.
    #[error("missing")]
    Missing,
    /// A key the schema does not have.
    #[error("unknown key (expected one of: {})", .allowed.join(", "))]
    UnknownKey {
        /// The keys allowed here.
        allowed: &'static [&'static str],
    },
    /// A value of the wrong type.
    #[error("expected {expected}")]
    WrongType {
        /// What was expected.
        expected: &'static str,
    },
    /// A name that is not an identifier, or is taken.
    #[error("invalid name `{name}`: {reason}")]
    BadName {
        /// The name.
        name: String,
        /// Why.
        reason: String,
    },
    /// A part needs exactly one source.
    #[error("a part needs exactly one of `model_file` or `netlist`{extra}")]
    PartSource {
        /// More about it (e.g. why `catalogue` is not taken).
        extra: String,
    },
    /// A name `part.thing` whose part does not exist.
    #[error("no part `{part}` (parts: {})", .parts.join(", "))]
    UnknownPart {
        /// The part asked for.
        part: String,
        /// The parts there are.
        parts: Vec<String>,
    },
    /// A coordinate (or netlist branch) the part does not have.
    #[error("part `{part}` has no coordinate `{name}` (its coordinates: {})", .available.join(", "))]
    UnknownCoordinate {
        /// The part.
        part: String,
        /// The name asked for.
        name: String,
        /// The part's coordinates.
        available: Vec<String>,
    },
    /// A port kind that does not exist (or is not built yet).
    #[error("unknown port kind `{kind}` (expected one of: {})", .allowed.join(", "))]
    UnknownPortKind {
        /// The kind given.
        kind: String,
        /// The kinds there are.
        allowed: &'static [&'static str],
    },
    /// A port applied to the wrong kind of thing.
    #[error("{0}")]
    PortMisuse(String),
    /// Something a part's file holds that a system cannot take yet.
    #[error("part `{part}`: {what}")]
    Unsupported {
        /// The part.
        part: String,
        /// What.
        what: String,
    },
    /// A part's model file is wrong (its own path, line and column).
    #[error("in part `{part}`: {source}")]
    ModelFile {
        /// The part.
        part: String,
        /// The model file's error.
        source: ModelFileError,
    },
    /// A part's netlist is wrong.
    #[error("in part `{part}` ({path}): {source}")]
    Netlist {
        /// The part.
        part: String,
        /// The netlist's path.
        path: String,
        /// The netlist's error.
        source: CircuitError,
    },
    /// A joint's relation does not hold at the initial state.
    #[error(
        "the joint `{port}` does not hold at the initial state: {relation} = {value:e}, not 0 (set the initial data of its coordinates to satisfy it)"
    )]
    JointViolated {
        /// The joint port.
        port: String,
        /// Its relation, qualified.
        relation: String,
        /// Its value at the initial state.
        value: f64,
    },
    /// A port's row depends on the rows before it at the initial state
    /// (e.g. a cycle of joints): the ports over-constrain the system.
    #[error(
        "port `{port}` over-constrains the system: at the initial state its constraint row is a combination of the rows before it ({}); remove one port of the cycle",
        .before.join(", ")
    )]
    OverConstrained {
        /// The port.
        port: String,
        /// What the rows before it belong to (parts' constraints, ports).
        before: Vec<String>,
    },
    /// The assembled model does not read (names, expressions, initial data).
    #[error("the assembled model: {0}")]
    Assembled(ModelFileError),
}
