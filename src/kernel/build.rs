//! An expression ([`KernelExpr`]) built into a kernel tree, with the starting values
//! the expression gives and defaults for the rest ([`Start`]), and its fixed blocks
//! (`fix=period`). Every error points at the part or argument in the expression.
//!
//! The variance convention: each summand of a sum starts with an equal share of the
//! data's variance; in a product only the first factor's `var` is a parameter, every
//! later factor's is fixed (at 1, or at the value given) — a product of scales is one
//! scale, and GPflow's separate variances there are redundant directions for the
//! optimiser.
//!
//! Labels: a part's blocks are named `label.key` where the label is the part's name,
//! numbered from 1 in reading order when the name occurs more than once
//! (`se1.ls`, `se2.ls`, `periodic.period`); change points come before the kernels they
//! switch (`changepoints.locations`, then `se1.ls`, `se2.ls`).
//!
//! Change points, `changepoints(k_0, …, k_n, locations=[l_1, …, l_n], steepness=s)`
//! (GPflow's `ChangePoints(kernels, locations, steepness)`), switch along one input:
//! `dims` names that one input (needed when there are several) and, unlike any other
//! part's, does not restrict the kernels, which name their own `dims`. Each kernel
//! starts with the whole variance share of the place it stands in (it is the kernel
//! there); the locations are needed (no default says where a change is) and the
//! steepness starts at 1/ℓ of the switching input.

use super::expression::{Arg, ExprError, KernelExpr, Part as ExprPart, Value};
use super::labelled::Labelled;
use super::part::Part;
use super::{
    Active, Ard, ChangePoints, Constant, DEFAULT_RQ_ALPHA, Kernel, KernelKind, Linear, Periodic,
    Polynomial, Product, SpectralMixture, Sum, White,
};
use clap::ValueEnum;
use std::collections::HashMap;

/// The defaults a part starts from where the expression gives no value.
#[derive(Clone, Debug, PartialEq)]
pub struct Start {
    /// The inputs' names (for `dims=["name"]`); their number is the input dimension.
    pub columns: Vec<String>,
    /// The variance to share among the summands (the targets').
    pub variance: f64,
    /// A stationary part's lengthscale per input.
    pub lengthscales: Vec<f64>,
    /// A periodic part's period per input (the data's dominant period).
    pub periods: Vec<f64>,
    /// The mean square of each input (a linear part's variances start at
    /// share / (inputs × mean square), so that its prior variance is the share).
    pub mean_squares: Vec<f64>,
}

impl Start {
    fn dim(&self) -> usize {
        self.columns.len()
    }
}

/// The parts an expression names, with the arguments each takes besides `dims`, `fix`.
pub(super) const PARTS: [(&str, &[&str]); 12] = [
    ("se", &["var", "ls"]),
    ("matern12", &["var", "ls"]),
    ("matern32", &["var", "ls"]),
    ("matern52", &["var", "ls"]),
    ("rq", &["var", "ls", "alpha"]),
    ("periodic", &["base", "var", "ls", "period", "alpha"]),
    ("linear", &["var"]),
    ("polynomial", &["degree", "var", "offset"]),
    ("constant", &["var"]),
    ("white", &["var"]),
    ("spectral_mixture", &["q", "weights", "means", "scales"]),
    ("changepoints", &["locations", "steepness"]),
];

/// The keys `fix=` may name for part `name`.
pub(super) fn fixable(name: &str) -> &'static [&'static str] {
    match name {
        "se" | "matern12" | "matern32" | "matern52" => &["var", "ls"],
        "rq" => &["var", "ls", "alpha"],
        "periodic" => &["var", "ls", "period", "alpha"],
        "linear" | "constant" | "white" => &["var"],
        "polynomial" => &["var", "offset"],
        "spectral_mixture" => &["weights", "means", "scales"],
        "changepoints" => &["locations", "steepness"],
        _ => &[],
    }
}

