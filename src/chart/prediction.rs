//! What the prediction chart (the app's pane and `sgpw plot --chart prediction`) draws
//! for one run: the predictive mean and ±2σ bands along
//! one input on a grid, the data projected onto that input, and what the method's model
//! marks under the axis (its inducing points, feature centres: the method says which,
//! [`Method::markers`]). Knows no method by name.

pub use super::markers::{SCATTER, markers};
use crate::data::Dataset;
use crate::methods::MarkerSize;
use crate::model_file::ModelFile;
use crate::train::Predictor;
use nalgebra::DMatrix;

/// Grid points along the chosen input: enough for two braille columns per cell on a
/// 160-column terminal.
pub const GRID: usize = 320;

#[derive(Clone, Debug, PartialEq)]
pub struct Curves {
    /// The input varied (0-based) and its name.
    pub input: usize,
    pub input_name: String,
    /// The target column's name (the y axis's).
    pub target_name: String,
    /// Number of inputs; above 1 the others are held at their training medians.
    pub dim: usize,
    pub grid: Vec<f64>,
    pub mean: Vec<f64>,
    /// Latent (f) and noisy (y) standard deviations.
    pub sd_latent: Vec<f64>,
    pub sd_noisy: Vec<f64>,
    /// A classifier's probability or a count model's rate with its band, drawn instead
    /// of f's bands ([`super::observed`]); None for the Gaussian and Student-t.
    pub observed: Option<super::observed::Observed>,
    /// A classifier with two inputs: its probability map, drawn instead of the curve
    /// along one input ([`super::prob_map`]).
    pub map: Option<super::prob_map::ProbMap>,
    /// The data drawn (at most [`SCATTER`] each, evenly spaced rows of the data).
    pub train: Vec<(f64, f64)>,
    pub test: Vec<(f64, f64)>,
    /// Training plus test rows of the data, drawn or not.
    pub rows: usize,
    /// The x-locations the method marks (original units).
    pub markers: Vec<f64>,
    /// Per marker its size, where the method sizes them (SPGP+HS: how far its
    /// pseudo-input is switched on); empty: all full size.
    pub marker_sizes: Vec<MarkerSize>,
    /// What the markers are, for the legend; empty when there are none.
    pub marker_caption: String,
    /// Grid points whose predictive latent variance came out negative (the Nyström
    /// predictor); the bands draw them as 0.
    pub negative: usize,
    /// Each summand's posterior for a kernel whose top level is a sum, or why the
    /// model has none ([`super::components`]).
    pub components: Result<Vec<super::components::ComponentCurve>, String>,
}

impl Curves {
    /// The y range the app and the figures plot: the ±2σ noisy band and the data,
    /// padded by 4 % (−1..1 when there is nothing finite to show).
    pub fn y_range(&self) -> (f64, f64) {
        let mut lo = f64::INFINITY;
        let mut hi = f64::NEG_INFINITY;
        for i in 0..self.grid.len() {
            lo = lo.min(self.mean[i] - 2.0 * self.sd_noisy[i]);
            hi = hi.max(self.mean[i] + 2.0 * self.sd_noisy[i]);
        }
        for (_, y) in self.train.iter().chain(&self.test) {
            lo = lo.min(*y);
            hi = hi.max(*y);
        }
        if !(lo.is_finite() && hi.is_finite()) {
            return (-1.0, 1.0);
        }
        let pad = ((hi - lo) * 0.04).max(1e-9);
        (lo - pad, hi + pad)
    }
}

