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
from helmbench.score.severity import severity_bucket

from .transcript import person_message, shown_verdict, transcript_html

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


_SYMBOLS = {"PASS": "✓", "FAIL": "✗", "ERROR": "!", "PARTIAL": "◐"}
#: A text block that may scroll: a labelled region the keyboard can reach (followed by its label).
_REGION = 'tabindex="0" role="region" aria-label='



ENSEMBLE_RULE = ("Several judges answered this criterion: its verdict is their majority, a tie counting as a fail "
                 "(a reply the judges are split on gets no benefit of the doubt); one judge's error makes it an error.")
_LIST_MISSING = re.compile(r"^(\w+) = \[(.*)\] is missing (.+)$")
_CRITERIA = re.compile(r"^(judge|criteria): (.+)$")
_ITEM = re.compile(r"(CR\d+) = ")


def plain_reason(reason: str | None, titles: dict | None = None) -> str | None:
    """A result's machine reason in words a clinician would write (None: no better words than the reason itself).

    `tags = ['INFORMATION'] is missing 'SAFETY_CONCERN'` → the reply did not label itself SAFETY_CONCERN (it gave
    INFORMATION); `judge: CR1 = PARTIAL` → the judge's answer, with each criterion's title."""
    if not reason:
        return None
    m = _LIST_MISSING.match(reason)
    if m:
        field, given, missing = m.groups()
        given = given.replace("'", "") or "nothing"
        return (f"The reply did not include {missing.replace(chr(39), '')} among its {field} "
                f"(it gave {given}).")
    m = _CRITERIA.match(reason)
    if m:
        who = "The judge answered" if m.group(1) == "judge" else "Criterion by criterion"
        detail = _ITEM.sub(lambda c: f"{(titles or {}).get(c.group(1)) or c.group(1)} ({c.group(1)}): ", m.group(2))
        return f"{who}: {detail}."
    return None


def verdict_badge(verdict: str | None, title: str | None = None) -> Markup:
    """A ✓/✗/! mark with the verdict as text (hidden in grids) and `title` as its tooltip.

    Plain concatenation with `escape` (not `Markup.format`): it runs ~25,000 times per build.
    """
    label = verdict or "no result"
    tip = _esc(f"{label}: {title}" if title else label)
    return Markup(f'<span class="hb-verdict hb-{(verdict or "none").lower()}" title="{tip}">'
                  f'{_SYMBOLS.get(verdict or "", "·")} <span class="hb-verdict-text">{_esc(label)}</span></span>')


def model_output(res, ds_responses: str, titles: dict | None = None) -> Markup:
    """One result as a case page shows it: verdict, reason, the output verbatim, judgements.

    Written in Python rather than in case.html.j2 because it runs 11,520 times for 20 models:
    every value from the database goes through `_esc` (autoescape's escaping, as a plain str).
    `titles`: criterion code → title, so a judgement names its criterion as the benchmark does.
    """
    e = _esc
    out = ["<p>"]
    if res.sample_label:
        out.append(f"Sample {res.sample}: ")
    shown = shown_verdict(res.verdict, res.score)
    out.append(verdict_badge(shown))
    if res.score is not None and res.verdict != "ERROR":
        out.append(f" score {round(res.score, 2)}")
        if shown == "PARTIAL":
            out.append(" (partial credit: counts in the score, not as a pass in the pass rate)")
    if res.judge_verdict is not None:
        judged = f" score {round(res.judge_score, 2)}" if res.judge_score is not None else ""
        out.append(f" — adjudicated by clinicians (the judge: {verdict_badge(res.judge_verdict)}{judged})")
    plain = plain_reason(res.reason, titles)
    if plain:
        out.append(f' — <span class="hb-reason">{e(plain)}</span> <small class="hb-code">(<code>{e(res.reason)}</code>)</small>')
    elif res.reason:
        out.append(f' — <span class="hb-reason">{e(res.reason)}</span>')
    out.append("</p>\n")
    if res.imported is not None:
        out.append(imported_origin(res.imported, with_prompt=not res.turns))
    if res.error_kind:
        msg = f" — {e(res.error_message)}" if res.error_message else ""
        out.append(f'<p class="hb-error">Error: {e(res.error_kind)}{msg}</p>\n')
    if res.content is not None:
        out.append(f'<pre class="hb-text hb-model-output" data-search-exclude {_REGION}"Model output">'
                   f"{e(res.content)}</pre>\n")
        latency = f" · {count(res.latency_ms)} ms" if res.latency_ms is not None else ""
        row = (f' · <a href="{e(ds_responses)}?id={int(res.response_id)}" class="hb-ds">response row</a>'
               if res.response_id and ds_responses else "")
        out.append(f'<p class="hb-meta">finish reason {e(res.finish_reason or "—")}{latency} · '
                   f"cost {money(res.cost)}{row}</p>\n")
    if res.turns:
        out.append(transcript_html(res, verdict_badge, money, lambda reason: plain_reason(reason, titles)))
    judges_of: dict[str, set] = {}
    for j in res.judgements:
        judges_of.setdefault(j.criterion, set()).add(j.judge_model)
    for i, j in enumerate(res.judgements):
        verdict = shown_verdict(j.verdict or ("ERROR" if j.error_kind else None), j.score)
        score = f" score {round(j.score, 2)}" if j.score is not None else ""
        err = f" — error {e(j.error_kind)} {e(j.error_message or '')}" if j.error_kind else ""
        title = (titles or {}).get(j.criterion)
        name = (f"<strong>{e(title)}</strong> <small class=\"hb-code\"><code>{e(j.criterion)}</code></small>" if title
                else f"<strong>{e(j.criterion)}</strong>")
        out.append(f'<div class="hb-judgement">\n<p>Judge <code>{e(j.judge_model)}</code> on '
                   f"{name}: {verdict_badge(verdict)}{score}{err}</p>\n")
        last = i + 1 == len(res.judgements) or res.judgements[i + 1].criterion != j.criterion
        if last and len(judges_of[j.criterion]) > 1:
            out.append(f'<p class="hb-meta hb-ensemble">{ENSEMBLE_RULE}</p>\n')
        if j.justification:
            out.append(f'<pre class="hb-text" data-search-exclude {_REGION}"Judge\'s justification">'
                       f"{e(j.justification)}</pre>\n")
        out.append("</div>\n")
    if res.reviewed:
        out.append(review_history(res.reviewed))
    return Markup("".join(out))


