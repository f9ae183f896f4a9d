//! Helpers shared by the integration tests: reading the reference fixtures and
//! comparing numbers.
#![allow(dead_code)]

use nalgebra::DMatrix;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::Value;
use sgpw::data::Dataset;
pub use sgpw::data::TrainData;
pub use sgpw::exec::Exec;
use sgpw::methods::Method;
use sgpw::model_file::ModelFile;
use sgpw::run_context::{Phase, Progress, RunContext};
use sgpw::run_spec::{MethodOptions, RunSpec};
use sgpw::train::FitResult;
use std::cell::RefCell;
use std::path::{Path, PathBuf};

/// All cores, never cancelled.
pub fn ex() -> Exec {
    Exec::default()
}

/// A method's initial model for a spec checked against the data.
pub fn init(
    method: &dyn Method,
    data: &TrainData,
    spec: &RunSpec,
    rng: &mut ChaCha8Rng,
) -> sgpw::error::Result<ModelFile> {
    let valid = spec.check(data.y.len())?;
    let ctx = RunContext::quiet(ex());
    let hyper = sgpw::methods::start::initial_hyper(data, &valid, None, &ctx, rng)?;
    method.init(data, &valid, hyper, &ctx, rng)
}

/// One fit (the spec checked first, as every caller does); returns the iteration
/// numbers the fit phase reported, in order.
pub fn fit(ds: &Dataset, spec: &RunSpec) -> (sgpw::error::Result<FitResult>, Vec<usize>) {
    let seen = RefCell::new(Vec::new());
    let sink = |p: &Progress| {
        if let (Phase::Fit { .. }, Some(_)) = (p.phase, p.nlml) {
            seen.borrow_mut().push(p.iteration);
        }
    };
    let r = spec
        .check(usize::MAX)
        .and_then(|v| sgpw::train::fit(ds, &v, &RunContext::new(ex(), &sink)));
    (r, seen.into_inner())
}

/// Options as a session would write them (TOML).
pub fn options(toml_text: &str) -> MethodOptions {
    toml::from_str(toml_text).unwrap_or_else(|e| panic!("{toml_text}: {e}"))
}

