//! The one collapsed core (docs/methods.md §1) for every low-rank model with Gaussian noise:
//! `C = Kfu Kuu⁻¹ Kuf + Λ`, `Λ = a·diag(d) + σ² I`, `d = diag(Kff − Qff)`, with the
//! approximation choosing a and an extra term on d (see [`Approx`]).
//!
//! It works in O(n·m²) time and O(n·m) memory and never forms an n×n matrix. Methods
//! hand it `Kuf` (m×n, one column per data point — the layout the triangular solves
//! want), `Kuu` (dense, or diagonal: the spectral and eigenfunction families, whose
//! triangular solves become scalings), the prior diagonal `kdiag` and σ²; it returns
//! the objective and the adjoints ∂/∂Kuf, ∂/∂Kuu, ∂/∂kdiag and ∂/∂σ², which each
//! feature family maps back to its own parameters by the chain rule.
//!
//! Derivation of the adjoints: with `G = ½(C⁻¹ − ααᵀ)`, `α = C⁻¹y`, dNLML = tr(G dC).
//! Λ depends on d, and d_i = kdiag_i − ‖v_i‖² with `V = L⁻¹Kuf`, `L = chol(Kuu)`; the
//! objective's total derivative with respect to d_i is `t_i = a·g_i + e'(d_i)`
//! (g_i = G_ii). So the Q-part uses `G' = G − diag(t)`:
//! `∂/∂Kuf = 2 L⁻ᵀ V G'`, `∂/∂Kuu = −L⁻ᵀ V G' Vᵀ L⁻¹`, and `C⁻¹Vᵀ = Λ⁻¹ Vᵀ A⁻¹`
//! with `A = I + V Λ⁻¹ Vᵀ`.
//!
//! The parts: what a family hands it ([`LowRank`], `inputs.rs`) and the [`Approx`]
//! (`approx.rs`); the factor of Kuu (`kuu_factor.rs`); the first pass ([`Accumulator`],
//! `first_pass.rs`) that ends in a [`Summary`] (`summary.rs`); the second pass
//! ([`Backward`], `second_pass.rs`); the whole data set as one chunk ([`nlml_and_adjoints`],
//! `evaluate.rs`); the sums that add a pass across processes ([`Sums`], `sums.rs`); the
//! [`Posterior`] prediction uses (`posterior.rs`); and the count of an evaluation's work
//! ([`Work`], `work.rs`). This file only names them.

mod approx;
mod evaluate;
mod first_pass;
mod inputs;
mod kuu_factor;
mod posterior;
mod second_pass;
mod summary;
mod sums;
mod work;

pub use approx::Approx;
pub use evaluate::{Adjoints, nlml, nlml_and_adjoints, posterior, summary};
pub use first_pass::{Accumulator, BLOCK, ChunkValues};
pub use inputs::{Kuu, LowRank};
pub use posterior::{LatentPrior, Posterior};
pub use second_pass::Backward;
pub use summary::Summary;
pub use sums::Sums;
pub use work::Work;
