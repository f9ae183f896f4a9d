//! Line figures: the evidence, validation and comparison charts. A figure is its series
//! (label, palette index, points, ± error per point), an optional reference line and
//! marked points; it is drawn with each series in its palette hue and with its palette
//! shape on its points (so it reads in greyscale), and a legend beside the plot that
//! gives every label whole.
//!
//! A log axis is drawn by plotting log10 of the values on a linear axis whose tick labels
//! give the values themselves.

use super::{FONT, drawing};
use crate::chart::axis;
use crate::chart::palette::{self, Shape};
use crate::error::Result;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// One curve.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub label: String,
    /// Palette index: hue and shape.
    pub index: usize,
    pub points: Vec<(f64, f64)>,
    /// ± this much around each point (a standard error); empty for none.
    pub errors: Vec<f64>,
    /// Mark every point (few points), else a shape every so often along the line.
    pub mark_all: bool,
    /// Drawn pale and thin, without shapes: a noisy estimate beside a series that
    /// holds the exact values (svgp's minibatch ELBO beside its full-data one).
    pub faint: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct LineFigure {
    pub title: String,
    pub x_desc: String,
    pub y_desc: String,
    pub x_log: bool,
    pub y_log: bool,
    pub series: Vec<Series>,
    /// A horizontal reference line: its legend text and value.
    pub reference: Option<(String, f64)>,
    /// Points marked with a ring (e.g. where early stopping kept the iterate), and the
    /// legend text for them.
    pub marks: Vec<(f64, f64)>,
    pub marks_label: String,
    /// Short texts written just above points (e.g. a model's size along its curve).
    pub annotations: Vec<((f64, f64), String)>,
    /// The y range leaves out the values of each series' first tenth of iterations
    /// (above the rest), as the app's evidence pane does: a starting NLML far above
    /// the optimum would otherwise flatten every curve; those points run off the top.
    pub y_skips_start: bool,
    /// A line under the title (what is held fixed, what was left out).
    pub note: Option<String>,
}

/// The colour of the reference line and the marks.
pub const REFERENCE: RGBColor = RGBColor(0x44, 0x44, 0x44);

fn rgb(index: usize) -> RGBColor {
    let [r, g, b] = palette::hue(index).rgb;
    RGBColor(r, g, b)
}

/// `color` two thirds of the way to white.
fn pale(color: RGBColor) -> RGBColor {
    let mix = |c: u8| c + ((255 - c as u16) * 2 / 3) as u8;
    RGBColor(mix(color.0), mix(color.1), mix(color.2))
}

/// Draw `shape` of `color` at pixel `c`.
fn draw_shape<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    shape: Shape,
    c: (i32, i32),
    color: RGBColor,
) -> Result<()> {
    let s = 4;
    let r = match shape {
        Shape::Circle => area.draw(&Circle::new(c, s, color.filled())),
        Shape::Square => area.draw(&Rectangle::new(
            [(c.0 - s, c.1 - s), (c.0 + s, c.1 + s)],
            color.filled(),
        )),
        Shape::Triangle => area.draw(&TriangleMarker::new(c, s + 1, color.filled())),
        Shape::Cross => area.draw(&Cross::new(c, s, color.stroke_width(2))),
        Shape::Ring => area.draw(&Circle::new(c, s, color.stroke_width(2))),
        Shape::Diamond => area.draw(&Polygon::new(
            vec![
                (c.0, c.1 - s - 1),
                (c.0 + s + 1, c.1),
                (c.0, c.1 + s + 1),
                (c.0 - s - 1, c.1),
            ],
            color.filled(),
        )),
    };
    r.map_err(drawing)
}

/// log10 of a value on a log axis; not a number (so not drawn) for one that is not
/// positive, as iteration 0 on a log iteration axis.
fn log(v: f64) -> f64 {
    if v > 0.0 { v.log10() } else { f64::NAN }
}

/// A tick label of one value: the value itself (10^v on a log axis) with up to four
/// significant digits ([`axis::log_label`]); the prediction figure's x axis, and the
/// marks' positions in tests. The axes of a figure label their ticks together
/// ([`axis::linear`], [`axis::log10`]), so neighbours always differ.
pub fn tick(v: f64, is_log: bool) -> String {
    let v = if is_log { 10f64.powf(v) } else { v };
    // a linear axis's tick at zero comes out of the tick arithmetic as ±2e-16
    if v == 0.0 || (!is_log && v.abs() < 1e-12) {
        return "0".into();
    }
    axis::log_label(v)
}

