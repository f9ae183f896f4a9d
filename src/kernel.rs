//! Kernels (docs/methods.md §0.2 and "Kernels"): the [`Kernel`] trait every method
//! computes covariances through, and [`ModelKernel`], the kernels a model file can
//! name. A kernel gives K(A, B), its diagonal, and the contraction of an adjoint of
//! K(A, B) with its derivatives — into its own parameters (as logarithms, in the order
//! of its named blocks) and into either set of points — so that every method turns
//! ∂NLML/∂K into ∂NLML/∂(kernel parameters, points) without knowing the kernel's form.
//!
//! The kernels a model file names are [`Ard`] (`ard.rs`: SE, Matérn ½, 3/2, 5/2,
//! rational quadratic, with their SIMD fills). Kernels built from parts (issue 42) are
//! the other files: parts written entry by entry ([`Form`] made a kernel by [`Part`]:
//! periodic, linear, polynomial, constant, white, spectral mixture), [`Sum`],
//! [`Product`], [`ChangePoints`], a kernel on named inputs ([`Active`]), an ARD part
//! with a label and fixed blocks ([`Labelled`]), and [`build()`], which makes a tree from
//! an expression ([`expression`]). Families that need a stationary ARD
//! kernel specifically (spectral sampling, the inter-domain closed forms, SPGP+DR's
//! projection) ask for it with [`Kernel::as_ard`] and refuse any other with a reason.

mod active;
pub mod ard;
pub mod build;
mod changepoints;
pub mod choice;
pub mod composed;
mod constant;
pub mod expression;
mod labelled;
mod linear;
mod part;
mod periodic;
mod polynomial;
mod product;
pub mod spectral;
mod spectral_mixture;
pub mod start;
pub mod stationary;
mod sum;
pub mod summands;
pub mod units;
mod white;

pub use active::Active;
pub use ard::{Ard, LENGTHSCALES, RQ_ALPHA, SIGNAL_VARIANCE, contract_ops, fill_ops};
pub use build::{Start, build, labels, paths, with_fixes};
pub use changepoints::ChangePoints;
pub use choice::{KernelChoice, KernelChoiceParser, PartSyntax};
pub use composed::ComposedKernel;
pub use constant::Constant;
pub use labelled::Labelled;
pub use linear::Linear;
pub use part::{Contraction, Form, Param, Params, Part};
pub use periodic::Periodic;
pub use polynomial::Polynomial;
pub use product::Product;
pub use spectral_mixture::SpectralMixture;
pub use start::{default_period, dominant_period, searches_periods};
pub use sum::Sum;
pub use units::{Scales, Towards, centring_note, convert, rounded};
pub use white::White;

use crate::exec::Par;
use crate::scratch::Scratch;
use clap::ValueEnum;
use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};
use spectral::SpectralDensity;

/// Which kernel a run or a model uses (`--kernel`, `[hyper] kernel`): every one ARD,
/// with σ0² and one lengthscale per input.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum KernelKind {
    /// Squared exponential, σ0² exp(−r²/2): infinitely smooth (the default).
    #[default]
    #[value(name = "se")]
    Se,
    /// Matérn ν = 1/2, σ0² exp(−r): the roughest (continuous, nowhere differentiable).
    #[value(name = "matern12")]
    Matern12,
    /// Matérn ν = 3/2, σ0² (1 + √3 r) exp(−√3 r): once differentiable.
    #[value(name = "matern32")]
    Matern32,
    /// Matérn ν = 5/2, σ0² (1 + √5 r + 5r²/3) exp(−√5 r): twice differentiable.
    #[value(name = "matern52")]
    Matern52,
    /// Rational quadratic, σ0² (1 + r²/(2α))^(−α), a scale mixture of SE kernels with
    /// a learned shape α (`[hyper] rq_alpha`; → SE as α → ∞).
    #[value(name = "rq")]
    Rq,
}

impl KernelKind {
    pub fn name(self) -> &'static str {
        match self {
            KernelKind::Se => "se",
            KernelKind::Matern12 => "matern12",
            KernelKind::Matern32 => "matern32",
            KernelKind::Matern52 => "matern52",
            KernelKind::Rq => "rq",
        }
    }

    /// Whether this is the squared exponential (what absent keys mean).
    pub fn is_se(&self) -> bool {
        *self == KernelKind::Se
    }

    /// The Matérn smoothness ν, for the Matérn kernels.
    pub fn matern_nu(self) -> Option<f64> {
        match self {
            KernelKind::Matern12 => Some(0.5),
            KernelKind::Matern32 => Some(1.5),
            KernelKind::Matern52 => Some(2.5),
            KernelKind::Se | KernelKind::Rq => None,
        }
    }

    /// How many shape parameters the kernel has beyond σ0² and ℓ (rq: α).
    pub fn shape_len(self) -> usize {
        usize::from(self == KernelKind::Rq)
    }
}

impl std::fmt::Display for KernelKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// rq's shape α where a run starts (GPflow's and GPyTorch's default).
pub const DEFAULT_RQ_ALPHA: f64 = 1.0;

