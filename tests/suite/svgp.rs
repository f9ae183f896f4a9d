//! SVGP (docs/methods.md §8): every gradient against finite differences (full data and
//! a minibatch, every kernel, automatic and fixed jitter); one natural-gradient step
//! with γ = 1 on the whole data lands on the optimal q(u), where the ELBO is VFE's
//! collapsed bound and the predictions are VFE's; the natural gradient is the
//! Fisher-preconditioned ordinary gradient; training is reproducible from its seed.

use crate::common;
use common::*;
use nalgebra::{DMatrix, DVector};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use sgpw::kernel::KernelKind;
use sgpw::methods::svgp::elbo::{Variational, Want, natural_gradient, natural_step};
use sgpw::methods::svgp::{self, SVGP, evaluate, set_variational, variational};
use sgpw::methods::{self, Method, pseudo};
use sgpw::model_file::ModelFile;
use sgpw::run_context::RunContext;
use sgpw::run_spec::{MethodOptions, RunSpec, SvgpOptimizer};

/// An svgp model from init with the kernel `kind`, moved off the defaults, with a
/// random q(v).
fn model_for(data: &TrainData, m: usize, kind: KernelKind) -> ModelFile {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let options = MethodOptions {
        kernel: Some(kind.into()),
        ..Default::default()
    };
    let mut model = init(&SVGP, data, &svgp_spec(m, options), &mut rng).expect("init");
    model.hyper.lengthscales = model.hyper.lengthscales.iter().map(|l| l * 0.6).collect();
    model.hyper.noise_variance = 0.05;
    if kind == KernelKind::Rq {
        model.hyper.rq_alpha = Some(1.7);
    }
    set_variational(&mut model, &random_q(m, 5));
    model
}

/// σ0², ℓ, rq's α, σ² (with and without a noise floor), Z, μ and R, for the full-data
/// objective (chunked) and a minibatch estimate with c = n/B.
#[test]
fn every_gradient_matches_finite_differences() {
    let data = toy_data(40, 2, 11);
    for kind in [
        KernelKind::Se,
        KernelKind::Matern32,
        KernelKind::Matern52,
        KernelKind::Rq,
    ] {
        for (jitter, floor) in [(None, None), (Some(1e-6), Some(1e-3))] {
            let mut model = model_for(&data, 5, kind);
            model.jitter = jitter;
            model.noise_floor = floor;
            SVGP.check(&model).expect("valid");
            let theta = SVGP.pack(&model);
            // chunks of 7 rows: the sums over chunks are the whole
            let chunked = Exec {
                chunk_entries: 7 * 5,
                ..Default::default()
            };
            let o = SVGP.objective(&model, &data, &chunked).expect("objective");
            let whole = SVGP.objective(&model, &data, &ex()).expect("objective");
            assert_close("chunked objective", &[o.nlml], &[whole.nlml], 1e-12);
            assert_close("chunked gradient", &o.grad, &whole.grad, 1e-10);
            assert_eq!(theta.len(), o.grad.len());
            let mut scratch = model.clone();
            check_gradient(
                &format!("svgp {kind:?} jitter {jitter:?}"),
                &mut |t: &[f64]| {
                    SVGP.unpack(t, &mut scratch);
                    SVGP.nlml(&scratch, &data, &ex()).expect("nlml")
                },
                &theta,
                &o.grad,
                1e-5,
                1e-6,
            );
            // a minibatch of 9 rows, scaled by n/B
            let idx = [3, 17, 5, 22, 39, 0, 11, 28, 30];
            let (x, y) = rows_block(&data, &idx);
            let c = data.y.len() as f64 / idx.len() as f64;
            let batch = |m: &ModelFile, want| {
                evaluate(
                    m,
                    std::iter::once((x.clone(), y.as_slice())),
                    c,
                    want,
                    None,
                    &ex(),
                )
                .expect("batch")
            };
            let e = batch(&model, Want::All);
            check_gradient(
                &format!("svgp minibatch {kind:?}"),
                &mut |t: &[f64]| {
                    SVGP.unpack(t, &mut scratch);
                    batch(&scratch, Want::Value).elbo
                },
                &theta,
                &e.grad,
                1e-5,
                1e-6,
            );
        }
    }
}

