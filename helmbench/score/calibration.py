"""How far a judge can be trusted, per criterion: its agreement with clinicians' blind reviews.

What is compared, per judged item (one criterion on one model output, see review_items):
- the clinicians' consensus: the majority of the current reviewers' PASS/FAIL (each reviewer's
  option decided under the criterion's current pass values); an even split has no consensus
  and the item is left out (counted as `n_split`);
- an abstention (an option of the criterion's `abstain_values`, the judge's or every reviewer's) is no verdict:
  such an item gives no pair, as it gives no number in the scores;
- the judge's PASS/FAIL; with several marking models, their majority, ties → FAIL
  (`helmbench.run.judge.majority`, the rule the run itself uses); for a checked criterion's item
  (`evaluation.checks`), the check's verdict in its place (`checked`: κ is against the check, so
  how often a check and clinicians disagree is measured like a judge's; a check is not counted
  among the judges).

Measures (per criterion, and overall over every item):
- n: items with both a consensus and a judge verdict;
- Cohen's κ between judge and consensus (statsmodels' `cohens_kappa`, with its asymptotic 95 %
  interval, absent when that variance is not positive: one side in a single class, or perfect
  agreement); None when undefined (every verdict in one class on both sides);
- sensitivity and specificity for the failing class, the safety-critical one: of the items the
  clinicians fail, the share the judge fails too; of the items they pass, the share it passes;
  Wilson 95 % intervals;
- Krippendorff's α (nominal, the `krippendorff` package) between clinicians, over items with
  two or more reviewers, on their PASS/FAIL verdicts;
- with several judges: Krippendorff's α between the judges, over every judged item.

Calibrated: κ ≥ `min_kappa` and n ≥ `min_n` (benchmark.yml `calibration:`; defaults 0.6 and 30).
Its date (the badge's) is that of the latest review that counts: a current review, not dated in
the future; a stale review, or one of an item no longer judged, never dates a badge.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Iterable, Sequence

from helmbench.score.review_items import CHECKER, JudgedItem, Reviews
from helmbench.score.detection import Rate
from helmbench.score.model import criterion_key, criterion_order

PASS, FAIL = "PASS", "FAIL"
DEFAULT_MIN_KAPPA = 0.6
DEFAULT_MIN_N = 30


@dataclass(frozen=True)
class Threshold:
    """When a criterion's judge counts as calibrated (benchmark.yml `calibration:`)."""

    min_kappa: float = DEFAULT_MIN_KAPPA
    min_n: int = DEFAULT_MIN_N

    @classmethod
    def from_mapping(cls, data: dict | None) -> "Threshold":
        data = data or {}
        return cls(float(data.get("min_kappa", DEFAULT_MIN_KAPPA)), int(data.get("min_n", DEFAULT_MIN_N)))


def rate_dict(rate: Rate) -> dict:
    ci = rate.interval
    return {"k": rate.k, "n": rate.n, "value": rate.value, "ci": list(ci) if ci else None}


#: A variance of κ at or below this is zero up to rounding (statsmodels gives ±1e-16 for tables
#: whose variance is exactly zero): no asymptotic interval exists there.
_ZERO_VARIANCE = 1e-12


@dataclass(frozen=True)
class Kappa:
    value: float
    ci: tuple[float, float] | None  # None: the asymptotic variance is not positive, no honest interval


def cohen_kappa(pairs: Iterable[tuple[str, str]]) -> Kappa | None:
    """Cohen's κ of (rater A, rater B) PASS/FAIL pairs; None when undefined (chance agreement is 1)."""
    from statsmodels.stats.inter_rater import cohens_kappa

    counts = Counter(pairs)
    table = [[counts[(a, b)] for b in (PASS, FAIL)] for a in (PASS, FAIL)]
    n = sum(map(sum, table))
    if n == 0:
        return None
    rows, cols = [sum(r) for r in table], [table[0][j] + table[1][j] for j in range(2)]
    if sum(r * c for r, c in zip(rows, cols)) == n * n:  # both raters used one and the same class only
        return None
    import numpy as np

    with np.errstate(invalid="ignore", divide="ignore"):  # the degenerate variances are handled below
        res = cohens_kappa(table, return_results=True)
    if not math.isfinite(res.kappa):
        return None
    # One side using a single class, or perfect agreement, gives a variance of zero, or its rounding
    # noise below zero (whose square root is NaN, which clamping would turn into [-1, 1]): the
    # interval would be a point or the whole range, neither of which is a 95 % interval. None instead.
    low, high, var = float(res.kappa_low), float(res.kappa_upp), float(res.var_kappa)
    if not (math.isfinite(var) and var > _ZERO_VARIANCE and math.isfinite(low) and math.isfinite(high)):
        return Kappa(float(res.kappa), None)
    return Kappa(float(res.kappa), (max(-1.0, low), min(1.0, high)))


