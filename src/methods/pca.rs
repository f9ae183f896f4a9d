//! PCA+SPGP, the unsupervised baseline of SPGP+DR (Snelson & Ghahramani, UAI 2006,
//! §6.1; docs/methods.md §2.4): project the training inputs on their top G principal
//! components, then plain SPGP (the pseudo-input family under FITC) in that space.
//! The model stores the PCA's mean and basis (`[pca]`), so predictions, `sgpw nlml`
//! and the app take the original D inputs; the lengthscales and pseudo-inputs live in
//! the G-dimensional space. The run's starting hyperparameters (defaults or a subset
//! fit, on the D inputs) become G lengthscales by the ARD metric along each principal
//! direction b_g: `1/ℓ_g² = Σ_d b_gd²/ℓ_d²`.

use super::lowrank::{ApproxChoice, Family, FamilyState, LowRankMethod, MaxM, Parts};
use super::method::ValidRunSpec;
use super::pseudo::{Inducing, PLAIN, PseudoExtra, PseudoState};
use crate::collapsed::Adjoints;
use crate::data::TrainData;
use crate::error::Location;
use crate::error::{Error, Result};
use crate::exec::Exec;
use crate::model_file::{Hyper, ModelFile, ModelTable, Witness, matrix_to_rows, rows_to_matrix};
use crate::params::ParamLayout;
use crate::run_context::RunContext;
use crate::run_spec::{ApproxKind, DataShape, MethodOptions, Naming};
use crate::scratch::Scratch;
use nalgebra::{DMatrix, SymmetricEigen};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// `[pca]`: the principal components the inputs are projected on — the model sees
/// `B (x − mean)`, the top G components of the training inputs (in model units, i.e.
/// after `[standardize]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pca {
    /// The training inputs' mean, D values.
    pub mean: Vec<f64>,
    /// B: G rows (unit principal directions, largest variance first) of D values.
    pub basis: Vec<Vec<f64>>,
}

impl ModelTable for Pca {
    const NAME: &'static str = "pca";
}

/// SPGP on the inputs' top principal components.
pub struct PcaPseudo;

pub const PCA_SPGP: LowRankMethod<PcaPseudo> = LowRankMethod {
    name: "pca-spgp",
    aliases: &["pca+spgp"],
    summary: "PCA+SPGP: SPGP on the top G principal components of the training inputs \
              (--dims G), the unsupervised baseline of SPGP+DR (Snelson & Ghahramani, UAI 2006)",
    m_meaning: "inducing points",
    options: &["dims", "inducing_init"],
    approx: ApproxChoice::Fixed(ApproxKind::Fitc),
    max_m: MaxM::TrainingSize,
    family: PcaPseudo,
};

/// The `dims` option of spgp-dr and pca-spgp, which both need it.
pub fn required_dims(method: &str, options: &MethodOptions, naming: Naming) -> Result<usize> {
    options.dims.ok_or_else(|| {
        Error::input(format!(
            "method '{method}' needs the reduced dimension G: give {}",
            naming.setting("dims", "G")
        ))
    })
}

/// G against the data's D (where it is known).
pub fn check_dims(method: &str, g: usize, d: usize, naming: Naming) -> Result<()> {
    if g == 0 || (d != usize::MAX && g > d) {
        return Err(Error::input(format!(
            "dims = {g}{}: method '{method}' needs 1 ≤ G ≤ D = {d} (the number of inputs)",
            naming.flag("dims")
        )));
    }
    Ok(())
}

/// `dims` given, and at most the data's D where it is known.
pub fn check_dims_option(
    method: &str,
    options: &MethodOptions,
    data: DataShape,
    naming: Naming,
) -> Result<()> {
    check_dims(
        method,
        required_dims(method, options, naming)?,
        data.dim,
        naming,
    )
}

