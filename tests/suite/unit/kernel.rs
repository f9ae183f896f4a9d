//! Every part of a composed kernel, alone, on some inputs and nested in sums, products
//! and change points, against finite differences: the parameters (in the optimiser's
//! coordinates), both sets of points, the diagonal and the log prior variance.

mod ard;
mod build;
mod choice;
mod composed;
mod expression;
mod start;
mod summands;
mod units;

use nalgebra::DMatrix;
use sgpw::exec::Par;
use sgpw::kernel::*;

fn points(n: usize, d: usize, phase: f64) -> DMatrix<f64> {
    DMatrix::from_fn(n, d, |i, c| {
        ((i * 3 + c * 5) as f64 * 0.61 + phase).sin() * 1.3 + 0.2 * c as f64
    })
}

fn boxed<K: Kernel + 'static>(k: K) -> Box<dyn Kernel> {
    Box::new(k)
}

fn se(d: usize, var: f64) -> Box<dyn Kernel> {
    boxed(Ard::se(var, (0..d).map(|i| 0.8 + 0.3 * i as f64).collect()))
}

fn periodic(kind: KernelKind, d: usize) -> Box<dyn Kernel> {
    boxed(Part(Periodic::new(
        kind,
        1.4,
        (0..d).map(|i| 0.7 + 0.2 * i as f64).collect(),
        (0..d).map(|i| 1.9 + 0.4 * i as f64).collect(),
        1.7,
    )))
}

/// Every kind of part and composition on `d` inputs.
fn kernels(d: usize) -> Vec<(String, Box<dyn Kernel>)> {
    let mut out: Vec<(String, Box<dyn Kernel>)> = Vec::new();
    for kind in [
        KernelKind::Se,
        KernelKind::Matern32,
        KernelKind::Matern52,
        KernelKind::Rq,
        KernelKind::Matern12,
    ] {
        out.push((format!("periodic({kind})"), periodic(kind, d)));
    }
    let vars: Vec<f64> = (0..d).map(|i| 0.5 + 0.25 * i as f64).collect();
    out.push(("linear".into(), boxed(Part(Linear::new(vars.clone())))));
    out.push((
        "polynomial".into(),
        boxed(Part(Polynomial::new(vars.clone(), 0.6, 3))),
    ));
    out.push(("constant".into(), boxed(Part(Constant::new(d, 0.9)))));
    out.push(("white".into(), boxed(Part(White::new(d, 0.3)))));
    let q = 2;
    let means: Vec<f64> = (0..q * d).map(|i| 0.3 + 0.15 * i as f64).collect();
    let scales: Vec<f64> = (0..q * d).map(|i| 0.2 + 0.05 * i as f64).collect();
    out.push((
        "spectral_mixture".into(),
        boxed(Part(SpectralMixture::new(d, vec![0.7, 1.2], means, scales))),
    ));
    out.push((
        "se + periodic".into(),
        boxed(Sum::new(vec![se(d, 2.0), periodic(KernelKind::Se, d)])),
    ));
    out.push((
        "matern52 + linear".into(),
        boxed(Sum::new(vec![
            boxed(Ard::new(KernelKind::Matern52, 1.2, vec![1.1; d], 1.0)),
            boxed(Part(Linear::new(vars.clone()))),
        ])),
    ));
    out.push((
        "se * periodic + linear".into(),
        boxed(Sum::new(vec![
            boxed(Product::new(vec![
                se(d, 1.5),
                periodic(KernelKind::Matern52, d),
            ])),
            boxed(Part(Linear::new(vars.clone()))),
        ])),
    ));
    out.push((
        "(se + constant) * (rq + white)".into(),
        boxed(Product::new(vec![
            boxed(Sum::new(vec![
                se(d, 1.1),
                boxed(Part(Constant::new(d, 0.4))),
            ])),
            boxed(Sum::new(vec![
                boxed(Ard::new(KernelKind::Rq, 0.8, vec![1.2; d], 2.2)),
                boxed(Part(White::new(d, 0.2))),
            ])),
        ])),
    ));
    out.push((
        "changepoints(se, se * periodic, linear)".into(),
        boxed(ChangePoints::new(
            vec![
                se(d, 1.0),
                boxed(Product::new(vec![se(d, 0.7), periodic(KernelKind::Se, d)])),
                boxed(Part(Linear::new(vars.clone()))),
            ],
            vec![-0.4, 0.5],
            vec![2.0, 3.5],
            d - 1,
        )),
    ));
    // the same kind written as an expression: the builder's labels, defaults and
    // fixed steepness
    let start = Start {
        columns: (0..d).map(|i| format!("x{i}")).collect(),
        variance: 1.5,
        lengthscales: vec![0.9; d],
        periods: vec![1.7; d],
        mean_squares: vec![1.0; d],
    };
    for text in [
        "changepoints(se, matern32 * periodic, white + linear, locations=[-0.3, 0.6], \
         steepness=[1.5, 2.5], \
         fix=steepness, dims=[x0])",
        "se * changepoints(rq, linear + se, locations=0.1, dims=[x0])",
    ] {
        let expr = sgpw::kernel::expression::KernelExpr::parse(text).expect("parses");
        out.push((text.into(), build(&expr, &start).expect("builds")));
    }
    if d > 1 {
        out.push((
            "matern32(dims=[0]) * se(dims=[1..])".into(),
            boxed(Product::new(vec![
                boxed(Active::new(
                    vec![0],
                    d,
                    boxed(Ard::new(KernelKind::Matern32, 1.3, vec![0.9], 1.0)),
                )),
                boxed(Active::new((1..d).collect(), d, se(d - 1, 1.0))),
            ])),
        ));
        out.push((
            "periodic(dims=[1]) + linear(dims=[0])".into(),
            boxed(Sum::new(vec![
                boxed(Active::new(vec![1], d, periodic(KernelKind::Se, 1))),
                boxed(Active::new(vec![0], d, boxed(Part(Linear::new(vec![0.8]))))),
            ])),
        ));
    }
    out
}

