use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::prelude::Widget;
use ratatui::style::Color;
use ratatui::style::Style;
use ratatui::symbols::Marker;
use sgpw::tui::widgets::line_chart::*;

fn text(buf: &Buffer) -> Vec<String> {
    let w = buf.area.width as usize;
    buf.content
        .chunks(w)
        .map(|r| r.iter().map(|c| c.symbol()).collect())
        .collect()
}

/// Glyph curves are drawn in every column they span, each with its own glyph, and
/// the axes carry their labels.
#[test]
fn glyph_curves_fill_their_columns() {
    let a = [(0.0, 0.0), (10.0, 10.0)];
    let b = [(0.0, 10.0), (10.0, 10.0)];
    let chart = LineChart {
        curves: vec![
            Curve {
                points: &a,
                color: Color::Reset,
                glyph: Some("+"),
                mark_points: false,
            },
            Curve {
                points: &b,
                color: Color::Reset,
                glyph: Some("x"),
                mark_points: false,
            },
        ],
        x_bounds: [0.0, 10.0],
        y_bounds: [0.0, 10.0],
        x_labels: vec!["0".into(), "10".into()],
        y_labels: vec![(0.0, "0".into()), (10.0, "10".into())],
        label_width: 0,
        marker: Marker::Braille,
        axis_style: Style::new(),
    };
    let mut buf = Buffer::empty(Rect::new(0, 0, 14, 8));
    chart.render(buf.area, &mut buf);
    let t = text(&buf);
    // 11 plot columns and 6 rows: the flat curve (drawn last) fills the top row,
    // the rising one climbs from the bottom left through every row
    assert_eq!(t[0], "10│xxxxxxxxxxx", "{t:#?}");
    assert_eq!(t[5], " 0│+++        ", "{t:#?}");
    assert!(t.iter().skip(1).take(4).all(|l| l.contains('+')), "{t:#?}");
    assert_eq!(t[6], "  └───────────", "{t:#?}");
    assert_eq!(t[7], "   0        10", "{t:#?}");
}
