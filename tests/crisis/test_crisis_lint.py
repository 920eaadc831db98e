"""Lint of the crisis-service registry and of the user contexts the check reads: each finding at its line,
unverified and stale entries as notes (`--strict` passes), staleness judged on the date `--as-of` fixes."""

from __future__ import annotations

import datetime as dt
import json

from typer.testing import CliRunner

from crisis_trees import USER_CONTEXTS, crisis_tree
from helmbench.cli import app
from helmbench.lint import lint_tree

REGISTRY = """format: 1
version: "t1"
max_age_days: 30
countries:
  AU:
    name: Australia
    services:
      - name: Lifeline
        phone: ["13 11 14"]
        source: https://www.lifeline.org.au/
        verified_on: 2026-01-10
        verified_by: a reviewer
      - name: Typo line
        phone: ["13 11 41 4"]
        source: https://www.lifeline.org.au/
        verified_on: 2026-01-10
        verified_by: a reviewer
      - name: Suicide Call Back Service
        phone: ["1300 659 467"]
        source: https://www.suicidecallbackservice.org.au/
        verified_on:
  US:
    name: United States
    services:
      - name: 988 Suicide & Crisis Lifeline
        phone: ["988"]
        source: https://988lifeline.org/
        verified_on: 2026-01-20
"""


def found(diags, *codes):
    return sorted((d.code, d.severity, d.path, d.line) for d in diags if d.code in codes)


def test_registry_findings_each_at_its_line(tmp_path):
    root = crisis_tree(tmp_path / "b", registry=REGISTRY)
    _, diags = lint_tree(root, as_of=dt.date(2026, 2, 1))
    assert found(diags, "RES102", "RES103", "RES104") == [
        ("RES102", "error", "crisis-services.yml", 14),  # 13 11 41 4 is no Australian number
        ("RES103", "note", "crisis-services.yml", 21),  # verified_on empty
    ]
    (bad,) = [d for d in diags if d.code == "RES102"]
    assert bad.col == 17 and "`13 11 41 4` (Typo line) is not a valid number or short code for AU" in bad.message
    # a month later the checks of January are older than max_age_days: stale, a note
    _, later = lint_tree(root, as_of=dt.date(2026, 3, 1))
    assert [(d.line, d.severity) for d in later if d.code == "RES104"] == [(11, "note"), (16, "note"), (28, "note")]


def test_notes_do_not_fail_strict_and_the_shipped_registry_is_strict_clean(tmp_path):
    root = crisis_tree(tmp_path / "b")  # the shipped registry: nothing verified yet
    runner = CliRunner()
    result = runner.invoke(app, ["lint", "--strict", "--as-of", "2026-11-26", str(root)])
    assert result.exit_code == 0, result.output
    assert "RES103 (note)" in result.stdout and "0 error(s), 0 warning(s), " in result.stderr
    doc = json.loads(runner.invoke(app, ["lint", "--format", "json", str(root)]).stdout)
    assert doc["errors"] == doc["warnings"] == 0 and doc["notes"] == sum(d["code"] == "RES103" for d in doc["diagnostics"]) > 20
    github = runner.invoke(app, ["lint", "--strict", "--format", "github", str(root)])
    assert github.exit_code == 0 and "::notice file=" in github.stdout and "title=RES103::" in github.stdout
    bad = runner.invoke(app, ["lint", "--as-of", "26/11/2026", str(root)])
    assert bad.exit_code == 2 and "--as-of '26/11/2026' is not a date" in bad.output


def test_a_case_using_the_check_without_a_country_is_an_error_at_the_user_context(tmp_path):
    root = crisis_tree(tmp_path / "b", user_contexts=USER_CONTEXTS.replace("country: US\n", ""))
    _, diags = lint_tree(root)
    (d,) = [d for d in diags if d.code == "RES105"]
    assert (d.severity, d.path, d.line) == ("error", "scenarios/P2/B1/S1--real-resources/user-contexts.md", 11)
    assert "user context U2 has no `country`" in d.message


def test_a_country_or_audience_the_registry_does_not_know(tmp_path):
    contexts = USER_CONTEXTS.replace("country: US", "country: FR").replace("country: AU", "country: AU\naudience: veteran")
    _, diags = lint_tree(crisis_tree(tmp_path / "b", user_contexts=contexts))
    assert [(d.code, d.line, d.col) for d in diags if d.code == "RES106"] == [("RES106", 5, 11), ("RES106", 15, 10)]


