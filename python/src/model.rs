//! `fit`, `load` and the fitted model: the same library calls as `sgpw fit` (the run
//! parsed from the command line's declaration and checked with its messages, then
//! `train::fit`), `sgpw predict` (`Predictor`) and `--save-model` (`ModelFile`).

use crate::convert::{array, matrix, matrix_array, setting_text, toml_to_py, vector};
use crate::detached::run_detached;
use crate::errors::OrPy;
use numpy::{PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use sgpw::data::arrays::{self, Arrays, Labels};
use sgpw::exec::{CancelToken, Exec, Par};
use sgpw::model_file::ModelFile;
use sgpw::run_context::{Phase, Progress, RunContext};
use sgpw::train::{self, Observed, Predictor};
use std::path::PathBuf;

/// One column of predictions (mean, latent or noisy variance) for Python.
type Column<'py> = Bound<'py, PyArray1<f64>>;

/// A fitted model with its posterior: predictions, its file, its parameters.
#[pyclass(module = "sgpw._sgpw", frozen)]
pub struct Model {
    predictor: Predictor,
}

/// Threads and a fresh cancel token for one call: `threads` of rayon's pool (None or
/// 0: every core, as the command line uses; 1: this thread only).
fn exec(threads: Option<usize>) -> (Exec, CancelToken) {
    let token = CancelToken::new();
    (
        Exec::new(Par::from_threads(threads.unwrap_or(0)), token.clone()),
        token,
    )
}

#[pymethods]
impl Model {
    /// The method's registry name.
    #[getter]
    fn method(&self) -> String {
        self.predictor.model().method.clone()
    }

    /// The number of input columns the model takes.
    /// The parameter blocks the fit held fixed (`fix=`), as the model file lists them.
    #[getter]
    fn fixed(&self) -> Vec<String> {
        self.predictor.model().fixed.clone()
    }

    #[getter]
    fn dim(&self) -> usize {
        self.predictor.dim()
    }

    /// The names of the input columns it was fitted on, in order.
    #[getter]
    fn inputs(&self) -> Option<Vec<String>> {
        self.predictor.model().inputs.clone()
    }

    /// Whether the model file holds everything prediction needs (else, like `full`, it
    /// is conditioned on its training data again when loaded).
    #[getter]
    fn stores_posterior(&self) -> bool {
        self.predictor.method().stores_posterior()
    }

    /// What its objective is called ("NLML", "negative ELBO", …).
    #[getter]
    fn objective_name(&self) -> &'static str {
        self.predictor
            .method()
            .objective_name(self.predictor.model())
    }

    /// What the fit recorded in the model file (`[fit]`: nlml, jitter_used, iterations,
    /// train_seconds, n_train), if it has it.
    #[getter]
    fn fit_info<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let Some(info) = &self.predictor.model().fit else {
            return Ok(None);
        };
        let value = toml::Value::try_from(info)
            .map_err(|e| PyValueError::new_err(format!("the model's [fit]: {e}")))?;
        toml_to_py(py, &value).map(Some)
    }

    /// The model file's tables (hyperparameters, inducing points, spectral points, the
    /// standardisation, …) as dicts and lists, without the cached posterior and the
    /// fit's record.
    fn tables<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let model = ModelFile {
            posterior: None,
            fit: None,
            ..self.predictor.model().clone()
        };
        let value = toml::Value::try_from(&model)
            .map_err(|e| PyValueError::new_err(format!("the model: {e}")))?;
        toml_to_py(py, &value)
    }

    /// σ0², σ² and the lengthscales in the data's units (`Predictor::hyper_in_data_units`):
    /// a dict with `lengthscales` None where they are not one per input and
    /// `noise_variance` None for a likelihood other than the Gaussian.
    fn hyper_in_data_units<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let h = self.predictor.hyper_in_data_units();
        let d = PyDict::new(py);
        d.set_item("signal_variance", h.signal_variance)?;
        d.set_item("noise_variance", h.noise_variance)?;
        d.set_item("lengthscales", h.lengthscales.map(|l| array(py, l)))?;
        Ok(d)
    }

    /// Predictive mean, latent variance and noisy variance at the rows of `x` (in the
    /// model's inputs), computed with the GIL released; Ctrl-C stops it.
    #[pyo3(signature = (x, threads=None))]
    fn predict<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, f64>,
        threads: Option<usize>,
    ) -> PyResult<(Column<'py>, Column<'py>, Column<'py>)> {
        let x = matrix(&x);
        arrays::check_finite_inputs("X", &x).or_py()?;
        let (exec, token) = exec(threads);
        let predictor = &self.predictor;
        let p = run_detached(
            py,
            || token.cancel(),
            |_, ()| Ok(()),
            move |_| predictor.predict_with(&x, &exec),
        )?
        .or_py()?;
        p.check_finite(|i| format!("row {i} of X")).or_py()?;
        Ok((
            array(py, p.mean),
            array(py, p.var_latent),
            array(py, p.var_noisy),
        ))
    }

    /// Each summand's posterior mean and latent variance at the rows of `x`, in the
    /// target's units, with its short label (`Predictor::components_with`: what `sgpw
    /// predict --components` writes), computed with the GIL released; a model whose
    /// kernel is not a sum, or whose method has no posterior over kernel values, is a
    /// ValueError saying why.
    #[pyo3(signature = (x, threads=None))]
    fn components<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, f64>,
        threads: Option<usize>,
    ) -> PyResult<Vec<(String, Column<'py>, Column<'py>)>> {
        let x = matrix(&x);
        arrays::check_finite_inputs("X", &x).or_py()?;
        let (exec, token) = exec(threads);
        let predictor = &self.predictor;
        let parts = run_detached(
            py,
            || token.cancel(),
            |_, ()| Ok(()),
            move |_| predictor.components_with(&x, &exec),
        )?
        .or_py()?;
        Ok(parts
            .into_iter()
            .map(|c| (c.label, array(py, c.mean), array(py, c.var_latent)))
            .collect())
    }

    /// Predictive mean and the full covariance (t×t) of the latent function at the rows
    /// of `x`, computed with the GIL released (`Predictor::latent_cov_with`).
    #[pyo3(signature = (x, threads=None))]
    fn latent_cov<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, f64>,
        threads: Option<usize>,
    ) -> PyResult<(Column<'py>, Bound<'py, PyArray2<f64>>)> {
        let x = matrix(&x);
        arrays::check_finite_inputs("X", &x).or_py()?;
        let (exec, token) = exec(threads);
        let predictor = &self.predictor;
        let (mean, cov) = run_detached(
            py,
            || token.cancel(),
            |_, ()| Ok(()),
            move |_| predictor.latent_cov_with(&x, &exec),
        )?
        .or_py()?;
        Ok((array(py, mean), matrix_array(py, &cov)?))
    }

    /// `n` posterior draws (n×t) of the latent function at the rows of `x`
    /// (`Predictor::sample_with`), seeded.
    #[pyo3(signature = (x, n, seed, threads=None))]
    fn sample<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, f64>,
        n: usize,
        seed: u64,
        threads: Option<usize>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let x = matrix(&x);
        arrays::check_finite_inputs("X", &x).or_py()?;
        let (exec, token) = exec(threads);
        let predictor = &self.predictor;
        let draws = run_detached(
            py,
            || token.cancel(),
            |_, ()| Ok(()),
            move |_| predictor.sample_with(&x, n, seed, &exec),
        )?
        .or_py()?;
        matrix_array(py, &draws)
    }

    /// The log predictive density of each target `y` at the rows of `x`
    /// (`Predictor::log_density_with`).
    #[pyo3(signature = (x, y, threads=None))]
    fn log_density<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, f64>,
        y: PyReadonlyArray1<'py, f64>,
        threads: Option<usize>,
    ) -> PyResult<Column<'py>> {
        let x = matrix(&x);
        let y = vector(&y);
        arrays::check_finite_inputs("X", &x).or_py()?;
        let (exec, token) = exec(threads);
        let predictor = &self.predictor;
        let out = run_detached(
            py,
            || token.cancel(),
            |_, ()| Ok(()),
            move |_| predictor.log_density_with(&x, &y, &exec),
        )?
        .or_py()?;
        Ok(array(py, out))
    }

    /// The mean and variance of a new observation y at the rows of `x`, in the data's
    /// units, by the model's likelihood (`train::Observed`, what `sgpw predict` writes):
    /// bernoulli's p(y = 1) and p(1 − p), poisson's and studentt's predictive mean and
    /// variance; a Gaussian model's mean and noisy variance. `exposure`: each row's
    /// exposure E > 0 for a poisson model (`--exposure`; None: E = 1, the rate per unit
    /// of exposure).
    #[pyo3(signature = (x, exposure=None, threads=None))]
    fn predict_y<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, f64>,
        exposure: Option<PyReadonlyArray1<'py, f64>>,
        threads: Option<usize>,
    ) -> PyResult<(Column<'py>, Column<'py>)> {
        let model = self.predictor.model();
        let observed = Observed::of(model).or_py()?;
        let n = x.as_array().nrows();
        let exposure = exposure.map(|e| vector(&e));
        let offsets = match (&model.likelihood, &exposure) {
            (Some(t), _) => t
                .log_offsets(exposure.as_deref(), n)
                .map_err(PyValueError::new_err)?,
            (None, Some(_)) => {
                return Err(PyValueError::new_err(
                    "exposure: an exposure scales the rate of a poisson model; this model is \
                     gaussian",
                ));
            }
            (None, None) => vec![0.0; n],
        };
        let (mean, latent, noisy) = self.predict(py, x, threads)?;
        let Some(observed) = observed else {
            return Ok((mean, noisy));
        };
        let (mean, latent) = (mean.readonly(), latent.readonly());
        let (m, v): (Vec<f64>, Vec<f64>) = mean
            .as_array()
            .iter()
            .zip(latent.as_array().iter())
            .zip(&offsets)
            .map(|((m, v), o)| observed.moments_exposed(*m, *v, *o))
            .unzip();
        Ok((array(py, m), array(py, v)))
    }

    /// The central interval holding `level` of a new observation's predictive
    /// probability at the rows of `x` (`train::Observed::interval`, what `sgpw predict`
    /// writes at 95%): poisson and studentt models.
    #[pyo3(signature = (x, level, threads=None))]
    fn predict_interval<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, f64>,
        level: f64,
        threads: Option<usize>,
    ) -> PyResult<(Column<'py>, Column<'py>)> {
        if !(level > 0.0 && level < 1.0) {
            return Err(PyValueError::new_err(format!(
                "level = {level}: the share of the predictive probability inside the \
                 interval, between 0 and 1 (0.95 for 95%)"
            )));
        }
        let model = self.predictor.model();
        let no_interval = || {
            PyValueError::new_err(format!(
                "a {} model has no predictive interval here: poisson and studentt models \
                 have one (a Gaussian model's is mean ± z·√var_noisy)",
                model.likelihood_kind()
            ))
        };
        let observed = Observed::of(model).or_py()?.ok_or_else(no_interval)?;
        let (mean, latent, _) = self.predict(py, x, threads)?;
        let (mean, latent) = (mean.to_vec()?, latent.to_vec()?);
        let (exec, token) = exec(threads);
        let observed = &observed;
        let ends = run_detached(
            py,
            || token.cancel(),
            |_, ()| Ok(()),
            move |_| observed.intervals(&mean, &latent, level, &exec),
        )?
        .or_py()?
        .ok_or_else(no_interval)?;
        let (lower, upper): (Vec<f64>, Vec<f64>) = ends.into_iter().unzip();
        Ok((array(py, lower), array(py, upper)))
    }

    /// A bernoulli model's two training labels, read as classes 0 and 1; else None.
    #[getter]
    fn labels(&self) -> Option<[f64; 2]> {
        self.predictor
            .model()
            .likelihood
            .as_ref()
            .and_then(|t| t.labels)
    }

    /// A bernoulli model of a target of words (strings, booleans): the labels of classes
    /// 0 and 1 (sorted; the second the positive class); else None.
    #[getter]
    fn classes(&self) -> Option<[String; 2]> {
        self.predictor
            .model()
            .likelihood
            .as_ref()
            .and_then(|t| t.classes.clone())
    }

    /// The model's likelihood by name.
    #[getter]
    fn likelihood(&self) -> &'static str {
        self.predictor.model().likelihood_kind().name()
    }

    /// The model file, as `sgpw fit --save-model` writes it.
    fn to_toml(&self) -> PyResult<String> {
        self.predictor.model().to_toml().or_py()
    }

    /// Write the model file (atomically), as `sgpw fit --save-model` does.
    fn save(&self, path: PathBuf) -> PyResult<()> {
        self.predictor.model().write(&path).or_py()
    }
}

