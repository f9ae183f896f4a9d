//! A low-rank method's evaluation chunk by chunk, for data too large for one: the rows
//! cut into [`Chunks`], the first pass's summary and the two passes of the objective
//! and its gradient, with the last chunks kept between them as the memory budget allows.

use super::{Family, FamilyState, LowRankMethod, Parts};
use crate::collapsed::{Accumulator, Adjoints, Approx, Backward, ChunkValues, LowRank, Summary};
use crate::data::TrainData;
use crate::error::{Error, Result};
use crate::exec::{Evaluation, Exec};
use crate::methods::shared_rows::SharedEval;
use crate::model_file::ModelFile;
use crate::scratch::Scratch;
use nalgebra::DMatrix;
use std::ops::Range;

impl<F: Family> LowRankMethod<F> {
    /// The chunks of rows when the data are too large for one evaluation
    /// (`Exec::chunk_entries`); None when they fit.
    pub(super) fn chunks(&self, state: &F::State, n: usize, exec: &Exec) -> Result<Option<Chunks>> {
        let rows = exec.chunk_rows(self.family.size(state)?);
        Ok((n > rows).then_some(Chunks { n, rows }))
    }

    /// The first pass over the data chunk by chunk: the summary the objective and the
    /// posterior come from, with Kuf built and dropped one chunk at a time.
    pub(super) fn summary_in_chunks(
        &self,
        state: &F::State,
        data: &TrainData,
        chunks: Chunks,
        approx: Approx,
        exec: &Exec,
        shared: Option<&SharedEval>,
    ) -> Result<Summary> {
        let mut acc: Option<Accumulator> = None;
        for k in 0..chunks.len() {
            self.first_pass(state, data, chunks.get(k), approx, exec, &mut acc)?;
        }
        let mut acc = acc.ok_or_else(|| Error::input("no data"))?;
        if let Some(shared) = shared {
            shared.first(&mut acc)?;
        }
        acc.finish(exec)
    }

    /// The first pass over the rows of every process of `exec.share`, announced by the
    /// root as `what`: the summary of all the rows.
    pub(super) fn shared_summary(
        &self,
        model: &ModelFile,
        data: &TrainData,
        approx: Approx,
        exec: &Exec,
        what: Evaluation,
    ) -> Result<Summary> {
        let share = exec
            .share
            .as_deref()
            .ok_or_else(|| Error::input("internal: no processes to share the rows with"))?;
        let (m, params) = (self.family.check(model)?, self.family.pack(model).len());
        if share.is_root() {
            share.announce(what, model)?;
        }
        let shared = SharedEval::new(share, m, params, approx);
        let chunks = Chunks::of(data.y.len(), exec, m);
        let state = self.family.state(model, &exec.scratch)?;
        let summary = self
            .summary_in_chunks(&state, data, chunks, approx, exec, Some(&shared))
            .map_err(|e| shared.failed(e, 1));
        self.family.recycle_state(state, &exec.scratch);
        summary
    }

    /// One chunk's first pass, building and dropping its parts.
    fn first_pass(
        &self,
        state: &F::State,
        data: &TrainData,
        rows: Range<usize>,
        approx: Approx,
        exec: &Exec,
        acc: &mut Option<Accumulator>,
    ) -> Result<()> {
        let s = &exec.scratch;
        let x = rows_in(&data.x, &rows, s);
        let (parts, extra) = self.family.parts(state, &x, false, exec)?;
        let lr = parts.low_rank(state.collapsed_noise()?, approx);
        let acc = match acc {
            Some(a) => a,
            None => acc.insert(new_accumulator(&lr, approx, exec)?),
        };
        acc.add(&lr, &data.y[rows], exec, false)?;
        self.family.recycle(extra, s);
        parts.recycle(s);
        s.give_matrix(x);
        Ok(())
    }

