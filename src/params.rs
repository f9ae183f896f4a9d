//! A model's parameters as named blocks (docs/architecture.md "How to add a
//! parameter"): each block has a name, a place in the packed vector θ and the
//! transform that packs it. The shared blocks come first, in this order:
//!
//! | block | length | transform |
//! |---|---|---|
//! | `signal_variance` σ0² | 1 | log |
//! | `lengthscales` ℓ | D (none for spgp-dr) | log |
//! | `rq_alpha` α | 1 with the rq kernel | log |
//! | `noise_variance` σ² | 1 with the Gaussian likelihood | log(σ² − floor) |
//!
//! A model whose likelihood is not Gaussian has no σ² (its file has no
//! `[hyper] noise_variance`), so its θ has no `noise_variance` block: the optimiser never
//! carries a coordinate the objective cannot move, and `--fix noise_variance` is refused
//! for it ([`check_fixes`]).
//!
//! then the method's own blocks ([`TailBlock`], e.g. `inducing_inputs`). The layout
//! alone packs and unpacks the shared blocks and places their gradients; families ask it
//! for the range of a block by name instead of computing offsets. A fixed block (`--fix`,
//! a model file's `fixed` list) stays in θ at its value but is left out of the
//! optimiser's vector ([`ParamLayout::free`]), as GPflow's `set_trainable(False)`.

use crate::error::{Error, Result};
use crate::fix::Fix;
use crate::kernel::KernelGrad;
use crate::model_file::{Hyper, ModelFile};
use std::ops::Range;

/// The ARD kernel's blocks, named by the kernel (`kernel::Ard::blocks`).
pub use crate::kernel::{LENGTHSCALES, RQ_ALPHA, SIGNAL_VARIANCE};
pub const NOISE_VARIANCE: &str = "noise_variance";
/// A composed kernel's parameters (a model's `[kernel]`), in place of σ0², ℓ and α.
pub const KERNEL: &str = "kernel";
/// The name of a family's parameters where the family does not name its blocks.
pub const FEATURES: &str = "features";
/// The shared blocks a composed kernel's own blocks replace (its paths, `se1.ls`).
pub const KERNEL_BLOCKS: [&str; 3] = [SIGNAL_VARIANCE, LENGTHSCALES, RQ_ALPHA];
/// The shared blocks, in their order in θ.
pub const SHARED: [&str; 4] = [SIGNAL_VARIANCE, LENGTHSCALES, RQ_ALPHA, NOISE_VARIANCE];

/// How a block's values are packed into θ.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Transform {
    /// θ = log v (positive values).
    Log,
    /// θ = log(v − floor): v never goes below the floor (σ² with `--noise-floor`).
    LogAbove(f64),
    /// θ = v (locations: inducing inputs, frequencies, projections).
    Identity,
    /// Packed by the family in its own way (a mix of the above).
    Own,
}

/// How a fixed block of a method's own keeps its values: unpacking θ passes them
/// through their transform, which may move them by a rounding.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Holds {
    /// By its transform: exactly for the identity; to a rounding for the family's own
    /// packing, whose tables may also depend on the shared blocks (smgp's widths
    /// c² = ℓ² + e^ρ hold ρ, not c).
    ByTransform,
    /// Copied back from the model table of this name, which holds the block alone.
    Table(&'static str),
}

/// A block a method packs after the shared ones: its name, transform, length in a
/// model (`None`: the rest of θ) and how a fixed one is kept exactly.
#[derive(Clone, Copy, Debug)]
pub struct TailBlock {
    pub name: &'static str,
    pub transform: Transform,
    pub len: Option<fn(&ModelFile) -> usize>,
    pub holds: Holds,
}

/// A family's parameters as one block, for families that do not name theirs.
pub const REST: TailBlock = TailBlock {
    name: FEATURES,
    transform: Transform::Own,
    len: None,
    holds: Holds::ByTransform,
};

