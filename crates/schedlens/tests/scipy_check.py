"""Recomputes a `schedlens runs` summary from its results.csv with numpy and scipy, and
fails unless summary.json agrees: per setting n, median, quartiles, min, max (numpy's
linear quantiles); each setting against the first: the difference of medians, the
Mann-Whitney U statistic and p-value (scipy.stats.mannwhitneyu, its defaults), and the
bootstrap interval (scipy.stats.bootstrap, percentile method: another generator, so only
close); Spearman's rho and p of running time with each metric (scipy.stats.spearmanr).

Usage: python3 scipy_check.py RESULTS_DIR
"""

import csv
import json
import math
import sys

import numpy as np
from scipy import stats

directory = sys.argv[1]
with open(f"{directory}/results.csv", newline="") as f:
    rows = list(csv.DictReader(f))
with open(f"{directory}/summary.json") as f:
    summary = json.load(f)

ok = [r for r in rows if r["ok"] == "1"]
labels = []
for r in rows:
    if r["setting"] not in labels:
        labels.append(r["setting"])
times = {label: np.array([float(r["wall_s"]) for r in ok if r["setting"] == label]) for label in labels}
checked = 0


def same(ours, theirs, what, rel=1e-9, abs_=1e-12):
    global checked
    checked += 1
    if ours is None or not math.isclose(ours, theirs, rel_tol=rel, abs_tol=abs_):
        raise SystemExit(f"{what}: schedlens {ours}, scipy {theirs}")


for label, row in zip(labels, summary["settings"]):
    t = times[label]
    assert row["setting"] == label and row["n"] == len(t), (row, len(t))
    q1, median, q3 = np.percentile(t, [25, 50, 75])
    same(row["median_s"], median, f"{label} median")
    same(row["q1_s"], q1, f"{label} q1")
    same(row["q3_s"], q3, f"{label} q3")
    same(row["iqr_s"], stats.iqr(t), f"{label} IQR")
    same(row["min_s"], t.min(), f"{label} min")
    same(row["max_s"], t.max(), f"{label} max")

base = times[labels[0]]
for versus in summary["versus_first"]:
    t = times[versus["setting"]]
    same(versus["median_difference_s"], np.median(t) - np.median(base), f"{versus['setting']} median difference")
    test = stats.mannwhitneyu(base, t)
    same(versus["mann_whitney_u"], test.statistic, f"{versus['setting']} U")
    same(versus["p"], test.pvalue, f"{versus['setting']} Mann-Whitney p", rel=1e-7)
    boot = stats.bootstrap(
        (base, t),
        lambda a, b, axis: np.median(b, axis=axis) - np.median(a, axis=axis),
        method="percentile",
        n_resamples=10000,
        random_state=np.random.default_rng(1),
    )
    low, high = versus["ci95_s"]
    spread = t.max() - t.min() + base.max() - base.min()
    # Another generator: the ends agree to a small part of the data's spread.
    same(low, boot.confidence_interval.low, f"{versus['setting']} CI low", rel=0, abs_=0.1 * spread)
    same(high, boot.confidence_interval.high, f"{versus['setting']} CI high", rel=0, abs_=0.1 * spread)

for correlation in summary["correlations"]:
    key = correlation["metric"]
    x = [float(r["wall_s"]) for r in ok]
    y = [float(r[key]) for r in ok]
    if len(set(y)) < 2:
        assert correlation["spearman"] is None, correlation
        continue
    rho, p = stats.spearmanr(x, y)
    same(correlation["spearman"], rho, f"{key} Spearman rho")
    same(correlation["p"], p, f"{key} Spearman p", rel=1e-7)

print(f"scipy agrees with schedlens on {checked} numbers ({len(ok)} runs, {len(labels)} settings)")
