//! Widgets ratatui lacks.

pub mod band_chart;
pub mod line_chart;

pub use band_chart::BandChart;
pub use line_chart::{Curve, LineChart};
