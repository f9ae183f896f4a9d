use sgpw::tui::wrap::*;

#[test]
fn wraps_between_words_and_cuts_long_words() {
    assert_eq!(wrap("a bb ccc dddd", 6), ["a bb", "ccc", "dddd"]);
    assert_eq!(wrap("", 5), [""]);
    assert_eq!(wrap("abcdefghij", 4), ["abcd", "efgh", "ij"]);
    assert_eq!(wrap_first("one two three", 3, 9), ["one", "two three"]);
    assert_eq!(wrap("σ² ≥ 0 ok", 4), ["σ² ≥", "0 ok"]);
    let long = at_most(wrap("a b c d e f", 3), 2, 5, "…m");
    assert_eq!(long, ["a b", "c d…m"]);
}
