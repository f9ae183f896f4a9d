//! One fit over many processes with MPI (`mpirun -np K sgpw fit --distributed …`,
//! docs/distributed.md): each process reads its own stripe of the training rows
//! ([`crate::data::load::load_stripe`]); the statistics the start needs come from
//! collectives (standardisation, constant inputs) and from a sample of rows gathered
//! on the root (rank 0), which computes the start as a single process would from
//! them; the root runs L-BFGS and, before each evaluation, broadcasts the parameters
//! (the packed vector, or the whole model when its tables changed) to the others;
//! every evaluation adds the core's sums with one all-reduce per pass
//! ([`crate::methods::shared_rows`]); only the root writes anything. A method that
//! trains on minibatches (svgp) instead runs its loop on every process from the root's
//! broadcast start, each process evaluating the members of the single-process batches
//! it holds.
//!
//! The parts: [`transport`] (MPI, the collectives, the announcements and the serving
//! loop, the traffic), [`agree`] (what the processes agree on before a fit: rows,
//! constant inputs, standardisation, the start's rows), [`fit`](mod@fit) (the fit and its
//! end), [`objective`](mod@objective) (`sgpw nlml --distributed`).

pub mod agree;
pub mod fit;
pub mod objective;
pub mod transport;

pub use agree::START_ROWS;
pub use fit::{Fitted, fit};
pub use objective::objective;
pub use transport::{MpiShare, Processes, Traffic, start};
