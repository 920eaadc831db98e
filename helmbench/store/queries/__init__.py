"""Named read queries: every SELECT the score, publish and report stages need, and nothing else.

Why one place: the schema belongs to store (migrations change it), so a reader that spells its
own SQL breaks silently when a column moves. Readers open the database with
`store.open_readonly` and pass the connection to these functions; they get rows (mappings by
column name) or small records back, never a cursor to write SQL against.
"""

from helmbench.store.queries.judgements import (judge_served, judge_versions, judged_outputs, judgement_rows,
                                                judge_totals_of, judges_of, rejudge_pairs, run_families)
from helmbench.store.queries.ledger import Spend, manifest_spends, run_spend
from helmbench.store.queries.manifests import (
    cases_in_scenarios, manifest_case_rows, manifest_header, manifest_meta, titles)
from helmbench.store.queries.responses import completion_tokens_by_scenario
from helmbench.store.queries.results import (
    FORMAT, format_failure_count, result_case_rows, result_detail_rows, result_usage, served_counts,
)
from helmbench.store.queries.runs import (FINISHED_STATUSES, IMPORTED, RunInfo, all_runs, choose_manifest,
                                          imported_runs, latest_runs, model_runs, run_info, run_of)
from helmbench.store.queries.schema import table_columns

__all__ = [
    "FINISHED_STATUSES", "FORMAT", "IMPORTED", "RunInfo", "imported_runs", "Spend", "all_runs", "cases_in_scenarios", "choose_manifest",
    "completion_tokens_by_scenario", "format_failure_count", "judge_served", "judge_totals_of", "judge_versions",
    "judged_outputs", "judgement_rows", "judges_of", "latest_runs", "manifest_case_rows", "manifest_header",
    "manifest_meta", "model_runs", "rejudge_pairs", "run_of", "result_case_rows", "result_detail_rows", "result_usage",
    "manifest_spends", "run_families", "run_info", "run_spend", "served_counts", "table_columns", "titles",
]
