//! Binary classification, y ∈ {0, 1}, p(y = 1 | f) = ε + (1 − 2ε)·λ(f) with the link λ
//! Φ (probit, the default, as GPflow's and GPML's) or the logistic σ (logit). The floor ε
//! keeps p away from 0 and 1 (a mislabelled point costs at most −log ε); it is 0 by
//! default, and GPflow's `Bernoulli()` uses ε = 10⁻³ with the probit link.
//!
//! Whatever two labels a data set uses (0/1, ±1, "yes"/"no" read as numbers), the
//! targets reach this likelihood as 0 and 1: [`BinaryLabels`] maps them and remembers
//! which was which.

use super::{BadTarget, GaussHermite, Likelihood, Pointwise, normal};

/// The inverse link λ in p(y = 1 | f) = λ(f).
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Hash,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Link {
    /// λ = Φ, the standard normal distribution function.
    #[default]
    Probit,
    /// λ = σ, the logistic function 1/(1 + e^{−f}).
    Logit,
}

impl Link {
    pub fn name(self) -> &'static str {
        match self {
            Link::Probit => "probit",
            Link::Logit => "logit",
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Bernoulli {
    pub link: Link,
    /// ε in p = ε + (1 − 2ε) λ(f), 0 ≤ ε < ½.
    pub floor: f64,
}

impl Bernoulli {
    pub fn new(link: Link, floor: f64) -> Bernoulli {
        Bernoulli { link, floor }
    }

    /// GPflow 2's `Bernoulli()`: probit with its 10⁻³ floor (for comparisons).
    pub fn gpflow() -> Bernoulli {
        Bernoulli::new(Link::Probit, 1e-3)
    }

    /// p(y = 1 | f).
    pub fn probability(&self, f: f64) -> f64 {
        let lambda = match self.link {
            Link::Probit => normal::cdf(f),
            Link::Logit => logistic(f),
        };
        self.floor + (1.0 - 2.0 * self.floor) * lambda
    }
}

fn logistic(t: f64) -> f64 {
    if t >= 0.0 {
        1.0 / (1.0 + (-t).exp())
    } else {
        let e = t.exp();
        e / (1.0 + e)
    }
}

impl Likelihood for Bernoulli {
    fn name(&self) -> &'static str {
        "bernoulli"
    }

    fn check_targets(&self, y: &[f64]) -> Result<(), BadTarget> {
        match y.iter().position(|v| *v != 0.0 && *v != 1.0) {
            Some(row) => Err(BadTarget {
                row,
                reason: format!(
                    "the target {} is not a class label 0 or 1 (map two labels with \
                     BinaryLabels first)",
                    y[row]
                ),
            }),
            None => Ok(()),
        }
    }

    /// With s = 2y − 1 and t = s·f, log p(y | f) = log(ε + (1 − 2ε) λ(t)) (both links
    /// are symmetric, λ(−t) = 1 − λ(t)).
    fn log_density(&self, y: f64, f: f64, _d_params: Option<&mut [f64]>) -> Pointwise {
        let s = if y == 1.0 { 1.0 } else { -1.0 };
        let t = s * f;
        let eps = self.floor;
        match (self.link, eps == 0.0) {
            // log Φ(t) and φ(t)/Φ(t) in their tail-safe forms
            (Link::Probit, true) => {
                let r = normal::pdf_over_cdf(t);
                Pointwise {
                    value: normal::log_cdf(t),
                    d_f: s * r,
                    d2_f: -r * (t + r),
                }
            }
            (Link::Probit, false) => {
                let c = 1.0 - 2.0 * eps;
                let p = eps + c * normal::cdf(t);
                let d = c * normal::pdf(t) / p;
                Pointwise {
                    value: p.ln(),
                    d_f: s * d,
                    d2_f: -t * d - d * d,
                }
            }
            // log σ(t) = −log(1 + e^{−t}); its derivatives σ(−t) and −σ(t)σ(−t)
            (Link::Logit, true) => Pointwise {
                value: -softplus(-t),
                d_f: s * logistic(-t),
                d2_f: -logistic(t) * logistic(-t),
            },
            (Link::Logit, false) => {
                let c = 1.0 - 2.0 * eps;
                let (l, lm) = (logistic(t), logistic(-t));
                let p = eps + c * l;
                let d = c * l * lm / p;
                Pointwise {
                    value: p.ln(),
                    d_f: s * d,
                    // d/dt (c λ'(t)/p) with λ'' = λ'(1 − 2λ)
                    d2_f: d * (1.0 - 2.0 * l) - d * d,
                }
            }
        }
    }

    fn conditional_moments(&self, f: f64) -> (f64, f64) {
        let p = self.probability(f);
        (p, p - p * p)
    }

    /// Probit: E[Φ(f)] = Φ(μ/√(1 + v)) exactly; logit by quadrature.
    fn predictive_moments(&self, mean: f64, var: f64, quad: &GaussHermite) -> (f64, f64) {
        let p = match self.link {
            Link::Probit => self.probability(mean / (1.0 + var).sqrt()),
            Link::Logit => quad.expect(mean, var, |f| self.probability(f)),
        };
        (p, p - p * p)
    }

    /// The predictive distribution of y is Bernoulli(p) with p its mean.
    fn log_predictive_density(&self, y: f64, mean: f64, var: f64, quad: &GaussHermite) -> f64 {
        if self.link == Link::Probit && self.floor == 0.0 {
            // log Φ(±μ/√(1+v)) without forming 1 − p
            let s = if y == 1.0 { 1.0 } else { -1.0 };
            return normal::log_cdf(s * mean / (1.0 + var).sqrt());
        }
        let p = self.predictive_moments(mean, var, quad).0;
        if y == 1.0 { p.ln() } else { (1.0 - p).ln() }
    }

    fn clone_box(&self) -> Box<dyn Likelihood> {
        Box::new(*self)
    }
}

/// log(1 + e^x) without overflow.
fn softplus(x: f64) -> f64 {
    if x > 0.0 {
        x + (-x).exp().ln_1p()
    } else {
        x.exp().ln_1p()
    }
}

/// The two labels of a binary target and the map to 0/1: the smaller label is class 0
/// (so 0/1 and −1/+1 map as expected).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BinaryLabels {
    /// The labels read as class 0 and class 1.
    pub labels: [f64; 2],
}

