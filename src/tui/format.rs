//! Number formatting shared by the views, the widgets and the status messages. It
//! lives apart from both so widgets need not import views.

/// A value with `digits` decimals; "-" when there is none.
pub fn fmt_opt(v: Option<f64>, digits: usize) -> String {
    match v {
        Some(v) if v.is_finite() => format!("{v:.digits$}"),
        Some(v) => format!("{v}"),
        None => "-".into(),
    }
}

/// NMSE spans decades: four significant figures.
pub fn fmt_nmse(v: Option<f64>) -> String {
    match v {
        Some(v) if v.is_finite() && v != 0.0 && v.abs() < 0.001 => format!("{v:.2e}"),
        Some(v) if v.is_finite() => format!("{v:.4}"),
        Some(v) => format!("{v}"),
        None => "-".into(),
    }
}

/// A number in a few characters (axis labels).
pub fn short(v: f64) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    let a = v.abs();
    if a != 0.0 && !(0.01..1e5).contains(&a) {
        format!("{v:.1e}")
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// A duration with its unit in at most six characters: 0.05s, 48.0s, 1m12s, 2h05m.
pub fn duration(secs: f64) -> String {
    if !secs.is_finite() || secs < 0.0 {
        return "-".into();
    }
    if secs < 9.995 {
        return format!("{secs:.2}s");
    }
    if secs < 59.95 {
        return format!("{secs:.1}s");
    }
    let whole = secs.round() as u64;
    if whole < 3600 {
        format!("{}m{:02}s", whole / 60, whole % 60)
    } else {
        format!("{}h{:02}m", whole / 3600, whole % 3600 / 60)
    }
}

/// An objective value in at most eight characters: two decimals, fewer as it grows
/// (205582.2, 1234567), scientific beyond.
pub fn objective(v: Option<f64>) -> String {
    match v {
        Some(v) if v.is_finite() && v.abs() < 1e5 => format!("{v:.2}"),
        Some(v) if v.is_finite() && v.abs() < 1e6 => format!("{v:.1}"),
        Some(v) if v.is_finite() && v.abs() < 1e7 => format!("{v:.0}"),
        Some(v) if v.is_finite() => format!("{v:.2e}"),
        other => fmt_opt(other, 2),
    }
}

/// A run label in at most `width` columns that keeps what tells it apart: whole when it
/// fits; else without its `-std` / `-raw` tag (the runs table has a column for it);
/// else its method, "…" and as much of its end as fits (`vfe…rn52`).
pub fn run_label(label: &str, width: usize) -> String {
    let count = |s: &str| s.chars().count();
    if count(label) <= width {
        return label.to_string();
    }
    let pieces: Vec<&str> = label.split('-').collect();
    let short: String = if pieces.len() > 1 && matches!(pieces[1], "std" | "raw") {
        let mut rest = vec![pieces[0]];
        rest.extend(&pieces[2..]);
        rest.join("-")
    } else {
        label.to_string()
    };
    if count(&short) <= width {
        return short;
    }
    let head: String = pieces[0]
        .chars()
        .take(width.saturating_sub(1) / 2)
        .collect();
    let tail_len = width.saturating_sub(count(&head) + 1);
    let chars: Vec<char> = short.chars().collect();
    let tail: String = chars[chars.len().saturating_sub(tail_len)..]
        .iter()
        .collect();
    format!("{head}…{tail}")
}

/// A count in a few characters: 950, 12.3k, 1.2M.
pub fn count(n: usize) -> String {
    let v = n as f64;
    if n < 1000 {
        n.to_string()
    } else if n < 1_000_000 {
        format!("{:.1}k", v / 1e3)
    } else {
        format!("{:.1}M", v / 1e6)
    }
}

/// How far a load has come: "big.parquet: 1.2M rows (60%)…", then
/// "big.parquet: 2.0M rows, checking the columns…".
pub fn describe_load(p: &crate::data::LoadProgress) -> String {
    let file = p.file.file_name().map_or_else(
        || p.file.display().to_string(),
        |f| f.to_string_lossy().into_owned(),
    );
    if p.checking {
        format!("{file}: {} rows, checking the columns…", count(p.rows))
    } else {
        format!(
            "{file}: {} rows ({:.0}%)…",
            count(p.rows),
            100.0 * p.fraction.clamp(0.0, 1.0)
        )
    }
}
