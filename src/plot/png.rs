//! PNG from the same SVG drawing, rendered in-process by resvg with a bundled font, so
//! a figure's pixels are the same on every machine whatever fonts it has installed.

use super::drawing;
use crate::error::Result;
use resvg::{tiny_skia, usvg};

/// DejaVu Sans (Bitstream Vera licence, `assets/fonts/DejaVuSans-LICENSE.txt`): the
/// first family [`super::FONT`] names, and the only font the renderer knows.
const FONT_DATA: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");

/// Render an SVG drawn by [`super::figures`] to PNG bytes at its own pixel size.
pub fn render(svg: &str) -> Result<Vec<u8>> {
    let mut options = usvg::Options::default();
    let fonts = options.fontdb_mut();
    fonts.load_font_data(FONT_DATA.to_vec());
    // Every generic family resolves to the bundled font, never to a system one.
    fonts.set_sans_serif_family("DejaVu Sans");
    fonts.set_serif_family("DejaVu Sans");
    fonts.set_monospace_family("DejaVu Sans");
    options.font_family = "DejaVu Sans".into();
    let tree = usvg::Tree::from_str(svg, &options).map_err(drawing)?;
    let size = tree.size().to_int_size();
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height())
        .ok_or_else(|| drawing(format!("empty size {}x{}", size.width(), size.height())))?;
    // An opaque white page: a transparent PNG reads as black in many viewers.
    pixmap.fill(tiny_skia::Color::WHITE);
    resvg::render(&tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
    pixmap.encode_png().map_err(drawing)
}
