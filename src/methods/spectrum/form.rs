//! The spectral form of a kernel built from parts (issue 42; docs/methods.md §4.5): what
//! psds and ssgp need to turn a composed kernel into features.
//!
//! A composed kernel is read through its expression with values ([`Kernel::to_expr`]):
//! a sum of terms, each a product of parts. A term is either
//!
//! - **spectral**: stationary parts whose spectral densities combine — a continuous
//!   density (se: Gaussian; matern: Student-t; rq: a Gamma scale mixture of Gaussians)
//!   on some inputs, at most one per input; a `periodic` (SE base) as its discrete
//!   spectrum on its inputs (harmonics 2πk/p with weights e^{−z} I_|k|(z), z = 1/(4ℓ²)),
//!   which may share an input with a continuous part (a product's spectrum is the
//!   convolution: the frequencies add); constants as scales; or one component of a
//!   `spectral_mixture` (its own Gaussian pair at ±2πμ). Each spectral point i of the
//!   term has the frequency `w_d = z_d ρ_d / ℓ_d + 2π k_d / p_d` on input d (z the
//!   stored normal vector, ρ the radial factor of a Student-t or Gamma density, k the
//!   harmonic) and the amplitude `a_i = μ_i · V · Π_h c_|k_h|(z_h)` (V the term's
//!   variance, μ_i the point's fixed weight);
//! - **finite**: `linear`, `constant`, `polynomial` (times constants) as explicit
//!   features: monomials of the inputs with amplitudes that are products of powers of
//!   the parameters.
//!
//! Anything else has no spectral form here and is refused with the reason, naming the
//! part: white noise (a flat spectrum), change points (not stationary), periodic with
//! a non-SE base, two continuous densities or two periodic parts on one input in a
//! product (rq inside a product on a shared input among them), a sum inside a product,
//! linear / polynomial / spectral_mixture in a product with anything but constants.

use crate::kernel::Kernel;
use crate::kernel::expression::{KernelExpr, Part, Value};
use std::f64::consts::PI;

/// A parameter value as the form reads it, and where it sits in the kernel's θ (its
/// logarithm: every parameter here is positive); None when it is fixed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Val {
    pub v: f64,
    pub at: Option<usize>,
}

/// A continuous spectral density's radial law (the unit-lengthscale density is
/// `z · ρ` with z ~ N(0, I) and ρ a function of one uniform coordinate h).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Radial {
    /// se: ρ = 1.
    Gaussian,
    /// matern-ν: ρ = √(2ν / F⁻¹_{χ²(2ν)}(h)).
    StudentT { nu: f64 },
    /// rq: ρ = √λ, λ = the Gamma(α, rate α) quantile of h.
    Gamma { alpha: Val },
}

/// A stationary part with a continuous density on some inputs (ARD: w = z ρ / ℓ).
#[derive(Clone, Debug, PartialEq)]
pub struct Continuous {
    pub label: String,
    pub dims: Vec<usize>,
    /// One per input of `dims`.
    pub ls: Vec<Val>,
    pub radial: Radial,
}

/// A periodic part's discrete spectrum on one input.
#[derive(Clone, Debug, PartialEq)]
pub struct Harmonic {
    pub label: String,
    pub dim: usize,
    pub period: Val,
    pub ls: Val,
}

/// One component of a spectral mixture: w_d = 2π (k_d μ_d + σ_d z_d), k_d = ±1.
#[derive(Clone, Debug, PartialEq)]
pub struct Component {
    pub label: String,
    pub dims: Vec<usize>,
    pub means: Vec<Val>,
    pub scales: Vec<Val>,
}

/// A term with a spectral density: its points share the term's variance.
#[derive(Clone, Debug, PartialEq)]
pub struct Term {
    /// Its parts' labels joined by `*` (`se2*periodic`).
    pub label: String,
    /// Variances multiplied (a part's `var`, constants, a mixture's weight).
    pub variances: Vec<Val>,
    pub continuous: Vec<Continuous>,
    pub harmonics: Vec<Harmonic>,
    pub component: Option<Component>,
    /// Which summand of the kernel's top-level sum it comes from (0-based).
    pub summand: usize,
}

