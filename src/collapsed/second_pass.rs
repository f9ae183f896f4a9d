//! The second pass of the core, after the first: the adjoints ∂/∂Kuf and ∂/∂kdiag of
//! each chunk, then ∂/∂Kuu and ∂/∂σ² from what sums over the data (the derivation is
//! in the module comment of `likelihood`).

use super::approx::Approx;
use super::first_pass::{BLOCK, ChunkValues, lambdas, solve_copy, stripes};
use super::inputs::{LowRank, check_chunk};
use super::kuu_factor::SMALL;
use super::summary::Summary;
use crate::error::Result;
use crate::exec::Exec;
use crate::linalg;
use multiversion::multiversion;
use nalgebra::DMatrix;

/// The second pass over the data, chunk by chunk, after the first: the adjoints of
/// each chunk's Kuf and kdiag ([`Backward::chunk`]), while the parts of ∂/∂Kuu and
/// ∂/∂σ² that sum over the data accumulate ([`Backward::finish`]).
///
/// Work per data point, in multiply-adds (m² = one "unit"; see [`Work`](super::work::Work)):
/// - FITC, power EP: P = A⁻¹V (1), V D_t Vᵀ (½, lower triangle), L⁻ᵀ Hᵀ (½), and
///   V = L⁻¹Kuf again (½) unless the first pass kept it: 2 or 2½ units.
/// - DTC, VFE: Λ = σ²I, so v_iᵀA⁻¹v_i is needed only in its sum over the data,
///   Σ_i v_iᵀA⁻¹v_i = tr(A⁻¹ V Vᵀ) = σ²(m − tr A⁻¹), and V D_t Vᵀ = tσ²(A − I)
///   (t = ∂e/∂d is a constant); ∂/∂Kuf = 2L⁻ᵀ(G'Vᵀ)ᵀ becomes M·Kuf − c αᵀ with
///   M = L⁻ᵀ(A⁻¹ − 2tσ² I)L⁻¹/σ² and c = L⁻ᵀδ: one product with Kuf (1 unit), and
///   neither V nor a second solve.
///
/// Its m×m and n-sized matrices come from `exec.scratch` and go back there
/// ([`Backward::finish`], and [`Adjoints::recycle`](super::evaluate::Adjoints::recycle) for what it hands out).
pub struct Backward {
    pub(super) summary: Summary,
    /// δ = A⁻¹β (m×1)
    pub(super) delta: DMatrix<f64>,
    pub(super) a_inv: DMatrix<f64>,
    /// DTC, VFE: M and c (see above); empty otherwise.
    pub(super) m_const: DMatrix<f64>,
    pub(super) c_const: DMatrix<f64>,
    /// FITC, power EP: V D_t Vᵀ so far (lower triangle); empty otherwise.
    pub(super) vtv: DMatrix<f64>,
    /// DTC, VFE: Σ α_i² so far.
    pub(super) sum_alpha2: f64,
    /// FITC, power EP: Σ ∂/∂σ² of the points so far.
    pub(super) d_noise: f64,
}

impl Backward {
    /// Start the second pass from the first pass's summary (which it keeps: see
    /// [`Backward::summary`]; [`Backward::finish`] gives its memory back).
    pub fn new(summary: Summary, exec: &Exec) -> Backward {
        let scratch = &exec.scratch;
        let m = summary.beta.len();
        // δ = A⁻¹β; then α = C⁻¹y = Λ⁻¹(y − Vᵀδ) and Vα = β − (A − I)δ = δ.
        let mut delta = summary.gamma(scratch);
        linalg::solve_lower_transpose(&summary.la, &mut delta, SMALL);
        let a_inv = linalg::chol_inverse_in(&summary.la, SMALL, scratch);
        let per_point = summary.approx.per_point_lambda();
        let (m_const, c_const) = if per_point {
            (scratch.matrix(0, 0), scratch.matrix(0, 0))
        } else {
            let s2 = summary.noise;
            let (_, t, _) = summary.approx.extra(0.0, s2);
            let mut n = scratch.matrix(m, m);
            n.iter_mut()
                .zip(a_inv.iter())
                .for_each(|(n, a)| *n = a * (1.0 / s2));
            for j in 0..m {
                n[(j, j)] -= 2.0 * t;
            }
            let mut c = scratch.copy(&delta);
            summary.kuu.solve_transpose(&mut c, SMALL);
            (summary.kuu.sandwich(n, SMALL), c)
        };
        let k = if per_point { m } else { 0 };
        Backward {
            summary,
            delta,
            a_inv,
            m_const,
            c_const,
            vtv: scratch.zero_matrix(k, k),
            sum_alpha2: 0.0,
            d_noise: 0.0,
        }
    }

