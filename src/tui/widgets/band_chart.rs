//! A predictive band chart. ratatui's Chart cannot fill between two curves, so the
//! ±2σ bands are vertical segments on a Canvas, one per grid point; then the mean and
//! the data on top, the x-locations of the inducing / basis points as markers on a row
//! under the plot, and axis labels.
//!
//! With colour, the noisy band is filled dim and the latent band bright; without
//! colour, the latent band is filled and the noisy band drawn as its two edges.

use crate::chart::axis;
use crate::methods::MarkerSize;
use crate::tui::format::short;
use crate::tui::predict::Curves;
use crate::tui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Color;
use ratatui::widgets::Widget;
use ratatui::widgets::canvas::{Canvas, Line as Seg, Points};

/// The glyph of a marker of the size its method gave it (full when it gave none).
pub fn marker_glyph(size: Option<MarkerSize>, ascii: bool) -> &'static str {
    match (ascii, size.unwrap_or(MarkerSize::Full)) {
        (false, MarkerSize::Full) => "▲",
        (false, MarkerSize::Half) => "▴",
        (false, MarkerSize::Dot) => "·",
        (true, MarkerSize::Full) => "^",
        (true, MarkerSize::Half) => "'",
        (true, MarkerSize::Dot) => ".",
    }
}

pub struct BandChart<'a> {
    pub curves: &'a Curves,
    pub theme: Theme,
}

pub const NOISY: Color = Color::DarkGray;
pub const LATENT: Color = Color::Blue;
pub const MEAN: Color = Color::LightYellow;
pub const TRAIN: Color = Color::LightRed;
pub const TEST: Color = Color::LightGreen;

impl BandChart<'_> {
    /// The plotted y range: bands and data, padded by 4 % ([`Curves::y_range`]).
    pub fn y_bounds(&self) -> (f64, f64) {
        self.curves.y_range()
    }

    /// The y ticks in a chart `height` rows high (the plot and the two rows under it),
    /// by the rules of the other charts ([`axis`]): at most one per three rows, labels
    /// that differ, and a note of what they leave out for the axis's name.
    pub fn y_ticks(&self, height: u16) -> axis::Ticks {
        let (y0, y1) = self.y_bounds();
        let plot_rows = height.saturating_sub(2);
        axis::linear(y0, y1, (plot_rows / 3).clamp(2, 6) as usize)
    }
}

impl Widget for BandChart<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let c = self.curves;
        let t = self.theme;
        if area.width < 12 || area.height < 4 || c.grid.len() < 2 {
            return;
        }
        let (y0, y1) = self.y_bounds();
        let (x0, x1) = (c.grid[0], c.grid[c.grid.len() - 1]);
        let ticks = self.y_ticks(area.height);
        let [plot, markers, xlab] = frame(area, buf, &ticks, [y0, y1], t);

        let color = t.color;
        let canvas = Canvas::default()
            .marker(t.marker())
            .x_bounds([x0, x1])
            .y_bounds([y0, y1])
            .paint(|ctx| {
                let n = c.grid.len();
                let band =
                    |k: f64, sd: &[f64], i: usize| (c.mean[i] - k * sd[i], c.mean[i] + k * sd[i]);
                if color {
                    for i in 0..n {
                        let (lo, hi) = band(2.0, &c.sd_noisy, i);
                        ctx.draw(&Seg::new(c.grid[i], lo, c.grid[i], hi, NOISY));
                    }
                } else {
                    for i in 1..n {
                        for s in [-2.0, 2.0] {
                            let a = c.mean[i - 1] + s * c.sd_noisy[i - 1];
                            let b = c.mean[i] + s * c.sd_noisy[i];
                            ctx.draw(&Seg::new(c.grid[i - 1], a, c.grid[i], b, Color::Reset));
                        }
                    }
                }
                ctx.layer();
                for i in 0..n {
                    let (lo, hi) = band(2.0, &c.sd_latent, i);
                    ctx.draw(&Seg::new(c.grid[i], lo, c.grid[i], hi, t.canvas(LATENT)));
                }
                ctx.layer();
                for i in 1..n {
                    ctx.draw(&Seg::new(
                        c.grid[i - 1],
                        c.mean[i - 1],
                        c.grid[i],
                        c.mean[i],
                        t.canvas(MEAN),
                    ));
                }
                ctx.layer();
                ctx.draw(&Points {
                    coords: &c.test,
                    color: t.canvas(TEST),
                });
                if color {
                    ctx.draw(&Points {
                        coords: &c.train,
                        color: TRAIN,
                    });
                } else {
                    // Without colour, training points are glyphs so they differ from test points.
                    let glyph = if t.ascii { "+" } else { "•" };
                    for &(x, y) in &c.train {
                        ctx.print(x, y, glyph);
                    }
                }
            });
        canvas.render(plot, buf);
        x_axis(buf, markers, xlab, c, (x0, x1), &t);
    }
}

/// The frame both prediction charts share: the y tick labels in a column as wide as the
/// widest, drawn against the plot's rows, and the areas of the plot, the marker row and
/// the x labels' row to the right of it.
pub(super) fn frame(
    area: Rect,
    buf: &mut Buffer,
    ticks: &axis::Ticks,
    y: [f64; 2],
    t: Theme,
) -> [Rect; 3] {
    let lw = ticks
        .labels
        .iter()
        .map(|s| s.chars().count())
        .max()
        .unwrap_or(0) as u16
        + 1;
    let [ylab, right] =
        Layout::horizontal([Constraint::Length(lw), Constraint::Min(0)]).areas(area);
    let [plot, markers, xlab] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(right);
    super::line_chart::y_labels(
        buf,
        Rect {
            width: lw - 1,
            y: plot.y,
            height: plot.height,
            ..ylab
        },
        y,
        ticks.pairs(),
        t.dim(),
    );
    [plot, markers, xlab]
}

/// Under a chart along one input: what the method marks on the x axis, each at the size
/// it gave, and the axis's ends and name (the observed-scale chart draws the same).
pub fn x_axis(buf: &mut Buffer, markers: Rect, xlab: Rect, c: &Curves, x: (f64, f64), t: &Theme) {
    let (x0, x1) = x;
    let w = markers.width.max(1) as f64;
    for (k, &x) in c.markers.iter().enumerate() {
        if x < x0 || x > x1 {
            continue;
        }
        let glyph = marker_glyph(c.marker_sizes.get(k).copied(), t.ascii);
        let col = ((x - x0) / (x1 - x0) * (w - 1.0)).round() as u16;
        buf.set_string(markers.x + col, markers.y, glyph, t.warn());
    }
    let left = short(x0);
    let right_label = short(x1);
    let mid = format!("{} →", c.input_name);
    buf.set_string(xlab.x, xlab.y, &left, t.dim());
    let rx = xlab
        .right()
        .saturating_sub(right_label.chars().count() as u16);
    buf.set_string(rx, xlab.y, &right_label, t.dim());
    let mx = xlab.x + (xlab.width.saturating_sub(mid.chars().count() as u16)) / 2;
    if mx > xlab.x + left.chars().count() as u16 {
        buf.set_string(mx, xlab.y, &mid, t.dim());
    }
}