def test_a_registry_outside_the_tree_is_never_read(tmp_path):
    outside = tmp_path / "elsewhere.yml"
    outside.write_text(REGISTRY, encoding="utf-8")
    root = crisis_tree(tmp_path / "b")
    cr1 = root / "scenarios" / "P2" / "B1" / "S1--real-resources" / "CR1.md"
    cr1.write_text(cr1.read_text().replace("  type: crisis_resources\n",
                                           "  type: crisis_resources\n  registry: ../elsewhere.yml\n"))
    _, diags = lint_tree(root)
    assert [(d.code, d.path, d.line) for d in diags if d.is_error] == [
        ("RES101", "scenarios/P2/B1/S1--real-resources/CR1.md", 5)]


def test_an_invalid_registry_is_reported_with_the_usual_codes(tmp_path):
    root = crisis_tree(tmp_path / "b", registry=REGISTRY.replace("    name: Australia\n", "    nme: Australia\n"))
    _, diags = lint_tree(root)
    assert ("HB201", "crisis-services.yml", 6) in [(d.code, d.path, d.line) for d in diags]


def test_the_shipped_registry_validates_against_its_published_json_schema():
    """`helmbench schema` writes crisis-services.schema.json for editors; the shipped file satisfies it."""
    import jsonschema
    import yaml

    from crisis_trees import SHIPPED_REGISTRY
    from helmbench.cli.schema_cmd import build_schemas

    schema = build_schemas()["crisis-services.schema.json"]
    data = yaml.safe_load(SHIPPED_REGISTRY.read_text(encoding="utf-8"))
    jsonschema.validate(json.loads(json.dumps(data, default=str)), schema)
    data["countries"]["AU"]["services"][0]["phne"] = ["000"]
    try:
        jsonschema.validate(json.loads(json.dumps(data, default=str)), schema)
    except jsonschema.ValidationError:
        pass
    else:
        raise AssertionError("an unknown key must break the schema")
    assert set(data["countries"]) >= {"AU", "CA", "GB", "IE", "NZ", "US"}  # every country the shipped user contexts use


FOREIGN = """format: 1
version: "t2"
countries:
  AU:
    name: Australia
    services:
      - name: Lifeline
        phone: ["13 11 14", "+1 866 488 7386"]
        sms: [{number: "1900 654 321"}]
        source: https://www.lifeline.org.au/
  UK:
    name: United Kingdom
    services:
      - name: Samaritans
        phone: ["116 123"]
        source: https://www.samaritans.org/
  US:
    name: United States
    services:
      - name: 988 Suicide & Crisis Lifeline
        phone: ["988", "1-900-555-0123"]
        source: https://988lifeline.org/
"""


def test_a_foreign_a_premium_rate_and_a_non_iso_country_are_refused_at_their_lines(tmp_path):
    """Under Australia's Lifeline, a US number (valid, but not Australian) and a premium-rate 1900 number are
    errors at their line:col; `UK` is no ISO 3166-1 code, and the hint names `GB`."""
    root = crisis_tree(tmp_path / "b", registry=FOREIGN,
                       user_contexts=USER_CONTEXTS.replace("country: US", "country: UK"))
    _, diags = lint_tree(root)
    got = [(d.code, d.severity, d.path, d.line, d.col) for d in diags if d.code in ("RES102", "RES107", "RES108")]
    assert got == [("RES102", "error", "crisis-services.yml", 8, 29),
                   ("RES107", "error", "crisis-services.yml", 9, 24),
                   ("RES108", "error", "crisis-services.yml", 11, 3),
                   ("RES107", "error", "crisis-services.yml", 21, 24)]
    by = {(d.code, d.line): d for d in diags}
    assert "`+1 866 488 7386` (Lifeline) is a number of US, not of AU" in by["RES102", 8].message
    assert "`1900 654 321` (Lifeline) is a premium-rate number, which no crisis line of AU uses" \
        in by["RES107", 9].message
    assert by["RES108", 11].hint == "`UK` is not an ISO 3166-1 alpha-2 code: write `GB`"
    (uk,) = [d for d in diags if d.code == "RES106"]
    assert uk.path.endswith("user-contexts.md") and (uk.line, uk.col) == (14, 10) and uk.hint.endswith("write `GB`")


def test_the_shipped_registry_has_no_number_lint_refuses():
    """Every number the shipped registry lists is of its entry's country and of a type a crisis line uses."""
    import yaml

    from crisis_trees import SHIPPED_REGISTRY
    from helmbench.crisis.services import is_country, number_problem

    data = yaml.safe_load(SHIPPED_REGISTRY.read_text(encoding="utf-8"))
    problems = [(cc, s["name"], n, number_problem(n, cc)) for cc, c in data["countries"].items() for s in c["services"]
                for n in [*s.get("phone", []), *(x["number"] for x in s.get("sms", []))] if number_problem(n, cc)]
    assert problems == [] and all(is_country(cc) for cc in data["countries"])
