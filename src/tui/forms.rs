//! The app's own forms: open a session, add or edit a data set, configure new runs.
//! Building them, and reading a submitted one into what it asks for, checked against
//! the session (applying that is `update`'s job). The generic form, its fields and
//! keys, is `form`: it knows nothing of sessions, and the dialog view draws it.

use super::form::{Field, Form, Value};
use super::state::{App, DataState};
use crate::methods;
use crate::run_spec::{self, GENERAL_OPTIONS, MethodOptions, Naming, OptionField, RunSpec};
use crate::session::{DatasetEntry, RunEntry, RunKey, Session};
use std::path::{Path, PathBuf};

/// The first entry of an option's choice list: the option is not set.
const DEFAULT_CHOICE: &str = "(default)";

/// The path of a session to open, starting from the current one.
pub fn open_form(path: &Path, dirty: bool) -> Form {
    let mut f = Form::new(
        "Open a session",
        vec![Field::text(
            "path",
            "session file",
            &path.display().to_string(),
            "a session TOML file; Enter opens it",
        )],
    );
    if dirty {
        f.error = Some("unsaved changes will be lost (Esc, then s saves)".into());
    }
    f
}

/// Add a data set, or edit `existing` (the form remembers which entry it replaces).
pub fn load_form(existing: Option<&DatasetEntry>) -> Form {
    let e = existing.cloned();
    let s = |f: fn(&DatasetEntry) -> Option<String>| e.as_ref().and_then(f).unwrap_or_default();
    let mut fields = vec![
        Field::text(
            "name",
            "name",
            &s(|d| Some(d.name.clone())),
            "how runs refer to this data set",
        ),
        Field::text(
            "train",
            "training file",
            &s(|d| Some(d.train.display().to_string())),
            "CSV with a header row, or Parquet; relative to the session's folder",
        ),
        Field::text(
            "test",
            "test file",
            &s(|d| d.test.as_ref().map(|p| p.display().to_string())),
            "optional; same columns as the training file",
        ),
        Field::text(
            "split",
            "split",
            &s(|d| d.split.map(|v| v.to_string())),
            "optional, without a test file: training fraction, e.g. 0.8",
        ),
        Field::text(
            "target",
            "target column",
            &s(|d| d.target.clone()),
            "default: the last column",
        ),
        Field::text(
            "features",
            "feature columns",
            &s(|d| d.features.as_ref().map(|f| f.join(", "))),
            "comma-separated; default: every other column",
        ),
        Field::toggle(
            "drop_missing",
            "drop missing rows",
            e.as_ref().is_some_and(|d| d.drop_missing),
            "← → or Space: drop rows with missing values instead of failing",
        ),
    ];
    // Remembers which entry an edit replaces (not shown as a field).
    if let Some(d) = &e {
        fields.push(Field::choice("editing", "", vec![d.name.clone()], 0, ""));
    }
    let title = if e.is_some() {
        "Edit and reload the data set"
    } else {
        "Add a data set"
    };
    Form::new(title, fields)
}

/// New runs on `dataset` (else the first data set), one per (method, m, seed), with
/// the values of `last` (the form as last used in this app session) but its data set.
pub fn runs_form(session: &Session, dataset: Option<&str>, last: Option<&Form>) -> Form {
    let names: Vec<String> = session
        .datasets
        .iter()
        .map(|d| d.get_ref().name.clone())
        .collect();
    let di = dataset
        .and_then(|d| names.iter().position(|n| n == d))
        .unwrap_or(0);
    let methods: Vec<String> = methods::registry()
        .iter()
        .map(|m| m.name().to_string())
        .collect();
    // The general fields from their one declaration (`RunEntry`): its help and the
    // defaults the command line and sessions have.
    let decl = run_spec::run_fields();
    let field = |key: &str| {
        decl.iter()
            .find(|f| f.key == key)
            .cloned()
            .unwrap_or_default()
    };
    let default = |key: &str| field(key).default.unwrap_or_default();
    let mi = methods
        .iter()
        .position(|m| *m == default("method"))
        .unwrap_or(0);
    let mut f = Form::new(
        "New runs: one per (method, m, seed)",
        vec![
            Field::choice("dataset", "data set", names, di, "← → choose the data set"),
            Field::multi("method", "methods", methods, mi, ""),
            Field::text(
                "m",
                "m values",
                &default("m"),
                &format!(
                    "{}; comma-separated, or a range such as 5-8",
                    field("m").help
                ),
            ),
            Field::text("seeds", "seeds", &default("seeds"), &seeds_help()),
            Field::text(
                "iterations",
                "iterations",
                &default("iterations"),
                &field("iterations").help,
            ),
            Field::toggle(
                "standardize",
                "standardize",
                true,
                &format!("← → or Space: {}", field("standardize").help),
            ),
            Field::text("label", "label", "", &field("label").help),
        ],
    );
    // The last values: the methods first (they decide the option fields), then the
    // options themselves.
    if let Some(last) = last {
        f.remember(last, &["dataset"]);
    }
    refresh_option_fields(&mut f);
    if let Some(last) = last {
        f.remember(last, &["dataset"]);
    }
    f
}

