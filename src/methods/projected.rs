//! SPGP+DR (Snelson & Ghahramani, UAI 2006, §4; docs/methods.md §2.3): a learned linear
//! projection P (G×D) replaces the lengthscales and the pseudo-inputs live in the G
//! projected dimensions:
//! `k(x, x̄) = σ0² exp(−½‖P x − x̄‖²)`, `k(x̄, x̄') = σ0² exp(−½‖x̄ − x̄'‖²)`, kdiag = σ0².
//! So `Kuf` is the SE kernel with unit lengthscales between X̄ (m×G) and the projected
//! inputs U = X Pᵀ (n×G), and `∂NLML/∂P = (∂NLML/∂U)ᵀ X`. Parameters: log σ0², log σ²,
//! P, X̄ — (m + D)·G + 2 of them instead of SPGP's (m + 1)·D + 2. With `--hetero` each
//! pseudo-input also gets SPGP+HS's uncertainty h_j on Kuu's diagonal.
//!
//! P starts from the top G principal directions of the inputs scaled by 1/ℓ
//! (`P = V_Gᵀ diag(1/ℓ)`, V_G from the PCA of X diag(1/ℓ)), so that at G = D the model
//! starts as the ARD one (PᵀP = diag(1/ℓ²)); X̄ starts at P·(a random subset).

use super::hyper::{pack_hyper, unpack_hyper};
use super::inducing::initial_points;
use super::lowrank::{
    ApproxChoice, Family, FamilyState, KuuMatrix, LowRankMethod, MaxM, Parts, StateLikelihood,
    jitter_grad, kdiag_grad_at,
};
use super::method::ValidRunSpec;
use super::pca::{
    check_dims, check_dims_option, dims_refusal, principal_directions, project_rows, required_dims,
};
use super::pseudo::{
    Inducing, PseudoNoise, add_pseudo_noise, initial_pseudo_noise, pack_pseudo_noise, points_at,
    pseudo_noise, pseudo_noise_grad, set_inducing_points,
};
use crate::collapsed::Adjoints;
use crate::data::TrainData;
use crate::error::Location;
use crate::error::{Error, Result};
use crate::exec::Exec;
use crate::kernel::ModelKernel;
use crate::linalg::{self, Jitter};
use crate::model_file::{
    Hyper, ModelFile, ModelTable, Witness, jitter_policy, matrix_to_rows, required_matrix,
    rows_to_matrix,
};
use crate::params::{self, ParamLayout};
use crate::run_context::RunContext;
use crate::run_spec::{ApproxKind, DataShape, MethodOptions, Naming};
use crate::scratch::Scratch;
use nalgebra::DMatrix;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// `[projection] matrix`: SPGP+DR's P, G rows of D values
/// (`k(x, x̄) = σ0² exp(−½‖P x − x̄‖²)`, Snelson & Ghahramani 2006b, §4).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Projection {
    pub matrix: Vec<Vec<f64>>,
}

impl ModelTable for Projection {
    const NAME: &'static str = "projection";
}

/// Pseudo-inputs in a learned G-dimensional projection of the inputs.
pub struct Projected;

pub const SPGP_DR: LowRankMethod<Projected> = LowRankMethod {
    name: "spgp-dr",
    aliases: &["spgp+dr"],
    summary: "SPGP+DR: SPGP on a learned projection P (G×D, --dims G) of the inputs, the \
              pseudo-inputs in G dimensions; --hetero adds SPGP+HS's pseudo-noise \
              (Snelson & Ghahramani, UAI 2006)",
    m_meaning: "inducing points",
    options: &["dims", "hetero", "inducing_init"],
    approx: ApproxChoice::Fixed(ApproxKind::Fitc),
    max_m: MaxM::TrainingSize,
    family: Projected,
};

/// P (G×D) of a model.
pub fn projection(model: &ModelFile) -> Result<DMatrix<f64>> {
    let rows = model.require::<Projection>()?.matrix;
    let at = Location::key(Projection::NAME).then("matrix");
    let d = rows.first().map_or(0, Vec::len);
    if d == 0 {
        return Err(Error::at(
            at,
            "[projection] matrix is empty (it needs G rows of D values)",
        ));
    }
    let p = rows_to_matrix(&at, &rows, d)?;
    if p.nrows() > d {
        return Err(Error::at(
            at,
            format!(
                "[projection] matrix has {} rows of {d} values: G must not exceed D",
                p.nrows()
            ),
        ));
    }
    Ok(p)
}

