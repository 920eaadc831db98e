"""Rules about models.yml.

Responses are stored per model id, so a repeated id would run and pay for the same model
twice under one name; judged scenarios cannot be scored without a judge.
"""

from __future__ import annotations

import re

from helmbench.diagnostics import Collector
from helmbench.lint.rulebook import rule
from helmbench.lint.where import value_span
from helmbench.spec.tree import Benchmark
from helmbench.spec.yamlio import LineDict


@rule("HB605")
def duplicate_model_ids(bench: Benchmark, out: Collector) -> None:
    data = bench.models_data
    models = data.get("models") if isinstance(data, LineDict) else None
    if not isinstance(models, list) or bench.models_source is None:
        return
    seen: dict[str, int] = {}
    for entry in models:
        if not isinstance(entry, LineDict) or not isinstance(entry.get("id"), str):
            continue
        at = value_span(entry, "id")
        line = at[0]
        if entry["id"] in seen:
            out.add("HB605", bench.models_source.path, at,
                    f"model `{entry['id']}` is listed twice (first at line {seen[entry['id']]})",
                    hint="remove one of the two entries")
        else:
            seen[entry["id"]] = line
    duplicate_judges(bench, out)


#: The lists of models.yml whose entries must differ, and what a repeated one would do.
_LISTS = {"marking_model": ("judge", "the `marking_model` ensemble", "it would get two votes"),
          "user_model": ("simulated user", "`user_model`",
                         "its conversations would be stored once and counted twice in the pooled figure")}


def duplicate_judges(bench: Benchmark, out: Collector) -> None:
    """An ensemble (`marking_model` as a list) naming one judge twice would give it two votes; a list of
    simulated users (`user_model`) naming one twice would weigh its conversations double."""
    data = bench.models_data
    if not isinstance(data, LineDict) or bench.models_source is None:
        return
    for key, (what, where, why) in _LISTS.items():
        entries = data.get(key)
        if not isinstance(entries, list):
            continue
        seen: dict[str, int] = {}
        for i, entry in enumerate(entries):
            entry_id = entry.get("id") if isinstance(entry, LineDict) else entry
            if not isinstance(entry_id, str):
                continue
            at = value_span(entry, "id") if isinstance(entry, LineDict) else value_span(data, key, i)
            if entry_id in seen:
                out.add("HB605", bench.models_source.path, at,
                        f"{what} `{entry_id}` is listed twice in {where} (first at line {seen[entry_id]}): {why}",
                        hint="remove one of the two entries")
            else:
                seen[entry_id] = at[0]


@rule("HB606")
def judge_present(bench: Benchmark, out: Collector) -> None:
    data = {} if bench.models_data is None else bench.models_data  # an empty file names no judge
    if bench.models_source is None or not isinstance(data, dict) or data.get("marking_model"):
        return
    judged = [sc.key for sc in bench.scenarios if sc.evaluation_type == "sqe"]
    if judged:
        more = f" and {len(judged) - 1} more" if len(judged) > 1 else ""
        out.add("HB606", bench.models_source.path, 1,
                f"scenario {judged[0]}{more} is judged (sqe), but models.yml has no `marking_model`",
                hint="add `marking_model: <openrouter id>` to models.yml")


@rule("HB609")
def judge_of_own_family(bench: Benchmark, out: Collector) -> None:
    """A model under test judged by a relative: flagged at the model's `id`, naming the judge."""
    from helmbench.spec.families import conflicts, family_of

    data, parsed = bench.models_data, bench.models
    if bench.models_source is None or parsed is None or not isinstance(data, LineDict):
        return
    models = data.get("models")
    if not isinstance(models, list):
        return
    found = conflicts([j.id for j in parsed.judges], [m.id for m in parsed.models], parsed.families)
    reported: set[str] = set()
    for entry in models:
        model_id = entry.get("id") if isinstance(entry, LineDict) else None
        if model_id not in found or model_id in reported:
            continue
        reported.add(model_id)
        judges = ", ".join(f"`{j}`" for j in found[model_id])
        out.add("HB609", bench.models_source.path, value_span(entry, "id"),
                f"model `{model_id}` is judged by {judges} of its own family "
                f"`{family_of(model_id, parsed.families)}`: a conflict of interest",
                hint="judge with a model from a family not under test (or an ensemble across families); "
                     "`families:` in models.yml corrects a wrong family")