/// The unpacked model is the packed one: pack ∘ unpack is the identity.
#[test]
fn pack_and_unpack_are_inverse() {
    let data = toy_data(30, 3, 2);
    let model = model_for(&data, 4, KernelKind::Se);
    let theta = SVGP.pack(&model);
    let mut back = model.clone();
    SVGP.unpack(&theta, &mut back);
    assert_eq!(SVGP.pack(&back), theta);
    assert_eq!(
        variational(&back, 4).expect("q"),
        variational(&model, 4).expect("q")
    );
}

/// With B = n and γ = 1 one natural-gradient step from any q lands on the optimal
/// q(u): the ELBO equals vfe's collapsed bound at the same Z and hyperparameters, a
/// second step stays put, the gradient in μ and R vanishes there, and the posterior
/// predicts as vfe's.
#[test]
fn one_full_step_lands_on_the_collapsed_bound() {
    let data = toy_data(60, 2, 7);
    for kind in [KernelKind::Se, KernelKind::Matern52] {
        let model = model_for(&data, 8, kind);
        let q0 = variational(&model, 8).expect("q");
        let e = evaluate(
            &model,
            std::iter::once((data.x.clone(), data.y.as_slice())),
            1.0,
            Want::Natural,
            None,
            &ex(),
        )
        .expect("evaluate");
        let q1 = natural_step(&q0, &e.d_mean_lik, &e.d_sigma_lik, 1.0, ex().par).expect("step");
        let mut opt = model.clone();
        set_variational(&mut opt, &q1);
        let svgp_bound = SVGP.nlml(&opt, &data, &ex()).expect("nlml");
        let mut vfe = ModelFile::new("vfe", model.hyper.clone());
        vfe.tables = model.tables.clone();
        vfe.tables.remove("variational");
        let vfe_bound = pseudo::VFE.nlml(&vfe, &data, &ex()).expect("vfe");
        let rel = (svgp_bound - vfe_bound).abs() / vfe_bound.abs();
        eprintln!("{kind:?}: svgp after one step {svgp_bound}, vfe {vfe_bound}, rel {rel:e}");
        assert!(
            rel < 1e-9,
            "{kind:?}: svgp {svgp_bound} vs vfe {vfe_bound} (rel {rel:e})"
        );
        // the start was worse, and the optimum is a fixed point with zero gradient in q
        assert!(SVGP.nlml(&model, &data, &ex()).expect("nlml") > svgp_bound + 1.0);
        let e1 = evaluate(
            &opt,
            std::iter::once((data.x.clone(), data.y.as_slice())),
            1.0,
            Want::Natural,
            None,
            &ex(),
        )
        .expect("evaluate");
        let q2 = natural_step(&q1, &e1.d_mean_lik, &e1.d_sigma_lik, 1.0, ex().par).expect("step");
        let d = (&q2.mean - &q1.mean)
            .amax()
            .max((&q2.chol - &q1.chol).amax());
        assert!(
            d < 1e-9 * (1.0 + q1.mean.amax()),
            "second step moved q by {d:e}"
        );
        let g = SVGP.objective(&opt, &data, &ex()).expect("objective").grad;
        let head = g.len() - 8 - 36;
        let gq = g[head..].iter().fold(0.0f64, |a, v| a.max(v.abs()));
        assert!(gq < 1e-7, "gradient in q at the optimum: {gq:e}");
        // its posterior predicts as vfe's
        let xs = toy_data(15, 2, 99).x;
        let (ps, _) = SVGP.posterior(&opt, &data, &ex()).expect("posterior");
        let (pv, _) = pseudo::VFE
            .posterior(&vfe, &data, &ex())
            .expect("posterior");
        let (ms, vs) = SVGP.predict(&opt, &ps, None, &xs, &ex()).expect("predict");
        let (mv, vv) = pseudo::VFE
            .predict(&vfe, &pv, None, &xs, &ex())
            .expect("predict");
        assert_close("mean", &ms, &mv, 1e-7);
        assert_close("variance", &vs, &vv, 1e-7);
    }
}

