//! EigenGP (Peng & Qi 2015), docs/methods.md §5: a GP projected onto M eigenfunctions of
//! the SE kernel, estimated by the Nyström method at basis points B (M×D):
//! `K_BB + jitter·I = U diag(λ) Uᵀ` (λ descending), `φ_j(x) = √M · k(x, B) u_j / λ_j`,
//! and `C = Φ diag(w) Φᵀ + σ² I`. On the likelihood core that is `Kuf = Φᵀ` (M×n) with
//! the diagonal `Kuu = diag(1/w)`; eigengp and eigengp-joint are degenerate (DTC
//! algebra, predictive variance φ*ᵀΣ⁻¹φ*), eigengp-plus adds the FITC diagonal with
//! kdiag = σ0², so its variance far from the data returns to σ0² + σ².
//!
//! With w_j = λ_j / M the model is exactly DTC (FITC for plus) on B: a model without an
//! `[eigen]` table is that tie, and is evaluated as the pseudo-input family's typed state
//! with B as its inducing inputs (no eigen-decomposition at all, and no model rewritten
//! as dtc's or fitc's): the sequential schedule fits its stage (1) there, as EigenGP.
//!
//! Parameters packed as `[log σ0², log ℓ (D), log σ², log w (M, if [eigen]), B (M·D,
//! column-major)]`, so σ² and w are one contiguous range (the sequential stage 2).
//!
//! The joint gradient goes through the eigen-decomposition: the model depends on B,
//! σ0², ℓ through K_BX and `S = U diag(g_j(λ_j)) Uᵀ`, `g_j(λ) = M w_j / λ²` (so that
//! `Φ diag(w) Φᵀ = K_XB S K_BX`), and for a spectral function
//! `∂L/∂K_BB = U (Γ ∘ (Uᵀ ∂L/∂S U)) Uᵀ` with `Γ_jj = g_j'(λ_j)` and
//! `Γ_jk = (g_j(λ_j) − g_k(λ_k)) / (λ_j − λ_k)` ([`gamma`] guards near-equal
//! eigenvalues). `Uᵀ ∂L/∂S U` comes from the core's ∂L/∂Kuu in O(M²), and
//! `∂L/∂K_BX = √M U Λ⁻¹ ∂L/∂Kuf` in O(n·M²).

use super::hyper::{self, chain, fit_free, pack_hyper, stage_budget, unpack_hyper};
use super::kmeans;
use super::lowrank::family::add_grad;
use super::lowrank::{
    ApproxChoice, Family, FamilyState, KuuMatrix, LowRankMethod, MaxM, Parts, StateLikelihood,
    jitter_grad,
};
use super::method::{Markers, Method, ValidRunSpec};
use super::pseudo::{PLAIN, PseudoExtra, PseudoState};
use crate::collapsed::Adjoints;
use crate::data::TrainData;
use crate::error::Location;
use crate::error::{Error, Result};
use crate::exec::Exec;
use crate::kernel::{Kernel, ModelKernel};
use crate::linalg::{self, Jitter};
use crate::model_file::{
    Hyper, ModelFile, ModelTable, Witness, jitter_policy, matrix_to_rows, required_matrix,
};
use crate::optim::{Outcome, Stop};
use crate::params::{self, Holds, ParamLayout, TailBlock, Transform};
use crate::run_context::{Phase, RunContext};
use crate::run_spec::ApproxKind;
use crate::scratch::Scratch;
use nalgebra::{DMatrix, SymmetricEigen};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// `[basis] points`: the basis points B of EigenGP, the Nyström methods and greedy
/// (greedy: in the order they were selected), M rows of D values. They are SE
/// pseudo-inputs by another name: [`basis_state`] reads them as the pseudo-input
/// family's state (EigenGP's tie reads them so too, [`EigenState::Tie`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Basis {
    pub points: Vec<Vec<f64>>,
}

impl ModelTable for Basis {
    const NAME: &'static str = "basis";
}

