//! The `P` key: the chart on screen as an SVG figure beside the session file
//! (`NAME-evidence.svg`, `NAME-comparison.svg`, `NAME-prediction.svg`), drawn by
//! [`crate::plot`] from the same series the pane draws. The SVG is made here; the
//! runtime writes it ([`Effect::WriteFigure`]) and the outcome comes back as
//! [`Event::FigureWritten`].

use crate::chart;
use crate::plot::{self, figures, prediction::PredictionFigure};
use crate::tui::state::{App, ChartTab, Effect, PredState};
use std::path::PathBuf;

impl App {
    /// Where the figure of `tab` goes: beside the session file.
    pub fn figure_path(&self, tab: ChartTab) -> PathBuf {
        let stem = self
            .path
            .file_stem()
            .map_or("session".into(), |s| s.to_string_lossy().into_owned());
        let name = match tab {
            ChartTab::Evidence => "evidence",
            ChartTab::Comparison => "comparison",
            ChartTab::Prediction => "prediction",
        };
        self.path.with_file_name(format!("{stem}-{name}.svg"))
    }

    /// The chart on screen as SVG, or why there is nothing to draw.
    pub fn figure_svg(&self) -> Result<String, String> {
        let dataset = self.comparison_dataset().unwrap_or_default();
        let size = plot::SIZE;
        let svg = match self.chart {
            ChartTab::Evidence => {
                let curves = self.evidence_curves(2 * size.0 as usize);
                if curves.iter().all(|c| c.objective.is_empty()) {
                    return Err("no evidence curves to draw yet".into());
                }
                let note = self
                    .runs
                    .iter()
                    .any(|r| r.marked)
                    .then(|| "the marked runs".to_string());
                figures::evidence(&curves, &dataset, note).svg(size)
            }
            ChartTab::Comparison => {
                let (points, _) = chart::comparison::of_headline(chart::comparison::points(
                    &self.session.results,
                    &dataset,
                ));
                if points.is_empty() {
                    return Err("no finished runs on this data set to compare yet".into());
                }
                let labels = chart::comparison::labels(&points, self.label_order());
                let constant =
                    chart::comparison::constant(&self.session.results, &dataset, self.metric);
                figures::comparison(&points, &labels, constant, &dataset, self.metric, None)
                    .svg(size)
            }
            ChartTab::Prediction => {
                let (PredState::Ready(_, total), Some(row)) =
                    (&self.prediction, self.selected_run())
                else {
                    return Err("no prediction on screen to draw yet".into());
                };
                // the summand on screen when the p key chose one, else the total
                let part = self.summand_on_screen(total);
                let curves = part.as_ref().unwrap_or(total);
                let which = match part {
                    Some(_) => format!(
                        ", summand {}/{}",
                        self.pred_component,
                        total.component_count()
                    ),
                    None => String::new(),
                };
                PredictionFigure {
                    title: format!(
                        "Prediction{which}: {}/{} m={} seed {}",
                        row.key.dataset, row.key.label, row.key.m, row.key.seed
                    ),
                    curves,
                    note: (curves.dim > 1 && curves.map.is_none()).then(|| {
                        format!(
                            "along {}; the other inputs at their training medians",
                            curves.input_name
                        )
                    }),
                }
                .svg(size)
            }
        };
        svg.map_err(|e| e.to_string())
    }

    /// The summand of `total` the prediction pane shows (the `p` key's choice), or None
    /// when it shows the total: what the pane draws and `P` writes.
    pub fn summand_on_screen(
        &self,
        total: &chart::prediction::Curves,
    ) -> Option<chart::prediction::Curves> {
        self.pred_component
            .checked_sub(1)
            .and_then(|k| total.component(k))
    }

    /// `P`: ask the runtime to write the chart on screen.
    pub(super) fn write_figure(&mut self) -> Vec<Effect> {
        match self.figure_svg() {
            Ok(svg) => vec![Effect::WriteFigure {
                path: self.figure_path(self.chart),
                svg,
            }],
            Err(why) => {
                self.fail(format!("no figure written: {why}"));
                Vec::new()
            }
        }
    }

    /// The runtime wrote the figure (or could not).
    pub(super) fn on_figure_written(&mut self, r: Result<PathBuf, String>) {
        match r {
            Ok(path) => self.say(format!("wrote the chart to {}", path.display())),
            Err(e) => self.fail(format!("cannot write the figure: {e}")),
        }
    }
}