/// The ticks of an axis over plotted coordinates `lo..hi` (log10 values on a log
/// axis), about one per `px_per_tick` of its `length` in pixels.
fn ticks(lo: f64, hi: f64, is_log: bool, length: u32, px_per_tick: u32) -> axis::Ticks {
    let max = (length / px_per_tick.max(1)).clamp(3, 10) as usize;
    if is_log {
        axis::log10(lo, hi, max)
    } else {
        axis::linear(lo, hi, max)
    }
}

/// `pts` cut to the box `x0..x1` × `y0..y1`: the pieces inside, each a polyline, a
/// segment that leaves the box ending on its edge (plotters would otherwise pin the
/// points outside to the edge and draw a flat line there).
pub fn clip(
    pts: &[(f64, f64)],
    (x0, x1): (f64, f64),
    (y0, y1): (f64, f64),
) -> Vec<Vec<(f64, f64)>> {
    let mut pieces: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut open = false;
    for w in pts.windows(2) {
        let (a, b) = (w[0], w[1]);
        // Liang–Barsky: the parameter range of a + t (b − a) inside the box
        let (dx, dy) = (b.0 - a.0, b.1 - a.1);
        let (mut t0, mut t1) = (0.0f64, 1.0f64);
        let mut inside = true;
        for (p, q) in [
            (-dx, a.0 - x0),
            (dx, x1 - a.0),
            (-dy, a.1 - y0),
            (dy, y1 - a.1),
        ] {
            if p == 0.0 {
                if q < 0.0 {
                    inside = false;
                }
            } else {
                let r = q / p;
                if p < 0.0 {
                    t0 = t0.max(r);
                } else {
                    t1 = t1.min(r);
                }
            }
        }
        if !inside || t0 > t1 {
            open = false;
            continue;
        }
        let at = |t: f64| (a.0 + t * dx, a.1 + t * dy);
        if !open || t0 > 0.0 {
            pieces.push(vec![at(t0)]);
        }
        if let Some(piece) = pieces.last_mut() {
            piece.push(at(t1));
        }
        open = t1 >= 1.0;
    }
    pieces
}

impl LineFigure {
    /// The plotted coordinates of a point (log10 on log axes).
    fn at(&self, (x, y): (f64, f64)) -> (f64, f64) {
        (
            if self.x_log { log(x) } else { x },
            if self.y_log { log(y) } else { y },
        )
    }

    fn y_at(&self, y: f64) -> f64 {
        if self.y_log { log(y) } else { y }
    }

    /// The axis ranges in plotted coordinates: every point, error bar, mark and the
    /// reference line, padded by 4 % (x not padded on a log axis of m, so its ends are
    /// the smallest and largest m); with `y_skips_start`, the curves' starts may run off
    /// the top ([`axis::objective_range`]), and the highest value cut is returned.
    pub fn ranges(&self) -> ((f64, f64), (f64, f64), Option<f64>) {
        let mut xs = (f64::INFINITY, f64::NEG_INFINITY);
        let mut ys = (f64::INFINITY, f64::NEG_INFINITY);
        let mut cover = |(x, y): (f64, f64)| {
            if x.is_finite() {
                xs = (xs.0.min(x), xs.1.max(x));
            }
            if y.is_finite() {
                ys = (ys.0.min(y), ys.1.max(y));
            }
        };
        let plotted: Vec<Vec<(f64, f64)>> = self
            .series
            .iter()
            .map(|s| s.points.iter().map(|p| self.at(*p)).collect())
            .collect();
        for (s, pts) in self.series.iter().zip(&plotted) {
            for (k, (p, at)) in s.points.iter().zip(pts).enumerate() {
                cover(*at);
                if let Some(e) = s.errors.get(k).filter(|e| **e > 0.0) {
                    cover(self.at((p.0, p.1 + e)));
                    if !self.y_log || p.1 - e > 0.0 {
                        cover(self.at((p.0, p.1 - e)));
                    }
                }
            }
        }
        for m in &self.marks {
            cover(self.at(*m));
        }
        // the reference line, unless it would squeeze the data into less than a third
        // of the height (it is then said in the legend, "off the chart")
        if let Some(r) = self.reference.as_ref().map(|(_, r)| self.y_at(*r))
            && r.is_finite()
            && (ys.1 - ys.0) * 3.0 >= ys.1.max(r) - ys.0.min(r)
        {
            ys = (ys.0.min(r), ys.1.max(r));
        }
        let mut cut = None;
        if self.y_skips_start {
            let curves: Vec<&[(f64, f64)]> = plotted.iter().map(|v| &v[..]).collect();
            let ((lo, hi), over) = axis::objective_range(&curves, 0.0);
            if over.is_some() {
                ys = (ys.0.min(lo), hi);
                cut = over.map(|v| if self.y_log { 10f64.powf(v) } else { v });
            }
        }
        let widen = |(a, b): (f64, f64), pad: f64| -> (f64, f64) {
            if !(a.is_finite() && b.is_finite()) {
                return (0.0, 1.0);
            }
            let w = (b - a).max(1e-9 * a.abs().max(1.0));
            if b - a < 1e-12 {
                (a - 0.5 * w.max(0.1), b + 0.5 * w.max(0.1))
            } else {
                (a - pad * w, b + pad * w)
            }
        };
        (
            widen(xs, if self.x_log { 0.03 } else { 0.0 }),
            widen(ys, 0.04),
            cut,
        )
    }