/// The kernel `expr` describes on inputs `start.columns`.
pub fn build(expr: &KernelExpr, start: &Start) -> Result<Box<dyn Kernel>, ExprError> {
    let mut b = Builder {
        start,
        labels: labels(expr).into_iter(),
    };
    b.node(expr, start.variance, false)
}

/// Each part's label, in reading order (the parts of [`KernelExpr::parts`]): its name,
/// numbered from 1 when the name occurs more than once (`se1`, `se2`, `periodic`).
pub fn labels(expr: &KernelExpr) -> Vec<String> {
    let parts = expr.parts();
    let mut seen: HashMap<&str, usize> = HashMap::new();
    parts
        .iter()
        .map(|p| {
            let name = p.name.as_str();
            if parts.iter().filter(|q| q.name == name).count() <= 1 {
                return name.to_string();
            }
            let n = seen.entry(name).or_default();
            *n += 1;
            format!("{name}{n}")
        })
        .collect()
}

/// The paths `--fix` may name in `expr` (`se1.ls`, `periodic.period`): each part's label
/// with each key its `fix=` takes, in reading order.
pub fn paths(expr: &KernelExpr) -> Vec<String> {
    expr.parts()
        .into_iter()
        .zip(labels(expr))
        .flat_map(|(p, label)| {
            // a periodic part has alpha only on the rq base
            let rq_base = p
                .args
                .iter()
                .any(|a| a.key == "base" && a.value == Value::Name("rq".into()));
            fixable(&p.name)
                .iter()
                .filter(move |k| p.name != "periodic" || **k != "alpha" || rq_base)
                .map(move |k| format!("{label}.{k}"))
        })
        .collect()
}

/// `expr` with the parameters named by `fixes` (paths `label.key`, the run's `--fix`
/// entries that name one) fixed, at the value given where one is — written into the
/// part as `key=value` and `fix=[…, key]`, so it means what the same words written in
/// the expression mean (the data's units). Entries that are not paths are left for
/// the caller; a path the expression does not have is an error naming those it has.
pub fn with_fixes(expr: &KernelExpr, fixes: &[crate::fix::Fix]) -> Result<KernelExpr, String> {
    let names = labels(expr);
    let valid = paths(expr);
    for f in fixes.iter().filter(|f| f.name.contains('.')) {
        if !valid.contains(&f.name) {
            return Err(format!(
                "the kernel has no parameter '{}'; its parameters are: {}",
                f.name,
                valid.join(", ")
            ));
        }
    }
    let mut at = 0;
    Ok(fix_node(expr, &names, &mut at, fixes))
}

fn fix_node(
    e: &KernelExpr,
    labels: &[String],
    at: &mut usize,
    fixes: &[crate::fix::Fix],
) -> KernelExpr {
    match e {
        KernelExpr::Sum(v) => {
            KernelExpr::Sum(v.iter().map(|t| fix_node(t, labels, at, fixes)).collect())
        }
        KernelExpr::Product(v) => {
            KernelExpr::Product(v.iter().map(|t| fix_node(t, labels, at, fixes)).collect())
        }
        KernelExpr::Part(p) => {
            let label = &labels[*at];
            *at += 1;
            let mut p = p.clone();
            p.kernels = p
                .kernels
                .iter()
                .map(|k| fix_node(k, labels, at, fixes))
                .collect();
            for f in fixes {
                let Some(key) = f
                    .name
                    .strip_prefix(label.as_str())
                    .and_then(|k| k.strip_prefix('.'))
                else {
                    continue;
                };
                if let Some(v) = f.value {
                    set_arg(&mut p, key, Value::Number(v));
                }
                let mut list = match p.args.iter().find(|a| a.key == "fix").map(|a| &a.value) {
                    Some(Value::List(v)) => v.clone(),
                    Some(v) => vec![v.clone()],
                    None => Vec::new(),
                };
                if !list.contains(&Value::Name(key.to_string())) {
                    list.push(Value::Name(key.to_string()));
                }
                set_arg(&mut p, "fix", Value::List(list));
            }
            KernelExpr::Part(p)
        }
    }
}

