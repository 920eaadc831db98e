"""Jinja2 for the site's HTML fragments: autoescape on, and the formatting every page shares.

Model output, prompts and reasons are untrusted text. They only ever reach a page through a
`{{ … }}` in these templates, which autoescape turns into text (`<script>` shows as
`&lt;script&gt;`), and the fragments are spliced into the page *after* Markdown has run
(see `site.py`), so Markdown never interprets them either.
"""

from __future__ import annotations

import json
import math
import re
from functools import lru_cache
from urllib.parse import urlencode

from jinja2 import ChoiceLoader, Environment, FunctionLoader, PackageLoader, PrefixLoader, StrictUndefined
from markupsafe import Markup, escape

from helmbench.spec.naming import natural_key
from helmbench.score.pairwise import format_p

from .transcript import transcript_html

#: Marks a section break in a rendered fragment: `<!--section:Heading-->`.
SECTION = re.compile(r"<!--section:(.*?)-->")


def pct(value: float | None, digits: int = 1) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{value * 100:.{digits}f} %"


def interval(ci: tuple[float, float] | list[float] | None, digits: int = 1) -> str:
    if not ci:
        return ""
    return f"{ci[0] * 100:.{digits}f}–{ci[1] * 100:.{digits}f}"


def money(value: float | None) -> str:
    if value is None:
        return "unknown"
    if value == 0:
        return "$0"
    return f"${value:.4f}" if value < 1 else f"${value:,.2f}"


def count(value: int | None) -> str:
    return "—" if value is None else f"{value:,}".replace(",", "\u202f")


def sortkey(value: float | int | None) -> str:
    """A `data-sort` value for tablesort's number sort; missing values sort below everything."""
    return "-1" if value is None else repr(float(value))


def bar_row(bar) -> tuple:
    """A chart bar as the (label, value, interval, note) row of the chart's data table."""
    return (bar.label, bar.value, bar.ci, bar.note)


def target_facts(settings_json: str | None) -> dict:
    """What a run's target is, from the settings it was run with (models.yml): its kind in words,
    where its calls went (a base URL or a chatbot's URL without its query), the deployment prompt and
    whether it takes a system message. Never a key: none is in the settings."""
    import json

    try:
        settings = json.loads(settings_json or "{}")
    except ValueError:
        settings = {}
    if not isinstance(settings, dict):
        settings = {}
    http, route, base = settings.get("http"), settings.get("route"), settings.get("api_base")
    if isinstance(http, dict):
        body = json.dumps(http.get("body"), ensure_ascii=False)
        kind = "deployed service (HTTP), stateful" if "session_id" in body else "deployed service (HTTP)"
        where = str(http.get("url", "")).split("?", 1)[0]
    elif isinstance(route, str):
        local = isinstance(base, str) and any(h in base for h in ("://127.", "://localhost", "://[::1]", "://0.0.0.0"))
        kind = "local model" if local or route.startswith("ollama") else "direct provider"
        where = route + (f" at {str(base).split('?', 1)[0]}" if base else "")
    else:
        kind, where = "OpenRouter model", "openrouter"
    prompt = settings.get("system_prompt") if isinstance(settings.get("system_prompt"), str) else None
    no_system = settings.get("system_message") is False
    return {"kind": kind, "where": where, "prompt": prompt, "no_system": no_system}


def short_hash(value: str | None, n: int = 12) -> str:
    if not value:
        return "—"
    return value.split(":", 1)[-1][:n]


def pretty_json(value) -> str:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value
    return json.dumps(value, indent=2, ensure_ascii=False)


def signed(value: int | None) -> str:
    if value is None:
        return "—"
    return f"+{value}" if value > 0 else str(value)


def _esc(value) -> str:
    """`markupsafe.escape` as a plain `str` (same characters, same entities), for the hot loops:
    no `Markup` object per value. Values that are already HTML (`__html__`) are kept as they are."""
    if hasattr(value, "__html__"):
        return value.__html__()
    return (str(value).replace("&", "&amp;").replace(">", "&gt;").replace("<", "&lt;")
            .replace("'", "&#39;").replace('"', "&#34;"))