/// Why a kernel expression cannot read the inputs of `method`'s kernel (`what`: its
/// projections, its principal components): a part naming `dims=[…]` — those name the
/// data's columns, which the kernel does not read. None: any other expression, its
/// parts on all the kernel's inputs (docs/methods.md "Kernels built from parts").
pub fn dims_refusal(
    method: &str,
    what: &str,
    expr: &crate::kernel::expression::KernelExpr,
) -> Option<String> {
    let labels = crate::kernel::labels(expr);
    let (_, label) = expr
        .parts()
        .into_iter()
        .zip(&labels)
        .find(|(p, _)| p.args.iter().any(|a| a.key == "dims"))?;
    Some(format!(
        "method '{method}' cannot use it: {label} names dims=[…], the data's columns, but \
         the kernel of '{method}' reads {what}, not the columns; write its parts without \
         dims (each then reads all of them; changepoints need a single one, --dims 1)"
    ))
}

/// The rows of `x` (n×D), less `shift` (D) if given, on the rows of `p` (G×D): the
/// n×G matrix `(x − shift) pᵀ`. Each entry sums over d in order 0..D whatever n is,
/// so a chunk of rows projects exactly as it does within the whole (a gemm's blocking
/// would depend on the size); columns of the result are contiguous, so the loop over
/// rows vectorises.
pub fn project_rows(x: &DMatrix<f64>, p: &DMatrix<f64>, shift: Option<&[f64]>) -> DMatrix<f64> {
    let (n, d) = x.shape();
    let mut out = DMatrix::zeros(n, p.nrows());
    for g in 0..p.nrows() {
        let col = &mut out.as_mut_slice()[g * n..(g + 1) * n];
        for k in 0..d {
            let (w, c) = (p[(g, k)], shift.map_or(0.0, |s| s[k]));
            let xk = &x.as_slice()[k * n..(k + 1) * n];
            for (o, v) in col.iter_mut().zip(xk) {
                *o += w * (v - c);
            }
        }
    }
    out
}

/// The mean (D) of the rows of `x` and its top `g` principal directions as the rows
/// of a g×D matrix, largest variance first, each unit length with its largest entry
/// positive (so the basis does not depend on the eigensolver's signs).
pub fn principal_directions(x: &DMatrix<f64>, g: usize) -> (Vec<f64>, DMatrix<f64>) {
    let (n, d) = x.shape();
    let mean: Vec<f64> = (0..d).map(|j| x.column(j).mean()).collect();
    let xc = DMatrix::from_fn(n, d, |i, j| x[(i, j)] - mean[j]);
    let cov = xc.transpose() * &xc / (n.max(1) as f64);
    let eig = SymmetricEigen::new(cov);
    let mut order: Vec<usize> = (0..d).collect();
    // descending variance; ties broken by index so the order is deterministic
    order.sort_by(|&a, &b| {
        eig.eigenvalues[b]
            .total_cmp(&eig.eigenvalues[a])
            .then(a.cmp(&b))
    });
    let mut basis = DMatrix::zeros(g.min(d), d);
    for (row, &k) in order.iter().take(g.min(d)).enumerate() {
        let v = eig.eigenvectors.column(k);
        let big = v
            .iter()
            .copied()
            .fold(0.0, |m: f64, e| if e.abs() > m.abs() { e } else { m });
        let sign = if big < 0.0 { -1.0 } else { 1.0 };
        for j in 0..d {
            basis[(row, j)] = sign * v[j];
        }
    }
    (mean, basis)
}

/// ARD lengthscales (D) seen along the rows b_g of a basis: `1/ℓ_g² = Σ_d b_gd²/ℓ_d²`.
pub fn component_lengthscales(basis: &DMatrix<f64>, lengthscales: &[f64]) -> Vec<f64> {
    basis
        .row_iter()
        .map(|b| {
            let w: f64 = b
                .iter()
                .zip(lengthscales)
                .map(|(v, l)| v * v / (l * l))
                .sum();
            1.0 / w.sqrt()
        })
        .collect()
}

