"""Each summand's posterior from Python (``Model.predict_components``) is the command
line's ``sgpw predict --components``: the same Rust function, the same numbers bit for
bit, on the co2 series (issue 42, "Seeing the parts")."""

import numpy as np
import pandas as pd
import pytest

import sgpw
from conftest import DATA, read_csv, run_cli

CO2 = DATA / "co2" / "data.csv.gz"
KERNEL = "se(ls=50) + se(ls=100) * periodic(period=1, fix=period) + rq"


def cli_components(model, inputs):
    """The header and the rows of `sgpw predict --components`."""
    out, _, _ = run_cli("predict", "--model", model, "--input", inputs, "--components")
    lines = out.strip().splitlines()
    return lines[0].split(","), np.array([[float(v) for v in l.split(",")] for l in lines[1:]])


def test_components_are_the_command_lines(tmp_path):
    saved = tmp_path / "co2.toml"
    run_cli("fit", "--train", CO2, "--method", "vfe", "--m", 20, "--iters", 40,
            "--kernel", KERNEL, "--save-model", saved)
    X, _, names = read_csv(CO2)
    # every 20th month and three years past the series
    years = np.concatenate([X[::20, 0], [2002.5, 2003.25, 2004.0]])
    inputs = tmp_path / "in.csv"
    inputs.write_text("year\n" + "".join(f"{float(t)!r}\n" for t in years))
    header, cli = cli_components(saved, inputs)
    assert header[3:] == [
        "mean_se1", "var_latent_se1", "mean_se2*periodic", "var_latent_se2*periodic",
        "mean_rq", "var_latent_rq",
    ]
    model = sgpw.load(saved)
    parts = model.predict_components(years[:, None])
    assert list(parts) == ["se1", "se2*periodic", "rq"]
    for label, (mean, var) in parts.items():
        np.testing.assert_array_equal(mean, cli[:, header.index(f"mean_{label}")])
        np.testing.assert_array_equal(var, cli[:, header.index(f"var_latent_{label}")])
    # the summands' means add up to the total's less the target's mean
    total, _ = model.predict(years[:, None])
    target_mean = read_csv(CO2)[1].mean()
    summed = sum(mean for mean, _ in parts.values())
    np.testing.assert_allclose(summed + target_mean, total, rtol=0, atol=1e-9 * np.abs(total).max())
    # a DataFrame in, a DataFrame out: the command line's columns, the input's index
    frame = pd.DataFrame({"year": years}, index=[f"r{i}" for i in range(len(years))])
    table = model.predict_components(frame, threads=1)
    assert list(table.columns) == header[3:] and list(table.index) == list(frame.index)
    np.testing.assert_array_equal(table.to_numpy(), cli[:, 3:])


def test_components_refuse_what_cannot_be_split(tmp_path):
    X, y, _ = read_csv(CO2)
    plain = sgpw.fit(X[:120], y[:120], method="vfe", m=10, iterations=10)
    with pytest.raises(ValueError, match=r"kernel `se` is not a sum"):
        plain.predict_components(X[:3])
    nys = sgpw.fit(X[:120], y[:120], method="nystrom", m=10, iterations=10, kernel="se + rq")
    with pytest.raises(ValueError, match="method 'nystrom' has no posterior over values"):
        nys.predict_components(X[:3])