/// The pseudo-inputs (m×G).
fn points(model: &ModelFile, g: usize) -> Result<DMatrix<f64>> {
    required_matrix(&points_at(), &model.require::<Inducing>()?.points, g)
}

/// The model's kernel on the projected space: σ0², unit lengthscales (the projection
/// carries the scales), or a kernel built from parts on the G projected inputs.
fn kernel(model: &ModelFile, g: usize) -> ModelKernel {
    match &model.composed {
        Some(_) => model.kernel(),
        None => model.hyper.kernel_with(vec![1.0; g]),
    }
}

/// `P = V_Gᵀ diag(1/ℓ)`, V_G the top G principal directions of X diag(1/ℓ).
pub fn initial_projection(x: &DMatrix<f64>, lengthscales: &[f64], g: usize) -> DMatrix<f64> {
    let scaled = DMatrix::from_fn(x.nrows(), x.ncols(), |i, d| x[(i, d)] / lengthscales[d]);
    let (_, v) = principal_directions(&scaled, g);
    DMatrix::from_fn(v.nrows(), v.ncols(), |r, d| v[(r, d)] / lengthscales[d])
}

/// The rows of a block in [`diag_point_grad`]: its work is n·ROWS kernel entries.
const DIAG_BLOCK_ROWS: usize = 64;

/// Add Σ_i adj_i ∂k(u_i, u_i)/∂u_i into `du` (n×G): the prior diagonal's gradient in the
/// projected inputs, where it varies with them (a `linear`, `polynomial` or
/// `changepoints` part). The kernel's contraction gives it: with a diagonal adjoint over
/// a block of rows, its gradients in the two sets of points are adj_i ∂₁k(u_i, u_i) and
/// adj_i ∂₂k(u_i, u_i), whose sum is the derivative of the diagonal.
fn diag_point_grad(
    k: &dyn crate::kernel::Kernel,
    u: &DMatrix<f64>,
    adj: &[f64],
    du: &mut DMatrix<f64>,
    exec: &Exec,
) {
    let n = u.nrows();
    for start in (0..n).step_by(DIAG_BLOCK_ROWS) {
        let len = DIAG_BLOCK_ROWS.min(n - start);
        let ub = u.rows(start, len).into_owned();
        let kb = k.gram(&ub, exec.par);
        let ab = DMatrix::from_fn(len, len, |i, j| if i == j { adj[start + i] } else { 0.0 });
        let gb = k.grad(&ub, &ub, &kb, &ab, true, true, exec.par);
        for (a, b) in gb.a.iter().zip(&gb.b) {
            let mut rows = du.rows_mut(start, len);
            rows += a + b;
        }
    }
}

/// What `parts` hands to the pull-back.
pub struct ProjectedExtra {
    /// The projected inputs U = X Pᵀ (n×G).
    u: DMatrix<f64>,
    /// With pseudo-noise: the kernel's Kuu without diag(h).
    kernel_kuu: Option<DMatrix<f64>>,
}

/// SPGP+DR's parameters as typed values ([`Family::State`]): read from a model once
/// (an L-BFGS fit unpacks θ into them on every evaluation), or per evaluation outside
/// a fit.
#[derive(Clone, Debug)]
pub struct ProjectedState {
    /// The model's kernel on the projected space: σ0² (and rq's α), unit lengthscales;
    /// or a kernel built from parts, all of whose parameters θ holds.
    kernel: ModelKernel,
    /// Whether the kernel is built from parts (θ's head is then its parameters).
    composed: bool,
    /// The kernel's shape parameters in θ (rq's α: 1, else 0).
    shape: usize,
    /// The automatic jitter's scale where the kernel's prior variance is not constant
    /// (the start's σ0², as [`ModelFile::jitter_policy`]).
    start_variance: f64,
    /// P (G×D).
    p: DMatrix<f64>,
    /// The pseudo-inputs X̄ (m×G).
    z: DMatrix<f64>,
    /// The pseudo-noise h (m values), with `--hetero`.
    h: Option<Vec<f64>>,
    likelihood: StateLikelihood,
    /// The model's absolute jitter, if it sets one.
    jitter: Option<f64>,
}

