//! svgp's parameters between steps: what q(u) is over ([`Features`]: pseudo-inputs or a
//! family's features), q(v), and their packing into the optimiser's vector with the
//! kernel's and the likelihood's parameters.

use super::*;

/// What q(u) is over (docs/methods.md §8.6): pseudo-inputs Z (m×D), held as a matrix,
/// or the features of a family (`--family`), whose parameters stay in the model's
/// tables, where the family reads them.
#[derive(Clone)]
pub enum Features {
    Inducing(DMatrix<f64>),
    Family(&'static dyn features::SvgpFamily),
}

/// Z (or the family) and q(v) as matrices: what training holds between steps (a model
/// file keeps them as TOML tables, converted on every read and write).
#[derive(Clone)]
pub struct Params {
    pub features: Features,
    pub q: Variational,
}

impl Params {
    pub fn of(model: &ModelFile) -> Result<Params> {
        match features::of_model(model)? {
            None => {
                let z = inducing_points(model)?;
                let q = variational(model, z.nrows())?;
                Ok(Params {
                    features: Features::Inducing(z),
                    q,
                })
            }
            Some(f) => {
                let q = variational(model, f.check(model)?)?;
                Ok(Params {
                    features: Features::Family(f),
                    q,
                })
            }
        }
    }

    pub fn write(&self, model: &mut ModelFile) {
        if let Features::Inducing(z) = &self.features {
            set_inducing_points(model, z);
        }
        set_variational(model, &self.q);
    }

    /// The number of inducing variables m.
    pub fn m(&self) -> usize {
        self.q.len()
    }

    /// The pseudo-inputs, where q(u) is over them.
    pub fn z(&self) -> Option<&DMatrix<f64>> {
        match &self.features {
            Features::Inducing(z) => Some(z),
            Features::Family(_) => None,
        }
    }

    /// The length of the packed head and features (what Adam moves beside natural
    /// steps, and the exact stage's L-BFGS).
    pub(crate) fn model_len(&self, model: &ModelFile) -> usize {
        match &self.features {
            Features::Inducing(z) => head_len(model) + z.len(),
            Features::Family(f) => f.pack(model).len(),
        }
    }
}

/// [log σ0², log ℓ, (log α), noise] of `model`, then Z (or the family's parameters, in
/// its own `pack` order), the log-parameters of a non-Gaussian likelihood (none for the
/// Gaussian, whose σ² is the head's), μ and R's lower triangle.
pub(crate) fn pack_params(model: &ModelFile, p: &Params) -> Vec<f64> {
    let mut theta = Vec::new();
    match &p.features {
        Features::Inducing(z) => {
            pack_hyper(model, &mut theta);
            theta.extend_from_slice(z.as_slice());
        }
        Features::Family(f) => theta = f.pack(model),
    }
    theta.extend(likelihood_params(model).iter().map(|v| v.ln()));
    theta.extend(p.q.mean.iter());
    theta.extend(lower_entries(&p.q.chol));
    theta
}

/// Inverse of [`pack_params`]: the head into `model`, then as much of Z, μ, R as
/// `theta` holds (the head and Z only, for Adam beside natural-gradient steps).
pub(crate) fn unpack_params(theta: &[f64], model: &mut ModelFile, p: &mut Params) {
    let m = p.m();
    let mut k = match &mut p.features {
        Features::Inducing(z) => {
            let mut k = unpack_hyper(theta, model);
            let (m, d) = z.shape();
            if theta.len() >= k + m * d {
                z.as_mut_slice().copy_from_slice(&theta[k..k + m * d]);
                k += m * d;
            }
            k
        }
        Features::Family(f) => {
            let len = f.pack(model).len();
            if theta.len() >= len {
                f.unpack(&theta[..len], model);
                len
            } else {
                unpack_hyper(theta, model)
            }
        }
    };
    let lik = likelihood_params(model).len();
    if lik > 0 && theta.len() >= k + lik {
        let values: Vec<f64> = theta[k..k + lik].iter().map(|v| v.exp()).collect();
        set_likelihood_params(model, &values);
        k += lik;
    }
    if theta.len() > k {
        p.q.mean.as_mut_slice().copy_from_slice(&theta[k..k + m]);
        k += m;
        for j in 0..m {
            for i in j..m {
                p.q.chol[(i, j)] = theta[k];
                k += 1;
            }
        }
    }
}

/// The values of a non-Gaussian likelihood's parameters (in `param_names` order; none
/// for the Gaussian or a likelihood without any).
pub(crate) fn likelihood_params(model: &ModelFile) -> Vec<f64> {
    match (&model.likelihood, model.likelihood()) {
        (Some(_), Ok(lik)) => lik.params(),
        _ => Vec::new(),
    }
}

/// Writes a non-Gaussian likelihood's parameter values into the model's table.
fn set_likelihood_params(model: &mut ModelFile, values: &[f64]) {
    if let Ok(mut lik) = model.likelihood()
        && let Some(t) = model.likelihood.as_mut()
    {
        lik.set_params(values);
        t.set_params(&*lik);
    }
}

/// The lower triangle of a square matrix, column by column (how R is packed).
pub(crate) fn lower_entries(r: &DMatrix<f64>) -> impl Iterator<Item = f64> + '_ {
    let m = r.nrows();
    (0..m).flat_map(move |j| (j..m).map(move |i| r[(i, j)]))
}