/// `[eigen] weights`: EigenGP's eigen-weights — w_j is the prior variance of the weight
/// of the eigenfunction φ_j(x) = √M · k(x, B) u_j / λ_j, j in order of descending
/// eigenvalue λ_j of K_BB (jitter included); absent = the DTC tie w_j = λ_j / M.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Eigen {
    pub weights: Vec<f64>,
}

impl ModelTable for Eigen {
    const NAME: &'static str = "eigen";
}

/// Write the basis points (M×D) as `[basis] points`.
pub fn set_basis_points(model: &mut ModelFile, b: &DMatrix<f64>) {
    model.set(&Basis {
        points: matrix_to_rows(b),
    });
}

/// What the models with `[basis] points` hold one value per input: the lengthscales
/// and the points' rows.
pub fn basis_dims(model: &ModelFile) -> Vec<Witness> {
    let mut w = vec![Witness::lengthscales(model)];
    w.extend(Witness::rows(model, Basis::NAME, "points"));
    w
}

/// The basis points along `input` as markers.
pub fn basis_markers(model: &ModelFile, input: usize) -> Result<Markers> {
    let b = basis_points(model)?;
    if input >= b.ncols() {
        return Ok(Markers::default());
    }
    Ok(Markers {
        at: b.column(input).iter().copied().collect(),
        sizes: Vec::new(),
        caption: "basis points".into(),
    })
}

/// EigenGP's basis points and eigen-weights.
pub struct EigenBasis {
    /// EigenGP+: the FITC diagonal (and the FITC stage 1).
    pub plus: bool,
    /// EigenGP*: one joint fit of everything (else the sequential rounds).
    pub joint: bool,
}

const M_MEANING: &str = "basis points (= eigenfunctions)";

/// Rounds of the sequential schedule when `--rounds` is not given.
pub const DEFAULT_ROUNDS: usize = 2;

/// Eigenvalues closer than this (relative to the larger) are treated as equal by
/// [`gamma`]: the divided difference of the weights is dropped (its limit for equal
/// weights), since the eigenvectors of such a pair are not determined.
pub const EQUAL_EIGENVALUES: f64 = 1e-9;

pub const EIGENGP: LowRankMethod<EigenBasis> = LowRankMethod {
    name: "eigengp",
    aliases: &[],
    summary: "EigenGP: M Nyström eigenfunctions at learned basis points (Peng & Qi 2015); \
              sequential: --rounds R (default 2) of (1) DTC on B, σ0², ℓ, σ² with w = λ/M, \
              (2) the eigen-weights w and σ² with Φ fixed",
    m_meaning: M_MEANING,
    options: &["rounds"],
    approx: ApproxChoice::Fixed(ApproxKind::Dtc),
    max_m: MaxM::TrainingSize,
    family: EigenBasis {
        plus: false,
        joint: false,
    },
};

pub const EIGENGP_JOINT: LowRankMethod<EigenBasis> = LowRankMethod {
    name: "eigengp-joint",
    aliases: &[],
    summary: "EigenGP*: B, σ0², ℓ, σ² and the eigen-weights w learned jointly, gradients \
              through the eigen-decomposition (Peng & Qi 2015)",
    m_meaning: M_MEANING,
    options: &[],
    approx: ApproxChoice::Fixed(ApproxKind::Dtc),
    max_m: MaxM::TrainingSize,
    family: EigenBasis {
        plus: false,
        joint: true,
    },
};

pub const EIGENGP_PLUS: LowRankMethod<EigenBasis> = LowRankMethod {
    name: "eigengp-plus",
    aliases: &[],
    summary: "EigenGP+: EigenGP with the FITC diagonal, so the variance far from the data \
              returns to σ0² + σ² (Peng & Qi 2015); sequential like eigengp with FITC in stage 1",
    m_meaning: M_MEANING,
    options: &["rounds"],
    approx: ApproxChoice::Fixed(ApproxKind::Fitc),
    max_m: MaxM::TrainingSize,
    family: EigenBasis {
        plus: true,
        joint: false,
    },
};