    /// ∂/∂Kuf (m×len) and ∂/∂kdiag (len; empty for DTC) of one chunk; `values` are the
    /// chunk's from the first pass if it kept them (FITC, power EP), else V and λ are
    /// computed again, block by block as each block is used (the block stays in
    /// cache). DTC and VFE need neither.
    pub fn chunk(
        &mut self,
        lr: &LowRank,
        y: &[f64],
        values: Option<ChunkValues>,
        exec: &Exec,
    ) -> Result<(DMatrix<f64>, Vec<f64>)> {
        check_chunk(lr, y)?;
        if self.summary.approx.per_point_lambda() {
            self.chunk_per_point(lr, y, values, exec)
        } else {
            if let Some(v) = values {
                v.recycle(&exec.scratch);
            }
            self.chunk_const(lr, y, exec)
        }
    }

    /// [`Backward::chunk`] for DTC and VFE: per stripe and block, ∂/∂Kuf = M·K_b − c αᵀ.
    fn chunk_const(
        &mut self,
        lr: &LowRank,
        y: &[f64],
        exec: &Exec,
    ) -> Result<(DMatrix<f64>, Vec<f64>)> {
        let s = &self.summary;
        let (m, n) = lr.kuf.shape();
        let kuf = lr.kuf.as_slice();
        let mut d_kuf = exec.scratch.matrix(m, n);
        let (mm, c) = (&self.m_const, self.c_const.as_slice());
        let work = stripes(n, m, d_kuf.as_mut_slice(), &mut [], &mut []);
        let parts = linalg::map_stripes(exec.par, work, |(first, os, _, _)| {
            let mut sum = 0.0;
            for (b, ob) in os.chunks_mut(m * BLOCK).enumerate() {
                exec.check()?;
                let j0 = first + b * BLOCK;
                let w = ob.len() / m;
                let kb = &kuf[j0 * m..(j0 + w) * m];
                linalg::block_mul(
                    linalg::block_mut(ob, m),
                    linalg::view(mm),
                    linalg::block(kb, m),
                );
                sum += second_pass_const_block(kb, ob, c, &y[j0..j0 + w], s.noise);
            }
            Ok(sum)
        });
        for part in parts.into_iter().flatten() {
            match part {
                Ok(sum) => self.sum_alpha2 += sum,
                Err(e) => {
                    exec.scratch.give_matrix(d_kuf);
                    return Err(e);
                }
            }
        }
        let mut d_kdiag = exec
            .scratch
            .take(if s.approx == Approx::Vfe { n } else { 0 });
        d_kdiag.fill(s.approx.extra(0.0, s.noise).1);
        Ok((d_kuf, d_kdiag))
    }