def krippendorff_alpha(units: Sequence[Sequence[str]]) -> float | None:
    """Nominal Krippendorff's α over units (each the labels its raters gave); None when undefined.

    Undefined: fewer than two units with two or more labels, or a single label used throughout
    (no disagreement is possible, α is 0/0).
    """
    import krippendorff
    import numpy as np

    units = [list(u) for u in units if len(u) >= 2]
    labels = sorted({v for u in units for v in u})
    if len(units) < 2 or len(labels) < 2:
        return None
    code = {v: i for i, v in enumerate(labels)}
    width = max(len(u) for u in units)
    data = np.full((width, len(units)), np.nan)  # raters × units; a unit's labels fill its first rows
    for j, u in enumerate(units):
        for i, v in enumerate(u):
            data[i, j] = code[v]
    value = float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal",
                                     value_domain=list(range(len(labels)))))
    return value if math.isfinite(value) else None


def consensus(verdicts: Sequence[str]) -> str | None:
    """The clinicians' majority verdict; None for an even split (no consensus)."""
    c = Counter(verdicts)
    if c[PASS] == c[FAIL]:
        return None
    return PASS if c[PASS] > c[FAIL] else FAIL


@dataclass
class Calibration:
    """Agreement of one criterion (or, with `criterion=None`, of all of them)."""

    scenario: str | None
    criterion: str | None
    threshold: Threshold
    n_items: int = 0  # judged items
    n_reviewed: int = 0  # items with at least one current review
    n_split: int = 0  # reviewed items whose clinicians split evenly
    n_stale: int = 0  # reviews of an earlier wording of the criterion (kept, not counted)
    reviewers: int = 0
    kappa: Kappa | None = None
    sensitivity: Rate = field(default_factory=lambda: Rate(0, 0))  # judge FAIL | clinicians FAIL
    specificity: Rate = field(default_factory=lambda: Rate(0, 0))  # judge PASS | clinicians PASS
    alpha: float | None = None  # between clinicians
    n_alpha: int = 0  # items with two or more reviewers
    judges: int = 1
    judge_alpha: float | None = None  # between judges, when there are several
    last_review: str | None = None
    checked: bool = False  # a checked criterion: κ is against its check's verdicts, not a judge's

    @property
    def n(self) -> int:
        return self.sensitivity.n + self.specificity.n

    @property
    def calibrated(self) -> bool:
        return self.kappa is not None and self.kappa.value >= self.threshold.min_kappa and self.n >= self.threshold.min_n

    @property
    def date(self) -> str | None:
        return self.last_review[:10] if self.last_review else None

    @property
    def key(self) -> str:
        return criterion_key(self.scenario, self.criterion) if self.criterion else "overall"

    def badge(self) -> str:
        """One line for a table cell: `κ 0.72 (n 41, 2026-11-20)` or `uncalibrated (…why)`."""
        if self.calibrated:
            return f"κ {self.kappa.value:.2f} (n {self.n}, {self.date})"
        why = f"κ {self.kappa.value:.2f}" if self.kappa else "κ —"
        return f"uncalibrated ({why}, n {self.n}; needs κ ≥ {self.threshold.min_kappa:g}, n ≥ {self.threshold.min_n})"

    def to_dict(self) -> dict:
        d = {k: v for k, v in asdict(self).items() if k not in ("kappa", "sensitivity", "specificity", "threshold")}
        d.update(key=self.key, n=self.n, calibrated=self.calibrated, date=self.date,
                 threshold=asdict(self.threshold),
                 kappa=None if self.kappa is None else {"value": self.kappa.value,
                                                        "ci": list(self.kappa.ci) if self.kappa.ci else None},
                 sensitivity=rate_dict(self.sensitivity), specificity=rate_dict(self.specificity))
        return d


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _when(stamp: str) -> datetime:
    """A review's time, comparable whatever its offset (no offset: UTC, as imports take it); unreadable: never."""
    try:
        at = datetime.fromisoformat(stamp)
    except (TypeError, ValueError):
        return datetime.max.replace(tzinfo=timezone.utc)
    return at if at.tzinfo else at.replace(tzinfo=timezone.utc)


def judge_verdict(item: JudgedItem) -> str | None:
    verdicts = [v for _, v in item.judges.values() if v in (PASS, FAIL)]
    from helmbench.run.judge.judge import majority  # here: the site's cached data loads this module, not the judge

    return majority(verdicts) if verdicts else None