/// The options of the chosen methods plus the general ones, each built from the
/// option declaration (`run_spec::option_fields`: its help text, and a choice list for
/// an enum option), keeping values chosen so far; also the highlighted method's summary
/// and what is picked as the help of the methods field.
pub fn refresh_option_fields(f: &mut Form) {
    let chosen: Vec<&'static dyn methods::Method> = f
        .picked("method")
        .iter()
        .filter_map(|m| methods::get(m).ok())
        .collect();
    if let Some(field) = f.fields.iter_mut().find(|x| x.key == "method") {
        let shown = field.highlighted().and_then(|m| methods::get(m).ok());
        let several =
            matches!(&field.value, Value::Multi { picked, .. } if picked.iter().any(|p| *p));
        let what = if several {
            format!(
                " Picked: {} (one run group each).",
                field.picked().join(", ")
            )
        } else {
            String::new()
        };
        field.help = shown.map_or(String::new(), |m| {
            format!(
                "{}: {} — m = {}.{what} ← → browse, Space picks several methods",
                m.name(),
                m.summary(),
                m.m_meaning()
            )
        });
    }
    let old: Vec<Field> = f
        .fields
        .iter()
        .filter(|x| x.key.starts_with("opt:"))
        .cloned()
        .collect();
    f.fields.retain(|x| !x.key.starts_with("opt:"));
    let reads = |key: &str| {
        GENERAL_OPTIONS.contains(&key) || chosen.iter().any(|m| m.options().contains(&key))
    };
    for decl in run_spec::option_fields()
        .into_iter()
        .filter(|o| reads(&o.key))
    {
        let k = format!("opt:{}", decl.key);
        let before = old
            .iter()
            .find(|o| o.key == k)
            .map(|o| o.display())
            .unwrap_or_default();
        f.fields.push(option_field(&k, &decl, &before));
    }
    f.cursor = f.cursor.min(f.fields.len().saturating_sub(1));
}

/// One option's field: a toggle for a switch, a choice for an enum option, text for a
/// number, a list or an open option (a kernel: a plain name or an expression).
fn option_field(key: &str, decl: &OptionField, value: &str) -> Field {
    let label = decl.key.replace('_', " ");
    if decl.switch {
        let help = format!("{} (Space or ← → toggles)", decl.help);
        return Field::toggle(key, &label, value == "yes", &help);
    }
    if !decl.choices.is_empty() && !decl.list && !decl.open {
        let options: Vec<String> = std::iter::once(DEFAULT_CHOICE.to_string())
            .chain(decl.choices.iter().cloned())
            .collect();
        let index = options.iter().position(|o| o == value).unwrap_or(0);
        let help = format!("{} (← → choose)", decl.help);
        return Field::choice(key, &label, options, index, &help);
    }
    let empty = match &decl.default {
        Some(d) => format!("empty = {d}"),
        None => "empty = the default".into(),
    };
    let help = if decl.choices.is_empty() {
        format!("{}; {empty}", decl.help)
    } else {
        format!("{} ({}); {empty}", decl.help, decl.choices.join(", "))
    };
    Field::text(key, &label, value, &help)
}

/// A submitted data set form, checked: the entry and where it goes.
#[derive(Clone, Debug)]
pub struct DatasetChange {
    pub entry: DatasetEntry,
    pub slot: Slot,
}

/// Where a checked data set entry goes in the session.
#[derive(Clone, Debug, PartialEq)]
pub enum Slot {
    /// Replaces the entry at this index (an edit that kept the name).
    Replace(usize),
    /// Goes at the end, after removing the entry named `replacing` (a renaming edit).
    Add { replacing: Option<String> },
}