fn close(an: f64, fd: f64) -> bool {
    (an - fd).abs() <= 2e-6 * (1.0 + fd.abs())
}

/// The finite-difference checks of one kernel.
fn check(name: &str, kern: &dyn Kernel, d: usize) {
    let (a, b) = (points(5, d, 0.1), points(4, d, 1.7));
    let adj = DMatrix::from_fn(5, 4, |i, j| ((i + 2 * j) as f64 * 0.7).cos());
    let f = |k: &dyn Kernel, a: &DMatrix<f64>, b: &DMatrix<f64>| {
        k.matrix(a, b, Par::Seq).component_mul(&adj).sum()
    };
    let k = kern.matrix(&a, &b, Par::Seq);
    let g = kern.grad(&a, &b, &k, &adj, true, true, Par::Seq);
    let theta = kern.log_params();
    assert_eq!(theta.len(), kern.params_len(), "{name}");
    assert_eq!(
        kern.blocks().iter().map(|b| b.values.len()).sum::<usize>(),
        kern.params_len(),
        "{name}"
    );
    assert_eq!(g.params.len(), kern.params_len(), "{name}");
    let h = 1e-6;
    let shifted = |i: usize, by: f64| {
        let mut t = theta.clone();
        t[i] += by;
        let mut k = kern.clone_box();
        k.set_log_params(&t);
        k
    };
    for i in 0..theta.len() {
        let fd = (f(&*shifted(i, h), &a, &b) - f(&*shifted(i, -h), &a, &b)) / (2.0 * h);
        assert!(
            close(g.params[i], fd),
            "{name}: parameter {i}: {} vs {fd}",
            g.params[i]
        );
    }
    for (which, pts, grad) in [("a", &a, g.a.as_ref()), ("b", &b, g.b.as_ref())] {
        let grad = grad.expect("asked");
        for i in 0..pts.nrows() {
            for c in 0..d {
                let moved = |by: f64| {
                    let mut p = pts.clone();
                    p[(i, c)] += by;
                    p
                };
                let fd = if which == "a" {
                    (f(kern, &moved(h), &b) - f(kern, &moved(-h), &b)) / (2.0 * h)
                } else {
                    (f(kern, &a, &moved(h)) - f(kern, &a, &moved(-h))) / (2.0 * h)
                };
                assert!(
                    close(grad[(i, c)], fd),
                    "{name}: {which}[{i},{c}]: {} vs {fd}",
                    grad[(i, c)]
                );
            }
        }
    }
    // the diagonal is K(A, A)'s, and its gradient
    let full = kern.matrix(&a, &a, Par::Seq);
    let diag = kern.diag(&a);
    for (i, v) in diag.iter().enumerate() {
        assert!(
            (full[(i, i)] - v).abs() <= 1e-12 * (1.0 + v.abs()),
            "{name}: diag {i}"
        );
    }
    let w: Vec<f64> = (0..5).map(|i| (i as f64 * 1.3).sin()).collect();
    let fdiag = |k: &dyn Kernel| k.diag(&a).iter().zip(&w).map(|(v, w)| v * w).sum::<f64>();
    let mut gd = vec![0.0; theta.len()];
    kern.diag_grad(&a, &w, &mut gd);
    for (i, g) in gd.iter().enumerate() {
        let fd = (fdiag(&*shifted(i, h)) - fdiag(&*shifted(i, -h))) / (2.0 * h);
        assert!(close(*g, fd), "{name}: diag parameter {i}: {g} vs {fd}");
    }
    // the log prior variance's gradient, where there is one
    assert_eq!(
        kern.prior_variance().is_some(),
        kern.is_stationary(),
        "{name}"
    );
    if let Some(v) = kern.prior_variance() {
        assert!((v - diag[0]).abs() <= 1e-12 * v, "{name}: prior variance");
        let mut gv = vec![0.0; theta.len()];
        kern.log_prior_variance_grad(0.7, &mut gv);
        let lv = |k: &dyn Kernel| k.prior_variance().expect("stationary").ln();
        for (i, g) in gv.iter().enumerate() {
            let fd = 0.7 * (lv(&*shifted(i, h)) - lv(&*shifted(i, -h))) / (2.0 * h);
            assert!(close(*g, fd), "{name}: log prior variance {i}: {g} vs {fd}");
        }
    }
}

