//! The SPICE-subset netlist: parsing and source waveforms.
//!
//! ```text
//! * a comment                      (also `;` to the end of a line)
//! L<name> <n+> <n-> <value> [IC=<current>]
//! C<name> <n+> <n-> <value> [IC=<voltage>]
//! C<name> <n+> <n-> ENERGY={<expression in q>} [IC=<voltage>]
//! V<name> <n+> <n-> [DC] <value> | SIN(<VO> <VA> <FREQ> [<TD> [<THETA> [<PHASE>]]])
//! I<name> <n+> <n-> [DC] <value> | SIN(...)
//! .end                             (stops reading; other dot-commands are ignored)
//! ```
//!
//! Node `0` (or `gnd`) is the ground. Values take the SPICE scale suffixes
//! `f p n u m k meg g t` (trailing letters after them, such as units, are
//! ignored). Names and keywords are case-insensitive. The current of an
//! element flows from `n+` to `n-` through it; `IC=` sets an inductor's
//! initial current or a capacitor's initial voltage `v(n+) − v(n-)`.
//!
//! **Nonlinear capacitors.** `ENERGY={U}` gives a capacitor by its stored
//! energy `U(q)`, an expression in its branch charge `q` (the syntax of
//! `diracvi-expr`: `+ - * / ^`, `sqrt sin cos tan exp log abs min max
//! atan2`, `pi`; spaces allowed inside the braces). Its constitutive law is
//! the voltage `v(q) = U′(q)` and its Lagrangian term `−U(q)` (a linear
//! capacitor `c` is `ENERGY={q^2/(2*c)}`, with the number written in for
//! `c`), evaluated through the compiled tape over the steppers'
//! dual numbers, so every derivative is exact. `IC=` is still the initial
//! voltage: the initial charge solves `U′(q) = IC` by Newton's method from
//! `q = 0` (an error when that fails, e.g. where `U″ ≤ 0`). A `{`…`}` that
//! does not compile is [`CircuitError::Expression`] with the line and the
//! column (in the line) of the offending character.

use crate::CircuitError;
use diracvi_expr::{Expr, ExprError, Scope};
use diracvi_geometry::AdScalar;
use diracvi_geometry::num_dual::Dual2_64;
use std::f64::consts::PI;
use std::sync::Arc;

/// Element kinds of the subset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Inductor (H).
    Inductor,
    /// Capacitor (F).
    Capacitor,
    /// Independent voltage source (V).
    VoltageSource,
    /// Independent current source (A).
    CurrentSource,
}

/// A source waveform `w(t)`: constant or SPICE `SIN`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Waveform {
    /// `w(t) = value`.
    Dc(f64),
    /// `w(t) = vo + va sin(2π f (t − td) + phase)` for `t ≥ td`,
    /// `vo + va sin(phase)` before (phase in radians; `THETA = 0`).
    Sin {
        /// Offset.
        vo: f64,
        /// Amplitude.
        va: f64,
        /// Frequency (Hz).
        freq: f64,
        /// Delay (s).
        td: f64,
        /// Phase (rad).
        phase: f64,
    },
}

impl Waveform {
    /// `w(t)`.
    pub fn value(&self, t: f64) -> f64 {
        match *self {
            Waveform::Dc(v) => v,
            Waveform::Sin {
                vo,
                va,
                freq,
                td,
                phase,
            } => {
                if t < td {
                    vo + va * phase.sin()
                } else {
                    vo + va * (2.0 * PI * freq * (t - td) + phase).sin()
                }
            }
        }
    }

    /// `∫_0^t w(s) ds` (exact).
    pub fn integral(&self, t: f64) -> f64 {
        match *self {
            Waveform::Dc(v) => v * t,
            Waveform::Sin {
                vo,
                va,
                freq,
                td,
                phase,
            } => {
                let before = vo + va * phase.sin();
                if t < td {
                    before * t
                } else if freq == 0.0 {
                    before * td + (vo + va * phase.sin()) * (t - td)
                } else {
                    let w = 2.0 * PI * freq;
                    before * td
                        + vo * (t - td)
                        + va / w * (phase.cos() - (w * (t - td) + phase).cos())
                }
            }
        }
    }

