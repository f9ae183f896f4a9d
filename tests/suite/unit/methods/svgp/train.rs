use nalgebra::DMatrix;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use sgpw::data::TrainData;
use sgpw::error::Result;
use sgpw::exec::Exec;
use sgpw::methods::pseudo::set_inducing_points;
use sgpw::methods::svgp::elbo::Projected;
use sgpw::methods::svgp::elbo::Variational;
use sgpw::methods::svgp::elbo::Want;
use sgpw::methods::svgp::train::*;
use sgpw::methods::svgp::*;
use sgpw::model_file::Hyper;
use sgpw::model_file::ModelFile;
use sgpw::run_context::RunContext;
use sgpw::run_spec::SvgpOptimizer;

/// Rows in memory that hide it: the exact stage takes svgp's own bound, as for a
/// file or a process's share of the rows.
struct Hidden<'a>(InMemory<'a>);

impl TrainingRows for Hidden<'_> {
    fn n(&self) -> usize {
        self.0.n()
    }
    fn next_batch(&mut self, batch: usize, rng: &mut ChaCha8Rng) -> Result<Batch> {
        self.0.next_batch(batch, rng)
    }
    fn sums(
        &self,
        model: &ModelFile,
        p: &Params,
        want: Want,
        _cache: Option<&mut Vec<Projected>>,
        exec: &Exec,
    ) -> Result<Evaluation> {
        self.0.sums(model, p, want, None, exec)
    }
}

fn progress() -> Progress {
    Progress {
        step: 0,
        seen: 0,
        evaluations: 0,
        trace: Vec::new(),
        record: SvgpRecord {
            optimizer: SvgpOptimizer::Natgrad,
            batch: 1,
            steps: 0,
            epochs: 0.0,
            full_at: Vec::new(),
            full_neg_elbo: Vec::new(),
            stage_at: Vec::new(),
            probe_at: Vec::new(),
            probe_neg_elbo: Vec::new(),
        },
    }
}

/// The exact stage's two bounds are one function — vfe's collapsed bound on rows in
/// memory, svgp's ELBO at the closed-form q(u) (two passes) otherwise — so L-BFGS
/// takes the same steps on both: the same bounds, step by step, to rounding, and
/// the same end.
#[test]
fn the_exact_stage_s_two_bounds_are_one() {
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let n = 150;
    let x: DMatrix<f64> =
        DMatrix::from_fn(n, 2, |_, _| rand::Rng::random_range(&mut rng, -2.0..2.0));
    let y = (0..n)
        .map(|i| (1.5 * x[(i, 0)]).sin() + 0.3 * x[(i, 1)] + 0.1 * ((i % 7) as f64 - 3.0))
        .collect();
    let data = TrainData {
        x,
        y,
        log_exposure: None,
    };
    let hyper: Hyper =
        toml::from_str("signal_variance = 0.8\nlengthscales = [1.3, 0.9]\nnoise_variance = 0.2")
            .expect("hyper");
    let mut model = ModelFile::new("svgp", hyper);
    let z = data.x.rows(0, 7).into_owned();
    set_inducing_points(&mut model, &z);
    set_variational(&mut model, &Variational::prior(7));
    let ctx = RunContext::quiet(Exec::default());
    let mut ends = Vec::new();
    for hidden in [false, true] {
        let (mut m, mut p) = (model.clone(), Params::of(&model).expect("params"));
        let mut run = progress();
        let rows = InMemory::new(&data);
        let stop = if hidden {
            exact_stage(
                &mut m,
                &mut p,
                &Hidden(rows),
                Budget::Steps(25),
                &mut run,
                &ctx,
            )
        } else {
            exact_stage(&mut m, &mut p, &rows, Budget::Steps(25), &mut run, &ctx)
        }
        .expect("exact stage");
        ends.push((stop, run.record.full_neg_elbo, m.hyper, p));
    }
    let (a, b) = (&ends[0], &ends[1]);
    assert_eq!(a.0, b.0);
    assert_eq!(a.1.len(), b.1.len(), "{:?} {:?}", a.1, b.1);
    assert!(
        a.1.len() > 10 && a.1[a.1.len() - 1] < a.1[0] - 1.0,
        "{:?}",
        a.1
    );
    for (u, v) in a.1.iter().zip(&b.1) {
        assert!((u - v).abs() < 1e-6 * (1.0 + u.abs()), "{u} vs {v}");
    }
    let close = |u: f64, v: f64| (u - v).abs() < 1e-6 * (1.0 + u.abs());
    assert!(close(a.2.noise_variance, b.2.noise_variance));
    let (za, zb) = (a.3.z().expect("z"), b.3.z().expect("z"));
    assert!(za.iter().zip(zb.iter()).all(|(u, v)| close(*u, *v)));
    let (qa, qb) = (&a.3.q, &b.3.q);
    assert!(
        qa.mean
            .iter()
            .zip(qb.mean.iter())
            .all(|(u, v)| close(*u, *v))
    );
}