/// The model's `[pca]` as (mean, basis G×D), checked against its lengthscales.
fn pca_of(model: &ModelFile) -> Result<(Vec<f64>, DMatrix<f64>)> {
    let p = model.require::<Pca>()?;
    let at = Location::key(Pca::NAME);
    let d = p.mean.len();
    if d == 0 || p.mean.iter().any(|v| !v.is_finite()) {
        return Err(Error::at(
            at.clone().then("mean"),
            "[pca] mean must hold one finite value per input",
        ));
    }
    let basis = rows_to_matrix(&at.clone().then("basis"), &p.basis, d)?;
    let g = model.kernel_dim();
    if basis.nrows() != g {
        let kernel = match model.composed {
            Some(_) => "[kernel] inputs is",
            None => "[hyper] lengthscales has",
        };
        return Err(Error::at(
            at.then("basis"),
            format!(
                "[pca] basis has {} rows but {kernel} {g} (one per component)",
                basis.nrows()
            ),
        ));
    }
    Ok((p.mean, basis))
}

/// (x − mean) Bᵀ: the inputs (n×D) on the components (n×G).
fn project(x: &DMatrix<f64>, mean: &[f64], basis: &DMatrix<f64>) -> Result<DMatrix<f64>> {
    if x.ncols() != mean.len() {
        return Err(Error::input(format!(
            "the inputs have {} columns but the model's PCA takes {}",
            x.ncols(),
            mean.len()
        )));
    }
    Ok(project_rows(x, basis, Some(mean)))
}

/// PCA+SPGP's parameters as typed values ([`Family::State`]): the plain pseudo-input
/// family's state in the G-dimensional space and the PCA the inputs are projected by
/// (fixed: θ does not hold it).
#[derive(Clone, Debug)]
pub struct PcaState {
    plain: PseudoState,
    /// The training inputs' mean (D values).
    mean: Vec<f64>,
    /// B (G×D).
    basis: DMatrix<f64>,
}

impl FamilyState for PcaState {
    fn collapsed_noise(&self) -> Result<f64> {
        self.plain.collapsed_noise()
    }
}

impl Family for PcaPseudo {
    /// Any kernel the pseudo-input family takes, on the G components.
    fn takes_composed_kernel(&self) -> bool {
        true
    }

    /// Parts naming `dims` (the data's columns), before any work.
    fn refuses_kernel_expr(&self, expr: &crate::kernel::expression::KernelExpr) -> Option<String> {
        dims_refusal("pca-spgp", "the top principal components", expr)
    }

