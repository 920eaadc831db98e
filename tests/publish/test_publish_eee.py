"""`helmbench export --format eee`: a run with single-answer and conversation scenarios, exported as Every
Eval Ever records, passes the format's own validator (`python -m every_eval_ever validate`) on every
file written, carries the report's numbers, and exports again to the same files."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conversation.conv_runs import fake_openrouter, run_tree, two_model_tree

from helmbench.cli import app
from helmbench.manifest import compile_tree
from helmbench.publish.eee import SCHEMA_VERSION, component, model_folders

REPO = Path(__file__).resolve().parents[2]
OTHER = "other-lab/model-b:free"


def _validator_python() -> str | None:
    """An interpreter with `every_eval_ever` installed: this one, or HELMBENCH_EEE_PYTHON (the package
    needs Python ≥ 3.12, so on a 3.11 machine it lives in a venv of its own: `make eee-validator`)."""
    for python in (sys.executable, os.environ.get("HELMBENCH_EEE_PYTHON"), str(REPO / ".venv-eee" / "bin" / "python")):
        found = python and (Path(python).exists() or shutil.which(python))
        if found and subprocess.run([python, "-c", "import every_eval_ever"], capture_output=True).returncode == 0:
            return python
    return None


VALIDATOR = _validator_python()
# Skipped on a developer's machine without a Python 3.12; under CI (`make test` builds .venv-eee) a missing
# validator is a failure, never a skip presented as a pass.
needs_validator = pytest.mark.skipif(VALIDATOR is None and not os.environ.get("CI"),
                                     reason="every_eval_ever is not installed (it needs Python >= 3.12): "
                                            "`make eee-validator`, or HELMBENCH_EEE_PYTHON=<a python that has it>")


def _validator() -> str:
    assert VALIDATOR is not None, "every_eval_ever is not installed: `make eee-validator` (needs a Python 3.12)"
    return VALIDATOR


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """A tree with single-answer, judged and conversation scenarios, run by two models against the fake
    OpenRouter, then exported with the CLI."""
    root = tmp_path_factory.mktemp("eee")
    tree = two_model_tree(root / "bench", OTHER)
    (tree / "README.md").write_text("# Safety <b>bench</b>\n", encoding="utf-8")
    (tree / "benchmark.yml").unlink(missing_ok=True)
    compile_tree(tree, tree / "build")
    with fake_openrouter():
        assert run_tree(tree, tree / "build").status == "completed"
    out = root / "out"
    args = ["export", str(out), "--format", "eee", "--db", str(tree / "build/results.db"),
            "--manifest", str(tree / "build/manifest.jsonl")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    return {"tree": tree, "out": out, "args": args, "stdout": result.stdout}


def _files(out: Path) -> list[Path]:
    return sorted(p for p in out.rglob("*") if p.is_file())


def test_the_layout_is_the_datastores(exported):
    out = exported["out"]
    rel = [p.relative_to(out).as_posix() for p in _files(out)]
    folders = {r.rsplit("/", 1)[0] for r in rel}
    assert folders == {"data/Safety-b-bench-b/test/model-a", "data/Safety-b-bench-b/other-lab/model-b_free"}, folders
    assert len(rel) == 4 and sum(r.endswith("_samples.jsonl") for r in rel) == 2
    assert "2 record(s)" in exported["stdout"]


def test_records_carry_the_reports_numbers_and_both_interaction_types(exported):
    tree, out = exported["tree"], exported["out"]
    board = json.loads(CliRunner().invoke(app, ["report", "--db", str(tree / "build/results.db"), "--manifest",
                                                str(tree / "build/manifest.jsonl"), "--format", "json"]).stdout)
    rows = {r["model"]: r for r in board["leaderboard"]["rows"]} if "leaderboard" in board else \
        {r["model"]: r for r in board["rows"]}
    for aggregate_path in out.rglob("*-*-*-*-*[0-9a-f].json"):
        record = json.loads(aggregate_path.read_text(encoding="utf-8"))
        model = record["model_info"]["id"]
        assert record["schema_version"] == SCHEMA_VERSION
        score = record["evaluation_results"][0]
        assert score["score_details"]["score"] == pytest.approx(rows[model]["score"])
        assert [j["model_info"]["id"] for j in score["metric_config"]["llm_scoring"]["judges"]] == ["test/judge"]
        samples = [json.loads(line) for line in
                   (aggregate_path.parent / f"{aggregate_path.stem}_samples.jsonl").read_text().splitlines()]
        assert record["detailed_evaluation_results"]["total_rows"] == len(samples) == rows[model]["n_verdicts"]
        kinds = {s["interaction_type"] for s in samples}
        assert kinds == {"single_turn", "multi_turn"}, kinds
        multi = next(s for s in samples if s["interaction_type"] == "multi_turn")
        assert [m["turn_idx"] for m in multi["messages"]] == list(range(len(multi["messages"])))
        assert multi["evaluation"]["num_turns"] >= 2 and "output" not in multi
        assert any("token_usage" in s for s in samples)


def test_a_conversation_carries_the_judges_transcript_verdicts_as_its_evaluation(exported):
    """A judged conversation's sample: each judge's verdict on the whole transcript (judgements of output
    `transcript`, as stored) in its metadata and as non-terminal `llm_judge` answer attributions read at the
    transcript's last message, before the result's terminal verdict."""
    import sqlite3

    tree, out = exported["tree"], exported["out"]
    conn = sqlite3.connect(tree / "build/results.db")
    try:
        stored = {(m, c, s, cr): v for m, c, s, cr, v in conn.execute(
            "SELECT r.model, res.case_id, res.sample, j.criterion, rj.verdict FROM results res "
            "JOIN runs r ON r.id = res.run_id JOIN result_judgements rj ON rj.result_id = res.id "
            "JOIN judgements j ON j.id = rj.judgement_id WHERE j.output = 'transcript'")}
    finally:
        conn.close()
    assert stored, "the tree has no judged conversation: the test would prove nothing"
    seen = {}
    for path in out.rglob("*_samples.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            sample = json.loads(line)
            if sample["interaction_type"] != "multi_turn":
                assert "transcript_judgements" not in sample["metadata"]
                continue
            last = len(sample["messages"]) - 1
            steps, final = sample["answer_attribution"][:-1], sample["answer_attribution"][-1]
            assert final["is_terminal"] and final["extracted_value"] == sample["metadata"]["verdict"]
            assert not any(step["is_terminal"] for step in steps)
            for v in sample["metadata"]["transcript_judgements"]:
                seen[(sample["model_id"], sample["metadata"]["case_id"], sample["metadata"]["sample"],
                      v["criterion"])] = v["verdict"]
                assert v["judge"] == "test/judge" and v["justification"]
                assert {"turn_idx": last, "source": f"messages[0:{last + 1}]",
                        "extracted_value": f"{v['criterion']}: {v['verdict']} (test/judge)",
                        "extraction_method": "llm_judge", "is_terminal": False} in steps
            for cp in sample["metadata"]["checkpoints"]:
                if cp["turn"] is not None:
                    assert any(s["extracted_value"] == f"{cp['checkpoint']}: {cp['verdict']}" for s in steps)
    assert seen == stored


def test_exporting_again_rewrites_the_same_files(exported):
    before = {p: p.read_bytes() for p in _files(exported["out"])}
    result = CliRunner().invoke(app, exported["args"])
    assert result.exit_code == 0, result.output
    assert {p: p.read_bytes() for p in _files(exported["out"])} == before


@needs_validator
def test_every_file_written_passes_the_formats_own_validator(exported):
    out = exported["out"]
    files = [p.relative_to(out).as_posix() for p in _files(out)]
    proc = subprocess.run([_validator(), "-m", "every_eval_ever", "validate", "--format", "json", *files], cwd=out,
                          capture_output=True, text=True, timeout=300)
    reports = json.loads(proc.stdout)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert sorted(r["file"] for r in reports) == sorted(files)
    assert all(r["valid"] for r in reports), [(r["file"], r["errors"]) for r in reports if not r["valid"]]
    assert [(r["file"], r["warnings"]) for r in reports if r["warnings"]] == []


@needs_validator
def test_the_validator_would_fail_a_broken_record(exported, tmp_path):
    """The check above can fail: the same datastore with one sample's score removed is refused."""
    copy = tmp_path / "copy"
    shutil.copytree(exported["out"], copy)
    samples = next(copy.rglob("*_samples.jsonl"))
    lines = samples.read_text().splitlines()
    first = json.loads(lines[0])
    del first["evaluation"]["score"]
    samples.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    proc = subprocess.run([_validator(), "-m", "every_eval_ever", "validate", "--format", "json",
                           samples.relative_to(copy).as_posix()], cwd=copy, capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0 and not json.loads(proc.stdout)[0]["valid"]


def test_path_components_are_portable_names():
    assert component("HELMBench <script>/x", "benchmark name") == "HELMBench-script-x"
    assert model_folders("openai/gpt-4.1-mini") == ("openai", "gpt-4.1-mini")
    assert model_folders("a/b/c:free") == ("a", "b_c_free")
    from helmbench.errors import UsageError

    for bad in ("data", "..", "CON", "///"):
        with pytest.raises(UsageError):
            component(bad, "benchmark name")
    with pytest.raises(UsageError):
        model_folders("flat-id")


def test_helmbenchs_additions_validate_against_eee_extras_schema(exported):
    """HELMBench's own fields inside the records (details, sample metadata) follow eee-extras.schema.json, and
    carry the version the code writes; a renamed metadata key fails it."""
    from jsonschema import Draft202012Validator

    from helmbench.cli.schema_cmd import output_schemas
    from helmbench.publish.eee import EXTRAS_FORMAT

    schema = output_schemas()["eee-extras"]
    check = Draft202012Validator(schema)
    records = [json.loads(p.read_text()) for p in exported["out"].rglob("*.json")]
    samples = [json.loads(line) for p in exported["out"].rglob("*_samples.jsonl")
               for line in p.read_text().splitlines()]
    assert records and samples and any("transcript_judgements" in s["metadata"] for s in samples)
    for doc in [*records, *samples]:
        assert [e.message for e in check.iter_errors(doc)] == []
    assert all(r["source_metadata"]["additional_details"]["helmbench_format"] == str(EXTRAS_FORMAT) for r in records)
    assert all(s["metadata"]["helmbench_format"] == EXTRAS_FORMAT for s in samples)
    assert schema["$defs"]["sample_metadata"]["properties"]["helmbench_format"]["const"] == EXTRAS_FORMAT
    renamed = json.loads(json.dumps(samples[0]))
    renamed["metadata"]["case"] = renamed["metadata"].pop("case_id")
    assert list(check.iter_errors(renamed))