_SYMBOLS = {"PASS": "✓", "FAIL": "✗", "ERROR": "!"}
#: A text block that may scroll: a labelled region the keyboard can reach (followed by its label).
_REGION = 'tabindex="0" role="region" aria-label='



def verdict_badge(verdict: str | None, title: str | None = None) -> Markup:
    """A ✓/✗/! mark with the verdict as text (hidden in grids) and `title` as its tooltip.

    Plain concatenation with `escape` (not `Markup.format`): it runs ~25,000 times per build.
    """
    label = verdict or "no result"
    tip = _esc(f"{label}: {title}" if title else label)
    return Markup(f'<span class="hb-verdict hb-{(verdict or "none").lower()}" title="{tip}">'
                  f'{_SYMBOLS.get(verdict or "", "·")} <span class="hb-verdict-text">{_esc(label)}</span></span>')


def model_output(res, ds_responses: str) -> Markup:
    """One result as a case page shows it: verdict, reason, the output verbatim, judgements.

    Written in Python rather than in case.html.j2 because it runs 11,520 times for 20 models:
    every value from the database goes through `_esc` (autoescape's escaping, as a plain str).
    """
    e = _esc
    out = ["<p>"]
    if res.sample_label:
        out.append(f"Sample {res.sample}: ")
    out.append(verdict_badge(res.verdict))
    if res.score is not None and res.verdict != "ERROR":
        out.append(f" score {round(res.score, 2)}")
    if res.judge_verdict is not None:
        judged = f" score {round(res.judge_score, 2)}" if res.judge_score is not None else ""
        out.append(f" — adjudicated by clinicians (the judge: {verdict_badge(res.judge_verdict)}{judged})")
    if res.reason:
        out.append(f' — <span class="hb-reason">{e(res.reason)}</span>')
    out.append("</p>\n")
    if res.error_kind:
        msg = f" — {e(res.error_message)}" if res.error_message else ""
        out.append(f'<p class="hb-error">Error: {e(res.error_kind)}{msg}</p>\n')
    if res.content is not None:
        out.append(f'<pre class="hb-text hb-model-output" data-search-exclude {_REGION}"Model output">'
                   f"{e(res.content)}</pre>\n")
        latency = f" · {count(res.latency_ms)} ms" if res.latency_ms is not None else ""
        row = (f' · <a href="{e(ds_responses)}?id={int(res.response_id)}" class="hb-ds">response row</a>'
               if res.response_id else "")
        out.append(f'<p class="hb-meta">finish reason {e(res.finish_reason or "—")}{latency} · '
                   f"cost {money(res.cost)}{row}</p>\n")
    if res.turns:
        out.append(transcript_html(res, verdict_badge, money))
    for j in res.judgements:
        verdict = j.verdict or ("ERROR" if j.error_kind else None)
        score = f" score {round(j.score, 2)}" if j.score is not None else ""
        err = f" — error {e(j.error_kind)} {e(j.error_message or '')}" if j.error_kind else ""
        out.append(f'<div class="hb-judgement">\n<p>Judge <code>{e(j.judge_model)}</code> on '
                   f"<strong>{e(j.criterion)}</strong>: {verdict_badge(verdict)}{score}{err}</p>\n")
        if j.justification:
            out.append(f'<pre class="hb-text" data-search-exclude {_REGION}"Judge\'s justification">'
                       f"{e(j.justification)}</pre>\n")
        out.append("</div>\n")
    if res.reviewed:
        out.append(review_history(res.reviewed))
    return Markup("".join(out))


