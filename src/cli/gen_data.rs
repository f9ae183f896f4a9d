//! `sgpw gen`: write the papers' synthetic data sets.

use crate::data::synthetic;
use crate::error::{Error, Result};
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct GenArgs {
    /// Which data set: sinc, spiral or xsinx3 (the papers' small sets, train and test
    /// files; spiral's seeds 1–10 are the PSDS paper's ten generations); hetero (1-D
    /// with input-dependent noise in the spirit of the SPGP+HS paper's Figure 1: x
    /// uniform on [0, 10], y = 4 sin(1.1x) + ε, sd(ε) = 0.2·e^{x/4} from 0.2 to 2.4;
    /// 250 train and 500 noisy test points); or big: --n rows of --d inputs uniform on
    /// [−2, 2] and a target that depends smoothly on the first three, y = sin(1.5·x1) +
    /// 0.5·x2·cos(x3) + 0.3·x1·x2 + N(0, 0.1²) (one file, big_N_D.parquet or .csv,
    /// written a block at a time; for the scale benchmarks, not committed).
    pub name: String,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Output folder.
    #[arg(long, default_value = "datasets")]
    pub out: PathBuf,
    /// big: rows.
    #[arg(long, default_value_t = 1_000_000)]
    pub n: usize,
    /// big: input columns.
    #[arg(long, default_value_t = 9)]
    pub d: usize,
    /// big: file format.
    #[arg(long, value_enum, default_value_t = Format::Parquet)]
    pub format: Format,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Parquet,
    Csv,
}

pub fn run(args: GenArgs) -> Result<()> {
    if args.name == "big" {
        let ext = if args.format == Format::Parquet {
            "parquet"
        } else {
            "csv"
        };
        let path = args.out.join(format!("big_{}_{}.{ext}", args.n, args.d));
        crate::data::big::write_big(
            &path,
            args.n,
            args.d,
            args.seed,
            args.format == Format::Parquet,
        )?;
        return crate::outln!(
            "wrote {} ({} rows, {} inputs)",
            path.display(),
            args.n,
            args.d
        );
    }
    std::fs::create_dir_all(&args.out)
        .map_err(|e| Error::file(&args.out, format!("cannot create: {e}")))?;
    for (file, header, rows) in synthetic::generate(&args.name, args.seed)? {
        let path = args.out.join(file);
        synthetic::write_csv(&path, &header, &rows)?;
        crate::outln!("wrote {} ({} rows)", path.display(), rows.len())?;
    }
    Ok(())
}
