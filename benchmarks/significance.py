"""Do the leaderboard's claims hold at every size? The simulation behind the methodology page's table.

    .venv/bin/python benchmarks/significance.py             # the full table (a few minutes on one core)
    .venv/bin/python benchmarks/significance.py --quick     # a smoke test (seconds; the test suite runs it)
    .venv/bin/python benchmarks/significance.py --write     # full table, also saved as
                                                            # helmbench/score/simulation.json (the page's table)

Seeded and re-runnable: the same command prints the same table. Every test and interval is computed
by the functions `helmbench report` and the site use (`helmbench.score.inference.flip_pvalues`,
`score_intervals`, `difference_intervals`, `helmbench.score.pairwise.holm_decisions`), on arrays of
simulated data sets, and the weights of the cases come from `inference.case_table` on real
`ScoredResult` rows: nothing here re-implements them. Only the two rejected designs measured for
comparison (scenario flips, the percentile bootstrap over cases that the interval used before) are
written here, marked as such.

What is simulated, per size (n cases over S scenarios, with and without partial credit): a benchmark
tree whose cases have varied severities (1–10) and difficulties (0–9) over up to three behaviours of
different weights. For each repetition, every case gets an expected pass probability
expit(μ + u_scenario + e_case), μ ~ N(1, 0.75), u ~ N(0, 1) shared by the cases of a scenario (the
correlation within a scenario that a hard scenario brings, the same for every model), e ~ N(0, 0.7).
A model's verdict is a Bernoulli draw (with partial credit, a failure scores 0, 0.25 or 0.5). The
truth is the expected score on those cases.
- null: two models with the same probabilities; the rate at which "distinguishable" is claimed, with
  its one-sided 95 % Clopper–Pearson upper bound;
- ten models with the same probabilities, ranked by their observed score, Holm over the adjacent
  pairs: the family-wise rate (any adjacent pair claimed);
- stress: each model also has its own per-scenario effect v ~ N(0, 0.5), drawn anew each run (answers
  correlated within a scenario *per model*, which independent API calls do not produce but a provider
  change within a run could): claim rates for case flips and for whole-scenario flips;
- power: the first model shifted on the logit scale so that its true score is 5 or 10 points higher
  (solved per repetition); the rate of claiming it ahead;
- coverage of the 95 % intervals: each model's score (null runs) and the paired difference (null,
  +5 and +10 runs; the lowest of the three is shown).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
from scipy.special import expit

from helmbench.score import ScoredResult
from helmbench.score import inference
from helmbench.score import pairwise, simulation

OUT = simulation.PATH
SIZES = [(3, 1), (3, 3), (10, 1), (10, 3), (10, 9), (30, 1), (30, 3), (30, 9),
         (100, 1), (100, 3), (100, 9), (600, 1), (600, 3), (600, 9)]
QUICK_SIZES = [(3, 1), (10, 3), (30, 3)]
WEIGHTS = (12.0, 10.0, 15.0)
RESAMPLES = 1000  # the report's and the site's default Monte-Carlo resamples
BOOT = 200  # resamples of the rejected percentile bootstrap (for its coverage only)


def structure(n: int, s: int, rng: np.random.Generator):
    """A tree of n cases over s scenarios as real result rows; the library turns them into weights."""
    rows = []
    for i in range(n):
        scen = i % s
        b = scen % 3
        rows.append(ScoredResult(
            case_id=f"P{b + 1}-B1-S{scen + 1}-C1-U1-PT{i}", pillar=f"P{b + 1}", behaviour=f"P{b + 1}-B1",
            scenario=f"P{b + 1}-B1-S{scen + 1}", condition=f"P{b + 1}-B1-S{scen + 1}-C1",
            severity_user_context=0, severity_perturbation=int(rng.integers(1, 11)),
            difficulty=int(rng.integers(0, 10)), weight=WEIGHTS[b], verdict="PASS", score=1.0))
    table = inference.case_table(rows)
    order = {case: k for k, case in enumerate(table.cases)}
    scenario = np.array([int(table.scenario[order[r.case_id]].rsplit("S", 1)[1]) - 1 for r in rows])
    keep = np.array([order[r.case_id] for r in rows])
    return table.c[keep], table.floor[keep], scenario


def draw(p: np.ndarray, partial: bool, rng: np.random.Generator) -> np.ndarray:
    passed = rng.random(p.shape) < p
    if not partial:
        return passed.astype(float)
    return np.where(passed, 1.0, rng.choice([0.0, 0.25, 0.5], size=p.shape))


def expected(p: np.ndarray, partial: bool) -> np.ndarray:
    return p + 0.25 * (1.0 - p) if partial else p


def shift_for(delta: float, logit: np.ndarray, c, k, partial: bool) -> np.ndarray:
    """Per repetition, the logit shift that raises the true score by `delta` (bisection, vectorised)."""
    base = (c * (1 - k * (1 - expected(expit(logit), partial)))).sum(axis=1)
    lo, hi = np.zeros(len(logit)), np.full(len(logit), 20.0)
    for _ in range(50):
        mid = (lo + hi) / 2
        got = (c * (1 - k * (1 - expected(expit(logit + mid[:, None]), partial)))).sum(axis=1) - base
        lo, hi = np.where(got < delta, mid, lo), np.where(got < delta, hi, mid)
    return (lo + hi) / 2


def claims(x: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Whether the leaderboard would call the first model of each pair distinguishable (it is ranked
    first: its observed score is the higher), and each pair's number of differing cases."""
    p, n_differ = inference.flip_pvalues(x, resamples=RESAMPLES, seed=seed)
    _, out = pairwise.holm_decisions(p[:, None], x.sum(axis=1)[:, None])  # a family of one pair each
    return out[:, 0], n_differ


