//! Greedy basis selection (matching pursuit) for a DTC model, docs/methods.md §6 and
//! Keerthi & Chu, *A matching pursuit approach to sparse GP regression* (NIPS 2005).
//!
//! The model is DTC with `Kfu = K(X, X_I)`, `Kuu = K_I` for a subset I of the training
//! points, |I| = d_max = m, grown one point at a time at fixed σ0², ℓ, σ². With
//! `M = σ² K̂_I + K_I,· K_·,I` (K̂_I = K_I + jitter·I, the jitter of every Kuu in sgpw,
//! docs/methods.md §1.2) the solution is `α_I = M⁻¹ K_I,· y`, the minimiser of
//! `π̃(α_I) = ½ α_Iᵀ M α_I − yᵀ K_·,I α_I`. [`Incremental`] keeps it in the whitened
//! form of the likelihood core — `G = chol(K̂_I)`, `Q = K_·,I G⁻ᵀ`,
//! `L_A = chol(σ²I + QᵀQ)` (so chol(M) = G L_A) and `P = Q L_A⁻ᵀ = K_·,I chol(M)⁻ᵀ` —
//! each grown by one row or column per step (O(n·d)), with `γ = Pᵀy`, the fitted values
//! `μ = K_·,I α_I = P γ`, the residual `y − μ` and the row norms ‖Q_i‖², ‖P_i‖², so the
//! DTC latent variance at every training point, `v_i = σ0² − ‖Q_i‖² + σ² ‖P_i‖²`, is O(1).
//! (Growing chol(M) directly, as the paper writes it, loses all accuracy once σ² times
//! the jitter falls below ε‖K_·,j‖² — long lengthscales, small noise: elevators.)
//!
//! Nothing is refactorised from scratch: O(n·d) per step, O(n·d_max²) in all. The DTC
//! evidence after each step is O(1) from these
//! (`yᵀC⁻¹y = (yᵀy − ‖γ‖²)/σ²`, `log|C| = (n−d) log σ² + log|σ²I + QᵀQ|`), and so is
//! the VFE bound (`+ (n σ0² − Σ‖Q_i‖²)/(2σ²)`); the run's objective is reported as its
//! progress, so the evidence chart draws it against the number of basis points.
//!
//! Scores of a candidate i ∉ I (kernel column `r = K_·,i`):
//! - RAND: none, a random point;
//! - INFO: the relative entropy of docs/methods.md §6.2 from μ_i, v_i, y_i, σ² (O(1));
//! - KAPPA / DMAX (post-backfitting, the paper's eqs. 7–8): with α_I fixed, the 1-D
//!   optimum of α_i decreases π by `Δ_i = ½ (rᵀ(y − μ) − σ² μ_i)² / (σ² K̂_ii + rᵀr)`
//!   (O(n)), scored on a cache of c = κ or c = d_max kernel rows; each step takes the
//!   best, keeps the best-scored rest and replaces the chosen and the κ − 1 lowest by κ
//!   fresh random points from outside I and the cache;
//! - SB (Smola & Bartlett): the exact decrease when α_I and α_i are re-optimised
//!   together, `½ γ_new²` with γ_new the entry γ would gain (O(n·d)), over κ fresh
//!   random candidates per step.
//!
//! `--adapt K` alternates K times (1) a selection at fixed σ0², ℓ, σ² and (2) an L-BFGS
//! fit of σ0², ℓ, σ² at fixed I; the cache of the next selection starts from the kernel
//! rows of the previous basis (the paper's §4). The objective of (2), and the one every
//! greedy run reports, is Titsias's bound (`approx`, default vfe): the DTC evidence
//! plus `tr(K − Q)/(2σ²)`. The posterior the selection computes (and predicts with, the
//! projected-process predictive with its prior term σ0² − Q**) is exactly the optimal
//! posterior of that bound, so (2) fits the model that predicts. The DTC evidence the
//! paper's §4 writes (`approx = "dtc"`) is the exact evidence of the degenerate model
//! K_·I K_I⁻¹ f_I, which has no prior term: it cannot see σ0² − Q, and fitted at a
//! basis that does not span the kernel it doubles σ0² (kin40k, d_max = 500), so every
//! predictive variance doubles with it (docs/results/greedy-adaptation.md). The
//! objective, its gradient, the posterior and prediction all go through the core with
//! the selected X_I as the pseudo-input family's typed state (`eigen::basis_state`,
//! held fixed), with VFE or DTC: the selection's algebra above is the method, never a
//! second likelihood core, and the model is never rewritten as another method's.

