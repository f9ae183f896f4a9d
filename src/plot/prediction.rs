//! The prediction figure: the ±2σ noisy and latent bands, the predictive mean, the
//! training and test points and the method's inducing inputs or feature centres (sized
//! as the app sizes them: SPGP+HS by pseudo-noise) along one input, from the same
//! [`Curves`] the app's prediction pane draws.

use super::drawing;
use super::frame::{Area, LegendRow, YLabels, chart, legend_rows, page, rgb};
use crate::chart::prediction::Curves;
use crate::chart::{axis, palette};
use crate::error::Result;
use crate::methods::MarkerSize;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

pub struct PredictionFigure<'a> {
    pub title: String,
    pub curves: &'a Curves,
    /// A line under the title: what is held fixed, how many points are drawn.
    pub note: Option<String>,
}

impl PredictionFigure<'_> {
    /// The plotted y range: bands and data, padded by 4 % ([`Curves::y_range`]).
    pub fn y_range(&self) -> (f64, f64) {
        self.curves.y_range()
    }

    pub fn svg(&self, size: (u32, u32)) -> Result<String> {
        super::svg_page(size, |root| self.draw(root))
    }

    pub(super) fn draw(&self, root: &Area<'_>) -> Result<()> {
        let c = self.curves;
        // a classifier's map or the target's own scale ([`super::observed`])
        if let Some(map) = &c.map {
            return super::observed::draw_map(root, &self.title, self.note.as_deref(), map);
        }
        if let Some(o) = &c.observed {
            return super::observed::draw_observed(root, &self.title, self.note.as_deref(), c, o);
        }
        let page = page(root, &self.title, self.note.as_deref())?;
        let n = c.grid.len();
        if n < 2 {
            return Ok(());
        }
        let (x0, x1) = (c.grid[0], c.grid[n - 1]);
        let (y0, y1) = self.y_range();
        let y_ticks = axis::linear(
            y0,
            y1,
            (page.body.dim_in_pixel().1 / 55).clamp(3, 10) as usize,
        );
        let y_desc = y_ticks.describe(if c.target_name.is_empty() {
            "y"
        } else {
            &c.target_name
        });
        // the y ticks are drawn below, as the axis module places them
        let names = (c.input_name.as_str(), y_desc.as_str());
        let mut chart = chart(&page, (x0, x1), (y0, y1), names, YLabels::Own)?;
        let plotting = chart.plotting_area().clone();
        for (t, text) in y_ticks.pairs() {
            plotting
                .draw(&PathElement::new(
                    vec![(x0, t), (x1, t)],
                    RGBColor(0xdd, 0xdd, 0xdd),
                ))
                .map_err(drawing)?;
            // the page's pixels, made relative to `root` (a panel of a page of several)
            let (px, py) = plotting.map_coordinate(&(x0, t));
            let (ox, oy) = root.get_base_pixel();
            let style =
                TextStyle::from(page.small.clone()).pos(Pos::new(HPos::Right, VPos::Center));
            root.draw(&Text::new(text.to_string(), (px - 6 - ox, py - oy), style))
                .map_err(drawing)?;
        }
        let roles = palette::PREDICTION;
        let band = |k: f64, sd: &[f64]| -> Vec<(f64, f64)> {
            let upper = (0..n).map(|i| (c.grid[i], c.mean[i] + k * sd[i]));
            let lower = (0..n).rev().map(|i| (c.grid[i], c.mean[i] - k * sd[i]));
            upper.chain(lower).collect()
        };
        // a summand's chart has no noisy band (its sd_noisy is its sd_latent)
        let noisy = c.sd_noisy != c.sd_latent;
        if noisy {
            chart
                .draw_series(std::iter::once(Polygon::new(
                    band(2.0, &c.sd_noisy),
                    rgb(roles.noisy).mix(0.35).filled(),
                )))
                .map_err(drawing)?;
        }
        chart
            .draw_series(std::iter::once(Polygon::new(
                band(2.0, &c.sd_latent),
                rgb(roles.latent).mix(0.45).filled(),
            )))
            .map_err(drawing)?;
        let dot = |color: RGBColor, filled: bool| {
            move |p: &(f64, f64)| {
                let style = if filled {
                    color.filled()
                } else {
                    color.stroke_width(1)
                };
                Circle::new(*p, 2, style)
            }
        };
        chart
            .draw_series(c.train.iter().map(dot(rgb(roles.train), true)))
            .map_err(drawing)?;
        chart
            .draw_series(c.test.iter().map(dot(rgb(roles.test), false)))
            .map_err(drawing)?;
        chart
            .draw_series(LineSeries::new(
                (0..n).map(|i| (c.grid[i], c.mean[i])),
                rgb(roles.mean).stroke_width(2),
            ))
            .map_err(drawing)?;
        // the method's markers along the bottom of the plot, sized as it sizes them
        let at_y = y0 + 0.02 * (y1 - y0);
        chart
            .draw_series(c.markers.iter().enumerate().map(|(k, x)| {
                let size = match c.marker_sizes.get(k) {
                    None | Some(MarkerSize::Full) => 6,
                    Some(MarkerSize::Half) => 4,
                    Some(MarkerSize::Dot) => 2,
                };
                TriangleMarker::new((*x, at_y), size, rgb(roles.markers).filled())
            }))
            .map_err(drawing)?;
        // legend
        let mut rows: Vec<(&str, RGBColor, u8)> = vec![
            ("y ± 2σ (noisy)", rgb(roles.noisy), 0),
            ("f ± 2σ (latent)", rgb(roles.latent), 0),
            ("predictive mean", rgb(roles.mean), 1),
            ("training points", rgb(roles.train), 2),
        ];
        rows.retain(|r| (noisy || r.1 != rgb(roles.noisy)) && (!c.train.is_empty() || r.2 != 2));
        if !c.test.is_empty() {
            rows.push(("test points", rgb(roles.test), 3));
        }
        if !c.markers.is_empty() {
            rows.push((c.marker_caption.as_str(), rgb(roles.markers), 4));
        }
        let rows: Vec<LegendRow<'_>> = rows
            .into_iter()
            .map(|(label, color, kind)| {
                let band = if label.starts_with('y') { 0.35 } else { 0.45 };
                let swatch = move |a: &Area<'_>, mid: i32| {
                    match kind {
                        0 => a.draw(&Rectangle::new(
                            [(8, mid - 5), (32, mid + 5)],
                            color.mix(band).filled(),
                        )),
                        1 => a.draw(&PathElement::new(
                            vec![(8, mid), (32, mid)],
                            color.stroke_width(2),
                        )),
                        2 => a.draw(&Circle::new((20, mid), 3, color.filled())),
                        3 => a.draw(&Circle::new((20, mid), 3, color.stroke_width(1))),
                        _ => a.draw(&TriangleMarker::new((20, mid), 6, color.filled())),
                    }
                    .map_err(drawing)
                };
                (label.to_string(), Box::new(swatch) as _)
            })
            .collect();
        legend_rows(&page, rows)
    }
}