def rejected_bootstrap(q, c, rng) -> np.ndarray:
    """The percentile bootstrap over cases that the score interval used before (rejected; coverage only)."""
    r, n = q.shape
    out = np.empty((r, 2))
    for start in range(0, r, 50):
        idx = rng.integers(0, n, size=(BOOT, n))
        w = c[idx]
        s = np.einsum("bn,rbn->rb", w, q[start:start + 50][:, idx]) / w.sum(axis=1)
        out[start:start + 50] = np.quantile(s, [0.025, 0.975], axis=1).T
    return out


def covered(interval: np.ndarray, truth: np.ndarray) -> tuple[int, int]:
    shown = ~np.isnan(interval[:, 0])
    hit = (interval[shown, 0] <= truth[shown] + 1e-12) & (truth[shown] <= interval[shown, 1] + 1e-12)
    return int(hit.sum()), int(shown.sum())


def configuration(n: int, s: int, partial: bool, reps: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    c, floor, scen = structure(n, s, rng)
    scale = 1.0 - floor  # what a miss costs of each case's weight (difficulty forgives the rest)
    onehot = np.zeros((n, s))
    onehot[np.arange(n), scen] = 1.0

    def logits(r):
        return rng.normal(1.0, 0.75, (r, 1)) + rng.normal(0.0, 1.0, (r, s))[:, scen] + rng.normal(0.0, 0.7, (r, n))

    def q_of(p):
        return 1.0 - scale * (1.0 - draw(p, partial, rng))

    def truth(p):
        return (c * (1.0 - scale * (1.0 - expected(p, partial)))).sum(axis=1)

    def ordered(qa, qb):  # the leaderboard puts the higher observed score first
        ahead = (qa * c).sum(axis=1) >= (qb * c).sum(axis=1)
        return np.where(ahead[:, None], qa, qb), np.where(ahead[:, None], qb, qa), ahead

    out: dict = {"n": n, "scenarios": s, "partial": partial, "reps": reps}
    # Null: two exchangeable models.
    lg = logits(reps)
    p = expit(lg)
    qa, qb = q_of(p), q_of(p)
    hi, lo, _ = ordered(qa, qb)
    x = c * (hi - lo)
    null, n_differ = claims(x, seed + 1)
    out["null"] = [int(null.sum()), reps, simulation.upper_bound(int(null.sum()), reps)]
    out["too_few"] = [int((n_differ < inference.min_differing()).sum()), reps]
    out["null_scenario_flips"] = [int(claims(x @ onehot, seed + 2)[0].sum()), reps]
    t = truth(p)
    cov = np.add(covered(inference.score_intervals(qa, c, floor), t), covered(inference.score_intervals(qb, c, floor), t))
    out["score_coverage"] = [int(cov[0]), int(cov[1])]
    out["bootstrap_coverage"] = list(covered(rejected_bootstrap(qa, c, rng), t))
    diff_cov = [covered(inference.difference_intervals(qa - qb, c), np.zeros(reps))]
    # Ten exchangeable models, ranked by observed score; Holm over the adjacent pairs.
    ten = max(reps // 2, 1000) if reps >= 2000 else reps
    p10 = expit(logits(ten))
    qs = np.stack([q_of(p10) for _ in range(10)], axis=1)  # (R, 10, n)
    order = np.argsort(-(qs * c).sum(axis=2), axis=1, kind="stable")
    qs = np.take_along_axis(qs, order[:, :, None], axis=1)
    xs = (c * (qs[:, :-1] - qs[:, 1:])).reshape(-1, n)
    pv, _ = inference.flip_pvalues(xs, resamples=RESAMPLES, seed=seed + 3)
    pv = pv.reshape(ten, 9)
    d = xs.sum(axis=1).reshape(ten, 9)
    _, boundary = pairwise.holm_decisions(pv, d)
    any_pair = int(boundary.any(axis=1).sum())
    out["family"] = [any_pair, ten, simulation.upper_bound(any_pair, ten)]
    # Stress: a per-model scenario effect drawn anew for each run.
    lg = logits(reps)
    qa = q_of(expit(lg + rng.normal(0.0, 0.5, (reps, s))[:, scen]))
    qb = q_of(expit(lg + rng.normal(0.0, 0.5, (reps, s))[:, scen]))
    hi, lo, _ = ordered(qa, qb)
    x = c * (hi - lo)
    out["stress_case_flips"] = [int(claims(x, seed + 4)[0].sum()), reps]
    out["stress_scenario_flips"] = [int(claims(x @ onehot, seed + 5)[0].sum()), reps]
    # Power and the coverage of the difference away from 0.
    for delta in (0.05, 0.10):
        lg = logits(reps)
        shift = shift_for(delta, lg, c, scale, partial)
        pa, pb = expit(lg + shift[:, None]), expit(lg)
        qa, qb = q_of(pa), q_of(pb)
        hi, lo, a_ahead = ordered(qa, qb)
        right = claims(c * (hi - lo), seed + 6 + int(delta * 100))[0] & a_ahead
        out[f"power_{int(delta * 100)}"] = [int(right.sum()), reps]
        if delta == 0.10:
            by_scenario = claims(c * (hi - lo) @ onehot, seed + 7)[0] & a_ahead
            out["power_10_scenario_flips"] = [int(by_scenario.sum()), reps]
        diff_cov.append(covered(inference.difference_intervals(qa - qb, c), truth(pa) - truth(pb)))
    worst = min(diff_cov, key=lambda hc: hc[0] / hc[1] if hc[1] else 1.0)
    out["difference_coverage"] = list(worst)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="three small sizes, 200 repetitions: a smoke test")
    ap.add_argument("--reps", type=int, default=None, help="null repetitions per configuration (default 4,000)")
    ap.add_argument("--seed", type=int, default=24)
    ap.add_argument("--write", action="store_true", help=f"also save the table as {OUT.relative_to(OUT.parents[2])}")
    ap.add_argument("--json", action="store_true", help="print JSON instead of the Markdown table")
    args = ap.parse_args(argv)
    reps = args.reps or (200 if args.quick else 4000)
    sizes = QUICK_SIZES if args.quick else SIZES
    started = time.perf_counter()
    results = []
    for i, (n, s) in enumerate(sizes):
        for partial in (False, True):
            results.append(configuration(n, s, partial, reps, args.seed + 100 * i + (50 if partial else 0)))
            print(f"  n={n} S={s} partial={partial}: {time.perf_counter() - started:.0f} s", file=sys.stderr)
    doc = {"command": "python benchmarks/significance.py" + (" --quick" if args.quick else "")
           + (f" --reps {args.reps}" if args.reps else "") + (f" --seed {args.seed}" if args.seed != 24 else ""),
           "resamples": RESAMPLES, "alpha": inference.ALPHA, "results": results}
    print(json.dumps(doc, indent=1) if args.json else simulation.markdown(doc))
    if args.write:
        OUT.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
