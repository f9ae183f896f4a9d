//! Inter-domain GPs (Lázaro-Gredilla & Figueiras-Vidal 2009), docs/methods.md §3: FIFGP,
//! TFIFGP and SMGP. Each only supplies the instances `Kuf = k(z, x)` and `Kuu = k(z, z')`
//! and their derivatives; the likelihood core (`k(x,x) = σ0²`) does the rest, with
//! FITC as the papers use it or another approximation (`--approx vfe|dtc|pep`). The
//! kernel is SE, or a sum of SE summands built from parts (`se_sum.rs`), whose
//! covariances are the sums of the summands'.
//!
//! Notation per dimension d: `L = ℓ_d²`, `C = c_d²` (window width, FIF/TFIF),
//! `a = C + L`, `b = 2C + L`; SMGP features have their own `q = c_jd² = L + e^ρ`.
//! FIFGP is TFIFGP with every centre at zero and runs through the same code, so the two
//! agree bit for bit there.

pub mod features;
mod se_sum;

pub use features::{Features, Kind};

use super::hyper::{pack_hyper, random_rows, unpack_hyper};
use super::lowrank::{
    ApproxChoice, Family, FamilyState, KuuMatrix, LowRankMethod, MaxM, Parts, StateLikelihood,
    jitter_grad,
};
use super::method::{Markers, ValidRunSpec};
use crate::collapsed::Adjoints;
use crate::data::TrainData;
use crate::error::Location;
use crate::error::{Error, Result};
use crate::exec::{Exec, Par};
use crate::kernel::{Kernel, KernelKind};
use crate::model_file::{Hyper, ModelFile, ModelTable, Witness, jitter_policy};
use crate::params::{self, ParamLayout};
use crate::run_context::RunContext;
use crate::run_spec::{ApproxKind, Centres};
use crate::scratch::Scratch;
use features::{Feat, Grads, Pieces};
use nalgebra::DMatrix;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::f64::consts::PI;

/// `input_mean`: subtracted from the (standardised) inputs by the methods that centre
/// them (FIFGP, TFIFGP), D values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct InputMean(pub Vec<f64>);

impl ModelTable for InputMean {
    const NAME: &'static str = "input_mean";
}

/// Inter-domain inducing features of one kind.
pub struct InterDomain {
    pub kind: Kind,
}

const SUMMARY_FIF: &str = "FIFGP: m frequency inducing features under one Gaussian window \
    (Lázaro-Gredilla & Figueiras-Vidal 2009); --approx fitc|vfe|dtc|pep";
const SUMMARY_TFIF: &str = "TFIFGP: m time-frequency inducing features, each window with its \
    own centre (Lázaro-Gredilla & Figueiras-Vidal 2009); --centres zero|subset, --approx";
const SUMMARY_SM: &str = "SMGP: m multiscale Gaussian inducing features, own centre and widths \
    (Walder et al. 2008, as an IDGP); --approx fitc|vfe|dtc|pep";

const fn inter_domain(
    name: &'static str,
    summary: &'static str,
    options: &'static [&'static str],
    kind: Kind,
) -> LowRankMethod<InterDomain> {
    LowRankMethod {
        name,
        aliases: &[],
        summary,
        m_meaning: "inducing features",
        options,
        approx: ApproxChoice::Option(ApproxKind::Fitc),
        max_m: MaxM::TrainingSize,
        family: InterDomain { kind },
    }
}

pub const FIFGP: LowRankMethod<InterDomain> =
    inter_domain("fifgp", SUMMARY_FIF, &["approx", "alpha"], Kind::Fif);
pub const TFIFGP: LowRankMethod<InterDomain> = inter_domain(
    "tfifgp",
    SUMMARY_TFIF,
    &["centres", "approx", "alpha"],
    Kind::Tfif,
);
pub const SMGP: LowRankMethod<InterDomain> =
    inter_domain("smgp", SUMMARY_SM, &["approx", "alpha"], Kind::Sm);

/// The inputs in the model's frame (minus `input_mean`), as D×n columns.
fn model_columns(mean: &[f64], x: &DMatrix<f64>) -> Result<DMatrix<f64>> {
    let d = mean.len();
    if x.ncols() != d {
        return Err(Error::input(format!(
            "the inputs have {} columns but the model's kernel reads {d}",
            x.ncols()
        )));
    }
    Ok(DMatrix::from_fn(d, x.nrows(), |t, i| x[(i, t)] - mean[t]))
}

