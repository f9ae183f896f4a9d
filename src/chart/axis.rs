//! Axis ticks and their labels, one set of rules for the app's braille charts and the
//! figures of `sgpw plot`: ticks at 1, 2 or 5 × 10^k, labels with as many digits as it
//! takes to tell them apart, and an offset or a power of ten said once (in a note)
//! where the labels would otherwise be long; log axes get ticks inside the data's range
//! however narrow it is (1-2-5, then every integer mantissa, then evenly spaced values).

/// An axis's ticks: their positions (log10 of the value on a log axis), labels, and
/// what the labels leave out ("+201000" or "×10^6"), to be said beside the axis.
#[derive(Clone, Debug, PartialEq)]
pub struct Ticks {
    pub at: Vec<f64>,
    pub labels: Vec<String>,
    pub note: Option<String>,
}

impl Ticks {
    /// (position, label) pairs.
    pub fn pairs(&self) -> impl Iterator<Item = (f64, &str)> {
        self.at
            .iter()
            .copied()
            .zip(self.labels.iter().map(String::as_str))
    }

    /// The axis's description with the note, if any: "NLML (+201000)".
    pub fn describe(&self, desc: &str) -> String {
        match &self.note {
            Some(n) => format!("{desc} ({n})"),
            None => desc.to_string(),
        }
    }
}

/// The nice step (1, 2 or 5 × 10^k) for at most `max_ticks` ticks over `span`.
fn nice_step(span: f64, max_ticks: usize) -> f64 {
    let raw = span / (max_ticks.max(2) - 1) as f64;
    let p = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|d| d * p)
        .find(|s| *s >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * p)
}

/// The multiples of `step` inside `lo..=hi`.
fn multiples(lo: f64, hi: f64, step: f64) -> Vec<f64> {
    let first = (lo / step - 1e-9).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    (first..=last).map(|k| k as f64 * step).collect()
}

/// Ticks of a linear axis over `lo..hi`: at most `max_ticks` (and at least two where
/// the range allows) multiples of a nice step, labelled by [`labels`].
pub fn linear(lo: f64, hi: f64, max_ticks: usize) -> Ticks {
    if !(lo.is_finite() && hi.is_finite()) || hi <= lo {
        let v = if lo.is_finite() { lo } else { 0.0 };
        let (labels, note) = labels(&[v], 1.0);
        return Ticks {
            at: vec![v],
            labels,
            note,
        };
    }
    let mut max = max_ticks.max(2);
    let (mut step, mut at) = (0.0, Vec::new());
    // a step can leave fewer than two multiples inside; a finer one then
    for _ in 0..4 {
        step = nice_step(hi - lo, max);
        at = multiples(lo, hi, step);
        // the next finer nice step, where its ticks still number at most `max`
        let finer = step
            / if (step / 10f64.powf(step.log10().floor()) - 5.0).abs() < 1e-6 {
                2.5
            } else {
                2.0
            };
        let more = multiples(lo, hi, finer);
        if more.len() <= max && more.len() > at.len() {
            (step, at) = (finer, more);
        }
        if at.len() >= 2 {
            break;
        }
        max += 2;
    }
    let (labels, note) = labels(&at, step);
    Ticks { at, labels, note }
}

/// Labels of values on a grid of `step` (a nice step): as many decimals as the step
/// needs, so neighbours differ. Where the values need more than five significant
/// digits beside their step (a narrow range far from zero) an offset is taken out and
/// said in the note ("+201000"); where they are large (≥ 10^6) or small (< 10^-3) a
/// power of ten is ("×10^6").
pub fn labels(values: &[f64], step: f64) -> (Vec<String>, Option<String>) {
    let step = if step > 0.0 && step.is_finite() {
        step
    } else {
        1.0
    };
    let k = step.log10().floor() as i32;
    let biggest = values.iter().fold(0f64, |a, v| a.max(v.abs()));
    let e = if biggest > 0.0 {
        biggest.log10().floor() as i32
    } else {
        k
    };
    if e - k + 1 > 5 && values.len() > 1 {
        // an offset at a round value below the smallest tick: the labels keep the
        // last three digits of the step's scale
        let unit = 10f64.powi(k + 3);
        let least = values.iter().copied().fold(f64::INFINITY, f64::min);
        let offset = (least / unit).floor() * unit;
        let rest: Vec<f64> = values.iter().map(|v| v - offset).collect();
        let (labels, inner) = labels(&rest, step);
        let off = plain(offset, (-(k + 3)).max(0) as usize);
        let note = match inner {
            Some(n) => format!("{n}, +{off}"),
            None => format!("+{off}"),
        };
        return (labels, Some(note.replace("+-", "−")));
    }
    if !(-3..6).contains(&e) {
        let scale = 10f64.powi(e);
        let decimals = (e - k).max(0) as usize;
        let labels = values.iter().map(|v| plain(v / scale, decimals)).collect();
        return (labels, Some(format!("×10^{e}")));
    }
    let decimals = (-k).max(0) as usize;
    (values.iter().map(|v| plain(*v, decimals)).collect(), None)
}

