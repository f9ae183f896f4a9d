//! SE pseudo-inputs (Snelson & Ghahramani 2006), docs/methods.md §2.1: inducing inputs X̄
//! (m×D) learned with σ0², ℓ and σ²; `Kuf = k(X̄, X)`, `Kuu = k(X̄, X̄)`, kdiag = σ0².
//! With FITC this is SPGP; the same family gives VFE (Titsias 2009), DTC and power EP.
//!
//! SPGP+HS (Snelson & Ghahramani, UAI 2006, §5) is this family with a learned
//! uncertainty per pseudo-input: `Kuu → Kuu + diag(h)`, h_j ≥ 0 packed as log h_j. The
//! core treats the addition like the jitter, as part of Kuu (so FITC's λ_i uses the
//! modified Kuu), and its adjoint gives `∂NLML/∂h_j = ∂NLML/∂Kuu_jj`.

use super::hyper::{pack_hyper_and, unpack_hyper_and};
use super::inducing::initial_points;
use super::lowrank::{
    ApproxChoice, Family, FamilyState, KuuMatrix, LowRankMethod, MaxM, Parts, StateLikelihood,
    jitter_grad,
};
use super::method::{MarkerSize, Markers, ValidRunSpec};
use crate::collapsed::Adjoints;
use crate::data::TrainData;
use crate::error::Location;
use crate::error::{Error, Result};
use crate::exec::Exec;
use crate::kernel::ModelKernel;
use crate::linalg::Jitter;
use crate::model_file::{
    Hyper, ModelFile, ModelTable, Witness, jitter_policy, matrix_to_rows, required_matrix,
};
use crate::params::{self, Holds, ParamLayout, TailBlock, Transform};
use crate::run_context::RunContext;
use crate::run_spec::ApproxKind;
use crate::scratch::Scratch;
use nalgebra::DMatrix;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// `[inducing] points`: the pseudo-inputs, m rows of D values (of G for the projected
/// families).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Inducing {
    pub points: Vec<Vec<f64>>,
}

impl ModelTable for Inducing {
    const NAME: &'static str = "inducing";
}

/// `[pseudo_noise] h`: SPGP+HS's per-pseudo-input uncertainties added to Kuu's diagonal
/// (Snelson & Ghahramani 2006b, §5: `Kuu → Kuu + diag(h)`), h_j ≥ 0, one per pseudo-input.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PseudoNoise {
    pub h: Vec<f64>,
}

impl ModelTable for PseudoNoise {
    const NAME: &'static str = "pseudo_noise";
}

/// The `inducing_inputs` block: `[inducing] points`, m rows of D values (the rest of θ
/// unless the family packs more after it).
pub const INDUCING_INPUTS: TailBlock = TailBlock {
    name: "inducing_inputs",
    transform: Transform::Identity,
    len: None,
    holds: Holds::ByTransform,
};

/// SPGP+HS's blocks: the inducing inputs (m × D), then `pseudo_noise` h as logarithms.
const HETERO_BLOCKS: [TailBlock; 2] = [
    TailBlock {
        len: Some(|model| {
            let rows = model
                .tables
                .get(Inducing::NAME)
                .and_then(|t| t.get("points"))
                .and_then(|p| p.as_array())
                .map_or(0, |r| r.len());
            rows * model.kernel_dim()
        }),
        ..INDUCING_INPUTS
    },
    TailBlock {
        name: PseudoNoise::NAME,
        transform: Transform::Log,
        len: None,
        holds: Holds::Table(PseudoNoise::NAME),
    },
];

/// Where `[inducing] points` is.
pub fn points_at() -> Location {
    Location::key(Inducing::NAME).then("points")
}

/// Inducing inputs in the input space of the SE kernel.
pub struct PseudoInputs {
    /// SPGP+HS: a learned `[pseudo_noise] h` on Kuu's diagonal.
    pub hetero: bool,
}

/// The plain family (fitc, vfe, dtc, pep, and pca-spgp after its projection).
pub const PLAIN: PseudoInputs = PseudoInputs { hetero: false };

const M_MEANING: &str = "inducing points";

