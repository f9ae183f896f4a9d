//! `sgpw nlml`: the objective at a model's parameters, without training.

use super::predict::training_data;
use crate::distributed::Distributed;
use crate::error::Result;
use crate::exec::Exec;
use crate::model_file::raw_scale_offset;
use crate::train::model_data;
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct NlmlArgs {
    /// Model file (TOML).
    #[arg(long)]
    pub model: PathBuf,
    /// Training data (CSV or Parquet).
    #[arg(long)]
    pub train: PathBuf,
    /// Target column (default: the last column).
    #[arg(long)]
    pub target: Option<String>,
    /// Print JSON with the gradient in the method's parameter order
    /// (log σ0², log ℓ_1..ℓ_D, log σ², then the method's own tables) and the name of
    /// the objective: "NLML", or "negative ELBO" for vfe (and --approx vfe), whose
    /// objective is Titsias's bound, not the evidence.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub memory: super::MemoryArgs,
    /// Over the processes of an MPI job (`mpirun -np K sgpw-mpi nlml --distributed
    /// --json …`): each reads its own share of the rows; low-rank methods only. Needs
    /// sgpw-mpi, the build of sgpw with MPI.
    #[arg(long)]
    pub distributed: bool,
}

/// `distributed`: how `--distributed` reaches MPI (None: sgpw was built without it).
pub fn run(args: NlmlArgs, distributed: Option<&dyn Distributed>) -> Result<()> {
    let (model, method) = crate::methods::read_model(&args.model)?;
    if args.distributed {
        return nlml_distributed(&args, &model, distributed);
    }
    let (x, y) = training_data(&model, &args.train, args.target.clone())?;
    let data = model_data(&model, &x, &y)?;
    let exec = Exec::default().with_memory_budget(args.memory.bytes());
    // a standardized model's objective is in model units: + n·log(target sd) puts it
    // on the raw target scale, where `fit` reports it and every run compares
    let offset = raw_scale_offset(model.standardize.as_ref(), y.len());
    if args.json {
        let o = method.objective(&model, &data, &exec)?;
        let nlml = super::finite(method.objective_name(&model), o.nlml + offset)?;
        super::print_json(&serde_json::json!({
            "method": model.method,
            "objective": method.objective_name(&model),
            "n_train": y.len(),
            "nlml": nlml,
            "nlml_scale": "raw",
            "jitter": o.jitter,
            "gradient": o.grad,
        }))
    } else {
        let v = super::finite(
            method.objective_name(&model),
            method.nlml(&model, &data, &exec)? + offset,
        )?;
        crate::noteln!(
            "note: {} on the raw target scale{}",
            method.objective_name(&model),
            if model.standardize.is_some() {
                " (the standardized model's own value + n·log target sd)"
            } else {
                ""
            }
        );
        crate::outln!("{v}")?;
        Ok(())
    }
}

/// `nlml --distributed --json`: the objective and gradient over every process's rows,
/// printed by the root. Without MPI: how to get it.
fn nlml_distributed(
    args: &NlmlArgs,
    model: &crate::model_file::ModelFile,
    distributed: Option<&dyn Distributed>,
) -> Result<()> {
    let Some(distributed) = distributed else {
        return Err(crate::error::Error::input(super::NO_MPI));
    };
    if !args.json {
        return Err(crate::error::Error::input(
            "nlml --distributed prints JSON: add --json",
        ));
    }
    let procs = distributed.start()?;
    let load = crate::data::LoadSpec {
        train: args.train.clone(),
        test: None,
        split: None,
        seed: 0,
        target: args.target.clone(),
        features: model.inputs.clone(),
        drop_missing: false,
    };
    let exec = Exec::default().with_memory_budget(args.memory.bytes());
    let Some((o, n, seconds)) = procs.objective(model, &load, exec)? else {
        return Ok(());
    };
    let method = crate::methods::get(&model.method)?;
    let offset = raw_scale_offset(model.standardize.as_ref(), n);
    let nlml = super::finite(method.objective_name(model), o.nlml + offset)?;
    super::print_json(&serde_json::json!({
        "method": model.method,
        "objective": method.objective_name(model),
        "n_train": n,
        "nlml": nlml,
        "nlml_scale": "raw",
        "jitter": o.jitter,
        "gradient": o.grad,
        "processes": procs.size(),
        "evaluation_seconds": seconds,
        "bytes_summed": procs.traffic().summed,
        "bytes_announced": procs.traffic().announced,
    }))
}
