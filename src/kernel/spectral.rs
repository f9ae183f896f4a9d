//! The kernels' spectral densities, for the spectral-point families (docs/methods.md §4
//! and "Kernels"): a stationary kernel with unit lengthscales is `σ0² E[cos(sᵀ(x − x'))]`
//! over s drawn from its normalised spectral density. The SE kernel's is N(0, I); a
//! Matérn-ν kernel's is the multivariate Student-t with 2ν degrees of freedom,
//! `s = z · √(2ν/c)` with z ~ N(0, I) and c ~ χ²(2ν). rq's (a scale mixture of
//! Gaussians over a Gamma-distributed precision) is not offered: no closed-form
//! quantile to map fixed points through.

use super::KernelKind;
use rand::Rng;
use rand_distr::{ChiSquared, Distribution};
use statrs::distribution::{ChiSquared as ChiSquaredCdf, ContinuousCDF};

/// A kernel's normalised spectral density with unit lengthscales, as a sampler: a
/// draw is a standard normal vector times a radial factor ([`Kernel::spectral`](super::Kernel::spectral)).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SpectralDensity {
    /// The SE kernel's N(0, I): the factor is 1.
    Gaussian,
    /// A Matérn-ν kernel's multivariate Student-t with 2ν degrees of freedom.
    StudentT { nu: f64 },
}

impl SpectralDensity {
    /// The density of an ARD kernel of kind `kind`, None for rq.
    pub fn of(kind: KernelKind) -> Option<SpectralDensity> {
        match kind {
            KernelKind::Se => Some(SpectralDensity::Gaussian),
            KernelKind::Rq => None,
            _ => kind.matern_nu().map(|nu| SpectralDensity::StudentT { nu }),
        }
    }

    /// The radial factor from a uniform `h` in (0, 1) (its χ² quantile): 1 for the
    /// Gaussian, √(2ν / F⁻¹_{χ²(2ν)}(h)) for the Student-t.
    pub fn radial_factor(self, h: f64) -> Option<f64> {
        match self {
            SpectralDensity::Gaussian => Some(1.0),
            SpectralDensity::StudentT { nu } => {
                let chi = ChiSquaredCdf::new(2.0 * nu).ok()?;
                Some((2.0 * nu / chi.inverse_cdf(h)).sqrt())
            }
        }
    }

    /// The same factor from a random draw of χ²(2ν) (1 for the Gaussian).
    pub fn draw_radial_factor<R: Rng + ?Sized>(self, rng: &mut R) -> Option<f64> {
        match self {
            SpectralDensity::Gaussian => Some(1.0),
            SpectralDensity::StudentT { nu } => {
                let c: f64 = ChiSquared::new(2.0 * nu).ok()?.sample(rng);
                Some((2.0 * nu / c).sqrt())
            }
        }
    }
}

/// Why a spectral-point method cannot use `kind`, if it cannot.
pub fn refusal(kind: KernelKind) -> Option<String> {
    (kind == KernelKind::Rq).then(|| {
        "the spectral-point methods sample the kernel's spectral density, and rq's (a \
         Gamma mixture of Gaussians) has no closed-form quantile to map fixed points \
         through; use --kernel se or a matern kernel, or an inducing-point method with rq"
            .to_string()
    })
}