pub const FITC: LowRankMethod<PseudoInputs> = LowRankMethod {
    name: "fitc",
    aliases: &["spgp"],
    summary: "SPGP/FITC: m learned pseudo-inputs (Snelson & Ghahramani 2006)",
    m_meaning: M_MEANING,
    options: &["inducing_init", "inducing_inputs"],
    approx: ApproxChoice::Fixed(ApproxKind::Fitc),
    max_m: MaxM::TrainingSize,
    family: PLAIN,
};

pub const VFE: LowRankMethod<PseudoInputs> = LowRankMethod {
    name: "vfe",
    aliases: &["sgpr"],
    summary: "VFE/SGPR: m learned inducing inputs under Titsias's collapsed bound (Titsias 2009); \
              the objective is the negative ELBO",
    m_meaning: M_MEANING,
    options: &["inducing_init", "inducing_inputs"],
    approx: ApproxChoice::Fixed(ApproxKind::Vfe),
    max_m: MaxM::TrainingSize,
    family: PLAIN,
};

pub const DTC: LowRankMethod<PseudoInputs> = LowRankMethod {
    name: "dtc",
    aliases: &["sor", "pp"],
    summary: "DTC/projected process: m learned inducing inputs, no diagonal correction \
              (Seeger, Williams & Lawrence 2003)",
    m_meaning: M_MEANING,
    options: &["inducing_init", "inducing_inputs"],
    approx: ApproxChoice::Fixed(ApproxKind::Dtc),
    max_m: MaxM::TrainingSize,
    family: PLAIN,
};

pub const PEP: LowRankMethod<PseudoInputs> = LowRankMethod {
    name: "pep",
    aliases: &["power-ep"],
    summary: "power EP: m learned inducing inputs, --alpha a in (0, 1] between VFE (a → 0) \
              and FITC (a = 1) (Bui, Yan & Turner 2017)",
    m_meaning: M_MEANING,
    options: &["alpha", "inducing_init", "inducing_inputs"],
    approx: ApproxChoice::Fixed(ApproxKind::Pep),
    max_m: MaxM::TrainingSize,
    family: PLAIN,
};

pub const SPGP_HS: LowRankMethod<PseudoInputs> = LowRankMethod {
    name: "spgp-hs",
    aliases: &["spgp+hs"],
    summary: "SPGP+HS: SPGP with a learned uncertainty h_j per pseudo-input on Kuu's diagonal, \
              for input-dependent noise (Snelson & Ghahramani, UAI 2006)",
    m_meaning: M_MEANING,
    options: &["inducing_init", "inducing_inputs"],
    approx: ApproxChoice::Fixed(ApproxKind::Fitc),
    max_m: MaxM::TrainingSize,
    family: PseudoInputs { hetero: true },
};

/// The pseudo-inputs of a model as an m×D matrix (D = the kernel's lengthscales).
pub fn inducing_points(model: &ModelFile) -> Result<DMatrix<f64>> {
    let rows = model.require::<Inducing>()?.points;
    required_matrix(&points_at(), &rows, model.kernel_dim())
}

/// Write the pseudo-inputs (m×D) as `[inducing] points`.
pub fn set_inducing_points(model: &mut ModelFile, z: &DMatrix<f64>) {
    model.set(&Inducing {
        points: matrix_to_rows(z),
    });
}

/// The strengths σ0²/(σ0² + h_j) of pseudo-inputs with pseudo-noise as marker sizes:
/// full above ⅔, half above ⅓, a dot below (1: a plain SPGP pseudo-input, → 0:
/// switched off by its uncertainty).
pub fn pseudo_noise_sizes(signal_variance: f64, h: &[f64]) -> Vec<MarkerSize> {
    h.iter()
        .map(|h| match signal_variance / (signal_variance + h) {
            s if s >= 2.0 / 3.0 => MarkerSize::Full,
            s if s >= 1.0 / 3.0 => MarkerSize::Half,
            _ => MarkerSize::Dot,
        })
        .collect()
}

/// [`inducing_points`] in memory from `scratch` (read from the stored table when it is
/// well formed; otherwise the checked read says what is wrong).
fn inducing_points_in(model: &ModelFile, scratch: &Scratch) -> Result<DMatrix<f64>> {
    let d = model.kernel_dim();
    match model.stored_matrix_in::<Inducing>("points", d, scratch) {
        Some(z) => Ok(z),
        None => inducing_points(model),
    }
}

