//! `sgpw gen big`: a large synthetic regression set for the scale benchmarks, written
//! a block of rows at a time (memory independent of n), as CSV or Parquet.
//!
//! Inputs are uniform on [−2, 2]^D; the target depends smoothly on the first three
//! inputs only (fewer when D < 3) and carries Gaussian noise of sd 0.1:
//! `y = sin(1.5·x1) + 0.5·x2·cos(x3) + 0.3·x1·x2 + ε`.

use crate::error::{Error, Result};
use polars_core::prelude::*;
use polars_io::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;
use std::io::{BufWriter, Write};
use std::path::Path;

/// Rows generated and written at a time.
const BLOCK_ROWS: usize = 1 << 16;

/// The noise-free target of one row of inputs.
pub fn big_function(x: &[f64]) -> f64 {
    let at = |d: usize| x.get(d).copied().unwrap_or(0.0);
    (1.5 * at(0)).sin() + 0.5 * at(1) * at(2).cos() + 0.3 * at(0) * at(1)
}

/// Write n rows of D inputs and y to `path` (Parquet if `parquet`, else CSV).
pub fn write_big(path: &Path, n: usize, d: usize, seed: u64, parquet: bool) -> Result<()> {
    if n == 0 || d == 0 {
        return Err(Error::input("gen big needs --n ≥ 1 and --d ≥ 1"));
    }
    let fail = |e: &dyn std::fmt::Display| Error::file(path, format!("cannot write: {e}"));
    if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| fail(&e))?;
    }
    let file = std::fs::File::create(path).map_err(|e| fail(&e))?;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let names: Vec<String> = (1..=d)
        .map(|k| format!("x{k}"))
        .chain(["y".into()])
        .collect();
    // one block: D input columns and y
    let mut block = |rows: usize| -> Vec<Vec<f64>> {
        let mut cols = vec![Vec::with_capacity(rows); d + 1];
        let mut x = vec![0.0; d];
        for _ in 0..rows {
            for (k, v) in x.iter_mut().enumerate() {
                *v = rng.random_range(-2.0..2.0);
                cols[k].push(*v);
            }
            let e: f64 = rng.sample(StandardNormal);
            cols[d].push(big_function(&x) + 0.1 * e);
        }
        cols
    };
    if parquet {
        let frame = |cols: Vec<Vec<f64>>| {
            DataFrame::new_infer_height(
                names
                    .iter()
                    .zip(cols)
                    .map(|(name, c)| Column::new(name.as_str().into(), c))
                    .collect(),
            )
        };
        let first = frame(block(BLOCK_ROWS.min(n))).map_err(|e| fail(&e))?;
        let mut writer = ParquetWriter::new(file)
            .batched(first.schema())
            .map_err(|e| fail(&e))?;
        writer.write_batch(&first).map_err(|e| fail(&e))?;
        let mut done = BLOCK_ROWS.min(n);
        while done < n {
            let rows = BLOCK_ROWS.min(n - done);
            let df = frame(block(rows)).map_err(|e| fail(&e))?;
            writer.write_batch(&df).map_err(|e| fail(&e))?;
            done += rows;
        }
        writer.finish().map_err(|e| fail(&e))?;
        return Ok(());
    }
    let mut out = BufWriter::new(file);
    writeln!(out, "{}", names.join(",")).map_err(|e| fail(&e))?;
    let mut done = 0;
    while done < n {
        let rows = BLOCK_ROWS.min(n - done);
        let cols = block(rows);
        for i in 0..rows {
            let cells: Vec<String> = cols.iter().map(|c| c[i].to_string()).collect();
            writeln!(out, "{}", cells.join(",")).map_err(|e| fail(&e))?;
        }
        done += rows;
    }
    out.flush().map_err(|e| fail(&e))
}
