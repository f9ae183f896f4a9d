//! Model files (TOML): the parameters of a fitted or hand-written model, the
//! transformation of its inputs and targets, and optionally its cached posterior.
//! The same tables are stored per result in session files.
//!
//! Every method reads and writes its parameters here, in physical units (variances,
//! lengthscales, absolute frequencies); the optimiser's log-space vector is private
//! to each method.

use crate::error::{Error, Result};
use crate::likelihood::Posterior;
use crate::run_spec::{ApproxKind, Select};
use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelFile {
    pub method: String,
    /// Subtracted from y before fitting, added back to predictions (original units).
    #[serde(default)]
    pub target_mean: f64,
    /// Absolute jitter added to Kuu's diagonal; absent = the policy of docs/methods.md §1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter: Option<f64>,
    /// The likelihood approximation, where the method offers a choice (inter-domain
    /// methods: fitc when absent); fitc, vfe, dtc and pep imply theirs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approx: Option<ApproxKind>,
    /// Power EP's α in (0, 1] (method pep, or approx = "pep").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpha: Option<f64>,
    /// σ² is fitted as floor + e^θ, so it never goes below this (model units); absent
    /// = no floor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise_floor: Option<f64>,
    /// Input columns the model was fitted on, in order (used to read prediction inputs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs: Option<Vec<String>>,
    /// Subtracted from the (standardised) inputs by methods that centre them (FIFGP, TFIFGP).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_mean: Option<Vec<f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub standardize: Option<Standardize>,
    pub hyper: Hyper,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inducing: Option<Inducing>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spectral: Option<Spectral>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub features: Option<Features>,
    /// SPGP+HS: per-pseudo-input uncertainties added to Kuu's diagonal (spgp-hs,
    /// spgp-dr --hetero).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pseudo_noise: Option<PseudoNoise>,
    /// SPGP+DR: the learned projection of the inputs (spgp-dr).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub projection: Option<Projection>,
    /// PCA+SPGP: the principal components the inputs are projected on (pca-spgp).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pca: Option<Pca>,
    /// Basis points B of EigenGP, the Nyström methods and greedy (greedy: in the order
    /// they were selected).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub basis: Option<Basis>,
    /// EigenGP's eigen-weights; absent = the DTC tie w_j = λ_j / M.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eigen: Option<Eigen>,
    /// How greedy selected its basis points (informational except for the check that
    /// `order` matches `[basis] points`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub greedy: Option<Greedy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub posterior: Option<Posterior>,
    /// What the fit reported (informational; ignored when reading).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fit: Option<FitInfo>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hyper {
    /// σ0²
    pub signal_variance: f64,
    /// ℓ_d, one per input column (per principal component for pca-spgp). Absent for
    /// spgp-dr, whose projection carries the scales.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lengthscales: Vec<f64>,
    /// σ²
    pub noise_variance: f64,
}

/// `--standardize`: the model sees (x − input_mean_raw)/input_scale and y/target_scale.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Standardize {
    pub input_center: Vec<f64>,
    pub input_scale: Vec<f64>,
    pub target_scale: f64,
}

/// Pseudo-inputs (SPGP/FITC and its variants).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Inducing {
    /// m rows of D values.
    pub points: Vec<Vec<f64>>,
}

/// Spectral points of PSDS / SSGP as absolute frequencies w_r.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spectral {
    pub frequencies: Vec<Vec<f64>>,
}

/// Basis points (EigenGP, Nyström).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Basis {
    /// M rows of D values.
    pub points: Vec<Vec<f64>>,
}

/// EigenGP's weights: w_j is the prior variance of the weight of the eigenfunction
/// φ_j(x) = √M · k(x, B) u_j / λ_j, j in order of descending eigenvalue λ_j of K_BB
/// (jitter included).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Eigen {
    pub weights: Vec<f64>,
}

