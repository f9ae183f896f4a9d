use crate::unit::tui::testing::*;
use ratatui::crossterm::event::KeyCode;
use sgpw::tui::form::Form;
use sgpw::tui::forms::*;
use sgpw::tui::state::App;
use sgpw::tui::state::DataState;
use sgpw::tui::state::{Dialog, Effect, Event};

#[test]
fn the_runs_form_validates_and_launches() {
    let mut a = loaded();
    a.update(ch('n'));
    // dataset, method(fitc), m
    a.update(key(KeyCode::Down));
    a.update(key(KeyCode::Down));
    clear_field(&mut a);
    type_text(&mut a, "0");
    assert!(a.update(key(KeyCode::Enter)).is_empty());
    let Some(Dialog::NewRuns(f)) = &a.dialog else {
        panic!("form closed")
    };
    assert!(
        f.error
            .as_deref()
            .is_some_and(|e| e.contains("m must be at least 1")),
        "{:?}",
        f.error
    );
    clear_field(&mut a);
    type_text(&mut a, "500");
    a.update(key(KeyCode::Enter));
    let Some(Dialog::NewRuns(f)) = &a.dialog else {
        panic!("form closed")
    };
    assert!(
        f.error
            .as_deref()
            .is_some_and(|e| e.contains("larger than the training set")),
        "{:?}",
        f.error
    );
    clear_field(&mut a);
    type_text(&mut a, "3, 4");
    a.update(key(KeyCode::Down));
    clear_field(&mut a);
    type_text(&mut a, "1-2");
    let e = a.update(key(KeyCode::Enter));
    assert!(a.dialog.is_none());
    assert_eq!(
        e.iter()
            .filter(|e| matches!(e, Effect::Submit { .. }))
            .count(),
        4
    );
    assert_eq!(a.runs.len(), 6);
    assert_eq!(a.session.runs.len(), 2);
    assert!(a.dirty);
}

#[test]
fn the_runs_form_lists_the_methods_options_and_rejects_bad_values() {
    let mut a = loaded();
    a.update(ch('n'));
    let Some(Dialog::NewRuns(f)) = &a.dialog else {
        panic!("no form")
    };
    assert!(f.get("opt:subset").is_some());
    let subset = f
        .fields
        .iter()
        .position(|x| x.key == "opt:subset")
        .expect("subset field");
    for _ in 0..subset {
        a.update(key(KeyCode::Down));
    }
    type_text(&mut a, "many");
    a.update(key(KeyCode::Enter));
    let Some(Dialog::NewRuns(f)) = &a.dialog else {
        panic!("form closed")
    };
    assert!(
        f.error.as_deref().is_some_and(|e| e.contains("options")),
        "{:?}",
        f.error
    );
}

#[test]
fn the_same_key_with_other_settings_needs_a_label() {
    let mut a = loaded();
    a.update(ch('n'));
    for _ in 0..2 {
        a.update(key(KeyCode::Down));
    }
    clear_field(&mut a);
    type_text(&mut a, "5");
    a.update(key(KeyCode::Down));
    a.update(key(KeyCode::Down));
    clear_field(&mut a);
    type_text(&mut a, "7");
    a.update(key(KeyCode::Enter));
    let Some(Dialog::NewRuns(f)) = &a.dialog else {
        panic!("form closed")
    };
    assert!(
        f.error.as_deref().is_some_and(|e| e.contains("label")),
        "{:?}",
        f.error
    );
}

#[test]
fn the_load_form_adds_a_data_set_and_errors_show() {
    let mut a = loaded();
    a.update(ch('a'));
    type_text(&mut a, "new");
    a.update(key(KeyCode::Down));
    type_text(&mut a, "x.csv");
    a.update(key(KeyCode::Down));
    a.update(key(KeyCode::Down));
    type_text(&mut a, "1.5");
    a.update(key(KeyCode::Enter));
    let Some(Dialog::LoadData(f)) = &a.dialog else {
        panic!("form closed")
    };
    assert!(
        f.error
            .as_deref()
            .is_some_and(|e| e.contains("between 0 and 1"))
    );
    a.update(key(KeyCode::Backspace));
    a.update(key(KeyCode::Backspace));
    a.update(key(KeyCode::Backspace));
    type_text(&mut a, ".8");
    let e = a.update(key(KeyCode::Enter));
    assert!(
        matches!(&e[..], [Effect::LoadData { name, entry, .. }, Effect::Autosave { .. }] if name == "new" && entry.split == Some(0.8)),
        "{e:?}"
    );
    assert_eq!(a.session.datasets.len(), 2);
    a.update(Event::DataLoaded {
        name: "new".into(),
        epoch: 1,
        result: Err("x.csv: column 'y' is text".into()),
    });
    assert!(matches!(a.data.get("new"), Some(DataState::Failed(m)) if m.contains("text")));
    assert!(a.message.contains("cannot load new"));
}