    /// [`Backward::chunk`] for FITC and power EP.
    fn chunk_per_point(
        &mut self,
        lr: &LowRank,
        y: &[f64],
        values: Option<ChunkValues>,
        exec: &Exec,
    ) -> Result<(DMatrix<f64>, Vec<f64>)> {
        let s = &self.summary;
        let scratch = &exec.scratch;
        let recompute = values.is_none();
        let (m, n) = lr.kuf.shape();
        let kuf = lr.kuf.as_slice();
        // computed again, V is built block by block below; its storage becomes ∂/∂Kuf
        let ChunkValues {
            v: mut d_kuf,
            mut lambda,
            mut d,
        } = match values {
            Some(v) => v,
            None => ChunkValues {
                v: scratch.matrix(m, n),
                lambda: scratch.take(n),
                d: scratch.take(if lr.approx.has_extra() { n } else { 0 }),
            },
        };
        let approx = s.approx;
        // t = ∂/∂d has its own vector unless it equals the per-point ∂/∂σ² (FITC)
        let separate_t = approx.has_extra();
        let (delta, a_inv, l) = (self.delta.as_slice(), &self.a_inv, &s.kuu);
        // Per stripe, V's storage becomes ∂NLML/∂Kuf column block by column block:
        // P = A⁻¹V gives v_iᵀA⁻¹v_i, hence C⁻¹_ii = 1/Λ_i − v_iᵀA⁻¹v_i/Λ_i² and
        // g_i = ½(C⁻¹_ii − α_i²) = ∂NLML/∂Λ_ii; Hᵀ = (G'Vᵀ)ᵀ has column i
        // ½ p_i/Λ_i − ½ δ α_i − t_i v_i, and ∂/∂Kuf = 2 L⁻ᵀ Hᵀ.
        let mut g = scratch.take(n);
        let mut t = scratch.take(if separate_t { n } else { 0 });
        let work = {
            let work = stripes(n, m, d_kuf.as_mut_slice(), &mut g, &mut t);
            let values = stripes(n, 0, &mut [], &mut lambda, &mut d);
            linalg::stripe_array(
                work.into_iter()
                    .zip(values)
                    .map_while(|(w, v)| Some((w?, v?)))
                    .map(|(w, (_, _, ls, ds))| (w, ls, ds)),
            )
        };
        let parts = linalg::map_stripes(exec.par, work, |((first, vs, gs, ts), ls, ds)| {
            // this stripe's share of V D_t Vᵀ
            let mut vtv = scratch.zero_matrix(m, m);
            let width = m * BLOCK.min(gs.len());
            let (mut p, mut scaled) = (scratch.take(width), scratch.take(width));
            let mut ts_blocks = ts.chunks_mut(BLOCK);
            let mut ds_blocks = ds.chunks_mut(BLOCK);
            let mut result = Ok(());
            for (b, ((vb, gb), lb)) in vs
                .chunks_mut(m * BLOCK)
                .zip(gs.chunks_mut(BLOCK))
                .zip(ls.chunks_mut(BLOCK))
                .enumerate()
            {
                if let Err(e) = exec.check() {
                    result = Err(e);
                    break;
                }
                let j0 = first + b * BLOCK;
                let db = ds_blocks.next().unwrap_or_default();
                if recompute {
                    solve_copy(l, kuf, j0, vb, m);
                    if let Err(e) = lambdas(lr, y, j0, vb, lb, db, &mut [], &mut []) {
                        result = Err(e);
                        break;
                    }
                }
                let pb = &mut p[..vb.len()];
                linalg::block_mul(
                    linalg::block_mut(pb, m),
                    linalg::view(a_inv),
                    linalg::block(vb, m),
                );
                let sb = &mut scaled[..vb.len()];
                let pass = SecondPass {
                    m,
                    approx,
                    lambda: lb,
                    d: db,
                    y: &y[j0..j0 + gb.len()],
                    delta,
                    noise: s.noise,
                };
                let tb = ts_blocks.next().unwrap_or_default();
                second_pass_block(&pass, vb, pb, gb, tb, sb);
                linalg::block_add_nt_lower(
                    &mut vtv,
                    linalg::block(sb, m),
                    linalg::block(vb, m),
                    1.0,
                );
                vb.copy_from_slice(pb);
                l.solve_transpose_block(vb, m);
            }
            scratch.give(p);
            scratch.give(scaled);
            result.map(|()| vtv)
        });
        scratch.give(lambda);
        scratch.give(d);
        let mut failed = None;
        for part in parts.into_iter().flatten() {
            match part {
                Ok(part) => {
                    self.vtv += &part;
                    scratch.give_matrix(part);
                }
                Err(e) => failed = failed.or(Some(e)),
            }
        }
        if let Some(e) = failed {
            scratch.give_matrix(d_kuf);
            return Err(e);
        }
        self.d_noise += g.iter().sum::<f64>();
        let d_kdiag = if separate_t {
            scratch.give(g);
            t
        } else {
            scratch.give(t);
            g
        };
        Ok((d_kuf, d_kdiag))
    }

    /// The summary of the first pass.
    pub fn summary(&self) -> &Summary {
        &self.summary
    }

