//! Word wrapping for text the app shows in a fixed width (status messages, form help,
//! the full-text dialog): lines break between words, a word longer than a line is cut
//! into pieces, and widths are display widths.

use ratatui::text::Span;

/// The display width of `s`.
pub fn width(s: &str) -> usize {
    Span::raw(s).width()
}

/// `text` in lines of at most `first` columns for the first line and `rest` for the
/// others (at least one line, maybe empty).
pub fn wrap_first(text: &str, first: usize, rest: usize) -> Vec<String> {
    let mut lines: Vec<String> = vec![String::new()];
    let limit = |lines: &Vec<String>| if lines.len() == 1 { first } else { rest }.max(1);
    for word in text.split_whitespace() {
        let mut word = word.to_string();
        loop {
            let line = lines.last().map_or("", String::as_str);
            let sep = usize::from(!line.is_empty());
            let room = limit(&lines).saturating_sub(width(line) + sep);
            if width(&word) <= room {
                let line = lines.last_mut().expect("at least one line");
                if sep == 1 {
                    line.push(' ');
                }
                line.push_str(&word);
                break;
            }
            if !line.is_empty() {
                lines.push(String::new());
                continue;
            }
            // a word longer than a whole line: cut it
            let cut: String = cut_to(&word, limit(&lines));
            let tail = word[cut.len()..].to_string();
            *lines.last_mut().expect("at least one line") = cut;
            lines.push(String::new());
            word = tail;
            if word.is_empty() {
                lines.pop();
                break;
            }
        }
    }
    lines
}

/// `text` in lines of at most `w` columns.
pub fn wrap(text: &str, w: usize) -> Vec<String> {
    wrap_first(text, w, w)
}

/// A label (no spaces) in lines of at most `w` columns, broken before a `-`, `_`, `.`
/// or `/` where it can be and cut where it cannot: `fitc-std-val0.1` in 8 columns is
/// `fitc-std` and `-val0.1`, so it never reads as `fitc-std`.
pub fn wrap_label(label: &str, w: usize) -> Vec<String> {
    let w = w.max(1);
    let mut pieces: Vec<String> = Vec::new();
    for c in label.chars() {
        match pieces.last_mut() {
            Some(p) if !matches!(c, '-' | '_' | '.' | '/') => p.push(c),
            _ => pieces.push(c.to_string()),
        }
    }
    let mut lines: Vec<String> = vec![String::new()];
    for mut piece in pieces {
        while !piece.is_empty() {
            let line = lines.last_mut().expect("at least one line");
            if width(line) + width(&piece) <= w {
                line.push_str(&piece);
                break;
            }
            if !line.is_empty() {
                lines.push(String::new());
                continue;
            }
            let cut = cut_to(&piece, w);
            piece = piece[cut.len()..].to_string();
            *line = cut;
            lines.push(String::new());
        }
    }
    if lines.len() > 1 && lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    lines
}

/// The longest prefix of `s` at most `w` columns wide (at least one character).
fn cut_to(s: &str, w: usize) -> String {
    let mut out = String::new();
    for c in s.chars() {
        let mut next = out.clone();
        next.push(c);
        if width(&next) > w && !out.is_empty() {
            break;
        }
        out = next;
    }
    out
}

/// At most `rows` lines of `lines`; when some are left out, the last shown line ends
/// with `more` (cut to make room).
pub fn at_most(mut lines: Vec<String>, rows: usize, w: usize, more: &str) -> Vec<String> {
    if lines.len() <= rows || rows == 0 {
        return lines;
    }
    lines.truncate(rows);
    if let Some(last) = lines.last_mut() {
        let keep = w.saturating_sub(width(more));
        *last = format!("{}{more}", cut_to(last, keep.max(1)));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_between_words_and_cuts_long_words() {
        assert_eq!(wrap("a bb ccc dddd", 6), ["a bb", "ccc", "dddd"]);
        assert_eq!(wrap("", 5), [""]);
        assert_eq!(wrap("abcdefghij", 4), ["abcd", "efgh", "ij"]);
        assert_eq!(wrap_first("one two three", 3, 9), ["one", "two three"]);
        assert_eq!(wrap("σ² ≥ 0 ok", 4), ["σ² ≥", "0 ok"]);
        let long = at_most(wrap("a b c d e f", 3), 2, 5, "…m");
        assert_eq!(long, ["a b", "c d…m"]);
    }

    /// Labels break before their separators, so a longer label never reads as a shorter
    /// one cut; a piece longer than a line is cut; nothing of the label is lost.
    #[test]
    fn labels_wrap_whole() {
        assert_eq!(wrap_label("fitc-std", 8), ["fitc-std"]);
        assert_eq!(wrap_label("fitc-std-val0.1", 8), ["fitc-std", "-val0.1"]);
        assert_eq!(wrap_label("abcdefghijk", 4), ["abcd", "efgh", "ijk"]);
        assert_eq!(wrap_label("a-bcdefghij", 4), ["a", "-bcd", "efgh", "ij"]);
        assert_eq!(wrap_label("", 4), [""]);
        for (label, w) in [("spgp-hs-m20-val0.25-es", 6), ("x_y.z/w", 2)] {
            let lines = wrap_label(label, w);
            assert_eq!(lines.concat(), label);
            assert!(lines.iter().all(|l| width(l) <= w), "{lines:?}");
        }
    }
}
