//! `sgpw gen`: write the papers' synthetic data sets.

use crate::data::synthetic;
use crate::error::{Error, Result};
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct GenArgs {
    /// Which data set: sinc, spiral or xsinx3.
    pub name: String,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Output folder.
    #[arg(long, default_value = "datasets")]
    pub out: PathBuf,
}

pub fn run(args: GenArgs) -> Result<()> {
    std::fs::create_dir_all(&args.out)
        .map_err(|e| Error::file(&args.out, format!("cannot create: {e}")))?;
    for (file, header, rows) in synthetic::generate(&args.name, args.seed)? {
        let path = args.out.join(file);
        synthetic::write_csv(&path, &header, &rows)?;
        crate::outln!("wrote {} ({} rows)", path.display(), rows.len())?;
    }
    Ok(())
}
