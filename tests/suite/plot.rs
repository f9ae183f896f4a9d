//! `sgpw plot` end to end: the real binary on the bundled sessions (read only), and on
//! a copy of the demo's results with a second seed. The SVG is checked for what a
//! reader of the figure needs: one curve per series in the palette's hues, every legend
//! label whole, axes covering the data, error bars where there are several seeds, the
//! constant predictor's line.

use sgpw::chart::palette;
use sgpw::session::Session;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn sgpw(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sgpw"))
        .args(args)
        .output()
        .expect("runs")
}

/// `sgpw plot SESSION --chart KIND ARGS --out DIR/NAME`; the file written.
fn plot(session: &Path, kind: &str, args: &[&str], out: &Path) -> Vec<u8> {
    let mut all = vec![
        "plot",
        session.to_str().expect("utf-8 path"),
        "--chart",
        kind,
        "--out",
        out.to_str().expect("utf-8 path"),
    ];
    all.extend_from_slice(args);
    let o = sgpw(&all);
    assert!(
        o.status.success(),
        "sgpw {all:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("wrote"));
    std::fs::read(out).expect("the figure was written")
}

fn hex(k: usize) -> String {
    let [r, g, b] = palette::hue(k).rgb;
    format!("#{r:02X}{g:02X}{b:02X}")
}

/// The palette indices whose hue strokes a polyline (a curve or its legend sample).
fn curve_hues(svg: &str) -> Vec<usize> {
    (0..palette::HUES.len())
        .filter(|k| {
            svg.lines().any(|l| {
                l.starts_with("<polyline") && l.contains(&format!("stroke=\"{}\"", hex(*k)))
            })
        })
        .collect()
}

/// The texts of the SVG (plotters writes each on a line of its own inside the element).
fn texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let start = t.find('>')? + 1;
            let end = t.find("</text>")?;
            Some(
                t[start..end]
                    .trim()
                    .replace("&lt;", "<")
                    .replace("&gt;", ">")
                    .replace("&amp;", "&"),
            )
        })
        .collect()
}

/// The tick labels of an axis that are numbers.
fn numbers(texts: &[String]) -> Vec<f64> {
    texts
        .iter()
        .filter_map(|t| t.trim().parse::<f64>().ok())
        .collect()
}

/// Evidence of the demo: one curve per run with a trace on xsinx3 (13 runs: the hues
/// repeat after ten, the legend names them all), each label with its m.
#[test]
fn evidence_has_a_curve_and_a_legend_row_per_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let session = repo("sessions/demo.toml");
    let s = Session::read(&session).expect("demo reads");
    let runs: Vec<_> = s
        .results
        .iter()
        .filter(|r| r.key.dataset == "xsinx3" && !r.trace.is_empty())
        .collect();
    let svg = String::from_utf8(plot(&session, "evidence", &[], &dir.path().join("e.svg")))
        .expect("utf-8");
    let t = texts(&svg);
    for r in &runs {
        let want = format!("{} m={}", r.key.label, r.key.m);
        assert!(t.contains(&want), "legend lacks {want:?}: {t:?}");
    }
    assert_eq!(curve_hues(&svg).len(), runs.len().min(palette::HUES.len()));
    assert!(t.iter().any(|x| x.contains("Evidence on xsinx3")), "{t:?}");
    // the x axis runs from 0 to the longest trace
    let longest = runs.iter().map(|r| r.trace.len() - 1).max().unwrap_or(0) as f64;
    let xs = numbers(&t);
    assert!(xs.contains(&0.0), "{xs:?}");
    assert!(xs.iter().all(|x| *x <= longest.max(1e6)), "{xs:?}");
    // --runs keeps only those labels
    let svg = String::from_utf8(plot(
        &session,
        "evidence",
        &["--runs", "fitc"],
        &dir.path().join("f.svg"),
    ))
    .expect("utf-8");
    assert!(!texts(&svg).iter().any(|x| x.starts_with("ssgp")));
    // --log-x: the iteration axis ticks at 1, 2, 5 × 10^k, the start is said to be off it
    let svg = String::from_utf8(plot(
        &session,
        "evidence",
        &["--log-x"],
        &dir.path().join("g.svg"),
    ))
    .expect("utf-8");
    let t = texts(&svg);
    assert!(
        t.iter().any(|x| x.contains("is not on the log axis")),
        "{t:?}"
    );
    assert!(t.iter().any(|x| x == "iteration (log)"), "{t:?}");
    for want in ["1", "10", "100"] {
        assert!(t.iter().any(|x| x == want), "no tick {want}: {t:?}");
    }
}

