#[test]
fn one_takes_the_singular_and_every_other_count_the_plural() {
    assert_eq!(sgpw::words::count(1, "data set", "data sets"), "1 data set");
    assert_eq!(sgpw::words::count(0, "run", "runs"), "0 runs");
    assert_eq!(
        sgpw::words::count(2, "run entry", "run entries"),
        "2 run entries"
    );
}