def review_history(items) -> str:
    """Each reviewed item of a result (benchmark.yml `adjudication:`): the judge's verdict, every current review
    (its verdict and date; clinicians' names and notes stay private), and the verdict that stands."""
    e = _esc
    out = ['<div class="hb-adjudication">\n']
    for h in items:
        who = "The check" if h.checked else "The judge"
        out.append(f"<p><strong>{e(h.criterion)}</strong> reviewed by clinicians: {who} "
                   f"{verdict_badge(h.judge_verdict)}{' (' + e(h.judged_at) + ')' if h.judged_at else ''}</p>\n<ol>")
        out.extend(f"<li>{verdict_badge(r.verdict)} {e(_show_judgment(r.judgment))}"
                   f"{' — ' + e(r.created_at) if r.created_at else ''}</li>" for r in h.reviews)
        if h.adjudicated:
            outcome = f"adjudicated {verdict_badge(h.verdict)}" + (" (overturns the judge)" if h.overturned else "")
            outcome += f" on {e(h.decided_at)}" if h.decided_at else ""
        else:
            outcome = (f"{len(h.reviews)} current review{'s' if len(h.reviews) != 1 else ''}: fewer than adjudication "
                       "requires, or split evenly; the judge's verdict stands")
        out.append(f"</ol>\n<p>Published verdict: {outcome}</p>\n")
    out.append("</div>\n")
    return "".join(out)


def _show_judgment(judgment) -> str:
    return ", ".join(map(str, judgment)) if isinstance(judgment, list) else str(judgment)


def case_outputs(case, data, link) -> Markup:
    """Every model's block on a case page (the hot loop of a build: cases × models)."""
    e = _esc
    ds_responses = link.ds("responses")
    out = []
    for m in data.models:
        rs = data.results(case.id, m.id)
        out.append(f'<div class="hb-output" id="model-{e(m.slug)}">\n<p class="hb-output-head"><a href="'
                   f'{e(link.model(m.slug))}"><strong>{e(m.name)}</strong></a> <code>{e(m.id)}</code></p>\n')
        if not rs:
            out.append("<p>No result for this case.</p>\n")
        out.extend(model_output(res, ds_responses) for res in rs)
        out.append("</div>\n")
    return Markup("".join(out))


def markdown_heading(text: str) -> str:
    """Heading text safe to put after `## ` in Markdown: HTML-escaped, Markdown punctuation escaped."""
    return re.sub(r"([\\`*_{}\[\]()#+!|~])", r"\\\1", str(escape(text)))


def _evaluation_partial(type_: str) -> str | None:
    """`evaluation/<type>`: the page partial of the registered evaluator of that type (built-in or a
    plugin's); None (not found) for a type nobody registered, such as one from an uninstalled plugin."""
    from helmbench.plugins import registry

    found = registry.evaluators().get(type_)
    return found.partial if found is not None else None


def _evaluation_page(type_: str) -> str | None:
    """`evaluation_page/<type>`: the page template of the registered evaluator of that type (the data of
    its own that the manifest keeps, such as the crisis-service registry); None when it has none."""
    from helmbench.plugins import registry

    found = registry.evaluators().get(type_)
    return found.page[1] if found is not None and found.page else None


@lru_cache(maxsize=1)
def environment() -> Environment:
    env = Environment(
        loader=ChoiceLoader([PrefixLoader({"evaluation": FunctionLoader(_evaluation_partial),
                                           "evaluation_page": FunctionLoader(_evaluation_page)}),
                             PackageLoader("helmbench.publish", "templates")]),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=StrictUndefined,
        auto_reload=False,  # templates are package files: no stat() per include
    )
    env.filters.update(pct=pct, interval=interval, money=money, count=count, sortkey=sortkey,
                       short_hash=short_hash, target_facts=target_facts, pvalue=format_p, bar_row=bar_row, pretty_json=pretty_json, signed=signed, natural=natural_key)
    env.globals.update(verdict_badge=verdict_badge, urlencode=urlencode, case_outputs=case_outputs)
    return env


def render(template: str, context: dict) -> Markup:
    return Markup(environment().get_template(template).render(**context))


def render_sections(template: str, context: dict) -> tuple[Markup, list[tuple[str, Markup]]]:
    """Render a fragment template and split it at its section markers.

    Returns (the HTML before the first section, [(section heading, its HTML), ...]).
    """
    html = environment().get_template(template).render(**context)
    parts = SECTION.split(html)
    head = Markup(parts[0])
    sections = [(Markup(parts[i]).unescape(), Markup(parts[i + 1])) for i in range(1, len(parts), 2)]
    return head, sections
