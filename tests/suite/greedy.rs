//! Greedy basis selection (docs/methods.md §6): the incremental DTC solution against dense
//! from-scratch solves after every step, each score against its definition computed
//! the slow way, the evidence against the likelihood core's, exact greedy against
//! random selection, and the fits (fixed, adapted, cancelled) with their model files.

use crate::common;
use common::*;
use nalgebra::{DMatrix, DVector};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use sgpw::data::Dataset;
use sgpw::exec::Par;
use sgpw::methods::eigen::Basis;
use sgpw::methods::greedy::GreedyTable;
use sgpw::methods::greedy::{self, Config, Incremental};
use sgpw::methods::{self, Method, pseudo};
use sgpw::model_file::{Hyper, ModelFile, matrix_to_rows};
use sgpw::optim::{Control, Stop};
use sgpw::run_context::{Phase, Progress, RunContext};
use sgpw::run_spec::{ApproxKind, RunSpec, Select};
use sgpw::train::Predictor;
use std::f64::consts::PI;

const JITTER: f64 = 1e-8;

fn hyper() -> Hyper {
    Hyper::se(1.3, vec![0.9, 1.4, 1.1], 0.05)
}

fn model(data: &TrainData) -> ModelFile {
    let mut m = ModelFile::new("greedy", hyper());
    m.jitter = Some(JITTER);
    m.set(&Basis {
        points: matrix_to_rows(&data.x.rows(0, 1).into_owned()),
    });
    m
}

/// K(X, x_j), n.
fn column(data: &TrainData, j: usize) -> Vec<f64> {
    let k = model(data).kernel();
    let xj = data.x.rows(j, 1).into_owned();
    k.matrix(&data.x, &xj, Par::Seq).as_slice().to_vec()
}

/// The dense problem on basis `rows`: α_I = M⁻¹K_I,·y with M = σ²K̂_I + K_I,·K_·,I,
/// π̃ at α_I, the DTC NLML of N(0, K_·,I K̂_I⁻¹ K_I,· + σ²I) by an n×n Cholesky, and the
/// VFE bound: that NLML + tr(K − Q)/(2σ²).
struct Dense {
    alpha: DVector<f64>,
    mean: DVector<f64>,
    pi: f64,
    nlml: f64,
    bound: f64,
}

fn dense(data: &TrainData, rows: &[usize]) -> Dense {
    let h = hyper();
    let k = model(data).kernel();
    let xi = DMatrix::from_fn(rows.len(), data.x.ncols(), |a, d| data.x[(rows[a], d)]);
    let kni = k.matrix(&data.x, &xi, Par::Seq);
    let mut ki = k.gram(&xi, Par::Seq);
    for a in 0..rows.len() {
        ki[(a, a)] += JITTER;
    }
    let y = DVector::from_column_slice(&data.y);
    let m = &ki * h.noise_variance + kni.transpose() * &kni;
    let b = kni.transpose() * &y;
    let alpha = m.clone().cholesky().expect("M spd").solve(&b);
    let pi = 0.5 * alpha.dot(&(&m * &alpha)) - b.dot(&alpha);
    let q = &kni
        * ki.clone()
            .cholesky()
            .expect("K_I spd")
            .solve(&kni.transpose());
    let trace = (0..q.nrows())
        .map(|i| h.signal_variance - q[(i, i)])
        .sum::<f64>();
    let mut c = q;
    for i in 0..c.nrows() {
        c[(i, i)] += h.noise_variance;
    }
    let chol = c.cholesky().expect("C spd");
    let n = y.len() as f64;
    let nlml = 0.5 * y.dot(&chol.solve(&y))
        + chol.l().diagonal().iter().map(|v| v.ln()).sum::<f64>()
        + 0.5 * n * (2.0 * PI).ln();
    Dense {
        mean: &kni * &alpha,
        alpha,
        pi,
        nlml,
        bound: nlml + 0.5 * trace / h.noise_variance,
    }
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(1e-300)
}

fn max_rel(a: &[f64], b: &[f64]) -> f64 {
    let scale = b.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1e-300);
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs() / scale)
        .fold(0.0, f64::max)
}

/// A fixed order of 20 distinct training rows.
fn order(n: usize) -> Vec<usize> {
    (0..20).map(|k| (k * 37 + 5) % n).collect()
}

#[test]
fn incremental_solution_equals_a_dense_solve_after_every_step() {
    let data = toy_data(90, 3, 1);
    let rows = order(90);
    let mut inc = Incremental::new(
        &data.y,
        hyper().signal_variance,
        hyper().noise_variance,
        JITTER,
        rows.len(),
    );
    for (d, &j) in rows.iter().enumerate() {
        let r = column(&data, j);
        let col = inc.column(j, &r, Par::Seq).expect("independent");
        inc.add(col);
        let want = dense(&data, &rows[..=d]);
        let what = format!("after {} points", d + 1);
        let e = max_rel(&inc.alpha(), want.alpha.as_slice());
        assert!(e < 1e-10, "{what}: α_I off by {e:e}");
        let e = max_rel(inc.mean(), want.mean.as_slice());
        assert!(e < 1e-10, "{what}: μ off by {e:e}");
        assert!(rel(inc.pi(), want.pi) < 1e-10, "{what}: π̃");
        assert!(rel(inc.nlml(), want.nlml) < 1e-10, "{what}: NLML");
    }
    // a point already in the basis is no candidate
    let r = column(&data, rows[3]);
    assert!(inc.column(rows[3], &r, Par::Seq).is_none());
}

