use nalgebra::DMatrix;
use sgpw::data::arrays::*;

fn arrays(x: DMatrix<f64>, y: Vec<f64>) -> Arrays {
    Arrays {
        x_train: x,
        y_train: y,
        test: None,
        feature_names: None,
        target_name: None,
        labels: None,
    }
}

#[test]
fn arrays_are_checked_as_files_are() {
    let x = DMatrix::from_row_slice(3, 2, &[1.0, 5.0, 2.0, 5.0, 3.0, 5.0]);
    let d = dataset(Arrays {
        test: Some((DMatrix::from_row_slice(1, 2, &[4.0, 6.0]), vec![1.0])),
        ..arrays(x.clone(), vec![1.0, 2.0, 4.0])
    })
    .expect("fits");
    // the constant column goes, with the loader's note, from the test set too
    assert_eq!(d.feature_names, ["x0"]);
    assert_eq!(d.x_test.as_ref().map(|x| x[(0, 0)]), Some(4.0));
    assert!(
        d.notes[0].contains("dropped constant column(s) x1"),
        "{:?}",
        d.notes
    );
    let e = dataset(arrays(x.clone(), vec![1.0, 2.0])).expect_err("short y");
    assert!(
        e.to_string().contains("y has 2 values but X has 3 rows"),
        "{e}"
    );
    let mut bad = x.clone();
    bad[(1, 0)] = f64::NAN;
    let e = dataset(arrays(bad, vec![1.0, 2.0, 3.0])).expect_err("NaN");
    assert!(e.to_string().contains("X[1, 0] is NaN"), "{e}");
    let e = dataset(arrays(x.clone(), vec![2.0, 2.0, 2.0])).expect_err("constant");
    assert!(e.to_string().contains("the target y is constant"), "{e}");
    let flat = DMatrix::from_element(3, 1, 1.0);
    let e = dataset(arrays(flat, vec![1.0, 2.0, 3.0])).expect_err("all constant");
    assert!(
        e.to_string().contains("every feature column is constant"),
        "{e}"
    );
    let e = dataset(Arrays {
        test: Some((DMatrix::zeros(2, 3), vec![1.0, 2.0])),
        ..arrays(x, vec![1.0, 2.0, 4.0])
    })
    .expect_err("columns");
    assert!(
        e.to_string().contains("X_test has 3 columns but X has 2"),
        "{e}"
    );
}
