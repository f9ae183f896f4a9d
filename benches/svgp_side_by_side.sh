#!/bin/bash
# sgpw's svgp against GPflow's SVGP, time per epoch measured side by side: ROUNDS
# alternating pairs of `sgpw fit --method svgp` and benches/gpflow_svgp_train.py from
# the same start (kin40k, m = M, B = BATCH, EPOCHS epochs, natural-gradient step 0.1 on
# q(u) and Adam 0.01 on the rest; 2 threads each), printing each pair's seconds per
# epoch, their ratio sgpw/GPflow and its median. sgpw's time is its whole fit (the
# full-data ELBO at the start and the end included; --elbo-every is set past the end),
# GPflow's that of its steps after one untimed compiled step.
# Usage: benches/svgp_side_by_side.sh [ROUNDS]   (env: SGPW, PY, D, M, BATCH, EPOCHS)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
SGPW=${SGPW:-$here/../target/release/sgpw}
PY=${PY:-/tmp/gpflow/bin/python}
D=${D:-$here/../datasets/kin40k}
M=${M:-200}; BATCH=${BATCH:-1024}; EPOCHS=${EPOCHS:-20}
ROUNDS=${1:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
common=(--train "$D/train.csv.gz" --method svgp --m "$M" --raw --noise-floor 0 --seed 1)
"$SGPW" fit "${common[@]}" --iters 0 --save-model "$tmp/start.toml" > /dev/null
echo "m=$M B=$BATCH epochs=$EPOCHS | sgpw s/epoch | GPflow s/epoch | ratio sgpw/GPflow | sgpw NMSE | GPflow NMSE"
r=()
for _ in $(seq "$ROUNDS"); do
  a=$("$SGPW" fit "${common[@]}" --test "$D/test.csv.gz" --batch "$BATCH" --epochs "$EPOCHS" \
      --elbo-every 100000000 --json)
  b=$("$PY" "$here/gpflow_svgp_train.py" "$tmp/start.toml" --train "$D/train.csv.gz" \
      --test "$D/test.csv.gz" --batch "$BATCH" --epochs "$EPOCHS" 2>/dev/null | tail -1)
  line=$(python3 - "$a" "$b" "$EPOCHS" <<'PY'
import json, sys
a, b, e = json.loads(sys.argv[1]), json.loads(sys.argv[2]), int(sys.argv[3])
s = a["train_seconds"] / e
g = b["seconds_per_epoch"]
print(f"round | {s:.3f} | {g:.3f} | {s / g:.3f} | {a['nmse']:.4f} | {b['nmse']:.4f}")
PY
)
  echo "$line"
  r+=("$(echo "$line" | awk -F'|' '{print $4}')")
done
python3 -c "import statistics,sys; print('median ratio', round(statistics.median(map(float, sys.argv[1:])), 3))" "${r[@]}"
