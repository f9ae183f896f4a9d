//! The Nyström baselines of the EigenGP paper (docs/methods.md §5): Williams & Seeger's
//! predictor with the exact cross-covariance against all n training points and the
//! low-rank training covariance `K̃ = K_XB K_BB⁻¹ K_BX`:
//! `mean = k*ᵀ (K̃ + σ²I)⁻¹ y`, `var_f = k** − k*ᵀ (K̃ + σ²I)⁻¹ k*` (Woodbury with
//! `A = σ² K_BB + K_BX K_XB`). Nothing keeps var_f ≥ 0 — or even var_f + σ² ≥ 0: the
//! predictions are returned as computed, `Predictor::score` counts the negative ones,
//! and only MNLP clamps them (to σ², i.e. var_f to 0).
//!
//! - `nystrom`: σ0², ℓ, σ² of a full GP fitted on a random subset
//!   (`--init-lengthscales-from-subset N`, default min(n, 2000)), B by k-means; no fit.
//! - `nystrom-opt` (the paper's Nyström*): B, σ0², ℓ, σ² by maximising the DTC evidence
//!   `N(y | 0, K̃ + σ²I)` from k-means B — the core's DTC at the basis read as the
//!   pseudo-input family's typed state ([`basis_state`]), through the L-BFGS fit too.
//!
//! Like the exact GP, prediction needs the training inputs (`stores_posterior() =
//! false`): the posterior kept is O(n) (α = (K̃ + σ²I)⁻¹y) plus the M×M A⁻¹; test points
//! are handled in blocks so no n×t matrix larger than n×[`BLOCK`] is formed.

use super::eigen::{Basis, basis_dims, basis_markers, basis_points, basis_state, set_basis_points};
use super::hyper::{self, default_hyper, pack_hyper_and, unpack_hyper_and};
use super::lowrank::{Family, LowRankMethod};
use super::method::{Markers, Method, Objective, TypedModel, ValidRunSpec};
use super::pseudo::{self, PLAIN, PseudoInputs};
use super::{exact, kmeans};
use crate::collapsed::{Approx, LatentPrior, Posterior};
use crate::data::TrainData;
use crate::error::{Error, Result};
use crate::exec::Exec;
use crate::linalg;
use crate::model_file::{Hyper, ModelFile, ModelTable, Witness};
use crate::optim::Outcome;
use crate::params::TailBlock;
use crate::run_context::{Phase, RunContext};
use crate::scratch::Scratch;
use nalgebra::{DMatrix, DVector};
use rand_chacha::ChaCha8Rng;
use std::borrow::Cow;

/// Test points predicted per block (n×BLOCK cross-covariances at a time).
const BLOCK: usize = 256;

/// Subset size of nystrom's full GP when `--init-lengthscales-from-subset` is not given.
pub const DEFAULT_SUBSET: usize = 2000;

pub struct Nystrom {
    /// nystrom-opt: learn B and the hyperparameters by the DTC evidence.
    pub optimise: bool,
}

pub const NYSTROM: Nystrom = Nystrom { optimise: false };
pub const NYSTROM_OPT: Nystrom = Nystrom { optimise: true };

/// What evaluates nystrom-opt's objective: the pseudo-input family with DTC, at the
/// basis points as its state ([`basis_state`]).
const EVIDENCE: &LowRankMethod<PseudoInputs> = &pseudo::DTC;