/// In the coordinates t = (θ₁, θ₂'s lower triangle) of the natural parameters, the
/// natural gradient is F(t)⁻¹ ∇_t ELBO with F the Fisher information, the Jacobian of
/// the expectation parameters η_t = ∂A/∂t = (μ, Σ_jj + μ_j², 2(Σ_ij + μ_iμ_j)). Both
/// by finite differences, against `natural_gradient`, on a minibatch (c = n/B).
#[test]
fn natural_gradient_is_the_fisher_preconditioned_gradient() {
    let data = toy_data(30, 2, 4);
    let m = 3;
    let model = model_for(&data, m, KernelKind::Se);
    let q = variational(&model, m).expect("q");
    let idx: Vec<usize> = (0..10).map(|i| 3 * i).collect();
    let (x, y) = rows_block(&data, &idx);
    let c = 3.0;
    let lower: Vec<(usize, usize)> = (0..m).flat_map(|j| (j..m).map(move |i| (i, j))).collect();
    let to_q = |t: &[f64]| -> Variational {
        let mut theta2 = DMatrix::zeros(m, m);
        for (k, &(i, j)) in lower.iter().enumerate() {
            theta2[(i, j)] = t[m + k];
            theta2[(j, i)] = t[m + k];
        }
        let cov = (theta2 * -2.0).try_inverse().expect("precision");
        let mean = &cov * DVector::from_column_slice(&t[..m]);
        let chol = cov.cholesky().expect("covariance").l();
        Variational { mean, chol }
    };
    let eta = |t: &[f64]| -> Vec<f64> {
        let q = to_q(t);
        let cov = q.covariance();
        let mut e: Vec<f64> = q.mean.iter().copied().collect();
        for &(i, j) in &lower {
            let s = cov[(i, j)] + q.mean[i] * q.mean[j];
            e.push(if i == j { s } else { 2.0 * s });
        }
        e
    };
    let elbo = |t: &[f64]| -> f64 {
        let mut mm = model.clone();
        set_variational(&mut mm, &to_q(t));
        evaluate(
            &mm,
            std::iter::once((x.clone(), y.as_slice())),
            c,
            Want::Value,
            None,
            &ex(),
        )
        .expect("elbo")
        .elbo
    };
    // t at q
    let prec = q.covariance().try_inverse().expect("inverse");
    let mut t: Vec<f64> = (&prec * &q.mean).iter().copied().collect();
    t.extend(lower.iter().map(|&(i, j)| -0.5 * prec[(i, j)]));
    let k = t.len();
    let h = 1e-5;
    let mut fisher = DMatrix::zeros(k, k);
    let mut grad = DVector::zeros(k);
    for a in 0..k {
        let (mut p, mut n) = (t.clone(), t.clone());
        p[a] += h;
        n[a] -= h;
        let (ep, en) = (eta(&p), eta(&n));
        for b in 0..k {
            fisher[(b, a)] = (ep[b] - en[b]) / (2.0 * h);
        }
        grad[a] = (elbo(&p) - elbo(&n)) / (2.0 * h);
    }
    let fd = fisher.lu().solve(&grad).expect("Fisher is invertible");
    let mut mm = model.clone();
    set_variational(&mut mm, &q);
    let e = evaluate(
        &mm,
        std::iter::once((x.clone(), y.as_slice())),
        c,
        Want::Natural,
        None,
        &ex(),
    )
    .expect("evaluate");
    let (d1, d2) = natural_gradient(&q, &prec, &e.d_mean_lik, &e.d_sigma_lik);
    let mut analytic: Vec<f64> = d1.iter().copied().collect();
    analytic.extend(lower.iter().map(|&(i, j)| d2[(i, j)]));
    assert_close("natural gradient", &analytic, fd.as_slice(), 1e-5);
    // and a step of γ moves θ by γ times it
    let gamma = 0.3;
    let q1 = natural_step(&q, &e.d_mean_lik, &e.d_sigma_lik, gamma, ex().par).expect("step");
    let prec1 = q1.covariance().try_inverse().expect("inverse");
    let mut t1: Vec<f64> = (&prec1 * &q1.mean).iter().copied().collect();
    t1.extend(lower.iter().map(|&(i, j)| -0.5 * prec1[(i, j)]));
    let want: Vec<f64> = t
        .iter()
        .zip(&analytic)
        .map(|(a, g)| a + gamma * g)
        .collect();
    assert_close("θ after the step", &t1, &want, 1e-9);
}

