use clap::{Arg, Command};
use sgpw::arg_values::*;

fn cmd() -> Command {
    numbers_as_values(
        Command::new("t").subcommand(
            Command::new("sub")
                .arg(
                    Arg::new("m")
                        .long("m")
                        .value_parser(clap::value_parser!(usize)),
                )
                .arg(
                    Arg::new("f")
                        .long("f")
                        .value_parser(clap::value_parser!(f64)),
                ),
        ),
    )
}

#[test]
fn negative_numbers_are_values_and_counts_say_what_they_take() {
    let m = cmd()
        .try_get_matches_from(["t", "sub", "--f", "-1.5", "--m", "3"])
        .expect("parses");
    let sub = m.subcommand_matches("sub").expect("sub");
    assert_eq!(sub.get_one::<f64>("f"), Some(&-1.5));
    assert_eq!(sub.get_one::<usize>("m"), Some(&3));
    for (value, why) in [("-5", "negative"), ("2.5", "not a whole number")] {
        let e = cmd()
            .try_get_matches_from(["t", "sub", "--m", value])
            .expect_err("refused")
            .to_string();
        assert!(
            e.contains(&format!("'{value}'")) && e.contains("--m") && e.contains(why),
            "{e}"
        );
        assert!(e.contains("whole number 0, 1, 2"), "{e}");
    }
}
