//! What `--kernel` (a session's or Python's `kernel`) holds: one of the five plain
//! kernels by name, read exactly as before, or an expression that builds a kernel from
//! parts (issue 42), checked for syntax when the option is read, so a broken expression
//! is refused with its caret before any data are loaded.

use super::expression::KernelExpr;
use super::{KernelKind, Scales, Start, Towards, build};
use crate::fix::Fix;
use clap::ValueEnum;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::str::FromStr;

/// A run's kernel: a plain kind, or an expression of parts.
#[derive(Clone, Debug, PartialEq)]
pub enum KernelChoice {
    Plain(KernelKind),
    Expr(String),
}

impl KernelChoice {
    /// The plain kind whose starting values (§0.4's σ0², ℓ) the run begins from: the
    /// kind itself, or se for an expression (its parts share that σ0² and ℓ).
    pub fn kind(&self) -> KernelKind {
        match self {
            KernelChoice::Plain(k) => *k,
            KernelChoice::Expr(_) => KernelKind::Se,
        }
    }

    /// The expression, if this is one.
    pub fn expression(&self) -> Option<&str> {
        match self {
            KernelChoice::Plain(_) => None,
            KernelChoice::Expr(e) => Some(e),
        }
    }

    /// The kernel the expression builds from `start`; the error is the caret message.
    pub fn build(expression: &str, start: &Start) -> Result<Box<dyn super::Kernel>, String> {
        Self::build_for_fit(expression, start, &[], None)
    }

    /// The kernel a fit starts from: the expression with the run's `--fix` paths
    /// ([`super::with_fixes`]), its values — written in the data's units — converted
    /// into the model's when the fit is standardized (`scales`; [`super::convert`]),
    /// and the rest from `start`, which is in model units already (computed from the
    /// standardized data). The error is the caret message.
    pub fn build_for_fit(
        expression: &str,
        start: &Start,
        fixes: &[Fix],
        scales: Option<Scales>,
    ) -> Result<Box<dyn super::Kernel>, String> {
        let expr = KernelExpr::parse(expression).map_err(|e| e.render(expression))?;
        let expr = super::with_fixes(&expr, fixes)?;
        let expr = match scales {
            Some(s) => super::convert(&expr, &start.columns, s, Towards::Model),
            None => expr,
        };
        build(&expr, start).map_err(|e| e.render(expression))
    }
}

impl From<KernelKind> for KernelChoice {
    fn from(kind: KernelKind) -> KernelChoice {
        KernelChoice::Plain(kind)
    }
}

impl FromStr for KernelChoice {
    type Err = String;

    /// A plain kernel's name is that kernel (so `se` stays the ARD se of §0.4, not the
    /// part `se`); anything else must parse as an expression.
    fn from_str(text: &str) -> Result<KernelChoice, String> {
        let text = text.trim();
        if let Ok(kind) = KernelKind::from_str(text, false) {
            return Ok(KernelChoice::Plain(kind));
        }
        KernelExpr::parse(text)
            .and_then(|expr| super::build::check_part_names(&expr))
            .map_err(|e| {
                format!(
                    "not a plain kernel (se, matern12, matern32, matern52, rq) nor a kernel \
                 expression: {}",
                    e.render(text)
                )
            })?;
        Ok(KernelChoice::Expr(text.to_string()))
    }
}

/// `--kernel`'s parser: [`KernelChoice::from_str`], offering the five plain names as
/// its possible values (the help, the app's form) while still reading an expression.
#[derive(Clone, Copy, Debug, Default)]
pub struct KernelChoiceParser;

impl clap::builder::TypedValueParser for KernelChoiceParser {
    type Value = KernelChoice;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<KernelChoice, clap::Error> {
        let text = value.to_string_lossy();
        text.parse().map_err(|why: String| {
            let flag = arg
                .and_then(|a| a.get_long())
                .map_or("--kernel".to_string(), |l| format!("--{l}"));
            clap::Error::raw(
                clap::error::ErrorKind::ValueValidation,
                format!("invalid value '{text}' for '{flag}': {why}\n"),
            )
            .with_cmd(cmd)
        })
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            KernelKind::value_variants()
                .iter()
                .filter_map(ValueEnum::to_possible_value),
        ))
    }
}

impl std::fmt::Display for KernelChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KernelChoice::Plain(k) => f.write_str(k.name()),
            KernelChoice::Expr(e) => f.write_str(e),
        }
    }
}

impl Serialize for KernelChoice {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for KernelChoice {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<KernelChoice, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_are_plain_and_expressions_are_checked() {
        for kind in KernelKind::value_variants() {
            let c: KernelChoice = kind.name().parse().expect("a name");
            assert_eq!(c, KernelChoice::Plain(*kind));
            assert_eq!(c.to_string(), kind.name());
        }
        let c: KernelChoice = " se + periodic ".parse().expect("an expression");
        assert_eq!(c, KernelChoice::Expr("se + periodic".into()));
        let e = "se + ".parse::<KernelChoice>().unwrap_err();
        assert!(e.contains('^'), "{e}");
        // a misspelt name is refused when read, naming the plain kernels and the parts
        let e = "matern".parse::<KernelChoice>().unwrap_err();
        assert!(e.contains("matern52") && e.contains("periodic"), "{e}");
    }
}
