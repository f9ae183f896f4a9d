//! svgp over a feature family (`--family`, docs/methods.md §8.6): with the Gaussian
//! likelihood at the optimal q(u) its ELBO is the collapsed bound over the same family
//! (vfe for the inter-domain families, the spectral families' DTC, which is their VFE)
//! at identical parameters, and so is its gradient in the hyperparameters and the
//! family's own; the bound's gradient matches finite differences on the whole data and
//! on a minibatch, for the Gaussian and the Bernoulli likelihood; a classifier over
//! FIF features fits end to end; the refusals name the option.

use crate::common;
use common::*;
use nalgebra::{DMatrix, DVector};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use sgpw::likelihoods::{LikelihoodKind, LikelihoodTable};
use sgpw::methods::svgp::elbo::{Want, natural_step};
use sgpw::methods::svgp::{SVGP, evaluate, set_variational, variational};
use sgpw::methods::{self, Method};
use sgpw::model_file::ModelFile;
use sgpw::run_spec::{ApproxKind, MethodOptions, SvgpFeatures};

/// Every family svgp takes besides pseudo-inputs, and the collapsed method over it
/// whose bound svgp's is at the optimal q(u).
const FAMILIES: [(SvgpFeatures, &str); 5] = [
    (SvgpFeatures::Fifgp, "fifgp"),
    (SvgpFeatures::Tfifgp, "tfifgp"),
    (SvgpFeatures::Smgp, "smgp"),
    (SvgpFeatures::Psds, "psds"),
    (SvgpFeatures::Ssgp, "ssgp"),
];

/// An svgp model over `family` from init (m features; 2m for the spectral families),
/// its hyperparameters moved off the defaults, a random q(v). tfifgp's centres start
/// at training inputs, so that they matter.
fn model_over(data: &TrainData, family: SvgpFeatures, m: usize) -> ModelFile {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let options = MethodOptions {
        family: Some(family),
        ..Default::default()
    };
    let mut model = init(&SVGP, data, &svgp_spec(m, options), &mut rng).expect("init");
    model.hyper.lengthscales = model.hyper.lengthscales.iter().map(|l| l * 0.6).collect();
    model.hyper.noise_variance = 0.05;
    let q_len = match family {
        SvgpFeatures::Psds | SvgpFeatures::Ssgp => 2 * m,
        _ => m,
    };
    set_variational(&mut model, &random_q(q_len, 5));
    SVGP.check(&model).expect("valid");
    model
}

/// The collapsed model over the same features: the svgp model's tables less q(v) and
/// the family's name, under vfe where the method has a choice.
fn collapsed_twin(model: &ModelFile, method: &str) -> ModelFile {
    let mut twin = ModelFile::new(method, model.hyper.clone());
    twin.tables = model.tables.clone();
    twin.tables.remove("variational");
    twin.tables.remove("svgp_features");
    if !matches!(method, "psds" | "ssgp") {
        twin.approx = Some(ApproxKind::Vfe);
    }
    methods::get(method)
        .expect("method")
        .check(&twin)
        .expect("twin");
    twin
}

fn whole(data: &TrainData) -> std::iter::Once<(DMatrix<f64>, &[f64])> {
    std::iter::once((data.x.clone(), data.y.as_slice()))
}

/// The test this feature is tied by: at the optimal q(u) (one natural step of γ = 1 on
/// the whole data) svgp's negative ELBO over family F is the collapsed bound over F at
/// identical parameters to 1e-9 relative, and its gradient in σ0², ℓ, σ² and F's own
/// parameters (pulled back through F's adjoint path) is the collapsed bound's.
#[test]
fn at_the_optimal_q_svgp_over_a_family_is_its_collapsed_bound() {
    let data = toy_data(60, 2, 7);
    for (family, method) in FAMILIES {
        let model = model_over(&data, family, 6);
        let q0 = variational(&model, random_len(&model)).expect("q");
        let e = evaluate(&model, whole(&data), 1.0, Want::Natural, None, &ex()).expect("eval");
        let q1 = natural_step(&q0, &e.d_mean_lik, &e.d_sigma_lik, 1.0, ex().par).expect("step");
        let mut opt = model.clone();
        set_variational(&mut opt, &q1);
        let bound = SVGP.nlml(&opt, &data, &ex()).expect("svgp");
        let twin = collapsed_twin(&model, method);
        let collapsed = methods::get(method).expect("method");
        let want = collapsed.nlml(&twin, &data, &ex()).expect("collapsed");
        let rel = (bound - want).abs() / want.abs();
        eprintln!("{method}: svgp {bound}, collapsed {want}, rel {rel:e}");
        assert!(rel < 1e-9, "{method}: svgp {bound} vs {want} (rel {rel:e})");
        assert!(SVGP.nlml(&model, &data, &ex()).expect("start") > bound + 1.0);
        // the gradient in everything but q(v) is the collapsed bound's
        let g = SVGP.objective(&opt, &data, &ex()).expect("svgp").grad;
        let gc = collapsed
            .objective(&twin, &data, &ex())
            .expect("collapsed")
            .grad;
        assert_eq!(collapsed.pack(&twin), SVGP.pack(&opt)[..gc.len()].to_vec());
        assert_close(&format!("{method} gradient"), &g[..gc.len()], &gc, 1e-6);
    }
}

/// m of a model's q(v).
fn random_len(model: &ModelFile) -> usize {
    model
        .require::<sgpw::methods::svgp::VariationalTable>()
        .expect("q")
        .mean
        .len()
}

