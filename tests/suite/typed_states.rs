//! The families' typed states (issue 44): an L-BFGS fit of spgp-dr, pca-spgp, the
//! EigenGP methods, nystrom-opt and greedy's adaptation (their basis as the pseudo-input
//! family's state) unpacks θ into the family's typed state (`Method::typed_fit`) instead
//! of into a copy of the model file; the objective and its gradient there must be the
//! model file's bit for bit — at a θ away from the start, with fixed blocks, the rq and
//! Matérn kernels, SPGP+DR's pseudo-noise, EigenGP's tie and weights, a composed kernel
//! and the bernoulli likelihood (θ without σ²), in one piece and in chunks.

use crate::common::*;
use nalgebra::DMatrix;
use rand::SeedableRng;
use sgpw::exec::Exec;
use sgpw::kernel::expression::KernelExpr;
use sgpw::kernel::{ComposedKernel, KernelKind, Start, build};
use sgpw::likelihoods::{BinaryLabels, LikelihoodKind, LikelihoodTable};
use sgpw::methods::eigen::{self, Eigen, eigen_system, tie_weights};
use sgpw::methods::method::check_model;
use sgpw::model_file::ModelFile;
use sgpw::params::ParamLayout;
use sgpw::run_spec::{MethodOptions, RunSpec};

struct Case {
    method: &'static str,
    dims: Option<usize>,
    hetero: bool,
    kernel: KernelKind,
    fixed: &'static [&'static str],
    /// EigenGP with `[eigen]` weights at the tie (its sequential stage 2).
    weights: bool,
    composed: Option<&'static str>,
    bernoulli: bool,
}

const BASE: Case = Case {
    method: "",
    dims: None,
    hetero: false,
    kernel: KernelKind::Se,
    fixed: &[],
    weights: false,
    composed: None,
    bernoulli: false,
};

fn data(bernoulli: bool) -> TrainData {
    let (n, d) = (60, 3);
    let x = DMatrix::from_fn(n, d, |i, k| ((i * (k + 2)) as f64 * 0.37).sin() * 2.0);
    let y = (0..n)
        .map(|i| {
            let f = (x[(i, 0)] + 0.5 * x[(i, 1)]).sin() + 0.3 * x[(i, 2)];
            if bernoulli {
                f64::from(u8::from(f > 0.0))
            } else {
                f
            }
        })
        .collect();
    TrainData {
        x,
        y,
        log_exposure: None,
    }
}

fn model_of(c: &Case, data: &TrainData) -> ModelFile {
    let method = sgpw::methods::get(c.method).expect("a method");
    let spec = RunSpec {
        method: c.method.into(),
        m: 7,
        seed: 3,
        iters: 10,
        standardize: false,
        options: MethodOptions {
            dims: c.dims,
            hetero: c.hetero,
            ..MethodOptions::default()
        },
    };
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    let mut model = init(method, data, &spec, &mut rng).expect("inits");
    model.hyper = model.hyper.clone().with_kernel(c.kernel);
    if let Some(text) = c.composed {
        let d = data.x.ncols();
        let start = Start {
            columns: (0..d).map(|i| format!("x{i}")).collect(),
            variance: 1.0,
            lengthscales: vec![1.0; d],
            periods: vec![1.5; d],
            mean_squares: vec![1.0; d],
        };
        let expr = KernelExpr::parse(text).expect("parses");
        model.composed = ComposedKernel::new(build(&expr, &start).expect("builds"));
        model.hyper.lengthscales.clear();
    }
    if c.weights {
        let b = eigen::basis_points(&model).expect("B");
        let eig = eigen_system(&model, &b, &ex()).expect("eigen");
        model.set(&Eigen {
            weights: tie_weights(&eig.lambda),
        });
    }
    if c.bernoulli {
        model.likelihood = LikelihoodTable::start(
            LikelihoodKind::Bernoulli,
            Some(BinaryLabels { labels: [0.0, 1.0] }),
        );
    } else {
        model.hyper.noise_variance = 0.1;
        model.noise_floor = Some(0.01);
    }
    model.fixed = c.fixed.iter().map(|f| f.to_string()).collect();
    check_model(method, &model).expect("a valid model");
    model
}

