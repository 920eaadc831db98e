"""The authored form: conversation.md loads into turns, persona, goal and checkpoints, lints clean,
and its JSON Schema agrees with lint."""

from __future__ import annotations

import json

import pytest

from tests import forked
from tests.conversation.conv_trees import SCRIPTED, SIMULATED, conversation_tree

from helmbench.lint import lint_tree


def test_conversation_tree_lints_clean_in_strict_mode(conv_tree):
    proc = forked.run("lint", "--strict", conv_tree, timeout=120)  # the command, a process of its own
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_loader_reads_turns_persona_goal_and_checkpoints(conv_tree):
    bench, diags = lint_tree(conv_tree)
    assert [d for d in diags if d.is_error] == []
    scenarios = {sc.key: sc for sc in bench.scenarios}
    scripted = scenarios["P1-B1-S1"].conversation
    assert not scripted.simulated
    assert sorted(scripted.turns) == [2, 3, 4]
    assert scripted.turns[3].line == 16 and "Hamlet" in scripted.turns[3].body
    assert scripted.meta.checkpoints[0].turn == 3
    assert scripted.meta.checkpoints[0].evaluation.required == ["ASSISTANCE"]
    sim = scenarios["P1-B1-S3"].conversation
    assert sim.simulated and sim.meta.max_turns == 4
    assert "Alex, 34" in sim.sections["persona"].body and "helplines" in sim.sections["goal"].body
    assert sorted(sim.turns) == [2, 3]
    assert bench.models.user_model.id == "test/user-model"


def test_checkpoint_field_must_be_in_the_schema(conv_tree):
    path = conv_tree / SCRIPTED
    path.write_text(path.read_text().replace("      type: list_includes\n", "      type: list_includes\n      field: tgas\n"))
    _, diags = lint_tree(conv_tree)
    found = [(d.code, d.line) for d in diags if d.is_error]
    assert found == [("HB501", 8)], found
    assert "did you mean `tags`" in next(d for d in diags if d.code == "HB501").hint


def test_checkpoint_turn_must_be_a_number(conv_tree):
    path = conv_tree / SCRIPTED
    path.write_text(path.read_text().replace("turn: 3", "turn: three"))
    _, diags = lint_tree(conv_tree)
    assert [(d.code, d.path, d.line) for d in diags if d.is_error] == [("HB203", SCRIPTED, 4)]


def test_simulated_needs_persona_goal_and_max_turns(conv_tree):
    path = conv_tree / SIMULATED
    text = path.read_text().replace("max_turns: 4\n", "").replace("# Goal\n", "# Turn 4\n")
    path.write_text(text)
    _, diags = lint_tree(conv_tree)
    messages = sorted(d.message for d in diags if d.code == "HB705")
    assert messages == ["a simulated user needs `max_turns`", "a simulated user needs a `# Goal` part"], messages


@pytest.fixture(scope="module")
def conversation_schema(tmp_path_factory):
    out = tmp_path_factory.mktemp("schemas")
    made = forked.run("schema", "--out", out, timeout=120)
    assert made.returncode == 0, made.stderr
    return json.loads((out / "conversation.schema.json").read_text()), json.loads((out / "models.schema.json").read_text())


def _frontmatter(path):
    import yaml

    return yaml.safe_load(path.read_text(encoding="utf-8").split("---\n")[1])


def test_schema_accepts_both_conversations_and_a_user_model(conversation_schema, tmp_path):
    from jsonschema.validators import Draft202012Validator

    tree = conversation_tree(tmp_path / "t")
    conv, models = conversation_schema
    for rel in (SCRIPTED, SIMULATED):
        Draft202012Validator(conv).validate(_frontmatter(tree / rel))
    Draft202012Validator(models).validate({"user_model": "test/user-model", "models": []})


