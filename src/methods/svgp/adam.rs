//! Adam (Kingma & Ba 2015) with TensorFlow's defaults (β₁ = 0.9, β₂ = 0.999, ε = 1e-7),
//! as GPflow's SVGP recipe uses it: a minimiser of stochastic gradients.

pub struct Adam {
    lr: f64,
    m: Vec<f64>,
    v: Vec<f64>,
    t: i32,
}

const BETA1: f64 = 0.9;
const BETA2: f64 = 0.999;
const EPSILON: f64 = 1e-7;

impl Adam {
    pub fn new(len: usize, lr: f64) -> Adam {
        Adam {
            lr,
            m: vec![0.0; len],
            v: vec![0.0; len],
            t: 0,
        }
    }

    /// A new rate for the steps to come (the moments are kept).
    pub fn set_rate(&mut self, lr: f64) {
        self.lr = lr;
    }

    /// One step downhill along `grad` (the gradient of what is minimised).
    pub fn step(&mut self, x: &mut [f64], grad: &[f64]) {
        self.t += 1;
        // TensorFlow's form: the bias corrections folded into the rate, ε unscaled
        let rate = self.lr * (1.0 - BETA2.powi(self.t)).sqrt() / (1.0 - BETA1.powi(self.t));
        for (((x, g), m), v) in x.iter_mut().zip(grad).zip(&mut self.m).zip(&mut self.v) {
            *m = BETA1 * *m + (1.0 - BETA1) * g;
            *v = BETA2 * *v + (1.0 - BETA2) * g * g;
            *x -= rate * *m / (v.sqrt() + EPSILON);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first step moves every coordinate by the rate, against its gradient's sign
    /// (m̂/√v̂ = ±1), and a quadratic is driven to its minimum.
    #[test]
    fn first_step_and_a_quadratic() {
        let mut a = Adam::new(2, 0.1);
        let mut x = [1.0, -2.0];
        a.step(&mut x, &[3.0, -0.5]);
        assert!(
            (x[0] - 0.9).abs() < 1e-6 && (x[1] + 1.9).abs() < 1e-6,
            "{x:?}"
        );
        let mut a = Adam::new(1, 0.05);
        let mut x = [4.0];
        for _ in 0..2000 {
            let g = [2.0 * (x[0] - 1.5)];
            a.step(&mut x, &g);
        }
        assert!((x[0] - 1.5).abs() < 1e-3, "{x:?}");
    }
}
