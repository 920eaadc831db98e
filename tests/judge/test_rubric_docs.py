"""The authors' guide's section on gated criteria, abstentions and named questions: its example lints clean and
compiles, the judge text it states is the code's own, and `helmbench schema` describes the new keys."""

from __future__ import annotations

import json

from tests.judge.rubric_tree import GUIDE, SECTION, guide_criteria, rubric_tree


def test_the_guides_example_lints_clean_and_compiles_with_its_keys(tmp_path):
    from helmbench.lint import lint_tree
    from helmbench.manifest import compile_tree

    found = guide_criteria()
    assert set(found) == {"CR1.md", "CR2.md", "CR3.md"}
    tree = rubric_tree(tmp_path / "tree", found)
    _, diags = lint_tree(tree)
    assert diags == []  # not even a warning: lint --strict passes
    out = compile_tree(tree, tmp_path / "build")
    case = json.loads(out.path.read_text(encoding="utf-8").splitlines()[1])
    criteria = {c["code"]: c for c in case["evaluation"]["criteria"]}
    assert criteria["CR1"]["abstain_values"] == ["NOT_RELEVANT"]
    assert [q["id"] for q in criteria["CR1"]["questions"]] == ["disclosed", "responded"]
    assert criteria["CR1"]["decide"][-1] == {"otherwise": "FAIL"}
    assert "NOT_RELEVANT" not in criteria["CR1"]["scores"]  # an abstention has no score
    assert criteria["CR2"]["applies_when"] == {"criterion": "CR1", "question": "disclosed", "answers": ["yes"]}
    assert criteria["CR3"]["applies_when"] == {"criterion": "CR1", "answers": ["PASS", "FAIL"]}
    # a criterion without the new keys carries none of them (its manifest bytes are as before)
    assert not {"abstain_values", "applies_when", "questions", "decide"} & set(_plain_criterion(tmp_path))


def _plain_criterion(tmp_path) -> dict:
    from helmbench.manifest import compile_tree

    plain = {"CR1.md": "---\noptions: [PASS, FAIL]\n---\n## Evaluation criteria\n\nPASS when kind.\n"}
    tree = rubric_tree(tmp_path / "plain", plain)
    out = compile_tree(tree, tmp_path / "plain-build")
    return json.loads(out.path.read_text(encoding="utf-8").splitlines()[1])["evaluation"]["criteria"][0]


def test_the_guide_states_the_exact_text_a_criterion_with_questions_sends_the_judge():
    from helmbench.run.judge.judge_prompt import judge_request
    from helmbench.spec.yamlio import load_yaml

    text = guide_criteria()["CR1.md"]
    meta, _ = load_yaml(text.split("---\n")[1])
    cr = {"code": "CR1", "title": meta["title"], "text": "{the criterion's text}", "options": meta["options"],
          "questions": meta["questions"], "decide": meta["decide"]}
    messages = [{"role": "system", "content": "{the scenario's system instructions, as composed for the case}"},
                {"role": "user", "content": "{the case's message, as composed}"}]
    request = judge_request(cr, messages, "{the model's reply}")
    guide = GUIDE.read_text(encoding="utf-8")
    section = guide[guide.index(SECTION):]
    assert f"```text\n{request['messages'][1]['content']}\n```" in section
    schema = request["response_format"]["json_schema"]["schema"]
    assert schema["required"] == ["justification", "answers"]
    assert schema["properties"]["answers"]["properties"]["disclosed"] == {"type": "string", "enum": ["yes", "no"]}
    assert "decide" not in json.dumps(request) and "otherwise" not in json.dumps(request)  # rules are not sent


def test_helmbench_schema_describes_the_new_keys_of_a_criterion():
    from helmbench.api.schemas import input_schemas

    props = input_schemas()["criterion.schema.json"]["properties"]
    assert {"abstain_values", "applies_when", "questions", "decide"} <= set(props)
