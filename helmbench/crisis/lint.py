"""Lint of the crisis-service registry and of the user contexts the `crisis_resources` check reads.

- RES101 (error): the registry an evaluation names is not a file inside the benchmark folder.
- RES102 (error): a phone or text number that libphonenumber does not know as a number or short
  code OF the entry's country (a `+1` number under AU is the United States').
- RES103 (note): an entry nobody has checked against its source (`verified_on` empty). A note, so
  `lint --strict` stays green on a registry whose entries could not be checked yet, but every one
  is named on each run.
- RES104 (note): a check older than the registry's `max_age_days` (default 365) on the date lint
  judges by (`helmbench lint --as-of`, default today).
- RES105 (error): a case the check applies to has no user context, or its user context no
  `country`: nothing can be called local.
- RES106 (error): a user context's `country` (or `audience`) that the registry has no service for,
  or a `country` that is not ISO 3166-1 alpha-2 (`UK` gets a hint naming `GB`).
- RES107 (error): a number of a type no crisis line publishes (premium-rate, pager, voicemail,
  personal number; a premium-rate short code).
- RES108 (error): a registry country that is not an ISO 3166-1 alpha-2 code (`UK` for `GB`).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from pydantic import ValidationError

from helmbench.crisis.services import (
    DEFAULT_FILE,
    MAX_BYTES,
    RegistryFile,
    country_hint,
    is_country,
    number_problem,
    read_registry,
)
from helmbench.plugin_api import (
    Code,
    YamlError,
    evaluation_span,
    has_prompt,
    in_tree,
    key_span,
    load_yaml,
    scenario_file,
    validate,
    value_span,
)

TYPE = "crisis_resources"

RES101 = Code("RES101", "error", "crisis-service registry not found",
              "A `crisis_resources` evaluation names its registry (`registry:`, default `crisis-services.yml` at the "
              "benchmark's root); the file must exist inside the benchmark folder. A path that leads out of the "
              "folder (`..`, an absolute path, a symlink out) is never followed.",
              "evaluation: {type: crisis_resources, registry: ../elsewhere/services.yml}")
RES102 = Code("RES102", "error", "number not valid for the entry's country",
              "Every phone and text number of a registry entry must be a number (or short code) that "
              "libphonenumber knows as one of the entry's country, so a typo cannot make a real reply look "
              "fabricated, and another country's line (`+1 …` under AU) cannot pass as a local one.",
              "countries:\n  AU:\n    services:\n      - name: Lifeline\n        phone: [\"13 11 41 4\", \"+1 800 273 8255\"]")
RES103 = Code("RES103", "note", "registry entry not verified",
              "An entry whose `verified_on` is empty has not been checked against its `source` (the service's own "
              "page). It is still used, and the site marks it unverified; check it, then fill in `verified_on` and "
              "`verified_by`. A note: `lint --strict` does not fail on it.",
              "- name: Lifeline\n  source: https://www.lifeline.org.au/\n  verified_on:")
RES104 = Code("RES104", "note", "registry entry check is stale",
              "An entry was checked longer ago than the registry's `max_age_days` (default 365) before the date lint "
              "judges by (`helmbench lint --as-of DATE`, default today): services change numbers and hours. A note.",
              "max_age_days: 365\n...\n  verified_on: 2023-01-09")
RES105 = Code("RES105", "error", "crisis check without the user's country",
              "The `crisis_resources` check decides what is local from the case's user context: every user context "
              "of a scenario that uses it needs `country:` (an ISO 3166-1 alpha-2 code such as AU, GB, US), and the "
              "scenario needs user contexts.",
              "# U1\n---\nseverity: 0\n---\n## User profile\nPriya, 34, lives in Melbourne.   # no `country: AU`")
RES106 = Code("RES106", "error", "country or audience not in the registry",
              "A user context's `country` has no entry in the registry the check reads, so no reply could pass; or "
              "its `audience` is one no service of that country lists (only general services would count: check the "
              "spelling); or its `country` is no ISO 3166-1 alpha-2 code at all (`UK`: the hint says `GB`).",
              "# U1\n---\ncountry: NZ   # the registry lists AU, GB and US\n---")
RES107 = Code("RES107", "error", "number of a type no crisis line uses",
              "libphonenumber knows the number's type: a premium-rate number (the caller pays extra), a pager, "
              "a voicemail or a personal (follow-me) number, or a premium-rate short code, is no crisis service's "
              "published line. Check the number against the service's own page.",
              "countries:\n  AU:\n    services:\n      - name: Lifeline\n        phone: [\"1900 654 321\"]")
RES108 = Code("RES108", "error", "country code not ISO 3166-1",
              "The registry's countries are ISO 3166-1 alpha-2 codes, as user contexts' `country:` are: the "
              "United Kingdom is `GB` (not `UK`), Greece `GR` (not `EL`). A country under any other code could "
              "never be a user's.",
              "countries:\n  UK:\n    name: United Kingdom")
CODES = (RES101, RES102, RES103, RES104, RES105, RES106, RES107, RES108)


def registry_of(root: Path, name: str) -> RegistryFile | None:
    """The registry `name` inside `root`, or None when it is missing or unusable (lint says why)."""
    path = in_tree(root, name)
    if path is None:
        return None
    try:
        return read_registry(path)
    except (OSError, UnicodeDecodeError, ValueError, YamlError, ValidationError):
        return None


def _uses(sc) -> list[tuple[object, str, tuple]]:
    """(evaluation block, file, key path of the block) of every crisis_resources check of a scenario."""
    found = []
    if has_prompt(sc) and sc.meta.evaluation.type == TYPE:
        found.append((sc.meta.evaluation, scenario_file(sc), None))
    for cr in sc.criteria:
        ev = getattr(cr.meta, "evaluation", None) if cr.meta is not None else None
        if ev is not None and getattr(ev, "type", None) == TYPE:
            found.append((ev, cr.path, cr))
    return found


def _where(sc, owner, key: str):
    if owner is None:
        return evaluation_span(sc, key)
    return key_span(owner.frontmatter, "evaluation", key)


def crisis_registry(bench, out) -> None:
    """RES101-RES106 (and the registry file's own syntax and fields, with the usual codes)."""
    as_of = getattr(bench, "as_of", None) or dt.date.today()
    checked: dict[str, RegistryFile | None] = {}
    users = [(sc, uses) for sc in bench.scenarios if (uses := _uses(sc))]
    names = {ev.registry for _, uses in users for ev, _, _ in uses}
    if in_tree(bench.root, DEFAULT_FILE) is not None:
        names.add(DEFAULT_FILE)
    for name in sorted(names):
        checked[name] = _lint_file(bench.root, name, as_of, out)
    for sc, uses in users:
        for ev, path, owner in uses:
            if checked.get(ev.registry) is None and in_tree(bench.root, ev.registry) is None:
                out.add("RES101", path, _where(sc, owner, "registry" if "registry" in _keys(sc, owner) else "type"),
                        f"crisis-service registry `{ev.registry}` is not a file inside the benchmark folder",
                        hint=f"add {DEFAULT_FILE} at the benchmark's root (see `helmbench schema`), or correct "
                             "`registry:`")
        registry = next((checked.get(ev.registry) for ev, _, _ in uses if checked.get(ev.registry)), None)
        _lint_users(sc, registry, out)


def _keys(sc, owner) -> set:
    data = sc.frontmatter if owner is None else owner.frontmatter
    ev = data.get("evaluation") if isinstance(data, dict) else None
    return set(ev) if isinstance(ev, dict) else set()


def _lint_users(sc, registry: RegistryFile | None, out) -> None:
    if not sc.user_contexts:
        out.add("RES105", scenario_file(sc), 1,
                f"scenario {sc.key} uses the crisis_resources check but has no user contexts to give a country",
                hint="add user-contexts.md with `country:` in each user context's frontmatter")
        return
    for uc in sc.user_contexts:
        if uc.meta is None:
            continue  # its frontmatter is already reported
        if uc.meta.country is None:
            out.add("RES105", uc.path, uc.line,
                    f"user context {uc.code} has no `country`, which the crisis_resources check of {sc.key} needs",
                    hint="add `country: AU` (the ISO 3166-1 alpha-2 code of where the user lives) to its frontmatter")
            continue
        if not is_country(uc.meta.country):
            out.add("RES106", uc.path, value_span(uc.frontmatter, "country"),
                    f"country `{uc.meta.country}` is no country the crisis-service registry can list",
                    hint=country_hint(uc.meta.country))
            continue
        if registry is None:
            continue
        country = registry.countries.get(uc.meta.country)
        if country is None:
            out.add("RES106", uc.path, value_span(uc.frontmatter, "country"),
                    f"country `{uc.meta.country}` has no entry in the crisis-service registry",
                    hint=f"the registry lists {', '.join(sorted(registry.countries))}; add the country's services")
        elif uc.meta.audience and not any(uc.meta.audience in s.audience for s in country.services):
            out.add("RES106", uc.path, value_span(uc.frontmatter, "audience"),
                    f"no service of {uc.meta.country} in the registry lists the audience `{uc.meta.audience}`",
                    hint="audiences listed there: " + ", ".join(sorted({a for s in country.services for a in s.audience})))


def _lint_file(root: Path, name: str, as_of: dt.date, out) -> RegistryFile | None:
    path = in_tree(root, name)
    if path is None:
        return None
    if path.stat().st_size > MAX_BYTES:
        out.add("HB152", name, 1, f"file of {path.stat().st_size:,} bytes is over the {MAX_BYTES:,}-byte limit; "
                                  "it is not read")
        return None
    try:
        data, _ = load_yaml(path.read_text(encoding="utf-8"))
    except YamlError as exc:
        out.add(exc.code, name, exc.line, exc.message, col=exc.col)
        return None
    except (OSError, UnicodeDecodeError) as exc:
        out.add("HB103", name, 1, f"cannot read the registry: {exc}")
        return None
    registry = validate(RegistryFile, data, name, out, what="crisis-service registry")
    if registry is None:
        return None
    for cc, country in registry.countries.items():
        iso = is_country(cc)
        if not iso:
            out.add("RES108", name, key_span(data, "countries", cc),
                    f"country `{cc}` ({country.name}) is not an ISO 3166-1 alpha-2 code", hint=country_hint(cc))
        for i, service in enumerate(country.services):
            at = ("countries", cc, "services", i)
            numbers = [("phone", j, n) for j, n in enumerate(service.phone)]
            numbers += [("sms", j, s.number) for j, s in enumerate(service.sms)]
            for key, j, number in numbers if iso else ():
                problem = number_problem(number, cc)
                if problem is not None:
                    code, what = problem
                    where = value_span(data, *at, key, j, *(("number",) if key == "sms" else ()))
                    out.add(code, name, where, f"`{number}` ({service.name}) {what}",
                            hint="write the number as the service publishes it on its own page, for its own country"
                            if code == "RES102" else "check the number on the service's own page")
            if service.verified_on is None:
                out.add("RES103", name, key_span(data, *at, "verified_on") if "verified_on" in data["countries"][cc]
                        ["services"][i] else key_span(data, *at, "name"),
                        f"{service.name} ({cc}) has not been verified against its source {service.source}",
                        hint="check every field on the service's own page, then set `verified_on` and `verified_by`")
            elif (as_of - service.verified_on).days > registry.max_age_days:
                out.add("RES104", name, value_span(data, *at, "verified_on"),
                        f"{service.name} ({cc}) was last verified on {service.verified_on}, more than "
                        f"{registry.max_age_days} days before {as_of}",
                        hint="check it against its source again and update `verified_on`")
    return registry
