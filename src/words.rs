//! Counts in sentences: one helper, so that no message says "1 runs".

/// `n` with the noun in the number that fits it: `count(1, "run", "runs")` is "1 run",
/// `count(0, "run", "runs")` "0 runs".
pub fn count(n: usize, one: &str, many: &str) -> String {
    match n {
        1 => format!("1 {one}"),
        _ => format!("{n} {many}"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn one_takes_the_singular_and_every_other_count_the_plural() {
        assert_eq!(super::count(1, "data set", "data sets"), "1 data set");
        assert_eq!(super::count(0, "run", "runs"), "0 runs");
        assert_eq!(super::count(2, "run entry", "run entries"), "2 run entries");
    }
}