/// The evidence from the incremental quantities is the likelihood core's DTC NLML on
/// the same basis (pseudo::DTC with the selected inputs as inducing points), and the
/// bound is its VFE objective; the method reports the bound unless `approx = "dtc"`.
#[test]
fn incremental_evidence_and_bound_are_the_cores() {
    let data = toy_data(120, 3, 2);
    let rows = order(120);
    let mut inc = Incremental::new(
        &data.y,
        hyper().signal_variance,
        hyper().noise_variance,
        JITTER,
        rows.len(),
    );
    for (d, &j) in rows.iter().enumerate() {
        let r = column(&data, j);
        let col = inc.column(j, &r, Par::Seq).expect("independent");
        inc.add(col);
        if d % 6 == 5 || d + 1 == rows.len() {
            let mut m = model(&data);
            let b = DMatrix::from_fn(d + 1, 3, |a, k| data.x[(rows[a], k)]);
            m.set(&Basis {
                points: matrix_to_rows(&b),
            });
            let core = pseudo::DTC
                .nlml(&as_pseudo_file(&m, "dtc"), &data, &ex())
                .expect("core");
            let bound = pseudo::VFE
                .nlml(&as_pseudo_file(&m, "vfe"), &data, &ex())
                .expect("core");
            assert!(rel(inc.nlml(), core) < 1e-10, "{} points", d + 1);
            assert!(rel(inc.bound(), bound) < 1e-10, "{} points", d + 1);
            assert!(bound > core, "the trace term is positive");
            let via_method = greedy::GREEDY.nlml(&m, &data, &ex()).expect("method");
            assert_eq!(bound, via_method);
            m.approx = Some(ApproxKind::Dtc);
            let via_method = greedy::GREEDY.nlml(&m, &data, &ex()).expect("method");
            assert_eq!(core, via_method);
        }
    }
}

fn assert_bits(what: &str, a: &[f64], b: &[f64]) {
    assert_eq!(a.len(), b.len(), "{what}");
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert_eq!(x.to_bits(), y.to_bits(), "{what}: entry {i}: {x} {y}");
    }
}

/// greedy at its basis is the core's vfe (or, with `approx = "dtc"`, dtc) at the same
/// inducing inputs, to the bit: objective, its gradient in the shared blocks, the
/// objective's name, and the posterior and Kuf it predicts with (dtc's), with an SE, a
/// Matérn and a composed kernel, in one piece and in chunks.
#[test]
fn greedy_evaluates_what_dtc_and_vfe_do_at_its_basis() {
    use sgpw::kernel::expression::KernelExpr;
    use sgpw::kernel::{ComposedKernel, KernelKind, Start, build};
    let data = toy_data(90, 3, 4);
    let test = toy_data(30, 3, 5);
    let chunked = Exec {
        chunk_entries: 20 * 9,
        ..Exec::sequential()
    };
    for (kernel, composed) in [
        (KernelKind::Se, None),
        (KernelKind::Matern32, None),
        (KernelKind::Se, Some("se + se * periodic")),
    ] {
        for approx in [None, Some(ApproxKind::Dtc)] {
            let mut m = model(&data);
            m.hyper = m.hyper.clone().with_kernel(kernel);
            m.noise_floor = Some(0.01);
            m.approx = approx;
            if let Some(text) = composed {
                let start = Start {
                    columns: (0..3).map(|i| format!("x{i}")).collect(),
                    variance: 1.0,
                    lengthscales: vec![1.0; 3],
                    periods: vec![1.5; 3],
                    mean_squares: vec![1.0; 3],
                };
                let expr = KernelExpr::parse(text).expect("parses");
                m.composed = ComposedKernel::new(build(&expr, &start).expect("builds"));
                m.hyper.lengthscales.clear();
            }
            let b = DMatrix::from_fn(9, 3, |a, k| data.x[(5 * a + 1, k)]);
            m.set(&Basis {
                points: matrix_to_rows(&b),
            });
            let (core, name): (&dyn Method, &str) = match approx {
                Some(_) => (&pseudo::DTC, "dtc"),
                None => (&pseudo::VFE, "vfe"),
            };
            let file = as_pseudo_file(&m, name);
            let what = format!("{kernel} {composed:?} {approx:?}");
            assert_eq!(
                greedy::GREEDY.objective_name(&m),
                core.objective_name(&file),
                "{what}"
            );
            for exec in [ex(), chunked.clone()] {
                let o = greedy::GREEDY.objective(&m, &data, &exec).expect("greedy");
                let c = core.objective(&file, &data, &exec).expect("core");
                assert_eq!(o.nlml.to_bits(), c.nlml.to_bits(), "{what}");
                assert_eq!(o.jitter.to_bits(), c.jitter.to_bits(), "{what}");
                let head = greedy::GREEDY.pack(&m).len();
                assert_bits(&what, &o.grad, &c.grad[..head]);
                let nlml = greedy::GREEDY.nlml(&m, &data, &exec).expect("nlml");
                let core_nlml = core.nlml(&file, &data, &exec).expect("core nlml");
                assert_eq!(nlml.to_bits(), core_nlml.to_bits(), "{what}");
                let dtc = as_pseudo_file(&m, "dtc");
                let (p, _) = greedy::GREEDY
                    .posterior(&m, &data, &exec)
                    .expect("posterior");
                let (q, _) = pseudo::DTC.posterior(&dtc, &data, &exec).expect("dtc");
                assert_bits(&what, &p.mean_weights, &q.mean_weights);
                assert_bits(&what, p.var_matrix.as_slice(), q.var_matrix.as_slice());
                let (kuf, kdiag) = greedy::GREEDY
                    .cross(&m, None, &test.x, &exec)
                    .expect("cross");
                let (kuf_d, kdiag_d) = pseudo::DTC
                    .cross(&dtc, None, &test.x, &exec)
                    .expect("dtc cross");
                assert_bits(&what, kuf.as_slice(), kuf_d.as_slice());
                assert_bits(&what, &kdiag, &kdiag_d);
            }
        }
    }
}

