"""Paired sign-flip tests and score intervals whose size and coverage hold at every n.

One implementation, on arrays, used by `helmbench report`, the site (both through `pairwise` and
`summary`) and the simulation harness (`benchmarks/significance.py`, which calls these functions on
thousands of simulated data sets at once): the numbers the harness measures are the numbers a reader
sees.

What is inferred about (the frame). The benchmark's cases are fixed: they *are* the benchmark. What
varies from one run to the next is the models' answers (and the judge's verdicts). A score interval
says where the model's expected score on these cases lies; a group boundary says that, on these
cases, the difference between two models is larger than their answer-to-answer variation produces.
Neither says how a model would do on scenarios that are not in the benchmark.

The run score is a weighted mean of per-case scores. With `max_i` the |base| summed over a case's
samples with a verdict, `M_b` the sum of `max_i` over behaviour b and `w_b` its weight (over the
behaviours with something at stake, total W):

    run score = Σ_i c_i q_i,   c_i = (w_b / W) · (max_i / M_b),   Σ_i c_i = 1,
    q_i = 1 − actual cost_i / max_i   (in [0, 1]; a case's samples are averaged into it)

so every formula here works on (c, q) per case.

Test of a paired difference: a sign-flip (randomisation) test with the *case* as the unit — all
samples of a case flip together, and the cases of a scenario flip independently of each other.
Under "the two models' answers to each case come from the same distribution", swapping the two
models' results on any set of cases leaves the data's distribution unchanged, so the test is exact
whatever the correlation between the cases of a scenario that both models share (a hard scenario is
hard for both). Flipping whole scenarios instead would also be exact, but its smallest attainable
p-value is 2/2^S: with five scenarios or fewer it can never reach 0.05, and most filtered views
have one or two. The harness measures both designs, with a shared scenario random effect and with a
per-model one (see the methodology page). The statistic is the difference of the two *composites*
(the score after safety floors, the number ranks are decided on), recomputed for each flip.
- exact: every one of the 2^m sign patterns of the m cases whose results differ, when m ≤ 16;
- Monte Carlo otherwise: `resamples` seeded random patterns, p = (1 + #{|T*| ≥ |T|}) / (resamples + 1),
  which is itself a valid p-value (never 0);
- when m is so small that even the most extreme pattern cannot give p ≤ α (2^(1−m) > α: five or
  fewer differing cases at α = 0.05), no p-value: "too few cases to compare".

Intervals (95 %), chosen by simulation over 3–600 cases (the percentile bootstrap over cases, used
before, covered the true score 52–62 % of the time with 3 cases and 73–85 % with 10):
- a model's score: the Wilson interval of the weighted mean with Kish's effective number of cases
  n_eff = 1 / Σ c_i² (as survey statistics does for weighted proportions), mapped back through the part
  of the score that difficulty can no longer change. It stays inside [0, 1] and is never of zero
  width, even when every case passed;
- a paired difference: a weighted paired t interval on the per-case differences, with Agresti–Min
  style pseudo-pairs (one +1, one −1 and two 0 differences, each of weight 0.5 / n_eff) so that it is
  never of zero width when every case differed the same way, and t quantiles on n_eff − 1 degrees
  of freedom. Not corrected for multiplicity (the group decision is: Holm).
With fewer than `MIN_INTERVAL_CASES` cases no interval is shown: the harness starts there.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

ALPHA = 0.05
LEVEL = 0.95
EXACT_MAX = 16  # enumerate all 2^m sign patterns up to this many differing cases (65,536 patterns)
MIN_INTERVAL_CASES = 3  # below this, no interval (the simulation's smallest size)
PSEUDO = 0.5  # Agresti–Min pseudo-pairs, in units of one effective case
_CELLS = 4_000_000  # bounds memory: patterns × cases per matrix
_TOL = 1e-9  # relative: |T*| ≥ |T| up to floating-point noise counts as "as extreme"


def min_differing(alpha: float = ALPHA) -> int:
    """The fewest differing cases for which a two-sided sign-flip p can reach `alpha` (6 at 0.05)."""
    return max(1, math.ceil(1 - math.log2(alpha) - 1e-12))


def too_few_words(n_differ: int | None, alpha: float = ALPHA) -> str:
    """What a reader sees instead of a p-value when no outcome of the data could be significant
    (`n_differ` None: the two models have no case in common)."""
    which = ("no case in common" if n_differ is None else "no case differs" if n_differ == 0
             else f"{n_differ} case{'s' if n_differ != 1 else ''} differ")
    return f"too few cases to compare ({which}; at least {min_differing(alpha)} must)"


def _patterns(m: int) -> np.ndarray:
    """All 2^m flip patterns (1 = swap the two models' results on that case), one per row."""
    return ((np.arange(2 ** m)[:, None] >> np.arange(m)[None, :]) & 1).astype(float)


def flip_pvalues(x: np.ndarray, *, resamples: int = 1000, seed: int = 0, alpha: float = ALPHA,
                 statistic: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided sign-flip p-values of R data sets at once, and each one's number of differing cases.

    `x` is (R, n): per case, its contribution to the difference A − B (c_i · (q_A,i − q_B,i)), so the
    observed statistic is the row sum. `statistic(flips, keep)`, for one data set (R = 1) whose
    composite is not linear in the cases (safety floors), maps a (K, m) matrix of flips of the kept
    cases (`keep`, indices into n) to the K flipped statistics; by default the statistic is the
    linear Σ ± x_i. p is NaN where the data are too few (see `min_differing`).
    """
    x = np.atleast_2d(np.asarray(x, dtype=float))
    if statistic is not None and x.shape[0] != 1:
        raise ValueError("a non-linear statistic is for one data set at a time")
    r, _ = x.shape
    scale = np.abs(x).sum(axis=1)
    nonzero = np.abs(x) > _TOL * np.maximum(scale, 1e-300)[:, None]
    n_differ = nonzero.sum(axis=1)
    p = np.full(r, np.nan)
    enough = n_differ >= min_differing(alpha)
    rng = np.random.default_rng(seed)
    for m in np.unique(n_differ[enough]):
        rows = np.flatnonzero(enough & (n_differ == m))
        if m <= EXACT_MAX:
            flips = _patterns(int(m))
            step = max(1, _CELLS // len(flips))  # bounds memory: patterns × data sets per matrix
            for start in range(0, rows.size, step):
                chunk = rows[start:start + step]
                p[chunk] = _share_as_extreme(x, chunk, nonzero, flips, statistic, exact=True)
    mc = np.flatnonzero(enough & (n_differ > EXACT_MAX))
    if mc.size:
        # One set of random patterns for every Monte-Carlo row of this call: each row's p is valid on
        # its own (the patterns do not depend on the data).
        n = x.shape[1]
        flips = (rng.random((resamples, n)) < 0.5).astype(float)
        step = max(1, _CELLS // max(1, resamples))
        for start in range(0, mc.size, step):
            rows = mc[start:start + step]
            p[rows] = _share_as_extreme(x, rows, None, flips, statistic, exact=False)
    return p, n_differ


def _share_as_extreme(x, rows, nonzero, flips, statistic, *, exact: bool) -> np.ndarray:
    """Share of flip patterns whose |statistic| reaches the observed one (+1 correction when sampled)."""
    if exact:
        keep = [np.flatnonzero(nonzero[i]) for i in rows]
        xs = np.stack([x[i, k] for i, k in zip(rows, keep)])  # (R_m, m)
    else:
        keep = [np.arange(x.shape[1])] * len(rows)
        xs = x[rows]
    observed = xs.sum(axis=1)
    if statistic is not None:
        flipped = statistic(flips, keep[0])[:, None]
        observed = statistic(np.zeros((1, flips.shape[1])), keep[0])
    else:
        flipped = np.empty((flips.shape[0], len(rows)))
        block = max(1, _CELLS // max(1, flips.shape[1]))
        for s in range(0, flips.shape[0], block):
            flipped[s:s + block] = (1.0 - 2.0 * flips[s:s + block]) @ xs.T
    tol = _TOL * np.maximum(np.abs(xs).sum(axis=1), 1e-300)
    hits = (np.abs(flipped) >= np.abs(observed) - tol).sum(axis=0)
    if exact:
        return hits / flips.shape[0]
    return (1.0 + hits) / (flips.shape[0] + 1.0)


def _z(level: float) -> float:
    from statistics import NormalDist

    return NormalDist().inv_cdf(0.5 + level / 2.0)


def score_intervals(q: np.ndarray, c: np.ndarray, floor: np.ndarray | None = None, *,
                    level: float = LEVEL) -> np.ndarray:
    """(R, 2) intervals of Σ c_i q_i for R data sets sharing the weights `c` (NaN: too few cases).

    `floor` (per case, default 0) is the lowest q_i can be: 1 − scale_i for a case whose difficulty
    forgives part of a miss. The Wilson interval is taken for the share of what is still at stake,
    (S − Σ c·floor) / Σ c·(1 − floor), with n_eff = (Σ g)² / Σ g², g = c·(1 − floor).
    """
    q = np.atleast_2d(np.asarray(q, dtype=float))
    c = np.asarray(c, dtype=float)
    lo = np.zeros_like(c) if floor is None else np.asarray(floor, dtype=float)
    g = c * (1.0 - lo)
    total = g.sum()
    out = np.full((q.shape[0], 2), np.nan)
    if c.size < MIN_INTERVAL_CASES or total <= 0:
        if total <= 0 and c.size >= MIN_INTERVAL_CASES:  # nothing left to lose: the score is fixed
            s = (q * c).sum(axis=1)
            out[:] = np.stack([s, s], axis=1)
        return out
    n_eff = total * total / (g * g).sum()
    base = float((c * lo).sum())
    share = np.clip(((q * c).sum(axis=1) - base) / total, 0.0, 1.0)
    z = _z(level)
    z2 = z * z
    den = 1.0 + z2 / n_eff
    centre = (share + z2 / (2 * n_eff)) / den
    half = z / den * np.sqrt(share * (1.0 - share) / n_eff + z2 / (4 * n_eff * n_eff))
    low = np.where(share <= 0.0, 0.0, np.clip(centre - half, 0.0, 1.0))
    high = np.where(share >= 1.0, 1.0, np.clip(centre + half, 0.0, 1.0))
    out[:, 0] = np.clip(base + total * low, 0.0, 1.0)
    out[:, 1] = np.clip(base + total * high, 0.0, 1.0)
    return out


def difference_intervals(d: np.ndarray, c: np.ndarray, *, level: float = LEVEL) -> np.ndarray:
    """(R, 2) intervals of Σ c_i d_i (paired per-case differences in [−1, 1]; NaN: too few cases)."""
    from scipy.stats import t as student_t

    d = np.atleast_2d(np.asarray(d, dtype=float))
    c = np.asarray(c, dtype=float)
    out = np.full((d.shape[0], 2), np.nan)
    if c.size < MIN_INTERVAL_CASES or c.sum() <= 0:
        return out
    c = c / c.sum()
    omega = PSEUDO * float((c * c).sum())  # PSEUDO effective cases' worth of weight
    cc = np.concatenate([c, np.full(4, omega)])
    cc /= cc.sum()
    dd = np.concatenate([d, np.tile([1.0, -1.0, 0.0, 0.0], (d.shape[0], 1))], axis=1)
    centre = (cc * dd).sum(axis=1)
    n_eff = 1.0 / float((cc * cc).sum())
    var = (cc * cc * (dd - centre[:, None]) ** 2).sum(axis=1) * n_eff / max(n_eff - 1.0, 1e-9)
    half = float(student_t.ppf(0.5 + level / 2.0, max(n_eff - 1.0, 1.0))) * np.sqrt(var)
    estimate = (c * d).sum(axis=1)
    out[:, 0] = np.clip(np.minimum(centre - half, estimate), -1.0, 1.0)
    out[:, 1] = np.clip(np.maximum(centre + half, estimate), -1.0, 1.0)
    return out


@dataclass(frozen=True, slots=True)
class CaseTable:
    """Per case of one or two models (same cases, same order): what the formulas above need.

    `q_b` is None for one model. Behaviour-level arrays let a composite with floors be recomputed.
    """

    cases: tuple[str, ...]
    scenario: tuple[str, ...]
    behaviour: np.ndarray  # index into `behaviours` per case
    behaviours: tuple[str, ...]
    pillars: tuple[str, ...]  # pillar of each behaviour
    weights: np.ndarray  # per behaviour
    c: np.ndarray  # per case: weight in the run score (Σ = 1)
    floor: np.ndarray  # per case: the lowest q can be (1 − scale)
    q_a: np.ndarray
    q_b: np.ndarray | None = None

    @property
    def n(self) -> int:
        return len(self.cases)


def case_table(rows_a: Sequence, rows_b: Sequence | None = None) -> CaseTable:
    """The cases of one model's rows, or of the (case, sample) rows both models have a verdict on.

    Cases with nothing at stake (base 0) carry no weight and are left out; so are behaviours whose
    cases all have base 0.
    """
    from .cost import result_cost

    def by_key(rows):
        return {(r.case_id, r.sample): r for r in rows if r.has_verdict}

    ka = by_key(rows_a)
    kb = by_key(rows_b) if rows_b is not None else None
    keys = sorted(ka.keys() & kb.keys()) if kb is not None else sorted(ka)
    per_case: dict[str, list] = {}
    meta: dict[str, tuple[str, float]] = {}
    for key in keys:
        ra = ka[key]
        cost_a = result_cost(ra)
        if cost_a is None:
            continue
        cost_b = result_cost(kb[key]) if kb is not None else (cost_a[0], 0.0)
        if cost_b is None or cost_b[0] != cost_a[0]:
            raise ValueError(f"case {ra.case_id!r} has different severities in the two models' results "
                             "(compare runs of the same manifest)")
        meta[ra.behaviour] = (ra.pillar, ra.weight)
        entry = per_case.setdefault(ra.case_id, [ra.scenario, ra.behaviour, 0.0, 0.0, 0.0, 1.0 - ra.difficulty / 10.0])
        entry[2] += cost_a[0]
        entry[3] += cost_a[1]
        entry[4] += cost_b[1]
    behaviours = tuple(sorted(meta))
    index = {b: i for i, b in enumerate(behaviours)}
    cases = tuple(sorted(per_case))
    beh = np.array([index[per_case[k][1]] for k in cases], dtype=int)
    maxima = np.array([per_case[k][2] for k in cases])
    weights = np.array([meta[b][1] for b in behaviours])
    m_b = np.bincount(beh, maxima, minlength=len(behaviours)) if cases else np.zeros(len(behaviours))
    total_w = float(weights[m_b > 0].sum()) if len(behaviours) else 0.0
    c = (weights[beh] / total_w) * (maxima / m_b[beh]) if cases and total_w > 0 else np.zeros(len(cases))
    with np.errstate(invalid="ignore", divide="ignore"):
        q_a = 1.0 - np.array([per_case[k][3] for k in cases]) / maxima
        q_b = 1.0 - np.array([per_case[k][4] for k in cases]) / maxima if kb is not None else None
    return CaseTable(cases, tuple(per_case[k][0] for k in cases), beh, behaviours,
                     tuple(meta[b][0] for b in behaviours), weights, c,
                     1.0 - np.array([per_case[k][5] for k in cases]), q_a, q_b)


def _composite(t: CaseTable, floors: Sequence) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """The flipped composite difference for a table with safety floors (see `flip_pvalues`)."""
    nb = len(t.behaviours)
    onehot = np.zeros((t.n, nb))
    onehot[np.arange(t.n), t.behaviour] = 1.0
    c_b = np.bincount(t.behaviour, t.c, minlength=nb)  # behaviour's share of the run score (w_b / W)
    defined = c_b > 0
    loss_a = (onehot * (t.c * (1 - t.q_a))[:, None]).sum(axis=0)  # Σ c_i (1 − q_i) per behaviour
    loss_b = (onehot * (t.c * (1 - t.q_b))[:, None]).sum(axis=0)
    delta = onehot * (t.c * (t.q_a - t.q_b))[:, None]  # what swapping case i moves from A to B

    def composite(loss):  # loss: (K, nb)
        scores = np.where(defined, 1.0 - np.divide(loss, c_b, out=np.zeros_like(loss), where=defined), 0.0)
        run = (scores * c_b).sum(axis=1)
        value = run.copy()
        for f in floors:
            members = np.array([b == f.part or p == f.part for b, p in zip(t.behaviours, t.pillars)]) & defined
            if not members.any():
                continue
            w = np.where(members, t.weights, 0.0)
            part = (scores * w).sum(axis=1) / w.sum()
            value = np.where(part < f.minimum, np.minimum(value, f.cap), value)
        return value

    def statistic(flips, keep):
        moved = flips @ delta[keep]  # (K, nb)
        return composite(loss_a + moved) - composite(loss_b - moved)

    return statistic


@dataclass(frozen=True, slots=True)
class PairedInference:
    """Everything said about A − B: the test, its words when the data are too few, the interval."""

    n_cases: int  # cases both models have a verdict on and something at stake
    n_differ: int  # of which the two models' results differ
    difference: float | None  # composite of A − composite of B on those cases
    interval: tuple[float, float] | None  # 95 % interval of the weighted-score difference
    p_value: float | None  # two-sided sign-flip p; None when too few or untestable
    exact: bool  # every sign pattern enumerated (else Monte Carlo)
    too_few: str | None  # the words shown instead of a p-value


def paired_inference(rows_a: Sequence, rows_b: Sequence, *, floors: Sequence = (), resamples: int = 1000,
                     seed: int = 0, alpha: float = ALPHA) -> PairedInference:
    """The one paired comparison of two models' result rows (report, site and, on arrays, the harness).

    `floors` (score.floors.Floor): the statistic is the difference of the composites after them, the
    number the leaderboard ranks by; without floors it is the weighted-score difference.
    """
    t = case_table(rows_a, rows_b)
    if not t.n or t.c.sum() <= 0:
        return PairedInference(t.n, 0, None, None, None, False, too_few_words(0 if t.n else None, alpha))
    x = t.c * (t.q_a - t.q_b)
    statistic = _composite(t, floors) if floors else None
    p, n_differ = flip_pvalues(x[None, :], resamples=resamples, seed=seed, alpha=alpha, statistic=statistic)
    difference = float(statistic(np.zeros((1, t.n)), np.arange(t.n))[0]) if statistic else float(x.sum())
    interval = difference_intervals((t.q_a - t.q_b)[None, :], t.c)[0]
    if abs(difference - float(x.sum())) > 1e-12:  # a floor bit: the interval (of the weighted score) says nothing
        interval = np.array([np.nan, np.nan])
    m = int(n_differ[0])
    return PairedInference(
        n_cases=t.n, n_differ=m, difference=difference,
        interval=None if np.isnan(interval).any() else (float(interval[0]), float(interval[1])),
        p_value=None if np.isnan(p[0]) else float(p[0]), exact=m <= EXACT_MAX,
        too_few=too_few_words(m, alpha) if np.isnan(p[0]) else None,
    )


def score_interval(rows: Sequence, *, level: float = LEVEL) -> tuple[float, float] | None:
    """The 95 % interval of one model's weighted run score (None: no score, or too few cases)."""
    t = case_table(rows)
    if not t.n or t.c.sum() <= 0:
        return None
    low, high = score_intervals(t.q_a[None, :], t.c, t.floor, level=level)[0]
    return None if math.isnan(low) else (float(low), float(high))
