//! The ELBO's sums over blocks of rows (docs/methods.md §8.1): each block's likelihood
//! term — the Gaussian's closed form (`elbo::gaussian_terms`) or any other likelihood's
//! (`any_likelihood::expected_loglik`) — and the adjoints it gives, added in the blocks'
//! order, summed over processes, and finished into the ELBO and its gradient in
//! [`Method::pack`]'s order. Over pseudo-inputs the kernel turns the adjoints of Kub,
//! Kuu and the prior diagonal into the head's and Z's; over a family (`features.rs`) the
//! family's pull-back does, a block's Kub at a time and Kuu's once at the end.

use super::*;
use crate::kernel::KernelGrad;

/// How the rows' likelihood term is computed: the Gaussian's closed form with its σ²,
/// or another likelihood's expected log-density with its quadrature rule.
enum Observed {
    Gaussian(f64),
    Other(Box<dyn Likelihood>, GaussHermite),
}

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
    /// The likelihood term's form: the Gaussian's closed form with the likelihood's σ²,
    /// or another likelihood and its quadrature rule (then `d_lik_params`, the gradient
    /// in its log-parameters).
    obs: Observed,
    d_lik_params: Vec<f64>,
    d_kuu: DMatrix<f64>,
    head: Option<Vec<f64>>,
    d_z: DMatrix<f64>,
    /// Over a family: the gradient in its `pack` order from the blocks' Kub and prior
    /// diagonal (Kuu's and σ²'s are pulled back by `finish`), and its length.
    d_family: Vec<f64>,
    family_len: usize,
}

impl<'m> Sums<'m> {
    pub(crate) fn new(
        model: &'m ModelFile,
        p: &'m Params,
        want: Want,
        exec: &'m Exec,
    ) -> Result<Sums<'m>> {
        let m = p.m();
        let kernel = model.kernel();
        let factor = factor_of(model, p, exec)?;
        let family_len = match &p.features {
            Features::Family(f) => f.pack(model).len(),
            Features::Inducing(_) => 0,
        };
        let obs = match &model.likelihood {
            None => Observed::Gaussian(model.collapsed_noise()?),
            Some(t) => {
                let quad = t.quadrature().map_err(|why| {
                    Error::at(Location::key("likelihood"), format!("[likelihood] {why}"))
                })?;
                Observed::Other(model.likelihood()?, quad)
            }
        };
        let lik_params = match &obs {
            Observed::Gaussian(_) => 0,
            Observed::Other(l, _) => l.param_names().len(),
        };
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
            d_z: DMatrix::zeros(m, p.z().map_or(0, |z| z.ncols())),
            d_family: vec![0.0; family_len],
            family_len,
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
        let (factor, exec) = (&self.factor, self.exec);
        let project = || -> Result<Projected> {
            match &p.features {
                Features::Inducing(z) => Ok(elbo::project(
                    &Self::prior_of(model, &**kernel, z),
                    factor,
                    x,
                    par,
                )),
                Features::Family(f) => {
                    let (kub, kdiag) = f.kuf(model, x, exec)?;
                    Ok(elbo::project_kub(factor, kub, kdiag, f.degenerate(), par))
                }
            }
        };
        let fresh;
        let proj = match cache {
            Some(kept) => {
                if kept.len() <= k {
                    kept.push(project()?);
                }
                &kept[k]
            }
            None => {
                fresh = project()?;
                &fresh
            }
        };
        let rows = Rows { y, c, log_exposure };
        let t: Terms = match &self.obs {
            Observed::Gaussian(s2) => {
                elbo::gaussian_terms(*s2, &self.factor, &p.q, proj, rows, want, par)
            }
            Observed::Other(lik, quad) => {
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
            let z = match &p.features {
                Features::Inducing(z) => z,
                Features::Family(f) => {
                    let g = f.pull_back(model, x, dkub.clone(), t.d_kdiag, None, 0.0, 0.0, exec)?;
                    self.d_family.iter_mut().zip(&g).for_each(|(a, b)| *a += b);
                    return Ok(());
                }
            };
            let g = kernel.grad(z, x, &proj.kub, dkub, true, false, par);
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
            if self.family_len > 0 {
                buf.extend(self.d_family.iter());
            } else {
                match &self.head {
                    Some(h) => buf.extend(h),
                    None => buf.extend(std::iter::repeat_n(0.0, head)),
                }
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
            if self.family_len > 0 {
                self.d_family.iter_mut().for_each(|v| *v = next());
            } else {
                self.head = Some((0..head).map(|_| next()).collect());
            }
            symmetric(&mut self.d_kuu, &mut next);
            self.d_z.iter_mut().for_each(|v| *v = next());
        }
        Ok(())
    }

    /// The ELBO (the likelihood sums less the KL term) and what `want` asked for.
    pub(crate) fn finish(self) -> Result<Evaluation> {
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
            d_family,
            ..
        } = self;
        let (q, par) = (&p.q, exec.par);
        let elbo = lik - q.kl();
        let mut grad = Vec::new();
        if let (Features::Family(f), Want::Model | Want::All) = (&p.features, want) {
            // Kuu's adjoint and σ²'s, once, through the family (at no rows)
            let none = DMatrix::zeros(0, model.kernel_dim());
            let kuu = Some(d_kuu.clone());
            let empty = DMatrix::zeros(q.len(), 0);
            grad = f.pull_back(
                model,
                &none,
                empty,
                Vec::new(),
                kuu,
                d_noise,
                factor.jitter,
                exec,
            )?;
            grad.iter_mut().zip(&d_family).for_each(|(a, b)| *a += b);
            grad.extend_from_slice(&d_lik_params);
        } else if let (Some(z), Want::Model | Want::All) = (p.z(), want) {
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
        Ok(Evaluation {
            elbo,
            grad,
            d_mean_lik,
            d_sigma_lik,
            jitter: factor.jitter,
        })
    }
}