/// π(α) of the paper's eq. 4 with α nonzero on `support` only, from the n×n matrices
/// (the prior term with K̂ = K + jitter·I, as every Kuu in sgpw).
fn pi_full(data: &TrainData, support: &[usize], values: &[f64]) -> f64 {
    let h = hyper();
    let k = model(data).kernel().gram(&data.x, Par::Seq);
    let n = data.y.len();
    let mut a = DVector::zeros(n);
    for (&i, &v) in support.iter().zip(values) {
        a[i] = v;
    }
    let ka = &k * &a;
    let y = DVector::from_column_slice(&data.y);
    let prior = a.dot(&ka) + JITTER * a.dot(&a);
    0.5 * h.noise_variance * prior + 0.5 * ka.dot(&ka) - y.dot(&ka)
}

#[test]
fn scores_match_their_definitions_computed_the_slow_way() {
    let data = toy_data(70, 3, 3);
    let n = data.y.len();
    let rows: Vec<usize> = order(n)[..8].to_vec();
    let mut inc = Incremental::new(
        &data.y,
        hyper().signal_variance,
        hyper().noise_variance,
        JITTER,
        10,
    );
    for &j in &rows {
        let r = column(&data, j);
        let col = inc.column(j, &r, Par::Seq).expect("independent");
        inc.add(col);
    }
    let base = dense(&data, &rows);
    let cands: Vec<usize> = (0..n).filter(|i| !rows.contains(i)).collect();
    let r = DMatrix::from_fn(n, cands.len(), |a, c| column(&data, cands[c])[a]);
    let rr: Vec<f64> = r.column_iter().map(|c| c.norm_squared()).collect();
    let backfit = inc.backfit_scores(&cands, &r, &rr, Par::Seq);
    let sb = inc.sb_gains(&cands, &r, Par::Seq);
    // the core's DTC posterior at the candidates, for INFO
    let mut m = model(&data);
    let b = DMatrix::from_fn(rows.len(), 3, |a, k| data.x[(rows[a], k)]);
    m.set(&Basis {
        points: matrix_to_rows(&b),
    });
    let mut with_post = m.clone();
    with_post.posterior = Some(greedy::GREEDY.posterior(&m, &data, &ex()).expect("post").0);
    let pred = Predictor::new(with_post, None).expect("predictor");
    let xc = DMatrix::from_fn(cands.len(), 3, |c, k| data.x[(cands[c], k)]);
    let p = pred.predict(&xc).expect("predicts");
    let s2 = hyper().noise_variance;
    let mut alpha_i = base.alpha.as_slice().to_vec();
    alpha_i.push(0.0);
    let mut support = rows.clone();
    support.push(0);
    for (c, &i) in cands.iter().enumerate() {
        // post-backfitting (eqs. 7–8): the decrease of π over α_i alone, α_I fixed —
        // π is quadratic in α_i, so three evaluations give its minimum exactly
        support[rows.len()] = i;
        let mut at = |t: f64| {
            alpha_i[rows.len()] = t;
            pi_full(&data, &support, &alpha_i)
        };
        let (p0, p1, m1) = (at(0.0), at(1.0), at(-1.0));
        let (g, h) = (0.5 * (p1 - m1), p1 + m1 - 2.0 * p0);
        let want = 0.5 * g * g / h;
        assert!(rel(p0, base.pi) < 1e-9, "π at α_I*");
        assert!(
            (backfit[c] - want).abs() <= 1e-7 * want.max(1e-3 * base.pi.abs()),
            "post-backfitting Δ of {i}: {} vs {want}",
            backfit[c]
        );
        let a_star = inc.backfit_alpha(i, r.column(c).as_slice());
        assert!(
            (a_star + g / h).abs() <= 1e-6 * (g / h).abs().max(1e-6),
            "α_i* of {i}: {a_star} vs {}",
            -g / h
        );
        // SB: the exact decrease when α_I and α_i are re-optimised together
        let mut grown = rows.clone();
        grown.push(i);
        let want = base.pi - dense(&data, &grown).pi;
        assert!(
            (sb[c] - want).abs() <= 1e-8 * want.max(1e-3 * base.pi.abs()),
            "SB gain of {i}: {} vs {want}",
            sb[c]
        );
        assert!(
            sb[c] >= backfit[c] * (1.0 - 1e-9),
            "SB ≥ backfitting for {i}"
        );
        // INFO, literally as docs/methods.md §6 writes it, from the core's posterior
        let (mu, v, y) = (p.mean[c], p.var_latent[c], data.y[i]);
        let v1 = v * s2 / (v + s2);
        let mu1 = mu + v * (y - mu) / (v + s2);
        let want = 0.5 * (v1 / v - 1.0 - (v1 / v).ln() + (mu1 - mu).powi(2) / v);
        let got = inc.info_score(i);
        assert!(
            (got - want).abs() <= 1e-6 * want.abs().max(1e-6),
            "INFO of {i}: {got} vs {want} (v = {v})"
        );
        assert!(rel(inc.variance(i), v) < 1e-8 || v < 1e-10, "v of {i}");
    }
}