    /// [`value`](Self::value) as an expression of `t` (a model file's
    /// `[forces]`, docs/model-files.md): `max(t − td, 0)` holds a `SIN`
    /// before its delay.
    pub fn value_expression(&self) -> String {
        match *self {
            Waveform::Dc(v) => format!("{v:?}"),
            Waveform::Sin {
                vo,
                va,
                freq,
                td,
                phase,
            } => format!(
                "{vo:?} + {va:?}*sin({:?}*max(t - {td:?}, 0) + {phase:?})",
                2.0 * PI * freq
            ),
        }
    }

    /// [`integral`](Self::integral) as an expression of `t` (a model
    /// file's `model.drives`).
    pub fn integral_expression(&self) -> String {
        match *self {
            Waveform::Dc(v) => format!("{v:?}*t"),
            Waveform::Sin {
                vo,
                va,
                freq,
                td,
                phase,
            } => {
                let before = vo + va * phase.sin();
                let s = format!("max(t - {td:?}, 0)");
                let hold = format!("{before:?}*min(t, {td:?})");
                if freq == 0.0 {
                    format!("{hold} + {before:?}*{s}")
                } else {
                    let w = 2.0 * PI * freq;
                    format!(
                        "{hold} + {vo:?}*{s} + {:?}*({:?} - cos({w:?}*{s} + {phase:?}))",
                        va / w,
                        phase.cos()
                    )
                }
            }
        }
    }
}

/// A nonlinear capacitor's stored energy `U(q)`: an expression in the
/// branch charge `q`, compiled once (see the [module documentation](self)).
#[derive(Debug, Clone)]
pub struct EnergyLaw(Arc<Expr>);

impl PartialEq for EnergyLaw {
    fn eq(&self, other: &Self) -> bool {
        self.source() == other.source()
    }
}

impl EnergyLaw {
    /// Compile `U(q)` (the only variable is `q`).
    ///
    /// # Errors
    /// The expression's [`ExprError`] (with its 1-based column).
    pub fn compile(source: &str) -> Result<Self, ExprError> {
        let scope = Scope::with_variables(["q"]).expect("`q` is a valid variable name");
        Ok(Self(Arc::new(Expr::compile(source, &scope)?)))
    }

    /// The expression as written.
    pub fn source(&self) -> &str {
        self.0.source()
    }

    /// `U(q)` over any AD scalar.
    #[inline]
    pub fn energy<S: AdScalar>(&self, q: S) -> S {
        self.0.eval(&[q])
    }

    /// `(U, U′, U″)` at `q` (exact, second-order dual number).
    pub fn jet(&self, q: f64) -> (f64, f64, f64) {
        let u = self.energy(Dual2_64::new(q, 1.0, 0.0));
        (u.re, u.v1, u.v2)
    }

    /// The charge `q` with voltage `U′(q) = v`, by Newton's method from
    /// `q = 0`: the best iterate, if its residual is within `1e-12` of the
    /// voltage scale `max(|v|, |q U″(q)|)`; `None` when none is after 100
    /// iterations, or an iterate meets `U″ ≤ 0` or a non-finite value.
    pub fn charge_for_voltage(&self, v: f64) -> Option<f64> {
        let mut q = 0.0;
        // (|residual|, tolerance, q) of the best iterate.
        let mut best: Option<(f64, f64, f64)> = None;
        for _ in 0..100 {
            let (_, dv, d2) = self.jet(q);
            let residual = dv - v;
            if !(residual.is_finite() && d2.is_finite() && d2 > 0.0) {
                return None;
            }
            let tol = 1e-12 * v.abs().max((q * d2).abs()).max(f64::MIN_POSITIVE);
            if best.is_none_or(|(r, _, _)| residual.abs() < r) {
                best = Some((residual.abs(), tol, q));
            }
            let step = residual / d2;
            if residual == 0.0 || step.abs() <= 4.0 * f64::EPSILON * q.abs() {
                break;
            }
            q -= step;
        }
        best.and_then(|(r, tol, q)| (r <= tol).then_some(q))
    }
}