/// Set argument `key` of `p` (added, pointing at the part, if absent).
fn set_arg(p: &mut ExprPart, key: &str, value: Value) {
    match p.args.iter_mut().find(|a| a.key == key) {
        Some(a) => a.value = value,
        None => p.args.push(Arg {
            key: key.to_string(),
            value,
            span: p.span,
        }),
    }
}

struct Builder<'a> {
    start: &'a Start,
    labels: std::vec::IntoIter<String>,
}

/// A part's arguments by key.
struct Args<'a> {
    part: &'a ExprPart,
    by_key: HashMap<&'a str, &'a Arg>,
}

impl<'a> Args<'a> {
    fn new(part: &'a ExprPart, allowed: &[&str]) -> Result<Args<'a>, ExprError> {
        let mut by_key = HashMap::new();
        for a in &part.args {
            if !allowed.contains(&a.key.as_str()) && a.key != "dims" && a.key != "fix" {
                return Err(ExprError::new(
                    a.span,
                    format!(
                        "{} takes no argument {}; it takes {}, dims and fix",
                        part.name,
                        a.key,
                        allowed.join(", ")
                    ),
                ));
            }
            by_key.insert(a.key.as_str(), a);
        }
        if part.name != "changepoints"
            && let Some(first) = part
                .kernels
                .first()
                .and_then(|k| k.parts().first().copied())
        {
            return Err(ExprError::new(
                first.span,
                format!(
                    "{} takes no kernel; only changepoints takes kernels (before its \
                     key=value arguments)",
                    part.name
                ),
            ));
        }
        Ok(Args { part, by_key })
    }

    fn given(&self, key: &str) -> bool {
        self.by_key.contains_key(key)
    }

    /// Values for a positive block of `len` (a number is every entry); `default` where
    /// the argument is absent.
    fn numbers(&self, key: &str, len: usize, default: Vec<f64>) -> Result<Vec<f64>, ExprError> {
        let v = self.reals(key, len, default)?;
        if let Some(x) = v.iter().find(|x| !(x.is_finite() && **x > 0.0)) {
            let span = self.by_key[key].span;
            return Err(ExprError::new(
                span,
                format!("{key} must be positive and finite, not {x}"),
            ));
        }
        Ok(v)
    }

    /// Values for an unconstrained block of `len`, as [`Args::numbers`].
    fn reals(&self, key: &str, len: usize, default: Vec<f64>) -> Result<Vec<f64>, ExprError> {
        let Some(a) = self.by_key.get(key) else {
            return Ok(default);
        };
        let bad = |what: String| ExprError::new(a.span, what);
        let v = match &a.value {
            Value::Number(x) => vec![*x; len],
            Value::List(items) if items.len() == len => items
                .iter()
                .map(|i| match i {
                    Value::Number(x) => Ok(*x),
                    other => Err(bad(format!("{key} takes numbers, not {other}"))),
                })
                .collect::<Result<_, _>>()?,
            Value::List(items) => {
                let needs = if len == 1 {
                    "1".to_string()
                } else {
                    format!("1 or {len}")
                };
                return Err(bad(format!(
                    "{key} has {} values here and needs {needs}",
                    items.len()
                )));
            }
            other => return Err(bad(format!("{key} takes a number, not {other}"))),
        };
        Ok(v)
    }

    /// A whole number ≥ 1 (a degree, a component count).
    fn count(&self, key: &str, default: usize) -> Result<usize, ExprError> {
        match self.by_key.get(key) {
            None => Ok(default),
            Some(a) => match a.value {
                Value::Number(x) if x >= 1.0 && x.fract() == 0.0 && x <= 64.0 => Ok(x as usize),
                ref other => Err(ExprError::new(
                    a.span,
                    format!("{key} takes a whole number from 1 to 64, not {other}"),
                )),
            },
        }
    }

    /// The blocks `fix=` names, each checked against the part's.
    fn fixed(&self) -> Result<Vec<&'static str>, ExprError> {
        let Some(a) = self.by_key.get("fix") else {
            return Ok(Vec::new());
        };
        let items = match &a.value {
            Value::List(v) => v.clone(),
            v => vec![v.clone()],
        };
        let allowed = fixable(&self.part.name);
        items
            .iter()
            .map(|v| {
                let name = match v {
                    Value::Name(n) => n.as_str(),
                    _ => "",
                };
                allowed.iter().copied().find(|k| *k == name).ok_or_else(|| {
                    ExprError::new(
                        a.span,
                        format!(
                            "{} has no parameter {v} to fix; it has {}",
                            self.part.name,
                            allowed.join(", ")
                        ),
                    )
                })
            })
            .collect()
    }
}

