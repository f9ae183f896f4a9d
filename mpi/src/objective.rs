//! `sgpw nlml --distributed --json`: one evaluation of a model's objective and gradient
//! over the rows of every process.

use super::agree::read_stripe;
use super::transport::Processes;
use sgpw::data::LoadSpec;
use sgpw::error::{Error, Result};
use sgpw::exec::Exec;
use sgpw::methods::{self, Objective};
use sgpw::model_file::ModelFile;
use sgpw::train;
use std::time::Instant;

/// The objective and gradient of `model` over the rows of every process, the rows, and
/// the seconds the evaluation took (reading excluded). The root returns them; the
/// others None.
pub fn objective(
    procs: &Processes,
    model: &ModelFile,
    load: &LoadSpec,
    exec: Exec,
) -> Result<Option<(Objective, usize, f64)>> {
    let share = &procs.share;
    let method = methods::get(&model.method)?;
    if !method.shares_rows() {
        return Err(Error::input(format!(
            "--distributed: method '{}' runs in one process",
            method.name()
        )));
    }
    let stripe = read_stripe(share, load)?;
    let data = train::model_data(model, &stripe.x, &stripe.y)?;
    let mut n = [data.y.len() as f64];
    share.sum(&mut n);
    let exec = exec.with_share(share.clone());
    if share.rank != 0 {
        share.serve(&data, &exec)?;
        return Ok(None);
    }
    let started = Instant::now();
    let o = method.objective(model, &data, &exec);
    let seconds = started.elapsed().as_secs_f64();
    share.stop();
    Ok(Some((o?, n[0] as usize, seconds)))
}