/// The model's `input_mean`, checked (zeros where it has none).
fn input_mean(model: &ModelFile) -> Result<Vec<f64>> {
    let d = model.kernel_dim();
    match model.table::<InputMean>()? {
        Some(InputMean(v)) if v.len() == d && v.iter().all(|x| x.is_finite()) => Ok(v),
        Some(_) => Err(Error::at(
            Location::key(InputMean::NAME),
            format!("input_mean must hold {d} finite values (one per input)"),
        )),
        None => Ok(vec![0.0; d]),
    }
}

/// An m×D block packed column-major, like fitc's pseudo-inputs.
fn push_block(out: &mut Vec<f64>, a: &DMatrix<f64>) {
    out.extend_from_slice(a.as_slice());
}

/// The inverse of [`push_block`], as m rows.
fn read_block(theta: &[f64], m: usize, d: usize) -> Vec<Vec<f64>> {
    let a = DMatrix::from_column_slice(m, d, &theta[..m * d]);
    crate::model_file::matrix_to_rows(&a)
}

/// Column means and sample standard deviations of x.
fn mean_sd(x: &DMatrix<f64>) -> (Vec<f64>, Vec<f64>) {
    let n = x.nrows() as f64;
    let mean: Vec<f64> = (0..x.ncols()).map(|d| x.column(d).mean()).collect();
    let sd = (0..x.ncols())
        .map(|d| {
            let ss: f64 = x.column(d).iter().map(|v| (v - mean[d]).powi(2)).sum();
            let s = (ss / (n - 1.0).max(1.0)).sqrt();
            if s > 0.0 { s } else { 1.0 }
        })
        .collect();
    (mean, sd)
}

/// The kind of an inter-domain model's method.
fn kind_of(model: &ModelFile) -> Result<Kind> {
    match model.method.as_str() {
        "fifgp" => Ok(Kind::Fif),
        "tfifgp" => Ok(Kind::Tfif),
        "smgp" => Ok(Kind::Sm),
        other => Err(Error::input(format!(
            "'{other}' is not an inter-domain method"
        ))),
    }
}

/// The instances `(Kuf at x (m×t), Kuu)` of an inter-domain model (used by the tests to
/// compare with quadrature). Inputs are shifted by the model's `input_mean`.
pub fn instances(model: &ModelFile, x: &DMatrix<f64>) -> Result<(DMatrix<f64>, DMatrix<f64>)> {
    let f = Feat::new(kind_of(model)?, model)?;
    let (kuf, _) = f.kuf(&model_columns(&input_mean(model)?, x)?, false, Par::Seq);
    Ok((kuf, f.kuu(None)))
}

/// The prior variance k(x, x) of the model's kernel: σ0², or the sum of its SE
/// summands' variances.
fn prior_variance(f: &Feat) -> f64 {
    f.se.iter().map(|s| s.sf2).sum()
}

/// What `parts` keeps for `pull_back`: the inputs as columns and each summand's Kuf and
/// sine companion.
pub struct Extra {
    xt: DMatrix<f64>,
    pieces: Pieces,
}

/// The kernel of an inter-domain model: the plain SE kernel's σ0² and ℓ (θ's head), or a
/// sum of SE summands built from parts.
#[derive(Clone, Debug)]
enum SeKernel {
    Plain {
        signal_variance: f64,
        lengthscales: Vec<f64>,
    },
    Composed(Box<dyn Kernel>),
}

/// The inter-domain families' parameters as typed values ([`Family::State`]): read from
/// a model once (an L-BFGS fit unpacks θ into them on every evaluation), or for one
/// evaluation outside a fit.
#[derive(Clone, Debug)]
pub struct InterDomainState {
    kernel: SeKernel,
    /// The features: the values `[features]` keeps and what they and the kernel give.
    feat: Feat,
    input_mean: Vec<f64>,
    likelihood: StateLikelihood,
    /// The model's absolute jitter, if it sets one.
    jitter: Option<f64>,
    /// The automatic jitter's scale where the kernel's prior variance is not constant
    /// (a model's `[hyper] signal_variance`, which a composed kernel's θ does not hold).
    signal_variance: f64,
    /// The method's name, for the messages of a kernel it cannot use.
    method: String,
    /// Why the features cannot be evaluated at the last θ unpacked (SMGP: a width no
    /// longer above its lengthscale), as the model file's read would refuse them.
    broken: Option<String>,
}