#[test]
fn the_typed_states_evaluate_to_the_model_files_bits() {
    let cases = [
        Case {
            method: "spgp-dr",
            dims: Some(2),
            ..BASE
        },
        Case {
            method: "spgp-dr",
            dims: Some(2),
            hetero: true,
            kernel: KernelKind::Rq,
            fixed: &["rq_alpha", "noise_variance"],
            ..BASE
        },
        Case {
            method: "spgp-dr",
            dims: Some(3),
            hetero: true,
            kernel: KernelKind::Matern32,
            fixed: &["signal_variance"],
            ..BASE
        },
        Case {
            method: "pca-spgp",
            dims: Some(2),
            ..BASE
        },
        Case {
            method: "pca-spgp",
            dims: Some(2),
            kernel: KernelKind::Rq,
            fixed: &["lengthscales", "inducing_inputs"],
            ..BASE
        },
        // the DTC and FITC ties (no [eigen])
        Case {
            method: "eigengp",
            ..BASE
        },
        Case {
            method: "eigengp-plus",
            kernel: KernelKind::Matern52,
            fixed: &["basis_points"],
            ..BASE
        },
        // with weights: the joint fit and the sequential weights stage
        Case {
            method: "eigengp-joint",
            ..BASE
        },
        Case {
            method: "eigengp-joint",
            kernel: KernelKind::Rq,
            fixed: &["eigen_weights", "lengthscales"],
            ..BASE
        },
        Case {
            method: "eigengp",
            weights: true,
            fixed: &["signal_variance", "lengthscales", "basis_points"],
            ..BASE
        },
        Case {
            method: "eigengp-plus",
            weights: true,
            kernel: KernelKind::Matern12,
            ..BASE
        },
        Case {
            method: "eigengp-joint",
            composed: Some("se + linear"),
            ..BASE
        },
        Case {
            method: "eigengp-joint",
            bernoulli: true,
            ..BASE
        },
        Case {
            method: "eigengp",
            bernoulli: true,
            ..BASE
        },
        // the selection method fitted by L-BFGS: no model rewritten as dtc's
        Case {
            method: "nystrom-opt",
            ..BASE
        },
        Case {
            method: "nystrom-opt",
            kernel: KernelKind::Rq,
            fixed: &["rq_alpha", "noise_variance", "basis_points"],
            ..BASE
        },
        Case {
            method: "nystrom-opt",
            composed: Some("se + se * periodic"),
            ..BASE
        },
        // greedy's adaptation fits: the shared blocks at the selected basis
        Case {
            method: "greedy",
            ..BASE
        },
        Case {
            method: "greedy",
            kernel: KernelKind::Matern32,
            fixed: &["noise_variance"],
            ..BASE
        },
        Case {
            method: "greedy",
            composed: Some("se + se * periodic"),
            ..BASE
        },
    ];
    for c in &cases {
        let data = data(c.bernoulli);
        let method = sgpw::methods::get(c.method).expect("a method");
        let model = model_of(c, &data);
        // a point the optimiser can reach: the fixed blocks' entries at the start
        let mut theta = method.pack(&model);
        let layout = ParamLayout::new(&model, method.tail_blocks(), theta.len());
        for i in layout.free(0..theta.len()) {
            theta[i] += 0.05 * (i as f64 * 0.7).sin();
        }
        let mut file = model.clone();
        method.unpack(&theta, &mut file);
        layout.hold_fixed(&model, &mut file);
        let chunked = Exec {
            chunk_entries: 20 * 7,
            ..Exec::sequential()
        };
        // EP starts each evaluation from the last one's sites: one evaluation each
        let execs = if c.bernoulli {
            vec![Exec::sequential()]
        } else {
            vec![Exec::sequential(), chunked]
        };
        let what = format!(
            "{} {} dims {:?} hetero {} weights {} composed {:?} bernoulli {} fixed {:?}",
            c.method, c.kernel, c.dims, c.hetero, c.weights, c.composed, c.bernoulli, c.fixed
        );
        for exec in execs {
            let mut typed = method.typed_fit(&model).expect("a typed state");
            typed.unpack(&theta, &layout);
            let (mut g_typed, mut g_file) = (Vec::new(), Vec::new());
            let v_typed = typed
                .objective_into(&data, &exec, &mut g_typed)
                .expect("typed");
            let v_file = method
                .objective_into(&file, &data, &exec, &mut g_file)
                .expect("file");
            assert!(v_typed.0.is_finite(), "{what}");
            assert_eq!(v_typed.0.to_bits(), v_file.0.to_bits(), "{what}");
            assert_eq!(g_typed.len(), theta.len(), "{what}");
            assert_eq!(g_typed.len(), g_file.len(), "{what}");
            for (i, (a, b)) in g_typed.iter().zip(&g_file).enumerate() {
                assert_eq!(a.to_bits(), b.to_bits(), "{what}: entry {i}: {a} {b}");
            }
            // θ moved the model: the typed state is not the start's
            let start = method.objective(&model, &data, &exec).expect("start").nlml;
            assert_ne!(start.to_bits(), v_typed.0.to_bits(), "{what}");
        }
    }
}

