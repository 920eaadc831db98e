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

from helmbench.terminal import escaped, printable
from helmbench.api import LeaderboardRow, Report, format_p

NOTES = (
    "score: severity-weighted (see the methodology page), 95 % interval (Wilson, effective number of cases; none "
    "below 3 cases), after the benchmark's safety floors (a capped score shows its floor and the uncapped score); "
    "rank and group: both on that score (after floors); models whose difference to the one above is not significant "
    "(paired sign-flip test over cases, Holm-corrected over adjacent pairs) share a group, and a pair with five or "
    "fewer differing cases is too few to compare; only complete runs are "
    "ranked; pass rate: 95 % Wilson interval; coverage: cases settled / cases expected (a verdict, or abstained: every criterion abstained or was not applicable, counted in no rate or score); recall: passes on "
    "risk cases; false esc.: failures on cases where the person is fine; errors: API or judge failures (excluded "
    "from scores, retried by the next run); format failures: answers that could not be read (invalid JSON, schema, "
    "truncated, empty), counted as failures; evaluations: criterion judgements by the marking model; cost: billed cost of the calls behind the results "
    "shown, whichever run paid them (a reused answer counts); billed in run: what this run's own calls were billed."
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


def score_cell(row: LeaderboardRow) -> str:
    """The ranked score; a capped one says which floor bit and shows the uncapped score beside."""
    if not row.capped:
        return ci(row.score, row.score_ci)
    return f"{pct(row.score)} {row.floor_note} (uncapped {ci(row.uncapped_score, row.uncapped_ci)})"


def format_failures(row: LeaderboardRow) -> str:
    return f"{row.n_format_failures} ({pct(row.format_failure_rate)})"


def _rate(row: LeaderboardRow, which: str) -> str:
    rate = getattr(row.detection, which) if row.detection else None
    return "—" if rate is None or rate.value is None else f"{ci(rate.value, rate.interval)} n={rate.n}"


def _cells(report: Report, row: LeaderboardRow) -> list[str]:
    ev = _evals(report, row)
    evaluations = f"{ev.get('n_judgements', 0)}" + (f" ({ev['n_judge_errors']} err)" if ev.get("n_judge_errors") else "")
    return [
        "not ranked" if row.rank is None else str(row.rank), "—" if row.group is None else str(row.group),
        row.model, score_cell(row), ci(row.pass_rate, row.pass_rate_ci),
        f"{pct(row.coverage)} ({row.n_verdicts}/{row.n_expected}"
        + (f"; {row.abstained_note}" if row.n_abstained else "") + ")", _rate(row, "recall"),
        _rate(row, "false_escalation"), str(row.n_errors), format_failures(row), evaluations, money(row.cost),
        money(row.billed_cost),
    ]


HEAD = ["rank", "group", "model", "score (95 % CI)", "pass rate (95 % CI)", "coverage", "recall",
        "false esc.", "errors", "format failures", "evaluations", "cost", "billed in run"]


def _sections(report: Report) -> list[tuple[str, list[LeaderboardRow]]]:
    """Ranked runs, then the runs listed apart (incomplete coverage or no score)."""
    out = [("ranked", report.board.ranked)]
    if report.board.unranked:
        incomplete = any(not r.complete for r in report.board.unranked)
        out.append(("not ranked: incomplete coverage (a run that measured part of the benchmark is not "
                    "comparable with one that measured all of it)" if incomplete else
                    "not ranked: no score (each row says why)", report.board.unranked))
    return [(title, rows) for title, rows in out if rows]


def remarks(report: Report) -> list[str]:
    """Per-model notes that a table cell would hide: drift, floors that bit, non-monotonic detection."""
    out = [f"⚠ {note}" for note in report.board.judge_drift]
    for r in report.rows:
        if r.rank is None:
            out.append(f"{r.model}: {r.not_ranked_note}" if r.complete else
                       f"{r.model}: not ranked, coverage {pct(r.coverage)} ({r.n_verdicts}/{r.n_expected})")
        if r.capped:
            out.append(f"{r.model}: {r.floor_note}; uncapped score {pct(r.uncapped_score)}")
        for note in r.drift:
            out.append(f"{r.model}: ⚠ {note}")
        if r.conflict_note:
            out.append(f"{r.model}: ⚠ {r.conflict_note}")
        if r.adjudication_note:
            out.append(f"{r.model}: {r.adjudication_note}")
        if r.served and (r.served.versions or r.served.providers):
            out.append(f"{r.model}: model versions {_counts(r.served.versions)}; providers {_counts(r.served.providers)}")
        if r.detection and r.detection.non_monotonic:
            levels = ", ".join(str(lvl) for lvl in r.detection.non_monotonic)
            out.append(f"{r.model}: detection falls at severity level(s) {levels} below a lower level's "
                       "(intervals apart)")
    return out


JUDGE_HEAD = ["judge", "Kendall τ-b vs ensemble", "tie group changes", "ranking (score)"]


def judge_rows(report: Report) -> tuple[list[str], list[list[str]]]:
    """One row per judge of the ensemble: its ranking alone, τ-b against the ensemble's, changed groups."""
    body = []
    for v in report.judges.views:
        tau = "—" if v.tau_b is None else f"{v.tau_b:.2f}"
        ranking = ", ".join(f"{r.rank}. {r.model} ({pct(r.score)})" for r in v.board.ranked)
        body.append([v.judge, tau, ", ".join(v.changed) or "none", ranking or "—"])
    return JUDGE_HEAD, body


def judge_lines(report: Report) -> list[str]:
    """The judges' agreement per criterion, and whether the top group depends on the judge."""
    from helmbench.api import criterion_key

    j = report.judges
    out = [f"judges' agreement on {criterion_key(*c)}: Fleiss κ {'—' if k is None else f'{k:.2f}'} over "
           f"{j.n_items[c]} items" for c, k in j.kappa.items()]
    if j.top_depends:
        out.append("the top tie group depends on the judge: some judge alone would put other models in it")
    for w in j.without_kin:
        if w.row is None:
            out.append(f"{w.model}: every judge is of its own family ({', '.join(w.kin)}): no score without them")
            continue
        place = f"rank {w.row.rank}, group {w.row.group}" if w.row.rank is not None else "not ranked"
        out.append(f"{w.model}: without its own family's judge ({', '.join(w.kin)}), judged by "
                   f"{', '.join(w.others)}: {ci(w.row.score, w.row.score_ci)} ({place}); "
                   f"with the whole ensemble {pct(w.ensemble_score)}")
    return out


STABILITY_TITLE = "judge stability: first vs re-judged verdicts (run --rejudge-sample)"


def stability_lines(report: Report) -> list[str]:
    """Per criterion, the judge's run-to-run agreement (score.stability), or nothing when nothing was re-judged."""
    return [s.describe() for s in report.stability]


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} ×{v}" for k, v in counts.items()) or "—"


