//! A kernel built from parts as a model file stores it (issue 42): its number of inputs
//! and its expression with every value ([`Kernel::to_expr`]), read back by parsing and
//! building the expression, so the kernel read is the kernel written (the same blocks,
//! values and fixed parameters). Serialized as a table:
//!
//! ```toml
//! [kernel]
//! inputs = 1
//! expression = "se(var=2500, ls=50) + se(var=1, ls=100) * periodic(var=1, ls=1, period=1, fix=[var, period])"
//! ```

use super::expression::KernelExpr;
use super::{Kernel, Scales, Start, Towards, build, convert, paths};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A composed kernel with its values, as a model carries it.
#[derive(Clone, Debug)]
pub struct ComposedKernel {
    kernel: Box<dyn Kernel>,
}

/// The file form of a [`ComposedKernel`].
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Written {
    inputs: usize,
    expression: String,
}

impl ComposedKernel {
    /// `kernel` as a model carries it; None if it cannot be written as an expression
    /// (a kernel built in code from parts the syntax does not name).
    pub fn new(kernel: Box<dyn Kernel>) -> Option<ComposedKernel> {
        kernel.to_expr()?;
        Some(ComposedKernel { kernel })
    }

    /// The kernel read back from its expression on `inputs` inputs: every value is in the
    /// expression, so the start's defaults are never read.
    pub fn read(inputs: usize, expression: &str) -> Result<ComposedKernel, String> {
        let expr = KernelExpr::parse(expression).map_err(|e| e.render(expression))?;
        let start = Start {
            columns: (0..inputs).map(|i| i.to_string()).collect(),
            variance: 1.0,
            lengthscales: vec![1.0; inputs],
            periods: vec![1.0; inputs],
            mean_squares: vec![1.0; inputs],
        };
        let kernel = build(&expr, &start).map_err(|e| e.render(expression))?;
        Ok(ComposedKernel { kernel })
    }

    /// The expression with every value (what the file stores).
    pub fn expression(&self) -> String {
        self.kernel
            .to_expr()
            .map(|e| e.to_string())
            .unwrap_or_default()
    }

    /// The expression in the data's units, for display: a standardized model's values
    /// converted back (`scales`: its `[standardize]`; [`super::convert`]), a raw
    /// model's as they are.
    pub fn data_expression(&self, scales: Option<Scales>) -> KernelExpr {
        let expr = self
            .kernel
            .to_expr()
            .expect("a composed kernel writes itself");
        match scales {
            Some(s) => {
                let columns: Vec<String> = (0..self.kernel.dim()).map(|i| i.to_string()).collect();
                convert(&expr, &columns, s, Towards::Data)
            }
            None => expr,
        }
    }

    /// The paths `--fix` may name in this kernel (`se1.ls`; [`super::paths`]).
    pub fn paths(&self) -> Vec<String> {
        self.kernel.to_expr().map_or_else(Vec::new, |e| paths(&e))
    }

    pub fn kernel(&self) -> &dyn Kernel {
        &*self.kernel
    }

    pub fn kernel_mut(&mut self) -> &mut dyn Kernel {
        &mut *self.kernel
    }
}

impl PartialEq for ComposedKernel {
    fn eq(&self, other: &ComposedKernel) -> bool {
        self.kernel.dim() == other.kernel.dim()
            && self.expression() == other.expression()
            && self.kernel.log_params() == other.kernel.log_params()
    }
}

impl Serialize for ComposedKernel {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Written {
            inputs: self.kernel.dim(),
            expression: self.expression(),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for ComposedKernel {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ComposedKernel, D::Error> {
        let w = Written::deserialize(d)?;
        ComposedKernel::read(w.inputs, &w.expression)
            .map_err(|e| serde::de::Error::custom(format!("[kernel] expression: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::Par;
    use nalgebra::DMatrix;

    /// Built, moved off its start, written as a table and read back: the same kernel,
    /// to the bit; a broken expression is refused with the caret message.
    #[test]
    fn a_composed_kernel_reads_back_from_its_table() {
        let start = Start {
            columns: vec!["t".into(), "u".into()],
            variance: 3.0,
            lengthscales: vec![0.7, 2.0],
            periods: vec![1.0, 1.0],
            mean_squares: vec![1.0, 1.0],
        };
        let text = "se(ls=[1, 5]) + se(dims=[t]) * periodic(dims=[u], fix=period) + linear + white";
        let mut k = build(&KernelExpr::parse(text).expect("parses"), &start).expect("builds");
        let theta: Vec<f64> = k
            .log_params()
            .iter()
            .enumerate()
            .map(|(i, t)| t + 0.1 * (i as f64 + 1.0).sin())
            .collect();
        k.set_log_params(&theta);
        let c = ComposedKernel::new(k).expect("writable");
        #[derive(Serialize, Deserialize)]
        struct File {
            kernel: ComposedKernel,
        }
        let written = toml::to_string(&File { kernel: c.clone() }).expect("writes");
        assert!(written.starts_with("[kernel]\ninputs = 2\n"), "{written}");
        let back: File = toml::from_str(&written).expect("reads");
        assert!(back.kernel == c);
        let x = DMatrix::from_fn(5, 2, |i, j| (i as f64 * 0.7 + j as f64).cos());
        assert_eq!(
            back.kernel.kernel().gram(&x, Par::Seq),
            c.kernel().gram(&x, Par::Seq)
        );
        let bad = "[kernel]\ninputs = 2\nexpression = \"se + sqexp\"\n";
        let e = toml::from_str::<File>(bad)
            .err()
            .expect("refused")
            .to_string();
        assert!(
            e.contains("no kernel part is called sqexp") && e.contains("^"),
            "{e}"
        );
    }
}
