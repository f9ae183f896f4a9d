//! Colours and markers. Curves are coloured per run, in shades of their method's hue;
//! with NO_COLOR every style is plain and each curve has its own glyph instead;
//! `--ascii` swaps Braille for Dot and keeps glyphs ASCII.

use ratatui::style::{Color, Modifier, Style};
use ratatui::symbols::Marker;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Theme {
    pub color: bool,
    pub ascii: bool,
}

/// One hue per method (by registry position, so a method keeps its colour), in four
/// shades (256-colour indices), the method's own first: the curves of one method cycle
/// through its shades, so fitc m = 10 and m = 25 differ and still read as fitc.
const FAMILIES: &[[u8; 4]] = &[
    [51, 31, 123, 38],    // cyan
    [226, 136, 229, 178], // yellow
    [207, 127, 219, 165], // magenta
    [83, 28, 157, 34],    // green
    [203, 124, 217, 160], // red
    [75, 27, 153, 33],    // blue
    [214, 130, 223, 172], // orange
    [141, 61, 189, 99],   // violet
    [252, 242, 255, 246], // grey
    [86, 30, 158, 36],    // teal
];

/// Without colour, curve k is drawn with glyph k (after these, the letters).
const GLYPHS: &[&str] = &["•", "+", "x", "o", "*", "#", "@", "%", "=", "~", "&", "$"];
const ASCII_GLYPHS: &[&str] = &["+", "x", "o", "*", "#", "@", "%", "=", "~", "&", "$", ":"];
const LETTERS: &[&str] = &[
    "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "p", "q", "r", "s", "t",
    "u", "v", "w", "y", "z",
];

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

    /// A method's own colour.
    pub fn method_color(&self, index: usize) -> Color {
        self.run_color(index, 0)
    }

    pub fn method_style(&self, index: usize) -> Style {
        self.fg(self.run_color(index, 0))
    }

    /// The colour of a method's `shade`-th curve (cycling through its four shades).
    pub fn run_color(&self, method: usize, shade: usize) -> Color {
        let family = FAMILIES[method % FAMILIES.len()];
        self.canvas(Color::Indexed(family[shade % family.len()]))
    }

    pub fn run_style(&self, method: usize, shade: usize) -> Style {
        self.fg(self.run_color(method, shade))
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
        let own = if self.ascii { ASCII_GLYPHS } else { GLYPHS };
        Some(
            own.get(k)
                .copied()
                .unwrap_or_else(|| LETTERS[(k - own.len()) % LETTERS.len()]),
        )
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
