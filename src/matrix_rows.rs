//! A matrix as a list of rows, the form model files and sessions store matrices in: a
//! leaf module, so that the likelihood core's posterior (which model files hold) and
//! the model-file code can both use it without importing each other.

use nalgebra::DMatrix;

/// The rows of `m`, each as a vector.
pub fn matrix_to_rows(m: &DMatrix<f64>) -> Vec<Vec<f64>> {
    m.row_iter().map(|r| r.iter().copied().collect()).collect()
}

/// Serde helper: a matrix as a list of rows (`[[a, b], [c, d]]`).
pub mod as_rows {
    use nalgebra::DMatrix;
    use serde::{Deserialize, Deserializer, Serializer, de::Error as _};

    pub fn serialize<S: Serializer>(m: &DMatrix<f64>, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(super::matrix_to_rows(m))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<DMatrix<f64>, D::Error> {
        let rows = Vec::<Vec<f64>>::deserialize(d)?;
        let cols = rows.first().map_or(0, |r| r.len());
        if rows.iter().any(|r| r.len() != cols) {
            return Err(D::Error::custom("rows of different lengths"));
        }
        Ok(DMatrix::from_fn(rows.len(), cols, |i, j| rows[i][j]))
    }
}
