//! One greedy selection: the rules (RAND, INFO, KAPPA, DMAX, SB) that choose the next
//! basis point from candidates drawn at random, the kernel rows of the candidates with
//! their cache, and the retries at a larger jitter.

use super::incremental::Incremental;
use crate::data::TrainData;
use crate::error::{Error, Result};
use crate::exec::{Exec, Par};
use crate::kernel::ModelKernel;
use crate::linalg::{self, Jitter};
use crate::model_file::ModelFile;
use crate::optim::Control;
use crate::run_spec::{ApproxKind, Select};
use nalgebra::DMatrix;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::collections::{HashMap, VecDeque};
use std::time::Instant;

/// Candidates per step of SB and fresh kernel rows per step of KAPPA / DMAX
/// (Smola & Bartlett's κ = 59, which the paper keeps).
pub const KAPPA: usize = 59;

/// Kernel columns K(X, x_c) of candidates, with the optional cache of discarded rows.
struct Rows<'a> {
    x: &'a DMatrix<f64>,
    kernel: ModelKernel,
    /// Discarded rows by training index, oldest first out.
    discarded: HashMap<usize, Vec<f64>>,
    fifo: VecDeque<usize>,
    capacity: usize,
    computed: usize,
    hits: usize,
}

impl<'a> Rows<'a> {
    fn new(x: &'a DMatrix<f64>, kernel: ModelKernel, capacity: usize) -> Rows<'a> {
        Rows {
            x,
            kernel,
            discarded: HashMap::new(),
            fifo: VecDeque::new(),
            capacity,
            computed: 0,
            hits: 0,
        }
    }

    /// K(X, x_c) for each candidate (n×k, column c for candidate c).
    fn fetch(&mut self, cands: &[usize], par: Par) -> DMatrix<f64> {
        let n = self.x.nrows();
        let mut out = DMatrix::zeros(n, cands.len());
        let mut missing = Vec::new();
        for (c, i) in cands.iter().enumerate() {
            match self.discarded.remove(i) {
                Some(row) => {
                    out.column_mut(c).copy_from_slice(&row);
                    self.hits += 1;
                }
                None => missing.push(c),
            }
        }
        if !missing.is_empty() {
            let xc = DMatrix::from_fn(missing.len(), self.x.ncols(), |a, d| {
                self.x[(cands[missing[a]], d)]
            });
            let k = self.kernel.matrix(self.x, &xc, par);
            for (a, &c) in missing.iter().enumerate() {
                out.column_mut(c).copy_from(&k.column(a));
            }
            self.computed += missing.len();
        }
        out
    }

    /// Keep a row that is leaving the candidates, if there is room for discarded rows.
    fn discard(&mut self, i: usize, row: &[f64]) {
        if self.capacity == 0 {
            return;
        }
        // the FIFO may still name rows that were fetched again since; skip those
        while self.discarded.len() >= self.capacity {
            match self.fifo.pop_front() {
                Some(old) => {
                    self.discarded.remove(&old);
                }
                None => break,
            }
        }
        self.discarded.insert(i, row.to_vec());
        self.fifo.push_back(i);
    }
}

/// Points that may not be drawn (in the basis, in the cache, unusable), with their count.
struct Taken {
    flag: Vec<bool>,
    count: usize,
}

impl Taken {
    fn new(n: usize) -> Taken {
        Taken {
            flag: vec![false; n],
            count: 0,
        }
    }

    fn set(&mut self, i: usize) {
        if !self.flag[i] {
            self.flag[i] = true;
            self.count += 1;
        }
    }

    fn clear(&mut self, i: usize) {
        if self.flag[i] {
            self.flag[i] = false;
            self.count -= 1;
        }
    }

    fn free(&self) -> usize {
        self.flag.len() - self.count
    }