#[test]
fn every_part_and_composition_matches_finite_differences() {
    for d in [1, 3] {
        for (name, k) in kernels(d) {
            assert_eq!(k.dim(), d, "{name}");
            check(&format!("{name} on {d} inputs"), &*k, d);
        }
    }
}

/// The parts' formulas at one pair of points, written out.
#[test]
fn parts_have_their_formulas() {
    let (x, y) = (
        DMatrix::from_row_slice(1, 2, &[0.3, -1.1]),
        DMatrix::from_row_slice(1, 2, &[1.4, 0.2]),
    );
    let at = |k: &dyn Kernel| k.matrix(&x, &y, Par::Seq)[(0, 0)];
    let (t0, t1) = (0.3 - 1.4, -1.1 - 0.2);
    let pi = std::f64::consts::PI;
    let p = Part(Periodic::new(
        KernelKind::Se,
        2.0,
        vec![0.5, 0.8],
        vec![1.5, 2.5],
        1.0,
    ));
    let r2 = ((pi * t0 / 1.5).sin() / 0.5).powi(2) + ((pi * t1 / 2.5).sin() / 0.8).powi(2);
    assert!((at(&p) - 2.0 * (-0.5 * r2).exp()).abs() < 1e-15);
    let l = Part(Linear::new(vec![0.5, 2.0]));
    assert!((at(&l) - (0.5 * 0.3 * 1.4 + 2.0 * -1.1 * 0.2)).abs() < 1e-15);
    let poly = Part(Polynomial::new(vec![0.5, 2.0], 0.7, 2));
    assert!((at(&poly) - (0.5 * 0.3 * 1.4 + 2.0 * -1.1 * 0.2 + 0.7f64).powi(2)).abs() < 1e-15);
    assert_eq!(at(&Part(Constant::new(2, 0.9))), 0.9);
    assert_eq!(at(&Part(White::new(2, 0.9))), 0.0);
    assert_eq!(
        Part(White::new(2, 0.9)).matrix(&x, &x, Par::Seq)[(0, 0)],
        0.9
    );
    let sm = Part(SpectralMixture::new(
        2,
        vec![1.5],
        vec![0.3, 0.6],
        vec![0.2, 0.1],
    ));
    let want = 1.5
        * (-2.0 * pi * pi * (t0 * t0 * 0.04 + t1 * t1 * 0.01)).exp()
        * (2.0 * pi * t0 * 0.3).cos()
        * (2.0 * pi * t1 * 0.6).cos();
    assert!((at(&sm) - want).abs() < 1e-15);
    // a fixed block is no parameter, and keeps its value
    let mut fixed = Periodic::new(KernelKind::Se, 2.0, vec![0.5], vec![1.5], 1.0);
    fixed.params.find_mut("period").expect("a period").fixed = true;
    let mut k = Part(fixed);
    assert_eq!(k.params_len(), 2);
    let names: Vec<String> = k.blocks().into_iter().map(|b| b.name).collect();
    assert_eq!(names, ["periodic.var", "periodic.ls"]);
    k.set_log_params(&[0.0, 0.0]);
    assert_eq!(k.0.params.get(2), [1.5]);
}