/// Greedy basis selection: the rule and the order of selection. `[basis] points` holds
/// the selected inputs themselves, so prediction needs no training data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Greedy {
    pub select: Select,
    /// Training rows (0-based, of the data the model was fitted on) of the basis points,
    /// in the order they were selected; `[basis] points` lists their inputs in this order.
    pub order: Vec<usize>,
    /// Rounds of model adaptation (0: σ0², ℓ, σ² fixed during selection).
    #[serde(default)]
    pub adapt: usize,
    /// Seconds spent selecting (all rounds; without the subset fit and the
    /// hyperparameter fits of adaptation).
    #[serde(default)]
    pub select_seconds: f64,
    /// Kernel rows K(X, x_i) computed during selection (all rounds).
    #[serde(default)]
    pub kernel_rows: usize,
}

/// Inter-domain features (FIFGP, TFIFGP, SMGP).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Features {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_widths: Option<Vec<f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frequencies: Option<Vec<Vec<f64>>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phases: Option<Vec<f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub centres: Option<Vec<Vec<f64>>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub widths: Option<Vec<Vec<f64>>>,
}

/// SPGP+HS (Snelson & Ghahramani 2006b, §5): `Kuu → Kuu + diag(h)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PseudoNoise {
    /// h_j ≥ 0, one per pseudo-input.
    pub h: Vec<f64>,
}

/// SPGP+DR (Snelson & Ghahramani 2006b, §4): `k(x, x̄) = σ0² exp(−½‖P x − x̄‖²)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Projection {
    /// P: G rows of D values.
    pub matrix: Vec<Vec<f64>>,
}

/// PCA+SPGP: the model sees `B (x − mean)`, the top G principal components of the
/// training inputs (in model units, i.e. after `[standardize]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pca {
    /// The training inputs' mean, D values.
    pub mean: Vec<f64>,
    /// B: G rows (unit principal directions, largest variance first) of D values.
    pub basis: Vec<Vec<f64>>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FitInfo {
    pub nlml: f64,
    /// Absolute jitter the final evaluation needed.
    pub jitter_used: f64,
    pub iterations: usize,
    pub train_seconds: f64,
    pub n_train: usize,
}

impl ModelFile {
    /// A model of `method` with these hyperparameters and no other tables.
    pub fn new(method: &str, hyper: Hyper) -> ModelFile {
        ModelFile {
            method: method.to_string(),
            target_mean: 0.0,
            jitter: None,
            approx: None,
            alpha: None,
            noise_floor: None,
            inputs: None,
            input_mean: None,
            standardize: None,
            hyper,
            inducing: None,
            spectral: None,
            features: None,
            pseudo_noise: None,
            projection: None,
            pca: None,
            basis: None,
            eigen: None,
            greedy: None,
            posterior: None,
            fit: None,
        }
    }