/// The comparison with two seeds per fitc point: mean ± standard error bars (three
/// strokes each) in fitc's hue, the constant predictor's dashed line and its legend row,
/// the x axis from the smallest to the largest m. With one seed: no bars.
#[test]
fn comparison_has_error_bars_with_seeds_and_the_constant_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut s = Session::read(&repo("sessions/demo.toml")).expect("demo reads");
    let one = dir.path().join("one.toml");
    s.save(&one).expect("saves");
    let fitc: Vec<_> = s
        .results
        .iter()
        .filter(|r| r.key.dataset == "xsinx3" && r.key.label == "fitc")
        .cloned()
        .collect();
    assert!(fitc.len() >= 3);
    // the demo's results predate recording the constant predictor's MNLP: give it one
    for r in &fitc {
        let mut r1 = r.clone();
        r1.constant_mnlp = Some(1.3);
        s.set_result(r1);
        let mut r2 = r.clone();
        r2.constant_mnlp = Some(1.3);
        r2.key.seed = 2;
        r2.nmse = r.nmse.map(|v| v * 1.5);
        r2.mnlp = r.mnlp.map(|v| v + 0.2);
        s.set_result(r2);
    }
    let two = dir.path().join("two.toml");
    s.save(&two).expect("saves");
    let order = sgpw::chart::label_order(
        s.all_runs()
            .iter()
            .map(|(k, sp)| (sp.method.as_str(), k.label.as_str()))
            .collect::<Vec<_>>(),
    );
    let k = order.iter().position(|l| l == "fitc").expect("fitc");
    let bars = |svg: &str| {
        svg.lines()
            .filter(|l| l.starts_with("<line") && l.contains(&format!("stroke=\"{}\"", hex(k))))
            .count()
    };
    for metric in ["nmse", "mnlp"] {
        let svg = String::from_utf8(plot(
            &two,
            "comparison",
            &["--metric", metric],
            &dir.path().join(format!("c-{metric}.svg")),
        ))
        .expect("utf-8");
        assert_eq!(bars(&svg), 3 * fitc.len(), "{metric}: error bars");
        let t = texts(&svg);
        assert!(t.contains(&"constant predictor".to_string()), "{t:?}");
        assert!(
            svg.lines()
                .filter(|l| l.contains("stroke=\"#444444\""))
                .count()
                >= 24,
            "{metric}: no dashed reference line"
        );
        for label in ["full", "fitc", "ssgp", "psds"] {
            assert!(
                t.contains(&label.to_string()),
                "{metric}: legend lacks {label}: {t:?}"
            );
        }
        assert!(t.iter().any(|x| x.contains("standard error")), "{t:?}");
    }
    let svg = String::from_utf8(plot(&one, "comparison", &[], &dir.path().join("c1.svg")))
        .expect("utf-8");
    assert_eq!(bars(&svg), 0, "one seed: no error bars");
    // a hue per label with a finished run, ticks within the data's m (5 to 200)
    let one_session = Session::read(&one).expect("reads");
    let mut labels: Vec<_> = sgpw::chart::comparison::points(&one_session.results, "xsinx3")
        .into_iter()
        .map(|p| p.label)
        .collect();
    labels.dedup();
    assert!(labels.len() >= 4, "{labels:?}");
    assert_eq!(curve_hues(&svg).len(), labels.len());
    let xs: Vec<f64> = numbers(&texts(&svg));
    assert!(xs.iter().any(|x| *x >= 5.0), "{xs:?}");
}

/// Validation of the validation session: one curve per run that scored a validation
/// set, the kept iterate of the early-stopped runs ringed.
#[test]
fn validation_marks_the_early_stop() {
    let dir = tempfile::tempdir().expect("tempdir");
    let session = repo("sessions/validation.toml");
    let s = Session::read(&session).expect("reads");
    let scored: Vec<_> = s
        .results
        .iter()
        .filter(|r| r.key.dataset == "kin40k" && !r.validation.is_empty())
        .collect();
    let stopped = scored.iter().filter(|r| r.best_iteration.is_some()).count();
    assert!(!scored.is_empty() && stopped > 0);
    let svg = String::from_utf8(plot(
        &session,
        "validation",
        &["--data", "kin40k"],
        &dir.path().join("v.svg"),
    ))
    .expect("utf-8");
    assert_eq!(curve_hues(&svg).len(), scored.len());
    let rings = svg
        .lines()
        .filter(|l| {
            l.starts_with("<circle") && l.contains("r=\"8\"") && l.contains("stroke=\"#444444\"")
        })
        .count();
    // one per stopped run, and the legend's
    assert_eq!(rings, stopped + 1, "{svg}");
}

