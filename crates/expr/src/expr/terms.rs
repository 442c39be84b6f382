//! A Lagrangian over slots `[q_0 … q_{n−1}, v_0 … v_{n−1}]` split into
//! terms over small coordinate stencils (docs/theory.md §11.4): the folded
//! syntax tree is taken apart at its sums (through negations and constant
//! factors), each summand's stencil is the set of coordinates whose `q` or
//! `v` it reads, summands whose stencil lies inside another's are grouped
//! with it, and each group is lowered to its own tape over the local slots
//! `[q_{S_0} … q_{S_{k−1}}, v_{S_0} … v_{S_{k−1}}]`.

use super::lower;
use super::parse::{self, ChainOp, Kind, Node};
use super::{Expr, ExprError, Scope};
use std::collections::BTreeSet;

/// A Lagrangian as a sum of terms: term `e` reads the coordinates
/// `stencils[e]` (increasing) and is evaluated by `exprs[e]` over
/// `[q_{S_e}, v_{S_e}]` (with [`Expr::eval_split`]).
#[derive(Clone, Debug)]
pub struct SplitSum {
    /// The stencil of each term.
    pub stencils: Vec<Vec<usize>>,
    /// The tape of each term, over `2 |S_e|` slots.
    pub exprs: Vec<Expr>,
}

impl SplitSum {
    /// `Σ_e |S_e|²`: the entries the terms' Jacobian blocks write.
    pub fn block_entries(&self) -> usize {
        self.stencils.iter().map(|s| s.len() * s.len()).sum()
    }
}

impl Expr {
    /// Split `source`, a function over the slots `[q_0 … q_{n−1}, v_0 …
    /// v_{n−1}]` of `scope` (`2n` variables), into terms over coordinate
    /// stencils (docs/theory.md §11.4: opened at sums, grouped by stencil,
    /// one tape per group). The sum of the
    /// terms equals the whole expression up to the rounding of the
    /// different summation order (constant factors are distributed over
    /// sums: `½ m (a + b) = ½ m a + ½ m b`).
    ///
    /// # Errors
    /// What [`Expr::compile`] reports for `source`.
    pub fn split_terms(source: &str, scope: &Scope, n: usize) -> Result<SplitSum, ExprError> {
        let tree = lower::fold(parse::parse(source, scope)?)?;
        let mut leaves = Vec::new();
        split(tree, false, &mut leaves);
        // stencils of the summands, largest first (stable: file order)
        let mut summands: Vec<(Vec<usize>, bool, Node)> = leaves
            .into_iter()
            .map(|(negative, node)| {
                let mut s = BTreeSet::new();
                coordinates(&node, n, &mut s);
                (s.into_iter().collect(), negative, node)
            })
            .collect();
        summands.sort_by_key(|(s, _, _)| std::cmp::Reverse(s.len()));
        // group each summand with the first (largest) group containing it
        let mut groups: Vec<Group> = Vec::new();
        // groups by the coordinates they contain, for the subset search
        let mut by_coordinate: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (stencil, negative, node) in summands {
            let home = match stencil.first() {
                Some(&c) => by_coordinate[c]
                    .iter()
                    .copied()
                    .find(|&g| subset(&stencil, &groups[g].0)),
                None => groups.iter().position(|(s, _)| s.is_empty()),
            };
            match home {
                Some(g) => groups[g].1.push((negative, node)),
                None => {
                    for &c in &stencil {
                        by_coordinate[c].push(groups.len());
                    }
                    groups.push((stencil, vec![(negative, node)]));
                }
            }
        }
        let mut out = SplitSum {
            stencils: Vec::with_capacity(groups.len()),
            exprs: Vec::with_capacity(groups.len()),
        };
        for (e, (stencil, members)) in groups.into_iter().enumerate() {
            let k = stencil.len();
            let mut local = vec![u32::MAX; 2 * n];
            for (j, &c) in stencil.iter().enumerate() {
                local[c] = j as u32;
                local[n + c] = (k + j) as u32;
            }
            let col = members.first().map_or(1, |(_, m)| m.col);
            let mut items = members.into_iter().map(|(negative, node)| {
                let node = relabel(node, &local);
                (negative, node)
            });
            let tree = match items.next() {
                None => Node {
                    kind: Kind::Num(0.0),
                    col,
                },
                Some((first_negative, first)) => {
                    let first = if first_negative {
                        Node {
                            kind: Kind::Neg(Box::new(first)),
                            col,
                        }
                    } else {
                        first
                    };
                    let rest: Vec<(ChainOp, Node)> = items
                        .map(|(negative, node)| {
                            (if negative { ChainOp::Sub } else { ChainOp::Add }, node)
                        })
                        .collect();
                    if rest.is_empty() {
                        first
                    } else {
                        let mut chain = vec![(ChainOp::Add, first)];
                        chain.extend(rest);
                        Node {
                            kind: Kind::Chain(chain),
                            col,
                        }
                    }
                }
            };
            out.stencils.push(stencil);
            out.exprs.push(Expr::from_folded(
                // The term's place, not the whole source again: a sum of
                // `K` terms named each with the source held `K` copies of
                // it (320 MB for a 3 000-body chain).
                format!("term {e} (column {col}) of `{}`", excerpt(source)),
                lower::fold(tree)?,
                2 * k,
            )?);
        }
        Ok(out)
    }
}

