//! The options and run fields as the app's form lists them, read from the clap
//! declaration, and parsed with clap's own parser from (key, text) pairs — the form's
//! fields and Python's keyword arguments — so they are accepted and refused as the
//! command line's flags are.

use super::RunEntry;
use super::options::{MethodOptions, flag};
use clap::{Args, CommandFactory, FromArgMatches};

/// One option as the app's form shows it, read from the clap declaration.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OptionField {
    /// The session key (= clap's id).
    pub key: String,
    /// The flag, e.g. `--init-lengthscales-from-subset`.
    pub flag: String,
    pub help: String,
    /// The values an enum option takes (empty for numbers).
    pub choices: Vec<String>,
    /// Whether it takes a comma-separated list.
    pub list: bool,
    /// Whether it is a switch without a value (`--hetero`, `--early-stop`): given or not.
    pub switch: bool,
    /// The value the command line uses when the flag is not given, if any.
    pub default: Option<String>,
    /// Whether `choices` are only the common values of a text the parser reads in full
    /// ([`OPEN_OPTIONS`]): the form then gives a text field, not a choice list.
    pub open: bool,
}

/// Options whose listed values are the common ones of a free text: `--kernel` takes the
/// five plain kernels or an expression of parts (`se + se * periodic`).
const OPEN_OPTIONS: &[&str] = &["kernel"];

/// Every option of [`MethodOptions`], in declaration order.
pub fn option_fields() -> Vec<OptionField> {
    fields_of(&MethodOptions::augment_args(clap::Command::new("options")))
}

/// The arguments of a clap command as form fields.
fn fields_of(cmd: &clap::Command) -> Vec<OptionField> {
    cmd.get_arguments()
        .filter_map(|a| {
            let long = a.get_long()?;
            let switch = !a.get_action().takes_values();
            Some(OptionField {
                key: a.get_id().to_string(),
                flag: format!("--{long}"),
                help: a.get_help().map(|h| h.to_string()).unwrap_or_default(),
                choices: if switch {
                    Vec::new()
                } else {
                    a.get_possible_values()
                        .iter()
                        .map(|v| v.get_name().to_string())
                        .collect()
                },
                list: a.get_value_delimiter().is_some(),
                switch,
                default: (!switch)
                    .then(|| a.get_default_values().first())
                    .flatten()
                    .map(|v| v.to_string_lossy().into_owned()),
                open: OPEN_OPTIONS.contains(&a.get_id().as_str()),
            })
        })
        .collect()
}

/// Parse options given as (key, text) pairs with the command line's own parser, so
/// the app's form accepts and rejects exactly what `--flag value` does. A flag
/// option's text is yes/true/on (given) or no/false/off (not given).
pub fn parse_options(pairs: &[(String, String)]) -> std::result::Result<MethodOptions, String> {
    let flags: Vec<String> = option_fields()
        .into_iter()
        .filter(|f| f.switch)
        .map(|f| f.key)
        .collect();
    let mut argv = vec!["options".to_string()];
    for (key, value) in pairs {
        if flags.contains(key) {
            match value.trim().to_ascii_lowercase().as_str() {
                "yes" | "true" | "on" => argv.push(flag(key)),
                "no" | "false" | "off" | "" => {}
                other => {
                    return Err(format!(
                        "{}: '{other}' is not yes or no (it is a switch)",
                        flag(key)
                    ));
                }
            }
            continue;
        }
        argv.push(flag(key));
        // a form's "hyper, points" is the command line's hyper,points
        let parts: Vec<&str> = value.split(',').map(str::trim).collect();
        argv.push(parts.join(","));
    }
    let cmd = crate::arg_values::numbers_as_values(MethodOptions::augment_args(
        clap::Command::new("options"),
    ));
    let matches = cmd.try_get_matches_from(argv).map_err(|e| {
        // clap's message without its usage block
        e.to_string()
            .lines()
            .next()
            .unwrap_or("invalid option")
            .trim_start_matches("error: ")
            .to_string()
    })?;
    MethodOptions::from_arg_matches(&matches).map_err(|e| e.to_string())
}

