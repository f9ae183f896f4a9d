use sgpw::likelihoods::LikelihoodKind;
use sgpw::likelihoods::StudentT;
use sgpw::likelihoods::model_table::*;

#[test]
fn a_table_reads_back_the_likelihood_it_was_written_from() {
    let mut t = LikelihoodTable::start(LikelihoodKind::StudentT, None).unwrap();
    let lik = StudentT {
        scale: 0.25,
        df: 5.0,
    };
    t.set_params(&lik);
    let text = toml::to_string(&t).unwrap();
    let back: LikelihoodTable = toml::from_str(&text).unwrap();
    assert_eq!(back, t);
    assert_eq!(back.likelihood().unwrap().params(), vec![0.25, 5.0]);
    assert!(LikelihoodTable::start(LikelihoodKind::Gaussian, None).is_none());
}

#[test]
fn a_wrong_key_or_value_is_named() {
    let bad = |text: &str| {
        toml::from_str::<LikelihoodTable>(text)
            .unwrap()
            .likelihood()
            .unwrap_err()
    };
    assert!(bad("name = \"studentt\"\nscal = 1.0").starts_with("scal: not a parameter"));
    assert!(bad("name = \"studentt\"\ndf = -1.0").starts_with("df = -1: must be a positive"));
    assert!(bad("name = \"bernoulli\"").starts_with("labels:"));
    assert!(bad("name = \"poisson\"\nlink = \"logit\"").starts_with("link:"));
    assert!(
        bad("name = \"bernoulli\"\nlabels = [0.0, 1.0]\nep_damping = 1.5")
            .starts_with("ep_damping = 1.5: must be in (0, 1]")
    );
    assert!(bad("name = \"bernoulli\"\nlabels = [1.0, 0.0]").starts_with("labels = [1, 0]"));
}

#[test]
fn targets_are_checked_for_the_likelihood() {
    let l = target_problem(LikelihoodKind::Bernoulli, &[-1.0, 1.0, 1.0]).unwrap();
    assert_eq!(l.unwrap().labels, [-1.0, 1.0]);
    let e = target_problem(LikelihoodKind::Bernoulli, &[0.0, 1.0, 2.0]).unwrap_err();
    assert_eq!(e.row, 2);
    let e = target_problem(LikelihoodKind::Poisson, &[0.0, 3.0, 1.5]).unwrap_err();
    assert_eq!(e.row, 2);
    assert_eq!(
        target_problem(LikelihoodKind::Gaussian, &[0.5, -2.0]),
        Ok(None)
    );
}
