//! Widgets ratatui lacks.

pub mod band_chart;
pub mod line_chart;
pub mod observed_chart;
pub mod prob_map;

pub use band_chart::BandChart;
pub use line_chart::{Curve, LineChart};