/// The pseudo-input families' parameters as typed values ([`Family::State`]): read
/// from a model once (an L-BFGS fit unpacks θ into them on every evaluation), or for
/// one evaluation outside a fit (memory from the run's scratch).
#[derive(Clone, Debug)]
pub struct PseudoState {
    kernel: ModelKernel,
    /// The pseudo-inputs X̄ (m×D; D the kernel's inputs).
    z: DMatrix<f64>,
    /// SPGP+HS's pseudo-noise h (m values); None for the plain family.
    h: Option<Vec<f64>>,
    likelihood: StateLikelihood,
    /// The model's absolute jitter, if it sets one.
    jitter: Option<f64>,
}

impl PseudoState {
    /// A state built in code (any kernel, a model file need not name it): pseudo-inputs
    /// `z` (m×D), SPGP+HS's `h` (None for the plain family), Gaussian noise of variance
    /// `noise_variance` above `noise_floor` ([`StateLikelihood::gaussian`]), and an
    /// absolute `jitter` (None: the automatic one). Its θ holds σ², as a Gaussian
    /// model's does.
    pub fn new(
        kernel: ModelKernel,
        z: DMatrix<f64>,
        h: Option<Vec<f64>>,
        noise_variance: f64,
        noise_floor: f64,
        jitter: Option<f64>,
    ) -> PseudoState {
        PseudoState {
            kernel,
            z,
            h,
            likelihood: StateLikelihood::gaussian(noise_variance, noise_floor),
            jitter,
        }
    }

    /// The plain family's state of `model` at the pseudo-inputs `z` (m×D): the model's
    /// kernel (memory from `scratch`), likelihood ([`StateLikelihood::of`]), and jitter. What
    /// [`PseudoInputs::state`] reads at `[inducing] points`, and what the selection
    /// methods (greedy, Nyström) hand the core at the basis they chose, so that no model
    /// is rewritten as a pseudo-input method's.
    pub fn at_points(model: &ModelFile, z: DMatrix<f64>, scratch: &Scratch) -> Result<PseudoState> {
        Ok(PseudoState {
            kernel: model.kernel_in(scratch),
            z,
            h: None,
            likelihood: StateLikelihood::of(model)?,
            jitter: model.jitter,
        })
    }

    /// The model's jitter policy ([`ModelFile::jitter_policy`]) at the state's kernel.
    fn jitter_policy(&self) -> Jitter {
        // every kernel a model file names has a constant prior variance
        let scale = self.kernel.prior_variance().unwrap_or(1.0);
        jitter_policy(self.jitter, scale)
    }
}

impl FamilyState for PseudoState {
    fn collapsed_noise(&self) -> Result<f64> {
        self.likelihood.collapsed_noise()
    }
}

/// The starting pseudo-noise of SPGP+HS: h_j = 10⁻³·σ0² (small: the model starts
/// as SPGP, and log h can move either way).
pub fn initial_pseudo_noise(m: usize, signal_variance: f64) -> PseudoNoise {
    PseudoNoise {
        h: vec![1e-3 * signal_variance; m],
    }
}

/// A model's `[pseudo_noise] h`, checked: m values, each finite and ≥ 0.
pub fn pseudo_noise(model: &ModelFile, m: usize) -> Result<Vec<f64>> {
    let h = model
        .table::<PseudoNoise>()?
        .ok_or_else(|| {
            Error::input(format!(
                "the model has no [pseudo_noise] h (method '{}' needs one value per \
                 pseudo-input)",
                model.method
            ))
        })?
        .h;
    let at = Location::key(PseudoNoise::NAME).then("h");
    if h.len() != m {
        return Err(Error::at(
            at,
            format!(
                "[pseudo_noise] h has {} values, expected {m} (one per pseudo-input)",
                h.len()
            ),
        ));
    }
    if let Some(v) = h.iter().find(|v| !(v.is_finite() && **v >= 0.0)) {
        return Err(Error::at(
            at,
            format!("[pseudo_noise] h must hold finite values ≥ 0, not {v}"),
        ));
    }
    Ok(h)
}

