//! The walk of a new low-rank family (docs/architecture.md, "Adding a low-rank
//! family"): a family defined here, outside the crate, touching none of its files —
//! SE inducing inputs held fixed at their start ("anchors"), learning only σ0², ℓ, σ².
//! It declares its own model table (`[anchors] points`) and what the prediction chart
//! marks, and runs through the shared machinery (`LowRankMethod`: the likelihood core,
//! the optimiser, the posterior): fit on small data, model-file round trip through
//! its own table, prediction, markers. Tied to FITC: with the same points and
//! hyperparameters its NLML and predictions are FITC's.
//!
//! In the crate, registering it would be the file `src/methods/anchors.rs` with this
//! code, `pub mod anchors;` in `src/methods/mod.rs` and one line in `registry()` there:
//! `&anchors::ANCHORED,`.

use crate::common;
use common::*;
use nalgebra::DMatrix;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use sgpw::collapsed::Adjoints;
use sgpw::data::TrainData;
use sgpw::error::{Location, Result};
use sgpw::exec::Exec;
use sgpw::methods::hyper::{noise_grad, pack_hyper, random_rows, unpack_hyper};
use sgpw::methods::lowrank::{
    ApproxChoice, Family, KuuMatrix, LowRankMethod, MaxM, Parts, jitter_grad, kdiag_grad,
};
use sgpw::methods::method::check_model;
use sgpw::methods::pseudo::Inducing;
use sgpw::methods::{Markers, Method, ValidRunSpec};
use sgpw::model_file::{Hyper, ModelFile, ModelTable, Witness, matrix_to_rows, required_matrix};
use sgpw::run_context::RunContext;
use sgpw::run_spec::{ApproxKind, DataShape, Naming, RunSpec};

/// `[anchors] points`: the fixed inducing inputs, m rows of D values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Anchors {
    points: Vec<Vec<f64>>,
}

impl ModelTable for Anchors {
    const NAME: &'static str = "anchors";
}

/// The family: inducing inputs at m random training inputs, never moved.
struct Anchored;

static ANCHORED: LowRankMethod<Anchored> = LowRankMethod {
    name: "anchored",
    aliases: &[],
    summary: "FITC with its m inducing inputs fixed at random training inputs",
    m_meaning: "inducing points",
    options: &[],
    approx: ApproxChoice::Fixed(ApproxKind::Fitc),
    max_m: MaxM::TrainingSize,
    family: Anchored,
};

fn points(model: &ModelFile) -> Result<DMatrix<f64>> {
    required_matrix(
        &Location::key(Anchors::NAME).then("points"),
        &model.require::<Anchors>()?.points,
        model.hyper.lengthscales.len(),
    )
}

impl Family for Anchored {
    type Extra = DMatrix<f64>;
    type State = ModelFile;

    fn init(
        &self,
        data: &TrainData,
        spec: &ValidRunSpec,
        hyper: Hyper,
        _ctx: &RunContext,
        rng: &mut ChaCha8Rng,
    ) -> Result<ModelFile> {
        let mut model = ModelFile::new(&spec.method, hyper);
        model.set(&Anchors {
            points: matrix_to_rows(&random_rows(&data.x, spec.m, rng)),
        });
        Ok(model)
    }

    fn check(&self, model: &ModelFile) -> Result<usize> {
        Ok(points(model)?.nrows())
    }

    fn tables(&self) -> &'static [&'static str] {
        &[Anchors::NAME]
    }

    fn input_dims(&self, model: &ModelFile) -> Vec<Witness> {
        let mut w = vec![Witness::lengthscales(model)];
        w.extend(Witness::rows(model, Anchors::NAME, "points"));
        w
    }

    fn markers(&self, model: &ModelFile, input: usize) -> Result<Markers> {
        Ok(Markers {
            at: points(model)?.column(input).iter().copied().collect(),
            sizes: Vec::new(),
            caption: "anchors".into(),
        })
    }

    fn pack(&self, model: &ModelFile) -> Vec<f64> {
        let mut theta = Vec::new();
        pack_hyper(model, &mut theta);
        theta
    }

    fn unpack(&self, theta: &[f64], model: &mut ModelFile) {
        unpack_hyper(theta, model);
    }

    fn parts(
        &self,
        model: &ModelFile,
        x: &DMatrix<f64>,
        _for_gradient: bool,
        exec: &Exec,
    ) -> Result<(Parts, DMatrix<f64>)> {
        let z = points(model)?;
        let k = model.kernel();
        let parts = Parts {
            kuf: k.matrix(&z, x, exec.par),
            kuu: KuuMatrix::Dense(k.gram(&z, exec.par)),
            kdiag: vec![model.hyper.signal_variance; x.nrows()],
            jitter: model.jitter_policy(),
        };
        Ok((parts, z))
    }

    fn pull_back(
        &self,
        model: &ModelFile,
        x: &DMatrix<f64>,
        parts: &Parts,
        z: DMatrix<f64>,
        adj: &Adjoints,
        exec: &Exec,
    ) -> Result<Vec<f64>> {
        let k = model.kernel();
        let gf = k.grad(&z, x, &parts.kuf, &adj.d_kuf, false, false, exec.par);
        let gu = k.grad(
            &z,
            &z,
            parts.dense_kuu()?,
            &adj.d_kuu,
            false,
            false,
            exec.par,
        );
        let mut grad = vec![
            gf.params[0]
                + gu.params[0]
                + kdiag_grad(model, adj)
                + jitter_grad(parts.jitter, adj.jitter, &adj.d_kuu),
        ];
        grad.extend(
            gf.params[1..]
                .iter()
                .zip(&gu.params[1..])
                .map(|(a, b)| a + b),
        );
        grad.push(noise_grad(model, adj.d_noise));
        Ok(grad)
    }
}