/// π̃ after each step of a basis added in this order.
fn pis(data: &TrainData, rows: &[usize]) -> Vec<f64> {
    let mut inc = Incremental::new(
        &data.y,
        hyper().signal_variance,
        hyper().noise_variance,
        JITTER,
        rows.len(),
    );
    rows.iter()
        .map(|&j| {
            let r = column(data, j);
            let col = inc.column(j, &r, Par::Seq).expect("independent");
            inc.add(col);
            inc.pi()
        })
        .collect()
}

fn run_select(data: &TrainData, cfg: &Config, seed: u64) -> greedy::Selected {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    greedy::select(
        data,
        &model(data),
        cfg,
        &[],
        &mut rng,
        &mut |_, _| Ok(Control::Continue),
        &ex(),
    )
    .expect("selects")
}

#[test]
fn exact_greedy_never_does_worse_than_random_selection() {
    let data = toy_data(60, 3, 4);
    let d_max = 12;
    // SB over every candidate: the exact best score at each step
    let exact = Config {
        kappa: 60,
        ..Config::paper(Select::Sb, d_max)
    };
    let g = run_select(&data, &exact, 1);
    assert_eq!(g.rows.len(), d_max);
    let g_pi = pis(&data, &g.rows);
    for seed in 1..=20 {
        let r = run_select(&data, &Config::paper(Select::Rand, d_max), seed);
        let r_pi = pis(&data, &r.rows);
        for d in 0..d_max {
            assert!(
                g_pi[d] <= r_pi[d] + 1e-12 * r_pi[d].abs(),
                "seed {seed}, {} points: greedy π {} > random π {}",
                d + 1,
                g_pi[d],
                r_pi[d]
            );
        }
    }
    // every rule selects d_max distinct points and its trace is the objective (the bound)
    for select in [
        Select::Rand,
        Select::Info,
        Select::Kappa,
        Select::Dmax,
        Select::Sb,
    ] {
        let s = run_select(&data, &Config::paper(select, d_max), 3);
        let mut sorted = s.rows.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), d_max, "{select:?}: distinct");
        assert_eq!(s.trace.len(), d_max + 1, "{select:?}: trace");
        let want = dense(&data, &s.rows).bound;
        assert!(rel(s.trace[d_max], want) < 1e-10, "{select:?}: last NLML");
    }
    // with approx = "dtc" the trace is the DTC evidence
    let mut dtc = model(&data);
    dtc.approx = Some(ApproxKind::Dtc);
    let s = greedy::select(
        &data,
        &dtc,
        &Config::paper(Select::Dmax, d_max),
        &[],
        &mut ChaCha8Rng::seed_from_u64(3),
        &mut |_, _| Ok(Control::Continue),
        &ex(),
    )
    .expect("selects");
    let want = dense(&data, &s.rows).nlml;
    assert!(rel(s.trace[d_max], want) < 1e-10, "dtc: last NLML");
}

/// The discard cache changes which rows are computed, never the selection.
#[test]
fn the_discard_cache_only_saves_kernel_rows() {
    let data = toy_data(150, 3, 5);
    for select in [Select::Kappa, Select::Dmax, Select::Sb] {
        let plain = Config {
            kappa: 10,
            ..Config::paper(select, 15)
        };
        let cached = Config {
            discard_cache: 100,
            ..plain.clone()
        };
        let (a, b) = (run_select(&data, &plain, 7), run_select(&data, &cached, 7));
        assert_eq!(a.rows, b.rows, "{select:?}");
        assert_eq!(a.trace, b.trace, "{select:?}");
        assert!(b.discard_hits > 0, "{select:?}: no hits");
        assert_eq!(a.kernel_rows, b.kernel_rows + b.discard_hits, "{select:?}");
    }
}

