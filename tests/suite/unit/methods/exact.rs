use nalgebra::DMatrix;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sgpw::data::TrainData;
use sgpw::exec::Exec;
use sgpw::kernel::KernelKind;
use sgpw::methods::Method;
use sgpw::methods::exact::*;
use sgpw::model_file::Hyper;
use sgpw::model_file::ModelFile;
use sgpw::params::Pins;
use sgpw::run_context::RunContext;
use std::f64::consts::PI;

/// 16 inputs of which 3 matter, 600 points.
fn sixteen_inputs() -> TrainData {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let x: DMatrix<f64> = DMatrix::from_fn(600, 16, |_, _| rng.random_range(-1.0..1.0));
    let y = (0..600)
        .map(|i| {
            (2.0 * x[(i, 0)]).sin() + x[(i, 1)] * x[(i, 2)] + 0.1 * rng.random_range(-1.0f64..1.0)
        })
        .collect();
    TrainData {
        x,
        y,
        log_exposure: None,
    }
}

/// The six starts fitted side by side, each on one thread, end where the same
/// starts fitted one after another on one thread end, to the bit and in the order
/// of the starts (250 points: the default part; 600: a part of 50 inputs); on 250
/// points also where each fitted over the pool's threads ends (the previous loop:
/// the part whose end is refined keeps its bits).
#[test]
fn starts_side_by_side_end_where_starts_one_after_another_end() {
    let data = sixteen_inputs();
    let data = TrainData {
        x: data.x.columns(0, 8).into_owned(),
        ..data
    };
    let (kernel, pins) = (SubsetKernel::Plain(KernelKind::Se), Pins::none());
    let pool = RunContext::quiet(Exec {
        par: sgpw::exec::Par::Threads(2),
        ..Exec::default()
    });
    let one = RunContext::quiet(Exec {
        par: sgpw::exec::Par::Seq,
        ..Exec::default()
    });
    let bits = |e: &(ModelFile, f64, String)| -> (Vec<u64>, String) {
        let h = &e.0.hyper;
        let mut v: Vec<u64> = h.lengthscales.iter().map(|l| l.to_bits()).collect();
        v.extend([h.signal_variance, h.noise_variance, e.1].map(f64::to_bits));
        (v, e.2.clone())
    };
    for (n, iters) in [(250, 40), (600, 8)] {
        let sub = subset(&data, n, &mut ChaCha8Rng::seed_from_u64(2));
        let side: Vec<_> = fit_starts(&sub, kernel, iters, &pins, &pool).unwrap();
        let seq: Vec<_> = fit_starts(&sub, kernel, iters, &pins, &one).unwrap();
        let names: Vec<String> = subset_starts(&sub, kernel)
            .into_iter()
            .map(|s| s.1)
            .collect();
        assert_eq!(side.iter().map(|e| e.2.clone()).collect::<Vec<_>>(), names);
        assert_eq!(
            side.iter().map(bits).collect::<Vec<_>>(),
            seq.iter().map(bits).collect::<Vec<_>>(),
            "on {n}"
        );
        if n == 250 {
            let before: Vec<_> = subset_starts(&sub, kernel)
                .into_iter()
                .map(|(start, name)| {
                    let (m, f) = fit_on(&sub, start, iters, &pins, &pool).unwrap();
                    (m, f, name)
                })
                .collect();
            assert_eq!(
                side.iter().map(bits).collect::<Vec<_>>(),
                before.iter().map(bits).collect::<Vec<_>>()
            );
        }
    }
}