impl ProjectedState {
    /// σ0², the plain kernel's constant prior diagonal.
    fn signal_variance(&self) -> f64 {
        self.kernel.prior_variance().unwrap_or(self.start_variance)
    }

    /// The model's jitter policy ([`ModelFile::jitter_policy`]) at the state's kernel.
    fn jitter_policy(&self) -> Jitter {
        jitter_policy(self.jitter, self.signal_variance())
    }
}

impl FamilyState for ProjectedState {
    fn collapsed_noise(&self) -> Result<f64> {
        self.likelihood.collapsed_noise()
    }
}

impl Family for Projected {
    /// Any kernel on the G projected inputs P x: its contraction into the second set
    /// of points gives ∂/∂(P x), chained to P (docs/methods.md §2.3).
    fn takes_composed_kernel(&self) -> bool {
        true
    }

    /// Parts naming `dims` (the data's columns), before any work.
    fn refuses_kernel_expr(&self, expr: &crate::kernel::expression::KernelExpr) -> Option<String> {
        dims_refusal("spgp-dr", "the learned projections P x", expr)
    }

    fn kernel_input_name(&self) -> Option<&'static str> {
        Some("the learned projections P x")
    }

    /// The projected inputs X Pᵀ at the start's P; the parts start at unit lengthscales
    /// (P carries the data's scales, as it does for the plain kernel).
    fn kernel_inputs(
        &self,
        model: &ModelFile,
        x: &DMatrix<f64>,
    ) -> Option<Result<(DMatrix<f64>, Vec<f64>)>> {
        Some(projection(model).map(|p| (project_rows(x, &p, None), vec![1.0; p.nrows()])))
    }

    /// The default second start is an exact GP's subset fit on the columns, whose
    /// lengthscales start P; a kernel expression's values have no such map, so it runs
    /// from its own start alone.
    fn second_start(&self, options: &MethodOptions) -> bool {
        options.kernel_expression().is_none()
    }

    /// u = f(X̄) in the projected space: Kuf is k(X̄, P x).
    fn predicts_summands(&self) -> bool {
        true
    }

    fn seed_help(&self) -> &'static str {
        "the pseudo-inputs start at m random training inputs (projected) drawn with the seed"
    }

    type Extra = ProjectedExtra;
    type State = ProjectedState;

    fn state<'a>(
        &self,
        model: &'a ModelFile,
        _scratch: &Scratch,
    ) -> Result<Cow<'a, ProjectedState>> {
        let p = projection(model)?;
        let z = points(model, p.nrows())?;
        let h = if model.has::<PseudoNoise>() {
            Some(pseudo_noise(model, z.nrows())?)
        } else {
            None
        };
        Ok(Cow::Owned(ProjectedState {
            kernel: kernel(model, p.nrows()),
            composed: model.composed.is_some(),
            shape: model.hyper.kernel.shape_len(),
            start_variance: model.hyper.signal_variance,
            p,
            z,
            h,
            likelihood: StateLikelihood::of(model)?,
            jitter: model.jitter,
        }))
    }

    fn size(&self, state: &ProjectedState) -> Result<usize> {
        Ok(state.z.nrows())
    }

    /// θ in [`Family::pack`]'s order, as [`Family::unpack`] writes it into a model.
    fn unpack_state(&self, theta: &[f64], state: &mut ProjectedState) {
        let mut at = if state.composed {
            let n = state.kernel.params_len();
            state.kernel.set_log_params(&theta[..n]);
            n
        } else {
            // the kernel's log parameters: log σ0², G unit lengthscales (log 1 = 0), log α
            let g = state.p.nrows();
            let mut log = vec![0.0; 1 + g + state.shape];
            log[0] = theta[0];
            log[1 + g..].copy_from_slice(&theta[1..1 + state.shape]);
            state.kernel.set_log_params(&log);
            1 + state.shape
        };
        at += state.likelihood.unpack(&theta[at..]);
        for m in [&mut state.p, &mut state.z] {
            let n = m.len();
            m.as_mut_slice().copy_from_slice(&theta[at..at + n]);
            at += n;
        }
        if let Some(h) = &mut state.h {
            for (v, t) in h.iter_mut().zip(&theta[at..]) {
                *v = t.exp();
            }
        }
    }

    /// The shared blocks as [`ParamLayout::hold_fixed`] keeps them in a model (the
    /// family's own are one block `features`, held by its transform).
    fn hold_fixed_state(
        &self,
        layout: &ParamLayout,
        start: &ProjectedState,
        state: &mut ProjectedState,
    ) {
        for b in layout.blocks().iter().filter(|b| b.fixed) {
            match b.name {
                params::NOISE_VARIANCE => state.likelihood.hold(&start.likelihood),
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
        let g = required_dims(&spec.method, &spec.options, Naming::Flags)?;
        check_dims(&spec.method, g, data.x.ncols(), Naming::Flags)?;
        let p = initial_projection(&data.x, &hyper.lengthscales, g);
        let subset = initial_points(&data.x, spec.m, spec.options.inducing_init(), &hyper, rng)?;
        let z = project_rows(&subset, &p, None);
        let mut model = ModelFile::new(
            &spec.method,
            Hyper {
                lengthscales: Vec::new(),
                ..hyper
            },
        );
        // the tables in the order model files have always had them
        set_inducing_points(&mut model, &z);
        if spec.options.hetero {
            model.set(&initial_pseudo_noise(
                z.nrows(),
                model.hyper.signal_variance,
            ));
        }
        model.set(&Projection {
            matrix: matrix_to_rows(&p),
        });
        Ok(model)
    }

    fn check_options(
        &self,
        options: &MethodOptions,
        data: DataShape,
        naming: Naming,
    ) -> Result<()> {
        check_dims_option("spgp-dr", options, data, naming)
    }

    fn check(&self, model: &ModelFile) -> Result<usize> {
        let p = projection(model)?;
        if let Some(c) = &model.composed
            && c.kernel().dim() != p.nrows()
        {
            return Err(Error::at(
                Location::key("kernel").then("inputs"),
                format!(
                    "[kernel] inputs = {} but [projection] matrix has {} rows: the kernel \
                     reads the G projected inputs",
                    c.kernel().dim(),
                    p.nrows()
                ),
            ));
        }
        let m = points(model, p.nrows())?.nrows();
        if model.has::<PseudoNoise>() {
            pseudo_noise(model, m)?;
        }
        Ok(m)
    }

    fn uses_lengthscales(&self) -> bool {
        false
    }

    fn tables(&self) -> &'static [&'static str] {
        &[Inducing::NAME, PseudoNoise::NAME, Projection::NAME]
    }

    /// The columns of P (the pseudo-inputs live in the G projected dimensions, and no
    /// marker is drawn for them on an input's axis).
    fn input_dims(&self, model: &ModelFile) -> Vec<Witness> {
        Witness::rows(model, Projection::NAME, "matrix")
            .into_iter()
            .collect()
    }

    /// [log σ0², log σ², P (G×D), X̄ (m×G), log h (m, with pseudo-noise)], matrices
    /// column-major.
    fn pack(&self, model: &ModelFile) -> Vec<f64> {
        let mut theta = Vec::new();
        pack_hyper(model, &mut theta);
        if let Ok(p) = projection(model) {
            theta.extend_from_slice(p.as_slice());
            if let Ok(z) = points(model, p.nrows()) {
                theta.extend_from_slice(z.as_slice());
            }
        }
        pack_pseudo_noise(model, &mut theta);
        theta
    }

    /// Inverse of `pack`; the shapes are those of the model written into (a fit
    /// unpacks into copies of a checked model).
    fn unpack(&self, theta: &[f64], model: &mut ModelFile) {
        let used = unpack_hyper(theta, model);
        let (g, d) = projection(model).map_or((0, 0), |p| p.shape());
        let m = model
            .table::<Inducing>()
            .ok()
            .flatten()
            .map_or(0, |i| i.points.len());
        let rest = &theta[used..];
        let (p, rest) = rest.split_at((g * d).min(rest.len()));
        let (z, log_h) = rest.split_at((m * g).min(rest.len()));
        model.set(&Projection {
            matrix: matrix_to_rows(&DMatrix::from_column_slice(g, d, p)),
        });
        set_inducing_points(model, &DMatrix::from_column_slice(m, g, z));
        if model.has::<PseudoNoise>() {
            model.set(&PseudoNoise {
                h: log_h.iter().map(|v| v.exp()).collect(),
            });
        }
    }

    fn parts(
        &self,
        state: &ProjectedState,
        x: &DMatrix<f64>,
        _for_gradient: bool,
        exec: &Exec,
    ) -> Result<(Parts, ProjectedExtra)> {
        let (p, z, k) = (&state.p, &state.z, &state.kernel);
        if x.ncols() != p.ncols() {
            return Err(Error::input(format!(
                "the inputs have {} columns but the model's projection takes {}",
                x.ncols(),
                p.ncols()
            )));
        }
        let u = project_rows(x, p, None);
        let mut kuu = k.gram(z, exec.par);
        let kernel_kuu = state.h.as_ref().map(|h| add_pseudo_noise(&mut kuu, h));
        let kdiag = match state.composed {
            true => k.diag(&u),
            false => vec![state.signal_variance(); x.nrows()],
        };
        let parts = Parts {
            kuf: k.matrix(z, &u, exec.par),
            kuu: KuuMatrix::Dense(kuu),
            kdiag,
            jitter: state.jitter_policy(),
        };
        Ok((parts, ProjectedExtra { u, kernel_kuu }))
    }

    fn pull_back(
        &self,
        state: &ProjectedState,
        x: &DMatrix<f64>,
        parts: &Parts,
        extra: ProjectedExtra,
        adj: &Adjoints,
        exec: &Exec,
    ) -> Result<Vec<f64>> {
        let ProjectedExtra { u, kernel_kuu } = extra;
        let kuu = match &kernel_kuu {
            Some(k) => k,
            None => parts.dense_kuu()?,
        };
        let (k, z) = (&state.kernel, &state.z);
        let gf = k.grad(z, &u, &parts.kuf, &adj.d_kuf, true, true, exec.par);
        let gu = k.grad(z, z, kuu, &adj.d_kuu, true, true, exec.par);
        let (g, d, m) = (z.ncols(), x.ncols(), z.nrows());
        // the head by block, as params::Head writes a model's: log σ0² (the kernel's
        // contractions, the prior diagonal's and the automatic jitter's), the kernel's
        // shape (its last entries), no lengthscales (the projection carries the
        // scales), log(σ² − floor) where θ holds σ²
        let grads = [&gf, &gu];
        let jitter = jitter_grad(parts.jitter, adj.jitter, &adj.d_kuu);
        let mut grad = Vec::with_capacity(2 + k.params_len() + g * (d + m) + m);
        if state.composed {
            // every parameter of the kernel: Kuf's and Kuu's contractions, the prior
            // diagonal's at the projected inputs, the automatic jitter's through the
            // prior variance (as the pseudo-input family's)
            grad.extend(gf.params.iter().zip(&gu.params).map(|(a, b)| a + b));
            k.diag_grad(&u, &adj.d_kdiag, &mut grad);
            k.log_prior_variance_grad(jitter, &mut grad);
        } else {
            let extra_signal = kdiag_grad_at(state.signal_variance(), adj) + jitter;
            grad.push(grads.iter().map(|g| g.params[0]).sum::<f64>() + extra_signal);
            for s in 0..state.shape {
                grad.push(
                    grads
                        .iter()
                        .map(|g| g.params[g.params.len() - state.shape + s])
                        .sum(),
                );
            }
        }
        state.likelihood.push_grad(adj.d_noise, &mut grad);
        let (Some(mut du), Some(dz_f), Some(dz_a), Some(dz_b)) = (gf.b, gf.a, gu.a, gu.b) else {
            return Err(Error::numerical(
                "internal: the kernel's point gradients were asked for but not returned",
            ));
        };
        if state.composed && k.prior_variance().is_none() {
            diag_point_grad(&**k, &u, &adj.d_kdiag, &mut du, exec);
        }
        // ∂/∂P = (∂/∂U)ᵀ X, G×D
        let dp = linalg::mul(&du, true, x, false, exec.par);
        grad.extend_from_slice(dp.as_slice());
        grad.extend_from_slice((dz_f + dz_a + dz_b).as_slice());
        if let Some(h) = &state.h {
            grad.extend(pseudo_noise_grad(h, adj));
        }
        Ok(grad)
    }
}
