use nalgebra::DMatrix;
use sgpw::scratch::*;

#[test]
fn buffers_come_back_to_whoever_asks_next() {
    let s = Scratch::default();
    let a = s.take(100);
    let ptr = a.as_ptr();
    s.give(a);
    // a shorter request reuses it; a longer one cannot
    let b = s.take(60);
    assert_eq!((b.len(), b.as_ptr()), (60, ptr));
    s.give(b);
    let c = s.take(100);
    assert_eq!(c.as_ptr(), ptr, "given back at its full length");
    let d = s.take(101);
    assert_ne!(d.as_ptr(), ptr);
    // the smallest that fits is chosen
    s.give(d);
    s.give(c);
    let e = s.take(90);
    assert_eq!(e.as_ptr(), ptr);
    assert_eq!(s.zeros(7), vec![0.0; 7]);
    let m = s.zero_matrix(3, 4);
    assert_eq!(m, DMatrix::zeros(3, 4));
    s.give_matrix(m);
}