impl InterDomainState {
    /// The kernel's summands and what the features derive from them, after θ or a fixed
    /// block changed the values.
    fn derive(&mut self) {
        let (se, ls) = match &self.kernel {
            SeKernel::Plain {
                signal_variance,
                lengthscales,
            } => (
                Ok(se_sum::plain(*signal_variance, lengthscales)),
                lengthscales.as_slice(),
            ),
            SeKernel::Composed(k) => (se_sum::composed(&**k, &self.method), &[][..]),
        };
        let derived = se.and_then(|se| {
            self.feat.se = se;
            self.feat.derive(ls)
        });
        self.broken = derived.err().map(|e| e.to_string());
    }

    /// The jitter policy of [`ModelFile::jitter_policy`] at the state's kernel.
    fn jitter_policy(&self) -> crate::linalg::Jitter {
        let scale = match &self.kernel {
            SeKernel::Plain {
                signal_variance, ..
            } => *signal_variance,
            SeKernel::Composed(k) => k.prior_variance().unwrap_or(self.signal_variance),
        };
        jitter_policy(self.jitter, scale)
    }
}

impl FamilyState for InterDomainState {
    fn collapsed_noise(&self) -> Result<f64> {
        self.likelihood.collapsed_noise()
    }
}

impl Family for InterDomain {
    /// Sums of SE summands (docs/methods.md §3, "Kernels built from parts").
    fn takes_composed_kernel(&self) -> bool {
        true
    }

    /// A feature is a linear functional of f = Σ_j f_j, so Cov(u, f_j(x*)) is summand
    /// j's share of the closed form — the features of the model with summand j alone as
    /// its kernel (the default [`Family::summand_cross`]), the same windows and
    /// frequencies; its prior variance is summand j's (docs/methods.md "Seeing the
    /// parts").
    fn predicts_summands(&self) -> bool {
        true
    }

    /// Anything but a sum of SE summands, naming the part, before any work.
    fn refuses_kernel_expr(&self, expr: &crate::kernel::expression::KernelExpr) -> Option<String> {
        let name = match self.kind {
            Kind::Fif => "fifgp",
            Kind::Tfif => "tfifgp",
            Kind::Sm => "smgp",
        };
        se_sum::refusal(expr).map(|why| format!("method '{name}' cannot use it: {why}"))
    }

    /// SMGP's windows as their own standard deviations once the kernel is a sum (no
    /// single ℓ to write c² = ℓ² + s² against): `init` set c² = 2ℓ², so s = c/√2 = ℓ,
    /// the start's lengthscales.
    fn init_for_kernel(
        &self,
        model: &mut ModelFile,
        _spec: &ValidRunSpec,
        _rng: &mut ChaCha8Rng,
    ) -> Result<()> {
        if self.kind != Kind::Sm || model.composed.is_none() {
            return Ok(());
        }
        let mut f = model.require::<Features>()?;
        if let Some(w) = f.widths.take() {
            f.window_sds = Some(
                w.iter()
                    .map(|r| r.iter().map(|c| c / 2f64.sqrt()).collect())
                    .collect(),
            );
        }
        model.set(&f);
        Ok(())
    }

