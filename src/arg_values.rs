//! How the command line and the app's run form read numbers: a negative number is a
//! value, never a flag (`--noise-floor -1` reaches the noise floor's own check, which
//! says what it allows), and a count that is negative or not a whole number says so.
//! Applied to a whole clap command tree, so no numeric flag of any subcommand is left out.

use clap::builder::TypedValueParser;
use clap::error::ErrorKind;
use std::any::TypeId;
use std::ffi::OsStr;
use std::marker::PhantomData;
use std::str::FromStr;

/// `cmd` and all its subcommands, every value-taking argument accepting a negative
/// number as its value and every whole-number argument read by [`WholeNumber`].
/// An argument is known by its value's type only, so a flag with a parser of its own
/// must return a type of its own (as `--memory-budget` returns `exec::MemorySize`), or
/// this replaces its parser.
pub fn numbers_as_values(cmd: clap::Command) -> clap::Command {
    let cmd = cmd.mut_args(|arg| {
        if !arg.get_action().takes_values() {
            return arg;
        }
        let id = arg.get_value_parser().type_id();
        let arg = arg.allow_negative_numbers(true);
        if id == TypeId::of::<usize>() {
            arg.value_parser(WholeNumber::<usize>::default())
        } else if id == TypeId::of::<u64>() {
            arg.value_parser(WholeNumber::<u64>::default())
        } else {
            arg
        }
    });
    cmd.mut_subcommands(numbers_as_values)
}

/// A whole number (a count, a size, a seed): "-5" is "negative", "2.5" and "ten" are
/// "not a whole number", each followed by what the flag takes.
#[derive(Clone, Debug)]
pub struct WholeNumber<T>(PhantomData<T>);

impl<T> Default for WholeNumber<T> {
    fn default() -> Self {
        WholeNumber(PhantomData)
    }
}

impl<T> TypedValueParser for WholeNumber<T>
where
    T: FromStr + Clone + Send + Sync + 'static,
{
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<T, clap::Error> {
        let text = value.to_string_lossy();
        let trimmed = text.trim();
        if let Ok(v) = trimmed.parse::<T>() {
            return Ok(v);
        }
        let negative = trimmed
            .strip_prefix('-')
            .is_some_and(|rest| rest.parse::<f64>().is_ok());
        let why = if negative {
            "it is negative"
        } else {
            "it is not a whole number"
        };
        let name = arg.map_or_else(|| "the value".to_string(), |a| format!("'{a}'"));
        Err(clap::Error::raw(
            ErrorKind::ValueValidation,
            format!(
                "invalid value '{text}' for {name}: {why}; it takes a whole number 0, 1, 2, …\n"
            ),
        )
        .with_cmd(cmd))
    }
}
