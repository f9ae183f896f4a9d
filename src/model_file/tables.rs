//! The method's own tables: each family declares its tables as [`ModelTable`]s and
//! reads, checks and writes them here; a model keeps them as TOML, in the order the file
//! or the family gave them, without knowing them. Also the readers of a table's rows
//! as a checked matrix.

use super::schema::ModelFile;
use crate::error::{Error, Location, Result};
use nalgebra::DMatrix;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// A table (or top-level key) a method keeps in its models beside the shared ones,
/// declared by the family that owns it: its name in the file and its typed contents,
/// read and written with serde.
pub trait ModelTable: Serialize + DeserializeOwned {
    /// Its key in the model file (`inducing` for `[inducing]`).
    const NAME: &'static str;
}

impl ModelFile {
    /// The table `T` if the model has it. A malformed table is an error located at it
    /// (and at the key serde names, where it names one).
    pub fn table<T: ModelTable>(&self) -> Result<Option<T>> {
        let Some(value) = self.tables.get(T::NAME) else {
            return Ok(None);
        };
        T::deserialize(value.clone()).map(Some).map_err(|e| {
            let message = e.message().trim().to_string();
            let mut at = Location::key(T::NAME);
            if let Some(key) = named_field(&message).filter(|_| value.is_table()) {
                at = at.then(&key);
            }
            let what = if value.is_table() {
                format!("[{}]", T::NAME)
            } else {
                T::NAME.to_string()
            };
            Error::at(at, format!("{what}: {message}"))
        })
    }

    /// The rows of key `key` of table `T` as stored, when the table holds that key alone
    /// and it is a non-empty matrix of `cols` columns of finite numbers: exactly when
    /// [`ModelFile::require`] and [`required_matrix`] would accept it, but without
    /// building `T` (which allocates), for tables read on every evaluation. None for
    /// anything else: the checked read then says what is wrong.
    pub fn stored_rows<T: ModelTable>(&self, key: &str, cols: usize) -> Option<&[toml::Value]> {
        let table = self.tables.get(T::NAME)?.as_table()?;
        if table.len() != 1 {
            return None;
        }
        let rows = table.get(key)?.as_array()?;
        let fits = |r: &toml::Value| {
            r.as_array()
                .is_some_and(|r| r.len() == cols && r.iter().all(|v| stored_number(v).is_some()))
        };
        (!rows.is_empty() && rows.iter().all(fits)).then_some(rows.as_slice())
    }

    /// [`ModelFile::stored_rows`] as a matrix in memory from `scratch`.
    pub fn stored_matrix_in<T: ModelTable>(
        &self,
        key: &str,
        cols: usize,
        scratch: &crate::scratch::Scratch,
    ) -> Option<DMatrix<f64>> {
        let rows = self.stored_rows::<T>(key, cols)?;
        let mut m = scratch.matrix(rows.len(), cols);
        for (i, r) in rows.iter().enumerate() {
            for (j, v) in r.as_array().into_iter().flatten().enumerate() {
                m[(i, j)] = stored_number(v).unwrap_or(f64::NAN);
            }
        }
        Some(m)
    }

    /// The table `T`, which the model must have.
    pub fn require<T: ModelTable>(&self) -> Result<T> {
        self.table::<T>()?.ok_or_else(|| {
            Error::input(format!(
                "the model has no [{}] (method '{}' needs it)",
                T::NAME,
                self.method
            ))
        })
    }

    /// Whether the model has the table `T`.
    pub fn has<T: ModelTable>(&self) -> bool {
        self.tables.contains_key(T::NAME)
    }

    /// Write the table `T` (replacing it where the model has it, else after the others).
    pub fn set<T: ModelTable>(&mut self, table: &T) {
        let value = toml::Value::try_from(table)
            .unwrap_or_else(|e| panic!("internal: [{}] does not serialise: {e}", T::NAME));
        self.tables.insert(T::NAME.to_string(), value);
    }

    /// Remove the table `T`.
    pub fn remove<T: ModelTable>(&mut self) {
        self.tables.remove(T::NAME);
    }
}

/// Rows of a table (`at`, e.g. `[inducing] points`) as a matrix, checking that every
/// row has `cols` entries and every value is finite; an error is located at its row.
pub fn rows_to_matrix(at: &Location, rows: &[Vec<f64>], cols: usize) -> Result<DMatrix<f64>> {
    if let Some((i, r)) = rows.iter().enumerate().find(|(_, r)| r.len() != cols) {
        return Err(Error::at(
            at.clone().index(i),
            format!(
                "{at}: row {} has {} values, expected {cols}",
                i + 1,
                r.len()
            ),
        ));
    }
    if let Some(i) = rows.iter().position(|r| r.iter().any(|v| !v.is_finite())) {
        return Err(Error::at(
            at.clone().index(i),
            format!("{at}: row {} holds a value that is not finite", i + 1),
        ));
    }
    Ok(DMatrix::from_fn(rows.len(), cols, |i, j| rows[i][j]))
}

/// A finite number as a table stores it (serde reads an integer as an f64 too).
fn stored_number(v: &toml::Value) -> Option<f64> {
    match v {
        toml::Value::Float(f) => Some(*f).filter(|f| f.is_finite()),
        toml::Value::Integer(i) => Some(*i as f64),
        _ => None,
    }
}

/// A required, non-empty matrix of a model's table (see [`rows_to_matrix`]).
pub fn required_matrix(at: &Location, rows: &[Vec<f64>], cols: usize) -> Result<DMatrix<f64>> {
    if rows.is_empty() {
        return Err(Error::at(at.clone(), format!("{at} is empty")));
    }
    rows_to_matrix(at, rows, cols)
}

/// The field a serde message names (`unknown field `x``, `missing field `x``).
fn named_field(message: &str) -> Option<String> {
    let rest = message
        .strip_prefix("unknown field `")
        .or_else(|| message.strip_prefix("missing field `"))?;
    Some(rest[..rest.find('`')?].to_string())
}