def distinguishable(c) -> str:
    """yes/no, and why not when the data could not have said yes."""
    if c.distinguishable:
        return "yes"
    return "no: too few cases to compare" if c.score.too_few else "no"


def comparison_rows(report: Report) -> tuple[list[str], list[list[str]]]:
    """Every adjacent comparison of the ranked models, as table cells."""
    head = ["above", "below", "n pairs", "discordant (above only / below only)", "McNemar p",
            "score difference (95 % CI)", "differing cases", "Holm p (sign-flip)", "distinguishable"]
    body = []
    for c in report.board.comparisons:
        d = c.score
        diff = "—" if d.difference is None else f"{100 * d.difference:+.1f} pts" + (
            f" ({100 * d.interval[0]:+.1f} to {100 * d.interval[1]:+.1f})" if d.interval else "")
        body.append([c.a, c.b, str(c.mcnemar.n_pairs), f"{c.mcnemar.a_only} / {c.mcnemar.b_only}",
                     format_p(c.mcnemar.p_value, c.mcnemar.too_few), diff, f"{d.n_differ} of {d.n_cases}",
                     format_p(c.p_adjusted, d.too_few), distinguishable(c)])
    return head, body


def _title(report: Report) -> str:
    b = report.board
    name = " ".join(x for x in (b.benchmark_name, b.benchmark_version and f"v{b.benchmark_version}") if x)
    return f"{printable(name) or 'HELMBench'} · manifest {(b.manifest_hash or '')[:19]}… · {b.n_cases} cases"


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


CALIBRATION_HEAD = ["judged criterion", "calibration", "κ [95 % CI]", "n", "reviewed", "stale reviews"]


def calibration_rows(report: Report) -> list[list[str]]:
    """One row per judged criterion: its badge (κ, n, date) or why it is uncalibrated."""
    if report.calibration is None:
        return []
    out = []
    for c in report.calibration.criteria:
        kappa = "—" if c.kappa is None else f"{c.kappa.value:.2f}" + (f" [{c.kappa.ci[0]:.2f}, {c.kappa.ci[1]:.2f}]" if c.kappa.ci else "")
        out.append([c.key, c.badge(), kappa, str(c.n), f"{c.n_reviewed}/{c.n_items}", str(c.n_stale)])
    return out