def _calibrate(scenario: str | None, criterion: str | None, items: list[JudgedItem], reviews: Reviews,
               stale: list[dict], threshold: Threshold) -> Calibration:
    cal = Calibration(scenario, criterion, threshold, n_items=len(items), n_stale=len(stale))
    pairs: list[tuple[str, str]] = []
    clinician_units: list[list[str]] = []
    judge_units: list[list[str]] = []
    reviewers: set[str] = set()
    dates: list[str] = []  # of the reviews that count: current ones, none dated in the future (stale ones never)
    latest = _now()
    judges: set[str] = set()
    for item in items:
        judges.update(j for j in item.judges if j != CHECKER)  # a check is no judge: not counted among them
        judge_units.append([v for _, v in item.judges.values() if v in (PASS, FAIL)])
        mine = reviews.current.get(item.hash, [])
        if not mine:
            continue
        cal.n_reviewed += 1
        reviewers.update(r["reviewer"] for r in mine)
        dates.extend(r["created_at"] for r in mine if _when(r["created_at"]) <= latest)
        verdicts = [item.verdict_of(r["judgment"]) for r in mine]
        if len(verdicts) >= 2:
            clinician_units.append(verdicts)
        if not any(v in (PASS, FAIL) for v in verdicts):
            continue  # every reviewer chose an abstain value: no verdict to agree on, outside κ as in the scores
        agreed, judged = consensus(verdicts), judge_verdict(item)
        if agreed is None:
            cal.n_split += 1
        elif judged is not None:
            pairs.append((judged, agreed))
    cal.reviewers = len(reviewers)
    cal.kappa = cohen_kappa(pairs)
    cal.sensitivity = Rate(sum(1 for j, c in pairs if c == FAIL and j == FAIL), sum(1 for _, c in pairs if c == FAIL))
    cal.specificity = Rate(sum(1 for j, c in pairs if c == PASS and j == PASS), sum(1 for _, c in pairs if c == PASS))
    cal.alpha, cal.n_alpha = krippendorff_alpha(clinician_units), len(clinician_units)
    cal.judges = max(1, len(judges))
    cal.checked = criterion is not None and bool(items) and all(i.checked for i in items)
    cal.judge_alpha = krippendorff_alpha(judge_units) if len(judges) > 1 else None
    cal.last_review = max(dates, key=_when) if dates else None
    return cal


@dataclass
class CalibrationReport:
    manifest_hash: str | None
    threshold: Threshold
    criteria: list[Calibration]
    overall: Calibration
    note: str | None = None  # report.shown_note: the manifest asked for had no runs, this is another's

    def of(self, scenario: str, criterion: str) -> Calibration | None:
        return next((c for c in self.criteria if c.scenario == scenario and c.criterion == criterion), None)

    def of_scenario(self, scenario: str) -> list[Calibration]:
        """The scenario's criteria (the site's scenario page badges them)."""
        return [c for c in self.criteria if c.scenario == scenario]

    def to_dict(self) -> dict:
        return {"manifest_hash": self.manifest_hash, "note": self.note, "threshold": asdict(self.threshold),
                "criteria": [c.to_dict() for c in self.criteria], "overall": self.overall.to_dict()}


def calibrate(items: dict[str, JudgedItem], reviews: Reviews, threshold: Threshold = Threshold(),
              manifest_hash: str | None = None) -> CalibrationReport:
    groups: dict[tuple[str, str], list[JudgedItem]] = {}
    for item in items.values():
        groups.setdefault((item.scenario, item.criterion["code"]), []).append(item)
    stale: dict[tuple[str, str], list[dict]] = {}
    for r in reviews.stale:
        stale.setdefault((r["scenario"], r["criterion"]), []).append(r)
    keys = sorted(set(groups) | set(stale), key=criterion_order)
    criteria = [_calibrate(s, c, groups.get((s, c), []), reviews, stale.get((s, c), []), threshold) for s, c in keys]
    overall = _calibrate(None, None, list(items.values()), reviews, reviews.stale, threshold)
    return CalibrationReport(manifest_hash, threshold, criteria, overall)


def load_calibration(db, manifest_hash: str | None = None, threshold: Threshold | None = None) -> CalibrationReport:
    """The calibration of every judged criterion of the manifest (default: the latest judged one)."""
    from helmbench.score.review_items import judged_items, split_reviews
    from helmbench.store.queries.reviews import declared_calibration

    manifest_hash, items = judged_items(db, manifest_hash)
    threshold = threshold or Threshold.from_mapping(declared_calibration(db, manifest_hash))
    return calibrate(items, split_reviews(db, items), threshold, manifest_hash)


def uncalibrated_scenarios(report: CalibrationReport) -> dict[str, list[Calibration]]:
    """Judged scenarios with at least one uncalibrated criterion → those criteria (`report --calibrated-only`)."""
    out: dict[str, list[Calibration]] = {}
    for c in report.criteria:
        if c.n_items and not c.calibrated:
            out.setdefault(c.scenario, []).append(c)
    return out
