//! `sgpw gen`: write the papers' synthetic data sets.

use crate::data::synthetic;
use crate::error::{Error, Result};
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct GenArgs {
    /// Which data set: sinc (noiseless sinc, PSDS paper), spiral (PSDS paper; seeds
    /// 1–10 are its ten generations), xsinx3 (EigenGP paper), or hetero (1-D with
    /// input-dependent noise in the spirit of the SPGP+HS paper's Figure 1: x uniform
    /// on [0, 10], y = 4 sin(1.1x) + ε, sd(ε) = 0.2·e^{x/4} from 0.2 to 2.4; 250 train
    /// and 500 noisy test points).
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
        println!("wrote {} ({} rows)", path.display(), rows.len());
    }
    Ok(())
}