fn dataset(n: usize, seed: u64) -> sgpw::data::Dataset {
    let d = toy_data(n, 2, seed);
    let t = toy_data(50, 2, seed + 100);
    sgpw::data::Dataset {
        classes: None,
        feature_names: vec!["a".into(), "b".into()],
        target_name: "y".into(),
        x_train: d.x,
        y_train: DVector::from_vec(d.y),
        x_test: Some(t.x),
        y_test: Some(DVector::from_vec(t.y)),
        notes: Vec::new(),
    }
}

/// A run is bit-for-bit the same with its seed, and another seed shuffles otherwise;
/// both optimisers lower the full negative ELBO; natural-gradient training with
/// γ = 1 on the whole batch ends near vfe's bound at the points it reached.
#[test]
fn training_is_reproducible_and_improves_the_bound() {
    let ds = dataset(200, 21);
    for optimizer in [SvgpOptimizer::Natgrad, SvgpOptimizer::Adam] {
        let options = MethodOptions {
            batch: Some(32),
            epochs: Some(3),
            optimizer: Some(optimizer),
            lr: Some(0.02),
            elbo_every: Some(7),
            ..Default::default()
        };
        let s = RunSpec {
            standardize: true,
            ..svgp_spec(6, options.clone())
        };
        let (a, steps) = fit(&ds, &s);
        let a = a.expect("fit");
        let (b, _) = fit(&ds, &s);
        let b = b.expect("fit");
        // everything but the fit's wall-clock time
        assert_eq!(
            a.model.tables, b.model.tables,
            "{optimizer:?}: same seed, same bits"
        );
        assert_eq!(a.model.hyper, b.model.hyper);
        assert_eq!(a.model.posterior, b.model.posterior);
        assert_eq!(a.trace, b.trace);
        // 200/32 → 7 steps per epoch
        assert_eq!(steps.last().copied(), Some(21));
        assert_eq!(a.trace.len(), 22);
        let record: svgp::SvgpRecord = a.model.require().expect("[svgp]");
        assert_eq!(record.steps, 21);
        assert_eq!(record.epochs, 3.0);
        // the last after the closed-form q(u) at the end
        assert_eq!(record.full_at, [0, 7, 14, 21, 21]);
        assert!(
            record.full_neg_elbo[3] < record.full_neg_elbo[0],
            "{optimizer:?}: {:?}",
            record.full_neg_elbo
        );
        let other = RunSpec { seed: 2, ..s };
        let (c, _) = fit(&ds, &other);
        assert_ne!(c.expect("fit").trace, a.trace);
    }
}

/// The stopping rule's check is the epoch's own estimate (its steps' minibatch values
/// weighted by their rows), not another pass over the data: without --elbo-every a
/// natgrad fit of 3 epochs evaluates the start, two evaluations per step and the
/// closed-form q(u) at the end, and its record holds the bound at the start and the end
/// (a full pass at every epoch's end cost a third of the epoch's steps again).
#[test]
fn the_rule_s_check_costs_no_pass_over_the_data() {
    let ds = dataset(200, 21);
    let options = MethodOptions {
        batch: Some(32),
        epochs: Some(3),
        ..Default::default()
    };
    let s = RunSpec {
        standardize: true,
        ..svgp_spec(6, options)
    };
    let (a, _) = fit(&ds, &s);
    let a = a.expect("fit");
    let record: svgp::SvgpRecord = a.model.require().expect("[svgp]");
    // 200/32 → 7 steps per epoch
    assert_eq!(record.steps, 21);
    assert_eq!(record.full_at, [0, 21]);
    assert_eq!(a.evaluations, 1 + 2 * 21 + 1);
    assert!(record.full_neg_elbo[1] < record.full_neg_elbo[0]);
}

