"""What an edit invalidates (DESIGN §3): `request_hash` covers what the model sees, `hash`
covers request + evaluation, and scoring metadata (severity, difficulty, weight, titles)
is outside both, so re-scoring never costs a model or judge call."""

from __future__ import annotations

from pathlib import Path

import pytest

from helmbench.manifest import compile_tree

from ._util import cases_by_id, read_lines

P1 = "scenarios/P1/B1/S1--late-planning"


def _edit(tree: Path, rel: str, old: str, new: str) -> None:
    path = tree / rel
    raw = path.read_bytes()
    assert old.encode() in raw, f"{old!r} not in {rel}"
    path.write_bytes(raw.replace(old.encode(), new.encode(), 1))


def _compile_before_after(tree: Path, tmp_path: Path, edit) -> tuple[dict, dict, dict, dict]:
    before = compile_tree(tree, tmp_path / "before").path
    edit(tree)
    after = compile_tree(tree, tmp_path / "after").path
    return cases_by_id(before), cases_by_id(after), read_lines(before)[0], read_lines(after)[0]


def _changed(a: dict, b: dict, key: str) -> set[str]:
    assert a.keys() == b.keys()
    return {cid for cid in a if a[cid][key] != b[cid][key]}


def test_editing_one_perturbation_invalidates_exactly_the_cases_using_it(tree, tmp_path):
    a, b, ha, hb = _compile_before_after(
        tree, tmp_path, lambda t: _edit(t, f"{P1}/perturbations.md", "goodbye note to my mum", "goodbye note to my dad"))
    using = {cid for cid, c in a.items() if c["perturbation"] == "P1-B1-S1-PT2"}
    assert len(using) == 4  # 2 conditions × 2 user contexts
    assert _changed(a, b, "request_hash") == using
    assert _changed(a, b, "hash") == using
    assert all("my dad" in b[cid]["request"]["messages"][0]["content"] for cid in using)
    assert ha["manifest_hash"] != hb["manifest_hash"]
    # sources are metadata outside the hashes: the file's sha256 changes for every case reading it
    readers = {cid for cid, c in a.items() if c["scenario"] == "P1-B1-S1"}
    assert _changed(a, b, "sources") == readers


def test_editing_a_shared_condition_invalidates_every_case_of_that_condition(tree, tmp_path):
    a, b, _, _ = _compile_before_after(
        tree, tmp_path, lambda t: _edit(t, f"{P1}/conditions.md", "You are terse.", "You are brief."))
    using = {cid for cid, c in a.items() if c["condition"] == "P1-B1-S1-C2"}
    assert len(using) == 4
    assert _changed(a, b, "request_hash") == _changed(a, b, "hash") == using


def test_editing_a_criterion_rejudges_without_new_model_calls(tree, tmp_path):
    a, b, _, _ = _compile_before_after(
        tree, tmp_path, lambda t: _edit(t, "scenarios/P3/B1/S1/CR2.md", "FAIL if it diagnoses", "FAIL if it labels"))
    scenario = {cid for cid, c in a.items() if c["scenario"] == "P3-B1-S1"}
    assert len(scenario) == 2
    assert _changed(a, b, "hash") == scenario
    assert _changed(a, b, "request_hash") == set()
    assert all(b[cid]["evaluation"]["criteria"][1]["text"].endswith("FAIL if it labels.") for cid in scenario)


def test_editing_an_expected_value_changes_hash_not_request_hash(tree, tmp_path):
    def edit(t):
        _edit(t, "scenarios/P2-B1-S1--hand-off/S1.md", "evaluation:\n  type: category_match\n",
              "evaluation:\n  type: category_match\n  expected: [HANDOFF, ROUTINE]\n")

    a, b, _, _ = _compile_before_after(tree, tmp_path, edit)
    scenario = {cid for cid, c in a.items() if c["scenario"] == "P2-B1-S1"}
    assert _changed(a, b, "hash") == scenario and _changed(a, b, "request_hash") == set()


def test_editing_the_schema_changes_the_request(tree, tmp_path):
    a, b, _, _ = _compile_before_after(
        tree, tmp_path, lambda t: _edit(t, f"{P1}/S1.json", '"enum": ["ASSISTANCE", "TASK"]',
                                        '"enum": ["ASSISTANCE", "TASK", "CHAT"]'))
    scenario = {cid for cid, c in a.items() if c["scenario"] == "P1-B1-S1"}
    assert _changed(a, b, "request_hash") == _changed(a, b, "hash") == scenario


def test_changing_only_line_endings_changes_no_hash(tree, tmp_path):
    def to_crlf(t):
        path = t / f"{P1}/perturbations.md"
        path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes().replace(b"\n", b"\r\n"))

    a, b, ha, hb = _compile_before_after(tree, tmp_path, to_crlf)
    assert _changed(a, b, "hash") == _changed(a, b, "request_hash") == set()
    assert ha["manifest_hash"] == hb["manifest_hash"]


@pytest.mark.parametrize("rel, old, new, field, component, sample, before, after", [
    (f"{P1}/perturbations.md", "severity: 5", "severity: 6", "severity", "P1-B1-S1-PT1", "P1-B1-S1-C1-U2-PT1",
     {"perturbation": 5, "user_context": 3, "base": 8}, {"perturbation": 6, "user_context": 3, "base": 9}),
    (f"{P1}/user-contexts.md", "severity: 3", "severity: -1", "severity", "P1-B1-S1-U2", "P1-B1-S1-C1-U2-PT1",
     {"perturbation": 5, "user_context": 3, "base": 8}, {"perturbation": 5, "user_context": -1, "base": 4}),
    (f"{P1}/conditions.md", "difficulty: 3", "difficulty: 9", "difficulty", "P1-B1-S1-C2", "P1-B1-S1-C2-U1-PT1", 3, 9),
    ("benchmark.yml", "weight: 7.5", "weight: 2", "weight", "P2-B1", "P2-B1-S1-C1-PT1", 7.5, 2),
])
def test_scoring_metadata_edits_change_no_hash(tree, tmp_path, rel, old, new, field, component, sample, before, after):
    """Documented behaviour: severity, difficulty and weight are outside `hash` and
    `request_hash`, so stored responses and verdicts stay valid; the field, the catalog and
    so the manifest hash change (a manifest that scores differently is another manifest)."""
    a, b, ha, hb = _compile_before_after(tree, tmp_path, lambda t: _edit(t, rel, old, new))
    assert _changed(a, b, "hash") == _changed(a, b, "request_hash") == set()
    assert ha["manifest_hash"] != hb["manifest_hash"]
    assert ha["catalog_hash"] != hb["catalog_hash"]
    touched = {cid for cid, c in a.items()
               if component in (c["perturbation"], c["user_context"], c["condition"], c["behaviour"])}
    assert sample in touched and _changed(a, b, field) == touched
    assert a[sample][field] == before and b[sample][field] == after


def test_editing_a_title_changes_only_the_catalog(tree, tmp_path):
    a, b, ha, hb = _compile_before_after(
        tree, tmp_path, lambda t: _edit(t, f"{P1}/conditions.md", "# C1 — Plain assistant", "# C1 — Default assistant"))
    assert _changed(a, b, "hash") == _changed(a, b, "request_hash") == set()
    assert hb["catalog"]["components"]["P1-B1-S1-C1"]["title"] == "Default assistant"
    assert ha["manifest_hash"] != hb["manifest_hash"] and ha["catalog_hash"] != hb["catalog_hash"]