    /// ∂/∂Kuu and ∂/∂σ² once every chunk has been through [`Backward::chunk`].
    pub fn finish(self, exec: &Exec) -> (DMatrix<f64>, f64) {
        let s = &self.summary;
        let scratch = &exec.scratch;
        let m = self.delta.len();
        let delta = self.delta.as_slice();
        // V G' Vᵀ = ½(I − A⁻¹) − ½ δδᵀ − V D_t Vᵀ, since V C⁻¹ Vᵀ = I − A⁻¹.
        let mut vgv = scratch.matrix(m, m);
        for j in 0..m {
            for i in 0..m {
                let eye = if i == j { 1.0 } else { 0.0 };
                vgv[(i, j)] = (eye - self.a_inv[(i, j)]) * 0.5 - (delta[i] * delta[j]) * 0.5;
            }
        }
        let d_noise = if s.approx.per_point_lambda() {
            let mut sum = self.vtv;
            linalg::mirror_lower(&mut sum);
            vgv -= &sum;
            scratch.give_matrix(sum);
            self.d_noise
        } else {
            // Λ = σ²I: V D_t Vᵀ = tσ²(A − I); Σ_i g_i = ½(n/σ² − Σ_i v_iᵀA⁻¹v_i/σ⁴ −
            // Σ_i α_i²) with Σ_i v_iᵀA⁻¹v_i = σ²(m − tr A⁻¹); VFE's ∂e/∂σ² = −d/(2σ⁴)
            // sums to −extra/σ²
            let s2 = s.noise;
            let (_, t, _) = s.approx.extra(0.0, s2);
            if t != 0.0 {
                for j in 0..m {
                    for i in 0..m {
                        let eye = if i == j { 1.0 } else { 0.0 };
                        vgv[(i, j)] -= (s.a[(i, j)] - eye) * (t * s2);
                    }
                }
            }
            let sum_q = s2 * (m as f64 - self.a_inv.trace());
            let sum_g = 0.5 * (s.n as f64 / s2 - sum_q / (s2 * s2) - self.sum_alpha2);
            scratch.give_matrix(self.vtv);
            sum_g - if t != 0.0 { s.extra / s2 } else { 0.0 }
        };
        scratch.give_matrix(self.delta);
        scratch.give_matrix(self.a_inv);
        scratch.give_matrix(self.m_const);
        scratch.give_matrix(self.c_const);
        // ∂/∂Kuu = −L⁻ᵀ (V G' Vᵀ) L⁻¹
        let mut d_kuu = s.kuu.sandwich(vgv, SMALL);
        d_kuu.neg_mut();
        self.summary.recycle(scratch);
        (d_kuu, d_noise)
    }
}

/// What the second pass needs besides the block itself.
struct SecondPass<'a> {
    m: usize,
    approx: Approx,
    lambda: &'a [f64],
    /// d (VFE, power EP), else empty.
    d: &'a [f64],
    y: &'a [f64],
    delta: &'a [f64],
    noise: f64,
}

/// The second pass over a block: given V's columns and P = A⁻¹V in `pb`, writes the
/// per-point ∂/∂σ² (g_i plus the extra term's) into `gb`, t_i = ∂/∂d_i into `tb`
/// (unless empty), for the approximations that use d t_i v_i into `scaled` (empty for
/// DTC), and turns P's columns into Hᵀ's (see `nlml_and_adjoints`).
#[multiversion(targets = "simd")]
fn second_pass_block(
    p: &SecondPass,
    vb: &[f64],
    pb: &mut [f64],
    gb: &mut [f64],
    tb: &mut [f64],
    scaled: &mut [f64],
) {
    let m = p.m;
    let uses_d = !scaled.is_empty();
    let weight = p.approx.weight();
    for (i, (col, pc)) in vb.chunks(m).zip(pb.chunks_mut(m)).enumerate() {
        let li = p.lambda[i];
        let alpha = (p.y[i] - linalg::dot(col, p.delta)) / li;
        let gi = 0.5 * (1.0 / li - linalg::dot(pc, col) / (li * li) - alpha * alpha);
        let (ti, gs) = if p.d.is_empty() {
            (weight * gi, gi)
        } else {
            let (_, de, ds) = p.approx.extra(p.d[i], p.noise);
            (weight * gi + de, gi + ds)
        };
        gb[i] = gs;
        if !tb.is_empty() {
            tb[i] = ti;
        }
        let two_t = if uses_d { 2.0 * ti } else { 0.0 };
        if uses_d {
            let sc = &mut scaled[i * m..(i + 1) * m];
            sc.iter_mut().zip(col).for_each(|(s, x)| *s = ti * x);
        }
        for ((h, x), d) in pc.iter_mut().zip(col).zip(p.delta) {
            *h = *h / li - alpha * d - two_t * x;
        }
    }
}

/// The second pass of DTC and VFE (Λ = σ²I) over a block of Kuf's columns, given
/// `ob` = M·K_b (M = L⁻ᵀ N L⁻¹, see [`Backward::chunk`]): α_i = (y_i − k_iᵀc)/σ² and
/// column i of ∂/∂Kuf, M k_i − c α_i, in place of `ob`'s. Returns Σ α_i².
#[multiversion(targets = "simd")]
fn second_pass_const_block(kb: &[f64], ob: &mut [f64], c: &[f64], y: &[f64], noise: f64) -> f64 {
    let m = c.len();
    let mut sum_alpha2 = 0.0;
    for ((col, oc), yi) in kb.chunks(m).zip(ob.chunks_mut(m)).zip(y) {
        let alpha = (yi - linalg::dot(col, c)) / noise;
        sum_alpha2 += alpha * alpha;
        oc.iter_mut().zip(c).for_each(|(o, ci)| *o -= ci * alpha);
    }
    sum_alpha2
}