mod incremental;
mod select;

pub use incremental::{Column, Incremental};
pub use select::{Config, KAPPA, Selected, objective_kind, select};

use super::eigen::{Basis, basis_dims, basis_markers, basis_points, basis_state, set_basis_points};
use super::hyper::{head_len, pack_hyper, random_rows, stage_budget, unpack_hyper};
use super::lowrank::{Family, LowRankMethod};
use super::method::Markers;
use super::method::{Method, Objective, TypedModel, ValidRunSpec};
use super::pseudo::{self, PLAIN, PseudoInputs};
use crate::collapsed::{Approx, Posterior};
use crate::data::TrainData;
use crate::error::Location;
use crate::error::{Error, Result};
use crate::exec::Exec;
use crate::linalg;
use crate::model_file::{Hyper, ModelFile, ModelTable, Witness};
use crate::optim::{Control, Outcome, Stop};
use crate::params::ParamLayout;
use crate::run_context::{Phase, RunContext};
use crate::run_spec::{ApproxKind, DataShape, MethodOptions, Naming, Select};
use crate::scratch::Scratch;
use nalgebra::DMatrix;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// The selection's random stream: the run's seed on a stream of its own, so the draws
/// of the subset fit (in init) and of the selection do not overlap.
const SELECT_STREAM: u64 = 0x6772_6565_6479;

/// The greedy method.
pub struct Greedy;

pub const GREEDY: Greedy = Greedy;

/// `[greedy]`: how greedy selected its basis points. `[basis] points` holds the selected
/// inputs themselves, so prediction needs no training data; this table is
/// informational except for the check that `order` matches them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GreedyTable {
    pub select: Select,
    /// Training rows (0-based, of the data the model was fitted on) of the basis points,
    /// in the order they were selected; `[basis] points` lists their inputs in this order.
    pub order: Vec<usize>,
    /// Rounds of model adaptation (0: σ0², ℓ, σ² fixed during selection).
    #[serde(default)]
    pub adapt: usize,
    /// Seconds spent selecting (all rounds; without the subset fit and the
    /// hyperparameter fits of adaptation).
    #[serde(default)]
    pub select_seconds: f64,
    /// Kernel rows K(X, x_i) computed during selection (all rounds).
    #[serde(default)]
    pub kernel_rows: usize,
}

impl ModelTable for GreedyTable {
    const NAME: &'static str = "greedy";
}

/// The selection rule of a run (default DMAX, the paper's recommendation).
fn rule(options: &MethodOptions) -> Select {
    options.select.unwrap_or(Select::Dmax)
}

/// The approximation of the greedy model's objective — Titsias's bound, or with
/// `approx = "dtc"` the DTC evidence — and the pseudo-input method (the family with it)
/// that evaluates it at the basis state ([`basis_state`]).
fn evidence(model: &ModelFile) -> (&'static LowRankMethod<PseudoInputs>, Approx) {
    match objective_kind(model) {
        ApproxKind::Dtc => (&pseudo::DTC, Approx::Dtc),
        _ => (&pseudo::VFE, Approx::Vfe),
    }
}

/// An adaptation round's fit at the selected basis ([`Method::typed_fit`]): θ is the
/// shared blocks alone, unpacked into the basis state (the pseudo-input family's θ with
/// the basis after them, held where it is); the gradient is cut back to the shared
/// blocks, as [`Greedy::objective_into`] cuts it.
struct AtBasis<'a> {
    core: Box<dyn TypedModel + 'a>,
    /// The pseudo-input family's θ: the shared blocks, then the basis (column-major).
    theta: Vec<f64>,
    head: usize,
}