/// With its defaults (no --epochs, the default --iters), a small fit runs until the
/// stopping rule ends it: stop reason `converged`, the schedule's stages entered until
/// the batch is the whole data (the exact stage), well inside the default epochs
/// budget, and its bound below the start's.
#[test]
fn a_default_fit_stops_converged() {
    let ds = dataset(300, 5);
    let s = RunSpec {
        iters: sgpw::run_spec::DEFAULT_ITERATIONS,
        standardize: true,
        ..svgp_spec(10, MethodOptions::default())
    };
    let (r, _) = fit(&ds, &s);
    let r = r.expect("fit");
    assert_eq!(r.stop, sgpw::optim::Stop::Converged, "{:?}", r.stop);
    let record: svgp::SvgpRecord = r.model.require().expect("[svgp]");
    // 300 rows: the second stage's batch is the whole data, the exact stage
    assert_eq!(record.stage_at.len(), 1, "{record:?}");
    assert!(
        record.epochs < svgp::DEFAULT_EPOCHS as f64 / 2.0,
        "{}",
        record.epochs
    );
    let last = *record.full_neg_elbo.last().expect("a bound");
    assert!(last < record.full_neg_elbo[0], "{:?}", record.full_neg_elbo);
}

/// Error messages name the option: γ outside (0, 1], a batch larger than the data,
/// nat_step given to adam, svgp options given to another method.
#[test]
fn bad_options_are_refused_by_name() {
    let bad =
        |o: MethodOptions, n: usize| svgp_spec(5, o).check(n).expect_err("refused").to_string();
    let e = bad(
        MethodOptions {
            nat_step: Some(1.5),
            ..Default::default()
        },
        100,
    );
    assert!(e.contains("--nat-step"), "{e}");
    let e = bad(
        MethodOptions {
            batch: Some(101),
            ..Default::default()
        },
        100,
    );
    assert!(e.contains("--batch"), "{e}");
    let e = bad(
        MethodOptions {
            optimizer: Some(SvgpOptimizer::Adam),
            nat_step: Some(0.5),
            ..Default::default()
        },
        100,
    );
    assert!(e.contains("--nat-step"), "{e}");
    let e = RunSpec {
        method: "vfe".into(),
        ..svgp_spec(
            5,
            MethodOptions {
                epochs: Some(2),
                ..Default::default()
            },
        )
    }
    .check(100)
    .expect_err("not vfe's")
    .to_string();
    assert!(e.contains("--epochs"), "{e}");
    let _ = methods::get("svgp").expect("registered");
    let _ = RunContext::quiet(ex());
}

/// What the training loop's natural-gradient step evaluates is the full evaluation's:
/// `Want::Natural` gives `Want::All`'s gradients in μ and Σ, and `Want::Model` with the
/// projections kept from it gives `Want::All`'s value and its gradient in σ0², ℓ, σ², Z,
/// to the bit.
#[test]
fn the_training_step_s_evaluations_are_the_full_one_s() {
    let data = toy_data(50, 2, 8);
    let model = model_for(&data, 6, KernelKind::Matern52);
    let (x, y) = rows_block(&data, &(0..20).collect::<Vec<_>>());
    let c = 2.5;
    let eval = |want, cache: Option<&mut Vec<_>>| {
        evaluate(
            &model,
            std::iter::once((x.clone(), y.as_slice())),
            c,
            want,
            cache,
            &ex(),
        )
        .expect("evaluate")
    };
    let all = eval(Want::All, None);
    let mut cache = Vec::new();
    let nat = eval(Want::Natural, Some(&mut cache));
    assert_eq!(cache.len(), 1);
    assert!(nat.elbo.is_nan() && nat.grad.is_empty());
    assert_eq!(nat.d_mean_lik, all.d_mean_lik);
    assert_eq!(nat.d_sigma_lik, all.d_sigma_lik);
    let part = eval(Want::Model, Some(&mut cache));
    assert_eq!(part.elbo, all.elbo);
    let head = SVGP.pack(&model).len() - 6 - 21;
    assert_eq!(part.grad.len(), head);
    assert_eq!(part.grad[..], all.grad[..head]);
}