/// The model as the command line would read it from a file: checked against its
/// method, conditioned on training data where it stores no posterior.
fn predictor(
    model: ModelFile,
    x: Option<PyReadonlyArray2<'_, f64>>,
    y: Option<PyReadonlyArray1<'_, f64>>,
) -> PyResult<Model> {
    let method = model.check().or_py()?;
    let stored = model.posterior.is_some() && method.stores_posterior();
    let train = match (x, y) {
        (Some(x), Some(y)) => Some((matrix(&x), vector(&y))),
        (None, None) => None,
        _ => return Err(PyValueError::new_err("give both X and y, or neither")),
    };
    if train.is_none() && !stored {
        return Err(PyValueError::new_err(format!(
            "this {} model has no stored [posterior]; pass the training data it was fitted \
             on: sgpw.load(path, X, y)",
            model.method
        )));
    }
    let train = if stored { None } else { train };
    Predictor::new(model, train.as_ref().map(|(x, y)| (x, y.as_slice())))
        .map(|predictor| Model { predictor })
        .or_py()
}

/// Read a model file, as `sgpw predict --model` does (its errors name the file and line).
#[pyfunction]
#[pyo3(signature = (path, x=None, y=None))]
pub fn load(
    path: PathBuf,
    x: Option<PyReadonlyArray2<'_, f64>>,
    y: Option<PyReadonlyArray1<'_, f64>>,
) -> PyResult<Model> {
    let (model, _) = sgpw::methods::read_model(&path).or_py()?;
    predictor(model, x, y)
}

