//! The feature family svgp's q(u) is over (docs/methods.md §8.6): pseudo-inputs, svgp's
//! own (Kub from the model's kernel at Z, the code in `elbo.rs` and `sums.rs`), or a
//! low-rank [`Family`] — inter-domain or spectral — through [`SvgpFamily`], which asks
//! the family for Kuf, Kuu and the prior diagonal and pulls svgp's adjoints of them back
//! into its parameters with the family's own `pull_back`, as the collapsed core's are.
//! The ELBO is then the one of `elbo.rs` whatever the family.
//!
//! Which families: those whose parameters a gradient moves (fifgp, tfifgp, smgp, psds,
//! ssgp). The spectral families are degenerate — u are the weights of 2r trigonometric
//! features, f = Kfu Kuu⁻¹ u exactly, so the model is the sparse-spectrum GP and the
//! bound is its own, not a bound on the SE kernel's evidence — and svgp then takes the
//! prior variance of f_i as q_ii = ‖L⁻¹k_i‖², as the core does (`Family::degenerate`).

use crate::collapsed::Adjoints;
use crate::data::TrainData;
use crate::error::{Error, Location, Result};
use crate::exec::Exec;
use crate::kernel::KernelKind;
use crate::linalg::Jitter;
use crate::methods::interdomain;
use crate::methods::lowrank::{Family, KuuMatrix, LowRankMethod};
use crate::methods::method::{Markers, ValidRunSpec};
use crate::methods::spectrum;
use crate::model_file::{Hyper, ModelFile, ModelTable, Witness};
use crate::run_context::RunContext;
use crate::run_spec::SvgpFeatures;
use nalgebra::DMatrix;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// `[svgp_features] family = "fifgp"`: the family of a model over other features than
/// pseudo-inputs (absent: pseudo-inputs, `[inducing]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FeaturesTable {
    pub family: SvgpFeatures,
}

impl ModelTable for FeaturesTable {
    const NAME: &'static str = "svgp_features";
}

/// A low-rank family as svgp uses it: its parameters in the model's tables, Kuu, Kuf
/// and the prior diagonal at some inputs, and the pull-back of their adjoints.
pub trait SvgpFamily: Send + Sync {
    /// The name `--family` gives it.
    fn name(&self) -> &'static str;
    /// A model with the family's starting tables for `spec.m` (and the hyperparameters).
    fn init(
        &self,
        data: &TrainData,
        spec: &ValidRunSpec,
        hyper: Hyper,
        ctx: &RunContext,
        rng: &mut ChaCha8Rng,
    ) -> Result<ModelFile>;
    /// Its tables for the model's composed kernel, once the kernel is set.
    fn init_for_kernel(
        &self,
        model: &mut ModelFile,
        spec: &ValidRunSpec,
        rng: &mut ChaCha8Rng,
    ) -> Result<()>;
    /// The family's tables checked: the number of features m.
    fn check(&self, model: &ModelFile) -> Result<usize>;
    /// [the shared head, then the family's own parameters] (the family's `pack`).
    fn pack(&self, model: &ModelFile) -> Vec<f64>;
    fn unpack(&self, theta: &[f64], model: &mut ModelFile);
    /// Kuu (dense; a diagonal one on its diagonal) and its jitter policy.
    fn kuu(&self, model: &ModelFile, exec: &Exec) -> Result<(DMatrix<f64>, Jitter)>;
    /// Kuf (m×n) and the prior variances k(x_i, x_i) at inputs `x` (n×D).
    fn kuf(
        &self,
        model: &ModelFile,
        x: &DMatrix<f64>,
        exec: &Exec,
    ) -> Result<(DMatrix<f64>, Vec<f64>)>;
    /// The gradient in [`SvgpFamily::pack`]'s order of a function whose adjoints are
    /// `d_kuf` (at inputs `x`), `d_kdiag` (empty: none), `d_kuu` (symmetric; None: zero),
    /// `d_noise`, with `jitter` the absolute jitter added to Kuu.
    #[allow(clippy::too_many_arguments)] // the adjoints of each part
    fn pull_back(
        &self,
        model: &ModelFile,
        x: &DMatrix<f64>,
        d_kuf: DMatrix<f64>,
        d_kdiag: Vec<f64>,
        d_kuu: Option<DMatrix<f64>>,
        d_noise: f64,
        jitter: f64,
        exec: &Exec,
    ) -> Result<Vec<f64>>;
    /// Whether f = Kfu Kuu⁻¹ u exactly (the prior variance is q_ii).
    fn degenerate(&self) -> bool;
    /// Summand j's Cov(u, f_j(x)) and prior variances at `x`, as the family's own method
    /// splits them ([`crate::methods::Method::summand_cross`]): `one` is `model` with
    /// summand j alone as its kernel. An error if the family's features are not kernel
    /// values a summand can be read from.
    fn summand_cross(
        &self,
        model: &ModelFile,
        one: &ModelFile,
        summand: usize,
        x: &DMatrix<f64>,
        exec: &Exec,
    ) -> Result<(DMatrix<f64>, Vec<f64>)>;
    /// Its model tables.
    fn tables(&self) -> &'static [&'static str];
    fn input_dims(&self, model: &ModelFile) -> Vec<Witness>;
    fn markers(&self, model: &ModelFile, input: usize) -> Result<Markers>;
    fn refuses_kernel(&self, kind: KernelKind) -> Option<String>;
    fn takes_composed_kernel(&self) -> bool;
    fn prior_cov(&self, model: &ModelFile, x: &DMatrix<f64>, exec: &Exec) -> Option<DMatrix<f64>>;
    fn init_uses_seed(&self, options: &crate::run_spec::MethodOptions) -> bool;
}