/// Binary targets from the toy set's sign.
fn binary(data: &TrainData) -> TrainData {
    TrainData {
        x: data.x.clone(),
        y: data.y.iter().map(|v| f64::from(*v > 0.0)).collect(),
        log_exposure: None,
    }
}

/// The bound's gradient in every packed entry — σ0², ℓ, σ², the family's parameters
/// (FIF's window widths, frequencies and phases; TFIF's centres; SM's centres and
/// widths; SSGP's spectral points), μ and R — against central differences, on the whole
/// data (in chunks of 7 rows) and a minibatch scaled by n/B, with the Gaussian and the
/// Bernoulli likelihood.
#[test]
fn the_bound_gradient_over_every_family_matches_finite_differences() {
    let gaussian = toy_data(40, 2, 11);
    let classes = binary(&gaussian);
    for (family, method) in FAMILIES {
        for kind in [LikelihoodKind::Gaussian, LikelihoodKind::Bernoulli] {
            let data = if kind == LikelihoodKind::Bernoulli {
                &classes
            } else {
                &gaussian
            };
            let mut model = model_over(data, family, 4);
            if kind == LikelihoodKind::Bernoulli {
                let labels = sgpw::likelihoods::BinaryLabels { labels: [0.0, 1.0] };
                model.likelihood = LikelihoodTable::start(kind, Some(labels));
            }
            let theta = SVGP.pack(&model);
            let chunked = Exec {
                chunk_entries: 7 * 8,
                ..Default::default()
            };
            let o = SVGP.objective(&model, data, &chunked).expect("objective");
            assert_eq!(theta.len(), o.grad.len(), "{method} {kind}");
            let whole_grad = SVGP.objective(&model, data, &ex()).expect("objective");
            assert_close("chunked", &o.grad, &whole_grad.grad, 1e-9);
            let mut scratch = model.clone();
            check_gradient(
                &format!("svgp over {method}, {kind}"),
                &mut |t: &[f64]| {
                    SVGP.unpack(t, &mut scratch);
                    SVGP.nlml(&scratch, data, &ex()).expect("nlml")
                },
                &theta,
                &o.grad,
                1e-5,
                1e-5,
            );
            let idx = [3, 17, 5, 22, 39, 0, 11, 28, 30];
            let (x, y) = rows_block(data, &idx);
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
                &format!("svgp minibatch over {method}, {kind}"),
                &mut |t: &[f64]| {
                    SVGP.unpack(t, &mut scratch);
                    -batch(&scratch, Want::Value).elbo
                },
                &theta,
                &e.grad.iter().map(|g| -g).collect::<Vec<_>>(),
                1e-5,
                1e-5,
            );
        }
    }
}

/// A model over a family is written and read back, predicts, and the family's
/// parameters move in a fit; refusals name the option: FIF features with a Matérn
/// kernel, pseudo-input options with a family.
#[test]
fn a_fit_over_fif_features_runs_end_to_end_and_refusals_name_the_option() {
    let data = toy_data(120, 2, 5);
    let ds = sgpw::data::Dataset {
        classes: None,
        feature_names: vec!["a".into(), "b".into()],
        target_name: "y".into(),
        x_train: data.x.clone(),
        y_train: DVector::from_vec(data.y.clone()),
        x_test: None,
        y_test: None,
        notes: Vec::new(),
    };
    let options = MethodOptions {
        family: Some(SvgpFeatures::Fifgp),
        epochs: Some(30),
        ..Default::default()
    };
    let (r, _) = common::fit(&ds, &svgp_spec(8, options.clone()));
    let r = r.expect("fits");
    // from one start, the fit moves the FIF features (window widths, frequencies, phases)
    let valid = svgp_spec(8, options.clone())
        .check(data.y.len())
        .expect("valid");
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let start = init(&SVGP, &data, &svgp_spec(8, options.clone()), &mut rng).expect("init");
    let ctx = sgpw::run_context::RunContext::quiet(ex());
    let (fitted, out) = SVGP.fit(start.clone(), &data, &valid, &ctx).expect("fit");
    let features = |m: &ModelFile| {
        m.require::<methods::interdomain::Features>()
            .expect("[features]")
    };
    let (a, b) = (features(&start), features(&fitted));
    assert_ne!(a.frequencies, b.frequencies, "the frequencies were learned");
    assert_ne!(
        a.window_widths, b.window_widths,
        "the window widths were learned"
    );
    assert!(out.f < SVGP.nlml(&start, &data, &ex()).expect("start") - 1.0);
    let text = r.model.to_toml().expect("toml");
    assert!(
        text.contains("[svgp_features]") && text.contains("fifgp"),
        "{text}"
    );
    let back = ModelFile::parse(&text).expect("read back");
    SVGP.check(&back).expect("valid");
    assert_eq!(
        SVGP.nlml(&back, &data, &ex()).expect("nlml"),
        SVGP.nlml(&r.model, &data, &ex()).expect("nlml")
    );
    let p = r.predictor.predict(&data.x).expect("predicts");
    assert!(p.var_latent.iter().all(|v| v.is_finite() && *v > 0.0));
    // refusals name the option
    for (opts, needle) in [
        (
            MethodOptions {
                kernel: Some(sgpw::kernel::KernelKind::Matern32.into()),
                ..options.clone()
            },
            "family",
        ),
        (
            MethodOptions {
                inducing_init: Some(sgpw::run_spec::InducingInit::Kmeans),
                ..options.clone()
            },
            "inducing_init",
        ),
    ] {
        let err = svgp_spec(8, opts)
            .check(120)
            .expect_err("refused")
            .to_string();
        assert!(err.contains(needle), "{err}");
    }
}
