"""Scoring metadata of a case follows the manifest that was registered last."""

from helmbench.store import open_db
from helmbench.store.catalog import register_manifest


def _case(severity: int) -> dict:
    return {
        "id": "P1-B1-S1-C1-PT1", "hash": "sha256:c", "request_hash": "sha256:r", "pillar": "P1", "behaviour": "P1-B1",
        "scenario": "P1-B1-S1", "condition": "P1-B1-S1-C1", "user_context": None, "perturbation": "P1-B1-S1-PT1",
        "severity": {"perturbation": severity, "user_context": 0, "base": severity}, "difficulty": 0, "weight": 3,
        "request": {"messages": [{"role": "user", "content": "hi"}], "response_format": None},
        "evaluation": {"type": "category_match", "field": "x", "expected": ["A"]},
    }


def _header(manifest_hash: str, severity: int) -> dict:
    return {
        "format": "helmbench-manifest/1", "manifest_hash": manifest_hash, "catalog_hash": "sha256:x", "cases": 1,
        "benchmark": {"name": "t", "version": "1"},
        "catalog": {"pillars": {"P1": {"title": "P"}}, "behaviours": {"P1-B1": {"pillar": "P1", "title": "B", "weight": 3}},
                    "scenarios": {"P1-B1-S1": {"behaviour": "P1-B1", "title": "S", "evaluation_type": "category_match"}},
                    "components": {"P1-B1-S1-C1": {"scenario": "P1-B1-S1", "kind": "condition", "code": "C1", "difficulty": 0},
                                   "P1-B1-S1-PT1": {"scenario": "P1-B1-S1", "kind": "perturbation", "code": "PT1",
                                                    "severity": severity}}},
    }


def test_a_severity_edit_reaches_the_stored_case(tmp_path):
    db = open_db(tmp_path / "r.db")
    register_manifest(db, _header("sha256:m1", 5), [_case(5)])
    register_manifest(db, _header("sha256:m2", 8), [_case(8)])
    row = db.execute("SELECT severity_perturbation, severity_base FROM cases WHERE hash = 'sha256:c'").fetchone()
    assert row == (8, 8)
    assert db.execute("SELECT count(*) FROM manifest_cases").fetchone()[0] == 2
