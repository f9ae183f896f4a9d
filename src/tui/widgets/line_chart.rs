//! A line chart whose curves can each have their own glyph. ratatui's Chart draws a
//! curve with one of a handful of markers and cannot print a character per point, so
//! without colour only a few curves could be told apart. Here a curve is a line in its
//! colour (Braille, or the `--ascii` marker), or, without colour, its own glyph in
//! every cell it passes through (• + x o * # …), so any number of curves differ.
//! Axes and labels as in ratatui's Chart: y labels on the left, x labels below.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::symbols::Marker;
use ratatui::widgets::Widget;
use ratatui::widgets::canvas::{Canvas, Line as Seg, Points};

/// One curve: its points in data units, and how it is drawn.
#[derive(Clone, Debug)]
pub struct Curve<'a> {
    pub points: &'a [(f64, f64)],
    /// Colour of a line curve (Reset without colour).
    pub color: Color,
    /// Without colour: the glyph printed in every cell the curve passes through.
    pub glyph: Option<&'static str>,
    /// Also mark each point with a block (a curve of a few points, such as NMSE vs m).
    pub mark_points: bool,
}

#[derive(Clone, Debug)]
pub struct LineChart<'a> {
    pub curves: Vec<Curve<'a>>,
    pub x_bounds: [f64; 2],
    pub y_bounds: [f64; 2],
    /// Left, (middle,) right.
    pub x_labels: Vec<String>,
    /// (value, label): each label on the row of its value ([`crate::chart::axis`]
    /// chooses them, as it does for the figures).
    pub y_labels: Vec<(f64, String)>,
    /// Width of the y-label column; at least the widest label (so two charts stacked
    /// can share their x axis).
    pub label_width: u16,
    pub marker: Marker,
    pub axis_style: Style,
}

impl LineChart<'_> {
    /// The width the y labels need.
    pub fn labels_width(labels: &[(f64, String)]) -> u16 {
        labels
            .iter()
            .map(|l| l.1.chars().count())
            .max()
            .unwrap_or(0) as u16
    }

    /// The y labels of `ticks`, for a chart whose y values are `value(position)`.
    pub fn ticks(ticks: &crate::chart::axis::Ticks) -> Vec<(f64, String)> {
        ticks.pairs().map(|(v, l)| (v, l.to_string())).collect()
    }
}

/// Y labels right-aligned in `column` (the rows of the plot, the width of the labels),
/// each on the row of its value in `bounds`, one per row; those outside are left out.
pub fn y_labels<'a>(
    buf: &mut Buffer,
    column: Rect,
    [y0, y1]: [f64; 2],
    labels: impl Iterator<Item = (f64, &'a str)>,
    style: Style,
) {
    let mut used: Vec<u16> = Vec::new();
    for (v, label) in labels {
        let f = if y1 > y0 { (v - y0) / (y1 - y0) } else { 0.5 };
        if !(-1e-9..=1.0 + 1e-9).contains(&f) {
            continue;
        }
        let from_top = ((1.0 - f) * column.height.saturating_sub(1) as f64).round() as u16;
        let row = column.y + from_top.min(column.height.saturating_sub(1));
        if used.contains(&row) {
            continue;
        }
        used.push(row);
        let w = label.chars().count() as u16;
        buf.set_string(column.x + column.width.saturating_sub(w), row, label, style);
    }
}