/// Reading submitted forms: every check happens here, so applying them cannot fail.
impl App {
    /// The data set the load form asks for, or what is wrong with the form.
    pub(super) fn check_load_form(&self, f: &Form) -> Result<DatasetChange, String> {
        let name = f.text("name");
        let train = f.text("train");
        if name.is_empty() {
            return Err("give the data set a name".into());
        }
        if train.is_empty() {
            return Err("give the training file (CSV or Parquet)".into());
        }
        let opt = |s: String| if s.is_empty() { None } else { Some(s) };
        let split = match opt(f.text("split")) {
            None => None,
            Some(s) => match s.parse::<f64>() {
                Ok(v) if v > 0.0 && v < 1.0 => Some(v),
                _ => return Err(format!("split = '{s}' must be a fraction between 0 and 1")),
            },
        };
        let test = opt(f.text("test")).map(PathBuf::from);
        if test.is_some() && split.is_some() {
            return Err("give a test file or a split, not both".into());
        }
        let features = opt(f.text("features")).map(|s| {
            s.split(',')
                .map(|c| c.trim().to_string())
                .filter(|c| !c.is_empty())
                .collect::<Vec<_>>()
        });
        let entry = DatasetEntry {
            name: name.clone(),
            train: PathBuf::from(train),
            test,
            split,
            split_seed: 1,
            target: opt(f.text("target")),
            features,
            drop_missing: f.toggle("drop_missing"),
        };
        let editing = f.get("editing").map(|e| e.display()).unwrap_or_default();
        let existing = self
            .session
            .datasets
            .iter()
            .position(|d| d.get_ref().name == name);
        let slot = match existing {
            Some(i) if editing == name => Slot::Replace(i),
            Some(_) => return Err(format!("there is already a data set named '{name}'")),
            None => {
                if !editing.is_empty()
                    && self
                        .session
                        .runs
                        .iter()
                        .any(|r| r.get_ref().dataset == editing)
                {
                    return Err(format!("runs use '{editing}': keep its name"));
                }
                Slot::Add {
                    replacing: (!editing.is_empty()).then_some(editing),
                }
            }
        };
        Ok(DatasetChange { entry, slot })
    }

    /// The run entries the runs form asks for — one per chosen method — and the runs
    /// each expands to, or what is wrong with the form.
    pub(super) fn check_runs_form(&self, f: &Form) -> Result<Vec<RunGroup>, String> {
        let dataset = f.text("dataset");
        let methods = f.picked("method");
        let m = parse_list(&f.text("m"), "m")?;
        let seeds: Vec<u64> = parse_list(&f.text("seeds"), "seeds")?
            .into_iter()
            .map(|s| s as u64)
            .collect();
        let iterations: usize = f
            .text("iterations")
            .parse()
            .map_err(|_| "iterations must be a whole number".to_string())?;
        let label = f.text("label");
        let several = methods.len() > 1;
        let mut groups: Vec<RunGroup> = Vec::new();
        for method in methods {
            let say = |e: String| if several { format!("{method}: {e}") } else { e };
            let options = parse_options(f, &method).map_err(say)?;
            // with several methods a label names each group: label-method
            let label = match (label.is_empty(), several) {
                (true, _) => None,
                (false, false) => Some(label.clone()),
                (false, true) => Some(format!("{label}-{method}")),
            };
            let entry = RunEntry {
                dataset: dataset.clone(),
                method: method.clone(),
                label,
                m: m.clone(),
                seeds: seeds.clone(),
                iterations,
                standardize: f.toggle("standardize"),
                options,
            };
            self.session
                .check_run(&entry)
                .map_err(|e| say(e.to_string()))?;
            let runs = entry.expand();
            if let Some(DataState::Loaded(d)) = self.data.get(&dataset) {
                for (_, spec) in &runs {
                    spec.check_for(crate::session::runner::shape(d), Naming::Keys)
                        .map_err(|e| say(e.to_string()))?;
                }
            }
            // A key may be shared only by the same settings (results are stored by key).
            for (key, spec) in &runs {
                let clash = self
                    .runs
                    .iter()
                    .map(|r| (&r.key, &r.spec))
                    .chain(
                        groups
                            .iter()
                            .flat_map(|g| g.runs.iter().map(|(k, s)| (k, s))),
                    )
                    .any(|(k, s)| k == key && !s.same_setup(spec));
                if clash {
                    return Err(format!(
                        "{} m={} seed {} exists with other settings; give these runs a label",
                        key.label, key.m, key.seed
                    ));
                }
            }
            groups.push(RunGroup { entry, runs });
        }
        Ok(groups)
    }
}