/// The prediction of a demo run: both bands, the mean, the data, the inducing points.
#[test]
fn prediction_draws_bands_data_and_inducing_points() {
    let dir = tempfile::tempdir().expect("tempdir");
    let session = repo("sessions/demo.toml");
    let svg = String::from_utf8(plot(
        &session,
        "prediction",
        &["--runs", "fitc", "--m", "10"],
        &dir.path().join("p.svg"),
    ))
    .expect("utf-8");
    let t = texts(&svg);
    for want in [
        "f ± 2σ (latent)",
        "y ± 2σ (noisy)",
        "predictive mean",
        "training points",
        "test points",
        "inducing points",
    ] {
        assert!(
            t.iter().any(|x| x.contains(want)),
            "legend lacks {want:?}: {t:?}"
        );
    }
    assert!(t.iter().any(|x| x.contains("xsinx3/fitc m=10")), "{t:?}");
    // two bands, 10 inducing points (triangles) and the legend's
    let polygons = svg.lines().filter(|l| l.starts_with("<polygon")).count();
    assert!(polygons >= 2 + 10, "{polygons} polygons");
}

/// Every chart kind as PNG: the size asked for, drawn (not blank), with its text (the
/// bundled font: without it the renderer drops every text silently), and the same
/// pixels each time.
#[test]
fn png_is_drawn_in_process_with_the_bundled_font() {
    use resvg::tiny_skia::Pixmap;
    let dir = tempfile::tempdir().expect("tempdir");
    let session = repo("sessions/demo.toml");
    let validation = repo("sessions/validation.toml");
    let cases: [(&Path, &str, &[&str]); 4] = [
        (&session, "evidence", &[]),
        (&session, "comparison", &[]),
        (&session, "prediction", &["--runs", "fitc", "--m", "10"]),
        (&validation, "validation", &[]),
    ];
    for (session, kind, args) in cases {
        let mut all = args.to_vec();
        all.extend_from_slice(&["--size", "640x400"]);
        let out = dir.path().join(format!("{kind}.png"));
        let png = plot(session, kind, &all, &out);
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "{kind}: not a PNG");
        let image = Pixmap::decode_png(&png).expect("decodes");
        assert_eq!((image.width(), image.height()), (640, 400), "{kind}");
        let inked = |rows: std::ops::Range<u32>| {
            rows.flat_map(|y| (0..image.width()).map(move |x| (x, y)))
                .filter(|&(x, y)| {
                    let p = image.pixel(x, y).expect("in the image");
                    p.red() < 200 || p.green() < 200 || p.blue() < 200
                })
                .count()
        };
        let all_ink = inked(0..image.height());
        let total = (image.width() * image.height()) as usize;
        assert!(
            all_ink * 100 > total && all_ink * 2 < total,
            "{kind}: {all_ink} of {total} pixels drawn"
        );
        // the title is text, in the top 24 rows, above the plotting area
        assert!(
            inked(0..24) > 100,
            "{kind}: no title drawn: {}",
            inked(0..24)
        );
        let again = plot(session, kind, &all, &out);
        assert_eq!(png, again, "{kind}: the same figure drew different pixels");
    }
}

