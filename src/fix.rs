//! What `--fix` (session key `fix`, Python `fix=`) gives: the name of a parameter
//! block to hold fixed during the fit, and optionally the value to hold it at. A leaf
//! module, so that the run options can carry it without importing the parameter layout
//! (`crate::params`), which checks the names against a method's blocks.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

/// One `--fix` entry: `noise_variance=0.01` (held at 0.01, in the data's units) or
/// `lengthscales` (held at its starting value).
#[derive(Clone, Debug, PartialEq)]
pub struct Fix {
    pub name: String,
    pub value: Option<f64>,
}

impl FromStr for Fix {
    type Err = String;

    fn from_str(text: &str) -> Result<Fix, String> {
        let (name, value) = match text.split_once('=') {
            Some((n, v)) => (n.trim(), Some(v.trim())),
            None => (text.trim(), None),
        };
        if !is_name(name) {
            return Err(format!(
                "'{text}' is not a parameter block: give a name such as noise_variance, \
                 or a kernel part's parameter such as se1.ls or periodic.period, \
                 optionally with a value (noise_variance=0.01)"
            ));
        }
        let value = match value {
            None => None,
            Some(v) => match v.parse::<f64>() {
                Ok(x) if x.is_finite() && x > 0.0 => Some(x),
                _ => {
                    return Err(format!(
                        "'{text}': the value '{v}' is not a positive number"
                    ));
                }
            },
        };
        Ok(Fix {
            name: name.to_string(),
            value,
        })
    }
}

/// A block's name (`noise_variance`) or a kernel part's path (`se1.ls`: a part's label,
/// which may end in its number, a dot, and its key).
fn is_name(name: &str) -> bool {
    let word = |w: &str, digits: bool| {
        w.starts_with(|c: char| c.is_ascii_lowercase())
            && w.chars()
                .all(|c| c.is_ascii_lowercase() || c == '_' || (digits && c.is_ascii_digit()))
    };
    match name.split_once('.') {
        None => word(name, false),
        Some((label, key)) => word(label, true) && word(key, false),
    }
}

impl fmt::Display for Fix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.value {
            Some(v) => write!(f, "{}={v}", self.name),
            None => f.write_str(&self.name),
        }
    }
}

impl Serialize for Fix {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Fix {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Fix, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}