    fn seed_help(&self) -> &'static str {
        match self.kind {
            Kind::Sm => "the feature centres start at m random training inputs drawn with the seed",
            _ => {
                "frequencies and phases are drawn with the seed (tfifgp --centres subset: \
                 the centres too)"
            }
        }
    }

    /// The inter-domain features are integrals of one process whose prior is the
    /// model's (SE) kernel on the inputs.
    fn prior_cov(&self, model: &ModelFile, x: &DMatrix<f64>, exec: &Exec) -> Option<DMatrix<f64>> {
        Some(model.kernel().gram(x, exec.par))
    }

    type Extra = Extra;
    type State = InterDomainState;

    fn state<'a>(
        &self,
        model: &'a ModelFile,
        _scratch: &Scratch,
    ) -> Result<Cow<'a, InterDomainState>> {
        let feat = Feat::new(self.kind, model)?;
        let kernel = match &model.composed {
            Some(c) => SeKernel::Composed(c.kernel().clone_box()),
            None => SeKernel::Plain {
                signal_variance: model.hyper.signal_variance,
                lengthscales: model.hyper.lengthscales.clone(),
            },
        };
        Ok(Cow::Owned(InterDomainState {
            kernel,
            feat,
            input_mean: input_mean(model)?,
            likelihood: StateLikelihood::of(model)?,
            jitter: model.jitter,
            signal_variance: model.hyper.signal_variance,
            method: model.method.clone(),
            broken: None,
        }))
    }

    fn size(&self, state: &InterDomainState) -> Result<usize> {
        Ok(state.feat.m)
    }

    /// θ in [`Family::pack`]'s order into the state, as [`Family::unpack`] writes it
    /// into a model file and [`Feat::new`] reads it back.
    fn unpack_state(&self, theta: &[f64], state: &mut InterDomainState) {
        let mut at = match &mut state.kernel {
            SeKernel::Plain {
                signal_variance,
                lengthscales,
            } => {
                *signal_variance = theta[0].exp();
                for (l, t) in lengthscales.iter_mut().zip(&theta[1..]) {
                    *l = t.exp();
                }
                1 + lengthscales.len()
            }
            SeKernel::Composed(k) => {
                let n = k.params_len();
                k.set_log_params(&theta[..n]);
                n
            }
        };
        at += state.likelihood.unpack(&theta[at..]);
        let f = &mut state.feat;
        let (m, d) = (f.m, f.d);
        let rest = &theta[at..];
        let block = |from: usize| DMatrix::from_column_slice(m, d, &rest[from..from + m * d]);
        match self.kind {
            Kind::Fif | Kind::Tfif => {
                for (c, t) in f.win.iter_mut().zip(&rest[..d]) {
                    *c = t.exp();
                }
                f.freq = block(d);
                f.phase.copy_from_slice(&rest[d + m * d..d + m * d + m]);
                if self.kind == Kind::Tfif {
                    f.cent = block(d + m * d + m);
                }
            }
            Kind::Sm => {
                f.cent = block(0);
                let rho = block(m * d);
                f.sm = match &state.kernel {
                    SeKernel::Composed(_) => rho.map(|r| (0.5 * r).exp()),
                    SeKernel::Plain { lengthscales, .. } => DMatrix::from_fn(m, d, |j, k| {
                        let l = lengthscales[k];
                        (l * l + rho[(j, k)].exp()).sqrt()
                    }),
                };
            }
        }
        state.derive();
    }

    /// The fixed shared blocks back at the start's values, exactly (the features'
    /// block is held by its transform, as [`ParamLayout::hold_fixed`] holds it).
    fn hold_fixed_state(
        &self,
        layout: &ParamLayout,
        start: &InterDomainState,
        state: &mut InterDomainState,
    ) {
        for b in layout.blocks().iter().filter(|b| b.fixed) {
            match (b.name, &mut state.kernel, &start.kernel) {
                (params::NOISE_VARIANCE, _, _) => state.likelihood.hold(&start.likelihood),
                (
                    params::SIGNAL_VARIANCE,
                    SeKernel::Plain {
                        signal_variance, ..
                    },
                    SeKernel::Plain {
                        signal_variance: from,
                        ..
                    },
                ) => *signal_variance = *from,
                (
                    params::LENGTHSCALES,
                    SeKernel::Plain { lengthscales, .. },
                    SeKernel::Plain {
                        lengthscales: from, ..
                    },
                ) => lengthscales.copy_from_slice(from),
                _ => {}
            }
        }
        state.derive();
    }

    fn init(
        &self,
        data: &TrainData,
        spec: &ValidRunSpec,
        hyper: Hyper,
        _ctx: &RunContext,
        rng: &mut ChaCha8Rng,
    ) -> Result<ModelFile> {
        let (d, m) = (data.x.ncols(), spec.m);
        let mut model = ModelFile::new(&spec.method, hyper);
        if self.kind == Kind::Sm {
            let centres = random_rows(&data.x, m, rng);
            // c² = 2ℓ² (e^ρ = ℓ²): features twice as wide as the kernel in variance,
            // comfortably inside c² > ℓ².
            let widths = vec![
                model
                    .hyper
                    .lengthscales
                    .iter()
                    .map(|l| l * 2f64.sqrt())
                    .collect::<Vec<_>>();
                centres.nrows()
            ];
            model.set(&Features {
                centres: Some(crate::model_file::matrix_to_rows(&centres)),
                widths: Some(widths),
                ..Default::default()
            });
            return Ok(model);
        }
        let centring = spec.options.centres.unwrap_or(Centres::Zero);
        let (mean, sd) = mean_sd(&data.x);
        let mut freq = vec![vec![0.0; d]; m];
        for (t, l) in model.hyper.lengthscales.iter().enumerate() {
            let normal = Normal::new(0.0, 1.0 / l)
                .map_err(|e| Error::numerical(format!("frequency distribution: {e}")))?;
            for row in freq.iter_mut() {
                row[t] = normal.sample(rng);
            }
        }
        let phases = (0..m).map(|_| rng.random_range(0.0..2.0 * PI)).collect();
        let centres = (self.kind == Kind::Tfif).then(|| {
            if centring == Centres::Subset {
                let xc = DMatrix::from_fn(data.x.nrows(), d, |i, t| data.x[(i, t)] - mean[t]);
                crate::model_file::matrix_to_rows(&random_rows(&xc, m, rng))
            } else {
                vec![vec![0.0; d]; m]
            }
        });
        model.set(&InputMean(mean));
        model.set(&Features {
            window_widths: Some(sd),
            frequencies: Some(freq),
            phases: Some(phases),
            centres,
            ..Default::default()
        });
        Ok(model)
    }

    fn refuses_kernel(&self, kind: KernelKind) -> Option<String> {
        (!kind.is_se()).then(|| {
            format!(
                "the inter-domain features are the SE kernel integrated against Gaussian \
                 windows, which has a closed form only for the SE kernel (none for {kind}); \
                 use --kernel se (or a sum of se parts, --kernel \"se + se(dims=[0])\"), or \
                 an inducing-point method (fitc, vfe, ...) with {kind}"
            )
        })
    }

    fn check(&self, model: &ModelFile) -> Result<usize> {
        let f = Feat::new(self.kind, model)?;
        input_mean(model)?;
        Ok(f.m)
    }

    fn tables(&self) -> &'static [&'static str] {
        &[InputMean::NAME, Features::NAME]
    }

    fn input_dims(&self, model: &ModelFile) -> Vec<Witness> {
        let mut w = vec![Witness::lengthscales(model)];
        w.extend(Witness::list(model, "", InputMean::NAME));
        for key in ["frequencies", "centres", "widths", "window_sds"] {
            w.extend(Witness::rows(model, Features::NAME, key));
        }
        w
    }

    /// The feature centres (TFIFGP, SMGP; FIFGP's window sits at `input_mean`).
    fn markers(&self, model: &ModelFile, input: usize) -> Result<Markers> {
        let Some(centres) = model.require::<Features>()?.centres else {
            return Ok(Markers::default());
        };
        let shift = input_mean(model)?.get(input).copied().unwrap_or(0.0);
        Ok(Markers {
            at: centres
                .iter()
                .filter_map(|r| r.get(input))
                .map(|v| v + shift)
                .collect(),
            sizes: Vec::new(),
            caption: "feature centres".into(),
        })
    }

    /// [log σ0², log ℓ, log σ²] then FIF/TFIF: [log c (D), ω (m×D), ω0 (m), μ (m×D, TFIF)],
    /// SMGP: [μ (m×D), ρ (m×D)] with c² = ℓ² + e^ρ.
    fn pack(&self, model: &ModelFile) -> Vec<f64> {
        let mut theta = Vec::new();
        pack_hyper(model, &mut theta);
        let Ok(f) = Feat::new(self.kind, model) else {
            return theta;
        };
        match self.kind {
            Kind::Fif | Kind::Tfif => {
                theta.extend(f.win2.iter().map(|c| 0.5 * c.ln()));
                push_block(&mut theta, &f.freq);
                theta.extend_from_slice(&f.phase);
                if self.kind == Kind::Tfif {
                    push_block(&mut theta, &f.cent);
                }
            }
            Kind::Sm => {
                push_block(&mut theta, &f.cent);
                push_block(&mut theta, &f.excess.map(f64::ln));
            }
        }
        theta
    }

    fn unpack(&self, theta: &[f64], model: &mut ModelFile) {
        let used = unpack_hyper(theta, model);
        let d = model.kernel_dim();
        let rest = &theta[used..];
        let mut features = Features::default();
        match self.kind {
            Kind::Fif | Kind::Tfif => {
                let per = if self.kind == Kind::Tfif {
                    2 * d + 1
                } else {
                    d + 1
                };
                let m = rest.len().saturating_sub(d) / per;
                features.window_widths = Some(rest[..d].iter().map(|v| v.exp()).collect());
                features.frequencies = Some(read_block(&rest[d..], m, d));
                features.phases = Some(rest[d + m * d..d + m * d + m].to_vec());
                if self.kind == Kind::Tfif {
                    features.centres = Some(read_block(&rest[d + m * d + m..], m, d));
                }
            }
            Kind::Sm => {
                let m = rest.len() / (2 * d);
                features.centres = Some(read_block(rest, m, d));
                let rho = read_block(&rest[m * d..], m, d);
                if model.composed.is_some() {
                    features.window_sds = Some(
                        rho.iter()
                            .map(|r| r.iter().map(|r| (0.5 * r).exp()).collect())
                            .collect(),
                    );
                    model.set(&features);
                    return;
                }
                let ell = &model.hyper.lengthscales;
                features.widths = Some(
                    rho.iter()
                        .map(|r| {
                            r.iter()
                                .zip(ell)
                                .map(|(r, l)| (l * l + r.exp()).sqrt())
                                .collect()
                        })
                        .collect(),
                );
            }
        }
        model.set(&features);
    }

    fn parts(
        &self,
        state: &InterDomainState,
        x: &DMatrix<f64>,
        for_gradient: bool,
        exec: &Exec,
    ) -> Result<(Parts, Extra)> {
        if let Some(why) = &state.broken {
            return Err(Error::input(why.clone()));
        }
        let f = &state.feat;
        let xt = model_columns(&state.input_mean, x)?;
        let (kuf, pieces) = f.kuf(&xt, for_gradient, exec.par);
        let parts = Parts {
            kuf,
            kuu: KuuMatrix::Dense(f.kuu(None)),
            kdiag: vec![prior_variance(f); x.nrows()],
            jitter: state.jitter_policy(),
        };
        Ok((parts, Extra { xt, pieces }))
    }

    fn pull_back(
        &self,
        state: &InterDomainState,
        x: &DMatrix<f64>,
        parts: &Parts,
        extra: Extra,
        adj: &Adjoints,
        exec: &Exec,
    ) -> Result<Vec<f64>> {
        let Extra { xt, pieces } = extra;
        let f = &state.feat;
        let mut g = Grads::zeros(f.d, f.m, f.se.len());
        f.kuf_grad(&adj.d_kuf, &parts.kuf, &pieces, &xt, &mut g, exec.par);
        f.kuu(Some((&adj.d_kuu, &mut g)));
        let extra_signal = jitter_grad(parts.jitter, adj.jitter, &adj.d_kuu);
        let mut grad = Vec::with_capacity(2 + f.d * (2 * f.m + 2) + f.m);
        match &state.kernel {
            SeKernel::Composed(k) => {
                // the summands' gradients into the kernel's θ, then the prior diagonal's
                // (through the kernel) and the jitter's (through its prior variance), in
                // the order of `params::Head::grad`
                let params = se_sum::kernel_grad(&f.se, &g.se, k.params_len());
                let mut kdiag = vec![0.0; k.params_len()];
                k.diag_grad(x, &adj.d_kdiag, &mut kdiag);
                grad.resize(k.params_len(), 0.0);
                for p in [&params, &kdiag] {
                    grad.iter_mut().zip(p).for_each(|(o, v)| *o += v);
                }
                k.log_prior_variance_grad(extra_signal, &mut grad);
            }
            SeKernel::Plain {
                signal_variance, ..
            } => {
                // Back to the packed (log) coordinates: ∂/∂log ℓ = 2ℓ² ∂/∂ℓ², same for c;
                // ∂/∂log σ0² through the constant prior diagonal kdiag = σ0²
                let se = &g.se[0];
                let kdiag = signal_variance * adj.d_kdiag.iter().sum::<f64>();
                grad.push(se.sf2 + kdiag + extra_signal);
                grad.extend(
                    se.ell2
                        .iter()
                        .zip(&f.se[0].ell2)
                        .map(|(g, l)| 2.0 * l.unwrap_or(0.0) * g),
                );
            }
        }
        state.likelihood.push_grad(adj.d_noise, &mut grad);
        match self.kind {
            Kind::Fif | Kind::Tfif => {
                grad.extend(g.win2.iter().zip(&f.win2).map(|(g, c)| 2.0 * c * g));
                push_block(&mut grad, &g.freq);
                grad.extend_from_slice(&g.phase);
                if self.kind == Kind::Tfif {
                    push_block(&mut grad, &g.cent);
                }
            }
            Kind::Sm => {
                push_block(&mut grad, &g.cent);
                push_block(&mut grad, &g.rho);
            }
        }
        Ok(grad)
    }
}
