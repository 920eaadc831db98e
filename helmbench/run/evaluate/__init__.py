"""Evaluators, looked up by the manifest's `evaluation.type`.

Why a registry: deterministic evaluators (category_match, list_includes, tag_threshold) give a
verdict as soon as the response arrives; `sqe` is registered with `deferred=True` (deterministic.py),
its verdict given later by the judge phase. The executor only
asks `outcome_for(case, response)` and treats None as "awaiting a judge".
"""

from helmbench.run.evaluate.registry import (
    EVALUATORS,
    Outcome,
    evaluator_for,
    is_deferred,
    outcome_for,
    register,
)
from helmbench.run.evaluate import deterministic as _deterministic  # noqa: F401  (registers)

__all__ = ["EVALUATORS", "Outcome", "evaluator_for", "is_deferred", "outcome_for", "register"]
