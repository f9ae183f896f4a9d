//! `--validation` and `--early-stop`: a seeded split of the training rows, and the
//! scoring of a fit's iterates on the rows held out ([`Validator`]).

use super::Predictor;
use crate::data::{Dataset, TrainData};
use crate::error::{Error, Result};
use crate::methods;
use crate::metrics;
use crate::model_file::ModelFile;
use crate::results::ValidationPoint;
use crate::run_context::RunContext;
use nalgebra::DMatrix;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// A seeded split of the training rows into a fit part and a validation part of
/// `fraction` of them (at least one row each).
pub fn split_validation(
    data: &Dataset,
    fraction: f64,
    seed: u64,
) -> Result<(Dataset, DMatrix<f64>, Vec<f64>)> {
    let n = data.n_train();
    let n_valid = ((n as f64 * fraction).round() as usize).clamp(1, n.saturating_sub(2));
    if n < 3 {
        return Err(Error::input(format!(
            "validation: {n} training rows are too few to hold some out"
        )));
    }
    // its own stream, so the run's other draws do not move
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5641_4c49_4441_5445);
    let mut idx: Vec<usize> = (0..n).collect();
    rand::seq::SliceRandom::shuffle(idx.as_mut_slice(), &mut rng);
    let (valid, fit) = idx.split_at(n_valid);
    let mut fit = fit.to_vec();
    fit.sort_unstable();
    let rows =
        |ix: &[usize]| DMatrix::from_fn(ix.len(), data.dim(), |i, d| data.x_train[(ix[i], d)]);
    let x_valid = rows(valid);
    let y_valid = valid.iter().map(|&i| data.y_train[i]).collect();
    let fit_data = Dataset {
        x_train: rows(&fit),
        y_train: nalgebra::DVector::from_iterator(fit.len(), fit.iter().map(|&i| data.y_train[i])),
        ..data.clone()
    };
    Ok((fit_data, x_valid, y_valid))
}

/// Scores the fit's iterates on the validation set, and with early stopping keeps the
/// best and says when to stop.
pub(super) struct Validator<'a> {
    data: &'a TrainData,
    x: &'a DMatrix<f64>,
    y: &'a [f64],
    early_stop: bool,
    points: std::cell::RefCell<Vec<ValidationPoint>>,
    /// (MNLP, iteration, model) of the best iterate so far.
    best: std::cell::RefCell<Option<(f64, usize, ModelFile)>>,
}

/// Scorings without a better validation MNLP before early stopping ends the fit.
const PATIENCE: usize = 10;

impl<'a> Validator<'a> {
    /// Scores on `(x, y)` (the rows held out, in the data's units) of models fitted to
    /// `data`; with `early_stop` the best is kept.
    pub(super) fn new(
        data: &'a TrainData,
        x: &'a DMatrix<f64>,
        y: &'a [f64],
        early_stop: bool,
    ) -> Validator<'a> {
        Validator {
            data,
            x,
            y,
            early_stop,
            points: Default::default(),
            best: Default::default(),
        }
    }

    /// The scores, and with early stopping the iteration and model of the best.
    pub(super) fn into_scores(self) -> (Vec<ValidationPoint>, Option<(usize, ModelFile)>) {
        let best = self.best.into_inner().map(|(_, at, model)| (at, model));
        (self.points.into_inner(), best)
    }

    pub(super) fn observe(
        &self,
        iteration: usize,
        model: &ModelFile,
        ctx: &RunContext,
    ) -> crate::optim::Control {
        use crate::optim::Control;
        let scored = (|| -> Result<(f64, f64)> {
            let method = methods::get(&model.method)?;
            let (posterior, basis) = method.posterior(model, self.data, &ctx.exec)?;
            let p = Predictor::from_posterior(method, model.clone(), posterior, basis);
            let pred = p.predict_with(self.x, &ctx.exec)?;
            let nmse = metrics::nmse(self.y, &pred.mean, model.target_mean);
            let mnlp = metrics::mnlp(self.y, &pred.mean, &pred.var_noisy);
            match nmse {
                Some(nmse) if nmse.is_finite() && mnlp.is_finite() => Ok((nmse, mnlp)),
                _ => Err(Error::numerical("the validation scores are not finite")),
            }
        })();
        // an iterate that cannot be scored (a numerical failure, or validation targets
        // that all equal the training mean) is skipped, not fatal
        let Ok((nmse, mnlp)) = scored else {
            return Control::Continue;
        };
        ctx.validation(iteration, nmse, mnlp);
        self.points.borrow_mut().push(ValidationPoint {
            iteration,
            nmse,
            mnlp,
        });
        if !self.early_stop {
            return Control::Continue;
        }
        let mut best = self.best.borrow_mut();
        if best.as_ref().is_none_or(|(b, _, _)| mnlp < *b) {
            *best = Some((mnlp, iteration, model.clone()));
        }
        let since = self
            .points
            .borrow()
            .iter()
            .rev()
            .take_while(|p| best.as_ref().is_some_and(|(_, at, _)| p.iteration > *at))
            .count();
        if since >= PATIENCE {
            Control::Finish
        } else {
            Control::Continue
        }
    }
}