/// The basis points of a model (M×D).
pub fn basis_points(model: &ModelFile) -> Result<DMatrix<f64>> {
    required_matrix(
        &Location::key(Basis::NAME).then("points"),
        &model.require::<Basis>()?.points,
        model.kernel_dim(),
    )
}

/// The basis points as the plain pseudo-input family's state
/// ([`PseudoState::at_points`]): the typed model greedy and the Nyström methods hand the
/// core (σ² is asked of the likelihood, so one without Gaussian noise is refused, named).
/// Memory from `scratch` where `[basis] points` is well formed; otherwise the checked
/// read says what is wrong.
pub fn basis_state(model: &ModelFile, scratch: &Scratch) -> Result<PseudoState> {
    model.collapsed_noise()?;
    PseudoState::at_points(model, basis_points_in(model, scratch)?, scratch)
}

/// [`basis_points`] in memory from `scratch` where `[basis] points` is well formed;
/// otherwise the checked read says what is wrong.
fn basis_points_in(model: &ModelFile, scratch: &Scratch) -> Result<DMatrix<f64>> {
    match model.stored_matrix_in::<Basis>("points", model.kernel_dim(), scratch) {
        Some(b) => Ok(b),
        None => basis_points(model),
    }
}

/// The eigen-decomposition of K_BB + jitter·I, eigenvalues descending.
#[derive(Clone, Debug)]
pub struct EigenSystem {
    /// K_BB without the jitter (what the kernel derivatives need).
    pub kbb: DMatrix<f64>,
    /// Absolute jitter on K_BB's diagonal.
    pub jitter: f64,
    /// Columns u_j.
    pub u: DMatrix<f64>,
    pub lambda: Vec<f64>,
}

/// Decompose K_BB + jitter·I; the jitter follows the model's policy (its `jitter` key,
/// or ε·σ0² with ε raised until K_BB is positive definite, docs/methods.md §1.3).
pub fn eigen_system(model: &ModelFile, b: &DMatrix<f64>, exec: &Exec) -> Result<EigenSystem> {
    eigen_system_of(&*model.kernel(), model.jitter_policy(), b, exec)
}

/// [`eigen_system`] with `kernel` and the jitter policy `policy`.
fn eigen_system_of(
    kernel: &dyn Kernel,
    policy: Jitter,
    b: &DMatrix<f64>,
    exec: &Exec,
) -> Result<EigenSystem> {
    let kbb = kernel.gram(b, exec.par);
    let (_, jitter) = linalg::cholesky_jittered(&kbb, policy, exec.par)?;
    let mut shifted = kbb.clone();
    for i in 0..shifted.nrows() {
        shifted[(i, i)] += jitter;
    }
    let eig = SymmetricEigen::new(shifted);
    let mut order: Vec<usize> = (0..eig.eigenvalues.len()).collect();
    order.sort_by(|a, c| eig.eigenvalues[*c].total_cmp(&eig.eigenvalues[*a]));
    let lambda: Vec<f64> = order.iter().map(|&j| eig.eigenvalues[j]).collect();
    if let Some(l) = lambda.iter().find(|l| !(l.is_finite() && **l > 0.0)) {
        return Err(Error::numerical(format!(
            "K_BB + jitter has the eigenvalue {l:e}; EigenGP needs them all positive \
             (duplicate basis points?)"
        )));
    }
    let u = DMatrix::from_fn(b.nrows(), b.nrows(), |i, j| eig.eigenvectors[(i, order[j])]);
    Ok(EigenSystem {
        kbb,
        jitter,
        u,
        lambda,
    })
}

/// The DTC tie w_j = λ_j / M.
pub fn tie_weights(lambda: &[f64]) -> Vec<f64> {
    let m = lambda.len() as f64;
    lambda.iter().map(|l| l / m).collect()
}

