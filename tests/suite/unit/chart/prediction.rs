use sgpw::chart::prediction::*;
use sgpw::methods::MarkerSize;
use sgpw::methods::pseudo::{Inducing, PseudoNoise};
use sgpw::model_file::ModelFile;
use sgpw::model_file::{Hyper, Standardize};

fn model(method: &str, d: usize) -> ModelFile {
    ModelFile::new(method, Hyper::se(2.0, vec![1.0; d], 0.1))
}

#[test]
fn markers_come_back_in_original_units() {
    let fitc = sgpw::methods::get("fitc").expect("fitc");
    let mut m = model("fitc", 2);
    assert!(markers(fitc, &m, 0).0.is_empty());
    m.set(&Inducing {
        points: vec![vec![0.0, 1.0], vec![1.0, -1.0]],
    });
    m.standardize = Some(Standardize {
        input_center: vec![10.0, 0.0],
        input_scale: vec![2.0, 3.0],
        target_scale: 1.0,
    });
    let (xs, sizes, caption) = markers(fitc, &m, 0);
    assert_eq!(
        (xs, sizes, caption.as_str()),
        (vec![10.0, 12.0], vec![], "inducing points")
    );
    assert_eq!(markers(fitc, &m, 1).0, vec![3.0, -3.0]);
}

/// SPGP+HS sizes its markers by σ0²/(σ0² + h): full above ⅔, half above ⅓, a dot
/// below; the projected methods, the spectral ones, the exact GP and FIFGP (one
/// window at the centre) mark nothing on an input's axis.
#[test]
fn pseudo_noise_sizes_the_markers_and_projections_hide_them() {
    let hs = sgpw::methods::get("spgp-hs").expect("spgp-hs");
    let mut m = model("spgp-hs", 1);
    m.set(&Inducing {
        points: vec![vec![0.0], vec![1.0], vec![2.0]],
    });
    m.set(&PseudoNoise {
        h: vec![0.0, 2.0, 18.0],
    });
    let (_, sizes, caption) = markers(hs, &m, 0);
    assert_eq!(sizes, [MarkerSize::Full, MarkerSize::Half, MarkerSize::Dot]);
    assert!(caption.contains("small: large h"), "{caption}");
    for name in ["spgp-dr", "pca-spgp", "psds", "full", "fifgp"] {
        let method = sgpw::methods::get(name).expect("method");
        assert!(
            markers(method, &m, 0).0.is_empty(),
            "{name} marks something"
        );
    }
}

#[test]
fn median_of_even_and_odd() {
    assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
    assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
    assert_eq!(median(vec![]), 0.0);
}
