"""Scoring and analytics: severity-weighted scores, pass rates, intervals, sample consistency.

Standard library and numpy (intervals and paired tests, `inference.py`); reads only `ScoredResult`
rows (built by the caller from the results database), so it can be tested, and re-run on old
results, without the executor or litellm.
Start with `summarise`; the other functions are its parts, usable on their own.
The formula is written down once, in `cost.py`, and explained on the site's methodology page.
"""

from .consistency import CaseMean, Consistency, case_means, consistency, fleiss_kappa
from .breakdown import (
    BehaviourStats,
    GroupStats,
    breakdown,
    by_behaviour,
    by_condition,
    by_perturbation_severity,
    by_pillar,
    by_user_context_severity,
    group_stats,
)
from .cost import case_base, result_cost
from .coverage import Coverage, coverage, pass_rate
from .inference import PairedInference, paired_inference, score_interval
from .model import ERROR, FAIL, PASS, VERDICTS, ScoredResult, check_consistent
from .summary import RunSummary, summarise
from .weighted import (
    BehaviourCost,
    WeightedScores,
    behaviour_costs,
    behaviour_score,
    run_score,
    weighted_mean,
    weighted_scores,
)
from .wilson import Z95, wilson_interval

__all__ = [
    "ERROR",
    "FAIL",
    "PASS",
    "VERDICTS",
    "Z95",
    "PairedInference",
    "BehaviourCost",
    "BehaviourStats",
    "CaseMean",
    "Consistency",
    "Coverage",
    "GroupStats",
    "RunSummary",
    "ScoredResult",
    "WeightedScores",
    "behaviour_costs",
    "behaviour_score",
    "breakdown",
    "by_behaviour",
    "by_condition",
    "by_perturbation_severity",
    "by_pillar",
    "by_user_context_severity",
    "case_base",
    "case_means",
    "consistency",
    "check_consistent",
    "coverage",
    "fleiss_kappa",
    "group_stats",
    "pass_rate",
    "paired_inference",
    "result_cost",
    "run_score",
    "score_interval",
    "summarise",
    "weighted_mean",
    "weighted_scores",
    "wilson_interval",
]
