//! The prediction figure with its components (`sgpw plot --chart prediction
//! --components`): the total's panel as [`PredictionFigure`] draws it, then one panel
//! per summand of the kernel (its mean and ±2σ latent band, from
//! [`Curves::component`]), stacked on one page.

use super::prediction::PredictionFigure;
use crate::chart::prediction::Curves;
use crate::error::{Error, Result};

/// The page: the total's panel `size` pixels, each summand's below it at half its
/// height. An error naming why when the model has no summands to draw.
pub fn svg(total: &PredictionFigure, size: (u32, u32)) -> Result<String> {
    let curves = total.curves;
    let parts: Vec<Curves> = match &curves.components {
        Ok(v) if !v.is_empty() => (0..v.len()).filter_map(|k| curves.component(k)).collect(),
        Ok(_) => return Err(Error::input("--components: the model has no summands")),
        Err(why) => return Err(Error::input(format!("--components: {why}"))),
    };
    let panel = (size.1 / 2).max(150);
    let height = size.1 + panel * parts.len() as u32;
    super::svg_page((size.0, height), |root| {
        let (top, mut rest) = root.split_vertically(size.1);
        total.draw(&top)?;
        for c in &parts {
            let (this, below) = rest.split_vertically(panel);
            PredictionFigure {
                title: format!("component {}", c.target_name),
                curves: c,
                note: Some("its posterior mean and ±2σ; no target mean added".into()),
            }
            .draw(&this)?;
            rest = below;
        }
        Ok(())
    })
}