/// A sum of one SE kernel is that kernel; a product with a unit constant too.
#[test]
fn a_sum_and_a_product_of_one_are_their_part() {
    let (a, b) = (points(6, 2, 0.4), points(3, 2, 2.0));
    let k = se(2, 1.7);
    let want = k.matrix(&a, &b, Par::Seq);
    let sum = Sum::new(vec![se(2, 1.7)]);
    assert_eq!(sum.matrix(&a, &b, Par::Seq), want);
    let prod = Product::new(vec![se(2, 1.7), boxed(Part(Constant::new(2, 1.0)))]);
    assert_eq!(prod.matrix(&a, &b, Par::Seq), want);
}

/// The kernel of a case of benches/gpflow_kernel_parts.py, built as GPflow builds it.
fn gpflow_case(name: &str) -> Box<dyn Kernel> {
    let periodic_of = |kind, var, ls: Vec<f64>, period: Vec<f64>, alpha| {
        boxed(Part(Periodic::new(kind, var, ls, period, alpha)))
    };
    let ard = |kind, var, ls: Vec<f64>, alpha| boxed(Ard::new(kind, var, ls, alpha));
    let linear = |v: Vec<f64>| boxed(Part(Linear::new(v)));
    match name {
        "periodic_se" => periodic_of(
            KernelKind::Se,
            1.4,
            vec![0.7, 0.9, 1.1],
            vec![1.9, 2.3, 2.7],
            1.0,
        ),
        "periodic_matern52" => periodic_of(KernelKind::Matern52, 0.8, vec![0.6], vec![1.3], 1.0),
        "periodic_rq" => periodic_of(KernelKind::Rq, 1.1, vec![0.9], vec![0.7], 2.5),
        "linear" => linear(vec![0.5, 0.75, 1.0]),
        "polynomial" => boxed(Part(Polynomial::new(vec![0.5, 0.75, 1.0], 0.6, 3))),
        "constant" => boxed(Part(Constant::new(3, 0.9))),
        "se_plus_periodic_times_se" => boxed(Sum::new(vec![
            se1(2.0, 1.5),
            boxed(Product::new(vec![
                periodic_of(KernelKind::Se, 1.0, vec![0.8], vec![1.1], 1.0),
                se1(0.7, 2.5),
            ])),
        ])),
        "linear_plus_matern52" => boxed(Sum::new(vec![
            linear(vec![0.5, 0.75, 1.0]),
            ard(KernelKind::Matern52, 1.3, vec![0.8, 1.1, 1.4], 1.0),
        ])),
        "matern32_dims01_times_se_dim2" => boxed(Product::new(vec![
            boxed(Active::new(
                vec![0, 1],
                3,
                ard(KernelKind::Matern32, 1.2, vec![0.9, 1.3], 1.0),
            )),
            boxed(Active::new(vec![2], 3, se1(0.8, 0.7))),
        ])),
        "rq_plus_constant" => boxed(Sum::new(vec![
            ard(KernelKind::Rq, 0.9, vec![0.8, 1.0, 1.2], 1.7),
            boxed(Part(Constant::new(3, 0.4))),
        ])),
        "changepoints_se_se" => boxed(ChangePoints::new(
            vec![se1(1.0, 0.5), se1(2.0, 1.5)],
            vec![0.1],
            vec![4.0],
            0,
        )),
        "changepoints_three" => boxed(ChangePoints::new(
            vec![
                se1(1.0, 0.5),
                ard(KernelKind::Matern32, 2.0, vec![1.5], 1.0),
                linear(vec![0.8]),
            ],
            vec![-0.4, 0.5],
            vec![2.0, 3.5],
            0,
        )),
        other => panic!("no kernel for the fixture's case {other}"),
    }
}

fn se1(var: f64, ls: f64) -> Box<dyn Kernel> {
    boxed(Ard::se(var, vec![ls]))
}