fn dataset(data: &TrainData, test: &TrainData) -> Dataset {
    Dataset {
        classes: None,
        feature_names: (1..=data.x.ncols()).map(|k| format!("x{k}")).collect(),
        target_name: "y".into(),
        x_train: data.x.clone(),
        y_train: DVector::from_column_slice(&data.y),
        x_test: Some(test.x.clone()),
        y_test: Some(DVector::from_column_slice(&test.y)),
        notes: Vec::new(),
    }
}

fn spec(m: usize, toml: &str) -> RunSpec {
    RunSpec {
        method: "greedy".into(),
        m,
        seed: 3,
        iters: 30,
        standardize: false,
        options: options(toml),
    }
}

#[test]
fn fits_store_the_basis_in_selection_order_and_predict_from_the_file_alone() {
    let (data, test) = (toy_data(200, 2, 6), toy_data(50, 2, 7));
    let ds = dataset(&data, &test);
    let (r, seen) = fit(&ds, &spec(15, "select = \"dmax\"\nhyper_from_subset = 80"));
    let r = r.expect("fits");
    assert_eq!(r.stop, Stop::NothingToFit);
    // progress: the evidence with 0, 1, …, m basis points
    assert_eq!(seen, (0..=15).collect::<Vec<_>>());
    assert_eq!(r.trace.len(), 16);
    assert!(rel(r.nlml, r.trace[15]) < 1e-10, "final NLML is the core's");
    let g = r
        .model
        .table::<GreedyTable>()
        .expect("reads")
        .expect("[greedy]");
    assert_eq!((g.select, g.adapt, g.order.len()), (Select::Dmax, 0, 15));
    let points = &r
        .model
        .table::<Basis>()
        .expect("reads")
        .expect("[basis]")
        .points;
    for (k, &i) in g.order.iter().enumerate() {
        assert_eq!(points[k], vec![data.x[(i, 0)], data.x[(i, 1)]], "point {k}");
    }
    // the model file alone predicts what the run's predictor does
    let text = r.model.to_toml().expect("writes");
    let back = ModelFile::parse(&text).expect("parses");
    let p = Predictor::new(back, None).expect("no training data needed");
    let a = p.predict(&test.x).expect("predicts");
    let b = r.predictor.predict(&test.x).expect("predicts");
    assert_eq!(a.mean, b.mean);
    assert_eq!(a.var_noisy, b.var_noisy);
    // a model whose order does not match its points names the table and key
    let mut bad = r.model.clone();
    let mut g = bad.require::<GreedyTable>().expect("table");
    g.order.pop();
    bad.set(&g);
    let e = match bad.check() {
        Ok(_) => panic!("order too short passed"),
        Err(e) => e.to_string(),
    };
    assert!(e.contains("[greedy] order"), "{e}");
}

#[test]
fn adaptation_alternates_selection_and_hyperparameter_fits() {
    let (data, test) = (toy_data(150, 2, 8), toy_data(40, 2, 9));
    let ds = dataset(&data, &test);
    // one start: the schedule's reports are the subject
    let (r, seen) = fit(
        &ds,
        &spec(10, "select = \"info\"\nadapt = 2\nsingle_start = true"),
    );
    let r = r.expect("fits");
    let g = r
        .model
        .table::<GreedyTable>()
        .expect("reads")
        .expect("[greedy]");
    assert_eq!((g.select, g.adapt), (Select::Info, 2));
    // two selections of 10 points, each followed by its optimiser iterations
    assert!(r.trace.len() > 22, "{}", r.trace.len());
    assert_eq!(seen.len(), r.trace.len());
    assert!(seen.windows(2).all(|w| w[1] == w[0] + 1), "{seen:?}");
    assert_eq!(r.iterations + 1, r.trace.len());
    // the second selection starts from the empty basis again: the evidence jumps up
    assert!(r.trace[11..].windows(2).any(|w| w[1] > w[0] + 1.0));
    let fitted = r.model.hyper.clone();
    let start = methods::hyper::default_hyper(
        &sgpw::train::prepare(&ds, false).0,
        sgpw::run_spec::DEFAULT_LENGTHSCALE_START,
    );
    assert_ne!(fitted, start, "the hyperparameters moved");
    assert!(rel(r.nlml, *r.trace.last().expect("trace")) < 1e-10);
    assert!(
        r.nlml < r.trace[10],
        "adaptation improved on the first selection"
    );
    // rounds stop once the iteration budget is spent (no selection without a fit)
    let few = RunSpec {
        iters: 2,
        ..spec(10, "adapt = 50")
    };
    let (r, _) = fit(&ds, &few);
    let r = r.expect("fits");
    // two rounds at most: each selection (11 values, from the empty basis) and 1 iteration
    assert!(r.trace.len() <= 2 * (11 + 1), "{}", r.trace.len());
}

#[test]
fn selection_stops_when_cancelled() {
    let data = toy_data(300, 3, 10);
    let exec = ex();
    let token = exec.cancel.clone();
    let sink = |p: &Progress| {
        if p.phase == (Phase::Fit { stage: 0 }) && p.iteration == 5 {
            token.cancel();
        }
    };
    let ctx = RunContext::new(exec.clone(), &sink);
    let s = spec(40, "select = \"sb\"").check(300).expect("valid");
    let m = model(&data);
    let e = greedy::GREEDY
        .fit(m, &data, &s, &ctx)
        .expect_err("cancelled");
    assert!(matches!(e, sgpw::error::Error::Cancelled), "{e}");
}

