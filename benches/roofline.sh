#!/bin/bash
# One evaluation's time against its arithmetic at this machine's measured rates
# (`sgpw bench --roofline`), for each method and m: a Markdown table of the median time,
# the arithmetic at the measured rates, their ratio, the n·m² units counted and the
# measured product rate. Each line is one run of the binary (rates and times measured
# in the same run).
# Usage: benches/roofline.sh [BIN]   (env: METHODS, MS, N, D, THREADS, REPS)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
BIN=${1:-$here/../target/release/sgpw}
METHODS=${METHODS:-"fitc vfe"}; MS=${MS:-"25 50 100 200 400"}
N=${N:-10000}; D=${D:-8}; THREADS=${THREADS:-2}; REPS=${REPS:-21}
echo "| method | m | time ms | arithmetic ms | time / arithmetic | units | product GFLOP/s |"
echo "|---|---|---|---|---|---|---|"
for method in $METHODS; do
  for m in $MS; do
    "$BIN" bench --roofline --json --method "$method" --m "$m" --n "$N" --d "$D" \
      --threads "$THREADS" --reps "$REPS" | python3 -c "
import json, sys
r = json.load(sys.stdin)
print(f\"| {r['method']} | {r['m']} | {1e3*r['median_eval_seconds']:.2f} | {1e3*r['arithmetic_seconds']:.2f} \"
      f\"| {r['ratio']:.2f} | {r['units']:.2f} | {r['rates_gflops']['gemm']:.1f} |\")"
  done
done
