use nalgebra::DMatrix;
use nalgebra::DVector;
use sgpw::data::Dataset;
use sgpw::data::exposure::*;

fn data(e: [f64; 3]) -> Dataset {
    Dataset {
        classes: None,
        feature_names: vec!["x".into(), "E".into()],
        target_name: "y".into(),
        x_train: DMatrix::from_row_slice(3, 2, &[0.0, e[0], 1.0, e[1], 2.0, e[2]]),
        y_train: DVector::from_vec(vec![1.0, 0.0, 3.0]),
        x_test: Some(DMatrix::from_row_slice(1, 2, &[0.5, 2.0])),
        y_test: Some(DVector::from_vec(vec![2.0])),
        notes: Vec::new(),
    }
}

#[test]
fn the_exposure_leaves_the_inputs() {
    let (rest, e) = split_off(&data([1.0, 2.0, 0.5]), "E", None).unwrap();
    assert_eq!(rest.feature_names, ["x"]);
    assert_eq!(rest.x_train.column(0).as_slice(), [0.0, 1.0, 2.0]);
    assert_eq!(rest.x_test.unwrap().ncols(), 1);
    assert_eq!(e.train, [1.0, 2.0, 0.5]);
    assert_eq!(e.test, Some(vec![2.0]));
    assert_eq!(e.log_train()[1], 2f64.ln());
}

#[test]
fn a_bad_exposure_is_named_with_its_row() {
    let err = split_off(&data([1.0, 0.0, 0.5]), "E", None)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("'E'")
            && err.contains("training row 2")
            && err.contains("0 is not a positive"),
        "{err}"
    );
    let err = split_off(&data([1.0, 1.0, -3.0]), "E", None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("training row 3"), "{err}");
    let err = split_off(&data([1.0, 1.0, 1.0]), "y", None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("also the target"), "{err}");
    let err = split_off(&data([1.0, 1.0, 1.0]), "T", None)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("no exposure column 'T'") && err.contains("x, E"),
        "{err}"
    );
}