#[test]
fn options_are_checked_before_any_work() {
    let bad = [
        ("select = \"rand\"\ndiscard_cache = 10", "--discard-cache"),
        (
            "init_lengthscales_from_subset = 50\nhyper_from_subset = 50",
            "--hyper-from-subset",
        ),
        ("adapt = 0", "--adapt"),
        ("adapt = 4294967296", "--adapt"),
        ("hyper_from_subset = 1", "--hyper-from-subset"),
        ("approx = \"fitc\"", "--approx"),
        ("approx = \"pep\"", "--approx"),
    ];
    for (toml, flag) in bad {
        let e = spec(5, toml).check(100).expect_err(toml).to_string();
        assert!(e.contains(flag), "{toml}: {e}");
    }
    let e = spec(101, "").check(100).expect_err("m > n").to_string();
    assert!(e.contains("m = 101"), "{e}");
    assert!(
        spec(5, "select = \"sb\"\ndiscard_cache = 10\nadapt = 2")
            .check(100)
            .is_ok()
    );
    // the general options apply to greedy as to every method
    assert!(
        spec(5, "init_lengthscales_from_subset = 50\nrestarts = 2\nvalidation = 0.2\nearly_stop = true\nnoise_floor = 1e-4")
            .check(100)
            .is_ok()
    );
    let e = RunSpec {
        method: "fitc".into(),
        ..spec(5, "select = \"sb\"")
    }
    .check(100)
    .expect_err("not fitc's");
    assert!(e.to_string().contains("--select"), "{e}");
}

/// Long lengthscales: K_I is numerically singular but for the jitter (ε = 1e-8 of σ0²),
/// and ‖K_·,j‖² dwarfs σ² times the jitter, so the new diagonal of chol(M) must come
/// from the Gram–Schmidt residual (the difference formula cancels to noise). The
/// evidence still matches the core's; with no jitter at all the candidates run out and
/// the error says what to do.
#[test]
fn long_lengthscales_stay_accurate_and_a_zero_jitter_is_an_error() {
    let data = toy_data(400, 1, 11);
    let mut m = ModelFile::new("greedy", Hyper::se(2.0, vec![40.0], 1e-4));
    m.set(&Basis {
        points: vec![vec![0.0]],
    });
    for select in [Select::Sb, Select::Dmax, Select::Rand] {
        let cfg = Config::paper(select, 15);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let s = greedy::select(
            &data,
            &m,
            &cfg,
            &[],
            &mut rng,
            &mut |_, _| Ok(Control::Continue),
            &ex(),
        )
        .expect("selects");
        assert_eq!(s.jitter, 2e-8, "{select:?}");
        let mut with_basis = m.clone();
        let b = DMatrix::from_fn(15, 1, |a, _| data.x[(s.rows[a], 0)]);
        with_basis.set(&Basis {
            points: matrix_to_rows(&b),
        });
        let core = greedy::GREEDY
            .nlml(&with_basis, &data, &ex())
            .expect("core");
        let e = (core - s.trace[15]).abs() / core.abs();
        assert!(e < 1e-9, "{select:?}: {core} vs {} ({e:e})", s.trace[15]);
    }
    let mut fixed = m;
    fixed.jitter = Some(0.0);
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let cfg = Config::paper(Select::Kappa, 15);
    let e = greedy::select(
        &data,
        &fixed,
        &cfg,
        &[],
        &mut rng,
        &mut |_, _| Ok(Control::Continue),
        &ex(),
    )
    .expect_err("no jitter: too few independent points")
    .to_string();
    assert!(e.contains("remove the key"), "{e}");
}

/// `Control::Finish` from the step callback (early stopping) ends the selection with
/// the basis it has; the trace ends there too.
#[test]
fn a_finished_selection_keeps_the_basis_it_has() {
    let data = toy_data(120, 3, 12);
    for select in [
        Select::Rand,
        Select::Info,
        Select::Kappa,
        Select::Dmax,
        Select::Sb,
    ] {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let mut stop_at = |rows: &[usize], _: f64| {
            Ok(if rows.len() == 6 {
                Control::Finish
            } else {
                Control::Continue
            })
        };
        let s = greedy::select(
            &data,
            &model(&data),
            &Config::paper(select, 20),
            &[],
            &mut rng,
            &mut stop_at,
            &ex(),
        )
        .expect("selects");
        assert_eq!(s.rows.len(), 6, "{select:?}");
        assert_eq!(s.trace.len(), 7, "{select:?}");
        assert!(
            rel(s.trace[6], dense(&data, &s.rows).bound) < 1e-10,
            "{select:?}"
        );
    }
}