/// A run on a large data set keeps its posterior in the session (it is under 1% of the
/// training values), so its prediction chart reads a sample of the file, not all of it;
/// a run whose posterior would be larger than that does not keep it.
#[test]
fn large_data_prediction_reads_a_sample() {
    let dir = tempfile::tempdir().expect("tempdir");
    let folder = dir.path().to_str().expect("utf-8");
    let o = sgpw(&[
        "gen", "big", "--n", "20000", "--d", "2", "--format", "parquet", "--out", folder,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let session = dir.path().join("big.toml");
    std::fs::write(
        &session,
        r#"schema_version = 3
name = "big"

[[datasets]]
name = "big"
train = "big_20000_2.parquet"
split = 0.99

[[runs]]
dataset = "big"
method = "fitc"
m = [10, 100]
seeds = [1]
iterations = 3
"#,
    )
    .expect("writes");
    let o = sgpw(&["run", session.to_str().expect("utf-8")]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let saved = Session::read(&session).expect("reads back");
    let kept: Vec<(usize, bool)> = saved
        .results
        .iter()
        .map(|r| {
            let model = r.model.as_ref().expect("a model");
            (r.key.m, model.posterior.is_some())
        })
        .collect();
    // 19800 rows x 3 values: 594 numbers at most; m = 10 keeps 110, m = 100 would be 10100
    assert_eq!(kept, vec![(10, true), (100, false)]);
    let svg = String::from_utf8(plot(
        &session,
        "prediction",
        &["--m", "10"],
        &dir.path().join("p.svg"),
    ))
    .expect("utf-8");
    let t = texts(&svg);
    assert!(
        t.iter()
            .any(|x| x.contains("of 20000 rows drawn, read from 40 places")),
        "{t:?}"
    );
    // without the posterior the file is read whole (and thinned evenly)
    let svg = String::from_utf8(plot(
        &session,
        "prediction",
        &["--m", "100"],
        &dir.path().join("q.svg"),
    ))
    .expect("utf-8");
    let t = texts(&svg);
    assert!(t.iter().any(|x| x.contains("evenly spaced")), "{t:?}");
}

/// Bad requests name what is wrong.
#[test]
fn bad_requests_say_why() {
    let dir = tempfile::tempdir().expect("tempdir");
    let session = repo("sessions/demo.toml");
    let out = dir.path().join("x.svg");
    let cases: [(&[&str], &str); 4] = [
        (
            &["--chart", "evidence", "--data", "nope"],
            "no data set of that name",
        ),
        (
            &["--chart", "evidence", "--runs", "nope"],
            "no result on xsinx3 has that label",
        ),
        (
            &["--chart", "validation"],
            "no run scored on a validation set",
        ),
        (&["--chart", "evidence", "--size", "12"], "width x height"),
    ];
    for (args, want) in cases {
        let mut all = vec![
            "plot",
            session.to_str().expect("utf-8"),
            "--out",
            out.to_str().expect("utf-8"),
        ];
        all.extend_from_slice(args);
        let o = sgpw(&all);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains(want), "{args:?}: {err}");
    }
    let o = sgpw(&[
        "plot",
        session.to_str().expect("utf-8"),
        "--chart",
        "evidence",
        "--out",
        dir.path().join("x.pdf").to_str().expect("utf-8"),
    ]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("give a file ending in .svg"));
}

/// The issue-40 trial's axes on the demo's results moved there: every NLML trace rescaled
/// into 201,128 … 202,400 (0.6 % wide; the old ticks read "2.1e5, 2.0e5 ×8"), and the
/// NMSEs into 0.23 … 0.28 on a log axis (the old axis ticked only at 0.5 and 1). The
/// NLML ticks must all differ; the NMSE axis must tick inside the data.
#[test]
fn narrow_ranges_get_ticks_that_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut s = Session::read(&repo("sessions/demo.toml")).expect("demo reads");
    let mine: Vec<_> = s
        .results
        .iter()
        .filter(|r| r.key.dataset == "xsinx3" && r.nmse.is_some())
        .cloned()
        .collect();
    let n = mine.len();
    assert!(n >= 4, "{n}");
    for (k, mut r) in mine.into_iter().enumerate() {
        let (lo, hi) = r
            .trace
            .iter()
            .filter(|v| v.is_finite())
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                (a.min(*v), b.max(*v))
            });
        for v in &mut r.trace {
            *v = 201_128.0 + 1_272.0 * (*v - lo) / (hi - lo).max(1e-12);
        }
        r.nmse = Some(0.23 + 0.05 * k as f64 / (n - 1) as f64);
        s.set_result(r);
    }
    let path = dir.path().join("narrow.toml");
    s.save(&path).expect("saves");
    let svg =
        String::from_utf8(plot(&path, "evidence", &[], &dir.path().join("e.svg"))).expect("utf-8");
    let nlml: Vec<String> = texts(&svg)
        .into_iter()
        .filter(|t| t.parse::<f64>().is_ok_and(|v| v > 1e5))
        .collect();
    assert!(nlml.len() >= 3, "too few NLML ticks: {nlml:?}");
    let mut distinct = nlml.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), nlml.len(), "repeated tick labels: {nlml:?}");
    for t in &nlml {
        let v: f64 = t.parse().expect("a number");
        assert!(
            (201_000.0..=202_500.0).contains(&v),
            "tick {v} outside the data"
        );
    }
    let svg = String::from_utf8(plot(&path, "comparison", &[], &dir.path().join("c.svg")))
        .expect("utf-8");
    let inside: Vec<f64> = numbers(&texts(&svg))
        .into_iter()
        .filter(|v| (0.23..=0.28).contains(v))
        .collect();
    assert!(
        inside.len() >= 2,
        "no ticks inside 0.23–0.28: {:?}",
        texts(&svg)
    );
}