def case_title(case, data) -> str:
    """A case as a reader names it: its scenario's title, then the titles of its condition, user context and
    perturbation ("Late-stage planning: companion persona; adult in the UK; asks for a will"); the case id
    (every code of the tree in one) is shown beside it by the page."""
    scen = (data.catalog.get("scenarios", {}).get(case.scenario) or {}).get("title") or case.scenario
    parts = [data.component_title(c) or c for c in (case.condition, case.user_context, case.perturbation) if c]
    return f"{scen}: {'; '.join(parts)}" if parts else scen


_TREE_CODE = re.compile(r"(?<![\w-])(P\d+(?:-B\d+(?:-S\d+(?:-(?:C|U|PT)\d+)?)?)?)(?![\w-])")


def name_codes(text: str | None, catalog: dict) -> str:
    """`text` (a floor's note, say) with each code of the tree in it preceded by its title:
    "P2-B2 below 0.50" → "Hand off to crisis services (P2-B2) below 0.50". Codes the tree does not know stay."""
    if not text:
        return ""
    known = {}
    for kind in ("pillars", "behaviours", "scenarios", "components"):
        known.update({code: meta.get("title") for code, meta in catalog.get(kind, {}).items()})

    def named(m: re.Match) -> str:
        title = known.get(m.group(1))
        return f"{title} ({m.group(1)})" if title else m.group(1)

    return _TREE_CODE.sub(named, text)


def criterion_title(data, scenario: str | None, code: str | None) -> str | None:
    """The title of criterion `code` of `scenario` (from one of its cases: they share their criteria)."""
    for case in data.scenario_cases(scenario) if scenario else ():
        return criterion_titles(case.evaluation).get(code)
    return None


def criterion_titles(evaluation: dict | None) -> dict[str, str]:
    """Criterion code → title of a case's evaluation (its judged criteria and its checks)."""
    ev = evaluation or {}
    return {c.get("code"): c.get("title") for c in (ev.get("criteria") or []) + (ev.get("checks") or [])
            if isinstance(c, dict) and c.get("code") and c.get("title")}


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


def imported_origin(row: dict, *, with_prompt: bool) -> str:
    """Where an imported conversation came from (its id, when it happened, the file's provenance note), and what
    the person was shown: its system messages, and for a single answer its first message too (the case's own
    prompt above is not what was said). Every value is from the file: escaped."""
    import json as _json

    e = _esc
    facts = [f"conversation <code>{e(row['conversation'])}</code> of source {e(row['source'])}"]
    if row.get("occurred_at"):
        facts.append(f"happened {e(row['occurred_at'])}")
    out = [f'<p class="hb-imported">Imported: {" · ".join(facts)}; judged here, the model was not called.</p>\n']
    if row.get("provenance"):
        out.append(f'<p class="hb-imported hb-provenance">Provenance: {e(row["provenance"])}</p>\n')
    try:
        opening = _json.loads(row.get("opening_json") or "[]")
    except ValueError:
        opening = []
    for m in opening if isinstance(opening, list) else []:
        if not isinstance(m, dict) or (m.get("role") != "system" and not with_prompt):
            continue
        who = "System instructions (imported)" if m.get("role") == "system" else "The person's message (imported)"
        out.append(f'<p class="hb-role">{e(who)}</p>\n<pre class="hb-text" data-search-exclude {_REGION}"{e(who)}">'
                   f'{e(m.get("content") or "")}</pre>\n')
    return "".join(out)