/// The options every method takes: --restarts draws each start's candidates from a
/// stream of its own and keeps the best selection (not selected again); --validation
/// scores the basis as it grows; --noise-floor reaches the adaptation's gradient.
#[test]
fn the_general_options_apply_to_greedy() {
    use std::cell::RefCell;
    let (data, test) = (toy_data(160, 2, 13), toy_data(40, 2, 14));
    let ds = dataset(&data, &test);
    let run = |toml: &str| {
        let finals = RefCell::new(std::collections::BTreeMap::new());
        let scored = RefCell::new(Vec::new());
        let sink = |p: &Progress| {
            if let (Phase::Restart { start }, Some(v)) = (p.phase, p.nlml) {
                finals.borrow_mut().insert(start, v);
            }
            if let (Phase::Fit { .. }, Some(_)) = (p.phase, p.validation) {
                scored.borrow_mut().push(p.iteration);
            }
        };
        let r = spec(12, toml)
            .check(160)
            .and_then(|v| sgpw::train::fit(&ds, &v, &RunContext::new(ex(), &sink)))
            .expect("fits");
        (r, finals.into_inner(), scored.into_inner())
    };
    let (r, finals, _) = run("select = \"rand\"\nrestarts = 3");
    assert_eq!(finals.len(), 3, "{finals:?}");
    let best = finals.values().copied().fold(f64::INFINITY, f64::min);
    let worst = finals.values().copied().fold(f64::NEG_INFINITY, f64::max);
    assert!(worst > best + 1e-6, "the starts selected alike: {finals:?}");
    assert!(rel(r.nlml, best) < 1e-10, "{} vs best start {best}", r.nlml);
    assert_eq!(
        r.model
            .table::<GreedyTable>()
            .expect("reads")
            .expect("[greedy]")
            .order
            .len(),
        12
    );
    // --validation: the basis scored every 5 points while it grows
    let (r, _, scored) = run("select = \"dmax\"\nvalidation = 0.25");
    assert_eq!(scored, [5, 10], "{scored:?}");
    assert_eq!(r.validation.len(), 2);
    // the noise floor is part of the packed σ² = floor + e^θ the adaptation fits
    let data = toy_data(80, 3, 15);
    let mut m = model(&data);
    m.set(&Basis {
        points: matrix_to_rows(&data.x.rows(0, 7).into_owned()),
    });
    m.noise_floor = Some(0.02);
    let theta = greedy::GREEDY.pack(&m);
    let g = greedy::GREEDY
        .objective(&m, &data, &ex())
        .expect("objective");
    let mut f = |t: &[f64]| {
        let mut mm = m.clone();
        greedy::GREEDY.unpack(t, &mut mm);
        greedy::GREEDY.nlml(&mm, &data, &ex()).expect("nlml")
    };
    check_gradient(
        "greedy with a noise floor",
        &mut f,
        &theta,
        &g.grad,
        1e-5,
        1e-6,
    );
}

/// Every report of a fit, in order: (stage of the fit phase, iteration, objective).
fn staged(ds: &Dataset, spec: &RunSpec) -> (sgpw::train::FitResult, Vec<(usize, usize, f64)>) {
    use std::cell::RefCell;
    let seen = RefCell::new(Vec::new());
    let sink = |p: &Progress| {
        if let (Phase::Fit { stage }, Some(v)) = (p.phase, p.nlml) {
            seen.borrow_mut().push((stage, p.iteration, v));
        }
    };
    let r = spec
        .check(usize::MAX)
        .and_then(|v| sgpw::train::fit(ds, &v, &RunContext::new(ex(), &sink)))
        .expect("fits");
    (r, seen.into_inner())
}

/// Step (2) of each round minimises the objective the run reports, from where the
/// selection of step (1) left it: its first value is the selection's last (the same
/// objective at the same basis and hyperparameters) and it never goes up. For the VFE
/// bound (the default) and the DTC evidence alike.
#[test]
fn each_adaptation_round_lowers_the_objective_it_optimises() {
    let (data, test) = (toy_data(220, 3, 21), toy_data(40, 3, 22));
    let ds = dataset(&data, &test);
    for approx in ["", "approx = \"dtc\"\n"] {
        let toml = format!("{approx}select = \"dmax\"\nadapt = 3\nhyper_from_subset = 100");
        let (r, seen) = staged(
            &ds,
            &RunSpec {
                iters: 45,
                ..spec(12, &toml)
            },
        );
        let stages: std::collections::BTreeSet<usize> = seen.iter().map(|s| s.0).collect();
        assert_eq!(
            stages.into_iter().collect::<Vec<_>>(),
            [1, 2, 3, 4, 5, 6],
            "{approx}"
        );
        for round in 0..3 {
            let of = |stage: usize| -> Vec<f64> {
                seen.iter().filter(|s| s.0 == stage).map(|s| s.2).collect()
            };
            let (sel, fit) = (of(2 * round + 1), of(2 * round + 2));
            assert_eq!(sel.len(), 13, "{approx} round {round}: 0..=12 basis points");
            let start = *sel.last().expect("selected");
            assert!(!fit.is_empty(), "{approx} round {round}: no iteration");
            let mut prev = start;
            for (k, &v) in fit.iter().enumerate() {
                assert!(
                    v <= prev + 1e-9 * prev.abs(),
                    "{approx} round {round} iteration {k}: {v} after {prev}"
                );
                prev = v;
            }
            assert!(
                prev < start,
                "{approx} round {round}: the fit did not improve"
            );
        }
        assert!(
            rel(r.nlml, *r.trace.last().expect("trace")) < 1e-10,
            "{approx}"
        );
    }
}

