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