/// One named parameter block of a kernel and its values (physical units).
#[derive(Clone, Debug, PartialEq)]
pub struct KernelBlock {
    /// Its name in `--fix` and the parameter layout (`signal_variance`, `lengthscales`;
    /// a part of a composed kernel's as `label.name`, e.g. `periodic.period`).
    pub name: String,
    pub values: Vec<f64>,
}

impl KernelBlock {
    pub fn new(name: impl Into<String>, values: Vec<f64>) -> KernelBlock {
        KernelBlock {
            name: name.into(),
            values,
        }
    }
}

/// ∂NLML with respect to the kernel's parameters and both sets of points, given the
/// adjoint of K(A, B). Gradients of points are skipped when not asked for.
#[derive(Clone, Debug)]
pub struct KernelGrad {
    /// ∂/∂ each parameter in the optimiser's coordinates ([`Kernel::set_log_params`]),
    /// in the order of the kernel's blocks ([`Kernel::blocks`]: for [`Ard`] log σ0²,
    /// log ℓ_1..ℓ_D, rq's log α).
    pub params: Vec<f64>,
    /// ∂/∂A (rows of A), if asked.
    pub a: Option<DMatrix<f64>>,
    /// ∂/∂B, if asked.
    pub b: Option<DMatrix<f64>>,
}

impl KernelGrad {
    /// Give the gradient's memory back.
    pub fn recycle(self, scratch: &Scratch) {
        scratch.give(self.params);
        for m in [self.a, self.b].into_iter().flatten() {
            scratch.give_matrix(m);
        }
    }
}

/// A covariance function k(x, x') with its parameters. Object safe: methods hold a
/// `&dyn Kernel` and never its form. Points are the rows of A and B.
pub trait Kernel: Send + Sync + std::fmt::Debug {
    /// Its name (`--kernel`'s value for the kernels a model file names).
    fn name(&self) -> &'static str;
    /// The number of inputs it reads.
    fn dim(&self) -> usize;
    /// Its parameter blocks with their values, in the order of [`KernelGrad::params`].
    fn blocks(&self) -> Vec<KernelBlock>;
    /// The number of its parameters (the blocks' lengths together).
    fn params_len(&self) -> usize;
    /// Set its parameters from the optimiser's coordinates, in the order of its blocks:
    /// the logarithm of every positive parameter (all of [`Ard`]'s), the value itself
    /// of an unconstrained one (a change point's location).
    fn set_log_params(&mut self, theta: &[f64]);
    /// Its parameters in the optimiser's coordinates (what [`Kernel::set_log_params`]
    /// reads); by default the logarithms of its blocks' values, all positive.
    fn log_params(&self) -> Vec<f64> {
        self.blocks()
            .iter()
            .flat_map(|b| b.values.iter().map(|v| v.ln()))
            .collect()
    }
    /// Set block `name`'s values (physical units) exactly; false if it has no such
    /// block. Composed kernels hold fixed blocks through it.
    fn set_block(&mut self, _name: &str, _values: &[f64]) -> bool {
        false
    }
    /// Copy block `name`'s values from `from` (a kernel of the same form) exactly: a
    /// fixed block is held at its value, not at exp(log v).
    fn hold_block(&mut self, from: &dyn Kernel, name: &str);
    /// K(A, B) (`a.nrows() × b.nrows()`) in memory from `scratch`; every entry is
    /// written once (the buffer is not zeroed first).
    fn matrix_in(
        &self,
        a: &DMatrix<f64>,
        b: &DMatrix<f64>,
        par: Par,
        scratch: &Scratch,
    ) -> DMatrix<f64>;
    /// The prior variances k(x_i, x_i) of the rows of `x`, in memory from `scratch`.
    fn diag_in(&self, x: &DMatrix<f64>, scratch: &Scratch) -> Vec<f64>;
    /// Add Σ_i adj_i ∂k(x_i, x_i)/∂(log parameters) into `out` (its parameters' slice).
    fn diag_grad(&self, x: &DMatrix<f64>, adj: &[f64], out: &mut [f64]);
    /// The prior variance k(x, x) where it is the same at every x (a stationary
    /// kernel's), else None.
    fn prior_variance(&self) -> Option<f64>;
    /// Add `d` × ∂ log(prior variance)/∂(log parameters) into `out`: the gradient of
    /// what scales with the prior variance (the automatic jitter), given its gradient
    /// `d` in the log prior variance.
    fn log_prior_variance_grad(&self, d: f64, out: &mut [f64]);
    /// Contract the adjoint `adj` of K(A, B) (`k`, same shape) with ∂K/∂(parameters,
    /// A, B), the points' gradients only where asked; memory from `scratch` (give it
    /// back with [`KernelGrad::recycle`]).
    #[allow(clippy::too_many_arguments)] // a BLAS-like call: operands, flags, threads, memory
    fn grad_in(
        &self,
        a: &DMatrix<f64>,
        b: &DMatrix<f64>,
        k: &DMatrix<f64>,
        adj: &DMatrix<f64>,
        want_a: bool,
        want_b: bool,
        par: Par,
        scratch: &Scratch,
    ) -> KernelGrad;
    /// Whether [`Kernel::grad_in`] reads its `k` (K(A, B)). A composed kernel that
    /// contracts a part's adjoint fills that part's K(A, B) only for a part that reads
    /// it; one that does not is handed an empty matrix.
    fn grad_reads_matrix(&self) -> bool {
        true
    }
    /// Whether k(x, x') depends on x − x' only.
    fn is_stationary(&self) -> bool;
    /// Its normalised spectral density as a sampler, where it has one the spectral
    /// families can draw from.
    fn spectral(&self) -> Option<SpectralDensity> {
        None
    }
    /// The kernel as a stationary ARD kernel, for the families whose closed forms need
    /// one (None for any other).
    fn as_ard(&self) -> Option<&Ard> {
        None
    }
    /// The kernel as an expression with its values (what a model file stores), where
    /// it is one the syntax can write.
    fn to_expr(&self) -> Option<expression::KernelExpr> {
        None
    }
    /// A copy on the heap.
    fn clone_box(&self) -> Box<dyn Kernel>;