/// The value of an element: a number (L, C), a waveform (sources) or a
/// nonlinear capacitor's energy.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// Inductance or capacitance.
    Number(f64),
    /// A source's waveform.
    Source(Waveform),
    /// A nonlinear capacitor's stored energy `U(q)` (`ENERGY={…}`).
    Energy(EnergyLaw),
}

/// One element line.
#[derive(Debug, Clone, PartialEq)]
pub struct NetElement {
    /// Kind, from the first letter of the name.
    pub kind: Kind,
    /// Name as written.
    pub name: String,
    /// Node `n+`, as written (`0`/`gnd`: ground).
    pub n1: String,
    /// Node `n-`.
    pub n2: String,
    /// Value.
    pub value: Value,
    /// `IC=`: initial current (L) or voltage (C).
    pub ic: Option<f64>,
    /// 1-based line number in the netlist.
    pub line: usize,
}

/// A parsed netlist.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Netlist {
    /// Elements in file order.
    pub elements: Vec<NetElement>,
}

/// Whether a node name is the ground.
pub fn is_ground(node: &str) -> bool {
    node == "0" || node.eq_ignore_ascii_case("gnd")
}

/// Parse a SPICE number with an optional scale suffix.
///
/// # Errors
/// A message when the text is no number.
pub fn parse_number(text: &str) -> Result<f64, String> {
    let lower = text.to_ascii_lowercase();
    let split = lower
        .char_indices()
        .find(|&(i, c)| {
            !(c.is_ascii_digit()
                || c == '.'
                || c == '+'
                || c == '-'
                || ((c == 'e')
                    && lower[i + 1..]
                        .chars()
                        .next()
                        .is_some_and(|n| n.is_ascii_digit() || n == '+' || n == '-')))
        })
        .map_or(lower.len(), |(i, _)| i);
    let (num, suffix) = lower.split_at(split);
    let base: f64 = num
        .parse()
        .map_err(|_| format!("`{text}` is not a number"))?;
    let scale = if suffix.starts_with("meg") {
        1e6
    } else if suffix.starts_with("mil") {
        25.4e-6
    } else {
        match suffix.chars().next() {
            None => 1.0,
            Some('f') => 1e-15,
            Some('p') => 1e-12,
            Some('n') => 1e-9,
            Some('u') => 1e-6,
            Some('m') => 1e-3,
            Some('k') => 1e3,
            Some('g') => 1e9,
            Some('t') => 1e12,
            Some(c) if c.is_ascii_alphabetic() => 1.0,
            Some(_) => return Err(format!("`{text}` is not a number")),
        }
    };
    let v = base * scale;
    if v.is_finite() {
        Ok(v)
    } else {
        Err(format!("`{text}` is not a finite number"))
    }
}

fn parse_sin(args: &str, line: usize) -> Result<Waveform, CircuitError> {
    let bad = |message: String| CircuitError::Malformed { line, message };
    let nums = args
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|s| !s.is_empty())
        .map(parse_number)
        .collect::<Result<Vec<f64>, String>>()
        .map_err(bad)?;
    if !(3..=6).contains(&nums.len()) {
        return Err(bad(format!(
            "SIN takes 3 to 6 numbers (VO VA FREQ [TD [THETA [PHASE]]]), got {}",
            nums.len()
        )));
    }
    let get = |i: usize| nums.get(i).copied().unwrap_or(0.0);
    if get(4) != 0.0 {
        return Err(CircuitError::Unsupported {
            line,
            what: "a damped SIN source (THETA ≠ 0)".into(),
        });
    }
    if get(2) < 0.0 || get(3) < 0.0 {
        return Err(bad("SIN frequency and delay must be ≥ 0".into()));
    }
    Ok(Waveform::Sin {
        vo: get(0),
        va: get(1),
        freq: get(2),
        td: get(3),
        phase: get(5).to_radians(),
    })
}

/// Why an `ENERGY={…}` value is not one.
enum EnergyError {
    Malformed(String),
    Expression { column: usize, message: String },
}

