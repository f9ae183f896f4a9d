use sgpw::methods::svgp::schedule::*;

/// A bound that fell and then sits at a level with noise is flat; with the same
/// noise on a steady fall it is not.
#[test]
fn stops_on_a_flat_noisy_bound_not_on_a_falling_one() {
    let noise = [
        3.1, -2.4, 0.7, -4.0, 2.2, 1.5, -0.3, -3.3, 4.1, -1.0, 0.4, 2.8,
    ];
    let flat: Vec<f64> = noise.iter().map(|e| 1000.0 + e).collect();
    assert!(plateaued(&flat, 10_000), "{flat:?}");
    // falling 5 nats a check under noise of ±4: still improving
    let falling: Vec<f64> = noise
        .iter()
        .enumerate()
        .map(|(i, e)| 1000.0 - 5.0 * i as f64 + e)
        .collect();
    assert!(!plateaued(&falling, 10_000), "{falling:?}");
    // a noiseless fall of 2 nats a check: above the tolerance (0.1 a check)
    let smooth: Vec<f64> = (0..12).map(|i| 1000.0 - 2.0 * i as f64).collect();
    assert!(!plateaued(&smooth, 10_000));
    // a noiseless creep below the tolerance: done
    let creep: Vec<f64> = (0..12).map(|i| 1000.0 - 0.01 * i as f64).collect();
    assert!(plateaued(&creep, 10_000));
}

/// The exact stage's tighter tolerance: a noiseless creep of 0.001 nats a check on
/// 300 rows is flat to the rule (below 10⁻⁵ · 300 · 5 a window) but not to the
/// non-Gaussian exact stage's (10⁻⁶), which a creep five times slower is.
#[test]
fn the_joint_stage_asks_ten_times_less() {
    let creep: Vec<f64> = (0..12).map(|i| 100.0 - 0.001 * i as f64).collect();
    assert!(plateaued(&creep, 300));
    assert!(!plateaued_within(&creep, 300, JOINT_TOL_PER_ROW));
    let slower: Vec<f64> = (0..12).map(|i| 100.0 - 0.0002 * i as f64).collect();
    assert!(plateaued_within(&slower, 300, JOINT_TOL_PER_ROW));
}

/// Too few checks to compare two windows: never flat.
#[test]
fn needs_two_windows() {
    assert!(!plateaued(&[5.0; 2 * WINDOW - 1], 100));
    assert!(plateaued(&[5.0; 2 * WINDOW], 100));
}

/// The stages grow the batch to the whole data (γ = 1 there), halve the rate, and
/// end after the last.
#[test]
fn stages_grow_the_batch_to_the_data() {
    let s0 = Schedule::new(256, 0.1, 0.01, 200_000);
    let s1 = s0.next().expect("stage 1");
    assert_eq!((s1.batch, s1.gamma, s1.lr), (1024, 0.2, 0.005));
    let s2 = s1.next().expect("stage 2");
    assert_eq!((s2.batch, s2.gamma), (4096, 0.4));
    assert!(!s2.exact());
    // 16384 · 16 ≥ 200 000: the whole data
    let s3 = s2.next().expect("stage 3");
    assert_eq!((s3.batch, s3.gamma, s3.stage), (200_000, 1.0, STAGES));
    assert!(s3.exact());
    assert_eq!(s3.next(), None);
    // larger data stay on minibatches to the last stage
    let big = Schedule::new(256, 0.1, 0.01, 1_000_000);
    let last = big.next().and_then(|s| s.next()).and_then(|s| s.next());
    assert_eq!(last.map(|s| (s.batch, s.exact())), Some((16_384, false)));
    // 10 000 rows: at B = 1024 an epoch is 10 steps, the exact stage comes next
    let s1 = Schedule::new(256, 0.1, 0.01, 10_000)
        .next()
        .expect("stage 1");
    assert_eq!((s1.batch, s1.gamma, s1.exact()), (10_000, 1.0, true));
    assert_eq!(s1.next(), None);
    // a batch larger than the data is the data (the first stage is not exact)
    let small = Schedule::new(500, 0.1, 0.01, 300);
    assert_eq!((small.batch, small.exact()), (300, false));
}