impl Builder<'_> {
    fn node(
        &mut self,
        e: &KernelExpr,
        share: f64,
        later_factor: bool,
    ) -> Result<Box<dyn Kernel>, ExprError> {
        Ok(match e {
            KernelExpr::Sum(terms) => {
                let each = share / terms.len() as f64;
                let built = terms
                    .iter()
                    .map(|t| self.node(t, each, later_factor))
                    .collect::<Result<_, _>>()?;
                Box::new(Sum::new(built))
            }
            KernelExpr::Product(factors) => {
                let built = factors
                    .iter()
                    .enumerate()
                    .map(|(i, f)| {
                        self.node(f, if i == 0 { share } else { 1.0 }, later_factor || i > 0)
                    })
                    .collect::<Result<_, _>>()?;
                Box::new(Product::new(built))
            }
            KernelExpr::Part(p) => self.part(p, share, later_factor)?,
        })
    }

    /// The inputs `dims=` names (all of them when absent).
    fn dims(&self, args: &Args) -> Result<Option<Vec<usize>>, ExprError> {
        let Some(a) = args.by_key.get("dims") else {
            return Ok(None);
        };
        let items = match &a.value {
            Value::List(v) => v.clone(),
            v => vec![v.clone()],
        };
        let cols = &self.start.columns;
        let mut dims = Vec::new();
        for v in &items {
            let d = match v {
                Value::Number(x) if x.fract() == 0.0 && *x >= 0.0 && (*x as usize) < cols.len() => {
                    *x as usize
                }
                Value::Name(n) if cols.contains(n) => {
                    cols.iter().position(|c| c == n).expect("found")
                }
                other => {
                    return Err(ExprError::new(
                        a.span,
                        format!(
                            "dims names {other}, which is not an input: give indices 0..{} or \
                             column names ({})",
                            cols.len().saturating_sub(1),
                            cols.join(", ")
                        ),
                    ));
                }
            };
            if dims.contains(&d) {
                return Err(ExprError::new(
                    a.span,
                    format!("dims names input {d} twice"),
                ));
            }
            dims.push(d);
        }
        if dims.is_empty() {
            return Err(ExprError::new(a.span, "dims names no input"));
        }
        Ok(Some(dims))
    }

    /// The next part's label ([`labels`]: the builder meets the parts in reading order).
    fn label(&mut self, name: &str) -> String {
        self.labels.next().unwrap_or_else(|| name.to_string())
    }

    fn part(
        &mut self,
        p: &ExprPart,
        share: f64,
        later_factor: bool,
    ) -> Result<Box<dyn Kernel>, ExprError> {
        let Some((_, allowed)) = PARTS.iter().find(|(n, _)| *n == p.name) else {
            return Err(unknown_part(p));
        };
        let args = Args::new(p, allowed)?;
        if p.name == "changepoints" {
            return self.changepoints(&args, share, later_factor);
        }
        let dims = self.dims(&args)?;
        let all = self.start.dim();
        let on: Vec<usize> = dims.clone().unwrap_or_else(|| (0..all).collect());
        let d = on.len();
        let pick = |v: &[f64]| on.iter().map(|i| v[*i]).collect::<Vec<f64>>();
        let mut fixed = args.fixed()?;
        // a later factor's scale is the first factor's: fixed, at 1 unless given
        let scale_share = if later_factor { 1.0 } else { share };
        if later_factor && !fixed.contains(&"var") && p.name != "linear" && p.name != "polynomial" {
            fixed.push("var");
        }
        let label = self.label(&p.name);
        let var1 = || args.numbers("var", 1, vec![scale_share]);
        let kernel: Box<dyn Kernel> = match p.name.as_str() {
            "se" | "matern12" | "matern32" | "matern52" | "rq" => {
                let kind = KernelKind::from_str(&p.name, true).expect("a kernel kind");
                let ls = args.numbers("ls", d, pick(&self.start.lengthscales))?;
                let alpha = args.numbers("alpha", 1, vec![DEFAULT_RQ_ALPHA])?[0];
                Box::new(Labelled {
                    label,
                    fixed,
                    inner: Ard::new(kind, var1()?[0], ls, alpha),
                })
            }
            "periodic" => {
                let base = match args.by_key.get("base") {
                    None => KernelKind::Se,
                    Some(a) => match &a.value {
                        Value::Name(n) => KernelKind::from_str(n, true).map_err(|_| {
                            ExprError::new(a.span, format!("periodic's base is se, matern12, matern32, matern52 or rq, not {n}"))
                        })?,
                        other => return Err(ExprError::new(a.span, format!("base takes a kernel name, not {other}"))),
                    },
                };
                let mut k = Periodic::new(
                    base,
                    var1()?[0],
                    args.numbers("ls", d, vec![1.0; d])?,
                    args.numbers("period", d, pick(&self.start.periods))?,
                    args.numbers("alpha", 1, vec![DEFAULT_RQ_ALPHA])?[0],
                );
                if base != KernelKind::Rq && args.given("alpha") {
                    return Err(ExprError::new(
                        args.by_key["alpha"].span,
                        "alpha is the rq base's; give base=rq",
                    ));
                }
                set_part(&mut k.params, label, &fixed);
                Box::new(Part(k))
            }
            "linear" => {
                let ms = pick(&self.start.mean_squares);
                let v = ms
                    .iter()
                    .map(|m| share / (d as f64 * m.max(f64::MIN_POSITIVE)))
                    .collect();
                let mut k = Linear::new(args.numbers("var", d, v)?);
                set_part(&mut k.params, label, &fixed);
                Box::new(Part(k))
            }
            "polynomial" => {
                let degree = args.count("degree", 2)?;
                let ms = pick(&self.start.mean_squares);
                let v = ms
                    .iter()
                    .map(|m| 1.0 / (d as f64 * m.max(f64::MIN_POSITIVE)))
                    .collect();
                let mut k = Polynomial::new(
                    args.numbers("var", d, v)?,
                    args.numbers("offset", 1, vec![1.0])?[0],
                    degree as i32,
                );
                set_part(&mut k.params, label, &fixed);
                Box::new(Part(k))
            }
            "constant" => {
                let mut k = Constant::new(d, var1()?[0]);
                set_part(&mut k.params, label, &fixed);
                Box::new(Part(k))
            }
            "white" => {
                let mut k = White::new(d, var1()?[0]);
                set_part(&mut k.params, label, &fixed);
                Box::new(Part(k))
            }
            "spectral_mixture" => {
                let q = args.count("q", 1)?;
                let ls = pick(&self.start.lengthscales);
                // component c's frequencies spread up to 1/(2ℓ); each envelope an SE(ℓ)
                let means = (0..q)
                    .flat_map(|c| {
                        ls.iter()
                            .map(move |l| (c + 1) as f64 / ((q + 1) as f64 * 2.0 * l))
                    })
                    .collect();
                let scales = (0..q)
                    .flat_map(|_| ls.iter().map(|l| 1.0 / (2.0 * std::f64::consts::PI * l)))
                    .collect();
                let mut k = SpectralMixture::new(
                    d,
                    args.numbers("weights", q, vec![scale_share / q as f64; q])?,
                    args.numbers("means", q * d, means)?,
                    args.numbers("scales", q * d, scales)?,
                );
                set_part(&mut k.params, label, &fixed);
                Box::new(Part(k))
            }
            _ => unreachable!("PARTS lists the names above"),
        };
        Ok(match dims {
            Some(dims) => Box::new(Active::new(dims, all, kernel)),
            None => kernel,
        })
    }
}