/// A session on a classification set written to `dir`: two inputs (class 1 in the first
/// and third quadrants), or only the first, and one finished FITC run through EP with
/// the bernoulli likelihood at four inducing points.
fn classifier_session(dir: &Path, dim: usize) -> PathBuf {
    use sgpw::likelihoods::{BinaryLabels, LikelihoodKind, LikelihoodTable};
    use sgpw::methods::pseudo::Inducing;
    use sgpw::model_file::{Hyper, ModelFile};
    use sgpw::results::Status;
    let mut csv = if dim == 2 { "a,b,y\n" } else { "a,y\n" }.to_string();
    for i in 0..40 {
        let a = -5.0 + 10.0 * i as f64 / 39.0;
        let b = -5.0 + 10.0 * ((i * 7) % 40) as f64 / 39.0;
        let one = if dim == 2 { a * b > 0.0 } else { a.sin() > 0.0 };
        // labels -1 and 1: the figure says which is class 1
        let y = if one { 1 } else { -1 };
        if dim == 2 {
            csv.push_str(&format!("{a},{b},{y}\n"));
        } else {
            csv.push_str(&format!("{a},{y}\n"));
        }
    }
    std::fs::write(dir.join("labels.csv"), csv).expect("data");
    let text = "schema_version = 4\nname = \"cls\"\n\n[[datasets]]\nname = \"labels\"\n\
                train = \"labels.csv\"\n\n[[runs]]\ndataset = \"labels\"\nmethod = \"fitc\"\n\
                m = [4]\noptions = { likelihood = \"bernoulli\" }\n";
    let mut session = Session::parse(text).expect("parses");
    let points: Vec<Vec<f64>> = [[-3.0, -3.0], [3.0, 3.0], [-3.0, 3.0], [3.0, -3.0]]
        .iter()
        .map(|p| p[..dim].to_vec())
        .collect();
    let mut model = ModelFile::new("fitc", Hyper::se(4.0, vec![1.5; dim], 1e-6));
    model.set(&Inducing { points });
    model.likelihood = LikelihoodTable::start(
        LikelihoodKind::Bernoulli,
        Some(BinaryLabels {
            labels: [-1.0, 1.0],
        }),
    );
    let (key, spec) = session.all_runs().into_iter().next().expect("a run");
    session.set_result(sgpw::results::RunResult {
        model: Some(model),
        error_rate: Some(0.05),
        mnlp: Some(0.2),
        ..sgpw::results::RunResult::new(key, &spec.method, Status::Done)
    });
    let path = dir.join("cls.toml");
    session.save(&path).expect("saved");
    path
}

/// A classifier's prediction figure along one input is p(y = 1 | x) on [0, 1] (its
/// band and curve inside it, the labels named), not f's ±2σ bands.
#[test]
fn a_classifier_draws_its_probability_with_the_classes_at_0_and_1() {
    let dir = tempfile::tempdir().expect("tempdir");
    let session = classifier_session(dir.path(), 1);
    let svg = String::from_utf8(plot(&session, "prediction", &[], &dir.path().join("p.svg")))
        .expect("utf-8");
    let t = texts(&svg);
    assert!(t.iter().any(|x| x == "p(y = 1)"), "{t:?}");
    assert!(
        t.iter()
            .any(|x| x.contains("predictive p(y = 1 | x)") || x.contains("predictive p(y = 1 |")),
        "{t:?}"
    );
    assert!(t.iter().any(|x| x.contains("(-1 at")), "{t:?}");
    assert!(!t.iter().any(|x| x.contains("noisy")), "{t:?}");
    // the y axis is the probability's
    let ys: Vec<f64> = numbers(&t);
    assert!(ys.contains(&1.0) && ys.contains(&0.9), "{t:?}");
}

/// A classifier with two inputs is drawn as its probability map: the cells, the p = ½
/// contour, the data by class and the four inducing points, both inputs named.
#[test]
fn a_two_input_classifier_draws_its_probability_map() {
    let dir = tempfile::tempdir().expect("tempdir");
    let session = classifier_session(dir.path(), 2);
    let svg = String::from_utf8(plot(
        &session,
        "prediction",
        &[],
        &dir.path().join("map.svg"),
    ))
    .expect("utf-8");
    let t = texts(&svg);
    for want in [
        "a",
        "b",
        "p = ½ contour",
        "training, y = 1",
        "training, y = -1",
        "inducing points",
    ] {
        assert!(t.iter().any(|x| x == want), "{want} missing: {t:?}");
    }
    assert!(!t.iter().any(|x| x.contains("medians")), "{t:?}");
    // 64 × 64 cells, 40 points
    assert!(svg.matches("<rect").count() >= 64 * 64, "too few cells");
    assert!(svg.matches("<circle").count() >= 40, "too few points");
    let png = plot(&session, "prediction", &[], &dir.path().join("map.png"));
    assert!(png.starts_with(b"\x89PNG"));
}