/// No inputs (0×D): where a family builds Kuu alone and pulls Kuu's adjoint back.
fn no_rows(model: &ModelFile) -> DMatrix<f64> {
    DMatrix::zeros(0, model.kernel_dim())
}

impl<F: Family> SvgpFamily for LowRankMethod<F> {
    fn name(&self) -> &'static str {
        self.name
    }
    fn init(
        &self,
        data: &TrainData,
        spec: &ValidRunSpec,
        hyper: Hyper,
        ctx: &RunContext,
        rng: &mut ChaCha8Rng,
    ) -> Result<ModelFile> {
        self.family.init(data, spec, hyper, ctx, rng)
    }
    fn init_for_kernel(
        &self,
        model: &mut ModelFile,
        spec: &ValidRunSpec,
        rng: &mut ChaCha8Rng,
    ) -> Result<()> {
        self.family.init_for_kernel(model, spec, rng)
    }
    fn check(&self, model: &ModelFile) -> Result<usize> {
        self.family.check(model)
    }
    fn pack(&self, model: &ModelFile) -> Vec<f64> {
        self.family.pack(model)
    }
    fn unpack(&self, theta: &[f64], model: &mut ModelFile) {
        self.family.unpack(theta, model)
    }
    fn kuu(&self, model: &ModelFile, exec: &Exec) -> Result<(DMatrix<f64>, Jitter)> {
        let state = self.family.state(model, &exec.scratch)?;
        let out = self.family.parts(&state, &no_rows(model), false, exec);
        self.family.recycle_state(state, &exec.scratch);
        let (parts, extra) = out?;
        self.family.recycle(extra, &exec.scratch);
        let kuu = match parts.kuu {
            KuuMatrix::Dense(k) => k,
            KuuMatrix::Diagonal(k) => DMatrix::from_diagonal(&k.into()),
        };
        Ok((kuu, parts.jitter))
    }
    fn kuf(
        &self,
        model: &ModelFile,
        x: &DMatrix<f64>,
        exec: &Exec,
    ) -> Result<(DMatrix<f64>, Vec<f64>)> {
        let state = self.family.state(model, &exec.scratch)?;
        let out = self.family.parts(&state, x, false, exec);
        self.family.recycle_state(state, &exec.scratch);
        let (parts, extra) = out?;
        self.family.recycle(extra, &exec.scratch);
        Ok((parts.kuf, parts.kdiag))
    }
    fn pull_back(
        &self,
        model: &ModelFile,
        x: &DMatrix<f64>,
        d_kuf: DMatrix<f64>,
        d_kdiag: Vec<f64>,
        d_kuu: Option<DMatrix<f64>>,
        d_noise: f64,
        jitter: f64,
        exec: &Exec,
    ) -> Result<Vec<f64>> {
        let state = self.family.state(model, &exec.scratch)?;
        // the family's extras (sines beside cosines, …) come with its parts
        let out = self
            .family
            .parts(&state, x, true, exec)
            .and_then(|(parts, extra)| {
                let m = parts.kuf.nrows();
                let adj = Adjoints {
                    nlml: 0.0,
                    jitter,
                    d_kuf,
                    d_kuu: d_kuu.unwrap_or_else(|| DMatrix::zeros(m, m)),
                    d_kdiag,
                    d_noise,
                };
                self.family.pull_back(&state, x, &parts, extra, &adj, exec)
            });
        self.family.recycle_state(state, &exec.scratch);
        out
    }
    fn degenerate(&self) -> bool {
        self.family.degenerate()
    }
    fn summand_cross(
        &self,
        model: &ModelFile,
        one: &ModelFile,
        summand: usize,
        x: &DMatrix<f64>,
        exec: &Exec,
    ) -> Result<(DMatrix<f64>, Vec<f64>)> {
        if !self.family.predicts_summands() {
            return Err(Error::input(format!(
                "svgp over {} features has no posterior over values of the kernel to split \
                 into the summands' posteriors",
                self.name
            )));
        }
        match self.family.summand_cross(model, summand, x, exec) {
            Some(r) => r,
            None => self.kuf(one, x, exec),
        }
    }
    fn tables(&self) -> &'static [&'static str] {
        self.family.tables()
    }
    fn input_dims(&self, model: &ModelFile) -> Vec<Witness> {
        self.family.input_dims(model)
    }
    fn markers(&self, model: &ModelFile, input: usize) -> Result<Markers> {
        self.family.markers(model, input)
    }
    fn refuses_kernel(&self, kind: KernelKind) -> Option<String> {
        self.family.refuses_kernel(kind)
    }
    fn takes_composed_kernel(&self) -> bool {
        self.family.takes_composed_kernel()
    }
    fn prior_cov(&self, model: &ModelFile, x: &DMatrix<f64>, exec: &Exec) -> Option<DMatrix<f64>> {
        self.family.prior_cov(model, x, exec)
    }
    fn init_uses_seed(&self, options: &crate::run_spec::MethodOptions) -> bool {
        self.family.init_uses_seed(options)
    }
}

