//! Seeing the parts (issue 42): the posterior of each summand of a kernel whose top
//! level is a sum (`sgpw::train::Predictor::components_with`), against dense formulas —
//! the exact GP's K_j(x*, X)(K + σ²I)⁻¹y and k_j − K_j(x*, X)(K + σ²I)⁻¹K_j(X, x*), and
//! an inducing-point method's K_j(x*, Z)Kuu⁻¹μ_u and k_j − K_j(x*, Z)Kuu⁻¹K_j(Z, x*) +
//! K_j(x*, Z)Kuu⁻¹Σ_uKuu⁻¹K_j(Z, x*) from its q(u) = N(μ_u, Σ_u) —; the refusals; and
//! `sgpw predict --components` end to end.

use crate::common::*;
use nalgebra::{DMatrix, DVector};
use rand::SeedableRng;
use sgpw::exec::Par;
use sgpw::kernel::expression::KernelExpr;
use sgpw::kernel::{ComposedKernel, Kernel, Start, build};
use sgpw::model_file::ModelFile;
use sgpw::run_spec::RunSpec;
use sgpw::train::Predictor;

/// Three summands with every value given, so each builds alone to the same kernel.
const SUMMANDS: [&str; 3] = [
    "se(dims=[0], var=1.2, ls=0.8)",
    "se(dims=[0], var=0.5, ls=2) * periodic(dims=[1], var=1, ls=0.7, period=1.5, fix=[var, period])",
    "linear(var=0.3)",
];
const NOISE: f64 = 0.05;

fn kernel(text: &str) -> Box<dyn Kernel> {
    let start = Start {
        columns: vec!["a".into(), "b".into()],
        variance: 1.0,
        lengthscales: vec![1.0; 2],
        periods: vec![1.0; 2],
        mean_squares: vec![1.0; 2],
    };
    build(&KernelExpr::parse(text).expect("parses"), &start).expect("builds")
}

/// A model of `method` with the sum of [`SUMMANDS`], σ² = [`NOISE`], no jitter, and
/// inducing inputs `z` where the method has them.
fn model(method: &str, data: &TrainData, z: Option<&DMatrix<f64>>) -> ModelFile {
    let m = sgpw::methods::get(method).expect("a method");
    let spec = RunSpec {
        method: method.into(),
        m: z.map_or(0, |z| z.nrows()),
        seed: 1,
        iters: 0,
        standardize: false,
        options: Default::default(),
    };
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let mut model = init(m, data, &spec, &mut rng).expect("inits");
    model.composed = ComposedKernel::new(kernel(&SUMMANDS.join(" + ")));
    model.hyper.lengthscales.clear();
    model.hyper.noise_variance = NOISE;
    model.jitter = Some(0.0);
    if let Some(z) = z {
        m.set_inducing_inputs(&mut model, z)
            .expect("has inducing inputs");
    }
    sgpw::methods::method::check_model(m, &model).expect("a valid model");
    model
}

fn inverse(a: &DMatrix<f64>) -> DMatrix<f64> {
    a.clone().cholesky().expect("positive definite").inverse()
}

/// The diagonal of a·b·aᵀ.
fn quad_diag(a: &DMatrix<f64>, b: &DMatrix<f64>) -> Vec<f64> {
    (a * b * a.transpose()).diagonal().as_slice().to_vec()
}

/// Each summand's posterior (mean, variance) at `xs` from q(u) = N(μ_u, Σ_u) over the
/// values at `z` of the summed kernel with Kuu = K(z, z) + `kuu_extra`, dense.
fn from_q(
    z: &DMatrix<f64>,
    kuu: &DMatrix<f64>,
    mu: &DVector<f64>,
    sigma: &DMatrix<f64>,
    xs: &DMatrix<f64>,
) -> Vec<(Vec<f64>, Vec<f64>)> {
    let kuu_inv = inverse(kuu);
    SUMMANDS
        .iter()
        .map(|t| {
            let kj = kernel(t);
            let ksz = kj.matrix(xs, z, Par::Seq);
            let mean = (&ksz * &kuu_inv * mu).as_slice().to_vec();
            let prior = kj.diag(xs);
            let minus = quad_diag(&ksz, &kuu_inv);
            let plus = quad_diag(&ksz, &(&kuu_inv * sigma * &kuu_inv));
            let var = (0..xs.nrows())
                .map(|i| prior[i] - minus[i] + plus[i])
                .collect();
            (mean, var)
        })
        .collect()
}

