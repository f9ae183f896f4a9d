#!/bin/bash
# sgpw's svgp against GPflow's SVGP, time per epoch measured side by side: ROUNDS
# alternating pairs of `sgpw fit --method svgp` and benches/gpflow_svgp_train.py from
# the same start (kin40k, m = M, B = BATCH, EPOCHS epochs, natural-gradient step 0.1 on
# q(u) and Adam 0.01 on the rest; 2 threads each), printing each pair's seconds per
# epoch, their ratio sgpw/GPflow and its median. sgpw's time is its whole fit (the
# full-data ELBO at the start and the end included; --elbo-every is set past the end),
# GPflow's that of its steps after one untimed compiled step. Beside the wall seconds,
# each side's CPU seconds per epoch (all its threads: sgpw's whole process as
# /usr/bin/time counts it, GPflow's timed steps by time.process_time) and their ratio:
# on a machine shared with other work, wall time measures the scheduler as much as
# the code, CPU time the work done.
# LIKELIHOOD=bernoulli fits a two-class set instead (TRAIN and TEST: CSV files whose
# last column is the label, e.g. the split benches/gpflow_classification.py writes;
# inputs standardised, sgpw's default; GPflow's Bernoulli() with 20 Gauss–Hermite
# points, as sgpw's default) and prints the test error rate and NLP. EPOCHS must stay
# within svgp's first stage (minibatches of BATCH rows throughout: the model file's
# [svgp] steps = EPOCHS·⌈n/BATCH⌉), so that both sides do the same work an epoch.
# Usage: benches/svgp_side_by_side.sh [ROUNDS]
#   (env: SGPW, PY, D, TRAIN, TEST, M, BATCH, EPOCHS, LIKELIHOOD)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
SGPW=${SGPW:-$here/../target/release/sgpw}
PY=${PY:-/tmp/gpflow/bin/python}
D=${D:-$here/../datasets/kin40k}
TRAIN=${TRAIN:-$D/train.csv.gz}; TEST=${TEST:-$D/test.csv.gz}
M=${M:-200}; BATCH=${BATCH:-1024}; EPOCHS=${EPOCHS:-20}
LIKELIHOOD=${LIKELIHOOD:-gaussian}
ROUNDS=${1:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ "$LIKELIHOOD" = bernoulli ]; then
  common=(--train "$TRAIN" --method svgp --m "$M" --likelihood bernoulli --seed 1)
  score=(error_rate nlp)
else
  common=(--train "$TRAIN" --method svgp --m "$M" --raw --noise-floor 0 --seed 1)
  score=(nmse mnlp)
fi
"$SGPW" fit "${common[@]}" --iters 0 --save-model "$tmp/start.toml" > /dev/null 2>&1
echo "$LIKELIHOOD m=$M B=$BATCH epochs=$EPOCHS | sgpw s/epoch | GPflow s/epoch | ratio sgpw/GPflow | sgpw CPU s/epoch | GPflow CPU s/epoch | CPU ratio | sgpw ${score[*]} | GPflow ${score[*]} | load"
r=(); rc=()
for _ in $(seq "$ROUNDS"); do
  a=$(/usr/bin/time -f "%U %S" -o "$tmp/cpu" "$SGPW" fit "${common[@]}" --test "$TEST" \
      --batch "$BATCH" --epochs "$EPOCHS" --elbo-every 100000000 --json 2>/dev/null)
  b=$("$PY" "$here/gpflow_svgp_train.py" "$tmp/start.toml" --train "$TRAIN" \
      --test "$TEST" --batch "$BATCH" --epochs "$EPOCHS" 2>/dev/null | tail -1)
  line=$(python3 - "$a" "$b" "$EPOCHS" "${score[@]}" "$(cut -d' ' -f1 /proc/loadavg)" "$(cat "$tmp/cpu")" <<'PY'
import json, sys
a, b, e, s1, s2, load, cpu = json.loads(sys.argv[1]), json.loads(sys.argv[2]), int(sys.argv[3]), *sys.argv[4:]
mine = {"error_rate": "error_rate", "nlp": "mnlp", "nmse": "nmse", "mnlp": "mnlp"}
s = a["train_seconds"] / e
g = b["seconds_per_epoch"]
sc = sum(map(float, cpu.split())) / e
gc = b["cpu_seconds_per_epoch"]
print(f"round | {s:.4f} | {g:.4f} | {s / g:.3f} | {sc:.4f} | {gc:.4f} | {sc / gc:.3f}"
      f" | {a[mine[s1]]:.4f} {a[mine[s2]]:.4f} | {b[s1]:.4f} {b[s2]:.4f} | {load}")
PY
)
  echo "$line"
  r+=("$(echo "$line" | awk -F'|' '{print $4}')")
  rc+=("$(echo "$line" | awk -F'|' '{print $7}')")
done
python3 -c "import statistics,sys; print('median ratio', round(statistics.median(map(float, sys.argv[1:])), 3))" "${r[@]}"
python3 -c "import statistics,sys; print('median CPU ratio', round(statistics.median(map(float, sys.argv[1:])), 3))" "${rc[@]}"