/// One block of θ.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub name: &'static str,
    pub range: Range<usize>,
    pub transform: Transform,
    pub fixed: bool,
    /// How a fixed one is kept exactly (the shared blocks: by their [`Hyper`] field).
    pub holds: Holds,
}

/// Where the shared blocks sit in θ: a function of the model's shapes only (D, the
/// kernel's shape parameters), cheap enough to ask for in every pull-back.
#[derive(Clone, Copy, Debug)]
pub struct Head {
    d: usize,
    shape: usize,
    /// A composed kernel's number of parameters (its blocks replace σ0², ℓ and α).
    composed: Option<usize>,
    /// Whether θ holds σ² (the Gaussian likelihood's; [`packs_noise`]).
    noise: usize,
}

/// Whether `model`'s θ holds the noise variance σ²: only the Gaussian likelihood has one.
pub fn packs_noise(model: &ModelFile) -> bool {
    model.likelihood.is_none()
}

/// Push ∂/∂θ of the packed σ² (from ∂/∂σ², `d_noise`) where the model's θ holds it: the
/// step of every family's gradient after its kernel blocks.
pub fn push_noise_grad(model: &ModelFile, d_noise: f64, grad: &mut Vec<f64>) {
    if packs_noise(model) {
        grad.push(noise_grad(model, d_noise));
    }
}

impl Head {
    pub fn of(model: &ModelFile) -> Head {
        Head {
            d: model.hyper.lengthscales.len(),
            shape: model.hyper.rq_alpha.map_or(0, |_| 1),
            composed: model.composed.as_ref().map(|c| c.kernel().params_len()),
            noise: usize::from(packs_noise(model)),
        }
    }

    /// The length of the shared blocks together.
    pub fn len(self) -> usize {
        match self.composed {
            Some(k) => k + self.noise,
            None => self.d + self.shape + 1 + self.noise,
        }
    }

    pub fn is_empty(self) -> bool {
        false
    }

    /// The range of shared block `name` (empty for any other name).
    pub fn range(self, name: &str) -> Range<usize> {
        if let Some(k) = self.composed {
            return match name {
                KERNEL => 0..k,
                NOISE_VARIANCE => k..k + self.noise,
                _ => 0..0,
            };
        }
        match name {
            SIGNAL_VARIANCE => 0..1,
            LENGTHSCALES => 1..1 + self.d,
            RQ_ALPHA => 1 + self.d..1 + self.d + self.shape,
            NOISE_VARIANCE => {
                let at = 1 + self.d + self.shape;
                at..at + self.noise
            }
            _ => 0..0,
        }
    }

    /// Pack σ0², ℓ, α (rq), σ² (Gaussian only; see the module's table).
    pub fn pack(model: &ModelFile, out: &mut Vec<f64>) {
        match &model.composed {
            Some(c) => out.extend(c.kernel().log_params()),
            None => {
                out.push(model.hyper.signal_variance.ln());
                out.extend(model.hyper.lengthscales.iter().map(|l| l.ln()));
                out.extend(model.hyper.rq_alpha.map(f64::ln));
            }
        }
        if packs_noise(model) {
            out.push((model.hyper.noise_variance - noise_floor(model)).ln());
        }
    }

    /// Inverse of [`Head::pack`]; returns the number of entries read.
    pub fn unpack(theta: &[f64], model: &mut ModelFile) -> usize {
        if let Some(c) = &mut model.composed {
            let k = c.kernel().params_len();
            c.kernel_mut().set_log_params(&theta[..k]);
            return k + unpack_noise(&theta[k..], model);
        }
        let d = model.hyper.lengthscales.len();
        model.hyper.signal_variance = theta[0].exp();
        for (l, t) in model.hyper.lengthscales.iter_mut().zip(&theta[1..=d]) {
            *l = t.exp();
        }
        let mut at = d + 1;
        if let Some(a) = model.hyper.rq_alpha.as_mut() {
            *a = theta[at].exp();
            at += 1;
        }
        at + unpack_noise(&theta[at..], model)
    }