fn check(what: &str, p: &Predictor, xs: &DMatrix<f64>, want: &[(Vec<f64>, Vec<f64>)], tol: f64) {
    let got = p.components_with(xs, &ex()).expect("splits");
    let labels: Vec<&str> = got.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(labels, ["se1", "se2*periodic", "linear"], "{what}");
    for (c, (mean, var)) in got.iter().zip(want) {
        assert_close(&format!("{what} {} mean", c.label), &c.mean, mean, tol);
        assert_close(&format!("{what} {} var", c.label), &c.var_latent, var, tol);
    }
    // the summands' means add up to the total's
    let total = p.predict(xs).expect("predicts");
    let added: Vec<f64> = (0..xs.nrows())
        .map(|i| got.iter().map(|c| c.mean[i]).sum())
        .collect();
    assert_close(&format!("{what} Σ means"), &added, &total.mean, 1e-9);
}

/// The exact GP's summands are the textbook formulas, and its total variance is the
/// summed kernel's (the prior diagonal is the kernel's, not [hyper]'s σ0²); vfe with
/// Z = X is the exact GP, summands included; fitc's summands follow from its q(u)
/// through the formula above.
#[test]
fn each_summands_posterior_is_the_dense_formula() {
    let data = toy_data(25, 2, 4);
    let xs = DMatrix::from_fn(7, 2, |i, j| -2.2 + 0.7 * i as f64 + 0.3 * j as f64);
    let k = kernel(&SUMMANDS.join(" + "));
    let n = data.y.len();
    let y = DVector::from_column_slice(&data.y);
    let a = k.gram(&data.x, Par::Seq) + DMatrix::identity(n, n) * NOISE;
    let a_inv = inverse(&a);
    // exact: K_j(x*, X) A⁻¹ y and k_j − K_j(x*, X) A⁻¹ K_j(X, x*)
    let exact: Vec<(Vec<f64>, Vec<f64>)> = SUMMANDS
        .iter()
        .map(|t| {
            let kj = kernel(t);
            let ksx = kj.matrix(&xs, &data.x, Par::Seq);
            let mean = (&ksx * &a_inv * &y).as_slice().to_vec();
            let prior = kj.diag(&xs);
            let q = quad_diag(&ksx, &a_inv);
            (mean, (0..xs.nrows()).map(|i| prior[i] - q[i]).collect())
        })
        .collect();
    let train = Some((&data.x, data.y.as_slice()));
    let full = Predictor::new(model("full", &data, None), train).expect("predicts");
    check("full", &full, &xs, &exact, 1e-9);
    let ksx = k.matrix(&xs, &data.x, Par::Seq);
    let prior = k.diag(&xs);
    let total_var: Vec<f64> = quad_diag(&ksx, &a_inv)
        .iter()
        .zip(&prior)
        .map(|(q, p)| p - q)
        .collect();
    let got = full.predict(&xs).expect("predicts");
    assert_close("full's total variance", &got.var_latent, &total_var, 1e-9);

    let vfe = Predictor::new(model("vfe", &data, Some(&data.x)), train).expect("predicts");
    check("vfe with Z = X", &vfe, &xs, &exact, 1e-6);

    // fitc at 6 inducing inputs: q(u) from Λ = diag(Kff − Qff) + σ², Σ = (Kuu +
    // Kuf Λ⁻¹ Kfu)⁻¹, μ_u = Kuu Σ Kuf Λ⁻¹ y, Σ_u = Kuu Σ Kuu
    let z = data.x.rows(0, 6).into_owned();
    let kuu = k.gram(&z, Par::Seq);
    let kuf = k.matrix(&z, &data.x, Par::Seq);
    let kuu_inv = inverse(&kuu);
    let qdiag = quad_diag(&kuf.transpose(), &kuu_inv);
    let kdiag = k.diag(&data.x);
    let lam_inv = DMatrix::from_diagonal(&DVector::from_fn(n, |i, _| {
        1.0 / (kdiag[i] - qdiag[i] + NOISE)
    }));
    let sigma = inverse(&(&kuu + &kuf * &lam_inv * kuf.transpose()));
    let mu = &kuu * &sigma * &kuf * &lam_inv * &y;
    let sigma_u = &kuu * &sigma * &kuu;
    let fitc = Predictor::new(model("fitc", &data, Some(&z)), train).expect("predicts");
    check(
        "fitc",
        &fitc,
        &xs,
        &from_q(&z, &kuu, &mu, &sigma_u, &xs),
        1e-7,
    );

    // svgp at the same Z with a q(v) over the whitened values v = L⁻¹u (L Lᵀ = Kuu) that
    // is not the prior: μ_u = L μ_v, Σ_u = L R Rᵀ Lᵀ
    let mut svgp = model("svgp", &data, Some(&z));
    let m = z.nrows();
    let mean_v: Vec<f64> = (0..m).map(|i| 0.4 * (i as f64) - 0.9).collect();
    let r = DMatrix::from_fn(m, m, |i, j| match i.cmp(&j) {
        std::cmp::Ordering::Less => 0.0,
        std::cmp::Ordering::Equal => 0.3 + 0.1 * i as f64,
        std::cmp::Ordering::Greater => 0.05 * (i + 2 * j) as f64 - 0.2,
    });
    svgp.set(&sgpw::methods::svgp::VariationalTable {
        mean: mean_v.clone(),
        chol: (0..m).map(|i| r.row(i).iter().copied().collect()).collect(),
    });
    let l = kuu
        .clone()
        .cholesky()
        .expect("Kuu is positive definite")
        .l();
    let mu_u = &l * DVector::from_vec(mean_v);
    let sigma_u = &l * &r * r.transpose() * l.transpose();
    let svgp = Predictor::new(svgp, train).expect("predicts");
    check(
        "svgp",
        &svgp,
        &xs,
        &from_q(&z, &kuu, &mu_u, &sigma_u, &xs),
        1e-7,
    );
}