/// A file of the repository, by its path from the top (`datasets/kin40k/train.csv.gz`).
pub fn repo(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// A reference fixture of `tests/fixtures` (see its README for where each came from).
pub fn fixture(name: &str) -> Value {
    let path = repo(&format!("tests/fixtures/{name}"));
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

/// A smooth noisy toy problem: inputs uniform on [−2, 2]^d, y = Σ_k sin((k+1)x_k) + noise.
pub fn toy_data(n: usize, d: usize, seed: u64) -> TrainData {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x = DMatrix::from_fn(n, d, |_, _| rng.random_range(-2.0..2.0));
    let y = (0..n)
        .map(|i| {
            (0..d)
                .map(|k| (x[(i, k)] * (k + 1) as f64).sin())
                .sum::<f64>()
                + 0.1 * rng.random_range(-1.0..1.0)
        })
        .collect();
    TrainData {
        x,
        y,
        log_exposure: None,
    }
}

/// Copy the repository's datasets/*.csv into `dir/datasets` and make `dir/sessions`,
/// so a copied session finds its data by the same relative paths.
pub fn copy_datasets(dir: &Path) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::create_dir_all(dir.join("sessions")).expect("mkdir");
    std::fs::create_dir_all(dir.join("datasets")).expect("mkdir");
    for e in std::fs::read_dir(root.join("datasets")).expect("datasets/") {
        let p = e.expect("entry").path();
        if p.extension().is_some_and(|x| x == "csv") {
            let name = p.file_name().expect("name");
            std::fs::copy(&p, dir.join("datasets").join(name)).expect("copies data");
        }
    }
}

/// Open `session` in the app (data sets not loaded, so runs show their results only)
/// and draw every chart with every run selected at 80×24 and 160×48: whatever a
/// session file holds must not panic the screen.
pub fn draw_app(session: &sgpw::session::Session) {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use sgpw::tui::state::{App, Event};
    use sgpw::tui::theme::Theme;
    let theme = Theme {
        color: true,
        ascii: false,
    };
    let (mut app, _) = App::new(PathBuf::from("/nowhere/fuzz.toml"), session.clone(), theme);
    let key = |c: KeyCode| Event::Key(KeyEvent::new(c, KeyModifiers::NONE));
    for (w, h) in [(80, 24), (160, 48)] {
        let mut t = Terminal::new(TestBackend::new(w, h)).expect("a test terminal");
        for _ in 0..app.runs.len().min(6) {
            for tab in ['1', '2', 'c', '3'] {
                app.update(key(KeyCode::Char(tab)));
                t.draw(|f| sgpw::tui::view::draw(f, &app)).expect("draws");
            }
            app.update(key(KeyCode::Down));
        }
        app.update(key(KeyCode::Char('r')));
        app.update(Event::Tick(std::time::Duration::from_secs(1)));
        t.draw(|f| sgpw::tui::view::draw(f, &app)).expect("draws");
        app.update(key(KeyCode::Home));
    }
}

/// An L-BFGS fit's typed state against the model file it replaces (issue 44): θ moved
/// off `model`'s start on its free entries, then unpacked into the method's typed model
/// and into a copy of the file (its fixed blocks held), gives the same objective and
/// gradient, bit for bit, in one piece and in chunks of a few rows.
pub fn assert_typed_state_is_the_files(
    method: &dyn Method,
    model: &ModelFile,
    data: &TrainData,
    what: &str,
) {
    let mut theta = method.pack(model);
    let layout = sgpw::params::ParamLayout::new(model, method.tail_blocks(), theta.len());
    for i in layout.free(0..theta.len()) {
        theta[i] += 0.05 * (i as f64 * 0.7).sin();
    }
    let mut typed = method
        .typed_fit(model)
        .unwrap_or_else(|| panic!("{what}: no typed state"));
    typed.unpack(&theta, &layout);
    let mut file = model.clone();
    method.unpack(&theta, &mut file);
    layout.hold_fixed(model, &mut file);
    let chunked = Exec {
        chunk_entries: 160,
        ..Exec::sequential()
    };
    for exec in [Exec::sequential(), chunked] {
        let (mut g_typed, mut g_file) = (Vec::new(), Vec::new());
        let v_typed = typed
            .objective_into(data, &exec, &mut g_typed)
            .unwrap_or_else(|e| panic!("{what}: typed: {e}"));
        let v_file = method
            .objective_into(&file, data, &exec, &mut g_file)
            .unwrap_or_else(|e| panic!("{what}: file: {e}"));
        assert_eq!(v_typed.0.to_bits(), v_file.0.to_bits(), "{what}");
        assert_eq!(g_typed.len(), g_file.len(), "{what}");
        assert_eq!(g_typed.len(), theta.len(), "{what}");
        for (i, (a, b)) in g_typed.iter().zip(&g_file).enumerate() {
            assert_eq!(a.to_bits(), b.to_bits(), "{what}: entry {i}: {a} {b}");
        }
    }
}

/// An svgp run of m inducing variables: seed 1, 50 iterations, raw targets.
pub fn svgp_spec(m: usize, options: MethodOptions) -> RunSpec {
    RunSpec {
        method: "svgp".into(),
        m,
        seed: 1,
        iters: 50,
        standardize: false,
        options,
    }
}

/// A random q(v) of m variables: mean of order one, R lower-triangular with a
/// positive diagonal.
pub fn random_q(m: usize, seed: u64) -> sgpw::methods::svgp::elbo::Variational {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mean = nalgebra::DVector::from_fn(m, |_, _| rng.random_range(-1.0..1.0));
    let chol = DMatrix::from_fn(m, m, |i, j| {
        if i == j {
            rng.random_range(0.3..1.0)
        } else if i > j {
            rng.random_range(-0.3..0.3)
        } else {
            0.0
        }
    });
    sgpw::methods::svgp::elbo::Variational { mean, chol }
}

/// The rows `idx` of a training set: a minibatch's inputs and targets.
pub fn rows_block(data: &TrainData, idx: &[usize]) -> (DMatrix<f64>, Vec<f64>) {
    let x = DMatrix::from_fn(idx.len(), data.x.ncols(), |i, d| data.x[(idx[i], d)]);
    (x, idx.iter().map(|&i| data.y[i]).collect())
}

/// `model` written as the pseudo-input method `method` (dtc, vfe, fitc) with its basis as
/// the inducing inputs: what greedy, nystrom-opt and EigenGP's tie once evaluated, and must
/// still evaluate to the bit, though they now hand the core their basis as a typed state.
pub fn as_pseudo_file(model: &ModelFile, method: &str) -> ModelFile {
    let mut p = ModelFile::new(method, model.hyper.clone());
    p.composed.clone_from(&model.composed);
    p.jitter = model.jitter;
    p.noise_floor = model.noise_floor;
    let b = sgpw::methods::eigen::basis_points(model).expect("basis");
    sgpw::methods::pseudo::set_inducing_points(&mut p, &b);
    p
}