/// Split `ENERGY={expr}` (its `{` at byte `open` of `content`) off the
/// line: the line without it, and the compiled law. `column(offset)` is the
/// 1-based character column in the line just before byte `offset` of
/// `content`, i.e. the number of characters up to it.
fn energy_value(
    content: &str,
    open: usize,
    column: impl Fn(usize) -> usize,
) -> Result<(String, EnergyLaw), EnergyError> {
    let malformed = |m: &str| EnergyError::Malformed(m.to_string());
    let close = content[open..]
        .find('}')
        .map(|k| open + k)
        .ok_or_else(|| malformed("`{` without a closing `}`"))?;
    if content[close + 1..].contains(['{', '}']) || content[open + 1..close].contains('{') {
        return Err(malformed("one ENERGY={…} per line, without nested braces"));
    }
    let before = content[..open].trim_end();
    let keyword = before
        .strip_suffix('=')
        .map(str::trim_end)
        .filter(|b| b.len() >= 6 && b.is_char_boundary(b.len() - 6))
        .map(|b| (b.len() - 6, &b[b.len() - 6..]))
        .filter(|(at, k)| {
            k.eq_ignore_ascii_case("energy")
                && content[..*at].ends_with(|c: char| c.is_whitespace())
        });
    let Some((at, _)) = keyword else {
        return Err(malformed("a `{…}` value must be written ENERGY={…}"));
    };
    let source = &content[open + 1..close];
    let law = EnergyLaw::compile(source).map_err(|e| EnergyError::Expression {
        column: column(open + 1) + e.column,
        message: format!("ENERGY={{{source}}}: {}", e.kind),
    })?;
    Ok((format!("{} {}", &content[..at], &content[close + 1..]), law))
}

