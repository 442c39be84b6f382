//! Printing a [`ModelFile`] back as TOML.

use super::drawing::{DEFAULT_AXES, DEFAULT_UNIT, DrawingShape};
use super::{InitialValue, ModelFile};
use std::fmt::Write;

/// A TOML basic string.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A TOML string: a multi-line literal string (`'''…'''`, no escapes)
/// for text with line breaks that can be written so, a basic string
/// otherwise.
fn text(s: &str) -> String {
    let multiline = s.contains('\n')
        && !s.contains('\'')
        && s.chars().all(|c| c == '\n' || c == '\t' || !c.is_control());
    if multiline {
        // a line break right after the opening delimiter is not part of the string
        format!("'''\n{s}'''")
    } else {
        quote(s)
    }
}

/// A float that reads back to the same value (shortest round-trip form,
/// always with a `.` or an exponent).
fn number(x: f64) -> String {
    format!("{x:?}")
}

fn strings(items: &[String]) -> String {
    let inner: Vec<String> = items.iter().map(|s| quote(s)).collect();
    format!("[{}]", inner.join(", "))
}

fn initial(items: &[InitialValue]) -> String {
    let inner: Vec<String> = items
        .iter()
        .map(|x| match x {
            InitialValue::Number(x) => number(*x),
            InitialValue::Expression(e) => quote(e),
            InitialValue::Solve => quote(InitialValue::SOLVE),
        })
        .collect();
    format!("[{}]", inner.join(", "))
}

/// A bare key when possible.
fn key(k: &str) -> String {
    if !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        k.to_owned()
    } else {
        quote(k)
    }
}

pub(super) fn write(model: &ModelFile) -> String {
    let mut out = String::new();
    // writing to a String cannot fail
    let _ = write_to(model, &mut out);
    out
}

fn write_to(model: &ModelFile, out: &mut String) -> std::fmt::Result {
    writeln!(out, "[model]")?;
    writeln!(out, "name = {}", text(&model.name))?;
    if !model.description.is_empty() {
        writeln!(out, "description = {}", text(&model.description))?;
    }
    writeln!(out, "coordinates = {}", strings(&model.coordinates))?;
    writeln!(out, "lagrangian = {}", text(&model.lagrangian))?;
    if model.constraints.is_empty() {
        writeln!(out, "constraints = []")?;
    } else {
        writeln!(out, "constraints = [")?;
        for row in &model.constraints {
            writeln!(out, "    {},", strings(row))?;
        }
        writeln!(out, "]")?;
    }
    writeln!(out, "boundaries = {}", strings(&model.boundaries))?;
    if !model.drives.is_empty() {
        writeln!(out, "drives = {}", strings(&model.drives))?;
    }
    if let Some(h) = &model.hamiltonian {
        writeln!(out, "hamiltonian = {}", text(h))?;
    }
    if !model.definitions.is_empty() {
        writeln!(out, "\n[definitions]")?;
        for (name, e) in &model.definitions {
            writeln!(out, "{} = {}", key(name), text(e))?;
        }
    }
    if !model.invariants.is_empty() {
        writeln!(out, "\n[invariants]")?;
        for (name, e) in &model.invariants {
            writeln!(out, "{} = {}", key(name), text(e))?;
        }
    }
    if !model.forces.is_empty() {
        writeln!(out, "\n[forces]")?;
        for (name, e) in &model.forces {
            writeln!(out, "{} = {}", key(name), text(e))?;
        }
    }
    if !model.symmetry.is_empty() {
        writeln!(out, "\n[symmetry]")?;
        writeln!(out, "cyclic = {}", strings(&model.symmetry))?;
    }
    if !model.parameters.is_empty() {
        writeln!(out, "\n[parameters]")?;
        for (name, value) in &model.parameters {
            match model.parameter_expressions.iter().find(|(n, _)| n == name) {
                Some((_, e)) => writeln!(out, "{} = {}", key(name), quote(e))?,
                None => writeln!(out, "{} = {}", key(name), number(*value))?,
            }
        }
    }
    if !model.run.is_empty() {
        writeln!(out, "\n[run]")?;
        if let Some(h) = model.run.h {
            writeln!(out, "h = {}", number(h))?;
        }
        if let Some(tol) = model.run.tol {
            writeln!(out, "tol = {}", number(tol))?;
        }
        if let Some(t) = model.run.t_end {
            writeln!(out, "t_end = {}", number(t))?;
        }
        if let Some(d) = &model.run.discretization {
            writeln!(out, "discretization = {}", quote(d))?;
        }
        if let Some(c) = &model.run.constraint {
            writeln!(out, "constraint = {}", quote(c))?;
        }
    }
    if let Some(initial) = &model.initial {
        writeln!(out, "\n[initial]")?;
        writeln!(out, "q = {}", self::initial(&initial.q))?;
        writeln!(out, "v = {}", self::initial(&initial.v))?;
    }
    if let Some(d) = &model.drawing {
        writeln!(out, "\n[drawing]")?;
        if d.unit != DEFAULT_UNIT {
            writeln!(out, "unit = {}", quote(&d.unit))?;
        }
        if d.axes != DEFAULT_AXES {
            writeln!(out, "axes = {}", strings(&d.axes))?;
        }
        if let Some(b) = &d.boundaries {
            let list: Vec<String> = b.iter().map(usize::to_string).collect();
            writeln!(out, "boundaries = [{}]", list.join(", "))?;
        }
        if let Some(c) = &d.contact {
            writeln!(out, "contact = {}", strings(c))?;
        }
        if let Some(h) = &d.heading {
            writeln!(out, "\n[drawing.heading]")?;
            writeln!(out, "x = {}", quote(&h.x))?;
            writeln!(out, "y = {}", quote(&h.y))?;
            writeln!(out, "angle = {}", quote(&h.angle))?;
            if let Some(l) = &h.length {
                writeln!(out, "length = {}", quote(l))?;
            }
        }
        for (group, shapes) in [("walls", &d.walls), ("body", &d.body)] {
            for shape in shapes {
                writeln!(out, "\n[[drawing.{group}]]")?;
                writeln!(out, "kind = {}", quote(shape.kind()))?;
                match shape {
                    DrawingShape::Polyline { points, closed } => {
                        let list: Vec<String> = points.iter().map(|p| strings(p)).collect();
                        writeln!(out, "points = [{}]", list.join(", "))?;
                        if *closed {
                            writeln!(out, "closed = true")?;
                        }
                    }
                    _ => {
                        for (k, v) in shape.values() {
                            writeln!(out, "{k} = {}", quote(v))?;
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_back_exactly() {
        for x in [
            0.0,
            -0.0,
            1.0,
            0.1,
            1e-3,
            1e-300,
            1.5e300,
            -2.5,
            1e16,
            123456789.0,
        ] {
            let s = number(x);
            let parsed: f64 = s.parse().unwrap();
            assert_eq!(parsed.to_bits(), x.to_bits(), "{s}");
            assert!(
                s.contains('.') || s.contains('e'),
                "{s} is not a TOML float"
            );
        }
    }

    #[test]
    fn multi_line_text_stays_readable() {
        assert_eq!(text("a\n  + b"), "'''\na\n  + b'''");
        assert_eq!(text("it's\nx"), "\"it's\\nx\"");
        assert_eq!(text("one line"), "\"one line\"");
    }

    #[test]
    fn strings_are_escaped() {
        assert_eq!(quote("a\"b\\c\nd\u{7f}"), "\"a\\\"b\\\\c\\nd\\u007F\"");
    }
}