/// The two ways the second start's subset fit ends: a part with fewer points per
/// hyperparameter than asked hands its winning start to all the subset's points
/// (fitted from where it began, as six whole fits would fit it), a part with
/// enough hands its end to a short refinement.
#[test]
fn a_thin_part_hands_its_winning_start_to_all_the_points() {
    let data = sixteen_inputs();
    let ctx = RunContext::quiet(Exec::default());
    let kernel = SubsetKernel::Plain(KernelKind::Se);
    let pins = Pins::none();
    let (n_sub, n_warm, iters, refine) = (300, 120, 60, 5);
    let run = |per_parameter: usize| {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let hyper_from = warm_then_all(
            &data,
            (n_sub, n_warm),
            kernel,
            (iters, refine, per_parameter, 0.0),
            &pins,
            &ctx,
            &mut rng,
        )
        .unwrap();
        // the same subset and part, their winner by hand
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let sub = subset(&data, n_sub, &mut rng);
        let warm = TrainData {
            x: sub.x.rows(0, n_warm).into_owned(),
            y: sub.y[..n_warm].to_vec(),
            log_exposure: None,
        };
        let (end, _, name) = best_of_starts(&warm, kernel, iters, &pins, &ctx).unwrap();
        assert_eq!(hyper_from.1, name);
        (hyper_from.0, sub, end, name)
    };
    // 120 points for 18 hyperparameters: fewer than 20 each
    let (thin, sub, _, name) = run(20);
    let start = subset_starts(&sub, kernel)
        .into_iter()
        .find(|(_, n)| *n == name)
        .unwrap()
        .0;
    let (whole, _) = fit_on(&sub, start, iters, &pins, &ctx).unwrap();
    assert_eq!(thin.hyper.lengthscales, whole.hyper.lengthscales);
    assert_eq!(thin.hyper.noise_variance, whole.hyper.noise_variance);
    // at least 5 each: the part's end refined
    let (enough, sub, end, _) = run(5);
    let (refined, _) = fit_on(&sub, end, refine, &pins, &ctx).unwrap();
    assert_eq!(enough.hyper.lengthscales, refined.hyper.lengthscales);
    assert_ne!(enough.hyper.lengthscales, thin.hyper.lengthscales);
}

/// A thin part that cannot rank its best starts apart hands each of them to all the
/// points: where the part's winner is not the start the whole subset ranks first,
/// a start tied with it on the part (within the margin) is fitted on all the points
/// too, and the lower end there is kept — the six whole fits' result, which the
/// part's winner alone (the previous rule, a margin of 0) misses.
#[test]
fn a_thin_part_hands_on_every_start_it_cannot_rule_out() {
    let data = sixteen_inputs();
    let ctx = RunContext::quiet(Exec::default());
    let (kernel, pins) = (SubsetKernel::Plain(KernelKind::Se), Pins::none());
    let (n_sub, n_warm, iters) = (240, 60, 40);
    // a subset whose part ranks another start first than all its points do
    let found = (1..40u64).find_map(|seed| {
        let sub = subset(&data, n_sub, &mut ChaCha8Rng::seed_from_u64(seed));
        let warm = TrainData {
            x: sub.x.rows(0, n_warm).into_owned(),
            y: sub.y[..n_warm].to_vec(),
            log_exposure: None,
        };
        let part = fit_starts(&warm, kernel, iters, &pins, &ctx).unwrap();
        let (_, part_best, part_name) = lowest(part.clone(), n_warm).unwrap();
        let (whole, _, whole_name) = best_of_starts(&sub, kernel, iters, &pins, &ctx).unwrap();
        let gap = part.iter().find(|e| e.2 == whole_name)?.1 - part_best;
        (whole_name != part_name).then_some((seed, gap, whole, whole_name))
    });
    let (seed, gap, whole, whole_name) = found.expect("a subset the part misranks");
    let run = |tie_nats: f64| {
        let stages = (iters, 5, 20, tie_nats);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        warm_then_all(
            &data,
            (n_sub, n_warm),
            kernel,
            stages,
            &pins,
            &ctx,
            &mut rng,
        )
        .unwrap()
    };
    // 60 points for 18 hyperparameters: thin
    let tied = run(gap + 1.0);
    assert_eq!(tied.1, whole_name);
    assert_eq!(tied.0.hyper.lengthscales, whole.hyper.lengthscales);
    let winner_only = run(0.0);
    assert_ne!(winner_only.1, whole_name, "gap {gap}");
}