pub fn median(mut v: Vec<f64>) -> f64 {
    v.retain(|x| x.is_finite());
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

/// Predict along `input` (others at training medians) over the data's range.
pub fn compute(
    model: &ModelFile,
    data: &Dataset,
    input: usize,
    grid_points: usize,
) -> Result<Curves, String> {
    let dim = data.dim();
    if input >= dim {
        return Err(format!(
            "input {} does not exist (the data set has {dim})",
            input + 1
        ));
    }
    let col_train = data.x_train.column(input);
    let mut lo = col_train.min();
    let mut hi = col_train.max();
    if let Some(x) = &data.x_test
        && x.nrows() > 0
        && x.ncols() == dim
    {
        lo = lo.min(x.column(input).min());
        hi = hi.max(x.column(input).max());
    }
    if !(lo.is_finite() && hi.is_finite()) {
        return Err("the inputs are not finite".into());
    }
    if hi <= lo {
        hi = lo + 1.0;
    }
    let pad = 0.02 * (hi - lo);
    let (lo, hi) = (lo - pad, hi + pad);
    let k = grid_points.max(2);
    let grid: Vec<f64> = (0..k)
        .map(|i| lo + (hi - lo) * i as f64 / (k - 1) as f64)
        .collect();
    let medians: Vec<f64> = (0..dim)
        .map(|d| median(data.x_train.column(d).iter().copied().collect()))
        .collect();
    let x = DMatrix::from_fn(k, dim, |i, d| if d == input { grid[i] } else { medians[d] });
    let predictor = Predictor::new(
        model.clone(),
        Some((&data.x_train, data.y_train.as_slice())),
    )
    .map_err(|e| e.to_string())?;
    let p = predictor.predict(&x).map_err(|e| e.to_string())?;
    let components = super::components::compute(&predictor, &x);
    let sd = |v: &[f64]| v.iter().map(|s| s.max(0.0).sqrt()).collect::<Vec<f64>>();
    let pairs = |x: &DMatrix<f64>, y: &[f64]| {
        let n = y.len().min(x.nrows());
        let keep = n.min(SCATTER);
        (0..keep)
            .map(|i| {
                let r = i * n / keep;
                (x[(r, input)], y[r])
            })
            .collect::<Vec<_>>()
    };
    let (markers, marker_sizes, marker_caption) = markers(predictor.method(), model, input);
    let train = pairs(&data.x_train, data.y_train.as_slice());
    let test = match (&data.x_test, &data.y_test) {
        (Some(x), Some(y)) => pairs(x, y.as_slice()),
        _ => Vec::new(),
    };
    let observed = super::observed::of(model, &p.mean, &p.var_latent, &train, &test)?;
    let map = super::prob_map::compute(model, &predictor, data, super::prob_map::GRID)?;
    Ok(Curves {
        observed,
        map,
        input,
        input_name: data
            .feature_names
            .get(input)
            .cloned()
            .unwrap_or_else(|| format!("x{}", input + 1)),
        target_name: data.target_name.clone(),
        dim,
        grid,
        negative: p.var_latent.iter().filter(|v| **v < 0.0).count(),
        sd_latent: sd(&p.var_latent),
        sd_noisy: sd(&p.var_noisy),
        mean: p.mean,
        train,
        test,
        rows: data.n_train() + data.n_test(),
        markers,
        marker_sizes,
        marker_caption,
        components,
    })
}

impl Curves {
    /// The chart of summand `k` (None past the last, or without summands): its mean and
    /// latent band on the same grid and markers, without the data (a summand is not
    /// observed) and without a noisy band (the noise is the total's); its y axis names
    /// the summand.
    pub fn component(&self, k: usize) -> Option<Curves> {
        let c = self.components.as_ref().ok()?.get(k)?;
        Some(Curves {
            target_name: format!("{}: {}", self.target_name, c.label),
            mean: c.mean.clone(),
            sd_latent: c.sd_latent.clone(),
            sd_noisy: c.sd_latent.clone(),
            train: Vec::new(),
            test: Vec::new(),
            negative: 0,
            components: Ok(Vec::new()),
            ..self.clone()
        })
    }

    /// The number of summands drawn apart (0 when the model has none).
    pub fn component_count(&self) -> usize {
        self.components.as_ref().map_or(0, Vec::len)
    }
}
