//! One fit over many processes (`mpirun -np K sgpw-mpi fit --distributed …`,
//! docs/distributed.md): what the command line asks of it. The MPI side lives in the
//! package `sgpw-mpi` (mpi/), whose binary hands [`crate::cli::main`] its
//! [`Distributed`]; so the library needs no MPI to build, and the MPI build reuses the
//! library the plain build compiled. The plain `sgpw` passes none, and `--distributed`
//! says how to get it ([`crate::cli::NO_MPI`]).

use crate::data::LoadSpec;
use crate::error::Result;
use crate::exec::Exec;
use crate::methods::{Objective, ValidRunSpec};
use crate::model_file::ModelFile;
use crate::run_context::Progress;
use crate::train::FitResult;

/// How a binary built with MPI joins its job.
pub trait Distributed {
    /// Initialise MPI (once per program); it is finalised when the job is dropped.
    fn start(&self) -> Result<Box<dyn Job>>;
}

/// This process's part in an MPI job.
pub trait Job {
    /// This process's rank (0: the root, which reports and saves).
    fn rank(&self) -> usize;
    /// How many processes the job has.
    fn size(&self) -> usize;
    /// The bytes this process has sent into collectives so far.
    fn traffic(&self) -> Traffic;
    /// `sgpw fit --distributed` on every process: the root returns what it fitted, the
    /// others None once the root has finished.
    fn fit(
        &self,
        load: &LoadSpec,
        spec: &ValidRunSpec,
        exec: Exec,
        sink: &dyn Fn(&Progress),
    ) -> Result<Option<Fitted>>;
    /// The objective and gradient of `model` over the rows of every process, the rows,
    /// and the seconds the evaluation took (reading excluded). The root returns them;
    /// the others None.
    fn objective(
        &self,
        model: &ModelFile,
        load: &LoadSpec,
        exec: Exec,
    ) -> Result<Option<(Objective, usize, f64)>>;
}

/// What the root hands back from a distributed fit.
pub struct Fitted {
    pub result: FitResult,
    pub n_train: usize,
    pub n_test: usize,
    pub dim: usize,
    pub notes: Vec<String>,
    pub processes: usize,
    pub traffic: Traffic,
    /// A fit on minibatches: the bytes this process summed per minibatch step.
    pub bytes_per_step: Option<usize>,
}

/// Bytes this process has sent into collectives, by kind.
#[derive(Clone, Copy, Debug, Default)]
pub struct Traffic {
    /// Evaluations announced (root) or served (the others).
    pub evaluations: usize,
    /// Bytes of every all-reduce of the core's sums, and of the last of each pass.
    pub summed: usize,
    pub first_pass: usize,
    pub second_pass: usize,
    /// Bytes of the announcements (parameters or models) broadcast.
    pub announced: usize,
    /// Bytes of the all-reduces of a value alone with its failure slot (an objective
    /// without its gradient: a minibatch fit's checks of its bound), within `summed`.
    pub values: usize,
}
