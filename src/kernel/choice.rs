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

    /// `text` checked as `--kernel` reads it, in its canonical form (a plain name, or the
    /// expression as a model file writes it). Given the inputs' names, the expression is
    /// also built on them from neutral starting values, so an argument a part does not
    /// take, a bad value or a `dims` that names no input is refused before any data —
    /// with the caret message the fit would give (what Python's kernel objects call).
    pub fn checked(text: &str, columns: Option<&[String]>) -> Result<String, String> {
        let choice: KernelChoice = text.parse()?;
        let (Some(expression), Some(columns)) = (choice.expression(), columns) else {
            return Ok(match &choice {
                KernelChoice::Plain(_) => choice.to_string(),
                KernelChoice::Expr(e) => KernelExpr::parse(e)
                    .map_err(|err| err.render(e))?
                    .to_string(),
            });
        };
        let d = columns.len();
        let start = Start {
            columns: columns.to_vec(),
            variance: 1.0,
            lengthscales: vec![1.0; d],
            periods: vec![1.0; d],
            mean_squares: vec![1.0; d],
        };
        KernelChoice::build(expression, &start)?;
        Ok(KernelExpr::parse(expression)
            .map_err(|e| e.render(expression))?
            .to_string())
    }

    /// Every part the expression syntax names: its name, the arguments it takes besides
    /// `dims` and `fix`, and the ones `fix=` may name (the one declaration, in
    /// `build.rs`, that Python's kernel objects are made from).
    pub fn parts() -> Vec<PartSyntax> {
        super::build::PARTS
            .iter()
            .map(|&(name, args)| PartSyntax {
                name,
                args,
                fixable: super::build::fixable(name),
            })
            .collect()
    }
}

/// One part of the expression syntax ([`KernelChoice::parts`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PartSyntax {
    pub name: &'static str,
    /// The arguments it takes besides `dims` and `fix`.
    pub args: &'static [&'static str],
    /// The parameters `fix=` may name.
    pub fixable: &'static [&'static str],
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