    pub fn read(path: &Path) -> Result<ModelFile> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::file(path, format!("cannot read the model file: {e}")))?;
        Self::parse(&text).map_err(|e| Error::file(path, e))
    }

    /// Parse TOML; the error names the line and the key.
    pub fn parse(text: &str) -> std::result::Result<ModelFile, String> {
        toml::from_str(text).map_err(|e| toml_error(text, &e))
    }

    pub fn to_toml(&self) -> Result<String> {
        toml::to_string(self).map_err(|e| Error::File(format!("cannot write a model: {e}")))
    }

    pub fn write(&self, path: &Path) -> Result<()> {
        atomic_write(path, &self.to_toml()?)
    }

    /// The number of input columns the model takes: the columns of `[projection]
    /// matrix` (spgp-dr) or `[pca] basis` (pca-spgp), else one per lengthscale.
    pub fn dim(&self) -> usize {
        let cols = |rows: &Vec<Vec<f64>>| rows.first().map_or(0, Vec::len);
        if let Some(p) = &self.projection {
            cols(&p.matrix)
        } else if let Some(p) = &self.pca {
            p.mean.len()
        } else {
            self.hyper.lengthscales.len()
        }
    }

    /// Shapes and signs shared by every method's parameters. `lengthscales` says
    /// whether the method has them (every method but spgp-dr, whose projection
    /// carries the scales: there giving them is an error).
    pub fn check_hyper(&self, lengthscales: bool) -> Result<()> {
        let h = &self.hyper;
        match (lengthscales, h.lengthscales.is_empty()) {
            (true, true) => {
                return Err(Error::input(format!(
                    "[hyper] lengthscales is missing or empty; method '{}' needs one per input",
                    self.method
                )));
            }
            (false, false) => {
                return Err(Error::input(format!(
                    "[hyper] lengthscales does not apply to method '{}': its [projection] matrix \
                     carries the scales; remove the key",
                    self.method
                )));
            }
            _ => {}
        }
        if self.dim() == 0 {
            return Err(Error::input("the model has no input columns"));
        }
        let positive = |name: &str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(Error::input(format!(
                    "[hyper] {name} must be positive and finite, not {v}"
                )))
            }
        };
        positive("signal_variance", h.signal_variance)?;
        positive("noise_variance", h.noise_variance)?;
        for l in &h.lengthscales {
            positive("lengthscales", *l)?;
        }
        if let Some(j) = self.jitter.filter(|j| !(j.is_finite() && *j >= 0.0)) {
            return Err(Error::input(format!("jitter must be ≥ 0, not {j}")));
        }
        if let Some(f) = self.noise_floor {
            if !(f.is_finite() && f >= 0.0) {
                return Err(Error::input(format!("noise_floor must be ≥ 0, not {f}")));
            }
            if h.noise_variance <= f {
                return Err(Error::input(format!(
                    "[hyper] noise_variance = {} must be above noise_floor = {f}",
                    h.noise_variance
                )));
            }
        }
        if !self.target_mean.is_finite() {
            return Err(Error::input("target_mean must be finite"));
        }
        if let Some(s) = &self.standardize {
            let d = self.dim();
            let finite = |v: &[f64]| v.iter().all(|x| x.is_finite());
            if s.input_center.len() != d || s.input_scale.len() != d {
                return Err(Error::input(format!(
                    "[standardize] needs {d} input_center and {d} input_scale values (one per \
                     input), not {} and {}",
                    s.input_center.len(),
                    s.input_scale.len()
                )));
            }
            if !finite(&s.input_center)
                || s.input_scale.iter().any(|v| !(v.is_finite() && *v > 0.0))
                || !(s.target_scale.is_finite() && s.target_scale > 0.0)
            {
                return Err(Error::input(
                    "[standardize] needs finite centres and positive, finite scales",
                ));
            }
        }
        if let Some(names) = &self.inputs
            && names.len() != self.dim()
        {
            return Err(Error::input(format!(
                "inputs lists {} columns but the model takes {} inputs",
                names.len(),
                self.dim()
            )));
        }
        Ok(())
    }

    pub fn kernel(&self) -> crate::kernel::SeArd {
        crate::kernel::SeArd {
            signal_variance: self.hyper.signal_variance,
            lengthscales: self.hyper.lengthscales.clone(),
        }
    }

    /// The jitter policy for this model.
    pub fn jitter_policy(&self) -> crate::linalg::Jitter {
        match self.jitter {
            Some(j) => crate::linalg::Jitter::Fixed(j),
            None => crate::linalg::Jitter::Auto {
                scale: self.hyper.signal_variance,
            },
        }
    }
}

/// Rows of a table as a matrix, checking that every row has `cols` entries.
pub fn rows_to_matrix(name: &str, rows: &[Vec<f64>], cols: usize) -> Result<DMatrix<f64>> {
    check_rows(name, rows, cols)?;
    Ok(DMatrix::from_fn(rows.len(), cols, |i, j| rows[i][j]))
}

