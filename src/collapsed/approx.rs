//! The approximations the core evaluates (docs/methods.md §1): how Λ weighs the
//! diagonal the low-rank part misses, and the extra term some add to the objective.

use crate::error::{Error, Result};

/// How the model treats the diagonal `d = diag(Kff − Qff)` that the low-rank part
/// misses: Λ = a·diag(d) + σ²I, plus a term Σ e(d_i) added to the objective.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Approx {
    /// a = 1, e = 0: SPGP and the inter-domain GPs (Snelson & Ghahramani 2006).
    Fitc,
    /// a = 0, e = 0: the projected-process evidence; SSGP, EigenGP, greedy selection.
    Dtc,
    /// a = 0, e(d) = d/(2σ²): the negative collapsed ELBO of Titsias (2009).
    Vfe,
    /// a = α, e(d) = (1−α)/(2α)·log(1 + α d/σ²): power EP (Bui, Yan & Turner 2017),
    /// FITC at α = 1 and VFE as α → 0.
    Pep { alpha: f64 },
}

impl Approx {
    /// Whether the objective depends on d at all (everything but DTC).
    pub fn uses_diagonal(self) -> bool {
        self != Approx::Dtc
    }

    /// a in Λ = a·diag(d) + σ²I.
    pub(super) fn weight(self) -> f64 {
        match self {
            Approx::Fitc => 1.0,
            Approx::Dtc | Approx::Vfe => 0.0,
            Approx::Pep { alpha } => alpha,
        }
    }

    /// Whether Λ differs from point to point (FITC, power EP). Otherwise Λ = σ²I (DTC,
    /// VFE), and the second pass needs neither V nor the per-point v_iᵀA⁻¹v_i: it works
    /// from Kuf alone ([`Backward::chunk`](super::second_pass::Backward::chunk)).
    pub fn per_point_lambda(self) -> bool {
        self.weight() > 0.0
    }

    /// Whether there is an extra term e(d_i) (VFE, power EP), so that d is kept per
    /// point and ∂/∂d differs from the per-point ∂/∂σ².
    pub(super) fn has_extra(self) -> bool {
        matches!(self, Approx::Vfe | Approx::Pep { .. })
    }

    /// e(d_i), ∂e/∂d_i and ∂e/∂σ² of the extra term.
    #[inline]
    pub(super) fn extra(self, d: f64, s2: f64) -> (f64, f64, f64) {
        match self {
            Approx::Fitc | Approx::Dtc => (0.0, 0.0, 0.0),
            Approx::Vfe => (0.5 * d / s2, 0.5 / s2, -0.5 * d / (s2 * s2)),
            Approx::Pep { alpha } => {
                let c = 1.0 - alpha;
                let denom = s2 + alpha * d;
                (
                    0.5 * c / alpha * (alpha * d / s2).ln_1p(),
                    0.5 * c / denom,
                    -0.5 * c * d / (s2 * denom),
                )
            }
        }
    }

    /// What the objective is called (VFE minimises a bound, not the NLML).
    pub fn objective_name(self) -> &'static str {
        match self {
            Approx::Fitc | Approx::Dtc => "NLML",
            Approx::Vfe => "negative ELBO",
            Approx::Pep { .. } => "negative power-EP energy",
        }
    }

    /// Check α of power EP.
    pub fn check(self) -> Result<Approx> {
        match self {
            Approx::Pep { alpha } if !(alpha > 0.0 && alpha <= 1.0) => Err(Error::input(format!(
                "power EP needs 0 < alpha ≤ 1, not {alpha} (alpha = 1 is FITC, alpha → 0 is VFE)"
            ))),
            a => Ok(a),
        }
    }
}