/// The family `--family` names; None for pseudo-inputs (svgp's own).
pub fn family(kind: SvgpFeatures) -> Option<&'static dyn SvgpFamily> {
    match kind {
        SvgpFeatures::Pseudo => None,
        SvgpFeatures::Fifgp => Some(&interdomain::FIFGP),
        SvgpFeatures::Tfifgp => Some(&interdomain::TFIFGP),
        SvgpFeatures::Smgp => Some(&interdomain::SMGP),
        SvgpFeatures::Psds => Some(&spectrum::PSDS),
        SvgpFeatures::Ssgp => Some(&spectrum::SSGP),
    }
}

/// The family of a model (`[svgp_features]`); None for pseudo-inputs.
pub fn of_model(model: &ModelFile) -> Result<Option<&'static dyn SvgpFamily>> {
    Ok(model
        .table::<FeaturesTable>()?
        .and_then(|t| family(t.family)))
}

/// Every table a model over some family may hold (svgp's `model_tables`).
pub const FAMILY_TABLES: &[&str] = &[
    FeaturesTable::NAME,
    interdomain::InputMean::NAME,
    interdomain::Features::NAME,
    spectrum::Spectral::NAME,
    spectrum::composed::SpectralTerms::NAME,
];

/// Why a model's family cannot take its kernel, as an error naming the table.
pub fn check_kernel(f: &dyn SvgpFamily, model: &ModelFile) -> Result<()> {
    let at = || Location::key(FeaturesTable::NAME);
    if model.composed.is_some() && !f.takes_composed_kernel() {
        return Err(Error::at(
            at(),
            format!(
                "svgp over {} features takes a plain kernel, not one built from parts",
                f.name()
            ),
        ));
    }
    if let Some(why) = f.refuses_kernel(model.hyper.kernel) {
        return Err(Error::at(at(), format!("svgp over {}: {why}", f.name())));
    }
    Ok(())
}