/// Processes simulated by threads (as `sgpw fit --distributed` runs them over MPI):
/// `all_sum` adds every thread's buffer in rank order, so every thread gets the same
/// bits.
#[derive(Debug)]
struct Threads {
    rank: usize,
    common: std::sync::Arc<(std::sync::Mutex<Vec<Vec<f64>>>, std::sync::Barrier)>,
}

impl sgpw::exec::RowShare for Threads {
    fn all_sum(&self, buf: &mut [f64]) -> sgpw::error::Result<()> {
        let (slots, barrier) = &*self.common;
        slots.lock().expect("slots")[self.rank] = buf.to_vec();
        barrier.wait();
        {
            let all = slots.lock().expect("slots");
            assert!(
                all.iter().all(|b| b.len() == buf.len()),
                "sums of one shape"
            );
            for (i, v) in buf.iter_mut().enumerate() {
                *v = all.iter().map(|b| b[i]).sum();
            }
        }
        barrier.wait();
        Ok(())
    }
    fn is_root(&self) -> bool {
        self.rank == 0
    }
    fn announce(
        &self,
        _: sgpw::exec::Evaluation,
        _: &dyn std::any::Any,
    ) -> sgpw::error::Result<()> {
        Ok(())
    }
}

/// `f(rank, exec)` on `k` threads, each with an `Exec` whose sums add over the threads.
fn on_threads<T: Send>(k: usize, f: impl Fn(usize, Exec) -> T + Sync) -> Vec<T> {
    let common = std::sync::Arc::new((
        std::sync::Mutex::new(vec![Vec::new(); k]),
        std::sync::Barrier::new(k),
    ));
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..k)
            .map(|rank| {
                let share = std::sync::Arc::new(Threads {
                    rank,
                    common: common.clone(),
                });
                let f = &f;
                s.spawn(move || f(rank, Exec::default().with_share(share)))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("thread"))
            .collect()
    })
}

/// A minibatch whose rows are spread over 2, 3 and 4 processes (contiguous stripes of
/// the rows, as a distributed fit holds them; with 4 the last holds none of the batch),
/// each evaluating the members it holds with its sums added across them, gives what one
/// process gives on the whole batch to 1e-12: the value, the gradient of the head, Z,
/// μ and R, and the natural-gradient statistics, for each thing a step asks for. And a
/// failure on one process is an error on every process, not a wait.
#[test]
fn a_minibatch_over_processes_is_the_one_process_minibatch() {
    let data = toy_data(40, 2, 11);
    let model = model_for(&data, 5, KernelKind::Matern52);
    let idx = [3, 17, 5, 22, 0, 11, 28, 25, 14];
    let c = data.y.len() as f64 / idx.len() as f64;
    let (x, y) = rows_block(&data, &idx);
    for want in [Want::Value, Want::Natural, Want::Model, Want::All] {
        let one = evaluate(
            &model,
            std::iter::once((x.clone(), y.as_slice())),
            c,
            want,
            None,
            &ex(),
        )
        .expect("one process");
        for k in [2, 3, 4] {
            let n = data.y.len();
            let many = on_threads(k, |rank, exec| {
                let mine = rank * n / k..(rank + 1) * n / k;
                let held: Vec<usize> = idx.iter().copied().filter(|i| mine.contains(i)).collect();
                let (x, y) = rows_block(&data, &held);
                let block = (!held.is_empty()).then_some((x, y.as_slice()));
                evaluate(&model, block.into_iter(), c, want, None, &exec).expect("shared")
            });
            let what = format!("{want:?} over {k}");
            for e in &many[1..] {
                assert_eq!(e.grad, many[0].grad, "{what}: every process the same bits");
                assert_eq!(e.d_sigma_lik, many[0].d_sigma_lik, "{what}");
            }
            let e = &many[0];
            if want != Want::Natural {
                assert_close(&format!("{what}: ELBO"), &[e.elbo], &[one.elbo], 1e-12);
            }
            assert_close(&format!("{what}: gradient"), &e.grad, &one.grad, 1e-12);
            if want != Want::Value {
                assert_close(
                    &format!("{what}: ∂/∂μ"),
                    e.d_mean_lik.as_slice(),
                    one.d_mean_lik.as_slice(),
                    1e-12,
                );
                assert_close(
                    &format!("{what}: ∂/∂Σ"),
                    e.d_sigma_lik.as_slice(),
                    one.d_sigma_lik.as_slice(),
                    1e-12,
                );
            }
        }
    }
    // process 1 is cancelled: every process's evaluation fails
    let failed = on_threads(3, |rank, exec| {
        if rank == 1 {
            exec.cancel.cancel();
        }
        let block = std::iter::once((x.clone(), y.as_slice()));
        evaluate(&model, block, c, Want::All, None, &exec).map(|_| ())
    });
    assert!(failed.iter().all(|r| r.is_err()), "{failed:?}");
}

