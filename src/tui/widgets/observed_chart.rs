//! The prediction chart on the target's scale ([`crate::chart::observed`]): a
//! classifier's p(y = 1 | x) on [0, 1] or a count model's rate, its band from the latent
//! variance as vertical segments (as [`super::BandChart`] fills f's), the curve on top,
//! the data as ticks at 0 and 1 (classes) or at their counts, and the method's markers
//! and the x axis as the band chart draws them.

use super::band_chart::{LATENT, MEAN, TEST, TRAIN, frame, x_axis};
use crate::chart::axis;
use crate::chart::observed::{Observed, Scale};
use crate::tui::predict::Curves;
use crate::tui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::Widget;
use ratatui::widgets::canvas::{Canvas, Line as Seg, Points};

pub struct ObservedChart<'a> {
    pub curves: &'a Curves,
    pub observed: &'a Observed,
    pub theme: Theme,
}

impl ObservedChart<'_> {
    /// The y ticks in a chart `height` rows high: 0, 0.5 and 1 for a probability (0 and
    /// 1 alone where the rows are few), the other charts' rules for a rate.
    pub fn y_ticks(&self, height: u16) -> axis::Ticks {
        let plot_rows = height.saturating_sub(2);
        match self.observed.scale {
            Scale::Probability => axis::linear(0.0, 1.0, if plot_rows >= 6 { 3 } else { 2 }),
            Scale::Rate => {
                let (y0, y1) = self.observed.y_range();
                axis::linear(y0.max(0.0), y1, (plot_rows / 3).clamp(2, 6) as usize)
            }
        }
    }
}

impl Widget for ObservedChart<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let (c, o, t) = (self.curves, self.observed, self.theme);
        let n = c.grid.len().min(o.mean.len());
        if area.width < 12 || area.height < 4 || n < 2 {
            return;
        }
        let (y0, y1) = o.y_range();
        let (x0, x1) = (c.grid[0], c.grid[n - 1]);
        let ticks = self.y_ticks(area.height);
        let [plot, markers, xlab] = frame(area, buf, &ticks, [y0, y1], t);
        let canvas = Canvas::default()
            .marker(t.marker())
            .x_bounds([x0, x1])
            .y_bounds([y0, y1])
            .paint(|ctx| {
                if t.color {
                    for i in 0..n {
                        ctx.draw(&Seg::new(c.grid[i], o.lo[i], c.grid[i], o.hi[i], LATENT));
                    }
                } else {
                    // without colour the band is its two edges, so the curve stays readable
                    for i in 1..n {
                        for e in [&o.lo, &o.hi] {
                            ctx.draw(&Seg::new(
                                c.grid[i - 1],
                                e[i - 1],
                                c.grid[i],
                                e[i],
                                ratatui::style::Color::Reset,
                            ));
                        }
                    }
                }
                ctx.layer();
                for i in 1..n {
                    ctx.draw(&Seg::new(
                        c.grid[i - 1],
                        o.mean[i - 1],
                        c.grid[i],
                        o.mean[i],
                        t.canvas(MEAN),
                    ));
                }
                ctx.layer();
                ctx.draw(&Points {
                    coords: &o.test,
                    color: t.canvas(TEST),
                });
                if t.color {
                    ctx.draw(&Points {
                        coords: &o.train,
                        color: TRAIN,
                    });
                } else {
                    let glyph = if t.ascii { "+" } else { "•" };
                    for &(x, y) in &o.train {
                        ctx.print(x, y, glyph);
                    }
                }
            });
        canvas.render(plot, buf);
        x_axis(buf, markers, xlab, c, (x0, x1), &t);
    }
}