/// K(X, X2) and diag K(X) equal GPflow 2.9.2's for every case of the fixture.
#[test]
fn composed_kernels_equal_gpflows() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/gpflow_kernel_parts.json"
    );
    let fixture: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("the fixture")).expect("json");
    let rows = |v: &serde_json::Value| -> DMatrix<f64> {
        let r: Vec<Vec<f64>> = serde_json::from_value(v.clone()).expect("rows");
        DMatrix::from_fn(r.len(), r[0].len(), |i, j| r[i][j])
    };
    let cases = fixture["cases"].as_array().expect("cases");
    assert_eq!(cases.len(), 12);
    for case in cases {
        let name = case["name"].as_str().expect("a name");
        let kern = gpflow_case(name);
        let (x, x2, want) = (rows(&case["x"]), rows(&case["x2"]), rows(&case["k"]));
        let got = kern.matrix(&x, &x2, Par::Seq);
        let diag: Vec<f64> = serde_json::from_value(case["diag"].clone()).expect("diag");
        for (g, w) in got
            .iter()
            .zip(want.iter())
            .chain(kern.diag(&x).iter().zip(&diag))
        {
            assert!(
                (g - w).abs() <= 1e-12 * (1.0 + w.abs()),
                "{name}: {g} vs GPflow's {w}"
            );
        }
    }
}

/// scikit-learn's Mauna Loa kernel at its θ (log-parameters in its order): long-term
/// SE, SE × ExpSineSquared (periodicity fixed at 1; sklearn's ℓ_s is 2ℓ here, its
/// variance the SE factor's), rq, short SE; the WhiteKernel's level is returned
/// separately (it is noise: added to K(X, X)'s diagonal only).
fn sklearn_co2_kernel(theta: &[f64]) -> (Box<dyn Kernel>, f64) {
    let e: Vec<f64> = theta.iter().map(|t| t.exp()).collect();
    let mut seasonal = Periodic::new(KernelKind::Se, 1.0, vec![e[4] / 2.0], vec![1.0], 1.0);
    for name in ["var", "period"] {
        seasonal.params.find_mut(name).expect("a block").fixed = true;
    }
    let kern = Sum::new(vec![
        se1(e[0], e[1]),
        boxed(Product::new(vec![se1(e[2], e[3]), boxed(Part(seasonal))])),
        boxed(Ard::new(KernelKind::Rq, e[5], vec![e[7]], e[6])),
        se1(e[8], e[9]),
    ]);
    (boxed(kern), e[10])
}

/// The exact GP's log marginal likelihood with `noise` on the diagonal.
fn exact_lml(kern: &dyn Kernel, x: &DMatrix<f64>, y: &[f64], noise: f64) -> f64 {
    let n = y.len();
    let mut k = kern.gram(x, Par::Seq);
    for i in 0..n {
        k[(i, i)] += noise;
    }
    let chol = k.cholesky().expect("positive definite");
    let yv = nalgebra::DVector::from_column_slice(y);
    let alpha = chol.solve(&yv);
    let log_det: f64 = chol.l().diagonal().iter().map(|v| v.ln()).sum::<f64>() * 2.0;
    -0.5 * yv.dot(&alpha) - 0.5 * log_det - 0.5 * n as f64 * (2.0 * std::f64::consts::PI).ln()
}

/// The co2 series (datasets/co2), y centred as scikit-learn's example centres it.
pub(crate) fn co2() -> (DMatrix<f64>, Vec<f64>) {
    use std::io::Read;
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/datasets/co2/data.csv.gz");
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).expect("the co2 data"))
        .read_to_string(&mut text)
        .expect("gzip");
    let rows: Vec<(f64, f64)> = text
        .lines()
        .skip(1)
        .map(|l| {
            let (a, b) = l.split_once(',').expect("two columns");
            (a.parse().expect("a year"), b.parse().expect("a level"))
        })
        .collect();
    let mean = rows.iter().map(|r| r.1).sum::<f64>() / rows.len() as f64;
    let x = DMatrix::from_fn(rows.len(), 1, |i, _| rows[i].0);
    (x, rows.iter().map(|r| r.1 - mean).collect())
}

/// scikit-learn's Mauna Loa example (tests/fixtures/sklearn_co2.json): its log marginal
/// likelihood at the starting and the fitted θ, with its alpha = 1e-10.
#[test]
fn the_mauna_loa_kernel_gives_sklearns_log_marginal_likelihood() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/sklearn_co2.json"
    );
    let fixture: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("the fixture")).expect("json");
    let (x, y) = co2();
    assert_eq!(y.len(), fixture["n"].as_u64().expect("n") as usize);
    for at in ["start", "fitted"] {
        let theta: Vec<f64> = serde_json::from_value(fixture[at]["theta"].clone()).expect("theta");
        let want = fixture[at]["lml"].as_f64().expect("lml");
        let (kern, white) = sklearn_co2_kernel(&theta);
        let got = exact_lml(&*kern, &x, &y, white + 1e-10);
        assert!(
            (got - want).abs() <= 1e-9 * want.abs(),
            "{at}: {got} vs scikit-learn's {want}"
        );
    }
}

