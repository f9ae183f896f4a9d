//! svgp's training rows from a file read a block at a time ([`FileRows`], docs/methods.md
//! §8.4): its minibatches are the file's, and the full-data ELBO reads the file a chunk
//! of `Exec::chunk_rows` rows at a time, as the in-memory sum does.

use super::elbo::{Projected, Want};
use super::{Batch, Evaluation, Params, Sums, TrainingRows};
use crate::data::file_rows::FileRows;
use crate::error::Result;
use crate::exec::Exec;
use crate::model_file::ModelFile;
use rand_chacha::ChaCha8Rng;

impl TrainingRows for FileRows {
    fn n(&self) -> usize {
        FileRows::n(self)
    }

    fn next_batch(&mut self, batch: usize, rng: &mut ChaCha8Rng) -> Result<Batch> {
        let t = self.next_rows(batch, rng)?;
        Ok(Batch {
            rows: t.y.len(),
            x: t.x,
            y: t.y,
            log_exposure: t.log_exposure,
        })
    }

    fn sums(
        &self,
        model: &ModelFile,
        p: &Params,
        want: Want,
        _cache: Option<&mut Vec<Projected>>,
        exec: &Exec,
    ) -> Result<Evaluation> {
        let rows = exec.chunk_rows(p.m()).min(FileRows::n(self).max(1));
        let mut sums = Sums::new(model, p, want, exec)?;
        self.for_each_chunk(rows, &mut |t| {
            sums.add(&t.x, &t.y, t.log_exposure.as_deref(), 1.0, None)
        })?;
        sums.finish()
    }
}