/// vfe's collapsed bound at the Z and hyperparameters of an svgp model.
fn vfe_bound_at(model: &ModelFile, data: &TrainData) -> f64 {
    let mut vfe = model.clone();
    vfe.method = "vfe".into();
    vfe.posterior = None;
    vfe.tables.remove("variational");
    vfe.tables.remove("svgp");
    pseudo::VFE.nlml(&vfe, data, &ex()).expect("vfe")
}

/// A fit ends with q(u) at its closed-form optimum, even when minibatch steps end it
/// (here its budget, three epochs of batches of 32): SVGP at its optimal q(u) is VFE,
/// so its bound is vfe's collapsed bound at the Z and hyperparameters reached, and the
/// record's last value is that bound.
#[test]
fn a_fit_ends_at_the_optimal_q() {
    let ds = dataset(200, 21);
    let data = toy_data(200, 2, 21);
    let options = MethodOptions {
        batch: Some(32),
        epochs: Some(3),
        ..Default::default()
    };
    let (r, _) = fit(&ds, &svgp_spec(6, options));
    let r = r.expect("fit");
    assert_eq!(r.stop, sgpw::optim::Stop::Budget);
    // the model's units: the targets less their mean
    let mut data = data;
    data.y.iter_mut().for_each(|v| *v -= r.model.target_mean);
    let svgp_bound = SVGP.nlml(&r.model, &data, &ex()).expect("nlml");
    let vfe_bound = vfe_bound_at(&r.model, &data);
    let rel = (svgp_bound - vfe_bound).abs() / vfe_bound.abs();
    assert!(rel < 1e-9, "svgp {svgp_bound} vs vfe {vfe_bound} ({rel:e})");
    let record: svgp::SvgpRecord = r.model.require().expect("[svgp]");
    let last = *record.full_neg_elbo.last().expect("a bound");
    assert!(
        (last - svgp_bound).abs() < 1e-9 * svgp_bound.abs(),
        "{last} {svgp_bound}"
    );
}

/// With its defaults, once the batch is the whole data the fit finishes with L-BFGS on
/// the bound at the optimal q(u) (the exact stage): it ends at vfe's bound from its own
/// fit (vfe with its defaults, one start), not short of it as Adam's steps at the
/// stages' halved rates left it.
#[test]
fn a_default_fit_reaches_vfe_s_bound() {
    let ds = dataset(300, 5);
    let s = RunSpec {
        iters: sgpw::run_spec::DEFAULT_ITERATIONS,
        ..svgp_spec(10, MethodOptions::default())
    };
    let (r, _) = fit(&ds, &s);
    let r = r.expect("fit");
    let svgp_bound = r.nlml;
    let v = RunSpec {
        method: "vfe".into(),
        ..svgp_spec(
            10,
            MethodOptions {
                single_start: true,
                ..Default::default()
            },
        )
    };
    let v = RunSpec {
        iters: sgpw::run_spec::DEFAULT_ITERATIONS,
        ..v
    };
    let (vr, _) = fit(&ds, &v);
    let vr = vr.expect("vfe fit");
    let vfe_bound = vr.nlml;
    eprintln!("vfe {:?} after {}", vr.stop, vr.iterations);
    let record: svgp::SvgpRecord = r.model.require().expect("[svgp]");
    eprintln!(
        "svgp {svgp_bound} ({} steps, stages at {:?}), vfe {vfe_bound}",
        record.steps, record.stage_at
    );
    assert!(
        svgp_bound < vfe_bound + 1e-3 * 300.0,
        "svgp {svgp_bound}, vfe {vfe_bound}"
    );
}