/// EigenGP's blocks after the shared ones: the weights as logarithms (where the model
/// has them), then the basis points B (m × D).
const EIGEN_BLOCKS: [TailBlock; 2] = [
    TailBlock {
        name: "eigen_weights",
        transform: Transform::Log,
        holds: Holds::Table(Eigen::NAME),
        len: Some(|model| {
            model
                .tables
                .get(Eigen::NAME)
                .and_then(|t| t.get("weights"))
                .and_then(|w| w.as_array())
                .map_or(0, |w| w.len())
        }),
    },
    TailBlock {
        name: "basis_points",
        transform: Transform::Identity,
        len: None,
        holds: Holds::ByTransform,
    },
];

/// The eigen-weights of a model, checked against M (None: the tie).
fn weights(model: &ModelFile, m: usize) -> Result<Option<Vec<f64>>> {
    let Some(e) = model.table::<Eigen>()? else {
        return Ok(None);
    };
    let at = Location::key(Eigen::NAME).then("weights");
    if e.weights.len() != m {
        return Err(Error::at(
            at,
            format!(
                "[eigen] weights holds {} values but [basis] has {m} points (one weight per \
                 eigenfunction)",
                e.weights.len()
            ),
        ));
    }
    if let Some(w) = e.weights.iter().find(|w| !(w.is_finite() && **w > 0.0)) {
        return Err(Error::at(
            at,
            format!("[eigen] weights must be positive and finite, not {w}"),
        ));
    }
    Ok(Some(e.weights))
}

/// Γ of the spectral-function derivative for `g_j(λ) = c_j / λ²` (c_j = M w_j):
/// `Γ_jj = −2 c_j / λ_j³`, and off the diagonal the divided difference written so that
/// nothing cancels:
/// `Γ_jk = ½(c_j − c_k)(λ_j⁻² + λ_k⁻²)/(λ_j − λ_k) − ½(c_j + c_k)(λ_j + λ_k)/(λ_j² λ_k²)`.
/// The first term is the only one that is singular when λ_j → λ_k; for eigenvalues
/// equal to [`EQUAL_EIGENVALUES`] relative it is dropped, which is the exact limit when
/// c_j = c_k (then the second term is g'(λ)) and keeps the gradient finite otherwise.
pub fn gamma(c: &[f64], lambda: &[f64]) -> DMatrix<f64> {
    let m = c.len();
    DMatrix::from_fn(m, m, |j, k| {
        let (lj, lk) = (lambda[j], lambda[k]);
        if j == k {
            return -2.0 * c[j] / (lj * lj * lj);
        }
        let smooth = -0.5 * (c[j] + c[k]) * (lj + lk) / (lj * lj * lk * lk);
        let delta = lj - lk;
        if delta.abs() <= EQUAL_EIGENVALUES * lj.abs().max(lk.abs()) {
            smooth
        } else {
            smooth + 0.5 * (c[j] - c[k]) * (1.0 / (lj * lj) + 1.0 / (lk * lk)) / delta
        }
    })
}

/// What `parts` keeps for `pull_back`.
pub enum EigenExtra {
    /// The tie: the pseudo-input family's extra.
    Tie(PseudoExtra),
    /// Eigen-weights: K_BX and the eigen-system.
    Weights { kbx: DMatrix<f64>, eig: EigenSystem },
}

/// EigenGP's parameters as typed values ([`Family::State`]): read from a model once (an
/// L-BFGS fit unpacks θ into them on every evaluation), or per evaluation outside a fit.
#[derive(Clone, Debug)]
pub enum EigenState {
    /// No `[eigen]` weights: the DTC (FITC) tie, the pseudo-input family's state with B
    /// as its inducing inputs (θ is the same: the head, then B).
    Tie(PseudoState),
    /// Eigen-weights.
    Weighted(Weighted),
}

/// The values of an EigenGP model with eigen-weights.
#[derive(Clone, Debug)]
pub struct Weighted {
    kernel: ModelKernel,
    /// The basis points B (M×D).
    b: DMatrix<f64>,
    /// The eigen-weights w (M).
    w: Vec<f64>,
    likelihood: StateLikelihood,
    /// The model's absolute jitter, if it sets one.
    jitter: Option<f64>,
    /// What the automatic jitter scales with where the kernel's prior variance is not
    /// constant: the model's σ0², which θ does not move ([`ModelFile::jitter_policy`]).
    jitter_scale: f64,
}

