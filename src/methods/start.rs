//! Where a run's hyperparameters start: the defaults of docs/methods.md §0.4, or those of a
//! full GP fitted on a random subset first. (A module of its own because the subset
//! fit is the exact GP's, which itself uses the shared parameter helpers.)

use super::hyper::default_hyper;
use super::method::ValidRunSpec;
use crate::data::TrainData;
use crate::error::Result;
use crate::model_file::Hyper;
use crate::run_context::{Phase, RunContext};
use rand_chacha::ChaCha8Rng;

/// The hyperparameters a run starts from: those of a full GP fitted on a random
/// subset when `init_lengthscales_from_subset` is set (the inter-domain and PSDS
/// papers' choice on pumadyn-32nm), else the defaults of docs/methods.md §0.4. Methods draw
/// their features (frequencies, widths) from these, so the subset fit comes first.
/// Either way with the run's kernel (`--kernel`).
pub fn initial_hyper(
    data: &TrainData,
    spec: &ValidRunSpec,
    ctx: &RunContext,
    rng: &mut ChaCha8Rng,
) -> Result<Hyper> {
    let kernel = spec.options.kernel.unwrap_or_default();
    match spec.options.init_lengthscales_from_subset {
        Some(n) => {
            ctx.enter(Phase::SubsetInit);
            super::exact::hyper_from_subset(
                data,
                n,
                kernel,
                spec.iters.min(200),
                spec.options.lengthscale_start(),
                ctx,
                rng,
            )
        }
        None => Ok(default_hyper(data, spec.options.lengthscale_start()).with_kernel(kernel)),
    }
}
