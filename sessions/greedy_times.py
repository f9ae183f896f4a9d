#!/usr/bin/env python3
"""Tables of greedy sessions (greedy-paper.toml, greedy-adapt/*.toml): test NMSE, MNLP
and selection time per data set, d_max (m) and label, averaged over seeds (± the
standard error over seeds where there are several), and the fitted σ0² and σ².

The time is the model's [greedy] select_seconds: the basis selection alone (all rounds
with --adapt), without the subset fit of --hyper-from-subset, the hyperparameter fits of
adaptation, the final posterior and the scoring (those are in the run's train_seconds,
shown as "total"). Ratios are to INFO's selection time of the same data set and d_max,
measured in the same session run. σ0² and σ² are in model units (standardized runs:
of the standardized targets).

Usage: python3 sessions/greedy_times.py [--seeds 1,2] SESSION.toml [SESSION.toml ...]
(--seeds: only those seeds, so that cells run on different numbers of seeds compare on
the same subsets and partitions)
"""
import math
import sys
import tomllib
from collections import defaultdict


def results(paths):
    for path in paths:
        with open(path, "rb") as f:
            yield from tomllib.load(f).get("results", [])


def main(paths, seeds=None):
    cells = defaultdict(list)
    labels, sizes = defaultdict(list), defaultdict(set)
    for r in results(paths):
        if r.get("status") != "done" or r.get("method") != "greedy":
            continue
        if seeds is not None and r.get("seed") not in seeds:
            continue
        ds, label, m = r["dataset"], r["label"], r["m"]
        model = r.get("model", {})
        greedy, hyper = model.get("greedy", {}), model.get("hyper", {})
        cells[(ds, label, m)].append(
            (r["nmse"], r["mnlp"], greedy.get("select_seconds", float("nan")),
             r.get("train_seconds", float("nan")), greedy.get("adapt", 0),
             hyper.get("signal_variance", float("nan")),
             hyper.get("noise_variance", float("nan")))
        )
        if label not in labels[ds]:
            labels[ds].append(label)
        sizes[ds].add(m)
    mean = lambda v: sum(v) / len(v)

    def spread(v, fmt):
        """mean ± standard error over seeds (the mean alone for one seed)"""
        if len(v) < 2:
            return fmt.format(mean(v))
        mu = mean(v)
        se = math.sqrt(sum((x - mu) ** 2 for x in v) / (len(v) - 1) / len(v))
        return f"{fmt.format(mu)} ± {fmt.format(se)}"

    for ds in labels:
        seeds = max(len(v) for (d, _, _), v in cells.items() if d == ds)
        print(f"\n{ds} (mean over up to {seeds} seed{'s' if seeds > 1 else ''})\n")
        print(f"| seeds: d_max | " + " | ".join(labels[ds]) + " |")
        print("|---" * (len(labels[ds]) + 1) + "|")
        for m in sorted(sizes[ds]):
            print(f"| {m} | " + " | ".join(str(len(cells.get((ds, l, m), []))) for l in labels[ds]) + " |")
        print()
        for what, k, fmt in [("test NMSE", 0, "{:.4f}"), ("test MNLP", 1, "{:.3f}"),
                             ("selection seconds", 2, "{:.2f}"), ("total seconds", 3, "{:.1f}"),
                             ("σ0²", 5, "{:.4g}"), ("σ²", 6, "{:.4g}")]:
            print(f"| {what}: d_max | " + " | ".join(labels[ds]) + " |")
            print("|---" * (len(labels[ds]) + 1) + "|")
            for m in sorted(sizes[ds]):
                row = []
                for label in labels[ds]:
                    v = cells.get((ds, label, m))
                    row.append(spread([x[k] for x in v], fmt) if v else "")
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


if __name__ == "__main__":
    args, seeds = sys.argv[1:], None
    if args[:1] == ["--seeds"] and len(args) > 1:
        seeds, args = {int(x) for x in args[1].split(",")}, args[2:]
    main(args or ["sessions/greedy-paper.toml"], seeds)