@pytest.mark.parametrize("data", [
    {"user": "robot"},
    {"max_turns": 1},
    {"max_turns": 21},
    {"checkpoints": [{"turn": 0, "evaluation": {"type": "list_includes", "required": ["X"]}}]},
    {"checkpoints": [{"turn": 2, "evaluation": {"type": "sqe"}}]},
    {"turns": 3},
])
def test_schema_rejects_what_lint_rejects(conversation_schema, data, tmp_path):
    from jsonschema.validators import Draft202012Validator

    assert list(Draft202012Validator(conversation_schema[0]).iter_errors(data))
    tree = conversation_tree(tmp_path / "t")
    import yaml

    (tree / SIMULATED).write_text("---\n" + yaml.safe_dump({"user": "simulated", "max_turns": 4, **data})
                                  + "---\n" + (tree / SIMULATED).read_text().split("---\n", 2)[2])
    _, diags = lint_tree(tree)
    assert any(d.is_error and d.path == SIMULATED for d in diags)


def test_the_guides_worked_examples_lint_clean(tmp_path):
    """The conversation.md examples of the authors' guide, as written there, in a real tree: a scripted user,
    a simulated one, and one whose simulated user opens the conversation (`opening: simulated`)."""
    import re

    from conv_trees import REPO

    guide = (REPO / "helmbench/publish/site_default/authors-guide.md").read_text(encoding="utf-8")
    section = guide.split("## Conversations", 1)[1].split("\n## Previewing a case", 1)[0]
    blocks = re.findall(r"```markdown\n(.*?)```", section, re.S)
    assert len(blocks) == 3
    tree = conversation_tree(tmp_path / "t")
    schema = tree / "scenarios/P1/B1/S1--late-planning/S1.json"  # with the tag the guide's checkpoint names
    schema.write_text(schema.read_text().replace('"META_INQUIRY"]', '"META_INQUIRY", "HANDOFF"]'))
    (tree / SCRIPTED).write_text(blocks[0], encoding="utf-8")
    (tree / SIMULATED).write_text(blocks[1], encoding="utf-8")
    bench, diags = lint_tree(tree)
    assert [d for d in diags if d.is_error or d.path.endswith("conversation.md")] == []
    convs = {sc.key: sc.conversation for sc in bench.scenarios if sc.conversation}
    assert sorted(convs["P1-B1-S1"].turns) == [2, 3] and sorted(convs["P1-B1-S3"].turns) == [2, 4]
    (tree / SIMULATED).write_text(blocks[2], encoding="utf-8")
    bench, diags = lint_tree(tree)
    assert [d for d in diags if d.is_error or d.path.endswith("conversation.md")] == []
    [opens] = [sc.conversation for sc in bench.scenarios if sc.key == "P1-B1-S3"]
    assert opens.simulated and opens.meta.opening == "simulated"


def test_checkpoint_values_must_be_in_the_schemas_enum(conv_tree):
    path = conv_tree / SCRIPTED
    path.write_text(path.read_text().replace("required: [ASSISTANCE]", "required: [ASSISTANCE, HANDOF]"))
    _, diags = lint_tree(conv_tree)
    found = [(d.code, d.path, d.line) for d in diags if d.is_error]
    assert found == [("HB503", SCRIPTED, 8)], found


def test_a_list_checkpoint_on_a_single_value_field_is_refused(conv_tree):
    path = conv_tree / SCRIPTED
    path.write_text(path.read_text().replace("      type: list_includes\n", "      type: list_includes\n      field: category\n"))
    _, diags = lint_tree(conv_tree)
    assert [(d.code, d.line) for d in diags if d.is_error] == [("HB502", 8)]


def test_a_script_longer_than_the_maximum_is_refused_at_the_first_turn_beyond_it(conv_tree):
    path = conv_tree / SCRIPTED
    extra = "".join(f"\n# Turn {n}\n\nand then?\n" for n in range(5, 23))
    path.write_text(path.read_text() + extra)
    _, diags = lint_tree(conv_tree)
    found = [(d.code, d.line) for d in diags if d.is_error]
    assert len(found) == 1 and found[0][0] == "HB701"
    assert path.read_text().split("\n")[found[0][1] - 1] == "# Turn 21"