_KEY_SHAPED = re.compile(r"(?:sk|pk|rk|hf|ghp|gho|xox[abp]|AKIA|AIza|Bearer\s+[A-Za-z0-9])[-_A-Za-z0-9]{6,}"
                         r"|[A-Za-z0-9+/=_\-]{24,}")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
_SECRET_KEYS = ("api_key", "key", "token", "secret", "password")


def looks_like_secret(value: str) -> bool:
    """Key-shaped: a known key prefix, or a long run of letters and digits mixed (an environment variable's
    name is letters, digits and underscores only, and is not a key by shape unless it mixes cases and digits
    at length)."""
    text = value.strip()
    if _ENV_NAME.match(text) and not (len(text) >= 24 and re.search(r"[a-z]", text) and re.search(r"\d", text)):
        return False
    return bool(_KEY_SHAPED.search(text)) and bool(re.search(r"\d", text))


def _entries(data: LineDict):
    for name in ("marking_model", "user_model", "generator_model", "models"):
        value = data.get(name)
        for entry in value if isinstance(value, list) else [value]:
            if isinstance(entry, LineDict):
                yield entry


#: A query parameter that carries a credential (`?key=…`, `&access_token=…`, `?sig=…`).
_CREDENTIAL_QUERY = re.compile(r"(?:^|&)(?:[\w.-]*(?:key|token|secret|password|passwd|auth|sig|signature|"
                               r"credential)[\w.-]*)=[^&]+", re.IGNORECASE)


@rule("HB610")
def literal_secrets(bench: Benchmark, out: Collector) -> None:
    """A key written where the name of its environment variable belongs, flagged at its line (never repeated)."""
    data = bench.models_data
    if bench.models_source is None or not isinstance(data, LineDict):
        return
    path = bench.models_source.path
    for entry in _entries(data):
        where = f"`{entry.get('id')}`" if isinstance(entry.get("id"), str) else "an entry"
        env = entry.get("api_key_env")
        if isinstance(env, str) and (looks_like_secret(env) or not _ENV_NAME.match(env.strip())):
            out.add("HB610", path, value_span(entry, "api_key_env"),
                    f"{where}: `api_key_env` holds what looks like a key, not the name of an environment variable",
                    hint="write the variable's name (api_key_env: LOCAL_KEY) and export LOCAL_KEY=<the key>")
        for name in _SECRET_KEYS:
            if isinstance(entry.get(name), str):
                out.add("HB610", path, value_span(entry, name),
                        f"{where}: `{name}` would put a secret in models.yml",
                        hint="name its environment variable instead: api_key_env: LOCAL_KEY")
        http = entry.get("http")
        for holder, key in ((entry, "api_base"), (http, "url")):
            url = holder.get(key) if isinstance(holder, LineDict) else None
            if isinstance(url, str) and _CREDENTIAL_QUERY.search(url.split("#")[0].partition("?")[2]):
                out.add("HB610", path, value_span(holder, key),
                        f"{where}: `{key}` carries a credential in its query string, which reaches the manifest, the "
                        "database and the site with the URL",
                        hint="send it in a header read from the environment: headers: {X-Api-Key: ${BOT_KEY}}")
        headers = http.get("headers") if isinstance(http, LineDict) else None
        if isinstance(headers, LineDict):
            for header, value in headers.items():
                literal = re.sub(r"\$\{[A-Za-z_][A-Za-z0-9_]*\}", "", value) if isinstance(value, str) else ""
                if literal and looks_like_secret(literal):
                    out.add("HB610", path, value_span(headers, header),
                            f"{where}: header `{header}` holds what looks like a secret value",
                            hint=f"read it from the environment: {header}: Bearer ${{BOT_TOKEN}}")