/// scikit-learn's fitted Mauna Loa kernel written as an expression builds the kernel
/// that gives its log marginal likelihood.
#[test]
fn the_mauna_loa_expression_builds_sklearns_kernel() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/sklearn_co2.json"
    );
    let fixture: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("the fixture")).expect("json");
    let theta: Vec<f64> =
        serde_json::from_value(fixture["fitted"]["theta"].clone()).expect("theta");
    let e: Vec<f64> = theta.iter().map(|t| t.exp()).collect();
    let text = format!(
        "se(var={}, ls={}) + se(var={}, ls={}) * periodic(ls={}, period=1, fix=period) \
         + rq(var={}, ls={}, alpha={}) + se(var={}, ls={})",
        e[0],
        e[1],
        e[2],
        e[3],
        e[4] / 2.0,
        e[5],
        e[7],
        e[6],
        e[8],
        e[9]
    );
    let (x, y) = co2();
    let start = Start {
        columns: vec!["year".into()],
        variance: 1.0,
        lengthscales: vec![1.0],
        periods: vec![1.0],
        mean_squares: vec![1.0],
    };
    let kern = build(
        &sgpw::kernel::expression::KernelExpr::parse(&text).expect("parses"),
        &start,
    )
    .expect("builds");
    let got = exact_lml(&*kern, &x, &y, e[10] + 1e-10);
    let want = fixture["fitted"]["lml"].as_f64().expect("lml");
    assert!(
        (got - want).abs() <= 1e-9 * want.abs(),
        "{got} vs scikit-learn's {want}"
    );
}

/// Periodic's fill and contraction by the points' angles (`periodic/angles.rs`) against
/// its formula entry by entry (`Form::value`, `Form::add_grad`, the form every part had
/// before): every base, one input, three and more than the stack holds, rows that are
/// no whole number of SIMD blocks, several stripes of columns, and points far from the
/// origin (years, as the co2 series has them). Values and gradients to 1e-12 relative
/// (a gradient's entries against the gradient's largest).
#[test]
fn periodic_by_angles_is_its_formula_entry_by_entry() {
    let mut worst: f64 = 0.0;
    for (d, offset, period) in [(1, 1958.0, 1.0), (3, 0.0, 1.7), (17, 40.0, 2.3)] {
        for kind in [
            KernelKind::Se,
            KernelKind::Matern12,
            KernelKind::Matern32,
            KernelKind::Matern52,
            KernelKind::Rq,
        ] {
            let form = Periodic::new(
                kind,
                1.3,
                (0..d).map(|i| 0.6 + 0.1 * i as f64).collect(),
                (0..d).map(|i| period + 0.3 * i as f64).collect(),
                1.8,
            );
            let (na, nb) = (13, 150);
            let a = points(na, d, 0.3).add_scalar(offset);
            let b = points(nb, d, 2.1).map(|v| v * 3.0 + offset);
            let adj = DMatrix::from_fn(na, nb, |i, j| ((i * 7 + j) as f64 * 0.37).sin());
            let row = |m: &DMatrix<f64>, i: usize| m.row(i).iter().copied().collect::<Vec<_>>();
            let part = Part(form.clone());
            let k = part.matrix(&a, &b, Par::Seq);
            let mut full = vec![0.0; form.params().total()];
            let (mut ga, mut gb) = (DMatrix::zeros(na, d), DMatrix::zeros(nb, d));
            for i in 0..na {
                for j in 0..nb {
                    let (x, y) = (row(&a, i), row(&b, j));
                    let want = form.value(&x, &y);
                    let err = (k[(i, j)] - want).abs() / want.abs().max(1e-300);
                    worst = worst.max(err);
                    assert!(
                        err <= 1e-12,
                        "{kind} on {d}: K[{i},{j}] {} vs {want}",
                        k[(i, j)]
                    );
                    let (mut gx, mut gy) = (vec![0.0; d], vec![0.0; d]);
                    form.add_grad(&x, &y, adj[(i, j)], &mut full, &mut gx, &mut gy);
                    for c in 0..d {
                        ga[(i, c)] += gx[c];
                        gb[(j, c)] += gy[c];
                    }
                }
            }
            let g = part.grad(&a, &b, &k, &adj, true, true, Par::Threads(0));
            let close = |got: &[f64], want: &[f64], what: &str| {
                let scale = want.iter().fold(0.0f64, |s, v| s.max(v.abs()));
                for (i, (x, y)) in got.iter().zip(want).enumerate() {
                    assert!(
                        (x - y).abs() <= 1e-12 * scale,
                        "{kind} on {d}: {what} {i}: {x} vs {y}"
                    );
                }
            };
            close(&g.params, &full, "parameter");
            close(g.a.expect("asked").as_slice(), ga.as_slice(), "a");
            close(g.b.expect("asked").as_slice(), gb.as_slice(), "b");
        }
    }
    eprintln!("periodic by angles: largest relative difference of an entry {worst:e}");
}