    /// K(A, B).
    fn matrix(&self, a: &DMatrix<f64>, b: &DMatrix<f64>, par: Par) -> DMatrix<f64> {
        self.matrix_in(a, b, par, &Scratch::default())
    }
    /// K(A, A).
    fn gram(&self, a: &DMatrix<f64>, par: Par) -> DMatrix<f64> {
        self.matrix(a, a, par)
    }
    /// The prior variances of the rows of `x`.
    fn diag(&self, x: &DMatrix<f64>) -> Vec<f64> {
        self.diag_in(x, &Scratch::default())
    }
    /// [`Kernel::grad_in`] in fresh memory.
    #[allow(clippy::too_many_arguments)] // a BLAS-like call: operands, flags, threads
    fn grad(
        &self,
        a: &DMatrix<f64>,
        b: &DMatrix<f64>,
        k: &DMatrix<f64>,
        adj: &DMatrix<f64>,
        want_a: bool,
        want_b: bool,
        par: Par,
    ) -> KernelGrad {
        self.grad_in(a, b, k, adj, want_a, want_b, par, &Scratch::default())
    }
}

impl Clone for Box<dyn Kernel> {
    fn clone(&self) -> Box<dyn Kernel> {
        self.clone_box()
    }
}

/// The kernels a model file can name (`[hyper] kernel`), one variant per implementor:
/// the registry. Built by [`ModelKernel::new`], the one constructor of a model's kernel
/// (`Hyper::kernel` calls it); used as a `&dyn Kernel` (it derefs to one), with no
/// allocation beyond the parameters' own.
#[derive(Clone, Debug)]
pub enum ModelKernel {
    /// se, matern12, matern32, matern52, rq.
    Ard(Ard),
    /// A kernel built in code, which no model file names: one a library user or a test
    /// defines, fitted through a family's typed state (`pseudo::PseudoState::new`).
    Code(Box<dyn Kernel>),
}

impl ModelKernel {
    /// The kernel `kind` with σ0², ℓ and (rq) α.
    pub fn new(
        kind: KernelKind,
        signal_variance: f64,
        lengthscales: Vec<f64>,
        rq_alpha: f64,
    ) -> ModelKernel {
        match kind {
            KernelKind::Se
            | KernelKind::Matern12
            | KernelKind::Matern32
            | KernelKind::Matern52
            | KernelKind::Rq => {
                ModelKernel::Ard(Ard::new(kind, signal_variance, lengthscales, rq_alpha))
            }
        }
    }

    /// Give the parameters' memory back (a kernel built with them from `scratch`).
    pub fn recycle(self, scratch: &Scratch) {
        match self {
            ModelKernel::Ard(k) => scratch.give(k.lengthscales),
            ModelKernel::Code(_) => {}
        }
    }

    /// The kernel on the heap, for holders of any kernel.
    pub fn boxed(self) -> Box<dyn Kernel> {
        match self {
            ModelKernel::Ard(k) => Box::new(k),
            ModelKernel::Code(k) => k,
        }
    }
}

impl std::ops::Deref for ModelKernel {
    type Target = dyn Kernel;
    fn deref(&self) -> &(dyn Kernel + 'static) {
        match self {
            ModelKernel::Ard(k) => k,
            ModelKernel::Code(k) => &**k,
        }
    }
}

impl std::ops::DerefMut for ModelKernel {
    fn deref_mut(&mut self) -> &mut (dyn Kernel + 'static) {
        match self {
            ModelKernel::Ard(k) => k,
            ModelKernel::Code(k) => &mut **k,
        }
    }
}

impl From<Box<dyn Kernel>> for ModelKernel {
    fn from(k: Box<dyn Kernel>) -> ModelKernel {
        ModelKernel::Code(k)
    }
}

impl From<Ard> for ModelKernel {
    fn from(k: Ard) -> ModelKernel {
        ModelKernel::Ard(k)
    }
}
