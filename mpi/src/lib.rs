//! One fit over many processes with MPI (`mpirun -np K sgpw-mpi fit --distributed …`,
//! docs/distributed.md): each process reads its own stripe of the training rows
//! ([`sgpw::data::load::load_stripe`]); the statistics the start needs come from
//! collectives (standardisation, constant inputs) and from a sample of rows gathered
//! on the root (rank 0), which computes the start as a single process would from
//! them; the root runs L-BFGS and, before each evaluation, broadcasts the parameters
//! (the packed vector, or the whole model when its tables changed) to the others;
//! every evaluation adds the core's sums with one all-reduce per pass
//! ([`sgpw::methods::shared_rows`]); only the root writes anything. A method that
//! trains on minibatches (svgp) instead runs its loop on every process from the root's
//! broadcast start, each process evaluating the members of the single-process batches
//! it holds.
//!
//! A package of its own so that the library needs no MPI and this build reuses the
//! library the plain build compiled: the binary `sgpw-mpi` is sgpw's command line given
//! [`Mpi`] ([`sgpw::distributed::Distributed`]).
//!
//! The parts: [`transport`] (MPI, the collectives, the announcements and the serving
//! loop, the traffic), [`agree`] (what the processes agree on before a fit: rows,
//! constant inputs, standardisation, the start's rows), [`fit`](mod@fit) (the fit and its
//! end), [`objective`](mod@objective) (`sgpw-mpi nlml --distributed`).

pub mod agree;
pub mod fit;
pub mod objective;
pub mod transport;

pub use agree::START_ROWS;
pub use fit::fit;
pub use objective::objective;
pub use transport::{MpiShare, Processes, start};

use sgpw::data::LoadSpec;
use sgpw::distributed::{Distributed, Fitted, Job, Traffic};
use sgpw::error::Result;
use sgpw::exec::Exec;
use sgpw::methods::{Objective, ValidRunSpec};
use sgpw::model_file::ModelFile;
use sgpw::run_context::Progress;

/// The system's MPI, as the command line's `--distributed` reaches it.
pub struct Mpi;

impl Distributed for Mpi {
    fn start(&self) -> Result<Box<dyn Job>> {
        Ok(Box::new(start()?))
    }
}

impl Job for Processes {
    fn rank(&self) -> usize {
        self.share.rank
    }

    fn size(&self) -> usize {
        self.share.size
    }

    fn traffic(&self) -> Traffic {
        self.share.traffic()
    }

    fn fit(
        &self,
        load: &LoadSpec,
        spec: &ValidRunSpec,
        exec: Exec,
        sink: &dyn Fn(&Progress),
    ) -> Result<Option<Fitted>> {
        fit(self, load, spec, exec, sink)
    }

    fn objective(
        &self,
        model: &ModelFile,
        load: &LoadSpec,
        exec: Exec,
    ) -> Result<Option<(Objective, usize, f64)>> {
        objective(self, model, load, exec)
    }
}
