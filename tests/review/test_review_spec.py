"""benchmark.yml `calibration:` is checked by lint (at its line), carried by the manifest, and used by agreement."""

from __future__ import annotations

import shutil

from helmbench.lint import lint_tree
from helmbench.manifest import compile_tree
from helmbench.score.calibration import DEFAULT_MIN_KAPPA, DEFAULT_MIN_N, Threshold
from tests.review.review_pipeline import REPO


def _tree(tmp_path, extra: str):
    root = tmp_path / "bench"
    shutil.copytree(REPO / "benchmark", root)
    with open(root / "benchmark.yml", "a", encoding="utf-8") as f:
        f.write(extra)
    return root


def test_lint_names_a_bad_threshold_at_its_line(tmp_path):
    root = _tree(tmp_path, "calibration:\n  min_kappa: 1.5\n  min_n: 0\n  min_alpha: 0.8\n")
    diags = [d for d in lint_tree(root)[1] if str(d.path).endswith("benchmark.yml")]
    lines = len((root / "benchmark.yml").read_text().splitlines())
    found = {(d.code, d.line) for d in diags}
    assert ("HB203", lines - 2) in found and ("HB203", lines - 1) in found, diags
    assert any(d.line == lines and d.is_error for d in diags), "an unknown key is an error too"


def test_the_threshold_travels_in_the_manifest(tmp_path):
    root = _tree(tmp_path, "calibration:\n  min_kappa: 0.7\n  min_n: 40\n")
    assert not [d for d in lint_tree(root)[1] if d.is_error]
    header = compile_tree(root, tmp_path / "build").header
    assert header["catalog"]["calibration"] == {"min_kappa": 0.7, "min_n": 40}
    assert Threshold.from_mapping({"min_kappa": 0.7, "min_n": 40}) == Threshold(0.7, 40)
    assert Threshold.from_mapping(None) == Threshold(DEFAULT_MIN_KAPPA, DEFAULT_MIN_N)


def test_a_tree_without_the_key_keeps_its_catalog(tmp_path):
    root = _tree(tmp_path, "")
    assert "calibration" not in compile_tree(root, tmp_path / "build").header["catalog"]


def test_agreement_uses_the_manifests_threshold(judged_db):
    import json
    import sqlite3

    from helmbench.score.calibration import load_calibration

    conn = sqlite3.connect(judged_db["db"])
    header = json.loads(conn.execute("SELECT header_json FROM manifests").fetchone()[0])
    header["catalog"]["calibration"] = {"min_kappa": 0.8, "min_n": 5}  # as a tree declaring it compiles
    with conn:
        conn.execute("UPDATE manifests SET header_json = ?", [json.dumps(header)])
    assert load_calibration(conn).threshold == Threshold(0.8, 5)
    conn.close()