/// One row of `A(q)` on its stencil (docs/theory.md §11.4): the row is zero
/// outside `stencil` (increasing) and its entries there read only
/// `q_{stencil}`; `exprs[k]` is the entry at column `stencil[k]`, evaluated
/// over the local slots `[q_{S_0} … q_{S_{k−1}}]`.
#[derive(Clone, Debug)]
pub struct SplitRow {
    /// The columns of the row's nonzero entries and the coordinates they read.
    pub stencil: Vec<usize>,
    /// The entries at the stencil's columns, over `|S|` local slots.
    pub exprs: Vec<Expr>,
}

impl Expr {
    /// Compile one constraint row, `sources[j]` its entry at column `j`
    /// over the `n = sources.len()` slots `[q_0 … q_{n−1}]` of `scope`, onto
    /// its stencil: the columns whose entry is not the constant `0` together
    /// with every coordinate an entry reads. Entries fold as in
    /// [`compile`](Self::compile) (parameters and definitions substituted),
    /// so `"k - k"` is a zero entry.
    ///
    /// # Errors
    /// What [`Expr::compile`] reports for an entry.
    pub fn compile_row<T: AsRef<str>>(sources: &[T], scope: &Scope) -> Result<SplitRow, ExprError> {
        let n = sources.len();
        let mut trees = Vec::with_capacity(n);
        let mut stencil = BTreeSet::new();
        for (j, source) in sources.iter().enumerate() {
            let tree = lower::fold(parse::parse(source.as_ref(), scope)?)?;
            match tree.kind {
                // exactly zero (either sign)
                Kind::Num(0.0) => {}
                _ => {
                    stencil.insert(j);
                    coordinates(&tree, n, &mut stencil);
                }
            }
            trees.push(tree);
        }
        let stencil: Vec<usize> = stencil.into_iter().collect();
        let k = stencil.len();
        let mut local = vec![u32::MAX; n];
        for (i, &c) in stencil.iter().enumerate() {
            local[c] = i as u32;
        }
        let mut exprs = Vec::with_capacity(k);
        for &c in &stencil {
            let tree = std::mem::replace(
                &mut trees[c],
                Node {
                    kind: Kind::Num(0.0),
                    col: 1,
                },
            );
            // relabelling a folded tree keeps it folded
            exprs.push(Expr::from_folded(
                sources[c].as_ref().to_owned(),
                relabel(tree, &local),
                k,
            )?);
        }
        Ok(SplitRow { stencil, exprs })
    }
}

/// A group of summands: its stencil and the signed summands.
type Group = (Vec<usize>, Vec<(bool, Node)>);

/// Whether the sorted `a` is a subset of the sorted `b`.
fn subset(a: &[usize], b: &[usize]) -> bool {
    let mut it = b.iter();
    a.iter().all(|x| it.any(|y| y == x))
}

/// Whether `node` is a sum (a chain of `+`/`−`), possibly negated.
fn is_sum(node: &Node) -> bool {
    match &node.kind {
        Kind::Neg(inner) => is_sum(inner),
        Kind::Chain(c) => matches!(c.first(), Some((ChainOp::Add, _))),
        _ => false,
    }
}

/// The summands of `node` with their signs (`negative` flips them), into
/// `out`: sums are opened, negations passed through, and a product whose
/// factors are constants but for one sum is distributed over that sum.
fn split(node: Node, negative: bool, out: &mut Vec<(bool, Node)>) {
    let col = node.col;
    match node.kind {
        Kind::Neg(inner) => split(*inner, !negative, out),
        Kind::Chain(chain) if matches!(chain.first(), Some((ChainOp::Add, _))) => {
            for (op, child) in chain {
                split(child, negative ^ (op == ChainOp::Sub), out);
            }
        }
        Kind::Chain(chain) => {
            // a product: distribute constant factors over one sum factor
            let sums: Vec<usize> = chain
                .iter()
                .enumerate()
                .filter(|(_, (_, f))| is_sum(f))
                .map(|(i, _)| i)
                .collect();
            let constant_rest = chain
                .iter()
                .enumerate()
                .all(|(i, (_, f))| sums.first() == Some(&i) || matches!(f.kind, Kind::Num(_)));
            let distributable =
                sums.len() == 1 && constant_rest && matches!(chain[sums[0]].0, ChainOp::Mul);
            if !distributable {
                out.push((
                    negative,
                    Node {
                        kind: Kind::Chain(chain),
                        col,
                    },
                ));
                return;
            }
            let at = sums[0];
            let mut chain = chain;
            let sum = std::mem::replace(
                &mut chain[at].1,
                Node {
                    kind: Kind::Num(0.0),
                    col,
                },
            );
            let mut parts = Vec::new();
            split(sum, negative, &mut parts);
            for (part_negative, part) in parts {
                let mut product = chain.clone();
                product[at].1 = part;
                out.push((
                    part_negative,
                    Node {
                        kind: Kind::Chain(product),
                        col,
                    },
                ));
            }
        }
        kind => out.push((negative, Node { kind, col })),
    }
}

