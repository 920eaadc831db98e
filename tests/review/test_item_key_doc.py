"""The rules users read are the rules the code follows: item keys recomputed from SCHEMA.md's text alone,
the verdicts file's one name, and the authors' guide's judge ensemble.

`recompute` below is written from helmbench/store/SCHEMA.md ("Item keys") only: its own canonical JSON
writer (no `json.dumps`, no helmbench import), applied to a review packet's items.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from typer.testing import CliRunner

from helmbench.cli import app

REPO = Path(__file__).resolve().parents[2]
SCHEMA = REPO / "helmbench/store/SCHEMA.md"
SHORT = {"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r", '"': '\\"', "\\": "\\\\"}


def _canonical(value) -> str:
    """Canonical JSON as SCHEMA.md words it: sorted keys by code point, no whitespace, non-ASCII as itself,
    only `"`, `\\` and U+0000–U+001F escaped (short forms, else \\u00xx lowercase), whole numbers as integers."""
    if isinstance(value, dict):
        return "{" + ",".join(_canonical(str(k)) + ":" + _canonical(value[k]) for k in sorted(value)) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_canonical(v) for v in value) + "]"
    if isinstance(value, str):
        return '"' + "".join(SHORT.get(ch) or (f"\\u{ord(ch):04x}" if ord(ch) < 0x20 else ch) for ch in value) + '"'
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def recompute(item: dict) -> str:
    c = item["criterion"]
    obj = {"criterion": {"code": c["code"], "options": list(c["options"]), "response_type": c.get("response_type")
                         or "single", "text": c["text"]},
           "messages": [{"role": m["role"], "content": m["content"]} for m in item["messages"]],
           "output": item["output"]}
    return "sha256:" + hashlib.sha256(_canonical(obj).encode("utf-8")).hexdigest()


def test_the_documented_item_key_is_the_one_helmbench_computes(judged_db, tmp_path):
    text = SCHEMA.read_text(encoding="utf-8")
    section = text[text.index("## Item keys"):text.index("## Snapshots")]
    for rule in ('"criterion": {"code": C, "options": O, "response_type": R, "text": T}, "messages": M, "output": X',
                 "sorted by\n   Unicode code point", "not `\\u` escapes", "`\\u00xx` with lowercase hex",
                 "U+007F and U+2028 are written as themselves", "`sha256:` followed by the 64 lowercase"):
        assert rule in section, rule  # the text `recompute` follows

    db = judged_db["db"]
    runner = CliRunner()
    assert runner.invoke(app, ["review", "plan", "--db", str(db), "-r", "Ana", "-r", "Ben"]).exit_code == 0
    assert runner.invoke(app, ["review", "packet", "--db", str(db), "--out-dir", str(tmp_path)]).exit_code == 0
    packet = json.loads((tmp_path / "ana.review.json").read_text(encoding="utf-8"))
    assert len(packet["items"]) == 24
    assert [recompute(i) for i in packet["items"]] == [i["item_hash"] for i in packet["items"]]

    # and on text that tests every escaping rule, against the store's own function
    from helmbench.store.reviews import item_hash

    hostile = {"messages": [{"role": "user", "content": "Ça va ? \u2028 \x7f \x00\x1f \"q\" \\ \t\n\r\b\f 🙂"}],
               "output": "<script>ok</script> é", "criterion": {"code": "CR1", "text": "Är det säkert?",
                                                               "options": ["PASS", "PARTIAL", "FAIL"]}}
    assert recompute(hostile) == item_hash(hostile["messages"], hostile["output"], hostile["criterion"])


def test_one_name_for_the_verdicts_file(tmp_path):
    from helmbench.publish.review.serve import verdicts_path

    assert verdicts_path(tmp_path / "ana.review.json").name == "ana.review-verdicts.jsonl"
    docs = {p: p.read_text(encoding="utf-8") for p in (REPO / "README.md", REPO / "helmbench/cli/review_cmd.py",
                                                        REPO / "helmbench/publish/site_default/cli.md")}
    for path, text in docs.items():
        names = set(re.findall(r"[\w.]*-verdicts\.jsonl", text))
        assert names and names <= {"ana.review-verdicts.jsonl", "NAME.review-verdicts.jsonl"}, (path, names)


def test_the_authors_guide_shows_a_judge_ensemble_that_loads():
    import yaml

    from helmbench.spec.models import ModelsFile

    guide = (REPO / "helmbench/publish/site_default/authors-guide.md").read_text(encoding="utf-8")
    section = guide[guide.index("### A judge ensemble"):]
    block = re.search(r"```yaml\n(.*?)```", section, re.S).group(1)
    judges = ModelsFile.model_validate(yaml.safe_load(block)).judges
    assert len(judges) == 3
    assert "mean of the `scores` of the judges that gave\n  the combined verdict" in section
    assert "two categories, PASS and FAIL" in section and "the models both boards rank" in section
