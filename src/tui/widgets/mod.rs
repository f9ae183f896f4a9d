//! Widgets ratatui lacks.

pub mod band_chart;

pub use band_chart::BandChart;