/// The coordinates (slot mod `n`) `node` reads, into `out`.
fn coordinates(node: &Node, n: usize, out: &mut BTreeSet<usize>) {
    match &node.kind {
        Kind::Num(_) => {}
        Kind::Var(s) => {
            out.insert(*s as usize % n.max(1));
        }
        Kind::Neg(a) => coordinates(a, n, out),
        Kind::Pow(a, b) => {
            coordinates(a, n, out);
            coordinates(b, n, out);
        }
        Kind::Chain(c) => c.iter().for_each(|(_, x)| coordinates(x, n, out)),
        Kind::Call(_, args) => args.iter().for_each(|x| coordinates(x, n, out)),
    }
}

/// `node` with every slot `s` renamed `local[s]`.
fn relabel(node: Node, local: &[u32]) -> Node {
    let col = node.col;
    let kind = match node.kind {
        Kind::Var(s) => Kind::Var(local[s as usize]),
        Kind::Num(c) => Kind::Num(c),
        Kind::Neg(a) => Kind::Neg(Box::new(relabel(*a, local))),
        Kind::Pow(a, b) => Kind::Pow(Box::new(relabel(*a, local)), Box::new(relabel(*b, local))),
        Kind::Chain(c) => Kind::Chain(
            c.into_iter()
                .map(|(op, x)| (op, relabel(x, local)))
                .collect(),
        ),
        Kind::Call(f, args) => Kind::Call(f, args.into_iter().map(|x| relabel(x, local)).collect()),
    };
    Node { kind, col }
}