/// `linear`, `polynomial` and `constant` by matrix products (`linear::scaled_products`,
/// `linear::contract_products`; constant's fill and sum) against their formulas entry
/// by entry (`Form::value`, `Form::add_grad`, the form they had before), alone and on a
/// subset of the inputs (`dims`), with each choice of the points' gradients wanted, at
/// points off the origin with both signs, rows and columns that are no whole number of
/// SIMD blocks. Values and gradients to 1e-12 of their largest.
#[test]
fn dot_product_parts_by_matrix_products_are_their_formulas_entry_by_entry() {
    fn entry_by_entry<F: Form>(
        form: &F,
        a: &DMatrix<f64>,
        b: &DMatrix<f64>,
        adj: &DMatrix<f64>,
    ) -> (DMatrix<f64>, Vec<f64>, DMatrix<f64>, DMatrix<f64>) {
        let d = a.ncols();
        let row = |m: &DMatrix<f64>, i: usize| m.row(i).iter().copied().collect::<Vec<_>>();
        let mut k = DMatrix::zeros(a.nrows(), b.nrows());
        let mut full = vec![0.0; form.params().total()];
        let (mut ga, mut gb) = (DMatrix::zeros(a.nrows(), d), DMatrix::zeros(b.nrows(), d));
        for j in 0..b.nrows() {
            for i in 0..a.nrows() {
                let (x, y) = (row(a, i), row(b, j));
                k[(i, j)] = form.value(&x, &y);
                let (mut gx, mut gy) = (vec![0.0; d], vec![0.0; d]);
                form.add_grad(&x, &y, adj[(i, j)], &mut full, &mut gx, &mut gy);
                for c in 0..d {
                    ga[(i, c)] += gx[c];
                    gb[(j, c)] += gy[c];
                }
            }
        }
        (k, full, ga, gb)
    }
    let close = |got: &[f64], want: &[f64], what: &str| {
        assert_eq!(got.len(), want.len(), "{what}");
        let scale = want.iter().fold(0.0f64, |s, v| s.max(v.abs()));
        assert!(scale > 0.0, "{what}: all zero");
        for (i, (x, y)) in got.iter().zip(want).enumerate() {
            assert!((x - y).abs() <= 1e-12 * scale, "{what} {i}: {x} vs {y}");
        }
    };
    for (input_dim, dims) in [(1, vec![0]), (5, vec![0, 1, 2, 3, 4]), (7, vec![4, 1, 6])] {
        let d = dims.len();
        let vars: Vec<f64> = (0..d).map(|i| 0.4 + 0.7 * i as f64).collect();
        let (na, nb) = (13, 37);
        let a = points(na, input_dim, 0.3).add_scalar(-0.4);
        let b = points(nb, input_dim, 2.1).map(|v| v * 3.0 + 0.5);
        let adj = DMatrix::from_fn(na, nb, |i, j| ((i * 7 + j) as f64 * 0.37).sin());
        let select = |m: &DMatrix<f64>| DMatrix::from_fn(m.nrows(), d, |i, c| m[(i, dims[c])]);
        let (sa, sb) = (select(&a), select(&b));
        type Reference = (DMatrix<f64>, Vec<f64>, DMatrix<f64>, DMatrix<f64>);
        let forms: Vec<(String, Box<dyn Kernel>, Reference)> = vec![
            {
                let f = Linear::new(vars.clone());
                (
                    "linear".into(),
                    boxed(Part(f.clone())),
                    entry_by_entry(&f, &sa, &sb, &adj),
                )
            },
            {
                let f = Polynomial::new(vars.clone(), 0.6, 1);
                (
                    "polynomial 1".into(),
                    boxed(Part(f.clone())),
                    entry_by_entry(&f, &sa, &sb, &adj),
                )
            },
            {
                let f = Polynomial::new(vars.clone(), 0.6, 3);
                (
                    "polynomial 3".into(),
                    boxed(Part(f.clone())),
                    entry_by_entry(&f, &sa, &sb, &adj),
                )
            },
            {
                let f = Constant::new(d, 0.9);
                (
                    "constant".into(),
                    boxed(Part(f.clone())),
                    entry_by_entry(&f, &sa, &sb, &adj),
                )
            },
        ];
        for (name, part, (k0, full, ga0, gb0)) in forms {
            let what = format!("{name} on {dims:?} of {input_dim}");
            let kern = Active::new(dims.clone(), input_dim, part);
            let k = kern.matrix(&a, &b, Par::Seq);
            close(k.as_slice(), k0.as_slice(), &format!("{what}: K"));
            // the points' gradients spread onto every input, zero off `dims`
            let spread = |g: &DMatrix<f64>| {
                let mut s = DMatrix::zeros(g.nrows(), input_dim);
                for (c, dc) in dims.iter().enumerate() {
                    s.set_column(*dc, &g.column(c));
                }
                s
            };
            // every value is free: the gradient over every value is the parameters'
            assert_eq!(kern.params_len(), full.len(), "{what}");
            for (want_a, want_b) in [(true, true), (true, false), (false, true), (false, false)] {
                for par in [Par::Seq, Par::Threads(0)] {
                    let g = kern.grad(&a, &b, &k, &adj, want_a, want_b, par);
                    let tag = format!("{what}, want ({want_a}, {want_b})");
                    close(&g.params, &full, &format!("{tag}: parameters"));
                    assert_eq!(g.a.is_some(), want_a, "{tag}");
                    assert_eq!(g.b.is_some(), want_b, "{tag}");
                    if let Some(ga) = g.a {
                        if name == "constant" {
                            assert!(ga.iter().all(|v| *v == 0.0), "{tag}: a");
                        } else {
                            close(ga.as_slice(), spread(&ga0).as_slice(), &format!("{tag}: a"));
                        }
                    }
                    if let Some(gb) = g.b {
                        if name == "constant" {
                            assert!(gb.iter().all(|v| *v == 0.0), "{tag}: b");
                        } else {
                            close(gb.as_slice(), spread(&gb0).as_slice(), &format!("{tag}: b"));
                        }
                    }
                }
            }
        }
    }
}

