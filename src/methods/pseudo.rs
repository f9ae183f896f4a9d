//! SE pseudo-inputs (Snelson & Ghahramani 2006), METHODS.md §2: inducing inputs X̄
//! (m×D) learned with σ0², ℓ and σ²; `Kuf = k(X̄, X)`, `Kuu = k(X̄, X̄)`, kdiag = σ0².
//! With FITC this is SPGP; the same family gives VFE (Titsias 2009), DTC and power EP.

use super::ValidRunSpec;
use super::hyper::{pack_hyper_and, random_rows, unpack_hyper_and};
use super::lowrank::{
    ApproxChoice, Family, KuuMatrix, LowRankMethod, MaxM, Parts, jitter_grad, kdiag_grad,
};
use crate::data::TrainData;
use crate::error::Result;
use crate::exec::Exec;
use crate::likelihood::Adjoints;
use crate::model_file::{Hyper, Inducing, ModelFile, matrix_to_rows, required_matrix};
use crate::run_context::RunContext;
use crate::run_spec::ApproxKind;
use nalgebra::DMatrix;
use rand_chacha::ChaCha8Rng;

/// Inducing inputs in the input space of the SE kernel.
pub struct PseudoInputs;

const M_MEANING: &str = "inducing points";

pub const FITC: LowRankMethod<PseudoInputs> = LowRankMethod {
    name: "fitc",
    aliases: &["spgp"],
    summary: "SPGP/FITC: m learned pseudo-inputs (Snelson & Ghahramani 2006)",
    m_meaning: M_MEANING,
    options: &[],
    approx: ApproxChoice::Fixed(ApproxKind::Fitc),
    max_m: MaxM::TrainingSize,
    family: PseudoInputs,
};

pub const VFE: LowRankMethod<PseudoInputs> = LowRankMethod {
    name: "vfe",
    aliases: &["sgpr"],
    summary: "VFE/SGPR: m learned inducing inputs under Titsias's collapsed bound (Titsias 2009); \
              the objective is the negative ELBO",
    m_meaning: M_MEANING,
    options: &[],
    approx: ApproxChoice::Fixed(ApproxKind::Vfe),
    max_m: MaxM::TrainingSize,
    family: PseudoInputs,
};

pub const DTC: LowRankMethod<PseudoInputs> = LowRankMethod {
    name: "dtc",
    aliases: &["sor", "pp"],
    summary: "DTC/projected process: m learned inducing inputs, no diagonal correction \
              (Seeger, Williams & Lawrence 2003)",
    m_meaning: M_MEANING,
    options: &[],
    approx: ApproxChoice::Fixed(ApproxKind::Dtc),
    max_m: MaxM::TrainingSize,
    family: PseudoInputs,
};

pub const PEP: LowRankMethod<PseudoInputs> = LowRankMethod {
    name: "pep",
    aliases: &["power-ep"],
    summary: "power EP: m learned inducing inputs, --alpha a in (0, 1] between VFE (a → 0) \
              and FITC (a = 1) (Bui, Yan & Turner 2017)",
    m_meaning: M_MEANING,
    options: &["alpha"],
    approx: ApproxChoice::Fixed(ApproxKind::Pep),
    max_m: MaxM::TrainingSize,
    family: PseudoInputs,
};

/// The pseudo-inputs of a model as an m×D matrix.
pub fn inducing_points(model: &ModelFile) -> Result<DMatrix<f64>> {
    let points = model.inducing.as_ref().map(|i| &i.points);
    required_matrix("[inducing] points", points, model.dim())
}

impl Family for PseudoInputs {
    /// The pseudo-inputs.
    type Extra = DMatrix<f64>;

    fn init(
        &self,
        data: &TrainData,
        spec: &ValidRunSpec,
        hyper: Hyper,
        _ctx: &RunContext,
        rng: &mut ChaCha8Rng,
    ) -> Result<ModelFile> {
        let z = random_rows(&data.x, spec.m, rng);
        let mut model = ModelFile::new(&spec.method, hyper);
        model.inducing = Some(Inducing {
            points: matrix_to_rows(&z),
        });
        Ok(model)
    }

    fn check(&self, model: &ModelFile) -> Result<usize> {
        Ok(inducing_points(model)?.nrows())
    }

    fn pack(&self, model: &ModelFile) -> Vec<f64> {
        pack_hyper_and(model, inducing_points(model).ok())
    }

    fn unpack(&self, theta: &[f64], model: &mut ModelFile) {
        let z = unpack_hyper_and(theta, model);
        model.inducing = Some(Inducing {
            points: matrix_to_rows(&z),
        });
    }

    fn parts(
        &self,
        model: &ModelFile,
        x: &DMatrix<f64>,
        _for_gradient: bool,
        exec: &Exec,
    ) -> Result<(Parts, DMatrix<f64>)> {
        let z = inducing_points(model)?;
        let k = model.kernel();
        let parts = Parts {
            kuf: k.matrix(&z, x, exec.par),
            kuu: KuuMatrix::Dense(k.gram(&z, exec.par)),
            kdiag: vec![model.hyper.signal_variance; x.nrows()],
            jitter: model.jitter_policy(),
        };
        Ok((parts, z))
    }

    fn pull_back(
        &self,
        model: &ModelFile,
        x: &DMatrix<f64>,
        parts: &Parts,
        z: DMatrix<f64>,
        adj: &Adjoints,
        exec: &Exec,
    ) -> Result<Vec<f64>> {
        let kuu = parts.dense_kuu()?;
        let k = model.kernel();
        let gf = k.grad(&z, x, &parts.kuf, &adj.d_kuf, true, false, exec.par);
        let gu = k.grad(&z, &z, kuu, &adj.d_kuu, true, true, exec.par);
        let mut grad = Vec::with_capacity(2 + model.dim() * (z.nrows() + 1));
        grad.push(
            gf.log_signal_variance
                + gu.log_signal_variance
                + kdiag_grad(model, adj)
                + jitter_grad(parts.jitter, adj.jitter, &adj.d_kuu),
        );
        grad.extend(
            gf.log_lengthscales
                .iter()
                .zip(&gu.log_lengthscales)
                .map(|(a, b)| a + b),
        );
        grad.push(super::hyper::noise_grad(model, adj.d_noise));
        if let (Some(a), Some(b), Some(c)) = (gf.a, gu.a, gu.b) {
            grad.extend_from_slice((a + b + c).as_slice());
        }
        Ok(grad)
    }
}
