//! The work of one evaluation by the core, counted from its algorithm, for
//! `sgpw bench --roofline`.

use super::approx::Approx;

/// The multiply-adds of one objective-and-gradient evaluation by the core, by the kind
/// of kernel that does them, counted from the algorithm of
/// [`Accumulator`](super::first_pass::Accumulator) and [`Backward`](super::second_pass::Backward)
/// (`sgpw bench --roofline` sets them against this machine's rates). A lone addition
/// or multiplication counts as one, like a multiply-add.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Work {
    /// Products of an m×m matrix with blocks of columns: m² per point each.
    pub gemm: f64,
    /// Triangular solves with L on blocks of columns: m(m+1)/2 per point each.
    pub trsm: f64,
    /// Symmetric rank-k updates of an m×m lower triangle: m(m+1)/2 per point each.
    pub syrk: f64,
    /// O(m³): factorisations, inverses and sandwiches of m×m matrices.
    pub small: f64,
    /// O(n·m): the per-point vector work of the two passes.
    pub vector: f64,
    /// O(n·m·D): the feature family's Kuf and Kuu and its pull-back of their
    /// adjoints (0 here: the family adds its own, `Family::feature_work`).
    pub features: f64,
}

impl Work {
    /// Everything, in multiply-adds.
    pub fn total(&self) -> f64 {
        self.gemm + self.trsm + self.syrk + self.small + self.vector + self.features
    }

    /// The O(n·m²) part in units of n·m² multiply-adds.
    pub fn units(&self, n: usize, m: usize) -> f64 {
        (self.gemm + self.trsm + self.syrk) / (n as f64 * (m * m) as f64)
    }

    /// One evaluation of `approx` on n points with m features, Kuu dense or diagonal,
    /// V computed again in the second pass for `recomputed` of the n points (FITC and
    /// power EP: the chunks the memory budget did not keep; see `Backward`).
    ///
    /// Per point, in units of m² (a triangular solve or a symmetric update is ½):
    /// - first pass: V = L⁻¹Kuf (½) and A += V Λ⁻¹ Vᵀ (½);
    /// - FITC, power EP: P = A⁻¹V (1), V D_t Vᵀ (½), L⁻ᵀHᵀ (½), and V again (½)
    ///   where it was not kept: 3 units, 3½ recomputed;
    /// - DTC, VFE: M·Kuf (1): 2 units.
    ///
    /// A diagonal Kuu turns every solve into O(m) scalings.
    pub fn of(approx: Approx, dense_kuu: bool, n: usize, m: usize, recomputed: usize) -> Work {
        let (nf, mf) = (n as f64, m as f64);
        let tri = mf * (mf + 1.0) / 2.0;
        // a solve per point: a triangle with L, or m divisions
        let solve = if dense_kuu { tri } else { mf };
        let per_point = approx.per_point_lambda();
        let solves_per_point = if per_point { 2.0 } else { 1.0 };
        let recomputed = recomputed.min(n) as f64;
        let (gemm, syrk) = if per_point {
            (nf * mf * mf, 2.0 * nf * tri)
        } else {
            (nf * mf * mf, nf * tri)
        };
        let solves = nf * solves_per_point + if per_point { recomputed } else { 0.0 };
        let (trsm, solve_vector) = if dense_kuu {
            (solves * solve, 0.0)
        } else {
            (0.0, solves * solve)
        };
        // per point: pass 1 ‖v‖², V/λ and β (3m); pass 2 FITC/PEP v·δ, p·v, t∘v, H and
        // its copy (6m, ‖v‖² again where recomputed), DTC/VFE k·c and c α (2m)
        let vector = solve_vector
            + nf * 3.0 * mf
            + if per_point {
                nf * 6.0 * mf + recomputed * mf
            } else {
                nf * 2.0 * mf
            };
        // chol(Kuu) m³/6 (dense), chol(A) m³/6, A⁻¹ m³/3, the ∂/∂Kuu sandwich m³
        // (two triangular solves of m columns), M's sandwich for DTC/VFE another m³
        let m3 = mf * mf * mf;
        let small = m3 / 6.0
            + m3 / 3.0
            + if dense_kuu { m3 / 6.0 + m3 } else { 0.0 }
            + if !per_point && dense_kuu { m3 } else { 0.0 };
        Work {
            gemm,
            trsm,
            syrk,
            small,
            vector,
            features: 0.0,
        }
    }
}
