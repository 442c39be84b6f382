//! What goes wrong with a netlist or a circuit run.

use diracvi_discrete_dirac::{Located, StepError};
use thiserror::Error;

/// Errors of netlists and circuits.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum CircuitError {
    /// A line that is not of the subset.
    #[error("line {line}: {message}")]
    Malformed {
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// An element outside the subset.
    #[error("line {line}: unsupported: {what}")]
    Unsupported {
        /// 1-based line number.
        line: usize,
        /// What.
        what: String,
    },
    /// A non-positive inductance or capacitance.
    #[error("line {line}: `{name}` must have a positive value, got {value}")]
    BadValue {
        /// 1-based line number.
        line: usize,
        /// Element name.
        name: String,
        /// The value.
        value: f64,
    },
    /// Two elements with the same name.
    #[error("line {line}: duplicate element name `{name}` (first on line {first_line})")]
    DuplicateName {
        /// 1-based line number.
        line: usize,
        /// The name.
        name: String,
        /// Line of the first use.
        first_line: usize,
    },
    /// No elements.
    #[error("the netlist has no elements")]
    Empty,
    /// An element with both terminals on one node.
    #[error("line {line}: `{name}` has both terminals on node {node}")]
    Shorted {
        /// 1-based line number.
        line: usize,
        /// Element name.
        name: String,
        /// The node.
        node: String,
    },
    /// A node with no path to ground.
    #[error("line {line}: node {node} is floating (no path to ground 0)")]
    FloatingNode {
        /// The node.
        node: String,
        /// First line mentioning it.
        line: usize,
    },
    /// A loop of voltage sources only (their voltages are not independent).
    #[error("line {line}: voltage-source loop {names:?}")]
    VoltageSourceLoop {
        /// The sources of the loop.
        names: Vec<String>,
        /// Line of the source closing the loop.
        line: usize,
    },
    /// A node cut from ground by current sources only (their currents are
    /// not independent).
    #[error(
        "line {line}: node {node} is connected to ground only through current sources (current-source cut-set)"
    )]
    CurrentSourceCutSet {
        /// The node.
        node: String,
        /// First line mentioning it.
        line: usize,
    },
    /// An `ENERGY={…}` expression that does not compile.
    #[error("line {line}, column {column}: {message}")]
    Expression {
        /// 1-based line number.
        line: usize,
        /// 1-based character column in the line.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// No charge of a nonlinear capacitor has the initial voltage `IC=`.
    #[error(
        "line {line}: `{name}`: no charge q with U'(q) = {voltage} found (Newton's method from q = 0)"
    )]
    InitialCharge {
        /// 1-based line number.
        line: usize,
        /// Element name.
        name: String,
        /// The initial voltage.
        voltage: f64,
    },
    /// A step failed (located at its step).
    #[error("{0}")]
    Step(#[from] Located<StepError>),
}