/// Check that a table's rows all hold `cols` finite values.
fn check_rows(name: &str, rows: &[Vec<f64>], cols: usize) -> Result<()> {
    if let Some((i, r)) = rows.iter().enumerate().find(|(_, r)| r.len() != cols) {
        return Err(Error::input(format!(
            "{name}: row {} has {} values, expected {cols}",
            i + 1,
            r.len()
        )));
    }
    if rows.iter().flatten().any(|v| !v.is_finite()) {
        return Err(Error::input(format!(
            "{name}: holds a value that is not finite"
        )));
    }
    Ok(())
}

/// A required, non-empty table of a model as a matrix with `cols` columns.
pub fn required_matrix(
    name: &str,
    rows: Option<&Vec<Vec<f64>>>,
    cols: usize,
) -> Result<DMatrix<f64>> {
    let rows = rows.ok_or_else(|| Error::input(format!("the model has no {name}")))?;
    if rows.is_empty() {
        return Err(Error::input(format!("{name} is empty")));
    }
    rows_to_matrix(name, rows, cols)
}

/// [`required_matrix`]'s checks alone: the number of rows.
pub fn required_rows(name: &str, rows: Option<&Vec<Vec<f64>>>, cols: usize) -> Result<usize> {
    let rows = rows.ok_or_else(|| Error::input(format!("the model has no {name}")))?;
    if rows.is_empty() {
        return Err(Error::input(format!("{name} is empty")));
    }
    check_rows(name, rows, cols)?;
    Ok(rows.len())
}

/// [`required_matrix`] in memory from `scratch` (a table read on every evaluation).
pub fn required_matrix_in(
    name: &str,
    rows: Option<&Vec<Vec<f64>>>,
    cols: usize,
    scratch: &crate::scratch::Scratch,
) -> Result<DMatrix<f64>> {
    let n = required_rows(name, rows, cols)?;
    let rows = rows.map_or(&[][..], |r| &r[..]);
    let mut m = scratch.matrix(n, cols);
    for (i, r) in rows.iter().enumerate() {
        for (j, v) in r.iter().enumerate() {
            m[(i, j)] = *v;
        }
    }
    Ok(m)
}

pub fn matrix_to_rows(m: &DMatrix<f64>) -> Vec<Vec<f64>> {
    m.row_iter().map(|r| r.iter().copied().collect()).collect()
}

/// Serde helper: a matrix as a list of rows (`[[a, b], [c, d]]`).
pub mod rows {
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

/// The line (1-based) a model-check message is about: the key after the first
/// `[table]` it names (or that table's header), else the first top-level key it
/// starts with. None when the text does not hold it (a table left out, say).
pub fn line_of_message(text: &str, message: &str) -> Option<usize> {
    let lines: Vec<&str> = text.lines().collect();
    let key_line = |from: usize, key: &str| {
        lines[from..]
            .iter()
            .take_while(|l| !l.trim_start().starts_with('['))
            .position(|l| {
                let t = l.trim_start();
                t.strip_prefix(key)
                    .is_some_and(|r| r.trim_start().starts_with('='))
            })
            .map(|i| from + i + 1)
    };
    if let Some(open) = message.find('[')
        && let Some(len) = message[open..].find(']')
    {
        let table = &message[open + 1..open + len];
        let header = lines.iter().position(|l| {
            let t = l.trim();
            t == format!("[{table}]") || t.starts_with(&format!("[{table}."))
        })?;
        let key: String = message[open + len + 1..]
            .trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        return (!key.is_empty())
            .then(|| key_line(header + 1, &key))
            .flatten()
            .or(Some(header + 1));
    }
    let key: String = message
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    (!key.is_empty()).then(|| key_line(0, &key)).flatten()
}

/// Describe a TOML error with its line number.
pub fn toml_error(text: &str, e: &toml::de::Error) -> String {
    match e.span() {
        Some(span) => {
            let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
            format!("line {line}: {}", e.message())
        }
        None => e.message().to_string(),
    }
}

/// A temporary file name beside `path` (same folder, so a rename replaces it atomically).
pub fn temp_beside(path: &Path) -> std::path::PathBuf {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
    let dir = dir.unwrap_or_else(|| Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    dir.join(format!(".{name}.tmp{}", std::process::id()))
}

/// Write a file atomically: a temporary file beside it, then a rename, so a crash
/// never leaves half a file.
pub fn atomic_write(path: &Path, text: &str) -> Result<()> {
    use std::io::Write;
    let tmp = temp_beside(path);
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
    let dir = dir.unwrap_or_else(|| Path::new("."));
    // Written in full and flushed to the disk before it replaces the old file, so a
    // crash, a kill -9 or a power cut leaves either the old file or the new one.
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()
    };
    if let Err(e) = write() {
        // a full disk leaves a partial temporary file: do not leave it behind
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::file(
            path,
            format!("cannot write: {}", io_reason(&e)),
        ));
    }
    test_pause_before_rename();
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::file(path, format!("cannot replace: {}", io_reason(&e)))
    })?;
    // The rename itself reaches the disk with the folder's metadata.
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// The system's words for an I/O error without the "(os error 28)" after them.
fn io_reason(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.rfind(" (os error ") {
        Some(i) if text.ends_with(')') => text[..i].to_string(),
        _ => text,
    }
}