/// An explicit feature: the monomial Π_d x_d^{e_d} with amplitude
/// `coef · Π v^power` over `powers`.
#[derive(Clone, Debug, PartialEq)]
pub struct Finite {
    pub label: String,
    pub exponents: Vec<u32>,
    pub coef: f64,
    pub powers: Vec<(Val, f64)>,
    /// Which summand of the kernel's top-level sum it comes from (0-based).
    pub summand: usize,
}

/// A composed kernel's spectral form on `dim` inputs.
#[derive(Clone, Debug, PartialEq)]
pub struct Form {
    pub dim: usize,
    pub terms: Vec<Term>,
    pub finite: Vec<Finite>,
}

/// The most explicit features a polynomial may expand into.
const MAX_FINITE: usize = 4096;

impl Term {
    /// The term's variance V.
    pub fn variance(&self) -> f64 {
        self.variances.iter().map(|v| v.v).product()
    }

    /// Whether its points are the harmonics 0, 1, 2, … of one periodic input, each once
    /// (a term that is a periodic part on one input times constants): the discrete
    /// spectrum truncated, not sampled.
    pub fn enumerates_harmonics(&self) -> bool {
        self.continuous.is_empty() && self.component.is_none() && self.harmonics.len() == 1
    }
}

impl Finite {
    pub fn amplitude(&self) -> f64 {
        self.coef
            * self
                .powers
                .iter()
                .map(|(v, p)| v.v.powf(*p))
                .product::<f64>()
    }
}

// ---------------------------------------------------------------- Bessel weights

/// `e^{−z} I_k(z)` for k = 0..=kmax (z ≥ 0): the weights of the cosine series
/// `exp(z cos θ) e^{−z} = c_0 + 2 Σ_{k≥1} c_k cos kθ` (Abramowitz & Stegun 9.6.34), by
/// Miller's backward recurrence normalised with that identity at θ = 0 (Σ = 1).
pub fn bessel_weights(z: f64, kmax: usize) -> Vec<f64> {
    let mut out = vec![0.0; kmax + 1];
    if z <= 0.0 {
        out[0] = 1.0;
        return out;
    }
    // I_k(z)/I_0(z) is below 1e-17 well before k = z + 10√z + 40
    let start = kmax.max((z + 10.0 * z.sqrt()) as usize) + 40;
    let (mut above, mut here) = (0.0_f64, 1e-300_f64);
    let mut sum = 0.0;
    for k in (0..=start).rev() {
        if k <= kmax {
            out[k] = here;
        }
        sum += if k == 0 { here } else { 2.0 * here };
        if k == 0 {
            break;
        }
        let below = above + 2.0 * k as f64 / z * here;
        (above, here) = (here, below);
        if here > 1e250 {
            // rescale everything so far
            let s = 1e-250;
            above *= s;
            here *= s;
            sum *= s;
            out.iter_mut().for_each(|o| *o *= s);
        }
    }
    out.iter_mut().for_each(|o| *o /= sum);
    out
}

/// d log c_k / dz for k = 0..=kmax from the weights up to kmax + 1: I_k' = (I_{k−1} +
/// I_{k+1})/2 (I_{−1} = I_1), so d log(e^{−z} I_k)/dz = (c_{k−1} + c_{k+1})/(2 c_k) − 1.
pub fn bessel_log_slopes(c: &[f64]) -> Vec<f64> {
    (0..c.len() - 1)
        .map(|k| {
            let below = if k == 0 { c[1] } else { c[k - 1] };
            if c[k] > 0.0 {
                (below + c[k + 1]) / (2.0 * c[k]) - 1.0
            } else {
                0.0
            }
        })
        .collect()
}

