//! Counts in sentences: one helper, so that no message says "1 runs".

/// `n` with the noun in the number that fits it: `count(1, "run", "runs")` is "1 run",
/// `count(0, "run", "runs")` "0 runs".
pub fn count(n: usize, one: &str, many: &str) -> String {
    match n {
        1 => format!("1 {one}"),
        _ => format!("{n} {many}"),
    }
}
