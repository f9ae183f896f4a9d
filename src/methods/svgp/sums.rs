//! The ELBO's sums over blocks of rows (docs/methods.md §8.1): each block's likelihood
//! term — the Gaussian's closed form (`elbo::expected_loglik`) or any other likelihood's
//! (`any_likelihood::expected_loglik`) — and the adjoints it gives, added in the blocks'
//! order, summed over processes, and finished into the ELBO and its gradient in
//! [`Method::pack`]'s order.

use super::*;
use crate::kernel::KernelGrad;

/// The ELBO's sums over blocks of rows, added one block at a time (from memory, or
/// from a file read a chunk at a time), in the blocks' order.
pub(crate) struct Sums<'m> {
    model: &'m ModelFile,
    p: &'m Params,
    want: Want,
    exec: &'m Exec,
    kernel: crate::kernel::ModelKernel,
    factor: Factor,
    /// Blocks added so far (the index of the next one in a cache).
    blocks: usize,
    lik: f64,
    d_mean_lik: DVector<f64>,
    d_sigma_lik: DMatrix<f64>,
    d_noise: f64,
    /// A non-Gaussian likelihood and its quadrature rule (None: the Gaussian's closed
    /// form with σ² from `[hyper]`), and the gradient in its log-parameters.
    obs: Option<(Box<dyn Likelihood>, GaussHermite)>,
    d_lik_params: Vec<f64>,
    d_kuu: DMatrix<f64>,
    head: Option<Vec<f64>>,
    d_z: DMatrix<f64>,
}

