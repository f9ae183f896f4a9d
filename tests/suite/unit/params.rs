use sgpw::fix::Fix;
use sgpw::model_file::Hyper;
use sgpw::model_file::ModelFile;
use sgpw::params::*;

#[test]
fn the_layout_names_the_blocks_in_packing_order() {
    let mut model = ModelFile::new("fitc", Hyper::se(2.0, vec![1.0, 3.0], 0.5));
    model.fixed = vec![NOISE_VARIANCE.into()];
    let tail = [TailBlock {
        name: "inducing_inputs",
        transform: Transform::Identity,
        len: Some(|_| 6),
        holds: Holds::ByTransform,
    }];
    let layout = ParamLayout::new(&model, &tail, 10);
    let names: Vec<_> = layout.blocks().iter().map(|b| b.name).collect();
    assert_eq!(
        names,
        [
            SIGNAL_VARIANCE,
            LENGTHSCALES,
            NOISE_VARIANCE,
            "inducing_inputs"
        ]
    );
    assert_eq!(layout.range(LENGTHSCALES), 1..3);
    assert_eq!(layout.range("inducing_inputs"), 4..10);
    assert_eq!(layout.free(0..10), [0, 1, 2, 4, 5, 6, 7, 8, 9]);
    assert_eq!(layout.free(2..5), [2, 4]);
    let mut theta = Vec::new();
    Head::pack(&model, &mut theta);
    assert_eq!(theta.len(), Head::of(&model).len());
    let mut back = model.clone();
    Head::unpack(&theta, &mut back);
    assert!((back.hyper.lengthscales[1] - 3.0).abs() < 1e-15);
}

/// A bernoulli model has no σ²: its θ is the kernel's blocks alone, one entry shorter
/// than the Gaussian model's, and packs and unpacks without one.
#[test]
fn a_non_gaussian_models_theta_has_no_noise_variance() {
    let mut model = ModelFile::new("fitc", Hyper::se(2.0, vec![1.0, 3.0], 0.5));
    let gaussian = ParamLayout::new(&model, &[], 4);
    assert_eq!(gaussian.range(NOISE_VARIANCE), 3..4);
    model.likelihood = sgpw::likelihoods::LikelihoodTable::start(
        sgpw::likelihoods::LikelihoodKind::Bernoulli,
        None,
    );
    model.hold_unused_noise();
    assert_eq!(Head::of(&model).len(), 3);
    let layout = ParamLayout::new(&model, &[], 3);
    let names: Vec<_> = layout.blocks().iter().map(|b| b.name).collect();
    assert_eq!(names, [SIGNAL_VARIANCE, LENGTHSCALES]);
    let mut theta = Vec::new();
    Head::pack(&model, &mut theta);
    assert_eq!(theta.len(), 3);
    let mut back = model.clone();
    back.hyper.signal_variance = 7.0;
    assert_eq!(Head::unpack(&theta, &mut back), 3);
    assert!((back.hyper.signal_variance - 2.0).abs() < 1e-15);
    assert_eq!(back.hyper.noise_variance, model.hyper.noise_variance);
    let grad = Head::grad(&model, &[], 0.5, 9.0);
    assert_eq!(grad, [0.5, 0.0, 0.0]);
    assert_eq!(
        block_names(true, false, false, &[REST]),
        [SIGNAL_VARIANCE, LENGTHSCALES, FEATURES]
    );
}

#[test]
fn unknown_names_list_the_blocks() {
    let names = block_names(true, false, true, &[REST]);
    let fixes: Vec<Fix> = vec!["noise".parse().expect("a name")];
    let e = check_fixes(&fixes, &names, "fifgp", " (--fix)")
        .expect_err("unknown")
        .to_string();
    assert!(
        e.contains("no parameter block 'noise'")
            && e.contains("signal_variance, lengthscales, noise_variance, features"),
        "{e}"
    );
    let fixes: Vec<Fix> = vec!["features=2".parse().expect("a value")];
    let e = check_fixes(&fixes, &names, "fifgp", "")
        .expect_err("a value for a family block")
        .to_string();
    assert!(e.contains("only signal_variance"), "{e}");
}
