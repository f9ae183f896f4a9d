//! A classifier's probability map over two inputs in terminal cells
//! ([`crate::chart::prob_map`]): each cell shaded by how sure the model is of a class
//! at its centre (denser the farther p(y = 1) is from ½; class 1's side in its colour
//! and glyphs, class 0's in others, so it reads without colour too), some of the data
//! on top (evenly spaced rows, at most one in six cells, so the map shows between
//! them) as `+` (class 1) and `o` (class 0), and the inducing points as ▲.

use super::band_chart::TRAIN;
use crate::chart::prob_map::ProbMap;
use crate::tui::format::short;
use crate::tui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::widgets::Widget;

pub struct ProbMapChart<'a> {
    pub map: &'a ProbMap,
    pub theme: Theme,
}

/// The shade of p(y = 1) = `p`: four levels of |p − ½| per side, the first blank.
pub fn shade(p: f64, t: &Theme) -> (&'static str, bool) {
    let level = (((p - 0.5).abs() * 8.0).floor() as usize).min(3);
    let one = p >= 0.5;
    let glyphs: [&str; 4] = match (t.ascii, one) {
        (false, true) => [" ", "░", "▒", "▓"],
        (false, false) => [" ", "·", ":", "⁞"],
        (true, true) => [" ", "+", "*", "#"],
        (true, false) => [" ", ".", ":", "="],
    };
    (glyphs[level], one)
}

/// The colour of class 1's side and class 0's.
pub const CLASS_ONE: Color = TRAIN;
pub const CLASS_ZERO: Color = Color::LightCyan;

impl ProbMapChart<'_> {
    /// The y labels: the second input's ends.
    fn y_labels(&self) -> (String, String) {
        let (y0, y1) = self.map.y_range();
        (short(y1), short(y0))
    }

    /// Where the map itself goes in `area`: right of the y labels, above the x labels.
    pub fn plot_area(&self, area: Rect) -> Rect {
        let (top, bottom) = self.y_labels();
        let lw = (top.chars().count().max(bottom.chars().count()) as u16 + 1).min(area.width);
        Rect {
            x: area.x + lw,
            y: area.y,
            width: area.width - lw,
            height: area.height.saturating_sub(1),
        }
    }

    /// How many training points are drawn in `area`: at most one in six cells.
    pub fn drawn(&self, area: Rect) -> usize {
        let plot = self.plot_area(area);
        self.map
            .train
            .len()
            .min(plot.width as usize * plot.height as usize / 6)
    }
}

impl Widget for ProbMapChart<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let (m, t) = (self.map, self.theme);
        if area.width < 16 || area.height < 4 || m.xs.len() < 2 || m.ys.len() < 2 {
            return;
        }
        let (x0, x1) = m.x_range();
        let (y0, y1) = m.y_range();
        let (top, bottom) = self.y_labels();
        let plot = self.plot_area(area);
        let style = |one: bool| {
            if t.color {
                Style::new().fg(if one { CLASS_ONE } else { CLASS_ZERO })
            } else {
                Style::new()
            }
        };
        let (w, h) = (plot.width as f64, plot.height as f64);
        for r in 0..plot.height {
            let y = y1 - (r as f64 + 0.5) / h * (y1 - y0);
            for col in 0..plot.width {
                let x = x0 + (col as f64 + 0.5) / w * (x1 - x0);
                let (glyph, one) = shade(m.at(x, y), &t);
                buf.set_string(plot.x + col, plot.y + r, glyph, style(one));
            }
        }
        let cell = |x: f64, y: f64| -> Option<(u16, u16)> {
            let c = ((x - x0) / (x1 - x0) * w).floor();
            let r = ((y1 - y) / (y1 - y0) * h).floor();
            (c >= 0.0 && c < w && r >= 0.0 && r < h).then(|| (plot.x + c as u16, plot.y + r as u16))
        };
        let keep = self.drawn(area);
        let n = m.train.len();
        for i in 0..keep {
            let (x, y, one) = m.train[i * n / keep];
            if let Some((cx, cy)) = cell(x, y) {
                let glyph = if one { "+" } else { "o" };
                buf.set_string(
                    cx,
                    cy,
                    glyph,
                    style(one).add_modifier(ratatui::style::Modifier::BOLD),
                );
            }
        }
        let marker = if t.ascii { "^" } else { "▲" };
        for &(x, y) in &m.markers {
            if let Some((cx, cy)) = cell(x, y) {
                buf.set_string(cx, cy, marker, t.warn());
            }
        }
        // the axes: the second input's ends at the left, the first's under the map
        buf.set_string(area.x, plot.y, &top, t.dim());
        buf.set_string(area.x, plot.bottom().saturating_sub(1), &bottom, t.dim());
        let xlab = plot.bottom();
        let (left, right) = (short(x0), short(x1));
        buf.set_string(plot.x, xlab, &left, t.dim());
        let rx = plot.right().saturating_sub(right.chars().count() as u16);
        buf.set_string(rx, xlab, &right, t.dim());
        let mid = format!("{} →  ↑ {}", m.names[0], m.names[1]);
        let mx = plot.x + plot.width.saturating_sub(mid.chars().count() as u16) / 2;
        if mx > plot.x + left.chars().count() as u16 && mx + (mid.chars().count() as u16) < rx {
            buf.set_string(mx, xlab, &mid, t.dim());
        }
    }
}
