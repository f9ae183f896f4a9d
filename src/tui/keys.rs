//! Every key of the main screen, in one table that drives both the key dispatch
//! ([`action_for`]) and the help screen ([`help_rows`]), so the two cannot drift apart.
//! Keys inside dialogs and forms (typing, Esc to close) are theirs to handle.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Declares [`Action`] and, with it, [`Action::ALL`], so that list cannot miss one.
macro_rules! actions {
    ($($(#[doc = $doc:literal])* $name:ident,)*) => {
        /// What a key of the main screen does.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Action {
            $($(#[doc = $doc])* $name,)*
        }

        impl Action {
            /// Every action, in declaration order.
            pub const ALL: &[Action] = &[$(Action::$name,)*];
        }
    };
}

actions! {
    Help,
    /// Between the Data sets and Runs lists.
    SwitchFocus,
    Up,
    Down,
    PageUp,
    PageDown,
    Home,
    End,
    ShowEvidence,
    ShowComparison,
    ShowPrediction,
    AddDataset,
    EditDataset,
    NewRuns,
    /// The selected run, if it has not run (in the Data sets list: go to the runs).
    Start,
    /// Every run that is not done (never run, cancelled or failed).
    StartAll,
    Cancel,
    CancelAll,
    /// The selected run again with its seed, to compare.
    Rerun,
    /// Start or stop replaying the selected run's evidence curve.
    Replay,
    Faster,
    Slower,
    /// Mark the selected run for the evidence chart.
    Mark,
    /// NMSE or MNLP in the comparison.
    ToggleMetric,
    /// Validation MNLP or NMSE under the evidence curves.
    ToggleValidation,
    PrevInput,
    NextInput,
    /// The prediction chart's total, then each summand of a kernel that is a sum.
    NextComponent,
    Save,
    /// The chart on screen as an SVG figure beside the session file.
    Figure,
    Open,
    /// The last message and the selected run's details in full.
    FullText,
    /// Stop the replay, else clear the marks.
    Dismiss,
    Quit,
}

/// A key as bound: its code and the modifiers it needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Key {
    pub code: KeyCode,
    pub modifiers: KeyModifiers,
}

impl Key {
    pub const fn new(code: KeyCode) -> Key {
        Key {
            code,
            modifiers: KeyModifiers::NONE,
        }
    }
    pub const fn char(c: char) -> Key {
        Key::new(KeyCode::Char(c))
    }
    pub const fn ctrl(c: char) -> Key {
        Key {
            code: KeyCode::Char(c),
            modifiers: KeyModifiers::CONTROL,
        }
    }

    /// The modifiers a key needs must be held; others are ignored (terminals add SHIFT
    /// to capitals, and some report modifiers nobody asked for).
    pub fn matches(&self, k: &KeyEvent) -> bool {
        self.code == k.code && k.modifiers.contains(self.modifiers)
    }
}

/// Ctrl-C quits from anywhere: the main screen and every dialog but the quit question.
pub const CTRL_C: Key = Key::ctrl('c');

/// In a form, the selected field's help in full (on the main screen F2 is
/// [`Action::FullText`]'s key too, so help lists it there).
pub const FULL_TEXT_IN_FORMS: Key = Key::new(F(2));

/// The keys of one action and how help shows them.
#[derive(Clone, Copy, Debug)]
pub struct Binding {
    pub keys: &'static [Key],
    pub action: Action,
    /// The help row: the keys as shown and what they do. None: the row of the binding
    /// above already tells (e.g. "↑ ↓  j k" covers Up and Down).
    pub help: Option<(&'static str, &'static str)>,
}

/// A binding with its own help row.
const fn row(
    keys: &'static [Key],
    action: Action,
    shown: &'static str,
    what: &'static str,
) -> Binding {
    Binding {
        keys,
        action,
        help: Some((shown, what)),
    }
}

/// A binding told by the help row above it.
const fn also(keys: &'static [Key], action: Action) -> Binding {
    Binding {
        keys,
        action,
        help: None,
    }
}

// The table names actions and a few key codes bare.
use Action::*;
use KeyCode::{BackTab, Enter, Esc, F, Tab};

/// Every key of the main screen, in the order help lists them.
pub const KEYS: &[Binding] = &[
    row(
        &[Key::char('?'), Key::new(F(1))],
        Help,
        "?  F1",
        "this help (any key closes it)",
    ),
    row(
        &[Key::new(Tab), Key::new(BackTab)],
        SwitchFocus,
        "Tab",
        "switch between the Data sets and Runs lists",
    ),
    row(
        &[Key::new(KeyCode::Up), Key::char('k')],
        Up,
        "↑ ↓  j k",
        "move in the list (PgUp PgDn Home End too)",
    ),
    also(&[Key::new(KeyCode::Down), Key::char('j')], Down),
    also(&[Key::new(KeyCode::PageUp)], PageUp),
    also(&[Key::new(KeyCode::PageDown)], PageDown),
    also(&[Key::new(KeyCode::Home)], Home),
    also(&[Key::new(KeyCode::End)], End),
    row(
        &[Key::char('1')],
        ShowEvidence,
        "1 2 3",
        "chart: Evidence, Comparison, Prediction",
    ),
    also(&[Key::char('2')], ShowComparison),
    also(&[Key::char('3')], ShowPrediction),
    row(
        &[Key::char('a')],
        AddDataset,
        "a",
        "add a data set (CSV or Parquet, through polars)",
    ),
    row(
        &[Key::char('e')],
        EditDataset,
        "e",
        "edit and reload the selected data set",
    ),
    row(
        &[Key::char('n')],
        NewRuns,
        "n",
        "new runs: method, m list, seeds, iterations, options",
    ),
    row(
        &[Key::new(Enter)],
        Start,
        "Enter",
        "start the selected run (if it has not run)",
    ),
    row(
        &[Key::char('g')],
        StartAll,
        "g",
        "start every run not done yet (cancelled too)",
    ),
    row(
        &[Key::char('x')],
        Cancel,
        "x  X",
        "cancel the selected run / all runs",
    ),
    also(&[Key::char('X')], CancelAll),
    row(
        &[Key::char('R')],
        Rerun,
        "R",
        "re-run the selected run with its seed; tells if identical",
    ),
    row(
        &[Key::char('r')],
        Replay,
        "r",
        "replay the selected run's evidence curve (r again stops)",
    ),
    row(
        &[Key::char('+'), Key::char('=')],
        Faster,
        "+ -",
        "replay speed",
    ),
    also(&[Key::char('-')], Slower),
    row(
        &[Key::char(' ')],
        Mark,
        "Space",
        "mark a run for the evidence chart (none: all runs)",
    ),
    row(
        &[Key::char('c')],
        ToggleMetric,
        "c  v",
        "NMSE or MNLP: c in the comparison, v under the evidence",
    ),
    also(&[Key::char('v')], ToggleValidation),
    row(
        &[Key::char('[')],
        PrevInput,
        "[ ]  p",
        "prediction: prev / next input (D > 1); p: total, summands",
    ),
    also(&[Key::char(']')], NextInput),
    also(&[Key::char('p')], NextComponent),
    row(
        &[Key::char('s')],
        Save,
        "s  o",
        "save the session (atomic write) / open another session file",
    ),
    also(&[Key::char('o')], Open),
    row(
        &[Key::char('P')],
        Figure,
        "P",
        "write the chart on screen to an SVG beside the session file",
    ),
    row(
        &[Key::char('m'), Key::new(F(2))],
        FullText,
        "m  F2",
        "message and selected run in full (form: field help)",
    ),
    row(
        &[Key::new(Esc)],
        Dismiss,
        "Esc",
        "close a dialog, stop a replay, clear marks",
    ),
    row(
        &[Key::char('q'), CTRL_C],
        Quit,
        "q  Ctrl-C",
        "quit (asks first if something is unsaved)",
    ),
];

/// The action of a key on the main screen. When several keys match, the one that needs
/// the most modifiers wins (Ctrl-C quits; c alone toggles the metric).
pub fn action_for(k: &KeyEvent) -> Option<Action> {
    KEYS.iter()
        .flat_map(|b| b.keys.iter().map(move |key| (key, b.action)))
        .filter(|(key, _)| key.matches(k))
        .max_by_key(|(key, _)| key.modifiers.bits().count_ones())
        .map(|(_, action)| action)
}

/// The help screen's rows: keys as shown, what they do.
pub fn help_rows() -> impl Iterator<Item = (&'static str, &'static str)> {
    KEYS.iter().filter_map(|b| b.help)
}
