//! A kernel expression's values between the data's units and a standardized model's
//! (docs/methods.md "Kernels built from parts", units). A standardized fit works on
//! u_d = (x_d − c_d)/s_d and ỹ = (y − m)/s_y, so its kernel is k̃(u, u') = k(x, x')/s_y².
//! The values written in `--kernel` are in the data's units (years, ppm); they are
//! converted into the model's before the kernel is built, and the fitted kernel back
//! for display, by this one rule per part:
//!
//! | part | into model units |
//! |---|---|
//! | se, matern*, rq | `ls_d / s_d`, `var / s_y²` (rq's `alpha` has no unit) |
//! | periodic | `period_d / s_d`, `var / s_y²` (`ls` divides a sine: no unit) |
//! | linear | `var_d · s_d² / s_y²` |
//! | polynomial (degree p) | `var_d · s_d² · a`, `offset · a`, a = s_y^(−2/p) |
//! | constant, white | `var / s_y²` |
//! | spectral_mixture | `weights / s_y²`, `means_qd · s_d`, `scales_qd · s_d` |
//! | changepoints (on input t) | `(locations − c_t) / s_t`, `steepness · s_t`; its kernels by their own rows |
//!
//! A product is one scale: only its first factor's variance carries s_y²; a later
//! factor's (fixed at 1 by default) is a ratio and is not converted. A linear or
//! polynomial part cannot be mapped exactly when the inputs are centred (x = s u + c
//! adds terms in u + u' that no linear kernel in u has): its slopes' variances map
//! exactly and the line passes through the inputs' means instead of the origin
//! ([`centring_note`]). Change points are the one part that sees where the inputs are
//! centred: a location is a place on the input, so it moves by the centre c_t.

use super::build::labels;
use super::expression::{Arg, KernelExpr, Part, Value};

/// The scales of a standardized fit: input d's centre c_d and standard deviation s_d
/// and the target's s_y (only change points' locations see the centres).
#[derive(Clone, Copy, Debug)]
pub struct Scales<'a> {
    pub centres: &'a [f64],
    pub inputs: &'a [f64],
    pub target: f64,
}

/// Which way [`convert`] goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Towards {
    /// From the data's units (what `--kernel` is written in) into the model's.
    Model,
    /// From the model's units (what a model file stores) into the data's.
    Data,
}

/// `expr` with every value it writes converted (module table). `columns` are the
/// inputs' names, for `dims=[name]`; a part whose `dims` or values do not fit its
/// inputs is left as written, for [`super::build()`] to refuse with its position.
pub fn convert(
    expr: &KernelExpr,
    columns: &[String],
    scales: Scales,
    towards: Towards,
) -> KernelExpr {
    node(expr, columns, scales, towards, true)
}

fn node(
    e: &KernelExpr,
    columns: &[String],
    scales: Scales,
    towards: Towards,
    carries_target: bool,
) -> KernelExpr {
    match e {
        KernelExpr::Sum(terms) => KernelExpr::Sum(
            terms
                .iter()
                .map(|t| node(t, columns, scales, towards, carries_target))
                .collect(),
        ),
        // a product's scale is its first factor's; the later ones are ratios
        KernelExpr::Product(factors) => KernelExpr::Product(
            factors
                .iter()
                .enumerate()
                .map(|(i, f)| node(f, columns, scales, towards, carries_target && i == 0))
                .collect(),
        ),
        KernelExpr::Part(p) => KernelExpr::Part(part(p, columns, scales, towards, carries_target)),
    }
}

/// The inputs part `p` reads (all when it has no `dims`), None if `dims` names none of
/// them rightly.
fn dims_of(p: &Part, columns: &[String]) -> Option<Vec<usize>> {
    let Some(a) = p.args.iter().find(|a| a.key == "dims") else {
        return Some((0..columns.len()).collect());
    };
    let items = match &a.value {
        Value::List(v) => v.clone(),
        v => vec![v.clone()],
    };
    items
        .iter()
        .map(|v| match v {
            Value::Number(x) if x.fract() == 0.0 && *x >= 0.0 && (*x as usize) < columns.len() => {
                Some(*x as usize)
            }
            Value::Name(n) => columns.iter().position(|c| c == n),
            _ => None,
        })
        .collect()
}

