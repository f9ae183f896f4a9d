//! Every key, for the help screen.

/// Every key, for `?` (the single list the help screen draws).
pub const KEYS: &[(&str, &str)] = &[
    ("?  F1", "this help (any key closes it)"),
    ("Tab", "switch between the Data sets and Runs lists"),
    ("↑ ↓  j k", "move in the list (PgUp PgDn Home End too)"),
    ("1 2 3", "chart: Evidence, Comparison, Prediction"),
    ("a", "add a data set (CSV or Parquet, through polars)"),
    ("e", "edit and reload the selected data set"),
    ("n", "new runs: method, m list, seeds, iterations, options"),
    ("Enter", "start the selected run (if it has not run)"),
    ("g", "start every run that has no result yet"),
    ("x  X", "cancel the selected run / all runs"),
    (
        "R",
        "re-run the selected run with its seed; tells if identical",
    ),
    (
        "r",
        "replay the selected run's evidence curve (r again stops)",
    ),
    ("+ -", "replay speed"),
    (
        "Space",
        "mark a run for the evidence chart (none: all runs)",
    ),
    ("c", "comparison: toggle NMSE / MNLP"),
    ("[ ]", "prediction: previous / next input (data with D > 1)"),
    ("s", "save the session (atomic write)"),
    ("o", "open another session file"),
    ("Esc", "close a dialog, stop a replay, clear marks"),
    ("q  Ctrl-C", "quit (asks first if something is unsaved)"),
];
