//! The prediction figure of a classifier or a count model, from the same series the
//! app's prediction pane draws: p(y = 1 | x) or the rate along one input with its band
//! from the latent variance and the data on that scale ([`Observed`]), or a
//! classifier's probability map over two inputs with the data, the p = ½ contour and
//! the inducing points ([`ProbMap`]).

use super::drawing;
use super::frame::{Area, LegendRow, Swatch, YLabels, chart, legend_rows, page, rgb};
use super::lines::tick;
use crate::chart::observed::{Observed, Scale};
use crate::chart::palette;
use crate::chart::prediction::Curves;
use crate::chart::prob_map::ProbMap;
use crate::error::Result;
use plotters::prelude::*;

/// Class 0's colour and class 1's, in the map and its legend.
const CLASS_ZERO: RGBColor = RGBColor(0x2c, 0x5f, 0x9e);
const CLASS_ONE: RGBColor = RGBColor(0xc0, 0x39, 0x2b);

/// p(y = 1) = `p` as a colour: class 0's at 0, white at ½, class 1's at 1.
fn diverging(p: f64) -> RGBColor {
    let p = if p.is_finite() {
        p.clamp(0.0, 1.0)
    } else {
        0.5
    };
    let (end, t) = if p < 0.5 {
        (CLASS_ZERO, (0.5 - p) * 2.0)
    } else {
        (CLASS_ONE, (p - 0.5) * 2.0)
    };
    let mix = |a: u8| (255.0 + (a as f64 - 255.0) * t * 0.85).round() as u8;
    RGBColor(mix(end.0), mix(end.1), mix(end.2))
}

/// The 1-D figure: the band, the curve, the data and the method's markers.
pub fn draw_observed(
    root: &Area<'_>,
    title: &str,
    note: Option<&str>,
    c: &Curves,
    o: &Observed,
) -> Result<()> {
    let page = page(root, title, note)?;
    let n = c.grid.len().min(o.mean.len());
    if n < 2 {
        return Ok(());
    }
    let (x0, x1) = (c.grid[0], c.grid[n - 1]);
    let (y0, y1) = o.y_range();
    let y_desc = o.axis_name(&c.target_name);
    let names = (c.input_name.as_str(), y_desc.as_str());
    let mut chart = chart(&page, (x0, x1), (y0, y1), names, YLabels::Ticks)?;
    let roles = palette::PREDICTION;
    let band: Vec<(f64, f64)> = (0..n)
        .map(|i| (c.grid[i], o.hi[i]))
        .chain((0..n).rev().map(|i| (c.grid[i], o.lo[i])))
        .collect();
    chart
        .draw_series(std::iter::once(Polygon::new(
            band,
            rgb(roles.latent).mix(0.35).filled(),
        )))
        .map_err(drawing)?;
    if o.scale == Scale::Probability {
        // the classes' levels, where the data sit
        for level in [0.0, 1.0] {
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(x0, level), (x1, level)],
                    RGBColor(0xbb, 0xbb, 0xbb),
                )))
                .map_err(drawing)?;
        }
    }
    // the data: short vertical ticks at their class (a probability) or points (counts)
    let tick_h = 0.025 * (y1 - y0);
    let data = |points: &[(f64, f64)], color: RGBColor| -> Vec<PathElement<(f64, f64)>> {
        points
            .iter()
            .map(|&(x, y)| {
                // a class-1 tick hangs below 1, a class-0 one stands on 0
                let (a, b) = match o.scale {
                    Scale::Probability if y >= 0.5 => (y - tick_h, y),
                    Scale::Probability => (y, y + tick_h),
                    Scale::Rate => (y - tick_h / 2.0, y + tick_h / 2.0),
                };
                PathElement::new(vec![(x, a), (x, b)], color.stroke_width(1))
            })
            .collect()
    };
    chart
        .draw_series(data(&o.train, rgb(roles.train)))
        .map_err(drawing)?;
    chart
        .draw_series(data(&o.test, rgb(roles.test)))
        .map_err(drawing)?;
    chart
        .draw_series(LineSeries::new(
            (0..n).map(|i| (c.grid[i], o.mean[i])),
            rgb(roles.mean).stroke_width(2),
        ))
        .map_err(drawing)?;
    let at_y = y0 + 0.06 * (y1 - y0);
    chart
        .draw_series(
            c.markers
                .iter()
                .map(|x| TriangleMarker::new((*x, at_y), 6, rgb(roles.markers).filled())),
        )
        .map_err(drawing)?;
    let mut rows: Vec<LegendRow<'static>> = vec![
        (
            match o.scale {
                Scale::Probability => "p(y = 1) at the latent mean ± 2σ".to_string(),
                Scale::Rate => "rate at the latent mean ± 2σ".to_string(),
            },
            Box::new(move |a: &Area<'_>, mid| {
                a.draw(&Rectangle::new(
                    [(8, mid - 5), (32, mid + 5)],
                    rgb(roles.latent).mix(0.35).filled(),
                ))
                .map_err(drawing)
            }),
        ),
        (
            match o.scale {
                Scale::Probability => "predictive p(y = 1 | x)".to_string(),
                Scale::Rate => "posterior mean rate".to_string(),
            },
            Box::new(move |a: &Area<'_>, mid| {
                a.draw(&PathElement::new(
                    vec![(8, mid), (32, mid)],
                    rgb(roles.mean).stroke_width(2),
                ))
                .map_err(drawing)
            }),
        ),
    ];
    let tick_row = |words: String, color: RGBColor| {
        (
            words,
            Box::new(move |a: &Area<'_>, mid: i32| {
                a.draw(&PathElement::new(
                    vec![(20, mid - 6), (20, mid + 6)],
                    color.stroke_width(2),
                ))
                .map_err(drawing)
            }) as Swatch<'static>,
        )
    };
    let class_words = |what: &str| match o.labels {
        Some([zero, one]) => format!("{what} ({zero} at 0, {one} at 1)"),
        None => what.to_string(),
    };
    rows.push(tick_row(class_words("training data"), rgb(roles.train)));
    if !o.test.is_empty() {
        rows.push(tick_row(class_words("test data"), rgb(roles.test)));
    }
    if !c.markers.is_empty() {
        rows.push((
            c.marker_caption.clone(),
            Box::new(move |a: &Area<'_>, mid| {
                a.draw(&TriangleMarker::new(
                    (20, mid),
                    6,
                    rgb(roles.markers).filled(),
                ))
                .map_err(drawing)
            }),
        ));
    }
    legend_rows(&page, rows)
}