/// After a round, the next selection starts as the paper's §4 prescribes: an empty
/// basis, and the cache of DMAX (c = d_max) filled with the kernel rows of the previous
/// basis at the new hyperparameters, so its first point is the best-scored of those.
/// The state is read off a one-round run (same seed, same budget for that round):
/// its basis and hyperparameters are where the second round of a two-round run starts.
#[test]
fn the_next_selection_starts_empty_with_the_previous_basis_as_its_cache() {
    let (data, test) = (toy_data(260, 3, 23), toy_data(40, 3, 24));
    let ds = dataset(&data, &test);
    let toml = |k: usize| format!("select = \"dmax\"\nadapt = {k}\nhyper_from_subset = 100");
    let (one, _) = staged(
        &ds,
        &RunSpec {
            iters: 20,
            ..spec(14, &toml(1))
        },
    );
    let (two, _) = staged(
        &ds,
        &RunSpec {
            iters: 40,
            ..spec(14, &toml(2))
        },
    );
    let previous = one
        .model
        .table::<GreedyTable>()
        .expect("reads")
        .expect("[greedy]")
        .order;
    let next = two
        .model
        .table::<GreedyTable>()
        .expect("reads")
        .expect("[greedy]")
        .order;
    let td = sgpw::train::prepare(&ds, false).0;
    let h = one.model.hyper.clone();
    let inc = Incremental::new(
        &td.y,
        h.signal_variance,
        h.noise_variance,
        JITTER * h.signal_variance,
        previous.len(),
    );
    let kernel = sgpw::model_file::ModelFile::new("greedy", h).kernel();
    let xb = DMatrix::from_fn(previous.len(), 3, |a, d| td.x[(previous[a], d)]);
    let r = kernel.matrix(&td.x, &xb, Par::Seq);
    let rr: Vec<f64> = (0..previous.len())
        .map(|c| r.column(c).norm_squared())
        .collect();
    let scores = inc.backfit_scores(&previous, &r, &rr, Par::Seq);
    let best = (0..previous.len())
        .max_by(|&a, &b| {
            scores[a]
                .total_cmp(&scores[b])
                .then(previous[b].cmp(&previous[a]))
        })
        .expect("cache");
    assert_eq!(next[0], previous[best], "scores {scores:?}");
    assert_ne!(next, previous, "the second round selected again");
}

/// What issue 30 found, kept fixed: on data the basis cannot span (d_max = 15 for a
/// three-dimensional sum of sines), the DTC evidence doubles σ0² — it never sees the
/// prior variance σ0² − Q the basis leaves out, which the projected-process predictive
/// adds to every test variance — and the adapted model predicts worse than the fixed
/// one it started from. The default objective (the VFE bound) sees it: adaptation does
/// not lose to the fixed run in test MNLP.
#[test]
fn adaptation_does_not_lose_to_the_fixed_run_it_starts_from() {
    let (data, test) = (toy_data(800, 3, 25), toy_data(400, 3, 26));
    let ds = dataset(&data, &test);
    let base = "select = \"dmax\"\nhyper_from_subset = 200\n";
    let run = |extra: &str| {
        let (r, _) = fit(
            &ds,
            &RunSpec {
                iters: 200,
                ..spec(15, &format!("{base}{extra}"))
            },
        );
        r.expect("fits")
    };
    let fixed = run("");
    let vfe = run("adapt = 3");
    let dtc = run("adapt = 3\napprox = \"dtc\"");
    let mnlp = |r: &sgpw::train::FitResult| r.test.as_ref().expect("test").mnlp;
    let sf2 = |r: &sgpw::train::FitResult| r.model.hyper.signal_variance;
    // mean predictive variance over the test MSE: 1 when calibrated on average
    let ratio = |r: &sgpw::train::FitResult| {
        let p = r.predictor.predict(&test.x).expect("predicts");
        let t = test.y.len() as f64;
        let mse = p
            .mean
            .iter()
            .zip(&test.y)
            .map(|(m, y)| (m - y).powi(2))
            .sum::<f64>()
            / t;
        p.var_noisy.iter().sum::<f64>() / t / mse
    };
    // the fixed run is already underconfident (the prior term is large: 15 points do
    // not span the kernel); the DTC evidence raises σ0² and so every test variance
    assert!(sf2(&dtc) > sf2(&fixed), "{} vs {}", sf2(&dtc), sf2(&fixed));
    assert!(
        ratio(&dtc) > 1.5 * ratio(&fixed),
        "{} vs {}",
        ratio(&dtc),
        ratio(&fixed)
    );
    assert!(
        mnlp(&dtc) > mnlp(&fixed),
        "{} <= {}",
        mnlp(&dtc),
        mnlp(&fixed)
    );
    assert!(
        mnlp(&vfe) <= mnlp(&fixed),
        "{} > {}",
        mnlp(&vfe),
        mnlp(&fixed)
    );
}
