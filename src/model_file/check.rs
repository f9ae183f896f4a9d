//! The check of what every method shares in a model, and the number of inputs D that
//! its keys and tables agree on ([`Witness`], [`settle_dim`]).

use super::schema::ModelFile;
use crate::error::{Error, Location, Result};
use crate::kernel::KernelKind;

/// Something in a model that holds one value per input (a key's values, a table's row
/// length): the inputs' number D is what they agree on.
#[derive(Clone, Debug, PartialEq)]
pub struct Witness {
    pub at: Location,
    /// How it reads in a message ("[hyper] lengthscales", "[inducing] points rows").
    pub what: String,
    pub count: usize,
}

impl Witness {
    pub fn new(at: Location, what: impl Into<String>, count: usize) -> Witness {
        Witness {
            at,
            what: what.into(),
            count,
        }
    }

    /// The row length of a matrix table `[table] key` (its first row), if it has rows.
    pub fn rows(model: &ModelFile, table: &str, key: &str) -> Option<Witness> {
        let first = model.tables.get(table)?.get(key)?.as_array()?.first()?;
        Some(Witness::new(
            Location::key(table).then(key).index(0),
            format!("[{table}] {key} rows"),
            first.as_array()?.len(),
        ))
    }

    /// The length of a list `[table] key` (or a top-level `key` when `table` is empty).
    pub fn list(model: &ModelFile, table: &str, key: &str) -> Option<Witness> {
        let (value, at, what) = if table.is_empty() {
            (model.tables.get(key)?, Location::key(key), key.to_string())
        } else {
            (
                model.tables.get(table)?.get(key)?,
                Location::key(table).then(key),
                format!("[{table}] {key}"),
            )
        };
        Some(Witness::new(at, what, value.as_array()?.len()))
    }

    /// `[hyper] lengthscales`, for methods whose lengthscales are one per input.
    pub fn lengthscales(model: &ModelFile) -> Witness {
        Witness::new(
            Location::key("hyper").then("lengthscales"),
            "[hyper] lengthscales",
            model.kernel_dim(),
        )
    }
}

