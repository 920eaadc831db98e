"""`helmbench diff --format comment`: the pull-request comment, in GitHub Markdown.

Why a comment: a reviewer of a benchmark pull request needs to see which cases it adds, removes
or changes, which changes need new model calls (a request changed) and which only re-judging
(an evaluation changed), and what the new calls would cost per model, before merging.
The comment is posted publicly, and the titles and ids in it come from the pull request itself:
every authored string is escaped so that it is shown as text (no Markdown, no HTML, no
@-mention that pings someone, no autolink), and the lists are bounded so that the comment
stays under GitHub's size limit.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from helmbench.api import DIFF_FORMAT, ManifestDiff, read_manifest
from helmbench.errors import HelmbenchError

#: Marks the comment as helmbench's (the workflow's sticky-comment action also adds its own).
MARKER = "<!-- helmbench:diff-comment -->"
#: Case ids listed per group before "and N more".
MAX_IDS = 100
MAX_TEXT = 200

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_MD_PUNCT = re.compile(r"([\\`*_{}\[\]()#+\-.!|~=^$])")  # < > & " ' are entities below
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;", ":": "&#58;"}
#: GitHub turns `@name` into a mention and `#1`, `GH-1`, `owner/repo#1` into references, entities or
#: backslashes notwithstanding (`&#64;` is decoded first); a zero-width joiner after the sign, as
#: GitHub's own advice for writing a mention that does not notify, breaks them while showing the same text.
ZWJ = "\u200d"
_REFERENCE = re.compile(r"(@|#|\bGH-)", re.IGNORECASE)


def md_text(value: object, limit: int = MAX_TEXT) -> str:
    """`value` as literal text inside a Markdown table cell or paragraph on GitHub."""
    text = _CONTROL.sub(" ", str(value))
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    text = _REFERENCE.sub(lambda m: m.group(1) + ZWJ, text)
    text = _MD_PUNCT.sub(r"\\\1", text)
    return "".join(_ENTITIES.get(ch, ch) for ch in text)  # HTML, scheme: autolinks (after: keeps &#)


def _scenarios(path: Path) -> tuple[dict[str, str], dict[str, str], dict]:
    """(case id → scenario, scenario → title, case id → case) of one manifest."""
    m = read_manifest(path)
    catalog = (m.header.get("catalog") or {}).get("scenarios") or {}
    titles = {k: (v.get("title") if isinstance(v, dict) else None) or k for k, v in catalog.items()}
    of, cases = {}, {}
    for case in m:
        of[case["id"]] = case["scenario"]
        cases[case["id"]] = case
    return of, titles, cases


def _ids(title: str, ids: list[str]) -> list[str]:
    if not ids:
        return []
    shown = ", ".join(md_text(i) for i in ids[:MAX_IDS])
    more = f" and {len(ids) - MAX_IDS} more" if len(ids) > MAX_IDS else ""
    return [f"<details><summary>{md_text(title)} ({len(ids)})</summary>", "", shown + more, "", "</details>"]


def render_comment(d: ManifestDiff, old: Path, new: Path, models_file: Path | None, db: Path | None) -> str:
    """The whole comment. `models_file` (None or missing: no cost section) prices the new calls."""
    old_of, old_titles, _ = _scenarios(old)
    new_of, new_titles, new_cases = _scenarios(new)
    titles = {**old_titles, **new_titles}
    groups = (("added", d.added), ("removed", d.removed), ("new model calls", d.request_changed),
              ("re-judging only", d.evaluation_changed), ("scoring only", d.scoring_changed))
    out = [MARKER, "### HELMBench: what this pull request changes", ""]
    if d.empty:
        out += ["No case is added, removed or changed: merging costs no model or judge call.", ""]
    else:
        out += [f"**{len(d.added)}** case(s) added, **{len(d.removed)}** removed, **{len(d.request_changed)}** "
                f"changed so that they need new model calls, **{len(d.evaluation_changed)}** changed so that they "
                f"only need re-judging, **{len(d.scoring_changed)}** changed only in severity, difficulty or weight "
                f"(their scores change, no call is needed); {d.unchanged} unchanged.", ""]
        per: dict[str, list[int]] = {}
        for i, (_, ids) in enumerate(groups):
            for cid in ids:
                per.setdefault(new_of.get(cid) or old_of.get(cid) or "?", [0] * len(groups))[i] += 1
        out += ["| scenario | title | added | removed | new model calls | re-judging only | scoring only |",
                "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
        for sc in sorted(per):
            counts = " | ".join(map(str, per[sc]))
            out.append(f"| {md_text(sc)} | {md_text(titles.get(sc, sc))} | {counts} |")
        out.append("")
        for title, ids in groups:
            out += _ids(title, ids)
        out.append("")
    out += _cost_section([new_cases[i] for i in d.added + d.request_changed if i in new_cases], models_file, db)
    out += ["", f"<sub>manifest {md_text(d.old_hash[:19])} → {md_text(d.new_hash[:19])}; "
                "made by `helmbench diff --format comment`</sub>", ""]
    return "\n".join(out)


def _cost_section(cases: list[dict], models_file: Path | None, db: Path | None) -> list[str]:
    out = ["#### Estimated cost of the new model calls", ""]
    if not cases:
        return out + ["No new model call is needed.", ""]
    if models_file is None or not models_file.is_file():
        return out + [f"{len(cases)} case(s) need new calls; no models.yml was found, so the cost is not estimated.", ""]
    from helmbench import api
    from helmbench.cli import estimate_render as est

    result = api.estimate_cases(cases, models_file, db)
    out += ["| model | new calls | est. output tokens | est. cost |", "| --- | ---: | ---: | ---: |"]
    for m in result.models:
        out.append(f"| {md_text(m.id)} | {m.calls:,} | {md_text(est.tokens_range(m.output_low, m.output_high))} | "
                   f"{md_text(est.cost_range(m))} |")
    out.append("")
    for line in result.to_dict()["notes"]:
        out += [md_text(line, limit=2000), ""]
    return out


def render(d: ManifestDiff, fmt: str) -> str:
    """`helmbench diff` as text, json (diff.schema.json) or a GitHub annotation (the comment: `render_comment`)."""
    if fmt == "json":
        return json.dumps({"format": DIFF_FORMAT, **d.to_dict()}, indent=2)
    groups = [("added", d.added), ("removed", d.removed),
              ("request changed (new model calls)", d.request_changed),
              ("evaluation changed (re-judge only)", d.evaluation_changed),
              ("scoring changed (severity, difficulty or weight; no calls)", d.scoring_changed)]
    if fmt == "github":
        lines = [f"::notice title=HELMBench manifest diff::{len(d.added)} added, {len(d.removed)} removed, "
                 f"{len(d.request_changed)} need new model calls, {len(d.evaluation_changed)} need re-judging only, "
                 f"{len(d.scoring_changed)} change scoring only"]
        return "\n".join(lines)
    if fmt != "text":
        raise HelmbenchError(f"unknown format {fmt!r}")
    out = [f"{d.old_hash} → {d.new_hash}"]
    for title, ids in groups:
        out.append(f"{title}: {len(ids)}")
        out += [f"  {i}" for i in ids]
    out.append(f"unchanged: {d.unchanged}")
    return "\n".join(out)