/// A composed kernel's subset starts are per-part scalings of its own free
/// parameters: every free lengthscale block times 1, √D (D its part's inputs) and
/// 10, with σ² at σ0²/4 and σ0²/100; variances and a fixed period are not moved.
/// Its subset fit (six starts on a part, the best refined) ends with the composed
/// kernel fitted and the fixed period and the pinned σ² exactly where they were.
#[test]
fn a_composed_kernels_subset_starts_scale_its_parts_and_hold_what_is_fixed() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let x: DMatrix<f64> = DMatrix::from_fn(300, 2, |i, d| {
        if d == 0 {
            i as f64 / 30.0
        } else {
            rng.random_range(-1.0..1.0)
        }
    });
    let y: Vec<f64> = (0..300)
        .map(|i| {
            (2.0 * PI * x[(i, 0)] / 1.3).sin()
                + 0.5 * x[(i, 1)]
                + 0.1 * rng.random_range(-1.0f64..1.0)
        })
        .collect();
    let data = TrainData {
        x,
        y,
        log_exposure: None,
    };
    let mut start = ModelFile::new(Exact.name(), Hyper::se(0.8, vec![1.0, 1.0], 0.2));
    let names = vec!["t".to_string(), "u".to_string()];
    let expression = "se + matern52(dims=[u]) + periodic(dims=[t], period=1.3, fix=period)";
    sgpw::train::set_composed_kernel(&mut start, expression, &data, &names, None, &[])
        .expect("builds");
    let block = |m: &ModelFile, name: &str| -> Vec<f64> {
        let blocks = m.composed.as_ref().expect("composed").kernel().blocks();
        blocks
            .into_iter()
            .find(|b| b.name == name)
            .map(|b| b.values)
            .unwrap_or_default()
    };
    assert!(
        block(&start, "periodic.period").is_empty(),
        "fixed: no block"
    );
    let starts = subset_starts(&data, SubsetKernel::Composed(&start));
    assert_eq!(starts.len(), 6);
    for (s, name) in &starts {
        let scale = |d: usize| match name {
            n if n.contains("× √D") => (d as f64).sqrt(),
            n if n.contains("× 10") => 10.0,
            _ => 1.0,
        };
        let times = |key: &str, d: usize| -> Vec<f64> {
            block(&start, key).iter().map(|l| l * scale(d)).collect()
        };
        assert_eq!(block(s, "se.ls"), times("se.ls", 2), "{name}");
        assert_eq!(block(s, "matern52.ls"), times("matern52.ls", 1), "{name}");
        assert_eq!(block(s, "periodic.ls"), times("periodic.ls", 1), "{name}");
        for var in ["se.var", "matern52.var", "periodic.var"] {
            assert_eq!(block(s, var), block(&start, var), "{name}");
        }
        let split = if name.ends_with("/4") { 4.0 } else { 100.0 };
        assert_eq!(s.hyper.noise_variance, 0.8 / split, "{name}");
    }
    // σ² pinned, the period fixed in the expression: the subset fit moves neither
    let pinned = Hyper::se(0.8, vec![1.0, 1.0], 0.0123);
    let fix = [sgpw::fix::Fix {
        name: sgpw::params::NOISE_VARIANCE.into(),
        value: None,
    }];
    let pins = Pins::new(&fix, &pinned);
    let ctx = RunContext::quiet(Exec::default());
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let (end, _) = subset_start_warm(
        &data,
        (200, 80),
        SubsetKernel::Composed(&start),
        (30, 5),
        &pins,
        &ctx,
        &mut rng,
    )
    .expect("fits");
    assert_eq!(end.hyper.noise_variance, 0.0123);
    let written = end.composed.as_ref().expect("composed").expression();
    assert!(written.contains("period=1.3, fix=period)"), "{written}");
    assert_ne!(block(&end, "se.ls"), block(&start, "se.ls"), "fitted");
}