/// The p = ½ contour of the map as segments (marching squares on its grid).
fn half_contour(m: &ProbMap) -> Vec<[(f64, f64); 2]> {
    let nx = m.xs.len();
    let p = |i: usize, j: usize| m.p[j * nx + i] - 0.5;
    let mut out = Vec::new();
    for j in 0..m.ys.len().saturating_sub(1) {
        for i in 0..nx.saturating_sub(1) {
            // the cell's corners anticlockwise from the bottom left, and where an edge
            // between two of opposite sign crosses ½
            let c = [(i, j), (i + 1, j), (i + 1, j + 1), (i, j + 1)];
            let mut cross = Vec::new();
            for k in 0..4 {
                let (a, b) = (c[k], c[(k + 1) % 4]);
                let (va, vb) = (p(a.0, a.1), p(b.0, b.1));
                if (va < 0.0) != (vb < 0.0) {
                    let t = va / (va - vb);
                    let at = |g: &[f64], u: usize, v: usize| g[u] + t * (g[v] - g[u]);
                    cross.push((at(&m.xs, a.0, b.0), at(&m.ys, a.1, b.1)));
                }
            }
            if cross.len() >= 2 {
                out.push([cross[0], cross[1]]);
            }
            if cross.len() == 4 {
                out.push([cross[2], cross[3]]);
            }
        }
    }
    out
}