/// `Kuu ← Kuu + diag(h)`; returns the kernel's Kuu as it was (what the kernel's
/// derivatives are contracted with in the pull-back).
pub fn add_pseudo_noise(kuu: &mut DMatrix<f64>, h: &[f64]) -> DMatrix<f64> {
    add_pseudo_noise_in(kuu, h, &Scratch::default())
}

/// [`add_pseudo_noise`] with the copy in memory from `scratch`.
fn add_pseudo_noise_in(kuu: &mut DMatrix<f64>, h: &[f64], scratch: &Scratch) -> DMatrix<f64> {
    let plain = scratch.copy(kuu);
    for (j, v) in h.iter().enumerate() {
        kuu[(j, j)] += v;
    }
    plain
}

/// ∂NLML/∂log h_j = h_j · ∂NLML/∂Kuu_jj.
pub fn pseudo_noise_grad<'a>(h: &'a [f64], adj: &'a Adjoints) -> impl Iterator<Item = f64> + 'a {
    h.iter().enumerate().map(|(j, v)| v * adj.d_kuu[(j, j)])
}

/// log h, appended to a parameter vector.
pub fn pack_pseudo_noise(model: &ModelFile, theta: &mut Vec<f64>) {
    if let Ok(Some(p)) = model.table::<PseudoNoise>() {
        theta.extend(p.h.iter().map(|v| v.ln()));
    }
}

/// What [`PseudoInputs::parts`] hands to its pull-back.
pub struct PseudoExtra {
    /// SPGP+HS: the kernel's Kuu without diag(h) (what the kernel's derivatives are
    /// contracted with); None for the plain family, whose Kuu is the kernel's.
    kernel_kuu: Option<DMatrix<f64>>,
}

impl Family for PseudoInputs {
    /// Kuf, Kuu and the diagonal come from the state's `dyn Kernel`, any kernel.
    fn takes_composed_kernel(&self) -> bool {
        true
    }
    /// Kuf is k(Z, X): u = f(Z) (plus SPGP+HS's independent pseudo-noise).
    fn predicts_summands(&self) -> bool {
        true
    }