/// The RVM's typed state (issue 44): read once from its model file, θ unpacked into it
/// gives the file's objective and gradient bit for bit, and that gradient is the
/// objective's (central differences), with the bias, with a composed kernel, and with σ²
/// (the likelihood's) fixed.
#[test]
fn the_rvms_typed_state_is_its_files_and_its_gradient_the_objectives() {
    use sgpw::methods::rvm::Relevance;
    let data = toy_data(40, 2, 7);
    let rvm = sgpw::methods::get("rvm").expect("rvm");
    let spec = RunSpec {
        method: "rvm".into(),
        m: 6,
        seed: 3,
        iters: 10,
        standardize: false,
        options: MethodOptions::default(),
    };
    let start = init(
        rvm,
        &data,
        &spec,
        &mut rand_chacha::ChaCha8Rng::seed_from_u64(3),
    )
    .expect("inits");
    let cases: [(Option<&str>, bool, &[&str]); 3] = [
        (None, true, &[]),
        (Some("se + linear"), false, &[]),
        (None, false, &["noise_variance", "lengthscales"]),
    ];
    for (composed, bias, fixed) in cases {
        let mut model = start.clone();
        let points = DMatrix::from_fn(5, 2, |i, d| data.x[(3 * i, d)]);
        model.set(&Relevance {
            points: rows(&points),
            alpha: vec![0.5, 2.0, 1.3, 0.8, 4.0],
            bias_alpha: bias.then_some(0.7),
            rows: vec![0, 3, 6, 9, 12],
        });
        model.hyper.noise_variance = 0.1;
        model.noise_floor = Some(0.01);
        if let Some(text) = composed {
            let s = Start {
                columns: vec!["x0".into(), "x1".into()],
                variance: 1.0,
                lengthscales: vec![1.0; 2],
                periods: vec![1.5; 2],
                mean_squares: vec![1.0; 2],
            };
            let expr = KernelExpr::parse(text).expect("parses");
            model.composed = ComposedKernel::new(build(&expr, &s).expect("builds"));
            model.hyper.lengthscales.clear();
        }
        model.fixed = fixed.iter().map(|f| f.to_string()).collect();
        check_model(rvm, &model).expect("a valid model");
        let what = format!("rvm composed {composed:?} bias {bias} fixed {fixed:?}");
        assert_typed_state_is_the_files(rvm, &model, &data, &what);
        let theta = rvm.pack(&model);
        let mut grad = Vec::new();
        rvm.objective_into(&model, &data, &ex(), &mut grad)
            .expect("objective");
        let mut value = |t: &[f64]| {
            let mut m = model.clone();
            rvm.unpack(t, &mut m);
            rvm.objective(&m, &data, &ex()).expect("objective").nlml
        };
        check_gradient(&what, &mut value, &theta, &grad, 1e-5, 1e-4);
    }
}

/// A typed state holds its model's likelihood, and the core asks it for σ²: a state read
/// from a Poisson model (which has no Gaussian noise) refuses the collapsed objective,
/// naming the likelihood, instead of evaluating it with the number a model without σ²
/// holds in its place.
#[test]
fn a_typed_state_without_gaussian_noise_gives_the_core_no_noise_variance() {
    use sgpw::collapsed::Approx;
    use sgpw::methods::lowrank::Family;
    use sgpw::methods::pseudo::FITC;
    let data = toy_data(30, 2, 5);
    let spec = RunSpec {
        method: "fitc".into(),
        m: 5,
        seed: 3,
        iters: 10,
        standardize: false,
        options: MethodOptions::default(),
    };
    let fitc = sgpw::methods::get("fitc").expect("fitc");
    let mut model = init(
        fitc,
        &data,
        &spec,
        &mut rand_chacha::ChaCha8Rng::seed_from_u64(3),
    )
    .expect("inits");
    let gaussian = FITC
        .family
        .state(&model, &sgpw::scratch::Scratch::default())
        .expect("a state")
        .into_owned();
    let mut grad = Vec::new();
    FITC.typed_from(gaussian, Approx::Fitc)
        .objective_into(&data, &ex(), &mut grad)
        .expect("the Gaussian's σ²");
    model.likelihood = LikelihoodTable::start(LikelihoodKind::Poisson, None);
    model.hold_unused_noise();
    let state = FITC
        .family
        .state(&model, &sgpw::scratch::Scratch::default())
        .expect("a state")
        .into_owned();
    let e = FITC
        .typed_from(state, Approx::Fitc)
        .objective_into(&data, &ex(), &mut grad)
        .expect_err("no σ² for the core");
    assert!(e.to_string().contains("poisson"), "{e}");
}
