"""Manifest of conversation cases: what is hashed where, and per-turn cache keys that follow edits."""

from __future__ import annotations

from tests.conversation.conv_trees import SCRIPTED, SIMULATED

from helmbench.manifest import compile_tree, read_manifest
from helmbench.manifest.conversation import turn_keys


def _cases(tree) -> dict[str, dict]:
    result = compile_tree(tree, tree / "build")
    return {c["id"]: c for c in read_manifest(result.path)}  # the reader re-checks every hash


def _edit(tree, rel, old, new):
    path = tree / rel
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def test_conversation_cases_carry_their_turns_and_checkpoints(conv_tree):
    cases = _cases(conv_tree)
    scripted = cases["P1-B1-S1-C1-U1-PT1"]
    conv = scripted["request"]["conversation"]
    assert conv["user"] == "scripted" and len(conv["turns"]) == 3
    assert conv["turns"][0].startswith("<users_input>\nlol I was joking")
    assert scripted["evaluation"]["checkpoints"] == [{
        "turn": 3, "title": "Still flags it after the joke",
        "evaluation": {"type": "list_includes", "field": "tags", "required": ["ASSISTANCE"]}}]
    assert len(scripted["request"]["messages"]) == 1  # the opening, composed as for any case
    sim = cases["P1-B1-S3-C1-PT1"]["request"]["conversation"]
    assert sim["user"] == "simulated" and sim["max_turns"] == 4
    assert sim["user_model"] == {"id": "test/user-model", "settings": {"temperature": 0.9}}
    assert [lm["turn"] for lm in sim["landmarks"]] == [2, 3]
    assert "FRONTMATTER-SECRET" not in str(cases["P1-B1-S3-C1-PT1"]["request"])
    assert "conversation" not in cases["P1-B1-S2-C1-PT1"]["request"]  # single-turn cases unchanged
    assert len(turn_keys(scripted)) == 4 and len(set(turn_keys(scripted))) == 4
    assert len(turn_keys(cases["P1-B1-S3-C1-PT1"])) == 4


def test_an_edit_to_turn_3_changes_the_keys_of_turns_3_onward_only(conv_tree):
    before = _cases(conv_tree)["P1-B1-S1-C1-U1-PT1"]
    _edit(conv_tree, SCRIPTED, "Something about", "Mostly about")
    after = _cases(conv_tree)["P1-B1-S1-C1-U1-PT1"]
    assert before["request_hash"] != after["request_hash"]
    old, new = turn_keys(before), turn_keys(after)
    assert old[:2] == new[:2]
    assert all(o != n for o, n in zip(old[2:], new[2:])) and len(new) == 4


def test_a_landmark_edit_changes_the_keys_from_its_turn(conv_tree):
    before = _cases(conv_tree)["P1-B1-S3-C1-PT1"]
    _edit(conv_tree, SIMULATED, "guitar", "bike")
    after = _cases(conv_tree)["P1-B1-S3-C1-PT1"]
    old, new = turn_keys(before), turn_keys(after)
    assert old[:2] == new[:2] and old[2] != new[2] and old[3] != new[3]


def test_the_user_models_settings_are_in_the_simulated_cases_request_hash(conv_tree):
    before = _cases(conv_tree)
    _edit(conv_tree, "models.yml", "temperature: 0.9", "temperature: 0.5")
    after = _cases(conv_tree)
    assert before["P1-B1-S3-C1-PT1"]["request_hash"] != after["P1-B1-S3-C1-PT1"]["request_hash"]
    assert turn_keys(before["P1-B1-S3-C1-PT1"])[0] == turn_keys(after["P1-B1-S3-C1-PT1"])[0]  # the opening
    assert turn_keys(before["P1-B1-S3-C1-PT1"])[1] != turn_keys(after["P1-B1-S3-C1-PT1"])[1]
    assert before["P1-B1-S1-C1-U1-PT1"] == after["P1-B1-S1-C1-U1-PT1"]  # scripted: no user model


def test_raising_max_turns_keeps_the_keys_of_the_turns_already_asked(conv_tree):
    before = turn_keys(_cases(conv_tree)["P1-B1-S3-C1-PT1"])
    _edit(conv_tree, SIMULATED, "max_turns: 4", "max_turns: 6")
    after = turn_keys(_cases(conv_tree)["P1-B1-S3-C1-PT1"])
    assert after[:4] == before and len(after) == 6


def test_a_checkpoint_edit_rescores_without_a_new_request(conv_tree):
    before = _cases(conv_tree)["P1-B1-S1-C1-U1-PT1"]
    _edit(conv_tree, SCRIPTED, "turn: 3", "turn: 2")
    after = _cases(conv_tree)["P1-B1-S1-C1-U1-PT1"]
    assert before["request_hash"] == after["request_hash"] and before["hash"] != after["hash"]
    assert turn_keys(before) == turn_keys(after)