impl TypedModel for AtBasis<'_> {
    fn unpack(&mut self, theta: &[f64], layout: &ParamLayout) {
        self.theta[..self.head].copy_from_slice(theta);
        self.core.unpack(&self.theta, layout);
    }

    fn objective_into(
        &self,
        data: &TrainData,
        exec: &Exec,
        grad: &mut Vec<f64>,
    ) -> Result<(f64, f64)> {
        let out = self.core.objective_into(data, exec, grad);
        grad.truncate(self.head);
        out
    }
}

/// k(x, x), the same at every x for the kernels greedy takes: σ0², or a composed
/// kernel's constant prior variance (the selection's algebra, `incremental.rs`, holds
/// it as one number; [`Greedy::refuses_kernel_parts`] refuses the parts whose k(x, x)
/// varies with x).
pub fn prior_variance(model: &ModelFile) -> f64 {
    model
        .composed
        .as_ref()
        .and_then(|c| c.kernel().prior_variance())
        .unwrap_or(model.hyper.signal_variance)
}

/// The rows `order` of the training inputs as basis points, with the greedy table.
fn with_basis(model: &mut ModelFile, data: &TrainData, order: &[usize]) {
    let b = DMatrix::from_fn(order.len(), data.x.ncols(), |a, d| data.x[(order[a], d)]);
    set_basis_points(model, &b);
}