/// `v` with `decimals` decimals, "0" for a zero that rounding left signed.
fn plain(v: f64, decimals: usize) -> String {
    let s = format!("{v:.decimals$}");
    if s.trim_start_matches('-')
        .chars()
        .all(|c| c == '0' || c == '.')
    {
        return format!("{:.decimals$}", 0.0);
    }
    s
}

/// A value on a log axis with up to four significant digits and no trailing zeros:
/// 0.01, 0.25, 5, 20, 1000; scientific outside 10^-3..10^5.
pub fn log_label(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        return "0".into();
    }
    if !(1e-3..1e5).contains(&a) {
        let s = format!("{v:.1e}");
        return s.replace(".0e", "e");
    }
    let digits = (3 - a.log10().floor() as i64).max(0) as usize;
    let s = format!("{v:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Ticks of a log axis over log10 values `lo..hi`, at most `max_ticks`, every one
/// inside the range: 1, 2 and 5 × 10^k (the powers alone over many decades); where
/// fewer than three of those fall inside (less than a decade), every integer mantissa;
/// where still fewer, evenly spaced values at a nice step (0.24, 0.26, 0.28).
pub fn log10(lo: f64, hi: f64, max_ticks: usize) -> Ticks {
    if !(lo.is_finite() && hi.is_finite()) || hi <= lo {
        return Ticks {
            at: vec![lo],
            labels: vec![log_label(10f64.powf(lo))],
            note: None,
        };
    }
    let max = max_ticks.max(2);
    let inside = |mantissas: &[f64]| -> Vec<f64> {
        (lo.floor() as i32..=hi.ceil() as i32)
            .flat_map(|k| mantissas.iter().map(move |m| m * 10f64.powi(k)))
            .filter(|v| (lo - 1e-9..=hi + 1e-9).contains(&v.log10()))
            .collect()
    };
    let decades = inside(&[1.0]);
    let mut values = inside(&[1.0, 2.0, 5.0]);
    if values.len() > max {
        values = decades;
        // many decades: every second, third … power
        let every = values.len().div_ceil(max).max(1);
        values = values.into_iter().step_by(every).collect();
    } else if values.len() < 3 {
        let finer = inside(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
        if finer.len() >= 3 && finer.len() <= max {
            values = finer;
        } else if finer.len() < 3 {
            let lin = linear(10f64.powf(lo), 10f64.powf(hi), max.min(6));
            return Ticks {
                at: lin.at.iter().map(|v| v.log10()).collect(),
                labels: lin.labels,
                note: lin.note,
            };
        }
    }
    Ticks {
        at: values.iter().map(|v| v.log10()).collect(),
        labels: values.iter().map(|v| log_label(*v)).collect(),
        note: None,
    }
}

/// The y range of objective curves (the evidence chart's), padded by `pad` of its
/// height, and where it cuts: every point is held unless the curves' starts (each
/// curve's first tenth of iterations) rise so far above the rest that holding them
/// would squeeze the rest into less than a third of the height; then those starts run
/// off the top and the highest value cut is returned, for the chart to say.
pub fn objective_range(curves: &[&[(f64, f64)]], pad: f64) -> ((f64, f64), Option<f64>) {
    let values = || {
        curves.iter().flat_map(|pts| {
            let last = pts.last().map_or(0.0, |p| p.0);
            let several = pts.len() > 1;
            pts.iter()
                .filter(|p| p.1.is_finite())
                .map(move |p| (p.1, several && p.0 < (last / 10.0).floor()))
        })
    };
    let lo = values().map(|v| v.0).fold(f64::INFINITY, f64::min);
    let all_hi = values().map(|v| v.0).fold(f64::NEG_INFINITY, f64::max);
    if !lo.is_finite() {
        return ((0.0, 1.0), None);
    }
    let rest_hi = values()
        .filter(|v| !v.1)
        .map(|v| v.0)
        .fold(f64::NEG_INFINITY, f64::max);
    // what the rest may rise to and keep a third of the height
    let limit = lo + 3.0 * (rest_hi - lo);
    let (hi, cut) = if rest_hi.is_finite() && all_hi > limit {
        let held = values()
            .map(|v| v.0)
            .filter(|v| *v <= limit)
            .fold(rest_hi, f64::max);
        (held, Some(all_hi))
    } else {
        (all_hi, None)
    };
    let w = (hi - lo).max(1e-9 * lo.abs().max(1.0));
    ((lo - pad * w, hi + pad * w), cut)
}
