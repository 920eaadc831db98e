"""The judge (sqe evaluation): one marking-model call per criterion of a stored answer, then the case's verdict.

judge.py reads a judgement and decides a case; judge_prompt.py builds the request the judge sees;
judge_plan.py finds what needs judging (and estimates it for a dry run); judge_kind.py is the job
kind the phase engine runs; judge_run.py runs that phase (the CLI prints what the judge did).
"""

from helmbench.run.judge.judge import CriterionVerdict, aggregate, decide, parse_judgement, precheck
from helmbench.run.judge.judge_plan import JudgeEstimate, JudgeModel, Panel, estimate, judge_for
from helmbench.run.judge.judge_prompt import judge_request, judge_request_hash, judge_response_format, neutralise
from helmbench.run.judge.judge_run import JudgeOutcome, run_judge

__all__ = [
    "CriterionVerdict", "JudgeEstimate", "JudgeModel", "JudgeOutcome", "Panel", "aggregate", "decide",
    "estimate", "judge_for", "judge_request", "judge_request_hash", "judge_response_format", "neutralise",
    "parse_judgement", "precheck", "run_judge",
]