def _show_judgment(judgment) -> str:
    return ", ".join(map(str, judgment)) if isinstance(judgment, list) else str(judgment)


def case_outputs(case, data, link) -> Markup:
    """Every model's block on a case page (the hot loop of a build: cases × models)."""
    e = _esc
    ds_responses = link.rows("responses")  # "": no public Datasette, no link
    titles = criterion_titles(case.evaluation)
    out = []
    for m in data.every_model:
        rs = data.results(case.id, m.id)
        if not rs and m.imported_from is not None:
            continue  # an imported source holds the conversations it holds: no "no result" for the others
        out.append(f'<div class="hb-output" id="model-{e(m.slug)}">\n<p class="hb-output-head"><a href="'
                   f'{e(link.model(m.slug))}"><strong>{e(m.name)}</strong></a> <code>{e(m.id)}</code></p>\n')
        if m.imported_note:
            out.append(f'<p class="hb-imported"><strong>{e(m.imported_note)}.</strong></p>\n')
        if not rs:
            out.append("<p>No result for this case.</p>\n")
        out.extend(model_output(res, ds_responses, titles) for res in rs)
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


#: Countries by name (ISO 3166-1 alpha-2 → English short name): those of the shipped crisis-service registry and
#: the other English-speaking countries a registry is likely to add; an unknown code is shown as it is.
COUNTRY_NAMES = {
    "AU": "Australia", "CA": "Canada", "GB": "United Kingdom", "IE": "Ireland", "NZ": "New Zealand",
    "US": "United States", "IN": "India", "ZA": "South Africa", "SG": "Singapore", "PH": "Philippines",
    "NG": "Nigeria", "KE": "Kenya", "HK": "Hong Kong", "MT": "Malta", "JM": "Jamaica",
}


def country_name(code: str | None) -> str:
    """"United Kingdom (GB)" for "GB": the name a reader knows, the code beside it; "no country" for none."""
    if not code:
        return "no country"
    name = COUNTRY_NAMES.get(str(code).upper())
    return f"{name} ({code})" if name else str(code)


#: The built-in evaluators in the words a clinician would use (a plugin's own `summary` is used for the others).
PLAIN_EVALUATORS = {
    "sqe": "an LLM judge reads the reply and answers the written criteria below",
    "list_includes": "a rule reads the labels the reply gave itself: every required label must be there",
    "tag_threshold": "a rule reads the labels the reply gave itself: enough of the expected ones, few others",
    "category_match": "a rule reads the category the reply chose: it must be the expected one",
}


def evaluator_summary(type_: str | None) -> str | None:
    """What an evaluator checks, in words (its registered `summary`), for beside its code; None when unknown."""
    if not type_:
        return None
    if type_ in PLAIN_EVALUATORS:
        return PLAIN_EVALUATORS[type_]
    from helmbench.plugins import registry

    found = registry.evaluators().get(type_)
    return getattr(found, "summary", None) or None if found is not None else None


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
                       short_hash=short_hash, target_facts=target_facts, pvalue=format_p, person_message=person_message,
                       bar_row=bar_row, pretty_json=pretty_json, signed=signed, natural=natural_key,
                       authored_markdown=authored_markdown)
    env.globals.update(verdict_badge=verdict_badge, urlencode=urlencode, case_outputs=case_outputs,
                       evaluator_summary=evaluator_summary, shown_verdict=shown_verdict, plain_reason=plain_reason,
                       criterion_titles=criterion_titles, country_name=country_name, case_title=case_title,
                       name_codes=name_codes, criterion_title=criterion_title, severity_bucket=severity_bucket)
    return env


@lru_cache(maxsize=1)
def _authored_markdown():
    """CommonMark for authored text (a criterion's body): raw HTML off (escaped as text), images off (nothing is
    fetched from outside the site), link targets checked by markdown-it (no `javascript:`)."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False}).disable("image")
    # a criterion's `## Evaluation criteria` is a label inside the page's own section, not a heading of the page
    # (which would break the heading order a screen reader navigates by)
    md.renderer.rules["heading_open"] = lambda *a: '<p class="hb-criterion-heading"><strong>'
    md.renderer.rules["heading_close"] = lambda *a: "</strong></p>\n"
    return md


def authored_markdown(text: str | None) -> Markup:
    """A criterion's text as the judge reads it, rendered as a reader expects Markdown to look (it was shown raw,
    `**PASS**:` and all): a stranger's pull request writes it, so no HTML of its own reaches the page."""
    return Markup(_authored_markdown().render(str(text or "")))


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