/// A kernel that is not a sum, a plain kernel, and a method whose posterior is not over
/// kernel values are refused with the reason.
#[test]
fn components_are_refused_without_a_sum_or_inducing_values() {
    let data = toy_data(20, 2, 5);
    let train = Some((&data.x, data.y.as_slice()));
    let mut product = model("full", &data, None);
    product.composed = ComposedKernel::new(kernel(SUMMANDS[1]));
    let p = Predictor::new(product, train).expect("predicts");
    let why = p.components_refusal().expect("refused");
    assert!(
        why.contains("is not a sum") && why.contains("* periodic("),
        "{why}"
    );
    assert!(p.components_with(&data.x, &ex()).is_err());
    let spec = |method: &str, m| RunSpec {
        method: method.into(),
        m,
        seed: 1,
        iters: 0,
        standardize: false,
        options: Default::default(),
    };
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let plain = init(
        sgpw::methods::get("full").expect("full"),
        &data,
        &spec("full", 0),
        &mut rng,
    )
    .expect("inits");
    let why = Predictor::new(plain, train)
        .expect("predicts")
        .components_refusal()
        .expect("refused");
    assert!(why.contains("`se` is not a sum"), "{why}");
    let eigen = init(
        sgpw::methods::get("eigengp").expect("eigengp"),
        &data,
        &spec("eigengp", 5),
        &mut rng,
    )
    .expect("inits");
    let why = Predictor::new(eigen, train)
        .expect("predicts")
        .components_refusal()
        .expect("refused");
    assert!(
        why.contains("method 'eigengp' has no posterior over values of the kernel")
            && why.contains(
                "full, fitc, vfe, dtc, pep, spgp-hs, spgp-dr, pca-spgp, fifgp, tfifgp, \
                 smgp, psds, ssgp"
            ),
        "{why}"
    );
}