impl ModelFile {
    /// Check what every method shares and settle the number of inputs D: `witnesses`
    /// are what the method says holds one value per input (its lengthscales, the row
    /// length of its tables); `inputs` and `[standardize]` join them. Where they
    /// disagree the one that differs from the most is wrong (an edit that removed one
    /// lengthscale is reported at `lengthscales`, not at `[standardize]`); on a tie the
    /// method's first witness sets D. `lengthscales` says whether the method has them
    /// (every method but spgp-dr, whose projection carries the scales).
    pub fn check_shared(&self, witnesses: &[Witness], lengthscales: bool) -> Result<usize> {
        let h = &self.hyper;
        let at_hyper = |key: &str| Location::key("hyper").then(key);
        match (lengthscales, h.lengthscales.is_empty()) {
            // a composed kernel carries its own scales ([kernel])
            (true, true) if self.composed.is_some() => {}
            (true, true) => {
                return Err(Error::at(
                    at_hyper("lengthscales"),
                    format!(
                        "[hyper] lengthscales is missing or empty; method '{}' needs one per input",
                        self.method
                    ),
                ));
            }
            (false, false) => {
                return Err(Error::at(
                    at_hyper("lengthscales"),
                    format!(
                        "[hyper] lengthscales does not apply to method '{}': its [projection] \
                         matrix carries the scales; remove the key",
                        self.method
                    ),
                ));
            }
            _ => {}
        }
        let positive = |name: &str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(Error::at(
                    at_hyper(name),
                    format!("[hyper] {name} must be positive and finite, not {v}"),
                ))
            }
        };
        positive("signal_variance", h.signal_variance)?;
        match (h.kernel, h.rq_alpha) {
            (KernelKind::Rq, Some(a)) => positive("rq_alpha", a)?,
            (KernelKind::Rq, None) => {
                return Err(Error::at(
                    at_hyper("kernel"),
                    "[hyper] kernel = \"rq\" needs its shape: add rq_alpha (e.g. rq_alpha = 1.0)",
                ));
            }
            (k, Some(_)) => {
                return Err(Error::at(
                    at_hyper("rq_alpha"),
                    format!(
                        "[hyper] rq_alpha is the rational quadratic kernel's shape; this model's \
                         kernel is {k} — remove rq_alpha or set kernel = \"rq\""
                    ),
                ));
            }
            (_, None) => {}
        }
        positive("noise_variance", h.noise_variance)?;
        for l in &h.lengthscales {
            positive("lengthscales", *l)?;
        }
        if let Some(j) = self.jitter.filter(|j| !(j.is_finite() && *j >= 0.0)) {
            return Err(Error::at(
                Location::key("jitter"),
                format!("jitter must be ≥ 0, not {j}"),
            ));
        }
        if let Some(f) = self.noise_floor {
            if !(f.is_finite() && f >= 0.0) {
                return Err(Error::at(
                    Location::key("noise_floor"),
                    format!("noise_floor must be ≥ 0, not {f}"),
                ));
            }
            // at the floor is a fitted model's σ² = floor + e^θ once e^θ is below the
            // floor's last digit: `fit --save-model` writes it, so it must read back
            if h.noise_variance < f {
                return Err(Error::at(
                    at_hyper("noise_variance"),
                    format!(
                        "[hyper] noise_variance = {} must not be below noise_floor = {f}",
                        h.noise_variance
                    ),
                ));
            }
        }
        if !self.target_mean.is_finite() {
            return Err(Error::at(
                Location::key("target_mean"),
                "target_mean must be finite",
            ));
        }
        let mut all: Vec<Witness> = witnesses.to_vec();
        if let Some(names) = &self.inputs {
            all.push(Witness::new(Location::key("inputs"), "inputs", names.len()));
        }
        if let Some(s) = &self.standardize {
            let at = |key: &str| Location::key("standardize").then(key);
            all.push(Witness::new(
                at("input_center"),
                "[standardize] input_center",
                s.input_center.len(),
            ));
            all.push(Witness::new(
                at("input_scale"),
                "[standardize] input_scale",
                s.input_scale.len(),
            ));
        }
        let d = settle_dim(&all)?;
        if d == 0 {
            return Err(Error::input("the model has no input columns"));
        }
        if let Some(s) = &self.standardize {
            let at = Location::key("standardize");
            if let Some((k, v)) = (s.input_center.iter().enumerate())
                .find(|(_, v)| !v.is_finite())
                .map(|(k, v)| (("input_center", k), v))
                .or_else(|| {
                    (s.input_scale.iter().enumerate())
                        .find(|(_, v)| !(v.is_finite() && **v > 0.0))
                        .map(|(k, v)| (("input_scale", k), v))
                })
            {
                return Err(Error::at(
                    at.then(k.0),
                    format!(
                        "[standardize] {} holds {v} (value {}): centres must be finite and \
                         scales positive and finite",
                        k.0,
                        k.1 + 1
                    ),
                ));
            }
            if !(s.target_scale.is_finite() && s.target_scale > 0.0) {
                return Err(Error::at(
                    at.then("target_scale"),
                    format!(
                        "[standardize] target_scale must be positive and finite, not {}",
                        s.target_scale
                    ),
                ));
            }
        }
        Ok(d)
    }
}

/// The number of inputs the witnesses agree on: the count most of them hold (on a tie,
/// the first's); an error at the first that holds another, naming those it disagrees
/// with.
pub fn settle_dim(witnesses: &[Witness]) -> Result<usize> {
    let Some(first) = witnesses.first() else {
        return Ok(0);
    };
    let votes = |c: usize| witnesses.iter().filter(|w| w.count == c).count();
    let d = witnesses
        .iter()
        .map(|w| w.count)
        .fold(
            first.count,
            |best, c| if votes(c) > votes(best) { c } else { best },
        );
    if let Some(odd) = witnesses.iter().find(|w| w.count != d) {
        let agree: Vec<&str> = witnesses
            .iter()
            .filter(|w| w.count == d)
            .map(|w| w.what.as_str())
            .collect();
        return Err(Error::at(
            odd.at.clone(),
            format!(
                "{} has {} values but the model has {d} inputs ({} {} {d}): one value per input",
                odd.what,
                odd.count,
                agree.join(", "),
                if agree.len() == 1 { "has" } else { "have" },
            ),
        ));
    }
    Ok(d)
}