impl Weighted {
    fn jitter_policy(&self) -> Jitter {
        let scale = self.kernel.prior_variance().unwrap_or(self.jitter_scale);
        jitter_policy(self.jitter, scale)
    }
}

impl FamilyState for EigenState {
    fn collapsed_noise(&self) -> Result<f64> {
        match self {
            EigenState::Tie(s) => s.collapsed_noise(),
            EigenState::Weighted(s) => s.likelihood.collapsed_noise(),
        }
    }
}

/// The internal error of a tie's extra met with weights, or the reverse.
fn mismatched() -> Error {
    Error::numerical("internal: EigenGP's parts and state disagree on the eigen-weights")
}

impl EigenBasis {
    /// The sequential schedule: rounds of (1) the tie over [hyper, B], (2) [σ², w].
    fn fit_sequential(
        &self,
        method: &LowRankMethod<Self>,
        model: ModelFile,
        data: &TrainData,
        spec: &ValidRunSpec,
        ctx: &RunContext,
    ) -> Result<(ModelFile, Outcome)> {
        let rounds = spec.options.rounds.unwrap_or(DEFAULT_ROUNDS).max(1);
        let stages = 2 * rounds;
        let mut model = model;
        let mut total: Option<Outcome> = None;
        for k in 0..stages {
            let used = total.as_ref().map_or(0, |t| t.iterations);
            let budget = stage_budget(spec.iters - used.min(spec.iters), stages - k);
            let continues = total.as_ref().map(|t| t.iterations);
            let phase = Phase::Fit { stage: k + 1 };
            let out = if k % 2 == 0 {
                // (1) the tie: without `[eigen]` the model is DTC (FITC) on B, θ = [hyper,
                // B], evaluated as the pseudo-input family's state (EigenState::Tie); the
                // fixed blocks are EigenGP's own (basis_points; eigen_weights has no entries)
                model.remove::<Eigen>();
                let n = method.pack(&model).len();
                let (fitted, out) =
                    fit_free(method, model, data, 0..n, budget, phase, continues, ctx)?;
                model = fitted;
                out
            } else {
                // (2) the weights from the tie, with σ²; Φ (B, σ0², ℓ) fixed
                let b = basis_points(&model)?;
                let eig = eigen_system(&model, &b, &ctx.exec)?;
                let m = eig.lambda.len();
                model.set(&Eigen {
                    weights: tie_weights(&eig.lambda),
                });
                // σ² is the last entry of the packed head
                let head = hyper::head_len(&model);
                let free = head - 1..head + m;
                let (fitted, out) =
                    fit_free(method, model, data, free, budget, phase, continues, ctx)?;
                model = fitted;
                out
            };
            total = Some(chain(total, out));
            if total
                .as_ref()
                .is_some_and(|t| matches!(t.stop, Stop::Cancelled | Stop::EarlyStop))
            {
                break;
            }
        }
        let mut total = total.ok_or_else(|| Error::input("the stage schedule is empty"))?;
        total.x = method.pack(&model);
        Ok((model, total))
    }
}

impl Family for EigenBasis {
    /// K_BB, K_BX and the prior diagonal come from the model's `dyn Kernel`, and the
    /// tie is the pseudo-input family: any kernel.
    fn takes_composed_kernel(&self) -> bool {
        true
    }

