use sgpw::plot::lines::*;

#[test]
fn ticks_read_as_values() {
    assert_eq!(tick(1.0, true), "10");
    assert_eq!(tick(2.0, true), "100");
    assert_eq!(tick(-2.0, true), "0.01");
    assert_eq!(tick(0.25, false), "0.25");
    assert_eq!(tick(0.6000000000000001, false), "0.6");
    assert_eq!(tick(-0.2, false), "-0.2");
    assert_eq!(tick(1234.0, false), "1234");
    assert_eq!(tick(12.5, false), "12.5");
    assert_eq!(tick(0.0, false), "0");
    assert_eq!(tick(-2.220446049250313e-16, false), "0");
    assert_eq!(tick(-16.0, true), "1e-16");
}

/// A curve that leaves the plot is cut at its edge, never pinned along it: the
/// pieces inside, each ending where the curve crosses the edge.
#[test]
fn curves_are_cut_at_the_edge_not_pinned_to_it() {
    let pts = [
        (0.0, 5.0),
        (1.0, 0.5),
        (2.0, 0.5),
        (3.0, 5.0),
        (4.0, 7.0),
        (5.0, 0.0),
    ];
    let pieces = clip(&pts, (0.0, 5.0), (0.0, 1.0));
    assert_eq!(pieces.len(), 2, "{pieces:?}");
    let close =
        |a: (f64, f64), b: (f64, f64)| (a.0 - b.0).abs() < 1e-12 && (a.1 - b.1).abs() < 1e-12;
    assert!(close(pieces[0][0], (1.0 - 0.5 / 4.5, 1.0)), "{pieces:?}");
    assert!(close(pieces[0][2], (2.0, 0.5)), "{pieces:?}");
    assert!(
        close(*pieces[0].last().unwrap(), (2.0 + 0.5 / 4.5, 1.0)),
        "{pieces:?}"
    );
    assert!(close(pieces[1][0], (5.0 - 1.0 / 7.0, 1.0)), "{pieces:?}");
    assert!(close(pieces[1][1], (5.0, 0.0)), "{pieces:?}");
    for p in pieces.iter().flatten() {
        assert!(p.1 <= 1.0 + 1e-12, "{pieces:?}");
    }
    // all inside: one piece, the points themselves
    assert_eq!(
        clip(&pts[1..3], (0.0, 5.0), (0.0, 1.0)),
        vec![pts[1..3].to_vec()]
    );
}