    /// The objective and gradient chunk by chunk: two passes over the data, each
    /// chunk's Kuf built, used and dropped in each. The family's pull-back is linear in
    /// the adjoints, so it is applied per chunk (∂/∂Kuf, ∂/∂kdiag) and once more at no
    /// data for what sums over them (∂/∂Kuu, ∂/∂σ²).
    ///
    /// The last chunks of the first pass are kept for the second (their inputs, parts
    /// and, for FITC and power EP, V), as many as `exec.memory_budget` allows besides
    /// the chunk in hand when the first pass ends, which costs nothing to keep; the
    /// second pass runs backwards, so it uses them first and frees them before it
    /// computes any other chunk again. Kept or computed again, a chunk's values are the
    /// same bits, so the budget changes the time, never the result. (The kept chunks
    /// live in the frames of [`LowRankMethod::kept_passes`], not in a list: an
    /// evaluation allocates nothing of its own.) Returns the objective and the jitter;
    /// the gradient goes into `grad`. With `shared`, the sums of each pass are added
    /// across processes before the pass finishes.
    #[allow(clippy::too_many_arguments)] // the evaluation's inputs and where its sums go
    pub(super) fn objective_in_chunks(
        &self,
        state: &F::State,
        data: &TrainData,
        chunks: Chunks,
        approx: Approx,
        exec: &Exec,
        grad: &mut Vec<f64>,
        shared: Option<&SharedEval>,
    ) -> Result<(f64, f64)> {
        let s = &exec.scratch;
        let m = self.family.size(state)?;
        let kept_from = chunks.len() - kept_chunks(chunks, m, data.x.ncols(), approx, exec);
        let mut acc: Option<Accumulator> = None;
        for k in 0..kept_from {
            self.first_pass(state, data, chunks.get(k), approx, exec, &mut acc)?;
        }
        let mut back = None;
        self.kept_passes(
            kept_from, chunks, state, data, approx, exec, &mut acc, &mut back, grad, shared,
        )?;
        let (mut back, nlml) = back.ok_or_else(|| Error::input("no data"))?;
        let jitter = back.summary().jitter();
        for k in (0..kept_from).rev() {
            let rows = chunks.get(k);
            let x = rows_in(&data.x, &rows, s);
            let (parts, extra) = self.family.parts(state, &x, true, exec)?;
            self.second_pass(
                state, data, rows, &x, parts, extra, None, nlml, &mut back, exec, grad,
            )?;
            s.give_matrix(x);
        }
        if let Some(shared) = shared {
            shared.second(&mut back, grad)?;
        }
        let (d_kuu, d_noise) = back.finish(exec);
        let none = s.matrix(0, data.x.ncols());
        let (parts, extra) = self.family.parts(state, &none, true, exec)?;
        let adj = Adjoints {
            nlml,
            jitter,
            d_kuf: s.matrix(m, 0),
            d_kuu,
            d_kdiag: s.take(0),
            d_noise,
        };
        self.family
            .pull_back_into(state, &none, &parts, extra, &adj, exec, grad)?;
        adj.recycle(s);
        parts.recycle(s);
        s.give_matrix(none);
        Ok((nlml, jitter))
    }

    /// The kept chunks k.. of [`LowRankMethod::objective_in_chunks`]: chunk k's first
    /// pass, the later chunks' both passes (by recursion), then chunk k's second pass,
    /// with its inputs, parts and values still in this frame. At the end of the chunks
    /// the first pass is complete: `back` gets the second pass's start and the objective.
    #[allow(clippy::too_many_arguments)] // the evaluation's state, threaded through
    fn kept_passes(
        &self,
        k: usize,
        chunks: Chunks,
        state: &F::State,
        data: &TrainData,
        approx: Approx,
        exec: &Exec,
        acc: &mut Option<Accumulator>,
        back: &mut Option<(Backward, f64)>,
        grad: &mut Vec<f64>,
        shared: Option<&SharedEval>,
    ) -> Result<()> {
        let s = &exec.scratch;
        if k == chunks.len() {
            let mut acc = acc.take().ok_or_else(|| Error::input("no data"))?;
            if let Some(shared) = shared {
                shared.first(&mut acc)?;
            }
            let summary = acc.finish(exec)?;
            let nlml = summary.nlml_in(s);
            if !nlml.is_finite() {
                summary.recycle(s);
                return Err(Error::numerical("the NLML is not finite"));
            }
            *back = Some((Backward::new(summary, exec), nlml));
            return Ok(());
        }
        let rows = chunks.get(k);
        let x = rows_in(&data.x, &rows, s);
        let (parts, extra) = self.family.parts(state, &x, true, exec)?;
        let values = {
            let lr = parts.low_rank(state.collapsed_noise()?, approx);
            let acc = match acc {
                Some(a) => a,
                None => acc.insert(new_accumulator(&lr, approx, exec)?),
            };
            acc.add(&lr, &data.y[rows.clone()], exec, true)?
        };
        self.kept_passes(
            k + 1,
            chunks,
            state,
            data,
            approx,
            exec,
            acc,
            back,
            grad,
            shared,
        )?;
        let (b, nlml) = back.as_mut().ok_or_else(|| Error::input("no data"))?;
        let nlml = *nlml;
        self.second_pass(
            state, data, rows, &x, parts, extra, values, nlml, b, exec, grad,
        )?;
        s.give_matrix(x);
        Ok(())
    }

