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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_as_before() {
        assert_eq!(fmt_opt(Some(1.23456), 3), "1.235");
        assert_eq!(fmt_opt(Some(f64::NAN), 2), "NaN");
        assert_eq!(fmt_opt(None, 2), "-");
        assert_eq!(fmt_nmse(Some(0.01)), "0.0100");
        assert_eq!(fmt_nmse(Some(0.0001234)), "1.23e-4");
        assert_eq!(fmt_nmse(Some(0.0)), "0.0000");
        assert_eq!(short(123456.0), "1.2e5");
        assert_eq!(short(250.0), "250");
        assert_eq!(short(12.34), "12.3");
        assert_eq!(short(0.5), "0.50");
        assert_eq!(short(0.0), "0.00");
        assert_eq!(count(950), "950");
        assert_eq!(count(12_345), "12.3k");
        assert_eq!(count(1_234_567), "1.2M");
    }
}
