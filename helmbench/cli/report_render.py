"""`helmbench report` renderers: a rich table for people, json/csv/markdown for machines and docs.

Every format shows the same `Report`; numbers are never recomputed here, only formatted.
Counts of cases (results) and of evaluations (criterion judgements by the marking model) are
separate columns everywhere, because a case judged on two criteria is one case but two calls.
"""

from __future__ import annotations

import csv
import html
import io
import json
import re

from rich.console import Console
from rich.table import Table
from rich.text import Text

from helmbench.cli.report_data import Report
from helmbench.score.leaderboard import LeaderboardRow

NOTES = (
    "score: severity-weighted (see the methodology page), 95 % bootstrap interval over cases; pass rate: 95 % Wilson interval; "
    "coverage: cases with a verdict / cases expected; errors: API or judge failures (excluded from scores, retried "
    "by the next run); evaluations: criterion judgements by the marking model behind the results; cost: billed."
)


def pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f} %"


def ci(value: float | None, interval) -> str:
    if value is None:
        return "—"
    return pct(value) + (f" ({100 * interval[0]:.1f}–{100 * interval[1]:.1f})" if interval else "")


def money(value: float | None) -> str:
    return "—" if value is None else f"${value:.4f}"


def _evals(report: Report, row: LeaderboardRow) -> dict:
    return report.evaluations.get(row.run.id) or {}


def _cells(report: Report, row: LeaderboardRow) -> list[str]:
    ev = _evals(report, row)
    evaluations = f"{ev.get('n_judgements', 0)}" + (f" ({ev['n_judge_errors']} err)" if ev.get("n_judge_errors") else "")
    return [
        "—" if row.rank is None else str(row.rank), row.model, ci(row.score, row.score_ci),
        ci(row.pass_rate, row.pass_rate_ci), f"{pct(row.coverage)} ({row.n_verdicts}/{row.n_expected})",
        str(row.n_errors), evaluations, money(row.cost),
    ]


HEAD = ["rank", "model", "score (95 % CI)", "pass rate (95 % CI)", "coverage", "errors", "evaluations", "cost"]


def _title(report: Report) -> str:
    b = report.board
    name = " ".join(x for x in (b.benchmark_name, b.benchmark_version and f"v{b.benchmark_version}") if x)
    return f"{name or 'HELMBench'} · manifest {(b.manifest_hash or '')[:19]}… · {b.n_cases} cases"


def _breakdown(report: Report, kind: str) -> tuple[list[str], list[list[str]]]:
    """Rows of a per-pillar or per-behaviour table: code, title, then per model 'score · pass rate (n)'."""
    codes = report.pillars() if kind == "pillar" else report.behaviours()
    titles = report.pillar_titles if kind == "pillar" else report.behaviour_titles
    head = [kind, "title", *[r.model for r in report.rows]]
    body = []
    for code in codes:
        cells = [code, titles.get(code, "")]
        for r in report.rows:
            stats = (r.summary.by_pillar if kind == "pillar" else r.summary.by_behaviour).get(code)
            cells.append("—" if stats is None else f"{pct(stats.score)} · {pct(stats.pass_rate)} pass (n={stats.n_results})")
        body.append(cells)
    return head, body


def text(report: Report, out: Console) -> None:
    if report.note:
        out.print(Text(report.note, style="yellow"))
    table = Table(*HEAD, title=Text(_title(report)), title_justify="left")
    for row in report.rows:
        table.add_row(*[Text(c) for c in _cells(report, row)])
    out.print(table)
    for kind in ("pillar", "behaviour"):
        head, body = _breakdown(report, kind)
        t = Table(*head, title=Text(f"by {kind}: weighted score · pass rate (cases)"), title_justify="left")
        for cells in body:
            t.add_row(*[Text(c) for c in cells])
        out.print(t)
    out.print(Text(NOTES, style="dim"))


def as_json(report: Report) -> str:
    data = report.board.to_dict()
    for row, plain in zip(report.rows, data["rows"]):
        plain["evaluations"] = _evals(report, row)
        plain["by_pillar"] = row.summary.to_dict()["by_pillar"]
        plain["by_behaviour"] = row.summary.to_dict()["by_behaviour"]
    data["pillar_titles"], data["behaviour_titles"] = report.pillar_titles, report.behaviour_titles
    data["note"] = report.note
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False)


def as_csv(report: Report) -> str:
    pillars = report.pillars()
    head = ["rank", "model", "model_name", "run_id", "status", "score", "score_low", "score_high", "pass_rate",
            "pass_rate_low", "pass_rate_high", "coverage", "n_expected", "n_results", "n_verdicts", "n_errors",
            "n_judgements", "n_judge_errors", "cost", "model_cost", "judge_cost", *[f"score_{p}" for p in pillars]]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(head)
    for r in report.rows:
        ev = _evals(report, r)
        sci, pci = r.score_ci or (None, None), r.pass_rate_ci or (None, None)
        w.writerow(["" if v is None else v for v in [
            r.rank, r.model, r.model_name, r.run.id, r.run.status, r.score, *sci, r.pass_rate, *pci, r.coverage,
            r.n_expected, r.summary.n_results, r.n_verdicts, r.n_errors, ev.get("n_judgements"),
            ev.get("n_judge_errors"), r.cost, r.model_cost, r.judge_cost, *[r.pillar_scores.get(p) for p in pillars],
        ]])
    return buf.getvalue()


_MD_PUNCT = re.compile(r"([\\`*\[\]|])")


def md_text(value: str) -> str:
    """Authored text (titles, names) as Markdown that renders as exactly that text: HTML escaped
    (a title `<img onerror=…>` must not become markup where the report is rendered, e.g. a PR
    comment), and the punctuation that could make a link, emphasis, code or a cell break escaped."""
    return _MD_PUNCT.sub(r"\\\1", html.escape(value, quote=False)).replace("\r", " ").replace("\n", " ")


def _md_table(head: list[str], body: list[list[str]]) -> str:
    cell = md_text
    lines = ["| " + " | ".join(map(cell, head)) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(map(cell, row)) + " |" for row in body]
    return "\n".join(lines)


def as_markdown(report: Report) -> str:
    parts = [f"## Leaderboard\n\n{md_text(_title(report))}\n"]
    if report.note:
        parts.append(f"> {md_text(report.note)}\n")
    parts.append(_md_table(HEAD, [_cells(report, r) for r in report.rows]))
    for kind in ("pillar", "behaviour"):
        parts.append(f"\n### By {kind}\n\nweighted score · pass rate (cases)\n")
        parts.append(_md_table(*_breakdown(report, kind)))
    parts.append(f"\n{NOTES}\n")
    return "\n".join(parts)