/// Parse a run given as (name, text) pairs — the keyword arguments of `sgpw.fit` in
/// Python — with `sgpw fit`'s own parser of the [`RunEntry`] declaration, so that they
/// are accepted and refused as its flags are, with its messages. A name is a
/// setting's key (`iterations`, `standardize`, `seeds`) or its flag with underscores
/// for dashes (`iters`, `raw`, `seed`, `init_lengthscales_from_subset`); a switch's
/// text is true or false (for a key whose flag turns it off, as `standardize`'s
/// `--raw` does, false gives the flag); a list is comma-separated. A setting declared
/// later is a keyword at once: nothing here lists them.
pub fn parse_run(pairs: &[(String, String)]) -> std::result::Result<RunEntry, String> {
    let cmd = crate::arg_values::numbers_as_values(RunEntry::augment_args(clap::Command::new(
        "sgpw fit",
    )));
    let mut argv = vec!["sgpw fit".to_string()];
    let mut given: Vec<(&str, &str)> = Vec::new();
    for (name, value) in pairs {
        let arg = cmd.get_arguments().find(|a| {
            a.get_id() == name.as_str()
                || a.get_long().is_some_and(|l| l.replace('-', "_") == *name)
        });
        let Some((arg, long)) = arg.and_then(|a| Some((a, a.get_long()?))) else {
            // clap says it is unknown, and names a similar one
            argv.push(format!("{}={value}", flag(name)));
            continue;
        };
        // a key and its flag name are one setting (`seed` and `seeds`)
        let id = arg.get_id().as_str();
        if let Some((_, first)) = given.iter().find(|(g, _)| *g == id) {
            return Err(format!(
                "{first} and {name} are the same setting (--{long}): give it once"
            ));
        }
        given.push((id, name.as_str()));
        if arg.get_action().takes_values() {
            // `--flag=value`: a value that starts with a dash is still the value
            argv.push(format!("--{long}={value}"));
            continue;
        }
        let on = match value.as_str() {
            "true" => true,
            "false" => false,
            other => {
                return Err(format!(
                    "{name} = {other}: give true or false (--{long} is a switch)"
                ));
            }
        };
        let sets_false = matches!(arg.get_action(), clap::ArgAction::SetFalse);
        if on != (sets_false && arg.get_id() == name.as_str()) {
            argv.push(format!("--{long}"));
        }
    }
    let matches = cmd.try_get_matches_from(argv).map_err(|e| {
        // clap's message and tip without its usage block
        e.to_string()
            .lines()
            .map(str::trim)
            .filter(|l| {
                !(l.is_empty() || l.starts_with("Usage:") || l.starts_with("For more information"))
            })
            .map(|l| l.trim_start_matches("error: "))
            .collect::<Vec<_>>()
            .join("; ")
    })?;
    RunEntry::from_arg_matches(&matches).map_err(|e| e.to_string())
}

/// The general run fields of [`RunEntry`] as the app's form shows them (the options
/// have [`option_fields`]), in declaration order, from the clap declaration.
pub fn run_fields() -> Vec<OptionField> {
    let cmd = RunEntry::augment_args(clap::Command::new("run"));
    let options: Vec<String> = option_fields().into_iter().map(|f| f.key).collect();
    fields_of(&cmd)
        .into_iter()
        .filter(|f| !options.contains(&f.key))
        .collect()
}

/// `MethodOptions` must be usable as a stand-alone clap command (for the form's parser).
#[derive(clap::Parser)]
struct OptionsOnly {
    #[command(flatten)]
    options: MethodOptions,
}

/// The help text of every option, as `--help` prints it (for the README and tests).
pub fn options_help() -> String {
    OptionsOnly::command().render_help().to_string()
}
