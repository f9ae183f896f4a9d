use sgpw::data::big::*;

#[test]
fn big_files_read_back_with_their_rows_and_function() {
    let dir = tempfile::tempdir().expect("tmp");
    for parquet in [false, true] {
        let path = dir
            .path()
            .join(if parquet { "big.parquet" } else { "big.csv" });
        write_big(&path, 70_000, 3, 9, parquet).expect("writes");
        let ds = sgpw::data::load(&sgpw::data::LoadSpec {
            train: path.clone(),
            ..Default::default()
        })
        .expect("reads");
        assert_eq!((ds.n_train(), ds.dim()), (70_000, 3));
        // the noise is small: the function explains almost all of y
        let resid: f64 = (0..ds.n_train())
            .map(|i| {
                let x: Vec<f64> = ds.x_train.row(i).iter().copied().collect();
                (ds.y_train[i] - big_function(&x)).powi(2)
            })
            .sum::<f64>()
            / ds.n_train() as f64;
        assert!((resid - 0.01).abs() < 0.001, "noise variance {resid}");
    }
}