impl Widget for LineChart<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let lw = self.label_width.max(Self::labels_width(&self.y_labels));
        let has_x_labels = !self.x_labels.is_empty();
        let below = if has_x_labels { 2 } else { 1 };
        if area.width < lw + 4 || area.height < below + 1 {
            return;
        }
        let plot = Rect {
            x: area.x + lw + 1,
            y: area.y,
            width: area.width - lw - 1,
            height: area.height - below,
        };
        // axes
        for y in plot.top()..plot.bottom() {
            buf.set_string(plot.x - 1, y, "│", self.axis_style);
        }
        let axis_y = plot.bottom();
        buf.set_string(plot.x - 1, axis_y, "└", self.axis_style);
        for x in plot.left()..plot.right() {
            buf.set_string(x, axis_y, "─", self.axis_style);
        }
        y_labels(
            buf,
            Rect {
                x: area.x,
                width: lw,
                ..plot
            },
            self.y_bounds,
            self.y_labels.iter().map(|(v, l)| (*v, l.as_str())),
            self.axis_style,
        );
        // x labels: left, middle, right
        if has_x_labels {
            let y = axis_y + 1;
            let n = self.x_labels.len();
            for (k, label) in self.x_labels.iter().enumerate() {
                let w = label.chars().count() as u16;
                let x = if k == 0 {
                    plot.x
                } else if k == n - 1 {
                    plot.right().saturating_sub(w)
                } else {
                    let at = plot.x + (plot.width.saturating_sub(1) as usize * k / (n - 1)) as u16;
                    at.saturating_sub(w / 2)
                };
                buf.set_string(x.max(area.x), y, label, self.axis_style);
            }
        }
        let [x0, x1] = self.x_bounds;
        let [y0, y1] = self.y_bounds;
        // lines first, glyph curves on top
        let lines: Vec<&Curve> = self.curves.iter().filter(|c| c.glyph.is_none()).collect();
        Canvas::default()
            .marker(self.marker)
            .x_bounds([x0, x1])
            .y_bounds([y0, y1])
            .paint(|ctx| {
                for c in &lines {
                    for w in c.points.windows(2) {
                        ctx.draw(&Seg::new(w[0].0, w[0].1, w[1].0, w[1].1, c.color));
                    }
                    if c.points.len() == 1 {
                        ctx.draw(&Points {
                            coords: c.points,
                            color: c.color,
                        });
                    }
                }
            })
            .render(plot, buf);
        let cell = |(x, y): (f64, f64)| -> (f64, f64) {
            let fx = if x1 > x0 { (x - x0) / (x1 - x0) } else { 0.0 };
            let fy = if y1 > y0 { (y - y0) / (y1 - y0) } else { 0.0 };
            (
                fx * (plot.width.saturating_sub(1)) as f64,
                (1.0 - fy) * (plot.height.saturating_sub(1)) as f64,
            )
        };
        let inside = |c: f64, r: f64| {
            c >= -0.5 && r >= -0.5 && c < plot.width as f64 - 0.5 && r < plot.height as f64 - 0.5
        };
        let put = |c: f64, r: f64, glyph: &str, style: Style, buf: &mut Buffer| {
            if inside(c, r) {
                buf.set_string(
                    plot.x + c.round() as u16,
                    plot.y + r.round() as u16,
                    glyph,
                    style,
                );
            }
        };
        for c in &self.curves {
            let style = Style::new().fg(c.color);
            if let Some(glyph) = c.glyph {
                let pts: Vec<(f64, f64)> = c.points.iter().map(|p| cell(*p)).collect();
                if let [only] = pts[..] {
                    put(only.0, only.1, glyph, style, buf);
                }
                for w in pts.windows(2) {
                    let ((ca, ra), (cb, rb)) = (w[0], w[1]);
                    // every column between the two points, and the rows in between
                    let (c_from, c_to) = (ca.round() as i64, cb.round() as i64);
                    let mut last_row = ra.round() as i64;
                    for col in c_from.min(c_to)..=c_from.max(c_to) {
                        let t = if cb != ca {
                            ((col as f64 - ca) / (cb - ca)).clamp(0.0, 1.0)
                        } else {
                            1.0
                        };
                        let row = (ra + t * (rb - ra)).round() as i64;
                        for r in last_row.min(row)..=last_row.max(row) {
                            put(col as f64, r as f64, glyph, style, buf);
                        }
                        last_row = row;
                    }
                }
            }
            if c.mark_points {
                for p in c.points {
                    let (col, row) = cell(*p);
                    put(col, row, c.glyph.unwrap_or("■"), style, buf);
                }
            }
        }
    }
}