/// A number argument's values for a block of `len` (a number is every entry).
fn values(v: &Value, len: usize) -> Option<Vec<f64>> {
    match v {
        Value::Number(x) => Some(vec![*x; len]),
        Value::List(items) if items.len() == len => items
            .iter()
            .map(|i| match i {
                Value::Number(x) => Some(*x),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

/// `v` with entry i multiplied by `factor(i)`: one number stays one number where the
/// factors agree.
fn scaled(v: &Value, len: usize, factor: impl Fn(usize) -> f64) -> Value {
    let Some(x) = values(v, len) else {
        return v.clone();
    };
    let out: Vec<f64> = x.iter().enumerate().map(|(i, x)| x * factor(i)).collect();
    match v {
        Value::Number(_) if out.iter().all(|o| *o == out[0]) => Value::Number(out[0]),
        _ => Value::List(out.into_iter().map(Value::Number).collect()),
    }
}

fn number(p: &Part, key: &str) -> Option<f64> {
    p.args
        .iter()
        .find(|a| a.key == key)
        .and_then(|a| match a.value {
            Value::Number(x) => Some(x),
            _ => None,
        })
}

fn part(p: &Part, columns: &[String], scales: Scales, towards: Towards, carries: bool) -> Part {
    let Some(dims) = dims_of(p, columns) else {
        return p.clone();
    };
    let d = dims.len();
    // s for input i of the part, raised to the power that goes the asked way
    let sign = match towards {
        Towards::Model => 1.0,
        Towards::Data => -1.0,
    };
    let s = |i: usize| scales.inputs.get(dims[i]).copied().unwrap_or(1.0);
    let per_input = |pow: f64| move |i: usize| s(i).powf(sign * pow);
    let target = if carries {
        scales.target.powf(-2.0 * sign)
    } else {
        1.0
    };
    let name = p.name.as_str();
    let convert_arg = |a: &Arg| -> Value {
        let v = &a.value;
        match (name, a.key.as_str()) {
            ("se" | "matern12" | "matern32" | "matern52" | "rq", "ls") | ("periodic", "period") => {
                scaled(v, d, per_input(-1.0))
            }
            ("linear", "var") => scaled(v, d, |i| per_input(2.0)(i) * target),
            ("polynomial", "var") => {
                let a = target.powf(1.0 / number(p, "degree").unwrap_or(2.0));
                scaled(v, d, |i| per_input(2.0)(i) * a)
            }
            ("polynomial", "offset") => {
                let a = target.powf(1.0 / number(p, "degree").unwrap_or(2.0));
                scaled(v, 1, |_| a)
            }
            (_, "var") | ("spectral_mixture", "weights") => {
                let len = if let Value::List(l) = v { l.len() } else { 1 };
                scaled(v, len, |_| target)
            }
            ("spectral_mixture", "means" | "scales") => {
                let q = number(p, "q").filter(|q| *q >= 1.0).unwrap_or(1.0) as usize;
                scaled(v, q * d, |i| per_input(1.0)(i % d.max(1)))
            }
            // one input (build.rs refuses more): a place on it, and a rate along it
            ("changepoints", "locations") if d == 1 => {
                let c = scales.centres.get(dims[0]).copied().unwrap_or(0.0);
                let len = if let Value::List(l) = v { l.len() } else { 1 };
                let moved = |x: f64| match towards {
                    Towards::Model => (x - c) / s(0),
                    Towards::Data => x * s(0) + c,
                };
                match values(v, len) {
                    Some(x) if matches!(v, Value::Number(_)) => Value::Number(moved(x[0])),
                    Some(x) => {
                        Value::List(x.into_iter().map(|x| Value::Number(moved(x))).collect())
                    }
                    None => v.clone(),
                }
            }
            ("changepoints", "steepness") if d == 1 => {
                let len = if let Value::List(l) = v { l.len() } else { 1 };
                scaled(v, len, |_| per_input(1.0)(0))
            }
            _ => v.clone(),
        }
    };
    Part {
        name: p.name.clone(),
        kernels: p
            .kernels
            .iter()
            .map(|k| node(k, columns, scales, towards, carries))
            .collect(),
        args: p
            .args
            .iter()
            .map(|a| Arg {
                key: a.key.clone(),
                value: convert_arg(a),
                span: a.span,
            })
            .collect(),
        span: p.span,
    }
}

/// What a standardized fit makes of the linear and polynomial parts of `expr`, when it
/// has any and an input they read is centred away from 0 (`centres`); see the module.
pub fn centring_note(expr: &KernelExpr, columns: &[String], centres: &[f64]) -> Option<String> {
    let names = labels(expr);
    let lines: Vec<&str> = expr
        .parts()
        .into_iter()
        .zip(&names)
        .filter(|(p, _)| p.name == "linear" || p.name == "polynomial")
        .filter(|(p, _)| {
            dims_of(p, columns).is_some_and(|dims| {
                dims.iter()
                    .any(|d| centres.get(*d).is_some_and(|c| *c != 0.0))
            })
        })
        .map(|(_, label)| label.as_str())
        .collect();
    (!lines.is_empty()).then(|| {
        format!(
            "{} in a standardized fit: the inputs are centred, so the line passes through \
             the inputs' means, not the origin (the slopes' variances are converted \
             exactly; give --raw for a line through the origin)",
            lines.join(", ")
        )
    })
}

/// `expr` with every number rounded to `digits` significant digits (a display form).
pub fn rounded(expr: &KernelExpr, digits: usize) -> KernelExpr {
    fn value(v: &Value, digits: usize) -> Value {
        match v {
            Value::Number(x) => Value::Number(
                format!("{:.*e}", digits.saturating_sub(1), x)
                    .parse()
                    .unwrap_or(*x),
            ),
            Value::List(items) => Value::List(items.iter().map(|i| value(i, digits)).collect()),
            other => other.clone(),
        }
    }
    match expr {
        KernelExpr::Sum(v) => KernelExpr::Sum(v.iter().map(|e| rounded(e, digits)).collect()),
        KernelExpr::Product(v) => {
            KernelExpr::Product(v.iter().map(|e| rounded(e, digits)).collect())
        }
        KernelExpr::Part(p) => KernelExpr::Part(Part {
            kernels: p.kernels.iter().map(|k| rounded(k, digits)).collect(),
            args: p
                .args
                .iter()
                .map(|a| Arg {
                    value: value(&a.value, digits),
                    ..a.clone()
                })
                .collect(),
            ..p.clone()
        }),
    }
}