def left_out_note(report: Report) -> str | None:
    """What `--calibrated-only` left out of the headline, in one sentence."""
    if not report.left_out:
        return None
    parts = [f"{s} ({', '.join(c.criterion + ' ' + ('κ —' if c.kappa is None else f'κ {c.kappa.value:.2f}') + f', n {c.n}' for c in cs)})"
             for s, cs in report.left_out.items()]
    t = report.calibration.threshold
    return (f"--calibrated-only: the headline leaves out {len(parts)} judged scenario(s) whose judge is not calibrated "
            f"(κ ≥ {t.min_kappa:g} with n ≥ {t.min_n}): " + "; ".join(parts))


def _t(line: str, **style) -> Text:
    """A terminal line from the database (model ids, the judge's returned versions, paths): control
    characters shown as \\xNN, not obeyed (rich's Text strips only a few of them, never ESC)."""
    return Text(escaped(line), **style)


def _print_table(out: Console, title: str, head: list[str], body: list[list[str]]) -> None:
    """A titled table of plain text cells (Text: never read as Rich markup)."""
    t = Table(title=_t(title), title_justify="left")
    for h in head:
        t.add_column(_t(h))  # headers name models too (a str header is read as Rich markup)
    for cells in body:
        t.add_row(*[_t(c) for c in cells])
    out.print(t)


def notes(report: Report) -> list[str]:
    """What the headline leaves out or shows instead, said before it: another manifest's runs,
    `--calibrated-only`, `--judge-version`."""
    return [n for n in (report.note, left_out_note(report),
                        report.judge_version.note() if report.judge_version else None) if n]


def text(report: Report, out: Console) -> None:
    for note in notes(report):
        out.print(_t(note, style="yellow"))
    for section, rows in _sections(report):
        table = Table(*HEAD, title=_t(f"{_title(report)} · {section}"), title_justify="left")
        for row in rows:
            table.add_row(*[_t(c) for c in _cells(report, row)])
        out.print(table)
    if report.board.comparisons:
        _print_table(out, "adjacent comparisons (paired; Holm-corrected)", *comparison_rows(report))
    for line in remarks(report):
        out.print(_t(line))
    if report.judges:
        _print_table(out, "rank sensitivity to the judge (each judge alone)", *judge_rows(report))
        for line in judge_lines(report):
            out.print(_t(line))
    if lines := stability_lines(report):
        out.print(_t(STABILITY_TITLE, style="italic"))
        for line in lines:
            out.print(_t(line))
    for kind in ("pillar", "behaviour"):
        _print_table(out, f"by {kind}: weighted score · pass rate (cases)", *_breakdown(report, kind))
    if rows := simulated_user_rows(report):
        _print_table(out, "by simulated user: score of the simulated conversations (pooled per conversation in "
                          "the model's score)", SIMULATED_HEAD, rows)
    for row in report.imported:  # never in the tables above: they were not run by HELMBench
        out.print(_t(f"{row['model']} (run {row['run_id']}): {row['n_pass']} pass, {row['n_fail']} fail, "
                     f"{row['n_error']} error; judge {money(row['judge_cost'])}; {row['note']}"))
    if rows := calibration_rows(report):
        t = Table(*CALIBRATION_HEAD, title=_t("judge calibration against clinicians (helmbench agreement)"),
                  title_justify="left")
        for cells in rows:
            t.add_row(*[_t(c) for c in cells])
        out.print(t)
    out.print(Text(NOTES, style="dim"))


SIMULATED_HEAD = ["model", "simulated user", "conversations (n)", "score (95 % CI)"]


def simulated_user_rows(report: Report) -> list[list[str]]:
    """Per model whose conversations several simulated users played: each one's score over them, and the pooled."""
    rows = []
    for row in report.rows:
        su = row.summary.simulated_users
        if su is None:
            continue
        for f in (*su.users, su.pooled):
            name = "all, pooled per conversation" if f is su.pooled else f.user
            rows.append([row.model, name, str(f.n_cases), _figure_ci(f)])
    return rows


def _figure_ci(f) -> str:
    """A simulated user's score and interval, or in words why there is none (a figure never stands unexplained)."""
    if f.score is None:
        abstained = f", {f.n_abstained} abstained, not counted" if f.n_abstained else ""
        return f"— (no score: none of its conversations has a verdict{abstained})"
    return ci(f.score, f.score_ci) if f.score_ci else f"{pct(f.score)} (no interval: too few conversations)"


def _simulated_json(row) -> dict | None:
    su = row.summary.simulated_users
    if su is None:
        return None
    plain = lambda f: {"user": f.user, "n_cases": f.n_cases, "n_results": f.n_results, "score": f.score,
                       "score_ci": list(f.score_ci) if f.score_ci else None, "n_abstained": f.n_abstained}
    return {"pooled": plain(su.pooled), "users": [plain(f) for f in su.users]}