/// The runs form shows the estimate of its costliest run, and a run the machine's
/// memory cannot hold (the exact GP on 200,000 points: three n×n matrices, 960 GB)
/// starts only on a second Enter.
#[test]
fn the_runs_form_shows_the_estimate_and_asks_before_a_run_too_large() {
    use sgpw::tui::form::Value;
    let (mut a, _) = app();
    let n = 200_000;
    let big = std::sync::Arc::new(sgpw::data::Dataset {
        x_train: nalgebra::DMatrix::from_fn(n, 1, |i, _| i as f64),
        y_train: nalgebra::DVector::from_fn(n, |i, _| (i as f64).sin()),
        ..(*dataset()).clone()
    });
    a.update(Event::DataLoaded {
        name: "d".into(),
        epoch: 1,
        result: Ok(big),
    });
    a.update(ch('n'));
    let note = |a: &App| match &a.dialog {
        Some(Dialog::NewRuns(f)) => (f.note.clone(), f.error.clone()),
        _ => (None, Some("closed".into())),
    };
    let (shown, _) = note(&a);
    assert!(
        shown.as_deref().is_some_and(|s| s.contains(" m = ")
            && s.contains("on 200000 points")
            && s.contains("per evaluation")
            && !s.contains("more than")),
        "{shown:?}"
    );
    if let Some(Dialog::NewRuns(f)) = &mut a.dialog
        && let Some(Value::Multi {
            options, picked, ..
        }) = f
            .fields
            .iter_mut()
            .find(|x| x.key == "method")
            .map(|x| &mut x.value)
    {
        for (o, p) in options.iter().zip(picked.iter_mut()) {
            *p = o == "full";
        }
    }
    a.update(key(KeyCode::Down));
    let (shown, _) = note(&a);
    assert!(
        shown.as_deref().is_some_and(
            |s| s.contains("estimate: full on 200000 points") && s.contains("more than")
        ),
        "{shown:?}"
    );
    assert!(a.update(key(KeyCode::Enter)).is_empty(), "started at once");
    let (_, error) = note(&a);
    assert!(error.is_some_and(|e| e.contains("Enter again")));
    let e = a.update(key(KeyCode::Enter));
    assert!(
        e.iter().any(|e| matches!(e, Effect::Submit { .. })),
        "{e:?}"
    );
}

/// The kernel is typed, not cycled (issue 42): a text field whose help names the
/// plain kernels, read by the command line's parser — an expression is taken, a
/// broken one refused naming the place.
#[test]
fn the_kernel_is_a_text_field_that_takes_an_expression() {
    use sgpw::tui::form::Value;
    let mut f = runs_form(&session(), Some("d"), None);
    let set = |f: &mut Form, text: &str| {
        if let Some(Value::Text(t)) = f
            .fields
            .iter_mut()
            .find(|x| x.key == "opt:kernel")
            .map(|x| &mut x.value)
        {
            *t = text.into();
        }
    };
    let k = f.get("opt:kernel").expect("a kernel field");
    assert!(matches!(k.value, Value::Text(_)), "{:?}", k.value);
    assert!(
        k.help.contains("matern52") && k.help.contains("expression"),
        "{}",
        k.help
    );
    set(&mut f, "matern32");
    let o = parse_options(&f, "fitc").expect("parses");
    assert_eq!(o.kernel_kind(), sgpw::kernel::KernelKind::Matern32);
    set(&mut f, "se + se * periodic(period=1)");
    let o = parse_options(&f, "fitc").expect("parses");
    assert_eq!(o.kernel_expression(), Some("se + se * periodic(period=1)"));
    set(&mut f, "se + * periodic");
    let e = parse_options(&f, "fitc").expect_err("refused");
    assert!(e.contains("at character 6"), "{e}");
}

/// The option fields come from the declaration: an enum option is a choice list
/// (first entry: not set) with the declaration's help; the form's values go
/// through the command line's parser.
#[test]
fn option_fields_follow_the_declaration() {
    use sgpw::tui::form::Value;
    let mut f = runs_form(&session(), Some("d"), None);
    if let Some(Value::Multi { options, index, .. }) = f
        .fields
        .iter_mut()
        .find(|x| x.key == "method")
        .map(|x| &mut x.value)
    {
        *index = options
            .iter()
            .position(|o| o == "ssgp")
            .expect("ssgp listed");
    }
    refresh_option_fields(&mut f);
    let init = f.get("opt:init").expect("ssgp reads init");
    assert!(
        matches!(&init.value, Value::Choice { options, .. } if options == &["(default)", "psds", "random"])
    );
    assert!(init.help.contains("spectral points start"), "{}", init.help);
    assert!(f.get("opt:centres").is_none(), "tfifgp's option");
    // nothing chosen: the command line's defaults (the noise floor's)
    assert_eq!(
        parse_options(&f, "ssgp"),
        sgpw::run_spec::parse_options(&[])
    );
    if let Some(Value::Choice { index, .. }) = f
        .fields
        .iter_mut()
        .find(|x| x.key == "opt:init")
        .map(|x| &mut x.value)
    {
        *index = 2;
    }
    if let Some(Value::Text(t)) = f
        .fields
        .iter_mut()
        .find(|x| x.key == "opt:stages")
        .map(|x| &mut x.value)
    {
        *t = "hyper, points".into();
    }
    let o = parse_options(&f, "ssgp").expect("parses");
    assert_eq!(o.init, Some(sgpw::run_spec::SpectralInit::Random));
    assert_eq!(o.stages.map(|s| s.len()), Some(2));
}

