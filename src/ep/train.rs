//! Learning a low-rank method's parameters (kernel, inducing inputs, any family
//! parameter) by minimising −log Z_EP with L-BFGS, EP run to its fixed point at every
//! evaluation. Each evaluation starts from the sites of the last one (GPML keeps them
//! between calls too), so after the first few it needs a sweep or two; an evaluation
//! whose warm start does not converge is run again from flat sites, and one that does
//! not converge from there either is an error that says so.

use super::evidence::{EpFit, fit as ep_fit};
use super::posterior::EpPosterior;
use super::sites::{EpSettings, Sites};
use crate::collapsed::Approx;
use crate::error::Result;
use crate::exec::Exec;
use crate::methods::lowrank::{Family, LowRankMethod};
use crate::optim::{self, Control, IterInfo, Outcome};
use nalgebra::DMatrix;

/// A fitted EP classifier: the family's state at the optimum, EP's posterior there and
/// the optimiser's record.
pub struct Trained<S> {
    pub state: S,
    pub posterior: EpPosterior,
    pub outcome: Outcome,
}

/// EP at a state from warm sites, again from flat sites if that fails.
#[allow(clippy::too_many_arguments)] // ep::fit's arguments
fn evaluate<F: Family>(
    method: &LowRankMethod<F>,
    state: &F::State,
    x: &DMatrix<f64>,
    y: &[f64],
    approx: Approx,
    settings: &EpSettings,
    warm: Option<Sites>,
    exec: &Exec,
) -> Result<EpFit> {
    match ep_fit(method, state, x, y, approx, settings, warm.clone(), exec) {
        Err(_) if warm.is_some() => ep_fit(method, state, x, y, approx, settings, None, exec),
        r => r,
    }
}

/// Minimise −log Z_EP over θ (the family's packed parameters; `theta0` unpacked into
/// `state` first) on inputs `x` and 0/1 labels `y`.
#[allow(clippy::too_many_arguments)] // the method, its start, the data, EP's and L-BFGS's settings
pub fn fit<F: Family>(
    method: &LowRankMethod<F>,
    mut state: F::State,
    theta0: &[f64],
    x: &DMatrix<f64>,
    y: &[f64],
    approx: Approx,
    settings: &EpSettings,
    opts: &optim::Options,
    exec: &Exec,
    on_iter: &mut dyn FnMut(&IterInfo) -> Control,
) -> Result<Trained<F::State>> {
    let mut sites: Option<Sites> = None;
    let mut work = state.clone();
    let outcome = optim::minimize(
        |theta| {
            exec.check()?;
            method.family.unpack_state(theta, &mut work);
            let fit = evaluate(method, &work, x, y, approx, settings, sites.take(), exec)?;
            sites = Some(fit.posterior.sites);
            Ok((fit.nlz, fit.grad))
        },
        theta0,
        opts,
        on_iter,
    )?;
    method.family.unpack_state(&outcome.x, &mut state);
    let last = evaluate(method, &state, x, y, approx, settings, sites, exec)?;
    Ok(Trained {
        state,
        posterior: last.posterior,
        outcome,
    })
}
