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
