use sgpw::methods::method::*;
use sgpw::run_spec::{MethodOptions, RunSpec};

fn run(method: &str, m: usize, options: MethodOptions) -> ValidRunSpec {
    let s = RunSpec {
        method: method.into(),
        m,
        seed: 1,
        iters: 10,
        standardize: true,
        options,
    };
    s.check(20_000).expect("a valid spec")
}

fn spec(method: &str, m: usize) -> ValidRunSpec {
    run(method, m, MethodOptions::default())
}

/// The exact GP's estimate grows as n² in memory and n³ in time, a low-rank one's
/// as n; at the trial's n = 16,512 the exact GP needs gigabytes, vfe m = 200 not.
#[test]
fn estimates_scale_as_the_methods_do() {
    let full = spec("full", 0);
    let (small, large) = (full.estimate(2000, 8, 1), full.estimate(4000, 8, 1));
    let memory = large.bytes / small.bytes;
    let time = large.seconds / small.seconds;
    assert!((3.9..4.1).contains(&memory), "memory ×{memory}");
    assert!((7.8..8.1).contains(&time), "time ×{time}");
    let trial = full.estimate(16_512, 8, 1);
    assert!(
        trial.bytes > 6e9 && trial.bytes < 7e9,
        "{}",
        trial.describe()
    );
    assert!(!trial.fits(4 << 30));
    assert!(trial.is_costly());
    let vfe = spec("vfe", 200);
    let (a, b) = (vfe.estimate(10_000, 8, 1), vfe.estimate(20_000, 8, 1));
    assert!((1.9..2.1).contains(&(b.seconds / a.seconds)));
    assert!(b.bytes < 2e8 && b.fits(1 << 30), "{}", b.describe());
    // --subset fits the exact GP on that many points
    let sub = run(
        "full",
        0,
        MethodOptions {
            subset: Some(2000),
            ..MethodOptions::default()
        },
    );
    assert!(sub.estimate(16_512, 8, 1).bytes < 2.0 * small.bytes);
}
