//! Colours and markers. Series k (a run, or a label) is drawn in the palette's hue k
//! ([`crate::chart::palette`], shared with `sgpw plot`); with NO_COLOR every style is
//! plain and each curve has glyph k instead; `--ascii` swaps Braille for Dot and keeps
//! glyphs ASCII.

use crate::chart::palette;
use ratatui::style::{Color, Modifier, Style};
use ratatui::symbols::Marker;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Theme {
    pub color: bool,
    pub ascii: bool,
}

impl Theme {
    /// Colour unless NO_COLOR is set to a non-empty value (no-color.org).
    pub fn from_env(ascii: bool) -> Theme {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Theme {
            color: !no_color,
            ascii,
        }
    }

    fn fg(&self, c: Color) -> Style {
        if self.color {
            Style::new().fg(c)
        } else {
            Style::new()
        }
    }

    /// A colour for canvas shapes (which need one): Reset draws in the default colour.
    pub fn canvas(&self, c: Color) -> Color {
        if self.color { c } else { Color::Reset }
    }

    /// The colour of series `k` (Reset without colour).
    pub fn series_color(&self, k: usize) -> Color {
        self.canvas(Color::Indexed(palette::hue(k).xterm))
    }

    pub fn series_style(&self, k: usize) -> Style {
        self.fg(self.series_color(k))
    }

    /// The plotting marker: Braille, or Dot for fonts without braille.
    pub fn marker(&self) -> Marker {
        if self.ascii {
            Marker::Dot
        } else {
            Marker::Braille
        }
    }

    /// Without colour, the glyph curve `k` is drawn with, so every curve differs (the
    /// glyphs run out only after 36 curves); with colour none: curves are lines.
    pub fn curve_glyph(&self, k: usize) -> Option<&'static str> {
        if self.color {
            return None;
        }
        Some(palette::glyph(k, self.ascii))
    }

    /// A curve's mark in a legend: a line in its colour, or its glyph.
    pub fn curve_mark(&self, k: usize) -> &'static str {
        match self.curve_glyph(k) {
            Some(g) => g,
            None if self.ascii => "-",
            None => "━",
        }
    }

    pub fn border(&self, focused: bool) -> Style {
        if focused {
            self.fg(Color::LightCyan).add_modifier(Modifier::BOLD)
        } else {
            self.fg(Color::DarkGray)
        }
    }

    pub fn title(&self) -> Style {
        Style::new().add_modifier(Modifier::BOLD)
    }

    pub fn dim(&self) -> Style {
        if self.color {
            Style::new().fg(Color::DarkGray)
        } else {
            Style::new()
        }
    }

    pub fn error(&self) -> Style {
        if self.color {
            Style::new().fg(Color::LightRed)
        } else {
            Style::new().add_modifier(Modifier::BOLD)
        }
    }

    pub fn ok(&self) -> Style {
        self.fg(Color::LightGreen)
    }

    pub fn warn(&self) -> Style {
        self.fg(Color::LightYellow)
    }

    pub fn selected(&self) -> Style {
        Style::new().add_modifier(Modifier::REVERSED)
    }

    pub fn key(&self) -> Style {
        self.fg(Color::LightCyan).add_modifier(Modifier::BOLD)
    }
}