    /// Up to k distinct free points uniformly at random, marked taken.
    fn draw(&mut self, k: usize, rng: &mut ChaCha8Rng) -> Vec<usize> {
        let n = self.flag.len();
        let free = self.free();
        let k = k.min(free);
        let out: Vec<usize> = if k == free {
            (0..n).filter(|&i| !self.flag[i]).collect()
        } else if 2 * free > n {
            // mostly free: rejection is cheap
            let mut out = Vec::with_capacity(k);
            while out.len() < k {
                let i = rng.random_range(0..n);
                if !self.flag[i] && !out.contains(&i) {
                    out.push(i);
                }
            }
            out
        } else {
            let pool: Vec<usize> = (0..n).filter(|&i| !self.flag[i]).collect();
            rand::seq::index::sample(rng, pool.len(), k)
                .iter()
                .map(|a| pool[a])
                .collect()
        };
        for &i in &out {
            self.set(i);
        }
        out
    }
}

/// How one selection runs.
#[derive(Clone, Debug)]
pub struct Config {
    pub select: Select,
    pub d_max: usize,
    /// Candidates per step (SB) and fresh rows per step (KAPPA, DMAX).
    pub kappa: usize,
    /// Cache size c of KAPPA / DMAX (κ and d_max in the paper).
    pub cache: usize,
    /// Discarded kernel rows kept for reuse (0: none).
    pub discard_cache: usize,
}

impl Config {
    /// The paper's settings for a rule: κ = 59, c = κ (KAPPA) or d_max (DMAX).
    pub fn paper(select: Select, d_max: usize) -> Config {
        Config {
            select,
            d_max,
            kappa: KAPPA,
            cache: match select {
                Select::Dmax => d_max,
                _ => KAPPA,
            },
            discard_cache: 0,
        }
    }
}

/// What a selection produced.
#[derive(Clone, Debug)]
pub struct Selected {
    /// Training rows in the order they were selected.
    pub rows: Vec<usize>,
    /// The DTC NLML with 0, 1, …, d_max basis points.
    pub trace: Vec<f64>,
    pub seconds: f64,
    /// Kernel rows computed, and rows served by the discard cache.
    pub kernel_rows: usize,
    pub discard_hits: usize,
    /// The absolute jitter on K_I's diagonal the selection used.
    pub jitter: f64,
}

/// The objective of a greedy model (`approx`): the VFE bound unless it says `dtc`.
pub fn objective_kind(model: &ModelFile) -> ApproxKind {
    model.approx.unwrap_or(ApproxKind::Vfe)
}

/// Select a basis of `cfg.d_max` training points at the model's hyperparameters.
/// `warm`: rows to fill the cache of KAPPA / DMAX with first (the previous basis during
/// adaptation). `step(rows, nlml)` is called with the basis so far (training rows, in
/// selection order) and its DTC NLML after every added point (and at d = 0); an error
/// from it (cancellation) ends the selection, `Control::Finish` (early stopping on a
/// validation score) ends it with the basis it has, which may then be smaller than
/// d_max.
///
/// The jitter on K_I's diagonal follows docs/methods.md §1.3: the model's `jitter` if it has
/// one, else ε·σ0² with ε = 1e-8, and when fewer than d_max training points are
/// numerically independent at that jitter (every other one within it of the span of
/// the basis: long lengthscales), the selection starts again with ε ten times larger,
/// up to 1e-2. [`Selected::jitter`] is the absolute jitter that was used; `step` then
/// sees d = 0 again.
pub fn select(
    data: &TrainData,
    model: &ModelFile,
    cfg: &Config,
    warm: &[usize],
    rng: &mut ChaCha8Rng,
    step: &mut dyn FnMut(&[usize], f64) -> Result<Control>,
    exec: &Exec,
) -> Result<Selected> {
    let n = data.y.len();
    if cfg.d_max == 0 || cfg.d_max > n {
        return Err(Error::input(format!(
            "greedy: d_max = {} must be between 1 and the training size {n}",
            cfg.d_max
        )));
    }
    let started = Instant::now();
    let (mut jitter, scale, auto) = match model.jitter_policy() {
        Jitter::Fixed(j) => (j, 1.0, false),
        Jitter::Auto { scale } => (linalg::JITTER_START * scale, scale, true),
    };
    loop {
        if let Some(mut s) = attempt(data, model, cfg, warm, rng, step, exec, jitter)? {
            s.seconds = started.elapsed().as_secs_f64();
            return Ok(s);
        }
        if !auto || jitter * 10.0 > linalg::JITTER_MAX * scale * 1.000001 {
            return Err(Error::numerical(format!(
                "greedy: fewer than the {} basis points requested are numerically \
                 independent of each other at these hyperparameters, even with the jitter \
                 {jitter:e}{}; choose a smaller m",
                cfg.d_max,
                if auto {
                    ""
                } else {
                    " (the model's fixed jitter: remove the key to let sgpw raise it)"
                }
            )));
        }
        jitter *= 10.0;
    }
}

/// One selection at an absolute jitter; None when the candidates ran out first.
#[allow(clippy::too_many_arguments)]
fn attempt(
    data: &TrainData,
    model: &ModelFile,
    cfg: &Config,
    warm: &[usize],
    rng: &mut ChaCha8Rng,
    step: &mut dyn FnMut(&[usize], f64) -> Result<Control>,
    exec: &Exec,
    jitter: f64,
) -> Result<Option<Selected>> {
    let n = data.y.len();
    let par = exec.par;
    // the algebra's k(x, x): σ0², or a composed kernel's prior variance; its noise the
    // likelihood's
    let sf2 = super::prior_variance(model);
    let mut inc = Incremental::new(&data.y, sf2, model.collapsed_noise()?, jitter, cfg.d_max);
    let mut rows = Rows::new(&data.x, model.kernel(), cfg.discard_cache);
    let approx = objective_kind(model);
    let mut trace = vec![inc.objective(approx)];
    let mut finished = step(&[], trace[0])? == Control::Finish;
    // in the basis or unusable (numerically in its span)
    let mut taken = Taken::new(n);
    let mut record = |inc: &Incremental, trace: &mut Vec<f64>| -> Result<bool> {
        let v = inc.objective(approx);
        trace.push(v);
        Ok(step(inc.rows(), v)? == Control::Finish)
    };
    match cfg.select {
        _ if finished => {}
        Select::Rand | Select::Info => {
            while inc.d() < cfg.d_max && !finished {
                exec.check()?;
                let j = if cfg.select == Select::Rand {
                    taken.draw(1, rng).first().copied()
                } else {
                    let mut best: Option<(usize, f64)> = None;
                    for i in (0..n).filter(|&i| !taken.flag[i]) {
                        let s = inc.info_score(i);
                        if best.is_none_or(|(_, b)| s > b) {
                            best = Some((i, s));
                        }
                    }
                    best.map(|(i, _)| {
                        taken.set(i);
                        i
                    })
                };
                let Some(j) = j else { return Ok(None) };
                let r = rows.fetch(&[j], par);
                if let Some(col) = inc.column(j, r.as_slice(), par) {
                    inc.add(col);
                    finished = record(&inc, &mut trace)?;
                }
            }
        }
        Select::Sb => {
            while inc.d() < cfg.d_max && !finished {
                exec.check()?;
                let cands = taken.draw(cfg.kappa, rng);
                if cands.is_empty() {
                    return Ok(None);
                }
                let r = rows.fetch(&cands, par);
                let (gains, parts) = inc.sb(&cands, &r, par);
                let best = (0..cands.len()).filter(|&c| gains[c].is_finite()).fold(
                    None,
                    |b: Option<usize>, c| match b {
                        Some(b) if gains[b] >= gains[c] => Some(b),
                        _ => Some(c),
                    },
                );
                for (c, &i) in cands.iter().enumerate() {
                    // the chosen one joins the basis; a candidate in the span of the
                    // basis (no finite gain) is never drawn again
                    if best == Some(c) || !gains[c].is_finite() {
                        continue;
                    }
                    taken.clear(i);
                    rows.discard(i, r.column(c).as_slice());
                }
                if let Some(c) = best
                    && let Some(col) = inc.take(cands[c], &parts, c)
                {
                    inc.add(col);
                    finished = record(&inc, &mut trace)?;
                }
            }
        }
        Select::Kappa | Select::Dmax => {
            let mut on_add = |inc: &Incremental| record(inc, &mut trace);
            let complete = select_cached(
                &mut inc,
                &mut rows,
                &mut taken,
                cfg,
                warm,
                rng,
                &mut on_add,
                exec,
            )?;
            if !complete {
                return Ok(None);
            }
        }
    }
    Ok(Some(Selected {
        rows: inc.rows().to_vec(),
        trace,
        seconds: 0.0,
        kernel_rows: rows.computed,
        discard_hits: rows.hits,
        jitter,
    }))
}

/// KAPPA / DMAX: post-backfitting scores on a cache of `cfg.cache` kernel rows. Each
/// step scores the cache, adds the best, and replaces it and the κ − 1 lowest-scored by
/// κ fresh random points from outside the basis and the cache. `on_add` returns true to
/// finish early. Returns false when the candidates ran out before d_max points.
#[allow(clippy::too_many_arguments)]
fn select_cached(
    inc: &mut Incremental,
    rows: &mut Rows,
    taken: &mut Taken,
    cfg: &Config,
    warm: &[usize],
    rng: &mut ChaCha8Rng,
    on_add: &mut dyn FnMut(&Incremental) -> Result<bool>,
    exec: &Exec,
) -> Result<bool> {
    let n = inc.n();
    let par = exec.par;
    let c_cap = cfg.cache.clamp(1, n);
    let mut slot: Vec<Option<usize>> = vec![None; c_cap];
    let mut cols = DMatrix::zeros(n, c_cap);
    let mut rr = vec![0.0; c_cap];
    let fill = |points: &[usize],
                slot: &mut Vec<Option<usize>>,
                cols: &mut DMatrix<f64>,
                rr: &mut Vec<f64>,
                rows: &mut Rows| {
        let r = rows.fetch(points, par);
        let free: Vec<usize> = (0..c_cap).filter(|&s| slot[s].is_none()).collect();
        for ((c, &i), &s) in points.iter().enumerate().zip(&free) {
            slot[s] = Some(i);
            cols.column_mut(s).copy_from(&r.column(c));
            rr[s] = r.column(c).norm_squared();
        }
    };
    let mut start: Vec<usize> = Vec::with_capacity(c_cap);
    for &i in warm {
        if start.len() < c_cap && i < n && !taken.flag[i] {
            taken.set(i);
            start.push(i);
        }
    }
    start.extend(taken.draw(c_cap - start.len(), rng));
    fill(&start, &mut slot, &mut cols, &mut rr, rows);
    while inc.d() < cfg.d_max {
        exec.check()?;
        let index: Vec<usize> = slot.iter().map(|s| s.unwrap_or(0)).collect();
        let scores = inc.backfit_scores(&index, &cols, &rr, par);
        let mut order: Vec<usize> = (0..c_cap).filter(|&s| slot[s].is_some()).collect();
        if order.is_empty() {
            return Ok(false);
        }
        order.sort_by(|&a, &b| {
            scores[b]
                .total_cmp(&scores[a])
                .then(index[a].cmp(&index[b]))
        });
        let mut chosen = None;
        for &s in &order {
            let i = index[s];
            match inc.column(i, cols.column(s).as_slice(), par) {
                Some(col) => {
                    chosen = Some((s, col));
                    break;
                }
                // in the span of the basis: leaves the cache, never drawn again
                None => slot[s] = None,
            }
        }
        if let Some((s, col)) = chosen {
            inc.add(col);
            slot[s] = None;
            if on_add(inc)? {
                break;
            }
        }
        if inc.d() == cfg.d_max {
            break;
        }
        // κ fresh points from outside the basis and the cache replace the chosen one
        // (and any that left) and, for the rest, the lowest-scored
        let fresh = taken.draw(cfg.kappa.min(c_cap), rng);
        let empty = slot.iter().filter(|s| s.is_none()).count();
        let mut evict = fresh.len().saturating_sub(empty);
        for &s in order.iter().rev() {
            if evict == 0 {
                break;
            }
            if let Some(i) = slot[s] {
                rows.discard(i, cols.column(s).as_slice());
                taken.clear(i);
                slot[s] = None;
                evict -= 1;
            }
        }
        fill(&fresh, &mut slot, &mut cols, &mut rr, rows);
    }
    Ok(true)
}
