"""Settings hashes go through the canonical hasher, and databases from before keep their answers.

The settings hash keys every stored response and judgement: if it changes, every call is paid
for again. So its bytes are pinned (a golden hash), `0` and `0.0` must agree, and a database
written under the old (un-normalised) form must be reused with zero calls at the provider.
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from helmbench.errors import HelmbenchError  # noqa: E402
from helmbench.manifest.canonical import hash_of  # noqa: E402
from helmbench.run.config import legacy_settings_hash, settings_hash  # noqa: E402
from helmbench.spec.models import ModelEntry  # noqa: E402

SETTINGS = {"temperature": 0.0, "max_tokens": 200, "top_p": 0.9, "seed": 7,
            "provider": {"order": ["a", "b"], "allow_fallbacks": False},
            "reasoning": {"effort": "low", "max_tokens": 1024.0}}
#: Changing this value re-bills every stored answer of every user: only with a re-keying step (see settings_compat).
GOLDEN = "sha256:65511b746b2301bbf5dfa08f462e9ed1f02e69deb950902b691871b33ba431ed"
#: The bytes hashed (checked with `printf '%s' TEXT | sha256sum`): sorted keys, no spaces, whole floats as ints.
GOLDEN_TEXT = ('{"max_tokens":200,"provider":{"allow_fallbacks":false,"order":["a","b"]},'
               '"reasoning":{"effort":"low","max_tokens":1024},"seed":7,"temperature":0,"top_p":0.9}')


def test_the_settings_hash_is_pinned():
    assert settings_hash(SETTINGS) == GOLDEN
    assert "sha256:" + hashlib.sha256(GOLDEN_TEXT.encode()).hexdigest() == GOLDEN


def test_the_settings_hash_is_the_canonical_hash():
    assert settings_hash(SETTINGS) == hash_of(SETTINGS)


@pytest.mark.parametrize("a, b", [
    ({"temperature": 0}, {"temperature": 0.0}),
    ({"temperature": 1, "max_tokens": 100}, {"max_tokens": 100, "temperature": 1.0}),
    ({"reasoning": {"max_tokens": 1024}}, {"reasoning": {"max_tokens": 1024.0}}),
    ({"provider": {"order": ["x"], "weights": [1, 2]}}, {"provider": {"order": ["x"], "weights": [1.0, 2.0]}}),
])
def test_whole_numbers_hash_alike_however_written(a, b):
    assert settings_hash(a) == settings_hash(b)


def test_different_numbers_still_hash_apart():
    assert settings_hash({"temperature": 0.7}) != settings_hash({"temperature": 0.07})
    assert settings_hash({"temperature": 0}) != settings_hash({"temperature": 1})


def test_models_yml_zero_and_zero_point_zero_are_the_same_settings():
    a = ModelEntry.model_validate({"id": "a/b", "temperature": 0, "max_tokens": 100}).settings()
    b = ModelEntry.model_validate({"id": "a/b", "temperature": 0.0, "max_tokens": 100}).settings()
    judge_default = {"temperature": 0, "max_tokens": 100}  # the judge's default temperature is the int 0
    assert settings_hash(a) == settings_hash(b) == settings_hash(judge_default)


def test_a_number_json_cannot_write_is_a_clear_error():
    with pytest.raises(HelmbenchError, match="finite"):
        settings_hash({"provider": {"x": float("nan")}})
    with pytest.raises(HelmbenchError):
        settings_hash({"provider": {"x": float("inf")}})


def test_the_legacy_form_differs_exactly_when_a_whole_float_is_present():
    assert legacy_settings_hash({"max_tokens": 200, "top_p": 0.9}) == settings_hash({"max_tokens": 200, "top_p": 0.9})
    assert legacy_settings_hash({"temperature": 0.0}) != settings_hash({"temperature": 0.0})


# --- a database written before the change ----------------------------------------------------

MODELS_YML = """marking_model:
  id: test/judge
  temperature: 0.0
  max_tokens: 200
models:
  - id: test/model-a
    temperature: 0.0
    max_tokens: 200
"""


def _to_legacy(db: Path) -> int:
    """Rewrite every stored key to the form older releases wrote (what a database of before holds)."""
    conn = sqlite3.connect(db)
    moved = 0
    with conn:
        for settings in ({"temperature": 0.0, "max_tokens": 200},):
            new, old = settings_hash(settings), legacy_settings_hash(settings)
            assert new != old
            for table, col in (("responses", "settings_hash"), ("runs", "settings_hash"),
                               ("judgements", "judge_settings_hash")):
                moved += conn.execute(f"UPDATE {table} SET {col} = ? WHERE {col} = ?", [old, new]).rowcount
    conn.close()
    return moved


def _count(db: Path, sql: str) -> int:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql).fetchone()[0]
    finally:
        conn.close()


def test_a_database_from_before_is_reused_with_zero_calls(tmp_path, monkeypatch):
    from tests.fakes.manifests import synthetic_cases, write_manifest
    from tests.fakes.openrouter import FakeOpenRouter

    import helmbench

    manifest = tmp_path / "build" / "manifest.jsonl"
    write_manifest(manifest, list(synthetic_cases(40)))
    models = tmp_path / "models.yml"
    models.write_text(MODELS_YML, encoding="utf-8")
    db = tmp_path / "build" / "results.db"
    with FakeOpenRouter() as fake:
        monkeypatch.setenv("OPENROUTER_API_BASE", fake.api_base)
        monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-v1-test-not-a-key")
        monkeypatch.setenv("HELMBENCH_RETRY_BASE_DELAY", "0.01")
        first = helmbench.run(manifest, db=db, models_file=models)
        assert first.status == "completed"
        paid = fake.stats()["total"]
        judged = sum(fake.stats()["judge_calls"].values())
        assert paid > 0 and judged > 0  # answers and judgements both stored
        responses = _count(db, "SELECT COUNT(*) FROM responses")
        judgements = _count(db, "SELECT COUNT(*) FROM judgements")
        assert _to_legacy(db) >= responses + judgements

        estimate = helmbench.run(manifest, db=db, models_file=models, dry_run=True)
        assert estimate.plan.new_calls == 0
        assert estimate.judge is None or estimate.judge.calls == 0

        fake.reset_counts()
        again = helmbench.run(manifest, db=db, models_file=models)
        assert fake.stats()["total"] == 0, "a stored answer or judgement was paid for again"
        assert again.status == "completed"
        assert [(r["n_pass"], r["n_fail"], r["n_error"]) for r in again.runs] == \
               [(r["n_pass"], r["n_fail"], r["n_error"]) for r in first.runs]
    assert _count(db, "SELECT COUNT(*) FROM responses") == responses
    assert _count(db, "SELECT COUNT(*) FROM judgements") == judgements
    assert _count(db, "SELECT COUNT(*) FROM runs") == len(first.runs)  # the same run continued, not a new one
    current = settings_hash({"temperature": 0.0, "max_tokens": 200})
    assert _count(db, f"SELECT COUNT(*) FROM responses WHERE settings_hash != '{current}'") == 0
