mod lines;

use sgpw::plot::*;

#[test]
fn sizes_parse_or_say_why_not() {
    assert_eq!(parse_size("800x500"), Ok((800, 500)));
    assert_eq!(parse_size("1200×700"), Ok((1200, 700)));
    assert!(parse_size("800").unwrap_err().contains("width x height"));
    assert!(parse_size("10x10").unwrap_err().contains("out of range"));
}
