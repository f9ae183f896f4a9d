#!/bin/bash
# The scale target t(n = 10⁶) / t(n = 10⁴) of one fitc NLML + gradient (D = 9, m = 200),
# measured in one run: per round and per binary, `sgpw bench` on big_10000_9.parquet
# (median of 41) then on big_1000000_9.parquet (median of 3), and their ratio. Several
# binaries alternate round by round, so a change in the machine's load hits all alike.
# Make the files first: sgpw gen big --n 10000 --d 9 --out DIR (and --n 1000000).
# Usage: benches/scale_ratio.sh [ROUNDS] [BINARY...]   (env: DATA=dir, THREADS=2)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ROUNDS=${1:-3}; shift || true
BINS=("$@"); [ ${#BINS[@]} -gt 0 ] || BINS=("$here/../target/release/sgpw")
DATA=${DATA:-/tmp/big}; THREADS=${THREADS:-2}
med() { "$1" bench --method fitc --m 200 --train "$DATA/$2" --reps "$3" --threads "$THREADS" --json |
  python3 -c "import json,sys;print(json.load(sys.stdin)['median_eval_seconds']*1000)"; }
for _ in $(seq "$ROUNDS"); do
  for b in "${BINS[@]}"; do
    small=$(med "$b" big_10000_9.parquet 41)
    large=$(med "$b" big_1000000_9.parquet 3)
    python3 -c "print(f'$b threads=$THREADS  n=1e4 {$small:.2f} ms  n=1e6 {$large:.1f} ms  ratio {$large/$small:.1f}')"
  done
done