    /// The gradient of the shared blocks, in their order, from the kernel's contractions
    /// `grads` (e.g. Kuf's and Kuu's) and what else the family adds to ∂/∂log σ0²
    /// (`extra_signal`: the prior diagonal, the jitter) and ∂/∂σ² (`d_noise`).
    pub fn grad(
        model: &ModelFile,
        grads: &[&KernelGrad],
        extra_signal: f64,
        d_noise: f64,
    ) -> Vec<f64> {
        // the kernel's gradient is [log σ0², log ℓ (its inputs'), its shape]; a model
        // without lengthscales (spgp-dr: unit ones on its projected space) skips them
        let mut out = Vec::with_capacity(Head::of(model).len());
        if let Some(c) = &model.composed {
            // the kernel's blocks in its own order; what scales with σ0² elsewhere
            // scales with the kernel's prior variance
            out.resize(c.kernel().params_len(), 0.0);
            for g in grads {
                out.iter_mut().zip(&g.params).for_each(|(o, v)| *o += v);
            }
            c.kernel().log_prior_variance_grad(extra_signal, &mut out);
            push_noise_grad(model, d_noise, &mut out);
            return out;
        }
        out.push(grads.iter().map(|g| g.params[0]).sum::<f64>() + extra_signal);
        for d in 0..model.hyper.lengthscales.len() {
            out.push(grads.iter().map(|g| g.params[1 + d]).sum());
        }
        let shape = model.hyper.kernel.shape_len();
        for s in 0..shape {
            out.push(
                grads
                    .iter()
                    .map(|g| g.params[g.params.len() - shape + s])
                    .sum(),
            );
        }
        push_noise_grad(model, d_noise, &mut out);
        out
    }
}

/// σ² from its packed entry at the start of `theta`, where the model's θ holds one;
/// returns the number of entries read (1 or 0).
fn unpack_noise(theta: &[f64], model: &mut ModelFile) -> usize {
    if !packs_noise(model) {
        return 0;
    }
    model.hyper.noise_variance = noise_floor(model) + theta[0].exp();
    1
}

/// The model's noise floor (0 when it has none).
pub fn noise_floor(model: &ModelFile) -> f64 {
    model.noise_floor.unwrap_or(0.0)
}

/// ∂/∂θ of the packed noise parameter θ = log(σ² − floor), from ∂/∂σ².
pub fn noise_grad(model: &ModelFile, d_noise: f64) -> f64 {
    noise_grad_at(model.hyper.noise_variance, noise_floor(model), d_noise)
}

/// [`noise_grad`] of a noise variance σ² above a floor.
pub fn noise_grad_at(noise_variance: f64, floor: f64, d_noise: f64) -> f64 {
    d_noise * (noise_variance - floor)
}

/// The blocks of one model's θ, built once per fit.
#[derive(Clone, Debug)]
pub struct ParamLayout {
    blocks: Vec<Block>,
    len: usize,
}

impl ParamLayout {
    /// The layout of `model`'s θ (of length `len`): the shared blocks, then `tail`; the
    /// blocks named in the model's `fixed` list are fixed.
    pub fn new(model: &ModelFile, tail: &[TailBlock], len: usize) -> ParamLayout {
        let head = Head::of(model);
        let mut blocks = Vec::new();
        if !head.range(KERNEL).is_empty() {
            blocks.push(Block {
                name: KERNEL,
                range: head.range(KERNEL),
                transform: Transform::Own,
                fixed: false,
                holds: Holds::ByTransform,
            });
        }
        for name in SHARED {
            let range = head.range(name);
            if range.is_empty() {
                continue;
            }
            let transform = if name == NOISE_VARIANCE {
                Transform::LogAbove(noise_floor(model))
            } else {
                Transform::Log
            };
            blocks.push(Block {
                name,
                range,
                transform,
                fixed: false,
                holds: Holds::ByTransform,
            });
        }
        let mut at = head.len().min(len);
        for t in tail {
            let n = t.len.map_or(len - at, |f| f(model)).min(len - at);
            if n > 0 {
                blocks.push(Block {
                    name: t.name,
                    range: at..at + n,
                    transform: t.transform,
                    fixed: false,
                    holds: t.holds,
                });
            }
            at += n;
        }
        if at < len {
            // entries no block declares: the family's, as one block
            blocks.push(Block {
                name: FEATURES,
                range: at..len,
                transform: Transform::Own,
                fixed: false,
                holds: Holds::ByTransform,
            });
        }
        for b in &mut blocks {
            b.fixed = model.fixed.iter().any(|f| f == b.name);
        }
        ParamLayout { blocks, len }
    }