    fn seed_help(&self) -> &'static str {
        "the basis points are k-means centres from a seeded start"
    }

    type Extra = EigenExtra;
    type State = EigenState;

    fn state<'a>(&self, model: &'a ModelFile, scratch: &Scratch) -> Result<Cow<'a, EigenState>> {
        let b = basis_points_in(model, scratch)?;
        let Some(w) = weights(model, b.nrows())? else {
            // the tie: the plain pseudo-input family's state at B (not basis_state: EP
            // fits the tie with a likelihood that has no σ²)
            let tie = PseudoState::at_points(model, b, scratch)?;
            return Ok(Cow::Owned(EigenState::Tie(tie)));
        };
        Ok(Cow::Owned(EigenState::Weighted(Weighted {
            kernel: model.kernel(),
            b,
            w,
            likelihood: StateLikelihood::of(model)?,
            jitter: model.jitter,
            jitter_scale: model.hyper.signal_variance,
        })))
    }

    fn recycle_state(&self, state: Cow<'_, EigenState>, scratch: &Scratch) {
        match state {
            Cow::Owned(EigenState::Tie(tie)) => PLAIN.recycle_state(Cow::Owned(tie), scratch),
            Cow::Owned(EigenState::Weighted(s)) => scratch.give_matrix(s.b),
            Cow::Borrowed(_) => {}
        }
    }

    fn size(&self, state: &EigenState) -> Result<usize> {
        match state {
            EigenState::Tie(s) => PLAIN.size(s),
            EigenState::Weighted(s) => Ok(s.b.nrows()),
        }
    }

    /// θ in [`Family::pack`]'s order: the kernel's blocks, log(σ² − floor) (Gaussian
    /// only), log w (with weights), B (M×D, column-major); without weights the
    /// pseudo-input family's θ.
    fn unpack_state(&self, theta: &[f64], state: &mut EigenState) {
        let s = match state {
            EigenState::Tie(tie) => return PLAIN.unpack_state(theta, tie),
            EigenState::Weighted(s) => s,
        };
        let k = s.kernel.params_len();
        s.kernel.set_log_params(&theta[..k]);
        let mut at = k + s.likelihood.unpack(&theta[k..]);
        for (w, t) in s.w.iter_mut().zip(&theta[at..]) {
            *w = t.exp();
        }
        at += s.w.len();
        let n = s.b.len();
        s.b.as_mut_slice().copy_from_slice(&theta[at..at + n]);
    }

    fn hold_fixed_state(&self, layout: &ParamLayout, start: &EigenState, state: &mut EigenState) {
        let (start, s) = match (start, state) {
            (EigenState::Tie(from), EigenState::Tie(to)) => {
                // `basis_points` is the identity: θ holds it exactly
                return PLAIN.hold_fixed_state(layout, from, to);
            }
            (EigenState::Weighted(from), EigenState::Weighted(to)) => (from, to),
            _ => return,
        };
        for b in layout.blocks().iter().filter(|b| b.fixed) {
            match b.name {
                params::NOISE_VARIANCE => s.likelihood.hold(&start.likelihood),
                name if name == EIGEN_BLOCKS[0].name => s.w.clone_from(&start.w),
                name if name == EIGEN_BLOCKS[1].name => s.b.copy_from(&start.b),
                name => s.kernel.hold_block(&*start.kernel, name),
            }
        }
    }

    fn init(
        &self,
        data: &TrainData,
        spec: &ValidRunSpec,
        hyper: Hyper,
        ctx: &RunContext,
        rng: &mut ChaCha8Rng,
    ) -> Result<ModelFile> {
        let b = kmeans::centres(&data.x, spec.m, rng)?;
        let mut model = ModelFile::new(&spec.method, hyper);
        set_basis_points(&mut model, &b);
        if self.joint {
            // EigenGP* starts at the DTC tie, with the weights free
            let eig = eigen_system(&model, &b, &ctx.exec)?;
            model.set(&Eigen {
                weights: tie_weights(&eig.lambda),
            });
        }
        Ok(model)
    }

    fn tail_blocks(&self) -> &'static [TailBlock] {
        &EIGEN_BLOCKS
    }

    fn check(&self, model: &ModelFile) -> Result<usize> {
        let m = basis_points(model)?.nrows();
        weights(model, m)?;
        Ok(m)
    }

    fn tables(&self) -> &'static [&'static str] {
        &[Basis::NAME, Eigen::NAME]
    }

    fn input_dims(&self, model: &ModelFile) -> Vec<Witness> {
        basis_dims(model)
    }

    fn markers(&self, model: &ModelFile, input: usize) -> Result<Markers> {
        basis_markers(model, input)
    }

    fn pack(&self, model: &ModelFile) -> Vec<f64> {
        let mut theta = Vec::new();
        pack_hyper(model, &mut theta);
        if let Ok(Some(e)) = model.table::<Eigen>() {
            theta.extend(e.weights.iter().map(|w| w.ln()));
        }
        if let Ok(b) = basis_points(model) {
            theta.extend_from_slice(b.as_slice());
        }
        theta
    }

    fn unpack(&self, theta: &[f64], model: &mut ModelFile) {
        let used = unpack_hyper(theta, model);
        let d = model.kernel_dim().max(1);
        let rest = &theta[used..];
        let weighted = model.has::<Eigen>();
        let m = if weighted {
            rest.len() / (d + 1)
        } else {
            rest.len() / d
        };
        let b_start = if weighted {
            model.set(&Eigen {
                weights: rest[..m].iter().map(|v| v.exp()).collect(),
            });
            m
        } else {
            0
        };
        let b = DMatrix::from_column_slice(m, d, &rest[b_start..b_start + m * d]);
        set_basis_points(model, &b);
    }

    fn parts(
        &self,
        state: &EigenState,
        x: &DMatrix<f64>,
        for_gradient: bool,
        exec: &Exec,
    ) -> Result<(Parts, EigenExtra)> {
        let s = match state {
            EigenState::Tie(tie) => {
                let (parts, z) = PLAIN.parts(tie, x, for_gradient, exec)?;
                return Ok((parts, EigenExtra::Tie(z)));
            }
            EigenState::Weighted(s) => s,
        };
        let (k, b, w) = (&s.kernel, &s.b, &s.w);
        let eig = eigen_system_of(&**k, s.jitter_policy(), b, exec)?;
        let kbx = k.matrix(b, x, exec.par);
        // Φᵀ = √M Λ⁻¹ Uᵀ K_BX
        let mut phi_t = linalg::mul(&eig.u, true, &kbx, false, exec.par);
        let root_m = (b.nrows() as f64).sqrt();
        for (j, l) in eig.lambda.iter().enumerate() {
            phi_t.row_mut(j).scale_mut(root_m / l);
        }
        let parts = Parts {
            kuf: phi_t,
            kuu: KuuMatrix::Diagonal(w.iter().map(|w| 1.0 / w).collect()),
            kdiag: k.diag(x),
            // the jitter is on K_BB (inside Φ); diag(1/w) needs none
            jitter: Jitter::Fixed(0.0),
        };
        Ok((parts, EigenExtra::Weights { kbx, eig }))
    }

    /// The tie: the pseudo-input gradient. With weights: [log σ0², log ℓ, log σ²,
    /// log w, B] through the eigen-decomposition at fixed w.
    fn pull_back(
        &self,
        state: &EigenState,
        x: &DMatrix<f64>,
        parts: &Parts,
        extra: EigenExtra,
        adj: &Adjoints,
        exec: &Exec,
    ) -> Result<Vec<f64>> {
        let (s, kbx, eig) = match (state, extra) {
            (EigenState::Tie(tie), EigenExtra::Tie(z)) => {
                return PLAIN.pull_back(tie, x, parts, z, adj, exec);
            }
            (EigenState::Weighted(s), EigenExtra::Weights { kbx, eig }) => (s, kbx, eig),
            _ => return Err(mismatched()),
        };
        let (w, b) = (&s.w, &s.b);
        let m = w.len();
        let mf = m as f64;
        let lambda = &eig.lambda;
        // Uᵀ ∂L/∂S U = −(λ_j λ_k / (M w_j w_k)) ∂L/∂Kuu_jk (Kuu = diag(1/w) = M Λ⁻¹ S⁻¹...)
        let inner = DMatrix::from_fn(m, m, |j, k| {
            -lambda[j] * lambda[k] / (mf * w[j] * w[k]) * adj.d_kuu[(j, k)]
        });
        let c: Vec<f64> = w.iter().map(|w| mf * w).collect();
        let g = gamma(&c, lambda).component_mul(&inner);
        // ∂L/∂K_BB = U (Γ ∘ Uᵀ∂L/∂S U) Uᵀ
        let ug = linalg::mul(&eig.u, false, &g, false, exec.par);
        let d_bb = linalg::mul(&ug, false, &eig.u, true, exec.par);
        let d_bb = (&d_bb + d_bb.transpose()) * 0.5;
        // ∂L/∂K_BX = √M U Λ⁻¹ ∂L/∂Kuf
        let mut scaled = adj.d_kuf.clone();
        let root_m = mf.sqrt();
        for (j, l) in lambda.iter().enumerate() {
            scaled.row_mut(j).scale_mut(root_m / l);
        }
        let d_bx = linalg::mul(&eig.u, false, &scaled, false, exec.par);
        let k = &s.kernel;
        let gx = k.grad(b, x, &kbx, &d_bx, true, false, exec.par);
        let gb = k.grad(b, b, &eig.kbb, &d_bb, true, true, exec.par);
        // the head by block, as params::Head writes a model's: the kernel's blocks in its
        // own order (K_BX's, K_BB's and the prior diagonal's contractions, then the
        // automatic jitter's through the prior variance), log(σ² − floor) where θ
        // holds σ²
        let mut gd = vec![0.0; k.params_len()];
        k.diag_grad(x, &adj.d_kdiag, &mut gd);
        let mut grad = vec![0.0; k.params_len()];
        for g in [&gx.params, &gb.params, &gd] {
            grad.iter_mut().zip(g).for_each(|(o, v)| *o += v);
        }
        k.log_prior_variance_grad(jitter_grad(s.jitter_policy(), eig.jitter, &d_bb), &mut grad);
        s.likelihood.push_grad(adj.d_noise, &mut grad);
        // Kuu_jj = 1/w_j: ∂/∂log w_j = −∂L/∂Kuu_jj / w_j
        grad.extend((0..m).map(|j| -adj.d_kuu[(j, j)] / w[j]));
        if let (Some(a), Some(p), Some(q)) = (gx.a, gb.a, gb.b) {
            grad.extend_from_slice((a + p + q).as_slice());
        }
        Ok(grad)
    }

    /// The tie straight into `grad` as the pseudo-input family's (allocating nothing, as
    /// dtc's and fitc's evaluations); with weights, [`Family::pull_back`]'s vector added.
    fn pull_back_into(
        &self,
        state: &EigenState,
        x: &DMatrix<f64>,
        parts: &Parts,
        extra: EigenExtra,
        adj: &Adjoints,
        exec: &Exec,
        grad: &mut Vec<f64>,
    ) -> Result<()> {
        match (state, extra) {
            (EigenState::Tie(tie), EigenExtra::Tie(z)) => {
                PLAIN.pull_back_into(tie, x, parts, z, adj, exec, grad)
            }
            (state, extra) => {
                add_grad(grad, self.pull_back(state, x, parts, extra, adj, exec)?);
                Ok(())
            }
        }
    }

    fn degenerate(&self) -> bool {
        !self.plus
    }

    /// The joint fit only: the sequential schedule's stages are EigenGP's own evaluations
    /// too (the tie's as well), but it has not been run over processes.
    fn shares_rows(&self) -> bool {
        self.joint
    }

    fn fit(
        &self,
        method: &LowRankMethod<Self>,
        model: ModelFile,
        data: &TrainData,
        spec: &ValidRunSpec,
        ctx: &RunContext,
    ) -> Result<(ModelFile, Outcome)> {
        if self.joint {
            hyper::fit_all(method, model, data, spec.iters, ctx)
        } else {
            self.fit_sequential(method, model, data, spec, ctx)
        }
    }
}
