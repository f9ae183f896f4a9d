#!/bin/bash
# sgpw against GPflow, measured side by side: for each (method, m), ROUNDS alternating
# pairs of `sgpw bench` and benches/gpflow_eval.py (same n, d, m, threads; median of
# REPS evaluations each), printing each pair's ratio sgpw/GPflow and their median.
# Usage: benches/side_by_side.sh [ROUNDS]   (env: SGPW, PY, N, D, THREADS, REPS, CASES)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
SGPW=${SGPW:-$here/../target/release/sgpw}
PY=${PY:-/tmp/gpflow/bin/python}
N=${N:-10000}; D=${D:-8}; THREADS=${THREADS:-2}; REPS=${REPS:-11}
CASES=${CASES:-"fitc:50 fitc:200 vfe:50 vfe:200"}
ROUNDS=${1:-5}
med() { python3 -c "import json,sys;print(json.load(sys.stdin)['median_eval_seconds'])"; }
echo "method m | sgpw ms | GPflow ms | ratio sgpw/GPflow per round | median ratio (n=$N d=$D threads=$THREADS)"
for case in $CASES; do
  method=${case%%:*}; m=${case##*:}
  s=(); g=(); r=()
  for _ in $(seq "$ROUNDS"); do
    a=$("$SGPW" bench --method "$method" --m "$m" --n "$N" --d "$D" --threads "$THREADS" --reps "$REPS" --json | med)
    b=$("$PY" "$here/gpflow_eval.py" --method "$method" --m "$m" --n "$N" --d "$D" --threads "$THREADS" --reps "$REPS" | med)
    s+=("$a"); g+=("$b"); r+=("$(python3 -c "print(round($a/$b,3))")")
  done
  python3 - "$method" "$m" "${s[*]}" "${g[*]}" "${r[*]}" <<'PY'
import statistics, sys
method, m, s, g, r = sys.argv[1], sys.argv[2], *[list(map(float, a.split())) for a in sys.argv[3:]]
ms = lambda v: f"{1000*min(v):.1f}–{1000*max(v):.1f}"
print(f"{method} {m} | {ms(s)} | {ms(g)} | {' '.join(map(str, r))} | {statistics.median(r):.2f}")
PY
done
