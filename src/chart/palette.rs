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

#[cfg(test)]
mod tests {
    use super::*;

    /// The RGB of an xterm colour (cube 16–231, greys 232–255).
    fn xterm_rgb(i: u8) -> [f64; 3] {
        const LEVELS: [f64; 6] = [0.0, 95.0, 135.0, 175.0, 215.0, 255.0];
        let i = i as usize;
        if i >= 232 {
            let v = 8.0 + 10.0 * (i - 232) as f64;
            return [v, v, v];
        }
        let c = i - 16;
        [LEVELS[c / 36], LEVELS[c / 6 % 6], LEVELS[c % 6]]
    }

    /// Every hue has its own terminal colour, close to its RGB (within 50), and any two
    /// hues are far apart in RGB: the old palette gave vfe and ssgp the same magenta.
    #[test]
    fn hues_are_distinct_in_the_terminal_and_in_figures() {
        for h in HUES {
            let t = xterm_rgb(h.xterm);
            let d: f64 = (0..3)
                .map(|c| (t[c] - h.rgb[c] as f64).powi(2))
                .sum::<f64>()
                .sqrt();
            assert!(
                d <= 50.0,
                "{}: terminal colour {} is {d:.0} away",
                h.name,
                h.xterm
            );
        }
        for (i, a) in HUES.iter().enumerate() {
            for b in &HUES[i + 1..] {
                assert_ne!(a.xterm, b.xterm, "{} {}", a.name, b.name);
                let d: f64 = (0..3)
                    .map(|c| (a.rgb[c] as f64 - b.rgb[c] as f64).powi(2))
                    .sum::<f64>()
                    .sqrt();
                assert!(d > 40.0, "{} and {} are {d:.0} apart", a.name, b.name);
            }
        }
        assert_eq!(hue(3), hue(13));
    }

    /// 36 series have 36 glyphs, in both glyph sets; the ASCII set is ASCII.
    #[test]
    fn glyphs_differ_for_36_series() {
        for ascii in [false, true] {
            let g: Vec<&str> = (0..36).map(|k| glyph(k, ascii)).collect();
            let mut u = g.clone();
            u.sort();
            u.dedup();
            assert_eq!(u.len(), 36, "{g:?}");
            if ascii {
                assert!(g.iter().all(|s| s.is_ascii()), "{g:?}");
            }
        }
    }
}