/// The 2-D figure: the probability map, its p = ½ contour, the data coloured by class
/// and the inducing points.
pub fn draw_map(root: &Area<'_>, title: &str, note: Option<&str>, m: &ProbMap) -> Result<()> {
    let page = page(root, title, note)?;
    let small = &page.small;
    if m.xs.len() < 2 || m.ys.len() < 2 {
        return Ok(());
    }
    let (x0, x1) = m.x_range();
    let (y0, y1) = m.y_range();
    // no mesh under the map's cells
    let mut chart = ChartBuilder::on(&page.body)
        .margin(8)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(drawing)?;
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc(m.names[0].as_str())
        .y_desc(m.names[1].as_str())
        .label_style(small.clone())
        .axis_desc_style(small.clone())
        .x_label_formatter(&|v| tick(*v, false))
        .y_label_formatter(&|v| tick(*v, false))
        .draw()
        .map_err(drawing)?;
    // each grid point's cell, half a step either side
    let (nx, ny) = (m.xs.len(), m.ys.len());
    let half = |g: &[f64], k: usize| {
        let lo = if k == 0 {
            g[0]
        } else {
            0.5 * (g[k - 1] + g[k])
        };
        let hi = if k + 1 == g.len() {
            g[k]
        } else {
            0.5 * (g[k] + g[k + 1])
        };
        (lo, hi)
    };
    chart
        .draw_series((0..ny).flat_map(|j| {
            (0..nx).map(move |i| {
                let (a, b) = half(&m.xs, i);
                let (c, d) = half(&m.ys, j);
                Rectangle::new([(a, c), (b, d)], diverging(m.p[j * nx + i]).filled())
            })
        }))
        .map_err(drawing)?;
    chart
        .draw_series(
            half_contour(m)
                .into_iter()
                .map(|s| PathElement::new(s.to_vec(), BLACK.stroke_width(2))),
        )
        .map_err(drawing)?;
    let dot = |filled: bool| {
        move |&(x, y, one): &(f64, f64, bool)| {
            let color = if one { CLASS_ONE } else { CLASS_ZERO };
            let style = if filled {
                color.filled()
            } else {
                color.stroke_width(1)
            };
            Circle::new((x, y), 2, style)
        }
    };
    chart
        .draw_series(m.train.iter().map(dot(true)))
        .map_err(drawing)?;
    chart
        .draw_series(m.test.iter().map(dot(false)))
        .map_err(drawing)?;
    let markers = palette::PREDICTION.markers;
    chart
        .draw_series(m.markers.iter().map(|&p| {
            EmptyElement::at(p)
                + TriangleMarker::new((0, 0), 7, BLACK.filled())
                + TriangleMarker::new((0, 0), 5, rgb(markers).filled())
        }))
        .map_err(drawing)?;
    let [zero, one] = m.labels;
    let target = if m.target_name.is_empty() {
        "y"
    } else {
        &m.target_name
    };
    let swatch = |color: RGBColor| -> Swatch<'static> {
        Box::new(move |a: &Area<'_>, mid| {
            a.draw(&Rectangle::new(
                [(8, mid - 5), (32, mid + 5)],
                color.filled(),
            ))
            .map_err(drawing)
        })
    };
    let point = |color: RGBColor, filled: bool| -> Swatch<'static> {
        Box::new(move |a: &Area<'_>, mid| {
            let style = if filled {
                color.filled()
            } else {
                color.stroke_width(1)
            };
            a.draw(&Circle::new((20, mid), 3, style)).map_err(drawing)
        })
    };
    let mut rows: Vec<LegendRow<'static>> = vec![
        (
            format!("p({target} = {one}) near 1"),
            swatch(diverging(0.95)),
        ),
        ("p = ½".to_string(), swatch(diverging(0.5))),
        (
            format!("p({target} = {one}) near 0"),
            swatch(diverging(0.05)),
        ),
        (
            "p = ½ contour".to_string(),
            Box::new(|a: &Area<'_>, mid| {
                a.draw(&PathElement::new(
                    vec![(8, mid), (32, mid)],
                    BLACK.stroke_width(2),
                ))
                .map_err(drawing)
            }),
        ),
        (
            format!("training, {target} = {one}"),
            point(CLASS_ONE, true),
        ),
        (
            format!("training, {target} = {zero}"),
            point(CLASS_ZERO, true),
        ),
    ];
    if !m.test.is_empty() {
        rows.push((format!("test, {target} = {one}"), point(CLASS_ONE, false)));
        rows.push((format!("test, {target} = {zero}"), point(CLASS_ZERO, false)));
    }
    if !m.markers.is_empty() {
        rows.push((
            m.marker_caption.clone(),
            Box::new(move |a: &Area<'_>, mid| {
                a.draw(&TriangleMarker::new((20, mid), 6, rgb(markers).filled()))
                    .map_err(drawing)
            }),
        ));
    }
    legend_rows(&page, rows)
}
