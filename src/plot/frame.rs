//! What the prediction figures share ([`super::prediction`]'s Gaussian one and
//! [`super::observed`]'s of a classifier or a count model): the page split into the
//! plot and its legend under the title and note, the chart's axes and mesh, and the
//! legend's rows.

use super::lines::{tick, title_and_note};
use super::{FONT, drawing};
use crate::chart::palette;
use crate::error::Result;
use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

pub(super) type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
/// A legend row's swatch, drawn at (20, mid).
pub(super) type Swatch<'a> = Box<dyn Fn(&Area<'_>, i32) -> Result<()> + 'a>;
/// A legend row: its words and its swatch.
pub(super) type LegendRow<'a> = (String, Swatch<'a>);

/// A palette role's colour.
pub(super) fn rgb(role: palette::Hue) -> RGBColor {
    let [r, g, b] = role.rgb;
    RGBColor(r, g, b)
}

/// A figure's page: the title and note drawn, the plot's area under them and the
/// legend's beside it.
pub(super) struct Page<'a> {
    pub body: Area<'a>,
    pub legend: Area<'a>,
    pub legend_w: u32,
    /// The font of the labels and the legend.
    pub small: FontDesc<'static>,
}

/// Split `root` into the plot (a quarter of the width, 120 to 220 pixels, left for the
/// legend) and draw the title and note over the plot.
pub(super) fn page<'a>(root: &Area<'a>, title: &str, note: Option<&str>) -> Result<Page<'a>> {
    let (w, _) = root.dim_in_pixel();
    let text = (FONT, 14).into_font();
    let small = (FONT, 12).into_font();
    let legend_w = (w / 4).clamp(120, 220);
    let (plot_area, legend) = root.split_horizontally(w - legend_w);
    let body = title_and_note(&plot_area, title, note, text, &small)?;
    Ok(Page {
        body,
        legend,
        legend_w,
        small,
    })
}

/// How the y axis is labelled.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum YLabels {
    /// plotters' ticks, written as the x axis's are.
    Ticks,
    /// None: the figure writes its own.
    Own,
}

/// The chart over `x` × `y` on the page's plot, its axes named and its mesh drawn.
pub(super) fn chart<'a, 'b>(
    page: &'a Page<'b>,
    x: (f64, f64),
    y: (f64, f64),
    names: (&str, &str),
    y_labels: YLabels,
) -> Result<ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>> {
    let mut chart = ChartBuilder::on(&page.body)
        .margin(8)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(x.0..x.1, y.0..y.1)
        .map_err(drawing)?;
    let label = |v: &f64| tick(*v, false);
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(names.0)
        .y_desc(names.1)
        .label_style(page.small.clone())
        .axis_desc_style(page.small.clone())
        .x_label_formatter(&label)
        .light_line_style(RGBColor(0xee, 0xee, 0xee))
        .bold_line_style(RGBColor(0xdd, 0xdd, 0xdd));
    match y_labels {
        YLabels::Ticks => mesh.y_label_formatter(&label),
        YLabels::Own => mesh.y_labels(0),
    };
    mesh.draw().map_err(drawing)?;
    Ok(chart)
}

/// The legend: each row's swatch at (20, mid) and its words wrapped to the legend's
/// width.
pub(super) fn legend_rows(page: &Page<'_>, rows: Vec<LegendRow<'_>>) -> Result<()> {
    let mut y = 40;
    for (label, swatch) in rows {
        swatch(&page.legend, y + 7)?;
        let width = ((page.legend_w - 44) / 7).max(8) as usize;
        for line in crate::chart::wrap_label(&label, width) {
            page.legend
                .draw(&Text::new(line, (40, y), page.small.clone()))
                .map_err(drawing)?;
            y += 16;
        }
        y += 4;
    }
    Ok(())
}