/// Parse a netlist.
///
/// # Errors
/// [`CircuitError::Malformed`] (with the 1-based line number) for a line
/// that is not of the subset, [`CircuitError::Unsupported`] for elements
/// outside it, [`CircuitError::DuplicateName`], [`CircuitError::BadValue`].
pub fn parse(text: &str) -> Result<Netlist, CircuitError> {
    let mut elements: Vec<NetElement> = Vec::new();
    // Each name (case-insensitive) with the index of its element.
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let content = raw.split(';').next().unwrap_or("").trim();
        if content.is_empty() || content.starts_with('*') {
            continue;
        }
        if content.starts_with('.') {
            if content
                .split_whitespace()
                .next()
                .is_some_and(|t| t.eq_ignore_ascii_case(".end"))
            {
                break;
            }
            continue;
        }
        let bad = |message: String| CircuitError::Malformed { line, message };
        // `ENERGY={…}` first (the expression may hold `sin(`, spaces).
        let (content, energy) = match content.find('{') {
            Some(open) => {
                // Byte offset of `content` in `raw` (it is a trimmed prefix).
                let prefix = raw.split(';').next().unwrap_or("");
                let start = prefix.len() - prefix.trim_start().len();
                let (rest, law) = energy_value(content, open, |offset| {
                    raw[..start + offset].chars().count()
                })
                .map_err(|e| match e {
                    EnergyError::Malformed(message) => bad(message),
                    EnergyError::Expression { column, message } => CircuitError::Expression {
                        line,
                        column,
                        message,
                    },
                })?;
                (std::borrow::Cow::Owned(rest), Some(law))
            }
            None => (std::borrow::Cow::Borrowed(content), None),
        };
        let content: &str = &content;
        // Keep `SIN( ... )` as one token.
        let (head, sin) = match content.to_ascii_lowercase().find("sin") {
            Some(pos)
                if content[pos..]
                    .trim_start_matches(|c: char| c.is_alphabetic())
                    .trim_start()
                    .starts_with('(') =>
            {
                let rest = &content[pos..];
                let open = rest.find('(').expect("checked");
                let close = rest
                    .find(')')
                    .ok_or_else(|| bad("SIN( without a closing parenthesis".into()))?;
                if !rest[close + 1..].trim().is_empty() {
                    return Err(bad(format!(
                        "unexpected `{}` after SIN(...)",
                        rest[close + 1..].trim()
                    )));
                }
                (&content[..pos], Some(&rest[open + 1..close]))
            }
            _ => (content, None),
        };
        let tokens: Vec<&str> = head.split_whitespace().collect();
        let name = tokens[0];
        let kind = match name.chars().next().map(|c| c.to_ascii_uppercase()) {
            Some('L') => Kind::Inductor,
            Some('C') => Kind::Capacitor,
            Some('V') => Kind::VoltageSource,
            Some('I') => Kind::CurrentSource,
            Some(c) if c.is_ascii_alphabetic() => {
                return Err(CircuitError::Unsupported {
                    line,
                    what: format!("element `{name}` (only L, C, V, I)"),
                });
            }
            _ => return Err(bad(format!("`{name}` is not an element name"))),
        };
        if tokens.len() < 3 {
            return Err(bad(format!("`{name}` needs two nodes and a value")));
        }
        let (n1, n2) = (tokens[1].to_string(), tokens[2].to_string());
        let mut rest: Vec<&str> = tokens[3..].to_vec();
        let mut ic = None;
        rest.retain(|t| {
            if t.len() > 3 && t[..3].eq_ignore_ascii_case("ic=") {
                ic = Some(t[3..].to_string());
                false
            } else {
                true
            }
        });
        let ic = match ic {
            Some(text) => {
                if !matches!(kind, Kind::Inductor | Kind::Capacitor) {
                    return Err(bad(format!("IC= is only for L and C, not `{name}`")));
                }
                Some(parse_number(&text).map_err(bad)?)
            }
            None => None,
        };
        if energy.is_some() && kind != Kind::Capacitor {
            return Err(bad(format!(
                "ENERGY={{…}} is only for capacitors, not `{name}`"
            )));
        }
        let value = match kind {
            Kind::Capacitor if energy.is_some() => {
                if sin.is_some() || !rest.is_empty() {
                    return Err(bad(format!(
                        "`{name}` takes ENERGY={{…}} instead of a value, got also `{}`",
                        rest.join(" ")
                    )));
                }
                Value::Energy(energy.expect("checked"))
            }
            Kind::Inductor | Kind::Capacitor => {
                if sin.is_some() || rest.len() != 1 {
                    return Err(bad(format!(
                        "`{name}` takes one value (and an optional IC=), got `{}`",
                        rest.join(" ")
                    )));
                }
                let v = parse_number(rest[0]).map_err(bad)?;
                if v <= 0.0 {
                    return Err(CircuitError::BadValue {
                        line,
                        name: name.to_string(),
                        value: v,
                    });
                }
                Value::Number(v)
            }
            Kind::VoltageSource | Kind::CurrentSource => {
                if rest.first().is_some_and(|t| t.eq_ignore_ascii_case("dc")) {
                    rest.remove(0);
                }
                match (sin, rest.as_slice()) {
                    (Some(args), []) => Value::Source(parse_sin(args, line)?),
                    (None, [v]) => Value::Source(Waveform::Dc(parse_number(v).map_err(bad)?)),
                    _ => {
                        return Err(bad(format!(
                            "source `{name}` takes [DC] <value> or SIN(...), got `{}`",
                            rest.join(" ")
                        )));
                    }
                }
            }
        };
        if let Some(&first) = seen.get(&name.to_ascii_lowercase()) {
            return Err(CircuitError::DuplicateName {
                line,
                name: name.to_string(),
                first_line: elements[first].line,
            });
        }
        seen.insert(name.to_ascii_lowercase(), elements.len());
        elements.push(NetElement {
            kind,
            name: name.to_string(),
            n1,
            n2,
            value,
            ic,
            line,
        });
    }
    if elements.is_empty() {
        return Err(CircuitError::Empty);
    }
    Ok(Netlist { elements })
}

impl Netlist {
    /// The uniform LC ladder of `cells` cells, shorted at both ends: node
    /// `k` (1..=cells) has a capacitor `c` to ground, inductors `l` join
    /// ground–1, 1–2, …, cells–ground. Its `cells` normal modes have
    /// `ω_k = (2/√(l c)) sin(kπ / (2 (cells + 1)))` (docs/theory.md §8).
    /// Initial capacitor voltages `v0[k−1]` (`IC=`), currents zero.
    pub fn ladder(cells: usize, l: f64, c: f64, v0: &[f64]) -> Netlist {
        let mut elements = Vec::with_capacity(2 * cells + 1);
        let node = |k: usize| {
            if k == 0 || k == cells + 1 {
                "0".to_string()
            } else {
                k.to_string()
            }
        };
        for k in 1..=cells + 1 {
            elements.push(NetElement {
                kind: Kind::Inductor,
                name: format!("L{k}"),
                n1: node(k - 1),
                n2: node(k),
                value: Value::Number(l),
                ic: None,
                line: 0,
            });
            if k <= cells {
                elements.push(NetElement {
                    kind: Kind::Capacitor,
                    name: format!("C{k}"),
                    n1: node(k),
                    n2: "0".into(),
                    value: Value::Number(c),
                    ic: v0.get(k - 1).copied().filter(|v| *v != 0.0),
                    line: 0,
                });
            }
        }
        Netlist { elements }
    }