impl BinaryLabels {
    /// The labels of `y`, which must hold exactly two distinct finite values.
    pub fn of(y: &[f64]) -> Result<BinaryLabels, BadTarget> {
        let mut seen: Vec<f64> = Vec::with_capacity(2);
        for (row, v) in y.iter().enumerate() {
            if !v.is_finite() {
                return Err(BadTarget {
                    row,
                    reason: format!("the target {v} is not a class label"),
                });
            }
            if !seen.contains(v) {
                if seen.len() == 2 {
                    return Err(BadTarget {
                        row,
                        reason: format!(
                            "a third label {v} (after {} and {}): binary classification \
                             takes two classes",
                            seen[0], seen[1]
                        ),
                    });
                }
                seen.push(*v);
            }
        }
        match seen[..] {
            [a, b] => Ok(BinaryLabels {
                labels: [a.min(b), a.max(b)],
            }),
            _ => Err(BadTarget {
                row: 0,
                reason: format!(
                    "every target is {}: binary classification needs both classes in the \
                     training data",
                    seen.first()
                        .map_or("missing".to_string(), |v| v.to_string())
                ),
            }),
        }
    }

    /// `y` as 0/1 (labels outside the two were refused by [`BinaryLabels::of`]).
    pub fn to_classes(&self, y: &[f64]) -> Vec<f64> {
        y.iter()
            .map(|v| if *v == self.labels[1] { 1.0 } else { 0.0 })
            .collect()
    }
}

/// A binary target written as words — text such as "spam"/"ham", or booleans — and the
/// one rule that turns it into classes: the two labels sorted (by their bytes, as
/// scikit-learn's `classes_` and numpy's `unique` sort strings; false before true), the
/// first class 0 and the second class 1, the positive class whose probability p(y = 1)
/// a model gives. Numbers keep [`BinaryLabels`]' rule (the smaller is class 0), which
/// is the same order. The classes' codes 0 and 1 are what the loader puts in the
/// target column, so everything after it sees the labels 0 and 1.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassNames {
    /// The labels of class 0 and class 1.
    pub names: [String; 2],
    /// Whether the column held booleans (true/false), not text: a boolean target is also
    /// the numbers 0/1 to the other likelihoods, while text is refused by them.
    pub booleans: bool,
}

impl ClassNames {
    /// The two labels of `cells` (None: a missing cell) and each cell's class code, NaN
    /// where a cell is missing (the loader's missing-value rule then applies). Refuses a
    /// third label, naming its row and the three, and a column with one label.
    pub fn of(cells: &[Option<&str>], booleans: bool) -> Result<(ClassNames, Vec<f64>), BadTarget> {
        let mut seen: Vec<&str> = Vec::with_capacity(2);
        for (row, cell) in cells.iter().enumerate() {
            let Some(label) = cell else { continue };
            if !seen.contains(label) {
                if seen.len() == 2 {
                    let mut three = [seen[0], seen[1], *label];
                    three.sort_unstable();
                    return Err(BadTarget {
                        row,
                        reason: format!(
                            "a third label \"{label}\" (the column has \"{}\", \"{}\" and \
                             \"{}\"): binary classification takes two classes",
                            three[0], three[1], three[2]
                        ),
                    });
                }
                seen.push(label);
            }
        }
        seen.sort_unstable();
        let names = match seen[..] {
            [a, b] => [a.to_string(), b.to_string()],
            _ => {
                return Err(BadTarget {
                    row: 0,
                    reason: match seen.first() {
                        Some(only) => format!(
                            "every target is \"{only}\": binary classification needs both \
                             classes in the training data"
                        ),
                        None => "every target is missing".to_string(),
                    },
                });
            }
        };
        let classes = ClassNames { names, booleans };
        let codes = classes
            .codes(cells)
            .expect("every label is one of the two just found");
        Ok((classes, codes))
    }

    /// Each cell's class code (0 or 1; NaN where missing) by these classes: the test
    /// file's and any later data's. A label not among the two is refused at its row.
    pub fn codes(&self, cells: &[Option<&str>]) -> Result<Vec<f64>, BadTarget> {
        cells
            .iter()
            .enumerate()
            .map(|(row, cell)| match cell {
                None => Ok(f64::NAN),
                Some(label) => match self.names.iter().position(|n| n == label) {
                    Some(class) => Ok(class as f64),
                    None => Err(BadTarget {
                        row,
                        reason: format!(
                            "the label \"{label}\" is neither of the training labels \"{}\" \
                             and \"{}\"",
                            self.names[0], self.names[1]
                        ),
                    }),
                },
            })
            .collect()
    }

    /// The label a probability p(y = 1) predicts: class 1's when p > ½ (the error
    /// rate's rule, `metrics::error_rate`).
    pub fn predicted(&self, p_one: f64) -> &str {
        &self.names[usize::from(p_one > 0.5)]
    }

    /// "classes: ham → 0, spam → 1 (positive: …)": how `fit` reports the mapping.
    pub fn describe(&self) -> String {
        format!(
            "classes: {} → 0, {} → 1 (positive: p(y = 1) is the probability of {})",
            self.names[0], self.names[1], self.names[1]
        )
    }
}