impl<'m> Sums<'m> {
    pub(crate) fn new(
        model: &'m ModelFile,
        p: &'m Params,
        want: Want,
        exec: &'m Exec,
    ) -> Result<Sums<'m>> {
        let (z, m) = (&p.z, p.z.nrows());
        let kernel = model.kernel();
        let factor = Factor::new(&Self::prior_of(model, &*kernel, z), exec.par)?;
        let obs = match &model.likelihood {
            None => None,
            Some(t) => {
                let quad = t.quadrature().map_err(|why| {
                    Error::at(Location::key("likelihood"), format!("[likelihood] {why}"))
                })?;
                Some((model.likelihood()?, quad))
            }
        };
        let lik_params = obs.as_ref().map_or(0, |(l, _)| l.param_names().len());
        Ok(Sums {
            model,
            p,
            want,
            exec,
            kernel,
            factor,
            blocks: 0,
            lik: 0.0,
            d_mean_lik: DVector::zeros(m),
            d_sigma_lik: DMatrix::zeros(m, m),
            d_noise: 0.0,
            obs,
            d_lik_params: vec![0.0; lik_params],
            d_kuu: DMatrix::zeros(m, m),
            head: None,
            d_z: DMatrix::zeros(m, z.ncols()),
        })
    }

    fn prior_of<'k>(
        model: &ModelFile,
        kernel: &'k dyn crate::kernel::Kernel,
        z: &'k DMatrix<f64>,
    ) -> Prior<'k> {
        Prior {
            kernel,
            z,
            noise: model.hyper.noise_variance,
            jitter: model.jitter_policy(),
        }
    }

    /// Add one block of inputs and targets (and the rows' log exposures, if any), its
    /// likelihood term scaled by `c`; with a `cache`, block k's projection is `cache[k]`
    /// if there, else stored there.
    pub(crate) fn add(
        &mut self,
        x: &DMatrix<f64>,
        y: &[f64],
        log_exposure: Option<&[f64]>,
        c: f64,
        cache: Option<&mut Vec<Projected>>,
    ) -> Result<()> {
        self.exec.check()?;
        let (k, par) = (self.blocks, self.exec.par);
        self.blocks += 1;
        let (model, p, kernel, want) = (self.model, self.p, &self.kernel, self.want);
        let prior = Self::prior_of(model, &**kernel, &p.z);
        let fresh;
        let proj = match cache {
            Some(kept) => {
                if kept.len() <= k {
                    kept.push(elbo::project(&prior, &self.factor, x, par));
                }
                &kept[k]
            }
            None => {
                fresh = elbo::project(&prior, &self.factor, x, par);
                &fresh
            }
        };
        let rows = Rows { y, c, log_exposure };
        let t: Terms = match &self.obs {
            None => elbo::expected_loglik(&prior, &self.factor, &p.q, proj, rows, want, par),
            Some((lik, quad)) => {
                let obs = any_likelihood::Observation { lik: &**lik, quad };
                any_likelihood::expected_loglik(&obs, &self.factor, &p.q, proj, rows, want, par)
            }
        };
        self.lik += t.expected_loglik;
        if want == Want::Value {
            return Ok(());
        }
        self.d_mean_lik += &t.d_mean_lik;
        self.d_sigma_lik += &t.d_sigma_lik;
        if let (Some(dkub), Some(dkuu)) = (&t.d_kub, &t.d_kuu) {
            self.d_noise += t.d_noise;
            for (acc, g) in self.d_lik_params.iter_mut().zip(&t.d_lik_params) {
                *acc += g;
            }
            self.d_kuu += dkuu;
            let g = kernel.grad(&p.z, x, &proj.kub, dkub, true, false, par);
            if let Some(a) = &g.a {
                self.d_z += a;
            }
            // the prior diagonal's rows through the kernel (any kernel: a composed one's
            // k(x, x) varies with x)
            let mut diag = KernelGrad {
                params: vec![0.0; g.params.len()],
                a: None,
                b: None,
            };
            kernel.diag_grad(x, &t.d_kdiag, &mut diag.params);
            let h = head_grad(model, &[&g, &diag], 0.0, 0.0);
            match self.head.as_mut() {
                None => self.head = Some(h),
                Some(acc) => acc.iter_mut().zip(&h).for_each(|(a, b)| *a += b),
            }
        }
        Ok(())
    }

    /// Replace this process's sums with those over every process of `share` (one
    /// all-reduce of what `want` computes; symmetric matrices as their lower triangle),
    /// with a failure slot: a process that failed joins with `failed` set, and then
    /// every process gets an error instead of waiting for it.
    pub(crate) fn all_sum(&mut self, share: &dyn RowShare, failed: bool) -> Result<()> {
        let (m, want) = (self.d_mean_lik.len(), self.want);
        let head = head_len(self.model);
        let gradient = matches!(want, Want::Model | Want::All);
        let mut buf = Vec::new();
        if want != Want::Natural {
            buf.push(self.lik);
        }
        if want != Want::Value {
            buf.extend(self.d_mean_lik.iter());
        }
        if matches!(want, Want::Natural | Want::All) {
            buf.extend(lower_entries(&self.d_sigma_lik));
        }
        if gradient {
            buf.push(self.d_noise);
            buf.extend(self.d_lik_params.iter());
            match &self.head {
                Some(h) => buf.extend(h),
                None => buf.extend(std::iter::repeat_n(0.0, head)),
            }
            buf.extend(lower_entries(&self.d_kuu));
            buf.extend(self.d_z.iter());
        }
        buf.push(if failed { 1.0 } else { 0.0 });
        share.all_sum(&mut buf)?;
        let failures = buf.pop().unwrap_or(0.0);
        if failures > 0.0 {
            return Err(Error::numerical(format!(
                "svgp: the evaluation failed on {failures} of the processes (their own \
                 errors are reported above)"
            )));
        }
        let mut at = buf.into_iter();
        let mut next = || at.next().unwrap_or(f64::NAN);
        self.lik = match want {
            Want::Natural => f64::NAN,
            _ => next(),
        };
        if want != Want::Value {
            self.d_mean_lik.iter_mut().for_each(|v| *v = next());
        }
        let symmetric = |a: &mut DMatrix<f64>, next: &mut dyn FnMut() -> f64| {
            for j in 0..m {
                for i in j..m {
                    let v = next();
                    a[(i, j)] = v;
                    a[(j, i)] = v;
                }
            }
        };
        if matches!(want, Want::Natural | Want::All) {
            symmetric(&mut self.d_sigma_lik, &mut next);
        }
        if gradient {
            self.d_noise = next();
            self.d_lik_params.iter_mut().for_each(|v| *v = next());
            self.head = Some((0..head).map(|_| next()).collect());
            symmetric(&mut self.d_kuu, &mut next);
            self.d_z.iter_mut().for_each(|v| *v = next());
        }
        Ok(())
    }

    /// The ELBO (the likelihood sums less the KL term) and what `want` asked for.
    pub(crate) fn finish(self) -> Evaluation {
        let Sums {
            model,
            p,
            want,
            exec,
            kernel,
            factor,
            lik,
            d_mean_lik,
            d_sigma_lik,
            d_noise,
            d_lik_params,
            d_kuu,
            head,
            mut d_z,
            ..
        } = self;
        let (z, q, par) = (&p.z, &p.q, exec.par);
        let elbo = lik - q.kl();
        let mut grad = Vec::new();
        if matches!(want, Want::Model | Want::All) {
            let gu = kernel.grad(z, z, &factor.kuu, &d_kuu, true, true, par);
            let extra = jitter_grad(model.jitter_policy(), factor.jitter, &d_kuu);
            let hu = head_grad(model, &[&gu], extra, d_noise);
            grad = match head {
                Some(h) => h.iter().zip(&hu).map(|(a, b)| a + b).collect(),
                None => hu,
            };
            if let (Some(a), Some(b)) = (&gu.a, &gu.b) {
                d_z += a;
                d_z += b;
            }
            grad.extend_from_slice(d_z.as_slice());
            grad.extend_from_slice(&d_lik_params);
        }
        if want == Want::All {
            grad.extend((&d_mean_lik - &q.mean).iter());
            let d_chol = elbo::d_chol(q, &d_sigma_lik, par);
            grad.extend(lower_entries(&d_chol));
        }
        Evaluation {
            elbo,
            grad,
            d_mean_lik,
            d_sigma_lik,
            jitter: factor.jitter,
        }
    }
}
