//! A classifier's probability map over two inputs (the picture of Hensman, Matthews &
//! Ghahramani 2015's banana figure): p(y = 1 | x) on a grid over the data's range, the
//! data coloured by class and the model's inducing points (or what else its method
//! marks). The app's prediction pane shades it in cells; `sgpw plot --chart prediction`
//! draws it as a heat map. Knows no method by name.

use super::observed;
use crate::data::Dataset;
use crate::likelihoods::LikelihoodKind;
use crate::model_file::ModelFile;
use crate::train::Predictor;
use nalgebra::DMatrix;

/// Grid points along each input: finer than any terminal pane, coarse enough that the
/// map costs a few thousand predictions.
pub const GRID: usize = 64;

#[derive(Clone, Debug, PartialEq)]
pub struct ProbMap {
    /// The two inputs' names (x axis, y axis) and the target's.
    pub names: [String; 2],
    pub target_name: String,
    /// The grid along the first and the second input.
    pub xs: Vec<f64>,
    pub ys: Vec<f64>,
    /// p(y = 1 | x) at (xs[i], ys[j]), at `p[j * xs.len() + i]`.
    pub p: Vec<f64>,
    /// The data drawn (at most [`super::markers::SCATTER`] rows each, evenly spaced):
    /// (x1, x2, class 1?).
    pub train: Vec<(f64, f64, bool)>,
    pub test: Vec<(f64, f64, bool)>,
    /// The training rows of the data, drawn or not.
    pub train_rows: usize,
    /// The target's labels of class 0 and class 1.
    pub labels: [f64; 2],
    /// Where the method's features sit in the plane (inducing points), and what they are.
    pub markers: Vec<(f64, f64)>,
    pub marker_caption: String,
}

impl ProbMap {
    /// p(y = 1) at the grid point nearest (x, y).
    pub fn at(&self, x: f64, y: f64) -> f64 {
        let nearest = |g: &[f64], v: f64| {
            let (a, b) = (g[0], g[g.len() - 1]);
            let t = if b > a { (v - a) / (b - a) } else { 0.0 };
            ((t * (g.len() - 1) as f64).round().max(0.0) as usize).min(g.len() - 1)
        };
        self.p[nearest(&self.ys, y) * self.xs.len() + nearest(&self.xs, x)]
    }

    /// The plotted ranges: the grid's ends.
    pub fn x_range(&self) -> (f64, f64) {
        (self.xs[0], self.xs[self.xs.len() - 1])
    }

    pub fn y_range(&self) -> (f64, f64) {
        (self.ys[0], self.ys[self.ys.len() - 1])
    }
}

/// An evenly spaced grid of `k` points over the column's range in the training and
/// test inputs, padded by 5 % each side.
fn axis(data: &Dataset, d: usize, k: usize) -> Result<Vec<f64>, String> {
    let mut lo = data.x_train.column(d).min();
    let mut hi = data.x_train.column(d).max();
    if let Some(x) = data.x_test.as_ref().filter(|x| x.nrows() > 0) {
        lo = lo.min(x.column(d).min());
        hi = hi.max(x.column(d).max());
    }
    if !(lo.is_finite() && hi.is_finite()) {
        return Err("the inputs are not finite".into());
    }
    if hi <= lo {
        hi = lo + 1.0;
    }
    let pad = 0.05 * (hi - lo);
    let (lo, hi) = (lo - pad, hi + pad);
    Ok((0..k)
        .map(|i| lo + (hi - lo) * i as f64 / (k - 1) as f64)
        .collect())
}

/// The map of a classifier with two inputs; None for any other model.
pub fn compute(
    model: &ModelFile,
    predictor: &Predictor,
    data: &Dataset,
    k: usize,
) -> Result<Option<ProbMap>, String> {
    let labels = match &model.likelihood {
        Some(t) if t.name == LikelihoodKind::Bernoulli && data.dim() == 2 => t.binary_labels(),
        _ => None,
    };
    let Some(labels) = labels else {
        return Ok(None);
    };
    let k = k.max(2);
    let (xs, ys) = (axis(data, 0, k)?, axis(data, 1, k)?);
    let x = DMatrix::from_fn(k * k, 2, |r, d| if d == 0 { xs[r % k] } else { ys[r / k] });
    let pred = predictor.predict(&x).map_err(|e| e.to_string())?;
    let p = observed::of(model, &pred.mean, &pred.var_latent, &[], &[])?
        .map(|o| o.mean)
        .unwrap_or_default();
    let points = |x: &DMatrix<f64>, y: &[f64]| {
        let n = y.len().min(x.nrows());
        let keep = n.min(super::markers::SCATTER);
        (0..keep)
            .map(|i| i * n / keep)
            .filter(|&r| labels.labels.contains(&y[r]))
            .map(|r| (x[(r, 0)], x[(r, 1)], y[r] == labels.labels[1]))
            .collect::<Vec<_>>()
    };
    let (at0, _, caption) = super::markers::markers(predictor.method(), model, 0);
    let (at1, _, _) = super::markers::markers(predictor.method(), model, 1);
    // the k-th marker on each input is the k-th feature's (an inducing point's) place
    let markers: Vec<(f64, f64)> = if at0.len() == at1.len() {
        at0.into_iter().zip(at1).collect()
    } else {
        Vec::new()
    };
    let name = |d: usize| {
        data.feature_names
            .get(d)
            .cloned()
            .unwrap_or_else(|| format!("x{}", d + 1))
    };
    Ok(Some(ProbMap {
        names: [name(0), name(1)],
        target_name: data.target_name.clone(),
        xs,
        ys,
        p,
        train: points(&data.x_train, data.y_train.as_slice()),
        test: match (&data.x_test, &data.y_test) {
            (Some(x), Some(y)) => points(x, y.as_slice()),
            _ => Vec::new(),
        },
        train_rows: data.n_train(),
        labels: labels.labels,
        marker_caption: if markers.is_empty() {
            String::new()
        } else {
            caption
        },
        markers,
    }))
}