/// z = 1/(4ℓ²) of a periodic SE part: exp(−sin²(πτ/p)/(2ℓ²)) = e^{−z} exp(z cos(2πτ/p)).
pub fn harmonic_z(ls: f64) -> f64 {
    1.0 / (4.0 * ls * ls)
}

/// The frequency of harmonic k of period p.
pub fn harmonic_frequency(k: i64, period: f64) -> f64 {
    2.0 * PI * k as f64 / period
}

// ---------------------------------------------------------------- reading a kernel

/// The spectral form of `kernel`, or the reason it has none.
pub fn of_kernel(kernel: &dyn Kernel) -> Result<Form, String> {
    let Some(expr) = kernel.to_expr() else {
        return Err(format!(
            "its parts include {}, which has no spectral form (change points switch kernels \
             along an input: not stationary, no spectral density)",
            kernel.name()
        ));
    };
    let offsets = block_offsets(kernel);
    Reader {
        dim: kernel.dim(),
        offsets: &offsets,
    }
    .form(&expr)
}

/// Why a kernel expression (as the user wrote it) has no spectral form, if it has none
/// that can be told without the data (the inputs named by column are compared as
/// written; [`of_kernel`] checks the built kernel again).
pub fn refusal(expr: &KernelExpr) -> Option<String> {
    Reader {
        dim: 0,
        offsets: &[],
    }
    .form(expr)
    .err()
}

/// Each free block's name and where its values start in θ.
fn block_offsets(kernel: &dyn Kernel) -> Vec<(String, usize, usize)> {
    let mut at = 0;
    kernel
        .blocks()
        .into_iter()
        .map(|b| {
            let r = (b.name, at, b.values.len());
            at += r.2;
            r
        })
        .collect()
}

struct Reader<'a> {
    /// The number of inputs (0 when reading an expression without the data).
    dim: usize,
    offsets: &'a [(String, usize, usize)],
}

/// A part's dims as written: indices, or names (compared as written).
#[derive(Clone, Debug, PartialEq)]
enum Dim {
    Index(usize),
    Name(String),
}

fn sum_terms(e: &KernelExpr) -> Vec<&KernelExpr> {
    match e {
        KernelExpr::Sum(v) => v.iter().flat_map(sum_terms).collect(),
        e => vec![e],
    }
}

fn product_factors(e: &KernelExpr) -> Vec<&KernelExpr> {
    match e {
        KernelExpr::Product(v) => v.iter().flat_map(product_factors).collect(),
        e => vec![e],
    }
}

