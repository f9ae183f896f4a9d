//! Expectation propagation for binary classification with the probit likelihood
//! (docs/methods.md §10): the sites and their moment matching (`sites.rs`), EP's
//! Gaussian posterior in the low-rank form and the site loop (`posterior.rs`), the EP
//! estimate of the log evidence and its gradient for the low-rank families, through the
//! Gaussian core (`evidence.rs`), and the exact GP with EP, the reference case
//! (`exact.rs`). `methods/lowrank/ep.rs` runs it through a feature family. One sweep of the low-rank forms is O(n·m²).

mod evidence;
pub mod exact;
pub mod posterior;
pub mod sites;

pub use evidence::{
    Prediction, low_rank_evidence, low_rank_posterior, low_rank_prior, site_terms, whiten,
};
pub use posterior::{Cavities, EpPosterior, EpPrior, run};
pub use sites::{EpSettings, Sites, Tilted, probit_probability, probit_tilted, sign_of};
