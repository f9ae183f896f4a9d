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