/// greedy's posterior is DTC's over the values at its basis points, the same as vfe's
/// at inducing inputs Z = the basis (Titsias 2009), so it splits by summand as vfe does:
/// a greedy model fitted through the binary with a sum of two SE summands writes, under
/// `sgpw predict --components`, the same bytes as the vfe model with its basis as Z and
/// its hyperparameters (the file rewritten by hand: method, `[basis]` → `[inducing]`,
/// its `[greedy]` and `[posterior]` tables dropped).
#[test]
fn greedy_splits_by_summand_as_vfe_at_its_basis() {
    use std::process::Command;
    let sgpw = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_sgpw"))
            .args(args)
            .output()
            .expect("runs");
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let dir = tempfile::tempdir().expect("a directory");
    let path = |name: &str| dir.path().join(name).to_str().expect("utf-8").to_string();
    let (csv, greedy, vfe) = (path("data.csv"), path("greedy.toml"), path("vfe.toml"));
    let mut text = String::from("t,y\n");
    for i in 0..60 {
        let t = i as f64 * 0.2;
        text += &format!("{t},{}\n", (0.6 * t).sin() + 0.4 * (4.0 * t).sin());
    }
    std::fs::write(&csv, text).expect("writes");
    sgpw(&[
        "fit",
        "--train",
        &csv,
        "--method",
        "greedy",
        "--m",
        "10",
        "--kernel",
        "se(ls=3) + se(ls=0.3, var=0.2)",
        "--adapt",
        "1",
        "--iters",
        "30",
        "--save-model",
        &greedy,
    ]);
    let predict = |model: &str| {
        sgpw(&[
            "predict",
            "--model",
            model,
            "--train",
            &csv,
            "--input",
            &csv,
            "--components",
        ])
    };
    let split = predict(&greedy);
    assert!(
        split.starts_with(
            "mean,var_latent,var_noisy,mean_se1,var_latent_se1,mean_se2,var_latent_se2\n"
        ),
        "{split}"
    );
    // the vfe model at the same basis and hyperparameters
    let file = std::fs::read_to_string(&greedy).expect("reads");
    let mut kept = Vec::new();
    let mut skipping = false;
    for line in file.lines() {
        if line.starts_with('[') {
            skipping = line == "[greedy]" || line == "[posterior]";
        }
        if !skipping {
            kept.push(match line {
                "method = \"greedy\"" => "method = \"vfe\"",
                "[basis]" => "[inducing]",
                other => other,
            });
        }
    }
    std::fs::write(&vfe, kept.join("\n") + "\n").expect("writes");
    assert_eq!(split, predict(&vfe));
}