    /// The legend's rows: (label, (palette index, faint) or None for the reference /
    /// marks).
    fn legend(&self) -> Vec<(String, Option<(usize, bool)>)> {
        let mut rows: Vec<(String, Option<(usize, bool)>)> = self
            .series
            .iter()
            .map(|s| (s.label.clone(), Some((s.index, s.faint))))
            .collect();
        if let Some((label, _)) = &self.reference {
            rows.push((label.clone(), None));
        }
        if let (Some((label, r)), Some(row)) = (&self.reference, rows.last_mut())
            && row.0 == *label
        {
            let ((_, _), (y0, y1), _) = self.ranges();
            if !(y0..=y1).contains(&self.y_at(*r)) {
                row.0 = format!("{label} ({}, off the chart)", axis::log_label(*r));
            }
        }
        if !self.marks.is_empty() {
            rows.push((self.marks_label.clone(), None));
        }
        rows
    }

    /// The figure as SVG, `size` pixels.
    pub fn svg(&self, size: (u32, u32)) -> Result<String> {
        super::svg_page(size, |root| self.draw(root))
    }

    fn draw(&self, root: &DrawingArea<SVGBackend<'_>, Shift>) -> Result<()> {
        let (w, _) = root.dim_in_pixel();
        let text = (FONT, 14).into_font();
        let small = (FONT, 12).into_font();
        // The legend beside the plot, as wide as its longest label (up to 40 % of the
        // figure; longer labels wrap, whole).
        let rows = self.legend();
        let char_w = root
            .estimate_text_size("abcdefghij", &TextStyle::from(small.clone()))
            .map_or(7, |(x, _)| x / 10)
            .max(1);
        let longest = rows
            .iter()
            .map(|(l, _)| l.chars().count())
            .max()
            .unwrap_or(0) as u32;
        // 10 % over the estimate: the SVG backend only estimates widths without the font
        let legend_w = (longest * char_w * 11 / 10 + 48).min(w * 2 / 5).max(80);
        let per_line = ((legend_w - 44) * 10 / 11 / char_w).max(4) as usize;
        let (plot_area, legend_area) = root.split_horizontally(w - legend_w);
        let ((x0, x1), (y0, y1), cut) = self.ranges();
        // what runs off the top is said under the title
        let note = match (&self.note, cut) {
            (note, None) => note.clone(),
            (None, Some(v)) => Some(format!(
                "starts above the top, up to {}",
                axis::log_label(v)
            )),
            (Some(n), Some(v)) => Some(format!(
                "{n}; starts above the top, up to {}",
                axis::log_label(v)
            )),
        };
        let body = title_and_note(&plot_area, &self.title, note.as_deref(), text, &small)?;
        let (xl, yl) = (self.x_log, self.y_log);
        let (bw, bh) = body.dim_in_pixel();
        // the ticks and their labels, drawn here rather than by the mesh: one rule for
        // the figures and the app (nice steps, labels that differ, an offset said)
        let x_ticks = ticks(x0, x1, xl, bw.saturating_sub(60), 90);
        let y_ticks = ticks(y0, y1, yl, bh.saturating_sub(40), 55);
        let y_label_w = y_ticks
            .labels
            .iter()
            .map(|l| l.chars().count() as u32)
            .max()
            .unwrap_or(1)
            * char_w
            + 30;
        let mut chart = ChartBuilder::on(&body)
            .margin(8)
            .x_label_area_size(40)
            .y_label_area_size(y_label_w.max(50))
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(drawing)?;
        let grid = RGBColor(0xdd, 0xdd, 0xdd);
        let x_desc = x_ticks.describe(&self.x_desc);
        let y_desc = y_ticks.describe(&self.y_desc);
        let mut mesh = chart.configure_mesh();
        mesh.x_desc(x_desc.as_str())
            .y_desc(y_desc.as_str())
            .label_style(small.clone())
            .axis_desc_style(small.clone())
            .x_labels(0)
            .y_labels(0)
            .disable_mesh();
        mesh.draw().map_err(drawing)?;
        let plotting = chart.plotting_area().clone();
        let label = |pos: (i32, i32), text: &str, anchor: Pos| -> Result<()> {
            let style = TextStyle::from(small.clone()).pos(anchor);
            root.draw(&Text::new(text.to_string(), pos, style))
                .map_err(drawing)
        };
        for (t, text) in x_ticks.pairs() {
            plotting
                .draw(&PathElement::new(vec![(t, y0), (t, y1)], grid))
                .map_err(drawing)?;
            let (px, py) = plotting.map_coordinate(&(t, y0));
            label((px, py + 6), text, Pos::new(HPos::Center, VPos::Top))?;
        }
        for (t, text) in y_ticks.pairs() {
            plotting
                .draw(&PathElement::new(vec![(x0, t), (x1, t)], grid))
                .map_err(drawing)?;
            let (px, py) = plotting.map_coordinate(&(x0, t));
            label((px - 6, py), text, Pos::new(HPos::Right, VPos::Center))?;
        }
        if let Some((_, r)) = &self.reference {
            let y = self.y_at(*r);
            if y.is_finite() && (y0..=y1).contains(&y) {
                // dashes: 24 segments across the plot
                let n = 24;
                let dx = (x1 - x0) / (2 * n) as f64;
                chart
                    .draw_series((0..n).map(|k| {
                        let a = x0 + 2.0 * k as f64 * dx;
                        PathElement::new(vec![(a, y), (a + dx, y)], REFERENCE.stroke_width(2))
                    }))
                    .map_err(drawing)?;
            }
        }
        for s in &self.series {
            let color = rgb(s.index);
            let pts: Vec<(f64, f64)> = s
                .points
                .iter()
                .map(|p| self.at(*p))
                .filter(|p| p.0.is_finite() && p.1.is_finite())
                .collect();
            if pts.len() > 1 {
                let style = if s.faint {
                    pale(color).stroke_width(1)
                } else {
                    color.stroke_width(2)
                };
                for piece in clip(&pts, (x0, x1), (y0, y1)) {
                    chart
                        .draw_series(LineSeries::new(piece, style))
                        .map_err(drawing)?;
                }
            }
            for (k, p) in s.points.iter().enumerate() {
                let Some(e) = s.errors.get(k).copied().filter(|e| *e > 0.0) else {
                    continue;
                };
                let lo = if self.y_log && p.1 - e <= 0.0 {
                    y0
                } else {
                    self.y_at(p.1 - e)
                };
                let (x, y) = self.at(*p);
                chart
                    .draw_series(std::iter::once(ErrorBar::new_vertical(
                        x,
                        lo,
                        y,
                        self.y_at(p.1 + e),
                        color.stroke_width(2),
                        10,
                    )))
                    .map_err(drawing)?;
            }
            // shapes: on every point, or on about 8 along a long curve
            let step = if s.mark_all {
                1
            } else {
                pts.len().div_ceil(8).max(1)
            };
            let plotting = chart.plotting_area();
            let inside = |p: &&(f64, f64)| (x0..=x1).contains(&p.0) && (y0..=y1).contains(&p.1);
            for p in pts.iter().step_by(step).filter(inside) {
                if s.faint {
                    break;
                }
                let c = plotting.map_coordinate(p);
                draw_shape(root, palette::shape(s.index), c, color)?;
            }
        }
        for m in &self.marks {
            let at = self.at(*m);
            if !(at.0.is_finite() && at.1.is_finite()) {
                continue;
            }
            let c = chart.plotting_area().map_coordinate(&at);
            root.draw(&Circle::new(c, 8, REFERENCE.stroke_width(2)))
                .map_err(drawing)?;
        }
        for (p, text) in &self.annotations {
            let at = self.at(*p);
            if !((x0..=x1).contains(&at.0) && (y0..=y1).contains(&at.1)) {
                continue;
            }
            let c = chart.plotting_area().map_coordinate(&at);
            let style = TextStyle::from(small.clone())
                .color(&REFERENCE)
                .pos(Pos::new(HPos::Left, VPos::Bottom));
            root.draw(&Text::new(text.clone(), (c.0 + 5, c.1 - 5), style))
                .map_err(drawing)?;
        }
        // the legend: a line and the shape, then the label (wrapped, whole)
        let mut y = 40;
        let bottom = root.dim_in_pixel().1 as i32 - 8;
        let count = rows.len();
        for (k, (label, index)) in rows.into_iter().enumerate() {
            let lines = crate::chart::wrap_label(&label, per_line);
            // what does not fit is counted, never cut: a row needs 16 px a line and 4
            // more, and a "+N more" line must fit below it unless it is the last row
            let need = 16 * lines.len() as i32 + if k + 1 < count { 24 } else { 4 };
            if y + need > bottom {
                legend_area
                    .draw(&Text::new(
                        format!("+{} more", count - k),
                        (8, y),
                        small.clone(),
                    ))
                    .map_err(drawing)?;
                break;
            }
            let mid = y + 7;
            match index {
                Some((k, true)) => {
                    legend_area
                        .draw(&PathElement::new(
                            vec![(8, mid), (32, mid)],
                            pale(rgb(k)).stroke_width(1),
                        ))
                        .map_err(drawing)?;
                }
                Some((k, false)) => {
                    let color = rgb(k);
                    legend_area
                        .draw(&PathElement::new(
                            vec![(8, mid), (32, mid)],
                            color.stroke_width(2),
                        ))
                        .map_err(drawing)?;
                    draw_shape(&legend_area, palette::shape(k), (20, mid), color)?;
                }
                None if self
                    .reference
                    .as_ref()
                    .is_some_and(|r| label.starts_with(&r.0)) =>
                {
                    for a in [8, 20] {
                        legend_area
                            .draw(&PathElement::new(
                                vec![(a, mid), (a + 8, mid)],
                                REFERENCE.stroke_width(2),
                            ))
                            .map_err(drawing)?;
                    }
                }
                None => {
                    legend_area
                        .draw(&Circle::new((20, mid), 8, REFERENCE.stroke_width(2)))
                        .map_err(drawing)?;
                }
            }
            for line in lines {
                legend_area
                    .draw(&Text::new(line, (40, y), small.clone()))
                    .map_err(drawing)?;
                y += 16;
            }
            y += 4;
        }
        Ok(())
    }
}

/// Draw a figure's title, and under it its note (what was left out or thinned) in the
/// reference colour, at the top of `area`; the rest of the area, for the plot.
pub fn title_and_note<'a>(
    area: &DrawingArea<SVGBackend<'a>, Shift>,
    title: &str,
    note: Option<&str>,
    text: FontDesc<'_>,
    small: &FontDesc<'_>,
) -> Result<DrawingArea<SVGBackend<'a>, Shift>> {
    let (title_area, body) = area.split_vertically(if note.is_some() { 48 } else { 30 });
    title_area
        .draw(&Text::new(title.to_string(), (60, 8), text))
        .map_err(drawing)?;
    if let Some(note) = note {
        title_area
            .draw(&Text::new(
                note.to_string(),
                (60, 28),
                small.clone().color(&REFERENCE),
            ))
            .map_err(drawing)?;
    }
    Ok(body)
}