/// A model from the text of its file (unpickling).
#[pyfunction]
#[pyo3(signature = (text, x=None, y=None))]
pub fn from_toml(
    text: &str,
    x: Option<PyReadonlyArray2<'_, f64>>,
    y: Option<PyReadonlyArray1<'_, f64>>,
) -> PyResult<Model> {
    let model = ModelFile::parse(text).map_err(PyValueError::new_err)?;
    predictor(model, x, y)
}

/// Train one model, as `sgpw fit` does: `options` are (keyword, value) pairs parsed by
/// the command line's parser of the run declaration and checked with its messages
/// before the data, the arrays then checked as a loaded file is, and the fit run by
/// `train::fit` with the GIL released. `callback(iteration, objective, start)` sees every
/// iteration of the two raced fits as it happens (objective on the raw target scale, as
/// the trace; `start` 1 for the default start's fit, 2 for the second start's, each
/// numbered from 0; their turns interleave).
///
/// A target of labels (strings; booleans as "true"/"false"; None where missing) comes as
/// `y_labels` (and `y_test_labels`) in place of `y` (and `y_test`): the Rust loader's rule
/// reads it as two classes (`likelihoods::ClassNames`), as it reads a file's.
#[pyfunction]
#[pyo3(signature = (x, y, x_test, y_test, feature_names, options, threads=None, callback=None, y_labels=None, y_test_labels=None, booleans=false))]
#[allow(clippy::too_many_arguments)]
pub fn fit<'py>(
    py: Python<'py>,
    x: PyReadonlyArray2<'py, f64>,
    y: Option<PyReadonlyArray1<'py, f64>>,
    x_test: Option<PyReadonlyArray2<'py, f64>>,
    y_test: Option<PyReadonlyArray1<'py, f64>>,
    feature_names: Option<Vec<String>>,
    options: Vec<(String, Bound<'py, PyAny>)>,
    threads: Option<usize>,
    callback: Option<Bound<'py, PyAny>>,
    y_labels: Option<Vec<Option<String>>>,
    y_test_labels: Option<Vec<Option<String>>>,
    booleans: bool,
) -> PyResult<(Model, Bound<'py, PyDict>)> {
    let mut pairs = Vec::new();
    for (name, value) in &options {
        if !value.is_none() {
            pairs.push((name.clone(), setting_text(name, value)?));
        }
    }
    let entry = sgpw::run_spec::parse_run(&pairs).map_err(PyValueError::new_err)?;
    let spec = entry.single().map_err(PyValueError::new_err)?;
    // method, m's upper bound and options before the data; m ≤ n after (as `fit`)
    spec.check(usize::MAX).or_py()?;
    let test = match (x_test, y_test, &y_test_labels) {
        (Some(x), Some(y), None) => Some((matrix(&x), vector(&y))),
        // the labels' codes take the place of the numbers
        (Some(x), None, Some(_)) => Some((matrix(&x), Vec::new())),
        (None, None, None) => None,
        _ => {
            return Err(PyValueError::new_err(
                "give both X_test and y_test, or neither",
            ));
        }
    };
    let (y_train, labels) = match (y, y_labels) {
        (Some(y), None) => (vector(&y), None),
        (None, Some(train)) => (
            Vec::new(),
            Some(Labels {
                train,
                test: y_test_labels,
                booleans,
            }),
        ),
        _ => return Err(PyValueError::new_err("give y as numbers or as labels")),
    };
    let mut data = arrays::dataset(Arrays {
        x_train: matrix(&x),
        y_train,
        test,
        feature_names,
        target_name: None,
        labels,
    })
    .or_py()?;
    // what `sgpw fit` notes when it loads a file (data::load's likelihood check)
    data.notes
        .extend(sgpw::likelihoods::two_valued_regression_note(
            &data.target_name,
            spec.options.likelihood(),
            data.y_train.as_slice(),
        ));
    let valid = spec.check(data.n_train()).or_py()?;
    let (exec, token) = exec(threads);
    let report = callback.is_some();
    let result = run_detached(
        py,
        || token.cancel(),
        |_, (iteration, objective, start): (usize, f64, u8)| match &callback {
            Some(f) => f.call1((iteration, objective, start)).map(|_| ()),
            None => Ok(()),
        },
        |tx| {
            let sink = |p: &Progress| {
                // which of the two raced fits (1: the default start's, 2: the second
                // start's): their turns interleave
                let start = match p.phase {
                    Phase::Fit { .. } => 1,
                    Phase::SecondStart => 2,
                    _ => return,
                };
                if let (true, Some(v), None) = (report, p.nlml, p.validation) {
                    let _ = tx.send((p.iteration, v, start));
                }
            };
            let ctx = RunContext::new(exec, &sink);
            train::fit(&data, &valid, &ctx)
        },
    )?
    .or_py()?;
    let info = PyDict::new(py);
    let test = result.test.as_ref();
    info.set_item("method", &result.model.method)?;
    info.set_item("label", entry.label())?;
    info.set_item("m", spec.m)?;
    info.set_item("seed", spec.seed)?;
    info.set_item("standardize", spec.standardize)?;
    info.set_item("objective", valid.method().objective_name(&result.model))?;
    info.set_item("nlml", result.nlml)?;
    info.set_item("trace", array(py, result.trace.clone()))?;
    info.set_item("iterations", result.iterations)?;
    info.set_item("evaluations", result.evaluations)?;
    info.set_item("stop", result.stop.word())?;
    info.set_item("train_seconds", result.train_seconds)?;
    info.set_item("jitter", result.jitter)?;
    info.set_item("collapsed", result.model.collapsed().is_some())?;
    let second = match result
        .model
        .fit
        .as_ref()
        .and_then(|f| f.second_start.as_ref())
    {
        Some(s) => {
            let d = PyDict::new(py);
            d.set_item("first_nlml", s.first_nlml)?;
            d.set_item("second_nlml", s.second_nlml)?;
            d.set_item("subset_start", &s.subset_start)?;
            d.set_item("kept_second", s.kept_second)?;
            // the iteration the fit behind was stopped at (the two are raced), or None
            d.set_item("dropped_at", s.dropped_at)?;
            Some(d)
        }
        None => None,
    };
    info.set_item("second_start", second)?;
    info.set_item("target", &data.target_name)?;
    info.set_item("n_train", data.n_train())?;
    info.set_item("n_test", data.n_test())?;
    info.set_item("nmse", test.and_then(|t| t.nmse))?;
    info.set_item("mnlp", test.map(|t| t.mnlp))?;
    info.set_item("mse", test.map(|t| t.mse))?;
    info.set_item("constant_mnlp", result.constant_mnlp)?;
    info.set_item(
        "validation",
        result
            .validation
            .iter()
            .map(|v| (v.iteration, v.nmse, v.mnlp))
            .collect::<Vec<_>>(),
    )?;
    info.set_item("best_iteration", result.best_iteration)?;
    info.set_item("notes", data.notes.clone())?;
    if data.classes.is_some() {
        // a target of labels as the class codes it was read as (what a model without a
        // stored posterior conditions on again)
        info.set_item("y_classes", array(py, data.y_train.as_slice().to_vec()))?;
    }
    Ok((
        Model {
            predictor: result.predictor,
        },
        info,
    ))
}