    fn seed_help(&self) -> &'static str {
        "the pseudo-inputs start at m training inputs (or k-means centres) chosen with the seed"
    }

    fn set_inducing_inputs(&self, model: &mut ModelFile, z: &DMatrix<f64>) -> Option<()> {
        set_inducing_points(model, z);
        Some(())
    }

    /// The prior of f is the model's kernel on the inputs.
    fn prior_cov(&self, model: &ModelFile, x: &DMatrix<f64>, exec: &Exec) -> Option<DMatrix<f64>> {
        Some(model.kernel().gram(x, exec.par))
    }

    type Extra = PseudoExtra;
    type State = PseudoState;

    fn state<'a>(&self, model: &'a ModelFile, scratch: &Scratch) -> Result<Cow<'a, PseudoState>> {
        let z = inducing_points_in(model, scratch)?;
        let h = if self.hetero {
            Some(pseudo_noise(model, z.nrows())?)
        } else {
            None
        };
        Ok(Cow::Owned(PseudoState {
            h,
            ..PseudoState::at_points(model, z, scratch)?
        }))
    }

    fn recycle_state(&self, state: Cow<'_, PseudoState>, scratch: &Scratch) {
        if let Cow::Owned(st) = state {
            st.kernel.recycle(scratch);
            scratch.give_matrix(st.z);
        }
    }

    fn size(&self, state: &PseudoState) -> Result<usize> {
        Ok(state.z.nrows())
    }

    /// θ = [the kernel's blocks, log(σ² − floor) (Gaussian only), X̄ (m×D, column-major), log h
    /// (SPGP+HS)], as [`Family::unpack`] writes it into a model.
    fn unpack_state(&self, theta: &[f64], state: &mut PseudoState) {
        let k = state.kernel.params_len();
        state.kernel.set_log_params(&theta[..k]);
        let noise = state.likelihood.unpack(&theta[k..]);
        let points = k + noise..k + noise + state.z.len();
        state
            .z
            .as_mut_slice()
            .copy_from_slice(&theta[points.clone()]);
        if let Some(h) = &mut state.h {
            for (v, t) in h.iter_mut().zip(&theta[points.end..]) {
                *v = t.exp();
            }
        }
    }

    fn hold_fixed_state(&self, layout: &ParamLayout, start: &PseudoState, state: &mut PseudoState) {
        for b in layout.blocks().iter().filter(|b| b.fixed) {
            match b.name {
                params::NOISE_VARIANCE => state.likelihood.hold(&start.likelihood),
                PseudoNoise::NAME => state.h.clone_from(&start.h),
                name if name == INDUCING_INPUTS.name => state.z.copy_from(&start.z),
                name => state.kernel.hold_block(&*start.kernel, name),
            }
        }
    }

    fn init(
        &self,
        data: &TrainData,
        spec: &ValidRunSpec,
        hyper: Hyper,
        _ctx: &RunContext,
        rng: &mut ChaCha8Rng,
    ) -> Result<ModelFile> {
        let z = initial_points(&data.x, spec.m, spec.options.inducing_init(), &hyper, rng)?;
        let mut model = ModelFile::new(&spec.method, hyper);
        set_inducing_points(&mut model, &z);
        if self.hetero {
            model.set(&initial_pseudo_noise(
                z.nrows(),
                model.hyper.signal_variance,
            ));
        }
        Ok(model)
    }

    fn check(&self, model: &ModelFile) -> Result<usize> {
        // the stored rows where they are well formed (no allocation: every evaluation
        // checks), else the checked read and its located error
        let d = model.kernel_dim();
        let m = match model.stored_rows::<Inducing>("points", d) {
            Some(rows) => rows.len(),
            None => inducing_points(model)?.nrows(),
        };
        if self.hetero {
            pseudo_noise(model, m)?;
        }
        Ok(m)
    }

    fn tail_blocks(&self) -> &'static [TailBlock] {
        if self.hetero {
            &HETERO_BLOCKS
        } else {
            std::slice::from_ref(&INDUCING_INPUTS)
        }
    }

    fn pack(&self, model: &ModelFile) -> Vec<f64> {
        let mut theta = pack_hyper_and(model, inducing_points(model).ok());
        if self.hetero {
            pack_pseudo_noise(model, &mut theta);
        }
        theta
    }

    fn unpack(&self, theta: &[f64], model: &mut ModelFile) {
        if !self.hetero {
            let z = unpack_hyper_and(theta, model);
            set_inducing_points(model, &z);
            return;
        }
        // [hyper, Z (m×D), log h (m)]: m = (len − head)/(D + 1)
        let d = model.kernel_dim();
        let m = theta.len().saturating_sub(super::hyper::head_len(model)) / (d + 1);
        let (head, log_h) = theta.split_at(theta.len() - m);
        let z = unpack_hyper_and(head, model);
        set_inducing_points(model, &z);
        model.set(&PseudoNoise {
            h: log_h.iter().map(|v| v.exp()).collect(),
        });
    }

    fn tables(&self) -> &'static [&'static str] {
        if self.hetero {
            &[Inducing::NAME, PseudoNoise::NAME]
        } else {
            &[Inducing::NAME]
        }
    }

    fn input_dims(&self, model: &ModelFile) -> Vec<Witness> {
        let mut w = vec![Witness::lengthscales(model)];
        w.extend(Witness::rows(model, Inducing::NAME, "points"));
        w
    }

    /// The pseudo-inputs; SPGP+HS's sized by how far their pseudo-noise leaves them
    /// switched on.
    fn markers(&self, model: &ModelFile, input: usize) -> Result<Markers> {
        let z = inducing_points(model)?;
        if input >= z.ncols() {
            return Ok(Markers::default());
        }
        let sizes = if self.hetero {
            pseudo_noise_sizes(
                model.hyper.signal_variance,
                &pseudo_noise(model, z.nrows())?,
            )
        } else {
            Vec::new()
        };
        Ok(Markers {
            at: z.column(input).iter().copied().collect(),
            caption: if self.hetero {
                "inducing points (small: large h)".into()
            } else {
                "inducing points".into()
            },
            sizes,
        })
    }

    fn feature_work(&self, model: &ModelFile, n: usize, builds: f64) -> Option<f64> {
        use crate::kernel::{contract_ops, fill_ops};
        let (m, d) = (
            inducing_points(model).ok()?.nrows() as f64,
            model.kernel_dim(),
        );
        // Kuf (n×m) and Kuu (m×m) built, and both contracted (Kuu for both its sides)
        let kuf = n as f64 * m * (builds * fill_ops(d) + contract_ops(d, false));
        let kuu = m * m * (builds * fill_ops(d) + contract_ops(d, true));
        Some(kuf + kuu)
    }

    fn parts(
        &self,
        state: &PseudoState,
        x: &DMatrix<f64>,
        _for_gradient: bool,
        exec: &Exec,
    ) -> Result<(Parts, PseudoExtra)> {
        let s = &exec.scratch;
        let (k, z) = (&*state.kernel, &state.z);
        let mut kuu = k.matrix_in(z, z, exec.par, s);
        let kernel_kuu = state
            .h
            .as_ref()
            .map(|h| add_pseudo_noise_in(&mut kuu, h, s));
        let parts = Parts {
            kuf: k.matrix_in(z, x, exec.par, s),
            kuu: KuuMatrix::Dense(kuu),
            kdiag: k.diag_in(x, s),
            jitter: state.jitter_policy(),
        };
        Ok((parts, PseudoExtra { kernel_kuu }))
    }

    fn pull_back(
        &self,
        state: &PseudoState,
        x: &DMatrix<f64>,
        parts: &Parts,
        extra: PseudoExtra,
        adj: &Adjoints,
        exec: &Exec,
    ) -> Result<Vec<f64>> {
        let mut grad = Vec::new();
        self.pull_back_into(state, x, parts, extra, adj, exec, &mut grad)?;
        Ok(grad)
    }

    fn pull_back_into(
        &self,
        state: &PseudoState,
        x: &DMatrix<f64>,
        parts: &Parts,
        extra: PseudoExtra,
        adj: &Adjoints,
        exec: &Exec,
        grad: &mut Vec<f64>,
    ) -> Result<()> {
        let s = &exec.scratch;
        let kuu = match &extra.kernel_kuu {
            Some(k) => k,
            None => parts.dense_kuu()?,
        };
        let (k, z) = (&*state.kernel, &state.z);
        let gf = k.grad_in(z, x, &parts.kuf, &adj.d_kuf, true, false, exec.par, s);
        let gu = k.grad_in(z, z, kuu, &adj.d_kuu, true, true, exec.par, s);
        // D is the kernel's input space (pca-spgp projects the data first)
        let (m, d) = (z.nrows(), z.ncols());
        // θ: the kernel's blocks in their own order, log(σ² − floor) (Gaussian only), X̄ (m×D,
        // column-major), then log h (SPGP+HS)
        let noise = k.params_len();
        let first = noise + state.likelihood.packed_len();
        let points = first..first + m * d;
        if grad.is_empty() {
            grad.resize(points.end + state.h.as_ref().map_or(0, Vec::len), 0.0);
        }
        // the kernel's: Kuf's and Kuu's contractions, the prior diagonal's, and the
        // automatic jitter's (it scales with the prior variance)
        let mut kg = s.take(noise);
        for ((t, a), b) in kg.iter_mut().zip(&gf.params).zip(&gu.params) {
            *t = a + b;
        }
        k.diag_grad(x, &adj.d_kdiag, &mut kg);
        k.log_prior_variance_grad(jitter_grad(parts.jitter, adj.jitter, &adj.d_kuu), &mut kg);
        for (g, t) in grad.iter_mut().zip(&kg) {
            *g += t;
        }
        s.give(kg);
        if let Some(g) = state.likelihood.grad(adj.d_noise) {
            grad[noise] += g;
        }
        if let (Some(a), Some(b), Some(c)) = (&gf.a, &gu.a, &gu.b) {
            let sums = a.iter().zip(b.iter()).zip(c.iter());
            for (g, ((a, b), c)) in grad[points.clone()].iter_mut().zip(sums) {
                *g += a + b + c;
            }
        }
        if let Some(h) = &state.h {
            for (g, v) in grad[points.end..].iter_mut().zip(pseudo_noise_grad(h, adj)) {
                *g += v;
            }
        }
        gf.recycle(s);
        gu.recycle(s);
        self.recycle(extra, s);
        Ok(())
    }

    fn recycle(&self, extra: PseudoExtra, scratch: &Scratch) {
        if let Some(k) = extra.kernel_kuu {
            scratch.give_matrix(k);
        }
    }
}