/// A Matérn kernel's contraction without its K(A, B) (a term of a sum, which hands it
/// none: `Kernel::grad_reads_matrix`) takes the value with the slope in one pass
/// (`stationary::fill_slope_and_value_column`): the same gradient as with K(A, B)
/// given — the lengthscales' and the points' to the bit, σ0²'s to 1e-12 relative (its
/// sum runs column by column) — on one thread and several; rq fills what it lacks and
/// SE, whose contraction is with K(A, B) itself, is always handed it.
#[test]
fn a_matern_term_without_its_matrix_contracts_as_with_it() {
    let (na, nb, d) = (23, 3001, 3); // past Ard's threshold for threads
    let a = points(na, d, 0.3);
    let b = points(nb, d, 2.1).map(|v| v * 1.7);
    let adj = DMatrix::from_fn(na, nb, |i, j| ((i * 7 + j) as f64 * 0.37).sin() + 0.2);
    for kind in [
        KernelKind::Se,
        KernelKind::Matern12,
        KernelKind::Matern32,
        KernelKind::Matern52,
        KernelKind::Rq,
    ] {
        let kern = Ard::new(kind, 1.3, vec![0.7, 1.1, 0.9], 1.6);
        assert_eq!(kern.grad_reads_matrix(), kind == KernelKind::Se, "{kind}");
        if kern.grad_reads_matrix() {
            continue; // always handed its K(A, B)
        }
        let k = kern.matrix(&a, &b, Par::Seq);
        for par in [Par::Seq, Par::Threads(0)] {
            let want = kern.grad(&a, &b, &k, &adj, true, true, par);
            let got = kern.grad(&a, &b, &DMatrix::zeros(0, 0), &adj, true, true, par);
            let v = want.params[0];
            assert!(
                (got.params[0] - v).abs() <= 1e-12 * v.abs(),
                "{kind}: {} vs {v}",
                got.params[0]
            );
            assert_eq!(got.params[1..], want.params[1..], "{kind}");
            assert_eq!(got.a, want.a, "{kind}");
            assert_eq!(got.b, want.b, "{kind}");
        }
    }
}
