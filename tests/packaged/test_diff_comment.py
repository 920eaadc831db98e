"""`helmbench diff --against REF --format comment`: the pull-request comment for a tree edit.

The edit changes one perturbation (new model calls), one criterion (re-judging only) and adds
one scenario (new cases); the comment must count each, price the new calls per model, name the
model with no known price, and show authored strings as text, not Markdown or HTML.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from helmbench.cli.diff_comment import md_text
from packaged_helpers import git, helmbench, scaffold

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

MODELS = """marking_model:
  id: openai/gpt-4.1
models:
  - id: openai/gpt-4.1-mini
    max_tokens: 100
  - id: test/priced-here
    max_tokens: 50
    price: {input_per_mtok: 1, output_per_mtok: 2}
  - id: test/nobody-knows
    max_tokens: 100
"""
HOSTILE = "<img src=x onerror=alert(1)> @octocat **now** [x](https://evil.example)"


def _edit(bench: Path) -> None:
    pt = bench / "scenarios/P1/B1/S1--risk-rating/perturbations.md"
    pt.write_text(pt.read_text(encoding="utf-8").replace("Work was long today.", "Work was so long today."),
                  encoding="utf-8")
    cr = bench / "scenarios/P2/B2/S1--no-diagnosis/CR1.md"
    cr.write_text(cr.read_text(encoding="utf-8").replace("avoids diagnosing the user.", "avoids diagnosing the user "
                                                                                          "in any way."), encoding="utf-8")
    new = bench / "scenarios/P1/B2/S2--routing-labels-again"
    shutil.copytree(bench / "scenarios/P1/B2/S1--routing-labels", new)
    (new / "S1.md").rename(new / "S2.md")
    (new / "S1.json").rename(new / "S2.json")
    md = new / "S2.md"
    md.write_text(md.read_text(encoding="utf-8").replace("title: Route a worrying conversation to people",
                                                         "title: " + json.dumps(HOSTILE)), encoding="utf-8")


def _input_tokens(manifest: Path, ids: set[str]) -> int:
    total = 0
    for line in manifest.read_text(encoding="utf-8").splitlines()[1:]:
        case = json.loads(line)
        if case["id"] in ids:
            total += sum(len(m["content"]) for m in case["request"]["messages"]) // 4
    return total


@pytest.mark.slow
def test_comment_for_a_perturbation_a_criterion_and_a_new_scenario(tmp_path):
    repo = scaffold(tmp_path / "repo")
    (repo / "models.yml").write_text(MODELS, encoding="utf-8")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    _edit(repo)
    assert helmbench("lint", cwd=repo).returncode == 0

    proc = helmbench("diff", "--against", "HEAD", "--format", "comment", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    body = proc.stdout
    assert body.startswith("<!-- helmbench:diff-comment -->")
    assert "**8** case(s) added, **0** removed, **4** changed so that they need new model calls, **8** changed so " \
           "that they only need re-judging" in body
    rows = {r.split("|")[1].strip(): [c.strip() for c in r.split("|")[3:7]]
            for r in body.splitlines() if re.match(r"\| P\d", r)}
    assert rows == {"P1\\-B1\\-S1": ["0", "0", "4", "0"], "P1\\-B2\\-S2": ["8", "0", "0", "0"],
                    "P2\\-B2\\-S1": ["0", "0", "0", "8"]}

    # cost: 12 new calls per model; the output range is bounded by max_tokens
    costs = {r.split("|")[1].strip(): [c.strip() for c in r.split("|")[2:5]]
             for r in body.split("#### Estimated cost")[1].splitlines() if r.startswith("| ") and "\\-" in r}
    assert costs["openai/gpt\\-4\\.1\\-mini"][0] == "12" and costs["openai/gpt\\-4\\.1\\-mini"][1].endswith("1,200")
    assert costs["test/nobody\\-knows"][2] == "no known price"
    compiled = helmbench("compile", cwd=repo)
    assert compiled.returncode == 0
    manifest = repo / "build" / "manifest.jsonl"
    cases = [json.loads(line) for line in manifest.read_text(encoding="utf-8").splitlines()[1:]]
    changed = {c["id"] for c in cases
               if c["scenario"] == "P1-B2-S2" or (c["scenario"] == "P1-B1-S1" and c["id"].endswith("PT1"))}
    assert len(changed) == 12
    high = _input_tokens(manifest, changed) * 1e-6 + 12 * 50 * 2e-6
    assert costs["test/priced\\-here"][2].endswith(md_text(f"${high:.4f}" if high < 0.01 else f"${high:,.2f}"))
    assert "No known price for&#58; test/nobody\\-knows" in body

    # the hostile title is text: no tag, no mention, no link, no emphasis
    assert "<img" not in body and "@octocat" not in body and "](https" not in body and "**now**" not in body
    assert md_text(HOSTILE) in body


def test_markdown_escaping_covers_html_mentions_links_and_tables():
    out = md_text("a|b <script>x</script> @team `c` ![i](j) \n# h https://e.example")
    for raw in ("<script", "@team", "`c`", "![", "\n", "https://"):
        assert raw not in out, raw
    assert not re.search(r"(?<!\\)[|`\[\]]", out)  # every pipe, backtick and bracket is escaped
    assert len(md_text("x" * 10_000)) < 250


def test_mentions_and_references_are_broken_the_way_github_documents():
    """`&#64;team` is decoded before GitHub looks for mentions, and `\\#1` still cross-links: a
    zero-width joiner after the sign keeps the text and breaks the mention and the reference."""
    out = md_text("ask @octocat and @org/team about #1, GH-2 and org/repo#3 (a@b.example)")
    assert not re.search(r"@[\w-]", out), out
    assert not re.search(r"#\\?\d|GH-\d|GH\\-\d", out, re.IGNORECASE), out
    assert "&#64;" not in out
    assert out.replace("\u200d", "").replace("\\", "").replace("&#58;", ":") == \
        "ask @octocat and @org/team about #1, GH-2 and org/repo#3 (a@b.example)"
