//! `model.orientation = "so3"`: a body's orientation in space as a unit
//! quaternion, written out by the reader (docs/model-files.md
//! "Orientation", docs/theory.md §16.1). The file then describes the same
//! system as if it spelled out, longhand:
//!
//! - four more coordinates `qw, qx, qy, qz` (scalar part first; other names
//!   with `orientation = { group = "so3", coordinates = [...] }`), after the
//!   declared ones;
//! - the constraint row `q · q̇ = 0` (the velocity tangent to the unit
//!   sphere `S³`), after the file's rows; rows written over the declared
//!   coordinates only get zeros for the quaternion's;
//! - the definitions `omega1, omega2, omega3` (the body angular velocity
//!   `ω = 2 Im(q̄ ⊗ q̇)`, rad/s) and `e1x … e3z` (the body axes in space, the
//!   columns of `R(q)`), before the file's own;
//! - in `[initial]`, the quaternion from `attitude = { axis, angle }` and its
//!   velocity `q̇ = ½ q ⊗ (0, ω)` from `omega = [ω1, ω2, ω3]` (body frame),
//!   when `q` and `v` list the declared coordinates only.
//!
//! The texts are those of the longhand files of the repository
//! (`models/bouncing-cube.toml`), so a file written either way compiles to
//! the same tapes and runs bit for bit alike.

/// The groups `model.orientation` knows.
pub(super) const GROUPS: &[&str] = &["so3"];

/// The quaternion's coordinate names unless the file names them.
pub(super) const DEFAULT_NAMES: [&str; 4] = ["qw", "qx", "qy", "qz"];

/// The names `model.orientation` defines, with what they are (for name
/// clashes).
pub(super) const DEFINED: [(&str, &str); 12] = [
    ("omega1", "the body angular velocity about e1"),
    ("omega2", "the body angular velocity about e2"),
    ("omega3", "the body angular velocity about e3"),
    ("e1x", "a component of the body axis e1"),
    ("e1y", "a component of the body axis e1"),
    ("e1z", "a component of the body axis e1"),
    ("e2x", "a component of the body axis e2"),
    ("e2y", "a component of the body axis e2"),
    ("e2z", "a component of the body axis e2"),
    ("e3x", "a component of the body axis e3"),
    ("e3y", "a component of the body axis e3"),
    ("e3z", "a component of the body axis e3"),
];

/// The definitions of [`DEFINED`] over the quaternion `[w, x, y, z]`.
pub(super) fn definitions(q: &[String; 4]) -> Vec<(String, String)> {
    let [w, x, y, z] = q;
    let texts = [
        format!("2*({w}*{x}_dot - {x}*{w}_dot - {y}*{z}_dot + {z}*{y}_dot)"),
        format!("2*({w}*{y}_dot - {y}*{w}_dot + {x}*{z}_dot - {z}*{x}_dot)"),
        format!("2*({w}*{z}_dot - {z}*{w}_dot - {x}*{y}_dot + {y}*{x}_dot)"),
        format!("{w}^2 + {x}^2 - {y}^2 - {z}^2"),
        format!("2*({x}*{y} + {w}*{z})"),
        format!("2*({x}*{z} - {w}*{y})"),
        format!("2*({x}*{y} - {w}*{z})"),
        format!("{w}^2 - {x}^2 + {y}^2 - {z}^2"),
        format!("2*({y}*{z} + {w}*{x})"),
        format!("2*({x}*{z} + {w}*{y})"),
        format!("2*({y}*{z} - {w}*{x})"),
        format!("{w}^2 - {x}^2 - {y}^2 + {z}^2"),
    ];
    DEFINED
        .iter()
        .zip(texts)
        .map(|((name, _), text)| ((*name).to_owned(), text))
        .collect()
}

/// The row `q · q̇ = 0` over `declared` coordinates and then the quaternion.
pub(super) fn unit_row(declared: usize, q: &[String; 4]) -> Vec<String> {
    std::iter::repeat_n("0".to_owned(), declared)
        .chain(q.iter().cloned())
        .collect()
}

/// The unit quaternion of the turn by `angle` about `axis` (expressions;
/// the axis need not be of unit length), as expressions.
pub(super) fn attitude(axis: &[String; 3], angle: &str) -> [String; 4] {
    let norm = format!("sqrt(({})^2 + ({})^2 + ({})^2)", axis[0], axis[1], axis[2]);
    let s = format!("sin(0.5*({angle}))");
    [
        format!("cos(0.5*({angle}))"),
        format!("{s}*({})/{norm}", axis[0]),
        format!("{s}*({})/{norm}", axis[1]),
        format!("{s}*({})/{norm}", axis[2]),
    ]
}

/// `q̇ = ½ q ⊗ (0, ω)` for the quaternion `q` and the body angular velocity
/// `ω` (expressions), as expressions.
pub(super) fn velocity(q: &[String; 4], omega: &[String; 3]) -> [String; 4] {
    let [w, x, y, z] = q.clone().map(|t| format!("({t})"));
    let [o1, o2, o3] = omega.clone().map(|t| format!("({t})"));
    [
        format!("-0.5*({x}*{o1} + {y}*{o2} + {z}*{o3})"),
        format!("0.5*({w}*{o1} + {y}*{o3} - {z}*{o2})"),
        format!("0.5*({w}*{o2} + {z}*{o1} - {x}*{o3})"),
        format!("0.5*({w}*{o3} + {x}*{o2} - {y}*{o1})"),
    ]
}