    fn kernel_input_name(&self) -> Option<&'static str> {
        Some("the principal components")
    }

    /// The components (x − mean)Bᵀ; the parts start from the lengthscales `init` set
    /// along them.
    fn kernel_inputs(
        &self,
        model: &ModelFile,
        x: &DMatrix<f64>,
    ) -> Option<Result<(DMatrix<f64>, Vec<f64>)>> {
        Some(pca_of(model).and_then(|(mean, basis)| {
            Ok((project(x, &mean, &basis)?, model.hyper.lengthscales.clone()))
        }))
    }

    /// The default second start is an exact GP's subset fit on the columns; a kernel
    /// expression reads the components, so it runs from its own start alone.
    fn second_start(&self, options: &MethodOptions) -> bool {
        options.kernel_expression().is_none()
    }

    /// u = f(Z) in the components: Kuf is k(Z, (x − mean)Bᵀ).
    fn predicts_summands(&self) -> bool {
        true
    }

    fn seed_help(&self) -> &'static str {
        "the pseudo-inputs start at m random training inputs (in PCA coordinates) drawn \
         with the seed"
    }

    /// The plain family's extras and the projected inputs.
    type Extra = (PseudoExtra, DMatrix<f64>);
    type State = PcaState;

    fn state<'a>(&self, model: &'a ModelFile, scratch: &Scratch) -> Result<Cow<'a, PcaState>> {
        let (mean, basis) = pca_of(model)?;
        let plain = PLAIN.state(model, scratch)?.into_owned();
        Ok(Cow::Owned(PcaState { plain, mean, basis }))
    }

    fn recycle_state(&self, state: Cow<'_, PcaState>, scratch: &Scratch) {
        if let Cow::Owned(st) = state {
            PLAIN.recycle_state(Cow::Owned(st.plain), scratch);
        }
    }

    fn size(&self, state: &PcaState) -> Result<usize> {
        PLAIN.size(&state.plain)
    }

    /// θ is the plain family's (the PCA is not fitted).
    fn unpack_state(&self, theta: &[f64], state: &mut PcaState) {
        PLAIN.unpack_state(theta, &mut state.plain);
    }

    fn hold_fixed_state(&self, layout: &ParamLayout, start: &PcaState, state: &mut PcaState) {
        PLAIN.hold_fixed_state(layout, &start.plain, &mut state.plain);
    }

    fn init(
        &self,
        data: &TrainData,
        spec: &ValidRunSpec,
        hyper: Hyper,
        ctx: &RunContext,
        rng: &mut ChaCha8Rng,
    ) -> Result<ModelFile> {
        let g = required_dims(&spec.method, &spec.options, Naming::Flags)?;
        check_dims(&spec.method, g, data.x.ncols(), Naming::Flags)?;
        let (mean, basis) = principal_directions(&data.x, g);
        let projected = TrainData {
            x: project(&data.x, &mean, &basis)?,
            y: data.y.clone(),
            log_exposure: data.log_exposure.clone(),
        };
        let hyper = Hyper {
            lengthscales: component_lengthscales(&basis, &hyper.lengthscales),
            ..hyper
        };
        let mut model = PLAIN.init(&projected, spec, hyper, ctx, rng)?;
        model.set(&Pca {
            mean,
            basis: matrix_to_rows(&basis),
        });
        Ok(model)
    }

    fn check_options(
        &self,
        options: &MethodOptions,
        data: DataShape,
        naming: Naming,
    ) -> Result<()> {
        check_dims_option("pca-spgp", options, data, naming)
    }

    fn check(&self, model: &ModelFile) -> Result<usize> {
        pca_of(model)?;
        PLAIN.check(model)
    }

    fn pack(&self, model: &ModelFile) -> Vec<f64> {
        PLAIN.pack(model)
    }

    fn tail_blocks(&self) -> &'static [crate::params::TailBlock] {
        PLAIN.tail_blocks()
    }

    fn unpack(&self, theta: &[f64], model: &mut ModelFile) {
        PLAIN.unpack(theta, model)
    }

    fn tables(&self) -> &'static [&'static str] {
        &[Inducing::NAME, Pca::NAME]
    }

    /// The PCA's mean and the columns of its basis (the lengthscales and pseudo-inputs
    /// are per component; no marker is drawn for them on an input's axis).
    fn input_dims(&self, model: &ModelFile) -> Vec<Witness> {
        Witness::list(model, Pca::NAME, "mean")
            .into_iter()
            .chain(Witness::rows(model, Pca::NAME, "basis"))
            .collect()
    }

    fn parts(
        &self,
        state: &PcaState,
        x: &DMatrix<f64>,
        for_gradient: bool,
        exec: &Exec,
    ) -> Result<(Parts, Self::Extra)> {
        let xp = project(x, &state.mean, &state.basis)?;
        let (parts, extra) = PLAIN.parts(&state.plain, &xp, for_gradient, exec)?;
        Ok((parts, (extra, xp)))
    }

    fn pull_back(
        &self,
        state: &PcaState,
        _x: &DMatrix<f64>,
        parts: &Parts,
        (extra, xp): Self::Extra,
        adj: &Adjoints,
        exec: &Exec,
    ) -> Result<Vec<f64>> {
        PLAIN.pull_back(&state.plain, &xp, parts, extra, adj, exec)
    }
}