impl Method for Nystrom {
    fn second_start(&self, _options: &crate::run_spec::MethodOptions) -> bool {
        self.optimise
    }
    fn fits_by_lbfgs(&self, _options: &crate::run_spec::MethodOptions) -> bool {
        self.optimise
    }
    /// K_BB, K_BX and the prior diagonal come from the model's `dyn Kernel`, and
    /// nystrom-opt's evidence is dtc's: any kernel.
    fn takes_composed_kernel(&self) -> bool {
        true
    }
    fn tail_blocks(&self) -> &'static [TailBlock] {
        &[TailBlock {
            name: "basis_points",
            transform: crate::params::Transform::Identity,
            len: None,
            holds: crate::params::Holds::ByTransform,
        }]
    }
    fn seed_help(&self) -> &'static str {
        "the basis points are k-means centres from a seeded start (nystrom also fits its \
         hyperparameters on a random subset)"
    }

    fn name(&self) -> &'static str {
        if self.optimise {
            "nystrom-opt"
        } else {
            "nystrom"
        }
    }
    fn summary(&self) -> &'static str {
        if self.optimise {
            "Nyström*: B, σ0², ℓ, σ² by the DTC evidence, Williams–Seeger predictor \
             (variances can be negative; MNLP clamps them)"
        } else {
            "Nyström (Williams & Seeger 2001): a full GP's σ0², ℓ, σ² on a subset \
             (--init-lengthscales-from-subset, default min(n, 2000)), k-means B, no fit \
             (variances can be negative; MNLP clamps them)"
        }
    }
    fn m_meaning(&self) -> &'static str {
        "basis points"
    }
    fn stores_posterior(&self) -> bool {
        false
    }
    fn chunked(&self) -> std::result::Result<(), &'static str> {
        Err(
            "the Williams–Seeger predictor is expressed in all n training inputs (no m×m \
             posterior), so only its DTC objective goes through the chunked core",
        )
    }

    fn init(
        &self,
        data: &TrainData,
        spec: &ValidRunSpec,
        hyper: Hyper,
        ctx: &RunContext,
        rng: &mut ChaCha8Rng,
    ) -> Result<ModelFile> {
        // `hyper` is already a subset fit when the option asked for one, or the run's
        // own start; Nyström without optimisation otherwise takes its hyperparameters
        // from a subset fit
        let hyper = if self.optimise
            || spec.options.init_lengthscales_from_subset.is_some()
            || spec.options.given_start()
        {
            hyper
        } else {
            let n = data.y.len();
            let n_sub = spec
                .options
                .init_lengthscales_from_subset
                .unwrap_or(n.min(DEFAULT_SUBSET));
            ctx.enter(Phase::SubsetInit);
            exact::hyper_from_subset(
                data,
                n_sub,
                hyper.kernel,
                spec.iters,
                spec.options.lengthscale_start(),
                &crate::params::Pins::none(), // nystrom refuses --fix
                ctx,
                rng,
            )?
        };
        let b = kmeans::centres(&data.x, spec.m, rng)?;
        let mut model = ModelFile::new(self.name(), hyper);
        set_basis_points(&mut model, &b);
        Ok(model)
    }

    fn check(&self, model: &ModelFile) -> Result<()> {
        basis_points(model).map(|_| ())
    }

    fn model_tables(&self) -> &'static [&'static str] {
        &[Basis::NAME]
    }

    fn input_dims(&self, model: &ModelFile) -> Vec<Witness> {
        basis_dims(model)
    }

    fn markers(&self, model: &ModelFile, input: usize) -> Result<Markers> {
        basis_markers(model, input)
    }

    /// θ = [the shared blocks, B (M×D, column-major)]: the pseudo-input family's order
    /// with B as its inputs, which the typed state unpacks into.
    fn pack(&self, model: &ModelFile) -> Vec<f64> {
        pack_hyper_and(model, basis_points(model).ok())
    }

    fn unpack(&self, theta: &[f64], model: &mut ModelFile) {
        let b = unpack_hyper_and(theta, model);
        set_basis_points(model, &b);
    }

    /// The DTC evidence of K̃ + σ²I (the paper's Nyström* objective).
    fn objective(&self, model: &ModelFile, data: &TrainData, exec: &Exec) -> Result<Objective> {
        let mut grad = Vec::new();
        let (nlml, jitter) = self.objective_into(model, data, exec, &mut grad)?;
        Ok(Objective { nlml, grad, jitter })
    }

    fn objective_into(
        &self,
        model: &ModelFile,
        data: &TrainData,
        exec: &Exec,
        grad: &mut Vec<f64>,
    ) -> Result<(f64, f64)> {
        let s = &exec.scratch;
        let state = basis_state(model, s)?;
        let out = EVIDENCE.objective_of(&state, data, Approx::Dtc, None, exec, grad);
        PLAIN.recycle_state(Cow::Owned(state), s);
        out
    }

    /// nystrom-opt's fit unpacks θ into the basis state, never into a model file.
    fn typed_fit<'a>(&'a self, model: &ModelFile) -> Option<Box<dyn TypedModel + 'a>> {
        let state = basis_state(model, &Scratch::default()).ok()?;
        Some(EVIDENCE.typed_from(state, Approx::Dtc))
    }

    fn nlml(&self, model: &ModelFile, data: &TrainData, exec: &Exec) -> Result<f64> {
        let state = basis_state(model, &exec.scratch)?;
        EVIDENCE.nlml_of(&state, data, Approx::Dtc, exec)
    }

    /// α = (K̃ + σ²I)⁻¹ y = (y − K_XB A⁻¹ K_BX y)/σ² (n) and A⁻¹ (M×M); the basis of
    /// the prediction is the training inputs.
    fn posterior(
        &self,
        model: &ModelFile,
        data: &TrainData,
        exec: &Exec,
    ) -> Result<(Posterior, Option<DMatrix<f64>>)> {
        exec.check()?;
        let b = basis_points(model)?;
        let k = model.kernel();
        let s2 = model.collapsed_noise()?;
        let kbx = k.matrix(&b, &data.x, exec.par);
        let kbb = k.gram(&b, exec.par);
        let (_, jitter) = linalg::cholesky_jittered(&kbb, model.jitter_policy(), exec.par)?;
        let mut a = linalg::mul(&kbx, false, &kbx, true, exec.par);
        a += &kbb * s2;
        for i in 0..a.nrows() {
            a[(i, i)] += s2 * jitter;
        }
        // K_BX K_XB is formed explicitly: where K_BB is nearly singular (a long SE
        // lengthscale beside a periodic part) its round-off can exceed σ² λ_min(K_BB),
        // and A then gets the least jitter that factors it, scaled by its diagonal
        let la = match linalg::cholesky_with(&a, 0.0, exec.par) {
            Some(l) => l,
            None => {
                let scale = a.diagonal().mean();
                linalg::cholesky_jittered(&a, linalg::Jitter::Auto { scale }, exec.par)
                    .map_err(|_| {
                        Error::numerical(
                            "σ² K_BB + K_BX K_XB is not positive definite (Nyström posterior)",
                        )
                    })?
                    .0
            }
        };
        let a_inv = linalg::chol_inverse(&la, exec.par);
        let y = DVector::from_column_slice(&data.y);
        let t = &a_inv * (&kbx * &y);
        let alpha = (y - kbx.tr_mul(&t)) / s2;
        let post = Posterior {
            mean_weights: alpha.as_slice().to_vec(),
            var_matrix: a_inv,
            latent_prior: LatentPrior::Kernel,
        };
        Ok((post, Some(data.x.clone())))
    }

    fn cross(
        &self,
        model: &ModelFile,
        basis: Option<&DMatrix<f64>>,
        x: &DMatrix<f64>,
        exec: &Exec,
    ) -> Result<(DMatrix<f64>, Vec<f64>)> {
        let basis = basis.ok_or_else(|| {
            Error::input("the Nyström predictor needs its training inputs; pass --train")
        })?;
        let k = model.kernel();
        Ok((k.matrix(basis, x, exec.par), k.diag(x)))
    }

    /// Its predictor is not [`Posterior::predict`]'s, so neither is its covariance.
    fn latent_cov(
        &self,
        _model: &ModelFile,
        _posterior: &Posterior,
        _basis: Option<&DMatrix<f64>>,
        _x: &DMatrix<f64>,
        _exec: &Exec,
    ) -> Result<DMatrix<f64>> {
        Err(super::method::full_cov_refused(self.name()))
    }

    /// Williams & Seeger, block by block: mean = K*Xᵀα,
    /// var_f = k(x*, x*) − (‖k*‖² − qᵀA⁻¹q)/σ² with q = K_BX k*. Not clamped.
    fn predict(
        &self,
        model: &ModelFile,
        posterior: &Posterior,
        basis: Option<&DMatrix<f64>>,
        x: &DMatrix<f64>,
        exec: &Exec,
    ) -> Result<(Vec<f64>, Vec<f64>)> {
        let train = basis.ok_or_else(|| {
            Error::input("the Nyström predictor needs its training inputs; pass --train")
        })?;
        if posterior.mean_weights.len() != train.nrows() {
            return Err(Error::input(
                "the Nyström posterior does not match its training inputs",
            ));
        }
        let b = basis_points(model)?;
        let k = model.kernel();
        let s2 = model.collapsed_noise()?;
        let kbx = k.matrix(&b, train, exec.par);
        let alpha = DVector::from_column_slice(&posterior.mean_weights);
        let (mut mean, mut var) = (Vec::with_capacity(x.nrows()), Vec::with_capacity(x.nrows()));
        let mut start = 0;
        while start < x.nrows() {
            exec.check()?;
            let len = BLOCK.min(x.nrows() - start);
            let xs = x.rows(start, len).into_owned();
            let kxs = k.matrix(train, &xs, exec.par); // n×t
            let q = linalg::mul(&kbx, false, &kxs, false, exec.par); // M×t
            let aq = &posterior.var_matrix * &q;
            mean.extend(kxs.tr_mul(&alpha).iter().copied());
            let prior = k.diag(&xs);
            for (t, prior_t) in prior.iter().enumerate() {
                let quad = kxs.column(t).norm_squared() - q.column(t).dot(&aq.column(t));
                var.push(prior_t - quad / s2);
            }
            start += len;
        }
        Ok((mean, var))
    }

    fn fit(
        &self,
        model: ModelFile,
        data: &TrainData,
        spec: &ValidRunSpec,
        ctx: &RunContext,
    ) -> Result<(ModelFile, Outcome)> {
        if self.optimise {
            return hyper::fit_all(self, model, data, spec.iters, ctx);
        }
        let f = self.nlml(&model, data, &ctx.exec)?;
        Ok((model.clone(), Outcome::unfitted(self.pack(&model), f)))
    }
}

/// Defaults of §0 for a hand-made Nyström model (tests, docs).
pub fn default_model(data: &TrainData, b: &DMatrix<f64>, optimise: bool) -> ModelFile {
    let mut m = ModelFile::new(
        if optimise { "nystrom-opt" } else { "nystrom" },
        default_hyper(data, crate::run_spec::DEFAULT_LENGTHSCALE_START),
    );
    set_basis_points(&mut m, b);
    m
}