fn spec(m: usize) -> RunSpec {
    RunSpec {
        method: "anchored".into(),
        m,
        seed: 3,
        iters: 40,
        standardize: false,
        options: Default::default(),
    }
}

/// A started model on the toy data, its spec checked against the method.
fn started(data: &TrainData) -> (ModelFile, ValidRunSpec) {
    let valid = spec(6)
        .check_with(&ANCHORED, DataShape::points(data.y.len()), Naming::Flags)
        .expect("a valid spec");
    let ctx = RunContext::quiet(ex());
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let hyper =
        sgpw::methods::start::initial_hyper(data, &valid, None, &ctx, &mut rng).expect("hyper");
    let model = ANCHORED
        .init(data, &valid, hyper, &ctx, &mut rng)
        .expect("init");
    (model, valid)
}

/// The same model as a FITC model: its anchors as `[inducing] points`.
fn as_fitc(model: &ModelFile) -> ModelFile {
    let mut fitc = ModelFile::new("fitc", model.hyper.clone());
    fitc.set(&Inducing {
        points: model.require::<Anchors>().expect("anchors").points,
    });
    fitc
}

#[test]
fn a_family_defined_outside_the_crate_fits_round_trips_predicts_and_marks() {
    let data = toy_data(80, 2, 11);
    let (model, valid) = started(&data);
    check_model(&ANCHORED, &model).expect("checks");

    // the gradient through the shared core, against finite differences
    let obj = ANCHORED.objective(&model, &data, &ex()).expect("objective");
    let theta = ANCHORED.pack(&model);
    let mut f = |t: &[f64]| {
        let mut m = model.clone();
        ANCHORED.unpack(t, &mut m);
        ANCHORED.nlml(&m, &data, &ex()).expect("nlml")
    };
    check_gradient("anchored", &mut f, &theta, &obj.grad, 1e-5, 1e-6);

    // tied to FITC at the same points and hyperparameters
    let fitc = sgpw::methods::get("fitc").expect("fitc");
    let reference = fitc.nlml(&as_fitc(&model), &data, &ex()).expect("fitc");
    assert!(
        (obj.nlml - reference).abs() <= 1e-12 * reference.abs(),
        "{} vs FITC's {reference}",
        obj.nlml
    );

    // a fit through the shared optimiser lowers the NLML and keeps the anchors
    let ctx = RunContext::quiet(ex());
    let (fitted, outcome) = ANCHORED
        .fit(model.clone(), &data, &valid, &ctx)
        .expect("fits");
    assert!(outcome.f < obj.nlml - 1.0, "{} → {}", obj.nlml, outcome.f);
    assert_eq!(fitted.tables, model.tables, "the anchors moved");

    // the model file round trip through its own table
    let text = fitted.to_toml().expect("writes");
    assert!(text.contains("\n[anchors]\npoints = [["), "{text}");
    let read = ModelFile::parse(&text).expect("reads");
    assert_eq!(read, fitted);
    check_model(&ANCHORED, &read).expect("checks");
    let short = text.replacen("points = [[", "points = [[0.5], [", 1);
    let e = check_model(&ANCHORED, &ModelFile::parse(&short).expect("parses"))
        .expect_err("a row short");
    let line = sgpw::model_file::line_of(&short, e.location().expect("located"));
    assert_eq!(
        line,
        short
            .lines()
            .position(|l| l.starts_with("points"))
            .map(|i| i + 1),
        "{e}"
    );

    // prediction, and FITC's at the same model
    let test = toy_data(30, 2, 12).x;
    let (post, basis) = ANCHORED.posterior(&read, &data, &ex()).expect("posterior");
    let (mean, var) = ANCHORED
        .predict(&read, &post, basis.as_ref(), &test, &ex())
        .expect("predicts");
    let fitc_model = as_fitc(&read);
    let (fp, _) = fitc
        .posterior(&fitc_model, &data, &ex())
        .expect("posterior");
    let (fmean, fvar) = fitc
        .predict(&fitc_model, &fp, None, &test, &ex())
        .expect("predicts");
    assert_close("mean", &mean, &fmean, 1e-10);
    assert_close("variance", &var, &fvar, 1e-10);

    // what the chart marks: the anchors along the input asked for
    let marks = ANCHORED.markers(&read, 1).expect("markers");
    let anchors = read.require::<Anchors>().expect("anchors").points;
    assert_eq!(marks.caption, "anchors");
    assert_eq!(marks.at, anchors.iter().map(|r| r[1]).collect::<Vec<f64>>());
}
