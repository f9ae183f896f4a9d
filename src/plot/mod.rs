//! Figures: the app's charts drawn for a paper or a colleague, from the same series
//! ([`crate::chart`]) and palette, as SVG drawn by plotters (its SVG backend writes
//! text as text, so no font is read to draw one), and as PNG rendered from that SVG
//! ([`png`]) with a bundled font.

pub mod components;
pub mod figures;
mod frame;
pub mod lines;
pub mod observed;
pub mod png;
pub mod prediction;

use crate::error::{Error, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;

/// The font family every text of a figure names.
pub const FONT: &str = "DejaVu Sans, Helvetica, Arial, sans-serif";

/// A plotters failure as an error of ours.
fn drawing(e: impl std::fmt::Display) -> Error {
    Error::input(format!("cannot draw the figure: {e}"))
}

/// A white page of `size` pixels drawn by `draw`, as SVG text: what every figure does
/// around its own drawing.
fn svg_page(
    size: (u32, u32),
    draw: impl FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> Result<()>,
) -> Result<String> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        root.fill(&WHITE).map_err(drawing)?;
        draw(&root)?;
        root.present().map_err(drawing)?;
    }
    Ok(out)
}

/// Width and height in pixels: "800x500" (or "800×500").
pub fn parse_size(s: &str) -> std::result::Result<(u32, u32), String> {
    let bad = || format!("'{s}' is not a size: give width x height in pixels, e.g. 800x500");
    let (w, h) = s.split_once(['x', 'X', '×']).ok_or_else(bad)?;
    let w: u32 = w.trim().parse().map_err(|_| bad())?;
    let h: u32 = h.trim().parse().map_err(|_| bad())?;
    if !(200..=8000).contains(&w) || !(150..=8000).contains(&h) {
        return Err(format!(
            "size {w}x{h} is out of range: width 200 to 8000, height 150 to 8000 pixels"
        ));
    }
    Ok((w, h))
}

/// The default figure size in pixels.
pub const SIZE: (u32, u32) = (800, 500);

/// Write the figure to `path`: the SVG itself for `.svg`, rendered to pixels for `.png`.
pub fn write(path: &Path, svg: &str) -> Result<()> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let bytes = match ext.as_deref() {
        Some("svg") => svg.as_bytes().to_vec(),
        Some("png") => png::render(svg)
            .map_err(|e| Error::file(path, format!("cannot render the PNG: {e}")))?,
        _ => {
            return Err(Error::input(format!(
                "{}: sgpw plot writes SVG or PNG; give a file ending in .svg or .png",
                path.display()
            )));
        }
    };
    std::fs::write(path, bytes)
        .map_err(|e| Error::file(path, format!("cannot write the figure: {e}")))
}