/// At most the first 40 characters of `source`, with `…` when cut.
fn excerpt(source: &str) -> String {
    const AT_MOST: usize = 40;
    match source.char_indices().nth(AT_MOST) {
        Some((cut, _)) => format!("{}…", &source[..cut]),
        None => source.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    fn chain_scope(n: usize) -> (Scope, String) {
        let names: Vec<String> = (0..n)
            .map(|i| format!("x{i}"))
            .chain((0..n).map(|i| format!("x{i}_dot")))
            .collect();
        let mut scope = Scope::with_variables(names.iter()).unwrap();
        scope.add_parameter("m", 2.0).unwrap();
        scope.add_parameter("c", 3.0).unwrap();
        let kinetic: Vec<String> = (0..n).map(|i| format!("x{i}_dot^2")).collect();
        let springs: Vec<String> = (0..n - 1)
            .map(|i| format!("(x{} - x{i} - 1)^2", i + 1))
            .collect();
        let source = format!(
            "0.5*m*({}) - 0.5*c*({}) - cos(x0) + 7",
            kinetic.join(" + "),
            springs.join(" + ")
        );
        (scope, source)
    }

    /// A chain's Lagrangian splits into one term per spring (the kinetic
    /// energies and the potential of the first mass joined to them) and a
    /// constant; the terms sum to the whole expression to round-off, with
    /// their derivatives.
    #[test]
    fn a_chain_splits_into_its_springs() {
        let n = 12;
        let (scope, source) = chain_scope(n);
        let split = Expr::split_terms(&source, &scope, n).unwrap();
        // 11 springs {i, i+1} and the constant 7
        assert_eq!(split.stencils.len(), 12, "{:?}", split.stencils);
        assert!(split.stencils.iter().all(|s| s.len() <= 2));
        assert_eq!(split.block_entries(), 11 * 4);
        assert!(split.stencils.contains(&vec![]));
        let whole = Expr::compile(&source, &scope).unwrap();
        let x: Vec<f64> = (0..2 * n)
            .map(|i| 0.3 * i as f64 + (i as f64).sin())
            .collect();
        let sum: f64 = split
            .stencils
            .iter()
            .zip(&split.exprs)
            .map(|(s, e)| {
                let q: Vec<f64> = s.iter().map(|&c| x[c]).collect();
                let v: Vec<f64> = s.iter().map(|&c| x[n + c]).collect();
                e.eval_split(&q, &v)
            })
            .sum();
        assert_relative_eq!(sum, whole.eval(&x), max_relative = 1e-14);
    }

    /// Each term is named by its place and an excerpt of the source, not
    /// the whole source: the names of a 3 000-body chain's terms held 320
    /// MB, quadratic in the size. Here, 400 bodies: every name within 80
    /// bytes, and it says where the term starts.
    #[test]
    fn term_names_stay_short() {
        let n = 400;
        let (scope, source) = chain_scope(n);
        let split = Expr::split_terms(&source, &scope, n).unwrap();
        assert_eq!(split.exprs.len(), n);
        for (e, expr) in split.exprs.iter().enumerate() {
            let name = expr.source();
            assert!(name.len() <= 80, "{name}");
            assert!(name.starts_with(&format!("term {e} (column ")), "{name}");
            assert!(name.ends_with("…`"), "{name}");
        }
        assert_eq!(excerpt("x + y"), "x + y");
    }

    /// Definitions are substituted before the split: a Lagrangian written
    /// with a named spring stretch splits as its longhand does.
    #[test]
    fn definitions_split_like_the_longhand() {
        let n = 10;
        let (mut scope, longhand) = chain_scope(n);
        let springs: Vec<String> = (0..n - 1).map(|i| format!("s{i}^2")).collect();
        for i in 0..n - 1 {
            scope
                .add_definition(&format!("s{i}"), &format!("x{} - x{i} - 1", i + 1))
                .unwrap();
        }
        let kinetic: Vec<String> = (0..n).map(|i| format!("x{i}_dot^2")).collect();
        let short = format!(
            "0.5*m*({}) - 0.5*c*({}) - cos(x0) + 7",
            kinetic.join(" + "),
            springs.join(" + ")
        );
        let a = Expr::split_terms(&short, &scope, n).unwrap();
        let b = Expr::split_terms(&longhand, &scope, n).unwrap();
        assert_eq!(a.stencils, b.stencils);
    }

    /// What cannot be split stays one term: a product of two sums, a sum
    /// under a function, a sum in a denominator.
    #[test]
    fn products_of_sums_stay_whole() {
        let names = ["a", "b", "c", "a_dot", "b_dot", "c_dot"];
        let scope = Scope::with_variables(names.iter()).unwrap();
        for (source, count) in [
            ("(a + b)*(b + c)", 1),
            ("sin(a + b) + c_dot^2", 2),
            ("1/(a + c) - b", 2),
            ("-(a_dot^2 - 2*b_dot^2)/4 + c", 3),
        ] {
            let split = Expr::split_terms(source, &scope, 3).unwrap();
            assert_eq!(
                split.stencils.len(),
                count,
                "{source}: {:?}",
                split.stencils
            );
            let whole = Expr::compile(source, &scope).unwrap();
            let x = [0.3, -1.2, 0.7, 2.0, -0.4, 1.1];
            let sum: f64 = split
                .stencils
                .iter()
                .zip(&split.exprs)
                .map(|(s, e)| {
                    let q: Vec<f64> = s.iter().map(|&c| x[c]).collect();
                    let v: Vec<f64> = s.iter().map(|&c| x[3 + c]).collect();
                    e.eval_split(&q, &v)
                })
                .sum();
            assert_relative_eq!(sum, whole.eval(&x), max_relative = 1e-14);
        }
    }

    /// A row's stencil is its nonzero columns with the coordinates they
    /// read; entries folding to zero (`k - k`) are left out, and the
    /// entries on the stencil equal the row compiled entry by entry.
    #[test]
    fn a_row_compiles_onto_its_stencil() {
        let names: Vec<String> = (0..10).map(|i| format!("x{i}")).collect();
        let mut scope = Scope::with_variables(names.iter()).unwrap();
        scope.add_parameter("k", 2.5).unwrap();
        let row = [
            "0",
            "k - k",
            "-sin(x7)",
            "0",
            "cos(x7)*k",
            "0",
            "0",
            "0",
            "0",
            "0*x9",
        ];
        let split = Expr::compile_row(&row, &scope).unwrap();
        assert_eq!(split.stencil, vec![2, 4, 7, 9]);
        let q: Vec<f64> = (0..10).map(|i| 0.3 + 0.1 * i as f64).collect();
        let local: Vec<f64> = split.stencil.iter().map(|&c| q[c]).collect();
        for (k, &c) in split.stencil.iter().enumerate() {
            let whole = Expr::compile(row[c], &scope).unwrap().eval(&q);
            assert_eq!(
                split.exprs[k].eval(&local).to_bits(),
                whole.to_bits(),
                "column {c}"
            );
        }
        // x7 is read but its own entry is zero
        assert_eq!(split.exprs[2].constant_value(), Some(0.0));
    }
}
