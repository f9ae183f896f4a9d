//! The one palette of every chart, in the app and in `sgpw plot`. Series k (a run in
//! the evidence chart, a label in the comparison) gets hue k and glyph k: ten hues
//! (Tableau 10: they stay apart on a dark terminal and on white paper, and for the
//! common colour-vision deficiencies), so ten series never share a colour; with
//! NO_COLOR, `--ascii` or in greyscale print, glyph k tells the series apart (36 of them
//! before one repeats).

/// A hue: its RGB for figures, and the nearest of the 256 terminal colours for the app.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hue {
    pub name: &'static str,
    pub rgb: [u8; 3],
    /// Index in the xterm 256-colour table (the 6×6×6 cube and grey ramp).
    pub xterm: u8,
}

pub const HUES: [Hue; 10] = [
    Hue {
        name: "blue",
        rgb: [0x4e, 0x79, 0xa7],
        xterm: 67,
    },
    Hue {
        name: "orange",
        rgb: [0xf2, 0x8e, 0x2b],
        xterm: 208,
    },
    Hue {
        name: "red",
        rgb: [0xe1, 0x57, 0x59],
        xterm: 167,
    },
    Hue {
        name: "teal",
        rgb: [0x76, 0xb7, 0xb2],
        xterm: 109,
    },
    Hue {
        name: "green",
        rgb: [0x59, 0xa1, 0x4f],
        xterm: 71,
    },
    Hue {
        name: "yellow",
        rgb: [0xed, 0xc9, 0x48],
        xterm: 221,
    },
    Hue {
        name: "purple",
        rgb: [0xb0, 0x7a, 0xa1],
        xterm: 139,
    },
    Hue {
        name: "pink",
        rgb: [0xff, 0x9d, 0xa7],
        xterm: 217,
    },
    Hue {
        name: "brown",
        rgb: [0x9c, 0x75, 0x5f],
        xterm: 137,
    },
    Hue {
        name: "grey",
        rgb: [0xba, 0xb0, 0xac],
        xterm: 145,
    },
];

/// The hue of series `k` (repeating after ten; the glyphs still differ).
pub fn hue(k: usize) -> Hue {
    HUES[k % HUES.len()]
}

/// The shape a figure marks series k's points with (so a figure reads in greyscale,
/// as the app's glyphs do without colour). With ten hues and six shapes, no two of the
/// first thirty series look alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    Circle,
    Square,
    Triangle,
    Cross,
    Ring,
    Diamond,
}

const SHAPES: [Shape; 6] = [
    Shape::Circle,
    Shape::Square,
    Shape::Triangle,
    Shape::Cross,
    Shape::Ring,
    Shape::Diamond,
];

/// The shape of series `k`.
pub fn shape(k: usize) -> Shape {
    SHAPES[k % SHAPES.len()]
}

/// The colours of the parts of a prediction figure (the app draws the same parts in
/// the terminal's named colours: widgets::band_chart).
#[derive(Clone, Copy, Debug)]
pub struct PredictionColours {
    pub noisy: Hue,
    pub latent: Hue,
    pub mean: Hue,
    pub train: Hue,
    pub test: Hue,
    pub markers: Hue,
}

pub const PREDICTION: PredictionColours = PredictionColours {
    noisy: HUES[9],
    latent: HUES[0],
    mean: Hue {
        name: "black",
        rgb: [0x22, 0x22, 0x22],
        xterm: 235,
    },
    train: HUES[2],
    test: HUES[4],
    markers: HUES[1],
};

/// Glyph k marks series k without colour (after these, the letters).
const GLYPHS: &[&str] = &["•", "+", "x", "o", "*", "#", "@", "%", "=", "~", "&", "$"];
const ASCII_GLYPHS: &[&str] = &["+", "x", "o", "*", "#", "@", "%", "=", "~", "&", "$", ":"];
const LETTERS: &[&str] = &[
    "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "p", "q", "r", "s", "t",
    "u", "v", "w", "y", "z",
];

/// The glyph of series `k` (ASCII ones with `ascii`).
pub fn glyph(k: usize, ascii: bool) -> &'static str {
    let own = if ascii { ASCII_GLYPHS } else { GLYPHS };
    own.get(k)
        .copied()
        .unwrap_or_else(|| LETTERS[(k - own.len()) % LETTERS.len()])
}