impl Method for Greedy {
    fn name(&self) -> &'static str {
        "greedy"
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["matching-pursuit"]
    }
    /// Its posterior is DTC's over the values at the basis points (`cross` is K(B, x*)
    /// through [`basis_state`]), so summand j's is Cov(u, f_j(x*)) = K_j(B, x*), as the
    /// pseudo-input family's.
    fn predicts_summands(&self) -> bool {
        true
    }
    fn second_start(&self, options: &MethodOptions) -> bool {
        options.adapt.is_some()
    }
    fn fits_by_lbfgs(&self, options: &MethodOptions) -> bool {
        options.adapt.is_some_and(|k| k > 0)
    }
    fn summary(&self) -> &'static str {
        "greedy basis selection for DTC (Keerthi & Chu, NIPS 2005): m = d_max training points \
         chosen one at a time by --select rand|info|kappa|dmax|sb (default dmax) at fixed \
         σ0², ℓ, σ² (--hyper-from-subset N), or --adapt K rounds of selection and \
         hyperparameter fits"
    }
    fn m_meaning(&self) -> &'static str {
        "basis points (d_max training points)"
    }
    fn progress_unit(&self) -> &'static str {
        "basis point"
    }
    fn options(&self) -> &'static [&'static str] {
        &[
            "select",
            "adapt",
            "approx",
            "hyper_from_subset",
            "discard_cache",
        ]
    }
    fn model_tables(&self) -> &'static [&'static str] {
        &[Basis::NAME, GreedyTable::NAME]
    }
    /// The selection's Kuf and Kuu are kernel rows at training points and the fits go
    /// through dtc or vfe: any kernel whose k(x, x) is one number ([`prior_variance`]).
    fn takes_composed_kernel(&self) -> bool {
        true
    }
    fn refuses_kernel_parts(&self, parts: &[&str]) -> Option<String> {
        let varying = parts
            .iter()
            .find(|p| matches!(**p, "linear" | "polynomial" | "changepoints"))?;
        Some(format!(
            "method 'greedy' updates its selection with k(x, x) as one number (the prior \
             variance, the same at every x), and the part '{varying}' makes k(x, x) vary with \
             x; use a stationary expression (se, matern, rq, periodic, constant, white, \
             spectral_mixture parts) or a method that takes any kernel (fitc, vfe, svgp, \
             nystrom-opt)"
        ))
    }
    fn input_dims(&self, model: &ModelFile) -> Vec<Witness> {
        basis_dims(model)
    }
    fn markers(&self, model: &ModelFile, input: usize) -> Result<Markers> {
        basis_markers(model, input)
    }

    fn check_options(
        &self,
        options: &MethodOptions,
        _data: DataShape,
        naming: Naming,
    ) -> Result<()> {
        // both fit a full GP on a subset for σ0², ℓ, σ²: --init-lengthscales-from-subset
        // with min(iterations, 200) iterations as for every method, --hyper-from-subset
        // with 200 whatever the budget (the paper's FIXED runs and adapted runs with a
        // smaller budget then start from the same hyperparameters)
        super::start::check_one_subset_fit("greedy", options, naming)?;
        if let Some(a @ (ApproxKind::Fitc | ApproxKind::Pep)) = options.approx {
            return Err(Error::input(format!(
                "--approx {} does not apply to greedy: its objective is vfe (the default: \
                 Titsias's bound, whose optimal posterior is the one the selection computes) \
                 or dtc (the DTC evidence of the paper's section 4)",
                a.name()
            )));
        }
        if options.discard_cache.is_some() && matches!(rule(options), Select::Rand | Select::Info) {
            return Err(Error::input(format!(
                "discard_cache{} applies to select kappa, dmax and sb; {} computes each \
                 kernel row once",
                naming.flag("discard_cache"),
                rule(options).name()
            )));
        }
        Ok(())
    }

    /// The starting hyperparameters (from the subset fit when asked) and, so that the
    /// starting model is complete, a random basis of m training points (the selection
    /// in `fit` replaces it).
    fn init(
        &self,
        data: &TrainData,
        spec: &ValidRunSpec,
        hyper: Hyper,
        ctx: &RunContext,
        rng: &mut ChaCha8Rng,
    ) -> Result<ModelFile> {
        // σ0², ℓ, σ² are never fitted without --adapt: with no other source they come
        // from a full GP on min(n, 2000) random points (the paper's FIXED setting), not
        // from the §0 defaults, which would stay as they are
        let o = &spec.options;
        let hyper =
            super::start::hyper_for_fixed_kernel(data, spec, hyper, o.adapt.is_none(), ctx, rng)?;
        let mut model = ModelFile::new(self.name(), hyper);
        // the default (vfe) is not written, as for the other methods with --approx
        model.approx = o.approx.filter(|a| *a == ApproxKind::Dtc);
        set_basis_points(&mut model, &random_rows(&data.x, spec.m, rng));
        Ok(model)
    }

    fn check(&self, model: &ModelFile) -> Result<()> {
        let m = basis_points(model)?.nrows();
        if let Some(g) = model.table::<GreedyTable>()? {
            let at = Location::key(GreedyTable::NAME).then("order");
            if g.order.len() != m {
                return Err(Error::at(
                    at,
                    format!(
                        "[greedy] order lists {} training rows but [basis] has {m} points (one \
                         row per basis point, in the order they were selected)",
                        g.order.len()
                    ),
                ));
            }
            let mut seen = std::collections::HashSet::new();
            if let Some(i) = g.order.iter().find(|i| !seen.insert(**i)) {
                return Err(Error::at(
                    at,
                    format!("[greedy] order names training row {i} twice"),
                ));
            }
        }
        if let Some(p) = &model.posterior {
            p.check(m)?;
        }
        if let Some(a @ (ApproxKind::Fitc | ApproxKind::Pep)) = model.approx {
            return Err(Error::input(format!(
                "approx = \"{}\" does not apply to a greedy model: remove the key (the \
                 VFE bound) or write approx = \"dtc\"",
                a.name()
            )));
        }
        if model.alpha.is_some() {
            return Err(Error::input(
                "a greedy model has no alpha (that is power EP's): remove the key",
            ));
        }
        Ok(())
    }

    fn objective_name(&self, model: &ModelFile) -> &'static str {
        evidence(model).1.objective_name()
    }

    /// σ0², ℓ, σ² (the basis is selected, not optimised).
    fn pack(&self, model: &ModelFile) -> Vec<f64> {
        let mut theta = Vec::new();
        pack_hyper(model, &mut theta);
        theta
    }

    fn unpack(&self, theta: &[f64], model: &mut ModelFile) {
        unpack_hyper(theta, model);
    }

    /// The objective at the basis — the VFE bound or, with `approx = "dtc"`, the DTC
    /// evidence — and its gradient in σ0², ℓ, σ².
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
        let (method, approx) = evidence(model);
        let s = &exec.scratch;
        let state = basis_state(model, s)?;
        let out = method.objective_of(&state, data, approx, None, exec, grad);
        PLAIN.recycle_state(Cow::Owned(state), s);
        // the basis is selected, not optimised: θ is the shared blocks alone
        grad.truncate(head_len(model));
        out
    }

    /// `--adapt`'s fits of σ0², ℓ, σ² unpack θ into the basis state, never into a
    /// model file.
    fn typed_fit<'a>(&'a self, model: &ModelFile) -> Option<Box<dyn TypedModel + 'a>> {
        let (method, approx) = evidence(model);
        let state = basis_state(model, &Scratch::default()).ok()?;
        let mut theta = self.pack(model);
        let head = theta.len();
        theta.extend_from_slice(basis_points(model).ok()?.as_slice());
        Some(Box::new(AtBasis {
            core: method.typed_from(state, approx),
            theta,
            head,
        }))
    }

    fn nlml(&self, model: &ModelFile, data: &TrainData, exec: &Exec) -> Result<f64> {
        let (method, approx) = evidence(model);
        method.nlml_of(&basis_state(model, &exec.scratch)?, data, approx, exec)
    }

    /// The DTC and VFE posteriors at a fixed basis are one and the same (Titsias 2009).
    fn posterior(
        &self,
        model: &ModelFile,
        data: &TrainData,
        exec: &Exec,
    ) -> Result<(Posterior, Option<DMatrix<f64>>)> {
        let state = basis_state(model, &exec.scratch)?;
        Ok((
            pseudo::DTC.posterior_of(&state, data, Approx::Dtc, exec)?,
            None,
        ))
    }

    /// The prior of f is the model's kernel on the inputs, as the pseudo-input family's.
    fn prior_cov(&self, model: &ModelFile, x: &DMatrix<f64>, exec: &Exec) -> Result<DMatrix<f64>> {
        PLAIN
            .prior_cov(model, x, exec)
            .ok_or_else(|| super::method::full_cov_refused(self.name()))
    }

    fn cross(
        &self,
        model: &ModelFile,
        _basis: Option<&DMatrix<f64>>,
        x: &DMatrix<f64>,
        exec: &Exec,
    ) -> Result<(DMatrix<f64>, Vec<f64>)> {
        pseudo::DTC.cross_of(&basis_state(model, &exec.scratch)?, x, exec)
    }

    /// Selection at fixed σ0², ℓ, σ²; with `--adapt K`, K rounds of (selection, L-BFGS
    /// on σ0², ℓ, σ² at the basis), the budget split evenly over the rounds. The trace
    /// is the evidence with 0, 1, …, m basis points of each selection, followed by that
    /// round's optimiser iterations.
    fn fit(
        &self,
        model: ModelFile,
        data: &TrainData,
        spec: &ValidRunSpec,
        ctx: &RunContext,
    ) -> Result<(ModelFile, Outcome)> {
        let select_rule = rule(&spec.options);
        let cfg = Config {
            discard_cache: spec.options.discard_cache.unwrap_or(0),
            ..Config::paper(select_rule, spec.m)
        };
        let adapt = spec.options.adapt.unwrap_or(0);
        // restart k of --restarts draws its candidates from a stream of its own (start 0
        // and the main fit share the run's)
        let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
        rng.set_stream(SELECT_STREAM + ctx.restart_index().unwrap_or(0) as u64);
        // the best start of --restarts continues here: a model that already has its
        // basis keeps it (without --adapt there is nothing more to do); with --adapt
        // the next rounds start their cache from it
        let selected = model.table::<GreedyTable>().ok().flatten().map(|g| g.order);
        if adapt == 0 && selected.as_ref().is_some_and(|o| o.len() == spec.m) {
            let f = self.nlml(&model, data, &ctx.exec)?;
            ctx.report(Phase::Fit { stage: 0 }, 0, f);
            return Ok((model.clone(), Outcome::unfitted(self.pack(&model), f)));
        }
        let mut model = model;
        let mut trace: Vec<f64> = Vec::new();
        let mut iterations = 0usize;
        let mut evaluations = 0usize;
        let mut stop = Stop::NothingToFit;
        let (mut seconds, mut kernel_rows) = (0.0, 0usize);
        let mut warm: Vec<usize> = selected.unwrap_or_default();
        // optimiser iterations used by earlier rounds (the budget is theirs alone)
        let mut used = 0usize;
        let auto_jitter = model.jitter.is_none();
        for round in 0..adapt.max(1) {
            // a round without iterations left would only select again
            if round > 0 && used >= spec.iters {
                break;
            }
            let phase = Phase::Fit {
                stage: if adapt == 0 { 0 } else { 2 * round + 1 },
            };
            // trace entries after the first count as iterations; a selection that
            // starts again with a larger jitter (d = 0 once more) replaces its entries
            let (round_start, round_iterations) = (trace.len(), iterations);
            if auto_jitter {
                model.jitter = None;
            }
            let at_start = &model;
            let mut push = |rows: &[usize], v: f64| {
                if rows.is_empty() && trace.len() > round_start {
                    trace.truncate(round_start);
                    iterations = round_iterations;
                }
                if !trace.is_empty() {
                    iterations += 1;
                }
                trace.push(v);
                ctx.report(phase, iterations, v);
                ctx.exec.check()?;
                // --validation scores the basis so far (at least one point)
                if rows.is_empty() || !ctx.observes(phase, iterations) {
                    return Ok(Control::Continue);
                }
                let mut reached = at_start.clone();
                with_basis(&mut reached, data, rows);
                reached.set(&GreedyTable {
                    select: select_rule,
                    order: rows.to_vec(),
                    adapt,
                    select_seconds: 0.0,
                    kernel_rows: 0,
                });
                match ctx.observe(iterations, &reached) {
                    Control::Stop => Err(Error::Cancelled),
                    c => Ok(c),
                }
            };
            let sel = select(data, &model, &cfg, &warm, &mut rng, &mut push, &ctx.exec)?;
            let finished = sel.rows.len() < cfg.d_max;
            // a raised jitter stays with the model, so the core's evidence and posterior
            // use the one the selection did
            if auto_jitter && sel.jitter > linalg::JITTER_START * prior_variance(&model) * 1.000001
            {
                model.jitter = Some(sel.jitter);
            }
            seconds += sel.seconds;
            kernel_rows += sel.kernel_rows;
            evaluations += sel.trace.len();
            with_basis(&mut model, data, &sel.rows);
            model.set(&GreedyTable {
                select: select_rule,
                order: sel.rows.clone(),
                adapt,
                select_seconds: seconds,
                kernel_rows,
            });
            if finished {
                // --early-stop: the validation score stopped improving while selecting
                stop = Stop::EarlyStop;
                break;
            }
            if adapt == 0 {
                break;
            }
            let budget = stage_budget(spec.iters - used.min(spec.iters), adapt - round);
            let free = 0..super::hyper::head_len(&model);
            let (fitted, out) = super::hyper::fit_free(
                self,
                model,
                data,
                free,
                budget.max(1),
                Phase::Fit {
                    stage: 2 * round + 2,
                },
                Some(iterations),
                ctx,
            )?;
            model = fitted;
            trace.extend(out.trace.iter().skip(1));
            iterations += out.iterations;
            used += out.iterations;
            evaluations += out.evaluations;
            stop = out.stop;
            if matches!(stop, Stop::Cancelled | Stop::EarlyStop) {
                break;
            }
            warm = sel.rows;
        }
        let f = trace.last().copied().unwrap_or(f64::NAN);
        Ok((
            model.clone(),
            Outcome {
                x: self.pack(&model),
                f,
                grad: Vec::new(),
                iterations,
                evaluations,
                trace,
                stop,
            },
        ))
    }
}
