//! What the prediction pane draws for one run: the predictive mean and ±2σ bands along
//! one input on a grid, the data projected onto that input, and the x-locations the
//! method's model marks (inducing points, feature centres). Knows no method by name.

use crate::data::Dataset;
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
    /// Number of inputs; above 1 the others are held at their training medians.
    pub dim: usize,
    pub grid: Vec<f64>,
    pub mean: Vec<f64>,
    /// Latent (f) and noisy (y) standard deviations.
    pub sd_latent: Vec<f64>,
    pub sd_noisy: Vec<f64>,
    pub train: Vec<(f64, f64)>,
    pub test: Vec<(f64, f64)>,
    pub markers: Vec<f64>,
    /// What the markers are ("inducing points", ...), empty when there are none.
    pub marker_kind: String,
    /// SPGP+HS: per marker, how far its pseudo-input is switched on by its learned
    /// pseudo-noise, σ0²/(σ0² + h_j) in (0, 1] (drawn as the marker's size); empty
    /// for models without pseudo-noise.
    pub marker_strength: Vec<f64>,
    /// Grid points whose predictive latent variance came out negative (the Nyström
    /// predictor); the bands draw them as 0.
    pub negative: usize,
}

/// σ0²/(σ0² + h_j) per pseudo-input of a model with `[pseudo_noise]` whose markers
/// are drawn (1: a plain SPGP pseudo-input, → 0: switched off by its uncertainty);
/// empty otherwise.
pub fn marker_strengths(model: &ModelFile) -> Vec<f64> {
    match &model.pseudo_noise {
        Some(p) if model.projection.is_none() && model.pca.is_none() => {
            let s = model.hyper.signal_variance;
            p.h.iter().map(|h| s / (s + h)).collect()
        }
        _ => Vec::new(),
    }
}

/// X-locations (original units) along `input` that a model marks, and what they are:
/// `inducing.points`, `basis.points` or `features.centres`, whichever the model has.
/// Pseudo-inputs in a projected space (spgp-dr, pca-spgp) have no place on an input
/// axis: none.
pub fn marker_locations(model: &ModelFile, input: usize) -> (Vec<f64>, &'static str) {
    if model.projection.is_some() || model.pca.is_some() {
        return (Vec::new(), "");
    }
    let (rows, kind) = if let Some(ind) = &model.inducing {
        (&ind.points, "inducing points")
    } else if let Some(b) = &model.basis {
        (&b.points, "basis points")
    } else if let Some(c) = model.features.as_ref().and_then(|f| f.centres.as_ref()) {
        (c, "feature centres")
    } else {
        return (Vec::new(), "");
    };
    // Stored in model units: undo the centring and the standardisation.
    let shift = model
        .input_mean
        .as_ref()
        .and_then(|m| m.get(input))
        .copied()
        .unwrap_or(0.0);
    let (centre, scale) = model
        .standardize
        .as_ref()
        .and_then(|s| Some((*s.input_center.get(input)?, *s.input_scale.get(input)?)))
        .unwrap_or((0.0, 1.0));
    let xs = rows
        .iter()
        .filter_map(|r| r.get(input))
        .map(|v| (v + shift) * scale + centre)
        .filter(|v| v.is_finite())
        .collect();
    (xs, kind)
}

fn median(mut v: Vec<f64>) -> f64 {
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
    let sd = |v: &[f64]| v.iter().map(|s| s.max(0.0).sqrt()).collect::<Vec<f64>>();
    let pairs = |x: &DMatrix<f64>, y: &[f64]| {
        x.column(input)
            .iter()
            .copied()
            .zip(y.iter().copied())
            .collect::<Vec<_>>()
    };
    let (markers, kind) = marker_locations(model, input);
    Ok(Curves {
        input,
        input_name: data
            .feature_names
            .get(input)
            .cloned()
            .unwrap_or_else(|| format!("x{}", input + 1)),
        dim,
        grid,
        negative: p.var_latent.iter().filter(|v| **v < 0.0).count(),
        sd_latent: sd(&p.var_latent),
        sd_noisy: sd(&p.var_noisy),
        mean: p.mean,
        train: pairs(&data.x_train, data.y_train.as_slice()),
        test: match (&data.x_test, &data.y_test) {
            (Some(x), Some(y)) => pairs(x, y.as_slice()),
            _ => Vec::new(),
        },
        marker_strength: if markers.is_empty() {
            Vec::new()
        } else {
            marker_strengths(model)
        },
        markers,
        marker_kind: kind.into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model_file::{Hyper, Inducing, Standardize};

    #[test]
    fn markers_come_back_in_original_units() {
        let mut m = ModelFile::new(
            "fitc",
            Hyper {
                signal_variance: 1.0,
                lengthscales: vec![1.0, 1.0],
                noise_variance: 0.1,
            },
        );
        assert!(marker_locations(&m, 0).0.is_empty());
        m.inducing = Some(Inducing {
            points: vec![vec![0.0, 1.0], vec![1.0, -1.0]],
        });
        m.standardize = Some(Standardize {
            input_center: vec![10.0, 0.0],
            input_scale: vec![2.0, 3.0],
            target_scale: 1.0,
        });
        let (xs, kind) = marker_locations(&m, 0);
        assert_eq!((xs, kind), (vec![10.0, 12.0], "inducing points"));
        assert_eq!(marker_locations(&m, 1).0, vec![3.0, -3.0]);
    }

    #[test]
    fn pseudo_noise_sets_the_strengths_and_projections_hide_the_markers() {
        let mut m = ModelFile::new(
            "spgp-hs",
            Hyper {
                signal_variance: 2.0,
                lengthscales: vec![1.0],
                noise_variance: 0.1,
            },
        );
        m.inducing = Some(Inducing {
            points: vec![vec![0.0], vec![1.0]],
        });
        assert!(marker_strengths(&m).is_empty());
        m.pseudo_noise = Some(crate::model_file::PseudoNoise { h: vec![0.0, 6.0] });
        assert_eq!(marker_strengths(&m), vec![1.0, 0.25]);
        m.projection = Some(crate::model_file::Projection {
            matrix: vec![vec![1.0]],
        });
        assert!(marker_locations(&m, 0).0.is_empty() && marker_strengths(&m).is_empty());
    }

    #[test]
    fn median_of_even_and_odd() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(vec![]), 0.0);
    }
}
