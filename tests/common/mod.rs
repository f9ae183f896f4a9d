//! Helpers shared by the integration tests: reading the reference fixtures and
//! comparing numbers.
#![allow(dead_code)]

use nalgebra::DMatrix;
use serde_json::Value;
use std::path::PathBuf;

pub fn shared(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared")
        .join(rel)
}

pub fn fixture(name: &str) -> Value {
    let path = shared(&format!("reference/{name}"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).expect("fixture is JSON")
}

pub fn vector(v: &Value, key: &str) -> Vec<f64> {
    v[key]
        .as_array()
        .unwrap_or_else(|| panic!("{key} is not an array"))
        .iter()
        .map(|x| x.as_f64().expect("number"))
        .collect()
}

/// A list of rows as a matrix.
pub fn matrix(v: &Value, key: &str) -> DMatrix<f64> {
    let rows: Vec<Vec<f64>> = v[key]
        .as_array()
        .unwrap_or_else(|| panic!("{key} is not an array"))
        .iter()
        .map(|r| {
            r.as_array()
                .expect("row")
                .iter()
                .map(|x| x.as_f64().expect("number"))
                .collect()
        })
        .collect();
    let cols = rows[0].len();
    DMatrix::from_fn(rows.len(), cols, |i, j| rows[i][j])
}

pub fn rows(m: &DMatrix<f64>) -> Vec<Vec<f64>> {
    m.row_iter().map(|r| r.iter().copied().collect()).collect()
}

/// Relative error in the fixtures' README sense: |a − b| / max(|b|, 1e-3·‖b‖∞).
pub fn assert_close(what: &str, got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let rel = (g - w).abs() / w.abs().max(1e-3 * scale).max(1e-300);
        assert!(
            rel < tol,
            "{what}[{i}]: got {g:e}, want {w:e} (rel {rel:e})"
        );
    }
}

/// Central finite differences of f at x, step h, compared with the analytic gradient.
pub fn check_gradient(
    what: &str,
    f: &mut dyn FnMut(&[f64]) -> f64,
    x: &[f64],
    grad: &[f64],
    h: f64,
    tol: f64,
) {
    let fd: Vec<f64> = (0..x.len())
        .map(|i| {
            let (mut p, mut q) = (x.to_vec(), x.to_vec());
            p[i] += h;
            q[i] -= h;
            (f(&p) - f(&q)) / (2.0 * h)
        })
        .collect();
    assert_close(what, grad, &fd, tol);
}
