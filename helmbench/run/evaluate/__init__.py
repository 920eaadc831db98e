"""Evaluation of one answer: `outcome_for(case, response)`, and `is_deferred(case)` for the judge.

Evaluators are looked up by the manifest's `evaluation.type` in the plugin registry
(helmbench/plugins): the deterministic built-ins (category_match, list_includes,
tag_threshold) give a verdict as soon as the response arrives; `sqe`, and any evaluator
registered with `evaluate=None`, is deferred: `outcome_for` returns None ("awaiting a
judge") and the judge phase decides.
"""

from helmbench.run.evaluate.outcome import (
    Outcome,
    evaluator_for,
    fail,
    is_deferred,
    outcome_for,
    passed,
)

__all__ = ["Outcome", "evaluator_for", "fail", "is_deferred", "outcome_for", "passed"]