    /// The netlist as text (parses back to the same netlist, line numbers
    /// aside).
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        for e in &self.elements {
            let value = match &e.value {
                Value::Number(v) | Value::Source(Waveform::Dc(v)) => format!("{v:e}"),
                Value::Energy(law) => format!("ENERGY={{{}}}", law.source()),
                Value::Source(Waveform::Sin {
                    vo,
                    va,
                    freq,
                    td,
                    phase,
                }) => format!(
                    "SIN({vo:e} {va:e} {freq:e} {td:e} 0 {:e})",
                    phase.to_degrees()
                ),
            };
            s.push_str(&format!("{} {} {} {value}", e.name, e.n1, e.n2));
            if let Some(ic) = e.ic {
                s.push_str(&format!(" IC={ic:e}"));
            }
            s.push('\n');
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_with_suffixes() {
        for (text, v) in [
            ("1", 1.0),
            ("2.5k", 2.5e3),
            ("10MEG", 1e7),
            ("3uF", 3e-6),
            ("1e-3", 1e-3),
            ("4.7n", 4.7e-9),
            ("2m", 2e-3),
        ] {
            let got = parse_number(text).unwrap();
            assert!((got - v).abs() <= 1e-15 * v, "{text}: {got}");
        }
        assert!(parse_number("abc").is_err());
        assert!(parse_number("1..2").is_err());
    }

    #[test]
    fn sine_integral_matches_quadrature() {
        let w = Waveform::Sin {
            vo: 0.3,
            va: 2.0,
            freq: 0.7,
            td: 0.25,
            phase: 0.4,
        };
        let (t, n) = (3.0, 200_000);
        let dt = t / n as f64;
        let quad: f64 = (0..n).map(|i| w.value((i as f64 + 0.5) * dt) * dt).sum();
        assert!((quad - w.integral(t)).abs() < 1e-8, "{quad}");
    }

    /// The initial charge of a nonlinear capacitor solves `U′(q) = v`
    /// (closed forms), and fails where Newton meets `U″ ≤ 0`.
    #[test]
    fn charge_for_voltage_solves_the_law() {
        let law = |s: &str| EnergyLaw::compile(s).unwrap();
        let q = law("q^2/2 + q^4/8").charge_for_voltage(1.5).unwrap();
        assert!((q - 1.0).abs() <= 1e-15, "{q}");
        let q = law("1 - cos(q)").charge_for_voltage(0.5).unwrap();
        assert!((q - PI / 6.0).abs() <= 1e-15, "{q}");
        let q = law("q + q^2/2").charge_for_voltage(0.0).unwrap();
        assert!((q + 1.0).abs() <= 1e-15, "{q}");
        assert_eq!(law("q^2/3").charge_for_voltage(0.0), Some(0.0));
        assert_eq!(law("-q^2/2").charge_for_voltage(1.0), None);
        assert_eq!(law("log(q)").charge_for_voltage(1.0), None);
        let (u, du, d2u) = law("q^3").jet(2.0);
        assert_eq!((u, du, d2u), (8.0, 12.0, 12.0));
    }

    #[test]
    fn ladder_round_trips_through_text() {
        let net = Netlist::ladder(3, 1.0, 2.0, &[1.0, 0.0, -0.5]);
        let back = parse(&net.to_text()).unwrap();
        assert_eq!(back.elements.len(), net.elements.len());
        for (a, b) in back.elements.iter().zip(&net.elements) {
            assert_eq!(
                (a.kind, &a.n1, &a.n2, &a.value, a.ic),
                (b.kind, &b.n1, &b.n2, &b.value, b.ic)
            );
        }
    }
}
