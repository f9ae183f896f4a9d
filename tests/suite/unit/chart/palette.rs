use sgpw::chart::palette::*;

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

/// In a greyscale print, hue and shape together tell 30 series apart.
#[test]
fn hue_and_shape_pairs_differ_for_30_series() {
    let mut pairs: Vec<(u8, Shape)> = (0..30).map(|k| (hue(k).xterm, shape(k))).collect();
    pairs.dedup();
    for (i, a) in pairs.iter().enumerate() {
        assert!(!pairs[i + 1..].contains(a), "{a:?} repeats");
    }
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
