//! Colours and markers. With NO_COLOR every style is plain and methods are told apart
//! by their marker glyphs instead; `--ascii` swaps Braille for Dot.

use ratatui::style::{Color, Modifier, Style};
use ratatui::symbols::Marker;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Theme {
    pub color: bool,
    pub ascii: bool,
}

/// One colour per method (indexed by registry position, so a method keeps its colour).
const PALETTE: &[Color] = &[
    Color::LightCyan,
    Color::LightYellow,
    Color::LightMagenta,
    Color::LightGreen,
    Color::LightRed,
    Color::LightBlue,
    Color::Cyan,
    Color::Yellow,
    Color::Magenta,
    Color::Green,
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

    pub fn method_color(&self, index: usize) -> Color {
        self.canvas(PALETTE[index % PALETTE.len()])
    }

    pub fn method_style(&self, index: usize) -> Style {
        self.fg(PALETTE[index % PALETTE.len()])
    }

    /// The plotting marker: Braille, or Dot for fonts without braille.
    pub fn marker(&self) -> Marker {
        if self.ascii {
            Marker::Dot
        } else {
            Marker::Braille
        }
    }

    /// Without colour, each method gets its own marker so lines stay distinguishable.
    pub fn method_marker(&self, index: usize) -> Marker {
        if self.color {
            return self.marker();
        }
        let set: &[Marker] = if self.ascii {
            &[Marker::Dot, Marker::Block, Marker::Bar, Marker::HalfBlock]
        } else {
            &[
                Marker::Braille,
                Marker::Block,
                Marker::Dot,
                Marker::Bar,
                Marker::HalfBlock,
            ]
        };
        set[index % set.len()]
    }

    /// The legend glyph matching [`Theme::method_marker`].
    pub fn method_glyph(&self, index: usize) -> &'static str {
        match self.method_marker(index) {
            _ if self.color => "━",
            Marker::Braille => "⠿",
            Marker::Block => "█",
            Marker::Dot => "•",
            Marker::Bar => "▄",
            Marker::HalfBlock => "▀",
            _ => "*",
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
