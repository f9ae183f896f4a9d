//! The summands of a composed kernel whose top level is a sum (issue 42, "Seeing the
//! parts"): each as a kernel of its own, with its values, and a short label that names
//! it by its parts as the kernel's blocks do (`se1`, `se2*periodic`, `rq`, `se3`), for
//! the components `sgpw predict --components`, `sgpw plot --components` and the app
//! show.

use super::ComposedKernel;
use super::expression::KernelExpr;
use std::collections::HashMap;

/// One summand: its short label and its kernel (the same values and fixed parameters
/// as inside the sum).
#[derive(Clone, Debug)]
pub struct Summand {
    pub label: String,
    pub kernel: ComposedKernel,
}

/// The summands of `kernel` when its top level is a sum of two or more terms; None
/// otherwise (a single part, a product, change points).
pub fn summands(kernel: &ComposedKernel) -> Option<Vec<Summand>> {
    let expr = KernelExpr::parse(&kernel.expression()).ok()?;
    let KernelExpr::Sum(terms) = &expr else {
        return None;
    };
    let labels = short_labels(&expr);
    let inputs = kernel.kernel().dim();
    terms
        .iter()
        .zip(labels)
        .map(|(term, label)| {
            // every value is in the expression, so the summand built alone is the
            // summand inside the sum
            let kernel = ComposedKernel::read(inputs, &term.to_string()).ok()?;
            Some(Summand { label, kernel })
        })
        .collect()
}

/// The short label of each summand of `expr` (of `expr` itself when it is not a sum):
/// its parts' names joined by `*` for a product and `+` for a nested sum, each name
/// numbered from 1 in reading order when it occurs more than once in the whole
/// expression — the labels of the kernel's blocks (`se2.ls`).
pub fn short_labels(expr: &KernelExpr) -> Vec<String> {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for p in expr.parts() {
        *counts.entry(p.name.as_str()).or_default() += 1;
    }
    let mut seen: HashMap<&str, usize> = HashMap::new();
    expr.summands()
        .into_iter()
        .map(|t| short(t, &counts, &mut seen))
        .collect()
}

fn short<'a>(
    e: &'a KernelExpr,
    counts: &HashMap<&str, usize>,
    seen: &mut HashMap<&'a str, usize>,
) -> String {
    match e {
        KernelExpr::Part(p) => {
            let label = numbered(&p.name, counts, seen);
            // change points are named by themselves; their kernels' parts still count
            // in the numbering of the names after them
            for q in p.kernels.iter().flat_map(|k| k.parts()) {
                numbered(&q.name, counts, seen);
            }
            label
        }
        KernelExpr::Sum(v) => v
            .iter()
            .map(|t| short(t, counts, seen))
            .collect::<Vec<_>>()
            .join("+"),
        KernelExpr::Product(v) => v
            .iter()
            .map(|t| match t {
                KernelExpr::Sum(_) => format!("({})", short(t, counts, seen)),
                _ => short(t, counts, seen),
            })
            .collect::<Vec<_>>()
            .join("*"),
    }
}

/// `name`, numbered by its occurrence when the expression has it more than once.
fn numbered<'a>(
    name: &'a str,
    counts: &HashMap<&str, usize>,
    seen: &mut HashMap<&'a str, usize>,
) -> String {
    if counts.get(name).copied().unwrap_or(0) <= 1 {
        return name.to_string();
    }
    let n = seen.entry(name).or_default();
    *n += 1;
    format!("{name}{n}")
}