    /// One chunk's second pass and the family's pull-back of its adjoints into `grad`.
    #[allow(clippy::too_many_arguments)] // the chunk and the evaluation's state
    fn second_pass(
        &self,
        state: &F::State,
        data: &TrainData,
        rows: Range<usize>,
        x: &DMatrix<f64>,
        parts: Parts,
        extra: F::Extra,
        values: Option<ChunkValues>,
        nlml: f64,
        back: &mut Backward,
        exec: &Exec,
        grad: &mut Vec<f64>,
    ) -> Result<()> {
        let s = &exec.scratch;
        let approx = back.summary().approx();
        let lr = parts.low_rank(state.collapsed_noise()?, approx);
        let (d_kuf, d_kdiag) = back.chunk(&lr, &data.y[rows], values, exec)?;
        let m = d_kuf.nrows();
        let adj = Adjoints {
            nlml,
            jitter: back.summary().jitter(),
            d_kuf,
            d_kuu: s.zero_matrix(m, m),
            d_kdiag,
            d_noise: 0.0,
        };
        self.family
            .pull_back_into(state, x, &parts, extra, &adj, exec, grad)?;
        adj.recycle(s);
        parts.recycle(s);
        Ok(())
    }
}

/// n rows cut into chunks of `rows` (the last one shorter).
#[derive(Clone, Copy, Debug)]
pub(super) struct Chunks {
    n: usize,
    rows: usize,
}

impl Chunks {
    /// n rows in chunks of `exec.chunk_rows(m)`.
    pub(super) fn of(n: usize, exec: &Exec, m: usize) -> Chunks {
        Chunks {
            n,
            rows: exec.chunk_rows(m),
        }
    }

    pub(super) fn len(&self) -> usize {
        self.n.div_ceil(self.rows)
    }

    pub(super) fn get(&self, k: usize) -> Range<usize> {
        let first = k * self.rows;
        first..(first + self.rows).min(self.n)
    }
}

/// The most chunks the first pass keeps for the second, whatever the budget: each
/// is a frame of [`LowRankMethod::kept_passes`] on the stack.
const MAX_KEPT: usize = 256;

/// Bytes a chunk of `rows` rows holds while it is kept: Kuf (and V where the second
/// pass needs it), its inputs, and its n-vectors. (A family's extras, such as the
/// sines of the frequency features, are not counted: they are at most another Kuf.)
fn kept_bytes(rows: usize, m: usize, d: usize, approx: Approx) -> usize {
    let matrices = if approx.per_point_lambda() { 2 } else { 1 };
    8 * rows * (m * matrices + d + 4)
}

/// How many chunks (the last ones) the first pass keeps for the second: the one in
/// hand when it ends, and as many more as the memory budget holds.
pub(super) fn kept_chunks(
    chunks: Chunks,
    m: usize,
    d: usize,
    approx: Approx,
    exec: &Exec,
) -> usize {
    let mut spent = 0;
    let mut count = 1;
    for k in (0..chunks.len().saturating_sub(1)).rev() {
        spent += kept_bytes(chunks.get(k).len(), m, d, approx);
        if spent > exec.memory_budget || count == MAX_KEPT {
            break;
        }
        count += 1;
    }
    count.min(chunks.len())
}

/// A new accumulator for `lr`'s Kuu and settings; without A's identity on a process
/// other than the root of a shared evaluation (the identity is counted once).
fn new_accumulator(lr: &LowRank, approx: Approx, exec: &Exec) -> Result<Accumulator> {
    let acc = Accumulator::new(lr.kuu, lr.jitter, approx, lr.noise, exec)?;
    Ok(match exec.share.as_deref() {
        Some(share) if !share.is_root() => acc.without_identity(),
        _ => acc,
    })
}

/// Rows `rows` of x as a matrix of their own, in memory from `scratch`.
fn rows_in(x: &DMatrix<f64>, rows: &Range<usize>, scratch: &Scratch) -> DMatrix<f64> {
    let mut out = scratch.matrix(rows.len(), x.ncols());
    out.copy_from(&x.rows(rows.start, rows.len()));
    out
}