/// A switch option (spgp-dr's --hetero) is a toggle; with dims set and the toggle
/// on, the form's options are the command line's `--dims 2 --hetero`.
#[test]
fn switch_options_are_toggles() {
    use sgpw::tui::form::Value;
    let mut f = runs_form(&session(), Some("d"), None);
    if let Some(Value::Multi { options, index, .. }) = f
        .fields
        .iter_mut()
        .find(|x| x.key == "method")
        .map(|x| &mut x.value)
    {
        *index = options
            .iter()
            .position(|o| o == "spgp-dr")
            .expect("spgp-dr listed");
    }
    refresh_option_fields(&mut f);
    let hetero = f.get("opt:hetero").expect("spgp-dr reads hetero");
    assert_eq!(hetero.value, Value::Toggle(false));
    assert!(hetero.help.contains("pseudo-noise"), "{}", hetero.help);
    assert_eq!(
        parse_options(&f, "spgp-dr"),
        sgpw::run_spec::parse_options(&[])
    );
    for field in f.fields.iter_mut() {
        match (field.key.as_str(), &mut field.value) {
            ("opt:hetero", Value::Toggle(b)) => *b = true,
            ("opt:dims", Value::Text(t)) => *t = "2".into(),
            _ => {}
        }
    }
    let o = parse_options(&f, "spgp-dr").expect("parses");
    assert_eq!((o.dims, o.hetero), (Some(2), true));
    // the toggle keeps its value when the method is chosen again
    refresh_option_fields(&mut f);
    assert_eq!(
        f.get("opt:hetero").map(|x| &x.value),
        Some(&Value::Toggle(true))
    );
}

/// Several methods picked with Space launch one run group each (options each
/// method reads only), and the form comes back with its last values.
#[test]
fn the_runs_form_takes_several_methods_and_remembers_its_values() {
    let mut a = loaded();
    a.update(ch('n'));
    a.update(key(KeyCode::Down)); // methods, on fitc
    a.update(ch(' ')); // pick fitc
    a.update(key(KeyCode::Right)); // the next method
    let Some(Dialog::NewRuns(f)) = &a.dialog else {
        panic!("no form")
    };
    let next = f
        .get("method")
        .and_then(|m| m.highlighted())
        .map(String::from);
    let next = next.expect("a highlighted method");
    a.update(ch(' '));
    a.update(key(KeyCode::Down));
    clear_field(&mut a);
    type_text(&mut a, "3, 4");
    a.update(key(KeyCode::Down));
    a.update(key(KeyCode::Down));
    clear_field(&mut a);
    type_text(&mut a, "7");
    let e = a.update(key(KeyCode::Enter));
    assert!(a.dialog.is_none(), "{:?}", a.dialog);
    assert_eq!(a.session.runs.len(), 3);
    let methods: Vec<&str> = a.session.runs[1..]
        .iter()
        .map(|r| r.get_ref().method.as_str())
        .collect();
    assert_eq!(methods, ["fitc", next.as_str()]);
    assert!(a.session.runs[1..].iter().all(|r| {
        let r = r.get_ref();
        r.m == [3, 4] && r.iterations == 7
    }));
    assert_eq!(
        e.iter()
            .filter(|e| matches!(e, Effect::Submit { .. }))
            .count(),
        4
    );
    // the form opens again with the last values
    a.update(ch('n'));
    let Some(Dialog::NewRuns(f)) = &a.dialog else {
        panic!("no form")
    };
    assert_eq!(f.text("m"), "3, 4");
    assert_eq!(f.text("iterations"), "7");
    assert_eq!(f.picked("method"), ["fitc".to_string(), next.clone()]);
    // Esc keeps what was typed too
    a.update(key(KeyCode::Down));
    a.update(key(KeyCode::Down));
    clear_field(&mut a);
    type_text(&mut a, "9");
    a.update(key(KeyCode::Esc));
    a.update(ch('n'));
    let Some(Dialog::NewRuns(f)) = &a.dialog else {
        panic!("no form")
    };
    assert_eq!(f.text("m"), "9");
}

#[test]
fn lists_parse() {
    assert_eq!(parse_list("10, 20 40", "m"), Ok(vec![10, 20, 40]));
    assert_eq!(parse_list("1-3", "s"), Ok(vec![1, 2, 3]));
    assert!(
        parse_list("", "m").is_err()
            && parse_list("x", "m").is_err()
            && parse_list("3-1", "m").is_err()
    );
}
