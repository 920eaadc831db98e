"""Every machine-readable output validates against the JSON Schema `helmbench schema` publishes for it.

Why: a program that reads `report --format json`, a review plan or a verdicts file is written
against a shape; the schemas write that shape down. Each test here produces the REAL output (the
commands and the API on the review fixtures' judged database, the report of a three-judge ensemble
with a judge of a model's own family) and validates it with `jsonschema`, so a change in shape fails
until the schema changes with it. Each schema is strict where the shape is closed
(`additionalProperties: false`), so a renamed key fails too (shown once per output below), and
each carries the `format` the code writes, so a shape change must bump both.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from typer.testing import CliRunner

from helmbench.cli import app
from tests.review.review_pipeline import copy_of

REVIEWERS = ["Ana", "Ben"]


def schemas() -> dict[str, dict]:
    from helmbench.cli.schema_cmd import output_schemas

    return output_schemas()


def validator(name: str, part: str | None = None) -> Draft202012Validator:
    """A validator of `name`'s schema (or of its `$defs/part`), resolving references between the output
    schemas by their file names as `helmbench schema` writes them side by side (report → agreement)."""
    from referencing import Registry, Resource

    every = schemas()
    registry = Registry().with_resources((f"{n}.schema.json", Resource.from_contents(s)) for n, s in every.items())
    schema = every[name]
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema["$defs"][part] if part else schema, registry=registry)


def errors(name: str, instance, part: str | None = None) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator(name, part).iter_errors(instance)]


def _cli(*args: str) -> str:
    r = CliRunner().invoke(app, list(args))
    assert r.exit_code == 0, r.output
    return r.output


@pytest.fixture(scope="module")
def outputs(judged, tmp_path_factory) -> dict:
    """The outputs of a small review round on a copy of the judged database: a plan, packets, verdicts
    given on a packet's page (its verdicts file), imported, exported (CSV and JSONL); then report,
    agreement, review status and costs as JSON."""
    from helmbench.publish.review.app import FileVerdicts
    from helmbench.score.review_items import judged_items
    from helmbench.store import open_db

    tmp = tmp_path_factory.mktemp("schemas")
    db = copy_of(judged["db"], tmp / "results.db")
    where = ["--db", str(db)]
    _cli("review", "plan", *where, "--sample", "12", "--seed", "3", *[a for n in REVIEWERS for a in ("-r", n)])
    _cli("review", "packet", *where, "--out-dir", str(tmp / "packets"))
    plan = json.loads((tmp / "review-plan.json").read_text(encoding="utf-8"))
    conn = open_db(db)
    try:
        items = judged_items(conn)[1]
    finally:
        conn.conn.close()
    for n, name in enumerate(REVIEWERS):  # each reviews their share on their packet's page, then it is imported
        packet = json.loads((tmp / "packets" / f"{name.lower()}.review.json").read_text(encoding="utf-8"))
        store = FileVerdicts(tmp / f"{name.lower()}.review-verdicts.jsonl", [])
        for i, it in enumerate(packet["items"]):
            store.save({"item_hash": it["item_hash"], "reviewer": name, "case_id": it["case_id"],
                        "scenario": it["scenario"], "criterion": it["criterion"]["code"],
                        "criterion_text": it["criterion"]["text"], "judgment": ["PASS", "FAIL"][(i + n) % 2],
                        "confidence": "high" if i % 3 else None, "note": "seen" if i % 2 else None})
        _cli("review", "import", str(store.path), *where)
    for fmt in ("csv", "jsonl"):
        _cli("review", "export", *where, "--format", fmt, "--out", str(tmp / f"all.{fmt}"))
    common = [*where, "--manifest", str(judged["manifest"])]
    return {
        "plan": plan, "items": items, "tmp": tmp,
        "packets": [json.loads(p.read_text(encoding="utf-8")) for p in sorted((tmp / "packets").iterdir())],
        "verdict_lines": [json.loads(line) for name in REVIEWERS
                          for line in (tmp / f"{name.lower()}.review-verdicts.jsonl").read_text().splitlines()]
                         + [json.loads(line) for line in (tmp / "all.jsonl").read_text().splitlines()],
        "csv_rows": list(csv.DictReader(io.StringIO((tmp / "all.csv").read_text(encoding="utf-8"), newline=""))),
        "report": json.loads(_cli("report", *common, "--format", "json", "--bootstrap", "50")),
        "report --calibrated-only": json.loads(_cli("report", *common, "--format", "json", "--bootstrap", "0",
                                                    "--calibrated-only")),
        "agreement": json.loads(_cli("agreement", *common, "--format", "json")),
        "review-status": json.loads(_cli("review", "status", *where, "--format", "json")),
        "costs": json.loads(_cli("costs", *common, "--models-file", str(judged["models"]), "--format", "json")),
    }


@pytest.mark.parametrize("name", ["report", "report --calibrated-only", "agreement", "review-status", "costs"])
def test_each_commands_json_validates_against_its_schema(outputs, name):
    assert errors(name.split()[0], outputs[name]) == []


def test_the_review_plan_packets_and_verdicts_files_validate(outputs):
    assert errors("review-plan", outputs["plan"]) == []
    assert len(outputs["packets"]) == len(REVIEWERS)
    for packet in outputs["packets"]:
        assert packet["items"] and errors("review-packet", packet) == []
    assert len(outputs["verdict_lines"]) == 2 * 24  # 12 items × 2 reviewers: in their files, then in the export
    for line in outputs["verdict_lines"]:
        assert errors("verdicts", line) == []
    assert len(outputs["csv_rows"]) == 24
    for row in outputs["csv_rows"]:
        assert errors("verdicts", row, "csv_row") == []


def test_the_status_with_a_plan_and_the_costs_estimate_are_filled_in(outputs):
    """The optional parts are really there, so their sub-schemas were exercised, not skipped."""
    assert outputs["review-status"]["plan"] is not None and outputs["review-status"]["reviewers"]
    assert outputs["agreement"]["criteria"] and outputs["agreement"]["overall"]["n_reviewed"] == 12
    assert outputs["costs"]["not_run_yet"] is not None and outputs["costs"]["runs"]
    assert outputs["report"]["rows"] and outputs["report"]["calibration"] is not None
    assert outputs["report --calibrated-only"]["calibrated_only"]["left_out"]


def _rename(data, path: tuple, new: str):
    """A copy of `data` with the key at `path` renamed to `new` (what a careless refactor does)."""
    data = json.loads(json.dumps(data))
    node = data
    for step in path[:-1]:
        node = node[step]
    node[new] = node.pop(path[-1])
    return data


@pytest.mark.parametrize("name,path", [
    ("report", ("rows", 0, "score")), ("report", ("judge_version",)), ("agreement", ("criteria", 0, "kappa")),
    ("review-status", ("reviewers", 0, "done")), ("costs", ("runs", 0, "behind_results")),
    ("review-plan", ("assigned",)), ("review-packet", ("items", 0, "output")), ("verdicts", ("judgment",)),
])
def test_a_renamed_key_fails_validation(outputs, name, path):
    real = {"review-plan": outputs["plan"], "review-packet": outputs["packets"][0],
            "verdicts": outputs["verdict_lines"][0]}.get(name) or outputs[name]
    assert errors(name, real) == []
    renamed = errors(name, _rename(real, path, path[-1] + "_renamed"))
    assert renamed and any(path[-1] in e for e in renamed), renamed


def test_a_renamed_csv_column_fails_validation(outputs):
    row = dict(outputs["csv_rows"][0])
    row["reviewer_name"] = row.pop("reviewer")
    assert errors("verdicts", row, "csv_row")


def test_each_schemas_format_is_the_one_the_code_writes(outputs):
    """A shape change must bump the schema's `format` and the code's together."""
    from helmbench import api
    from helmbench.cli import agreement_cmd, report_render, review_cmd
    from helmbench.store.review_files import VERDICTS_FORMAT
    from helmbench.store.review_packets import PACKET_FORMAT, PLAN_FORMAT

    written = {"report": (report_render.REPORT_FORMAT, outputs["report"]),
               "agreement": (agreement_cmd.AGREEMENT_FORMAT, outputs["agreement"]),
               "review-status": (review_cmd.STATUS_FORMAT, outputs["review-status"]),
               "costs": (api.COSTS_FORMAT, outputs["costs"]),
               "review-plan": (PLAN_FORMAT, outputs["plan"]),
               "review-packet": (PACKET_FORMAT, outputs["packets"][0]),
               "verdicts": (VERDICTS_FORMAT, outputs["verdict_lines"][0])}
    for name, (code, real) in written.items():
        schema = schemas()[name]
        assert schema["properties"]["format"]["const"] == code == real["format"], name
        if "version" in schema["properties"]:  # the review files' version beside their format name
            assert schema["properties"]["version"]["const"] == real["version"] == 1
    assert all(row["format"] == str(VERDICTS_FORMAT) for row in outputs["csv_rows"])
    assert validator("verdicts", "csv_row").schema["properties"]["format"]["const"] == str(VERDICTS_FORMAT)


def test_a_verdicts_file_of_another_format_is_refused_naming_the_line(outputs, tmp_path):
    from helmbench.errors import HelmbenchError
    from helmbench.store.review_files import read

    lines = [dict(line) for line in outputs["verdict_lines"][:2]]
    lines[1]["format"] = 2
    path = tmp_path / "future.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    with pytest.raises(HelmbenchError) as exc:
        read(path)
    assert f"{path}:2: `format` '2' is not 1" in exc.value.message
    lines[1].pop("format")  # a file written before rows carried their format still imports
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    assert len(read(path)) == 2


def test_the_report_of_a_judge_ensemble_with_a_judge_of_a_models_family_validates(tmp_path, monkeypatch):
    """The `judges` section (per-judge boards, κ, without the own family's judge), `judge_conflicts` and the
    re-judge lane's `judge_stability`."""
    from tests.report.judge_runs import JUDGES, B, C, ensemble_db, judged_manifest

    db = ensemble_db(tmp_path, monkeypatch, {JUDGES[0]: (B, C), JUDGES[1]: (C,), JUDGES[2]: (C,)},
                     f"families: {{{B}: test/kin, {JUDGES[2]}: test/kin}}\n", rejudge_sample=6)
    data = json.loads(_cli("report", "--db", str(db), "--manifest", str(judged_manifest(tmp_path)),
                           "--format", "json", "--bootstrap", "50"))
    assert data["judges"]["views"] and data["judges"]["kappa"] and data["judges"]["without_own_family"]
    assert data["judge_stability"]
    assert any(row["judge_conflicts"] == [JUDGES[2]] for row in data["rows"])
    assert errors("report", data) == []
    renamed = _rename(data, ("judges", "without_own_family", 0, "left_out"), "kin")
    assert errors("report", renamed)


def test_helmbench_schema_writes_lists_and_prints_the_output_schemas(tmp_path):
    names = set(schemas())
    assert {"report.schema.json", "agreement.schema.json", "costs.schema.json", "review-status.schema.json",
            "review-plan.schema.json", "review-packet.schema.json", "verdicts.schema.json", "eee-extras.schema.json",
            "evaluator-result.schema.json", "lint.schema.json", "list.schema.json", "diff.schema.json"} <= {
        f"{n}.schema.json" for n in names}
    _cli("schema", "--out", str(tmp_path))
    for name in names:
        written = json.loads((tmp_path / f"{name}.schema.json").read_text(encoding="utf-8"))
        assert written == schemas()[name] and written["$id"] == f"{name}.schema.json"
    listed = _cli("schema", "--list")
    assert all(f"{name}.schema.json" in listed for name in names) and "scenario.schema.json" in listed
    assert json.loads(_cli("schema", "--print", "costs.schema.json")) == schemas()["costs"]


def test_the_site_reference_lists_every_output_schema():
    from helmbench.cli.reference import PAGE

    page = (Path(__file__).resolve().parents[2] / PAGE).read_text(encoding="utf-8")
    for name, schema in schemas().items():
        assert f"`{name}.schema.json`" in page, name
        assert " ".join(schema["description"].split())[:60] in " ".join(page.split()), name


def test_built_in_evaluators_results_validate_and_the_schema_refuses_what_the_run_refuses(judged):
    """Real outcomes (the manifest's deterministic cases on answers that fit their schema) validate; each
    return value the run turns into an ERROR (`outcome._problem`) fails the schema, and each it accepts passes."""
    from helmbench.manifest import read_manifest
    from helmbench.run.evaluate.outcome import _problem, outcome_for
    from tests.fakes.schema_answer import answer

    checked = 0
    for case in read_manifest(judged["manifest"]):
        fmt = (case["request"].get("response_format") or {}).get("json_schema") or {}
        for seed in range(4):
            content = json.dumps(answer(fmt.get("schema") or {"type": "string"}, f"{case['id']}/{seed}"))
            out = outcome_for(case, {"content": content, "finish_reason": "stop"})
            if out is not None:
                assert errors("evaluator-result", list(out)) == [], out
                checked += 1
    assert checked >= 12
    for value in [("PASS", 1.0, "ok"), ("FAIL", 0, "no"), ("ERROR", None, "x"), ("FAIL", 0.5, "r", {"a": 1}, "format"),
                  ("MAYBE", 1.0, "r"), ("PASS", 1.5, "r"), ("ERROR", 0.0, "r"), ("PASS", None, "r"), ("PASS", 1.0, 7),
                  ("PASS", True, "r"), ("FAIL", 0.0, "r", None, "other"), ("PASS", 1.0),
                  ("PASS", 1.0, "r", None, None, 1)]:
        assert (errors("evaluator-result", list(value)) == []) == (_problem(value) is None), value


def test_costs_json_and_text_say_the_same_total(outputs, judged):
    """The one total (`api.Costs.total`): the runs' billed calls plus the calls no run made, in both forms."""
    data = outputs["costs"]
    runs = sum((r["paid"] or 0) + (r["judge_paid"] or 0) for r in data["runs"])
    assert data["total_paid"] == pytest.approx(runs + (data["generation"]["cost"] or 0)) and data["total_paid"] > 0
    text = _cli("costs", "--db", str(outputs["tmp"] / "results.db"), "--manifest", str(judged["manifest"]),
                "--models-file", str(judged["models"]))
    assert f"total paid: ${data['total_paid']:.4f}" in " ".join(text.split())