impl Reader<'_> {
    fn form(&self, expr: &KernelExpr) -> Result<Form, String> {
        let labels = crate::kernel::labels(expr);
        let parts = expr.parts();
        let label_of = |p: &Part| -> String {
            parts
                .iter()
                .position(|q| std::ptr::eq(*q, p))
                .map_or_else(|| p.name.clone(), |i| labels[i].clone())
        };
        let mut form = Form {
            dim: self.dim,
            terms: Vec::new(),
            finite: Vec::new(),
        };
        for (summand, t) in sum_terms(expr).into_iter().enumerate() {
            let (terms, finite) = (form.terms.len(), form.finite.len());
            let factors: Vec<&Part> = product_factors(t)
                .into_iter()
                .map(|f| match f {
                    KernelExpr::Part(p) => Ok(p),
                    _ => Err(
                        "a sum inside a product has no spectral form here; expand it into a \
                         sum of products"
                            .to_string(),
                    ),
                })
                .collect::<Result<_, _>>()?;
            self.term(&factors, &label_of, &mut form)?;
            form.terms[terms..]
                .iter_mut()
                .for_each(|t| t.summand = summand);
            form.finite[finite..]
                .iter_mut()
                .for_each(|f| f.summand = summand);
        }
        Ok(form)
    }

    /// The values of argument `key` of part `p` (labelled `label`), `len` of them (one
    /// number stands for all), with their places in θ.
    fn vals(&self, p: &Part, label: &str, key: &str, len: usize) -> Vec<Val> {
        let nums: Vec<f64> = match p.args.iter().find(|a| a.key == key).map(|a| &a.value) {
            Some(Value::Number(x)) => vec![*x; len],
            Some(Value::List(v)) => v
                .iter()
                .map(|x| match x {
                    Value::Number(x) => *x,
                    _ => f64::NAN,
                })
                .collect(),
            _ => vec![1.0; len],
        };
        let path = format!("{label}.{key}");
        let block = self.offsets.iter().find(|(n, _, _)| *n == path);
        nums.into_iter()
            .enumerate()
            .map(|(i, v)| Val {
                v,
                at: block.filter(|b| b.2 == len).map(|b| b.1 + i),
            })
            .collect()
    }

    fn dims(&self, p: &Part) -> Option<Vec<Dim>> {
        let a = p.args.iter().find(|a| a.key == "dims")?;
        let items = match &a.value {
            Value::List(v) => v.clone(),
            v => vec![v.clone()],
        };
        Some(
            items
                .into_iter()
                .map(|v| match v {
                    Value::Number(x) => Dim::Index(x as usize),
                    Value::Name(n) => Dim::Name(n),
                    Value::List(_) => Dim::Name(String::new()),
                })
                .collect(),
        )
    }

    /// A part's inputs as indices (all of them when it names none; names only when the
    /// reader has no data, where they are compared as written).
    fn indices(&self, p: &Part) -> (Vec<Dim>, Vec<usize>) {
        let written = self.dims(p);
        let all: Vec<usize> = (0..self.dim).collect();
        match written {
            None => (Vec::new(), all),
            Some(d) => {
                let idx = d
                    .iter()
                    .filter_map(|x| match x {
                        Dim::Index(i) => Some(*i),
                        Dim::Name(_) => None,
                    })
                    .collect();
                (d, idx)
            }
        }
    }

    fn term(
        &self,
        factors: &[&Part],
        label_of: &dyn Fn(&Part) -> String,
        form: &mut Form,
    ) -> Result<(), String> {
        let mut term = Term {
            label: factors
                .iter()
                .map(|p| label_of(p))
                .collect::<Vec<_>>()
                .join("*"),
            variances: Vec::new(),
            continuous: Vec::new(),
            harmonics: Vec::new(),
            component: None,
            summand: 0,
        };
        // who reads which input, for the checks of a product (written dims; None = all)
        let mut readers: Vec<(String, Option<Vec<Dim>>, bool)> = Vec::new();
        let mut finite: Option<&Part> = None;
        let mut mixture: Option<&Part> = None;
        for p in factors {
            let label = label_of(p);
            let (written, on) = self.indices(p);
            let written = (!written.is_empty()).then_some(written);
            let n = if written.is_some() {
                on.len()
            } else {
                self.dim
            };
            let base_se = p
                .args
                .iter()
                .find(|a| a.key == "base")
                .is_none_or(|a| a.value == Value::Name("se".into()));
            match p.name.as_str() {
                "se" | "matern12" | "matern32" | "matern52" | "rq" => {
                    let radial = match p.name.as_str() {
                        "se" => Radial::Gaussian,
                        "matern12" => Radial::StudentT { nu: 0.5 },
                        "matern32" => Radial::StudentT { nu: 1.5 },
                        "matern52" => Radial::StudentT { nu: 2.5 },
                        _ => Radial::Gamma {
                            alpha: self.vals(p, &label, "alpha", 1)[0],
                        },
                    };
                    self.shared_check(&readers, &label, &written, true, factors.len())?;
                    readers.push((label.clone(), written.clone(), true));
                    term.variances.push(self.vals(p, &label, "var", 1)[0]);
                    term.continuous.push(Continuous {
                        label: label.clone(),
                        dims: on,
                        ls: self.vals(p, &label, "ls", n),
                        radial,
                    });
                }
                "periodic" if base_se => {
                    self.shared_check(&readers, &label, &written, false, factors.len())?;
                    readers.push((label.clone(), written.clone(), false));
                    term.variances.push(self.vals(p, &label, "var", 1)[0]);
                    let ls = self.vals(p, &label, "ls", n);
                    let period = self.vals(p, &label, "period", n);
                    for (i, d) in on.iter().enumerate() {
                        term.harmonics.push(Harmonic {
                            label: label.clone(),
                            dim: *d,
                            period: period[i],
                            ls: ls[i],
                        });
                    }
                }
                "periodic" => {
                    return Err(format!(
                        "{label} has a non-SE base, whose cosine series sgpw does not compute \
                         (the SE base's is the modified-Bessel series); use periodic with \
                         base se"
                    ));
                }
                "constant" => term.variances.push(self.vals(p, &label, "var", 1)[0]),
                "linear" | "polynomial" => finite = Some(p),
                "spectral_mixture" => mixture = Some(p),
                "white" => {
                    return Err(format!(
                        "{label} (white noise) has a flat spectrum, which no finite set of \
                         features carries; the model's noise variance is white noise already"
                    ));
                }
                other => {
                    return Err(format!("{other} has no spectral form"));
                }
            }
        }
        let spectral = !term.continuous.is_empty() || !term.harmonics.is_empty();
        if let Some(p) = finite.or(mixture) {
            let others = factors
                .iter()
                .filter(|q| !std::ptr::eq(**q, p) && q.name != "constant")
                .count();
            if others > 0 || spectral {
                return Err(format!(
                    "{} in a product with {} has no spectral form here (a product of explicit \
                     features or a mixture with other parts is not built); only constants may \
                     scale it",
                    label_of(p),
                    term.label
                ));
            }
        }
        if let Some(p) = finite {
            return self.finite(p, &label_of(p), &term.variances, form);
        }
        if let Some(p) = mixture {
            let label = label_of(p);
            let (written, on) = self.indices(p);
            let n = if written.is_empty() {
                self.dim
            } else {
                on.len()
            };
            let q = match p.args.iter().find(|a| a.key == "q").map(|a| &a.value) {
                Some(Value::Number(x)) => *x as usize,
                _ => 1,
            };
            let weights = self.vals(p, &label, "weights", q);
            let means = self.vals(p, &label, "means", q * n);
            let scales = self.vals(p, &label, "scales", q * n);
            for c in 0..q {
                let mut variances = term.variances.clone();
                variances.push(weights[c]);
                form.terms.push(Term {
                    label: format!("{label}[{}]", c + 1),
                    variances,
                    continuous: Vec::new(),
                    harmonics: Vec::new(),
                    component: Some(Component {
                        label: label.clone(),
                        dims: on.clone(),
                        means: means[c * n..(c + 1) * n].to_vec(),
                        scales: scales[c * n..(c + 1) * n].to_vec(),
                    }),
                    summand: 0,
                });
            }
            return Ok(());
        }
        if !spectral {
            // constants alone: one explicit feature, 1
            form.finite.push(Finite {
                label: term.label.clone(),
                exponents: vec![0; self.dim],
                coef: 1.0,
                powers: term.variances.iter().map(|v| (*v, 1.0)).collect(),
                summand: 0,
            });
            return Ok(());
        }
        form.terms.push(term);
        Ok(())
    }

    /// In a product: a continuous part may not share an input with another continuous
    /// part, nor a periodic part with another periodic part.
    fn shared_check(
        &self,
        readers: &[(String, Option<Vec<Dim>>, bool)],
        label: &str,
        dims: &Option<Vec<Dim>>,
        continuous: bool,
        _factors: usize,
    ) -> Result<(), String> {
        for (other, their, cont) in readers.iter().filter(|r| r.2 == continuous) {
            let _ = cont;
            let shared = match (dims, their) {
                (None, _) | (_, None) => true,
                (Some(a), Some(b)) => a.iter().any(|d| b.contains(d)),
            };
            if shared {
                let rq = [label, other.as_str()]
                    .into_iter()
                    .find(|l| l.starts_with("rq"));
                return Err(match (continuous, rq) {
                    (true, Some(rq)) => format!(
                        "{rq} inside a product on a shared input (with {}) has no spectral form \
                         here: rq's density is a Gamma mixture of Gaussians, whose convolution \
                         with another density sgpw does not sample; give the parts disjoint \
                         dims, or use an inducing-point method",
                        if rq == label { other.as_str() } else { label }
                    ),
                    (true, None) => format!(
                        "{other} and {label} read a shared input inside a product: the \
                         convolution of two continuous spectral densities is not built; give \
                         them disjoint dims (or write one part: a product of two se parts is \
                         an se part)"
                    ),
                    (false, _) => format!(
                        "{other} and {label} are two periodic parts on a shared input inside a \
                         product: not built; give them disjoint dims"
                    ),
                });
            }
        }
        Ok(())
    }

    /// linear / polynomial (times the constants' `scales`) as explicit features.
    fn finite(&self, p: &Part, label: &str, scales: &[Val], form: &mut Form) -> Result<(), String> {
        let (written, on) = self.indices(p);
        let n = if written.is_empty() {
            self.dim
        } else {
            on.len()
        };
        let var = self.vals(p, label, "var", n);
        let scale = |powers: &mut Vec<(Val, f64)>| powers.extend(scales.iter().map(|v| (*v, 1.0)));
        if p.name == "linear" {
            for (i, d) in on.iter().enumerate() {
                let mut exponents = vec![0; self.dim];
                exponents[*d] = 1;
                let mut powers = vec![(var[i], 1.0)];
                scale(&mut powers);
                form.finite.push(Finite {
                    label: label.to_string(),
                    exponents,
                    coef: 1.0,
                    powers,
                    summand: 0,
                });
            }
            return Ok(());
        }
        let degree = match p.args.iter().find(|a| a.key == "degree").map(|a| &a.value) {
            Some(Value::Number(x)) => *x as u32,
            _ => 2,
        };
        let offset = self.vals(p, label, "offset", 1)[0];
        // (Σ v_d x_d y_d + c)^p = Σ_{|e| ≤ p} p!/(e! (p − |e|)!) c^{p−|e|} Π (v_d x_d y_d)^{e_d}
        let count = binomial(n + degree as usize, degree as usize);
        if count > MAX_FINITE {
            return Err(format!(
                "{label} (degree {degree} on {n} inputs) expands into {count} explicit features, \
                 more than {MAX_FINITE}"
            ));
        }
        for e in multi_indices(n, degree) {
            let total: u32 = e.iter().sum();
            let mut coef = factorial(degree) / factorial(degree - total);
            let mut powers = vec![(offset, f64::from(degree - total))];
            for (i, ei) in e.iter().enumerate() {
                coef /= factorial(*ei);
                if *ei > 0 {
                    powers.push((var[i], f64::from(*ei)));
                }
            }
            scale(&mut powers);
            let mut exponents = vec![0; self.dim];
            for (i, d) in on.iter().enumerate() {
                exponents[*d] = e[i];
            }
            form.finite.push(Finite {
                label: label.to_string(),
                exponents,
                coef,
                powers,
                summand: 0,
            });
        }
        Ok(())
    }
}

/// Every e ∈ ℕⁿ with |e| ≤ degree.
fn multi_indices(n: usize, degree: u32) -> Vec<Vec<u32>> {
    if n == 0 {
        return vec![Vec::new()];
    }
    (0..=degree)
        .flat_map(|first| {
            multi_indices(n - 1, degree - first)
                .into_iter()
                .map(move |mut rest| {
                    rest.insert(0, first);
                    rest
                })
        })
        .collect()
}

fn factorial(n: u32) -> f64 {
    (1..=n).map(f64::from).product()
}

fn binomial(n: usize, k: usize) -> usize {
    (0..k).fold(1usize, |acc, i| acc.saturating_mul(n - i) / (i + 1))
}