    /// A layout of `len` entries with no block fixed (a model built in code, whose
    /// blocks no model file names).
    pub fn unfixed(len: usize) -> ParamLayout {
        ParamLayout {
            blocks: vec![Block {
                name: FEATURES,
                range: 0..len,
                transform: Transform::Own,
                fixed: false,
                holds: Holds::ByTransform,
            }],
            len,
        }
    }

    pub fn blocks(&self) -> &[Block] {
        &self.blocks
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The block called `name`, if the model has it.
    pub fn block(&self, name: &str) -> Option<&Block> {
        self.blocks.iter().find(|b| b.name == name)
    }

    /// The range of block `name` in θ (empty where the model has none).
    pub fn range(&self, name: &str) -> Range<usize> {
        self.block(name).map_or(0..0, |b| b.range.clone())
    }

    /// The entries of `within` the optimiser moves: those of no fixed block, in order.
    pub fn free(&self, within: Range<usize>) -> Vec<usize> {
        within
            .filter(|&i| !self.blocks.iter().any(|b| b.fixed && b.range.contains(&i)))
            .collect()
    }

    /// Whether any block is fixed.
    pub fn any_fixed(&self) -> bool {
        self.blocks.iter().any(|b| b.fixed)
    }

    /// Put the values of the fixed blocks of `from` into `to` exactly (packing through
    /// a logarithm and back may move a value by a rounding); `to` is `from` with θ
    /// unpacked into it.
    pub fn hold_fixed(&self, from: &ModelFile, to: &mut ModelFile) {
        for b in self.blocks.iter().filter(|b| b.fixed) {
            match b.holds {
                Holds::ByTransform => {}
                Holds::Table(name) => {
                    if let Some(t) = from.tables.get(name) {
                        to.tables.insert(name.to_string(), t.clone());
                    }
                }
            }
            match b.name {
                SIGNAL_VARIANCE => to.hyper.signal_variance = from.hyper.signal_variance,
                LENGTHSCALES => to
                    .hyper
                    .lengthscales
                    .copy_from_slice(&from.hyper.lengthscales),
                RQ_ALPHA => to.hyper.rq_alpha = from.hyper.rq_alpha,
                NOISE_VARIANCE => to.hyper.noise_variance = from.hyper.noise_variance,
                _ => {}
            }
        }
    }
}

/// The names of the blocks a method's models have, for messages and checks: the
/// shared ones that apply (`lengthscales` where the method has them, `rq_alpha` with
/// the rq kernel, `noise_variance` with the Gaussian likelihood: `noise`) and the
/// method's own.
pub fn block_names(
    lengthscales: bool,
    rq: bool,
    noise: bool,
    tail: &[TailBlock],
) -> Vec<&'static str> {
    let mut names = vec![SIGNAL_VARIANCE];
    if lengthscales {
        names.push(LENGTHSCALES);
    }
    if rq {
        names.push(RQ_ALPHA);
    }
    if noise {
        names.push(NOISE_VARIANCE);
    }
    names.extend(tail.iter().map(|t| t.name));
    names
}