impl Builder<'_> {
    /// `changepoints(k_0, …, k_n, locations=[…], steepness=…, dims=[t])` (module doc).
    fn changepoints(
        &mut self,
        args: &Args,
        share: f64,
        later_factor: bool,
    ) -> Result<Box<dyn Kernel>, ExprError> {
        let p = args.part;
        let label = self.label(&p.name);
        let fixed = args.fixed()?;
        let n = p.kernels.len();
        if n < 2 {
            return Err(ExprError::new(
                p.span,
                "changepoints takes two or more kernels, one before each change point and \
                 one after the last: changepoints(se, se, locations=[…])",
            ));
        }
        if !args.given("locations") {
            return Err(ExprError::new(
                p.span,
                format!(
                    "changepoints needs locations=[…]: {} for {n} kernels (where each change is, \
                     in the input's units)",
                    n - 1
                ),
            ));
        }
        let on = match self.dims(args)? {
            Some(dims) if dims.len() == 1 => dims[0],
            Some(_) => {
                return Err(ExprError::new(
                    args.by_key["dims"].span,
                    "changepoints switches along one input: give dims one input",
                ));
            }
            None if self.start.dim() == 1 => 0,
            None => {
                return Err(ExprError::new(
                    p.span,
                    format!(
                        "changepoints switches along one input: name it with dims=[…] (one of {})",
                        self.start.columns.join(", ")
                    ),
                ));
            }
        };
        let locations = args.reals("locations", n - 1, Vec::new())?;
        let steepness = args.numbers(
            "steepness",
            n - 1,
            vec![1.0 / self.start.lengthscales[on]; n - 1],
        )?;
        let kernels = p
            .kernels
            .iter()
            .map(|k| self.node(k, share, later_factor))
            .collect::<Result<Vec<_>, _>>()?;
        let mut k = ChangePoints::new(kernels, locations, steepness, on);
        set_part(&mut k.params, label, &fixed);
        Ok(Box::new(k))
    }
}

/// A part's label and fixed blocks.
fn set_part(params: &mut super::Params, label: String, fixed: &[&str]) {
    params.label = label;
    for f in fixed {
        if let Some(p) = params.find_mut(f) {
            p.fixed = true;
        }
    }
}

/// Whether every part of `expr` names a part: what can be checked without the data (the
/// inputs a part reads are checked when it is built).
pub fn check_part_names(expr: &KernelExpr) -> Result<(), ExprError> {
    match expr {
        KernelExpr::Sum(terms) | KernelExpr::Product(terms) => {
            terms.iter().try_for_each(check_part_names)
        }
        KernelExpr::Part(p) if PARTS.iter().any(|(n, _)| *n == p.name) => {
            p.kernels.iter().try_for_each(check_part_names)
        }
        KernelExpr::Part(p) => Err(unknown_part(p)),
    }
}

/// The error of a part whose name is no part's.
fn unknown_part(p: &ExprPart) -> ExprError {
    let names: Vec<&str> = PARTS.iter().map(|(n, _)| *n).collect();
    ExprError::new(
        p.span,
        format!(
            "no kernel part is called {}; the parts are {}",
            p.name,
            names.join(", ")
        ),
    )
}
