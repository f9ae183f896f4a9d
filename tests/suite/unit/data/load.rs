use sgpw::data::load::*;

#[test]
fn chunks_of_a_csv_equal_the_whole_file_and_errors_name_the_file_row() {
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("in.csv");
    let mut text = String::from("a,b,y\n");
    for i in 0..23 {
        text.push_str(&format!("{},{},{}\n", i, 2 * i, 0.5 * i as f64));
    }
    std::fs::write(&path, &text).expect("writes");
    let whole = load_inputs(&path, &["b".into(), "a".into()]).expect("whole");
    let mut got = Vec::new();
    let n = for_each_input_chunk(&path, &["b".into(), "a".into()], 5, &mut |first, x| {
        got.push((first, x));
        Ok(())
    })
    .expect("chunks");
    assert_eq!(n, 23);
    assert_eq!(
        got.iter().map(|(f, _)| *f).collect::<Vec<_>>(),
        [0, 5, 10, 15, 20]
    );
    for (first, x) in &got {
        assert_eq!(x, &whole.rows(*first, x.nrows()).into_owned());
    }
    text = text.replace("17,34,8.5", "17,oops,8.5");
    std::fs::write(&path, &text).expect("writes");
    let e =
        for_each_input_chunk(&path, &["b".into()], 5, &mut |_, _| Ok(())).expect_err("bad cell");
    assert!(
        e.to_string().contains("row 18 (line 19 of the file)"),
        "{e}"
    );
}
