#!/bin/sh
# The test files of sessions/eigengp-paper.toml (the EigenGP paper's Table 1).
# Run from the repository root after `cargo build --release`.
#
# Data set 1: Snelson's toy data (datasets/snelson1d/train.csv.gz, 200 points).
# The paper labels "x ∈ [−1, 7]" with the full GP's predictive mean ("we do not have
# the true y values in the test data"); it does not say how many test points, so we
# use an even grid of 401 points (step 0.02). The full GP's hyperparameters are its
# evidence maximum from the §0 defaults (seed 1, 500 iterations).
#
# Data set 2: x·sin(x³) on (0, 3), noise sd 0.5, 200 training points and 500 test
# points labelled with the true function; generations 1..10 = seeds 1..10.
set -e
SGPW=./target/release/sgpw
TMP=$(mktemp -d)
$SGPW fit --train datasets/snelson1d/train.csv.gz --method full --seed 1 \
    --iters 500 --save-model "$TMP/full.toml" > /dev/null
awk 'BEGIN { print "x1"; for (i = 0; i <= 400; i++) printf "%.2f\n", -1 + 0.02 * i }' > "$TMP/grid.csv"
$SGPW predict --model "$TMP/full.toml" --input "$TMP/grid.csv" \
    --train datasets/snelson1d/train.csv.gz --out "$TMP/pred.csv"
# x1 from the grid, y = the full GP's predictive mean
paste -d, "$TMP/grid.csv" "$TMP/pred.csv" | awk -F, 'NR == 1 { print "x1,y"; next } { print $1 "," $2 }' \
    > datasets/snelson_fullgp_grid.csv
for s in 1 2 3 4 5 6 7 8 9 10; do
    $SGPW gen xsinx3 --seed "$s" --out "datasets/xsinx3/gen$(printf %02d "$s")" > /dev/null
done
rm -r "$TMP"
echo "wrote datasets/snelson_fullgp_grid.csv and datasets/xsinx3/gen01..gen10"