#: The version of `report --format json`'s shape: report.schema.json's `format` (bump both together).
REPORT_FORMAT = 2  # 2: rows carry `n_abstained` (cases whose every criterion abstained or was gated off)


def as_json(report: Report) -> str:
    data = {"format": REPORT_FORMAT, **report.board.to_dict()}
    for row, plain in zip(report.rows, data["rows"]):
        plain["evaluations"] = _evals(report, row)
        plain["by_pillar"] = row.summary.to_dict()["by_pillar"]
        plain["by_behaviour"] = row.summary.to_dict()["by_behaviour"]
        if (users := _simulated_json(row)) is not None:  # only when several simulated users played
            plain["by_simulated_user"] = users
    data["pillar_titles"], data["behaviour_titles"] = report.pillar_titles, report.behaviour_titles
    data["note"] = report.note
    data["calibration"] = report.calibration.to_dict() if report.calibration else None
    data["judges"] = report.judges.to_dict() if report.judges else None
    data["judge_stability"] = [s.to_dict() for s in report.stability]
    data["judge_version"] = {"version": report.judge_version.version, "left_out": report.judge_version.left_out,
                             "note": report.judge_version.note()} if report.judge_version else None
    data["calibrated_only"] = {"left_out": {s: [c.key for c in cs] for s, cs in report.left_out.items()},
                               "note": left_out_note(report)} if report.left_out else None
    data["imported"] = report.imported
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False)


def as_csv(report: Report) -> str:
    pillars = report.pillars()
    head = ["rank", "model", "model_name", "run_id", "status", "score", "score_low", "score_high", "pass_rate",
            "pass_rate_low", "pass_rate_high", "coverage", "n_expected", "n_results", "n_verdicts", "n_errors",
            "n_abstained", "n_judgements", "n_judge_errors", "cost", "model_cost", "judge_cost", "billed_cost", "group", "complete",
            "uncapped_score", "floor_note", "crisis_recall", "false_escalation", "n_format_failures",
            "format_failure_rate", "drift", *[f"score_{p}" for p in pillars]]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(head)
    for r in report.rows:
        ev = _evals(report, r)
        sci, pci = r.score_ci or (None, None), r.pass_rate_ci or (None, None)
        w.writerow(["" if v is None else v for v in [
            r.rank, r.model, r.model_name, r.run.id, r.run.status, r.score, *sci, r.pass_rate, *pci, r.coverage,
            r.n_expected, r.summary.n_results, r.n_verdicts, r.n_errors, r.n_abstained, ev.get("n_judgements"),
            ev.get("n_judge_errors"), r.cost, r.model_cost, r.judge_cost, r.billed_cost, r.group, r.complete, r.uncapped_score,
            r.floor_note, r.detection.recall.value if r.detection else None,
            r.detection.false_escalation.value if r.detection else None, r.n_format_failures,
            r.format_failure_rate, "; ".join(r.drift), *[r.pillar_scores.get(p) for p in pillars],
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
    parts += [f"> {md_text(note)}\n" for note in notes(report)]
    for section, rows in _sections(report):
        parts.append(f"\n**{md_text(section)}**\n")
        parts.append(_md_table(HEAD, [_cells(report, r) for r in rows]))
    if report.board.comparisons:
        parts.append("\n### Adjacent comparisons\n\npaired tests; Holm-corrected over adjacent pairs\n")
        parts.append(_md_table(*comparison_rows(report)))
    if lines := remarks(report):
        parts.append("\n" + "\n".join(f"- {md_text(line)}" for line in lines))
    if report.judges:
        parts.append("\n### Rank sensitivity to the judge\n\neach judge alone, against the ensemble\n")
        parts.append(_md_table(*judge_rows(report)))
        parts.append("\n" + "\n".join(f"- {md_text(line)}" for line in judge_lines(report)))
    if lines := stability_lines(report):
        parts.append("\n### Judge stability\n\nfirst vs re-judged verdicts (run --rejudge-sample)\n")
        parts.append("\n".join(f"- {md_text(line)}" for line in lines))
    for kind in ("pillar", "behaviour"):
        parts.append(f"\n### By {kind}\n\nweighted score · pass rate (cases)\n")
        parts.append(_md_table(*_breakdown(report, kind)))
    if rows := calibration_rows(report):
        parts.append("\n### Judge calibration\n\nagreement with clinicians' blind reviews (helmbench agreement)\n")
        parts.append(_md_table(CALIBRATION_HEAD, rows))
    parts.append(f"\n{NOTES}\n")
    return "\n".join(parts)