impl App {
    /// The costliest run the runs form asks for, on its loaded data set
    /// ([`crate::methods::ValidRunSpec::estimate`]): the form's note, and whether its memory is over
    /// what the machine has available. None while the form is not valid or its data
    /// set not loaded.
    pub(super) fn runs_form_estimate(&self, f: &Form) -> Option<(String, bool)> {
        let groups = self.check_runs_form(f).ok()?;
        let threads = methods::cost::threads_per_run(0);
        let mut worst: Option<(methods::cost::Estimate, String, usize)> = None;
        let mut count = 0;
        for g in &groups {
            let Some(DataState::Loaded(d)) = self.data.get(&g.entry.dataset) else {
                continue;
            };
            for (_, spec) in &g.runs {
                let Ok(valid) = spec.check_for(crate::session::runner::shape(d), Naming::Keys)
                else {
                    continue;
                };
                count += 1;
                let e = valid.estimate(d.n_train(), d.dim(), threads);
                if worst.as_ref().is_none_or(|(w, ..)| e.bytes > w.bytes) {
                    let what = match valid.method().uses_m() {
                        true => format!("{} m = {}", spec.method, spec.m),
                        false => spec.method.clone(),
                    };
                    worst = Some((e, what, d.n_train()));
                }
            }
        }
        let (e, what, n) = worst?;
        let of = if count > 1 {
            format!(" (the largest of {count} runs)")
        } else {
            String::new()
        };
        let available = crate::exec::memory_available();
        let over = !e.fits(available);
        let mut note = format!("estimate: {what} on {n} points{of}: {}", e.describe());
        if over {
            note.push_str(&format!(
                "; more than the {} available",
                methods::cost::bytes(available as f64)
            ));
        }
        Some((note, over))
    }
}

/// One run entry of a submitted runs form and the runs it expands to.
#[derive(Clone, Debug)]
pub struct RunGroup {
    pub entry: RunEntry,
    pub runs: Vec<(RunKey, RunSpec)>,
}

/// "10, 20 40" or "1-3" → numbers.
pub fn parse_list(text: &str, what: &str) -> Result<Vec<usize>, String> {
    let mut out = Vec::new();
    for part in text
        .split([',', ' '])
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        let bad =
            || format!("{what}: '{part}' is not a whole number (write e.g. 10, 20, 40 or 1-3)");
        if let Some((a, b)) = part.split_once('-') {
            let (a, b): (usize, usize) = (
                a.trim().parse().map_err(|_| bad())?,
                b.trim().parse().map_err(|_| bad())?,
            );
            if b < a || b - a > 1000 {
                return Err(bad());
            }
            out.extend(a..=b);
        } else {
            out.push(part.parse().map_err(|_| bad())?);
        }
    }
    if out.is_empty() {
        return Err(format!("{what}: give at least one value"));
    }
    Ok(out)
}

/// Option fields (`opt:` + key) that `method` reads → MethodOptions with the command
/// line's own parser, so the form accepts and rejects exactly what `--key value` does.
pub fn parse_options(f: &Form, method: &str) -> Result<MethodOptions, String> {
    let own = methods::get(method)
        .map(|m| m.options())
        .unwrap_or_default();
    let pairs: Vec<(String, String)> = f
        .fields
        .iter()
        .filter_map(|field| {
            let key = field.key.strip_prefix("opt:")?;
            if !GENERAL_OPTIONS.contains(&key) && !own.contains(&key) {
                return None;
            }
            let text = field.display().trim().to_string();
            (!text.is_empty() && text != DEFAULT_CHOICE).then(|| (key.to_string(), text))
        })
        .collect();
    run_spec::parse_options(&pairs).map_err(|e| format!("options: {e}"))
}

/// The seeds field's help: which methods start deterministically with their default
/// options, so that more seeds only repeat one computation.
fn seeds_help() -> String {
    let defaults = crate::run_spec::MethodOptions::default();
    let fixed: Vec<&str> = crate::methods::registry()
        .iter()
        .filter(|m| !m.init_uses_seed(&defaults))
        .map(|m| m.name())
        .collect();
    if fixed.is_empty() {
        "e.g. 1, 2, 3 or 1-5".to_string()
    } else {
        format!(
            "e.g. 1, 2, 3 or 1-5; {} start deterministically (their seed changes nothing \
             unless an option such as subset or validation draws with it)",
            fixed.join(", ")
        )
    }
}