/// `sgpw predict --components` (the binary): a standardised full GP fitted with a sum
/// writes each summand's mean and variance after the usual columns, the means adding up
/// to the total mean minus the target mean (which only the total carries); a model
/// without a sum is refused naming --components and the model file.
#[test]
fn predict_writes_the_components_in_data_units() {
    use std::process::Command;
    let sgpw = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_sgpw"))
            .args(args)
            .output()
            .expect("runs");
        (
            o.status.success(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let dir = tempfile::tempdir().expect("a directory");
    let csv = dir.path().join("data.csv");
    let mut text = String::from("t,y\n");
    for i in 0..40 {
        let t = i as f64 * 0.25;
        text += &format!(
            "{t},{}\n",
            100.0 + 3.0 * t + 2.0 * (std::f64::consts::TAU * t).sin()
        );
    }
    std::fs::write(&csv, text).expect("writes");
    let (csv, m) = (
        csv.to_str().expect("utf-8"),
        dir.path()
            .join("m.toml")
            .to_str()
            .expect("utf-8")
            .to_string(),
    );
    let (ok, _, err) = sgpw(&[
        "fit",
        "--train",
        csv,
        "--method",
        "full",
        "--iters",
        "20",
        "--kernel",
        "linear + se * periodic(period=1)",
        "--save-model",
        &m,
    ]);
    assert!(ok, "{err}");
    let (ok, out, err) = sgpw(&[
        "predict",
        "--model",
        &m,
        "--train",
        csv,
        "--input",
        csv,
        "--components",
    ]);
    assert!(ok, "{err}");
    let mut lines = out.lines();
    assert_eq!(
        lines.next(),
        Some(
            "mean,var_latent,var_noisy,mean_linear,var_latent_linear,mean_se*periodic,var_latent_se*periodic"
        )
    );
    let model: toml::Value =
        toml::from_str(&std::fs::read_to_string(&m).expect("reads")).expect("toml");
    let target_mean = model["target_mean"].as_float().expect("a target mean");
    assert!(target_mean > 100.0, "{target_mean}");
    let mut rows = 0;
    for line in lines {
        let v: Vec<f64> = line
            .split(',')
            .map(|c| c.parse().expect("a number"))
            .collect();
        assert_eq!(v.len(), 7, "{line}");
        let added = target_mean + v[3] + v[5];
        assert!((added - v[0]).abs() < 1e-8 * v[0].abs(), "{line}");
        assert!(v[4] >= 0.0 && v[6] >= 0.0, "{line}");
        rows += 1;
    }
    assert_eq!(rows, 40);
    let plain = dir.path().join("p.toml");
    let plain = plain.to_str().expect("utf-8");
    let (ok, _, err) = sgpw(&[
        "fit",
        "--train",
        csv,
        "--method",
        "full",
        "--iters",
        "5",
        "--save-model",
        plain,
    ]);
    assert!(ok, "{err}");
    let (ok, _, err) = sgpw(&[
        "predict",
        "--model",
        plain,
        "--train",
        csv,
        "--input",
        csv,
        "--components",
    ]);
    assert!(!ok);
    assert!(
        err.contains("--components: the model's kernel `se` is not a sum")
            && err.contains("p.toml"),
        "{err}"
    );
}

/// The prediction pane's top and bottom border rows (its title and legend) drawn at
/// `w`×`h`.
fn pane_edges(app: &sgpw::tui::state::App, w: u16, h: u16) -> (String, String) {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    let mut t = Terminal::new(TestBackend::new(w, h)).expect("a terminal");
    t.draw(|f| sgpw::tui::view::draw(f, app)).expect("draws");
    let b = t.backend().buffer().clone();
    let rows: Vec<String> = b
        .content
        .chunks(w as usize)
        .map(|row| row.iter().map(|c| c.symbol()).collect())
        .collect();
    let top = rows
        .iter()
        .position(|l| l.contains(" Prediction") && !l.contains("1 Evidence"))
        .unwrap_or_else(|| panic!("no prediction pane:\n{}", rows.join("\n")));
    let bottom = rows[top + 1..]
        .iter()
        .position(|l| l.contains("f ±2σ"))
        .map(|i| rows[top + 1 + i].clone())
        .unwrap_or_default();
    (rows[top].clone(), bottom)
}

/// The app's prediction pane: `p` steps from the total through each summand and back,
/// the title saying which and the y axis naming the summand; a run whose kernel is not
/// a sum says why it has none. (The demo session's data are not loaded here, so the
/// pane's curves are set by hand after each key, as the runtime would hand them back.)
#[test]
fn the_apps_p_key_cycles_through_the_total_and_its_summands() {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use sgpw::chart::components::ComponentCurve;
    use sgpw::chart::prediction::Curves;
    use sgpw::tui::state::{App, Event, PredState, PredWant};
    use std::sync::Arc;
    let session = sgpw::session::Session::read(&repo("sessions/demo.toml")).expect("reads");
    let theme = sgpw::tui::theme::Theme {
        color: false,
        ascii: false,
    };
    let (mut app, _) = App::new(repo("sessions/demo.toml"), session, theme);
    let grid: Vec<f64> = (0..50).map(|i| i as f64 / 49.0).collect();
    let part = |label: &str, level: f64| ComponentCurve {
        label: label.into(),
        mean: grid.iter().map(|x| level + x).collect(),
        sd_latent: vec![0.1; grid.len()],
    };
    let curves = |components| Curves {
        input: 0,
        input_name: "t".into(),
        target_name: "co2".into(),
        dim: 1,
        grid: grid.clone(),
        mean: grid.iter().map(|x| 300.0 + x).collect(),
        sd_latent: vec![0.1; grid.len()],
        sd_noisy: vec![0.2; grid.len()],
        train: vec![(0.5, 300.5)],
        test: Vec::new(),
        rows: 1,
        markers: Vec::new(),
        marker_sizes: Vec::new(),
        marker_caption: String::new(),
        negative: 0,
        components,
        observed: None,
        map: None,
    };
    let want = PredWant {
        key: app.runs[0].key.clone(),
        input: 0,
        generation: 0,
    };
    let with_parts = Arc::new(curves(Ok(vec![
        part("se1", -20.0),
        part("se2*periodic", 3.0),
    ])));
    let p = Event::Key(KeyEvent::new(KeyCode::Char('p'), KeyModifiers::NONE));
    let title = |app: &mut App, c: &Arc<Curves>| {
        app.prediction = PredState::Ready(want.clone(), c.clone());
        let mut t = Terminal::new(TestBackend::new(160, 48)).expect("a terminal");
        t.draw(|f| sgpw::tui::view::draw(f, app)).expect("draws");
        let b = t.backend().buffer().clone();
        let w = b.area.width as usize;
        b.content
            .chunks(w)
            .map(|row| row.iter().map(|c| c.symbol()).collect::<String>())
            .find(|l| l.contains("Prediction") && !l.contains("1 Evidence"))
            .unwrap_or_default()
    };
    let press = |app: &mut App, c: &Arc<Curves>| {
        app.prediction = PredState::Ready(want.clone(), c.clone());
        app.update(p.clone());
    };
    app.chart = sgpw::tui::state::ChartTab::Prediction;
    let t = title(&mut app, &with_parts);
    assert!(t.contains("total (p: summands)"), "{t}");
    press(&mut app, &with_parts);
    let t = title(&mut app, &with_parts);
    assert!(t.contains("summand 1/2") && t.contains("co2: se1"), "{t}");
    // at 80 columns the summand is still named (it leads the title), and the legend
    // lists only what a summand draws: its band and mean, no noise band, no points
    let (top, bottom) = pane_edges(&app, 80, 24);
    assert!(top.contains("Prediction, summand 1/2: "), "{top}");
    assert!(
        bottom.contains("f ±2σ") && bottom.contains("mean"),
        "{bottom}"
    );
    assert!(
        !bottom.contains("train") && !bottom.contains("test") && !bottom.contains("y ±2σ"),
        "{bottom}"
    );
    // P writes the summand on screen, not the total
    let svg = app.figure_svg().expect("a figure");
    assert!(
        svg.contains("Prediction, summand 1/2: ") && svg.contains("co2: se1"),
        "{svg}"
    );
    press(&mut app, &with_parts);
    let t = title(&mut app, &with_parts);
    assert!(
        t.contains("summand 2/2") && t.contains("co2: se2*periodic"),
        "{t}"
    );
    press(&mut app, &with_parts);
    let t = title(&mut app, &with_parts);
    assert!(t.contains("total (p: summands)"), "{t}");
    let (_, bottom) = pane_edges(&app, 80, 24);
    assert!(
        bottom.contains("train") && bottom.contains("y ±2σ"),
        "{bottom}"
    );
    let svg = app.figure_svg().expect("a figure");
    assert!(
        !svg.contains("summand") && !svg.contains("co2: se1"),
        "{svg}"
    );
    let plain = Arc::new(curves(Err("the model's kernel `se` is not a sum".into())));
    press(&mut app, &plain);
    assert_eq!(app.pred_component, 0);
    assert!(
        app.message
            .contains("no summands to show: the model's kernel `se` is not a sum"),
        "{}",
        app.message
    );
}
