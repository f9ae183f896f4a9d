//! SPGP / FITC (Snelson & Ghahramani 2006), METHODS.md §2: pseudo-inputs X̄ (m×D)
//! learned with σ0², ℓ and σ²; `Kfu = k(X, X̄)`, `Kuu = k(X̄, X̄)`, FITC diagonal.

use super::{Method, Objective};
use crate::error::Result;
use crate::likelihood::{self, LowRank, Mode, Posterior};
use crate::linalg::Jitter;
use crate::model_file::{Inducing, ModelFile, matrix_to_rows, required_matrix};
use crate::train::{RunSpec, TrainData};
use nalgebra::DMatrix;
use rand_chacha::ChaCha8Rng;

pub struct Fitc;

/// The pseudo-inputs of a model as an m×D matrix.
pub fn inducing_points(model: &ModelFile) -> Result<DMatrix<f64>> {
    let points = model.inducing.as_ref().map(|i| &i.points);
    required_matrix("[inducing] points", points, model.dim())
}

/// ∂NLML/∂log σ0² of the jitter: the §1 policy scales it with σ0².
pub fn jitter_grad(model: &ModelFile, jitter: f64, d_kuu: &DMatrix<f64>) -> f64 {
    match model.jitter_policy() {
        Jitter::Auto { .. } => jitter * d_kuu.trace(),
        Jitter::Fixed(_) => 0.0,
    }
}

/// The matrices one evaluation needs.
struct Parts {
    z: DMatrix<f64>,
    kuf: DMatrix<f64>,
    kuu: DMatrix<f64>,
    kdiag: Vec<f64>,
}

impl Parts {
    fn new(model: &ModelFile, data: &TrainData) -> Result<Parts> {
        let z = inducing_points(model)?;
        let k = model.kernel();
        Ok(Parts {
            kuf: k.matrix(&z, &data.x),
            kuu: k.gram(&z),
            kdiag: vec![model.hyper.signal_variance; data.x.nrows()],
            z,
        })
    }

    fn low_rank<'a>(&'a self, model: &ModelFile) -> LowRank<'a> {
        LowRank {
            kuf: &self.kuf,
            kuu: &self.kuu,
            mode: Mode::Fitc,
            kdiag: &self.kdiag,
            noise: model.hyper.noise_variance,
            jitter: model.jitter_policy(),
        }
    }
}

impl Method for Fitc {
    fn name(&self) -> &'static str {
        "fitc"
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["spgp"]
    }
    fn summary(&self) -> &'static str {
        "SPGP/FITC: m learned pseudo-inputs (Snelson & Ghahramani 2006)"
    }

    fn init(&self, data: &TrainData, spec: &RunSpec, rng: &mut ChaCha8Rng) -> Result<ModelFile> {
        let hyper = super::initial_hyper(data, spec, rng)?;
        let z = super::random_rows(&data.x, spec.m, rng);
        let mut model = ModelFile::new(self.name(), hyper);
        model.inducing = Some(Inducing {
            points: matrix_to_rows(&z),
        });
        Ok(model)
    }

    fn check(&self, model: &ModelFile) -> Result<()> {
        inducing_points(model)?;
        if let Some(p) = &model.posterior {
            p.check(model.inducing.as_ref().map_or(0, |i| i.points.len()))?;
        }
        Ok(())
    }

    fn pack(&self, model: &ModelFile) -> Vec<f64> {
        super::pack_hyper_and(model, inducing_points(model).ok())
    }

    fn unpack(&self, theta: &[f64], model: &mut ModelFile) {
        let z = super::unpack_hyper_and(theta, model);
        model.inducing = Some(Inducing {
            points: matrix_to_rows(&z),
        });
    }

    fn objective(&self, model: &ModelFile, data: &TrainData) -> Result<Objective> {
        let p = Parts::new(model, data)?;
        let adj = likelihood::nlml_and_adjoints(&p.low_rank(model), &data.y)?;
        let (z, kuf, kuu) = (&p.z, &p.kuf, &p.kuu);
        let k = model.kernel();
        let gf = k.grad(z, &data.x, kuf, &adj.d_kuf, true, false);
        let gu = k.grad(z, z, kuu, &adj.d_kuu, true, true);
        let sf2 = model.hyper.signal_variance;
        let mut grad = Vec::with_capacity(self.pack(model).len());
        grad.push(
            gf.log_signal_variance
                + gu.log_signal_variance
                + sf2 * adj.d_kdiag.iter().sum::<f64>()
                + jitter_grad(model, adj.jitter, &adj.d_kuu),
        );
        grad.extend(
            gf.log_lengthscales
                .iter()
                .zip(&gu.log_lengthscales)
                .map(|(a, b)| a + b),
        );
        grad.push(adj.d_noise * model.hyper.noise_variance);
        let (ga, gua, gub) = (gf.a, gu.a, gu.b);
        if let (Some(a), Some(b), Some(c)) = (ga, gua, gub) {
            grad.extend_from_slice((a + b + c).as_slice());
        }
        Ok(Objective {
            nlml: adj.nlml,
            grad,
            jitter: adj.jitter,
        })
    }

    fn nlml(&self, model: &ModelFile, data: &TrainData) -> Result<f64> {
        let p = Parts::new(model, data)?;
        likelihood::nlml(&p.low_rank(model), &data.y)
    }

    fn posterior(
        &self,
        model: &ModelFile,
        data: &TrainData,
    ) -> Result<(Posterior, Option<DMatrix<f64>>)> {
        let p = Parts::new(model, data)?;
        Ok((
            likelihood::posterior(&p.low_rank(model), &data.y, false)?,
            None,
        ))
    }

    fn cross(
        &self,
        model: &ModelFile,
        _basis: Option<&DMatrix<f64>>,
        x: &DMatrix<f64>,
    ) -> Result<(DMatrix<f64>, Vec<f64>)> {
        let z = inducing_points(model)?;
        Ok((
            model.kernel().matrix(&z, x),
            vec![model.hyper.signal_variance; x.nrows()],
        ))
    }
}
