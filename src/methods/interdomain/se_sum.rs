//! The kernel the inter-domain features integrate (docs/methods.md §3, "Kernels built
//! from parts"): the plain SE kernel, or a sum of SE summands. A feature is a linear
//! functional of the process, so its covariances (Kuf, Kuu, the prior diagonal) are
//! linear in the kernel: a sum's are the sums of each summand's closed form. A summand
//! is an SE part on all inputs or on its own `dims`, possibly times other SE parts on
//! other inputs and constants (still one ARD SE kernel); along the inputs it does not
//! read it is constant, the ℓ → ∞ limit of the closed forms.

use crate::error::{Error, Location, Result};
use crate::kernel::Kernel;
use crate::kernel::expression::KernelExpr;
use crate::methods::spectrum::form::{self, Radial, Val};
use crate::model_file::ModelFile;

/// One SE summand σ² exp(−Σ_d (x_d − x'_d)²/(2ℓ_d²)) over the inputs it reads.
#[derive(Clone, Debug)]
pub(crate) struct Se {
    /// σ²
    pub(crate) sf2: f64,
    /// ℓ_d² on the inputs it reads; None on the others (constant along them).
    pub(crate) ell2: Vec<Option<f64>>,
    /// Where σ²'s factors and the ℓ_d sit in a composed kernel's θ (empty for the
    /// plain kernel, whose σ0² and ℓ are the shared blocks).
    variances: Vec<Val>,
    ls: Vec<Option<Val>>,
}

/// ∂NLML through one summand: ∂/∂log σ², ∂/∂ℓ_d² (zero on inputs it does not read).
#[derive(Clone, Debug)]
pub(crate) struct SeGrad {
    pub(crate) sf2: f64,
    pub(crate) ell2: Vec<f64>,
}

impl SeGrad {
    pub(crate) fn zeros(d: usize) -> SeGrad {
        SeGrad {
            sf2: 0.0,
            ell2: vec![0.0; d],
        }
    }
}

/// The reason the inter-domain features refuse a part (its label).
fn no_closed_form(label: &str) -> String {
    format!(
        "{label} has no closed-form inter-domain features: they integrate the kernel \
         against Gaussian windows, which sgpw does in closed form for SE parts only (a sum \
         of se parts, each on all inputs or its own dims, times constants or se parts on \
         other inputs); use an inducing-point method (fitc, vfe, ...) for other parts"
    )
}

/// Why the inter-domain features cannot integrate kernel expression `expr`, naming the
/// part, if they cannot (checked before any work; [`summands`] checks the built kernel
/// again).
pub(crate) fn refusal(expr: &KernelExpr) -> Option<String> {
    let labels = crate::kernel::labels(expr);
    if let Some((_, label)) = expr
        .parts()
        .into_iter()
        .zip(&labels)
        .find(|(p, _)| !matches!(p.name.as_str(), "se" | "constant"))
    {
        return Some(no_closed_form(label));
    }
    match form::refusal(expr) {
        Some(why) => Some(format!("its form has no closed-form features: {why}")),
        None => lone_constant(expr),
    }
}

/// A summand of constants alone (no se part): a flat direction of the kernel, not an
/// SE summand.
fn lone_constant(expr: &KernelExpr) -> Option<String> {
    expr.summands()
        .into_iter()
        .find(|t| t.parts().iter().all(|p| p.name == "constant"))
        .map(|t| {
            format!(
                "the summand {t} is constants alone, not an SE summand: the inter-domain \
                 features are built for sums of se parts (a constant may only scale one)"
            )
        })
}

/// The SE summands of `model`'s kernel: the plain SE kernel as one summand on every
/// input, or a composed kernel's (refused, naming the part, unless it is a sum of SE).
pub(crate) fn summands(model: &ModelFile) -> Result<Vec<Se>> {
    match &model.composed {
        None => Ok(plain(
            model.hyper.signal_variance,
            &model.hyper.lengthscales,
        )),
        Some(c) => composed(c.kernel(), &model.method),
    }
}

/// The plain SE kernel σ0², ℓ as one summand on every input.
pub(crate) fn plain(signal_variance: f64, lengthscales: &[f64]) -> Vec<Se> {
    vec![Se {
        sf2: signal_variance,
        ell2: lengthscales.iter().map(|l| Some(l * l)).collect(),
        variances: Vec::new(),
        ls: Vec::new(),
    }]
}

/// The SE summands of a kernel built from parts (refused, naming the part, unless it
/// is a sum of SE), for a model of `method`.
pub(crate) fn composed(kernel: &dyn Kernel, method: &str) -> Result<Vec<Se>> {
    of_kernel(kernel).map_err(|why| {
        Error::at(
            Location::key("kernel"),
            format!("[kernel]: method '{method}' cannot use it: {why}"),
        )
    })
}

fn of_kernel(kernel: &dyn Kernel) -> std::result::Result<Vec<Se>, String> {
    if let Some(why) = kernel.to_expr().as_ref().and_then(refusal) {
        return Err(why);
    }
    let f = form::of_kernel(kernel)?;
    if let Some(fin) = f.finite.first() {
        return Err(no_closed_form(&fin.label));
    }
    let d = kernel.dim();
    f.terms
        .iter()
        .map(|t| {
            if let Some(h) = t.harmonics.first() {
                return Err(no_closed_form(&h.label));
            }
            if let Some(c) = &t.component {
                return Err(no_closed_form(&c.label));
            }
            let mut ell2 = vec![None; d];
            let mut ls = vec![None; d];
            for c in &t.continuous {
                if c.radial != Radial::Gaussian {
                    return Err(no_closed_form(&c.label));
                }
                for (i, dim) in c.dims.iter().enumerate() {
                    ell2[*dim] = Some(c.ls[i].v * c.ls[i].v);
                    ls[*dim] = Some(c.ls[i]);
                }
            }
            Ok(Se {
                sf2: t.variance(),
                ell2,
                variances: t.variances.clone(),
                ls,
            })
        })
        .collect()
}

/// The gradient in a composed kernel's θ (∂/∂log of each free value, length
/// `params_len`) from each summand's.
pub(crate) fn kernel_grad(se: &[Se], grads: &[SeGrad], params_len: usize) -> Vec<f64> {
    let mut out = vec![0.0; params_len];
    for (s, g) in se.iter().zip(grads) {
        // σ² is the product of its factors: ∂/∂log v = ∂/∂log σ² for each
        for v in s.variances.iter().filter_map(|v| v.at) {
            out[v] += g.sf2;
        }
        for (d, l) in s.ls.iter().enumerate() {
            if let Some(Val { v, at: Some(at) }) = l {
                // ∂/∂log ℓ = 2ℓ² ∂/∂ℓ²
                out[*at] += 2.0 * v * v * g.ell2[d];
            }
        }
    }
    out
}
