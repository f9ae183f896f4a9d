#!/usr/bin/env python3
"""Tables of a greedy session (greedy-paper.toml, greedy-adapt.toml): test NMSE, MNLP
and selection time per data set, d_max (m) and label, averaged over seeds.

The time is the model's [greedy] select_seconds: the basis selection alone (all rounds
with --adapt), without the subset fit of --hyper-from-subset, the hyperparameter fits of
adaptation, the final posterior and the scoring (those are in the run's train_seconds,
shown for --adapt runs as "total"). Ratios are to INFO's selection time of the same
data set and d_max, measured in the same session run.

Usage: python3 sessions/greedy_times.py SESSION.toml
"""
import sys
import tomllib
from collections import defaultdict


def main(path):
    with open(path, "rb") as f:
        session = tomllib.load(f)
    cells = defaultdict(list)
    labels, sizes = defaultdict(list), defaultdict(set)
    for r in session.get("results", []):
        if r.get("status") != "done" or r.get("method") != "greedy":
            continue
        ds, label, m = r["dataset"], r["label"], r["m"]
        greedy = r.get("model", {}).get("greedy", {})
        cells[(ds, label, m)].append(
            (r["nmse"], r["mnlp"], greedy.get("select_seconds", float("nan")),
             r.get("train_seconds", float("nan")), greedy.get("adapt", 0))
        )
        if label not in labels[ds]:
            labels[ds].append(label)
        sizes[ds].add(m)
    mean = lambda v: sum(v) / len(v)
    for ds in labels:
        seeds = max(len(v) for (d, _, _), v in cells.items() if d == ds)
        print(f"\n{ds} (mean over {seeds} seed{'s' if seeds > 1 else ''})\n")
        for what, k, fmt in [("test NMSE", 0, "{:.4f}"), ("test MNLP", 1, "{:.3f}"),
                             ("selection seconds", 2, "{:.2f}")]:
            print(f"| {what}: d_max | " + " | ".join(labels[ds]) + " |")
            print("|---" * (len(labels[ds]) + 1) + "|")
            for m in sorted(sizes[ds]):
                row = []
                for label in labels[ds]:
                    v = cells.get((ds, label, m))
                    row.append(fmt.format(mean([x[k] for x in v])) if v else "")
                print(f"| {m} | " + " | ".join(row) + " |")
            print()
        if any(l == "INFO" for l in labels[ds]):
            print(f"| selection time / INFO's: d_max | " + " | ".join(labels[ds]) + " |")
            print("|---" * (len(labels[ds]) + 1) + "|")
            for m in sorted(sizes[ds]):
                info = cells.get((ds, "INFO", m))
                row = []
                for label in labels[ds]:
                    v = cells.get((ds, label, m))
                    row.append(f"{mean([x[2] for x in v]) / mean([x[2] for x in info]):.2f}"
                               if v and info else "")
                print(f"| {m} | " + " | ".join(row) + " |")
            print()
        adapted = [(l, m) for (d, l, m), v in cells.items() if d == ds and v[0][4] > 0]
        for label, m in adapted:
            v = cells[(ds, label, m)]
            print(f"{label} d_max = {m}: total training time {mean([x[3] for x in v]):.1f} s "
                  f"(selection {mean([x[2] for x in v]):.1f} s)")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "sessions/greedy-paper.toml")