/// Fault-injection seam for the tests: `SGPW_TEST_SAVE_PAUSE_MS=N` waits N ms between
/// writing the temporary file and renaming it, so a test can kill -9 the process in
/// the middle of a save.
fn test_pause_before_rename() {
    if let Some(ms) = std::env::var("SGPW_TEST_SAVE_PAUSE_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
}

/// n·log(target scale): what turns a standardised model's NLML (model units) into the
/// NLML of the raw targets (y = scale·y_std + mean has density p(y_std)/scale per point).
pub fn raw_scale_offset(standardize: Option<&Standardize>, n: usize) -> f64 {
    standardize.map_or(0.0, |s| n as f64 * s.target_scale.ln())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_example_parses_and_round_trips() {
        let text = r#"
method = "fitc"
target_mean = 0.0
jitter = 1e-6
[hyper]
signal_variance = 1.0
lengthscales = [1.0, 2.0]
noise_variance = 0.01
[inducing]
points = [[0.1, 0.2], [0.3, 0.4]]
"#;
        let m = ModelFile::parse(text).expect("parses");
        assert_eq!(m.jitter, Some(1e-6));
        assert_eq!(m.inducing.as_ref().map(|i| i.points.len()), Some(2));
        let again = ModelFile::parse(&m.to_toml().expect("writes")).expect("parses");
        assert_eq!(m, again);
    }

    #[test]
    fn check_messages_find_their_line() {
        let text = "method = \"fitc\"\ninput_mean = [1.0]\n[hyper]\nsignal_variance = 1.0\n\
                    lengthscales = [1.0]\nnoise_variance = 0.1\n[inducing]\npoints = [[1.0, 2.0]]\n";
        assert_eq!(
            line_of_message(text, "[inducing] points: row 1 has 2 values"),
            Some(8)
        );
        assert_eq!(
            line_of_message(text, "[hyper] noise_variance must be positive"),
            Some(6)
        );
        assert_eq!(
            line_of_message(text, "input_mean must hold 1 finite values"),
            Some(2)
        );
        assert_eq!(line_of_message(text, "[standardize] needs 2 values"), None);
    }

    #[test]
    fn unknown_keys_are_errors_with_a_line() {
        let text = "method = \"fitc\"\n[hyper]\nsignal_variance = 1.0\nlengthscale = [1.0]\nnoise_variance = 0.1\n";
        let e = ModelFile::parse(text).expect_err("unknown key");
        assert!(e.contains("line 4") && e.contains("lengthscale"), "{e}");
    }
}
