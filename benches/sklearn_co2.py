#!/usr/bin/env python3
"""scikit-learn's Mauna Loa example on datasets/co2 (issue 42's reference): fits the
example's kernel with its defaults (GaussianProcessRegressor, alpha = 1e-10, y centred,
one L-BFGS-B run from the example's starting kernel) and prints, as JSON, the fitted
kernel, its theta (log-parameters in scikit-learn's order), the log marginal likelihood
there and at the starting kernel, and the LML's gradient at both.

    /tmp/pyv/bin/python benches/sklearn_co2.py > tests/fixtures/sklearn_co2.json
"""
import gzip
import json

import numpy as np
import sklearn
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import (
    RBF,
    ExpSineSquared,
    RationalQuadratic,
    WhiteKernel,
)

with gzip.open("datasets/co2/data.csv.gz", "rt") as f:
    data = np.loadtxt(f, delimiter=",", skiprows=1)
X, y = data[:, :1], data[:, 1]
y_mean = y.mean()

long_term_trend_kernel = 50.0**2 * RBF(length_scale=50.0)
seasonal_kernel = (
    2.0**2
    * RBF(length_scale=100.0)
    * ExpSineSquared(length_scale=1.0, periodicity=1.0, periodicity_bounds="fixed")
)
irregularities_kernel = 0.5**2 * RationalQuadratic(length_scale=1.0, alpha=1.0)
noise_kernel = 0.1**2 * RBF(length_scale=0.1) + WhiteKernel(
    noise_level=0.1**2, noise_level_bounds=(1e-5, 1e5)
)
co2_kernel = (
    long_term_trend_kernel + seasonal_kernel + irregularities_kernel + noise_kernel
)

gp = GaussianProcessRegressor(kernel=co2_kernel, normalize_y=False)
gp.fit(X, y - y_mean)
start = gp.kernel.theta
fitted = gp.kernel_.theta
lml_start, grad_start = gp.log_marginal_likelihood(start, eval_gradient=True)
lml_fit, grad_fit = gp.log_marginal_likelihood(fitted, eval_gradient=True)
print(
    json.dumps(
        {
            "sklearn": sklearn.__version__,
            "n": len(y),
            "y_mean": y_mean,
            "alpha": gp.alpha,
            "hyperparameters": [h.name for h in gp.kernel_.hyperparameters if not h.fixed],
            "start": {"kernel": str(gp.kernel), "theta": list(start), "lml": lml_start, "grad": list(grad_start)},
            "fitted": {"kernel": str(gp.kernel_), "theta": list(fitted), "lml": lml_fit, "grad": list(grad_fit)},
        },
        indent=1,
    )
)