/// Check `--fix` entries against the names a method has (`names`): an unknown name, a
/// name given twice, or a value for one of the method's own blocks is an error listing
/// what may be given. `flag` names the setting.
pub fn check_fixes<S: AsRef<str>>(
    fixes: &[Fix],
    names: &[S],
    method: &str,
    flag: &str,
) -> Result<()> {
    let names: Vec<&str> = names.iter().map(AsRef::as_ref).collect();
    for (i, f) in fixes.iter().enumerate() {
        if !names.contains(&f.name.as_str()) {
            return Err(Error::input(format!(
                "fix{flag}: method '{method}' has no parameter block '{}'; its blocks are: {}",
                f.name,
                names.join(", ")
            )));
        }
        if fixes[..i].iter().any(|g| g.name == f.name) {
            return Err(Error::input(format!(
                "fix{flag}: '{}' is given twice",
                f.name
            )));
        }
        if f.value.is_some() && !SHARED.contains(&f.name.as_str()) && !f.name.contains('.') {
            return Err(Error::input(format!(
                "fix{flag}: '{f}': only {} and a kernel part's parameters (se1.ls) take a \
                 value; '{}' is held at its start (give it as '{}')",
                SHARED.join(", "),
                f.name,
                f.name
            )));
        }
    }
    Ok(())
}

/// The blocks a run holds fixed and the values of the shared ones among them (model
/// units): applied to every start of the run, the exact GP's subset fits included, so
/// no start moves a fixed parameter.
#[derive(Clone, Debug, Default)]
pub struct Pins {
    names: Vec<String>,
    /// Where the fixed shared blocks are held (the other fields are not read).
    at: Option<Hyper>,
}

impl Pins {
    /// Nothing fixed.
    pub fn none() -> Pins {
        Pins::default()
    }

    /// Hold the blocks of `fixes` fixed, the shared ones at their values in `at`.
    pub fn new(fixes: &[Fix], at: &Hyper) -> Pins {
        Pins {
            names: fixes.iter().map(|f| f.name.clone()).collect(),
            at: (!fixes.is_empty()).then(|| at.clone()),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    fn holds(&self, name: &str) -> bool {
        self.names.iter().any(|n| n == name)
    }

    /// Set the fixed shared values in `h`.
    pub fn apply_hyper(&self, h: &mut Hyper) {
        let Some(at) = &self.at else { return };
        if self.holds(SIGNAL_VARIANCE) {
            h.signal_variance = at.signal_variance;
        }
        if self.holds(LENGTHSCALES) && h.lengthscales.len() == at.lengthscales.len() {
            h.lengthscales.clone_from(&at.lengthscales);
        }
        if self.holds(RQ_ALPHA) && h.rq_alpha.is_some() {
            h.rq_alpha = at.rq_alpha;
        }
        if self.holds(NOISE_VARIANCE) {
            h.noise_variance = at.noise_variance;
        }
    }

    /// Set the fixed shared values in `model` and record every fixed block in its
    /// `fixed` list; `shared_only` for a model of another method (the exact GP of a
    /// subset start), which has none of the run's method's own blocks.
    pub fn apply(&self, model: &mut ModelFile, shared_only: bool) {
        self.apply_hyper(&mut model.hyper);
        model.fixed = self
            .names
            .iter()
            .filter(|n| !shared_only || SHARED.contains(&n.as_str()))
            .cloned()
            .collect();
    }
}

impl Pins {
    /// [`Pins::apply`] to a model of the run's method, refusing a fixed σ² below the
    /// model's noise floor (σ² is packed above it).
    pub fn apply_checked(&self, model: &mut ModelFile) -> Result<()> {
        self.apply(model, false);
        if let Some(f) = model.noise_floor
            && self.holds(NOISE_VARIANCE)
            && model.hyper.noise_variance <= f
        {
            return Err(Error::input(format!(
                "fix (--fix): noise_variance is fixed at {} (model units), not above the noise \
                 floor {f}: fix it higher, or lower the floor with --noise-floor (0: none)",
                model.hyper.noise_variance
            )));
        }
        Ok(())
    }
}
