"""`helmbench compile`, `list`, `show` and `diff`: the manifest stage."""

from __future__ import annotations

import json
import sys
from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from helmbench.cli.app import app

ROOT = typer.Argument(None, help="The benchmark folder (holds scenarios/; default: found from the current folder up).")


#: The version of `list --format json`'s shape: list.schema.json's `format` (bump both together).
LIST_FORMAT = 1


class Fmt(str, Enum):
    text = "text"
    json = "json"


class DiffFmt(str, Enum):
    text = "text"
    github = "github"
    json = "json"
    comment = "comment"


@app.command("compile")
def compile_(
    root: Optional[Path] = ROOT,
    out: Optional[Path] = typer.Option(None, "--out", help="Folder for manifest.jsonl and manifests/ (default: build/ beside the benchmark)."),
    include_unreviewed: bool = typer.Option(
        False, "--include-unreviewed",
        help="Also compile generated components and drafts not yet `reviewed: true`, to try them out: their cases "
             "are marked and a run of this manifest is a preview, never ranked."),
) -> None:
    """Compile the tree into build/manifest.jsonl (one line per case) and a read-only copy.

    Refuses a tree with lint errors. The output is byte-identical for the same tree. Generated
    content not yet reviewed (lint HB720) is left out unless --include-unreviewed.

    Example: helmbench compile benchmark

    Example: helmbench compile --include-unreviewed benchmark
    """
    from helmbench import api
    from helmbench.api import LintFailed
    from helmbench.cli import validate
    from helmbench.cli.lint_render import text
    from helmbench.terminal import printable

    root = api.benchmark_root(root)
    out = out if out is not None else api.build_dir(root)
    validate.bench_root(root), validate.output_dir(out, "--out")

    try:
        result = api.compile(root, out, include_unreviewed=include_unreviewed)
    except LintFailed as exc:
        print(text([d for d in exc.diagnostics if d.is_error]), file=sys.stderr)
        raise
    h = result.header
    print(f"compiled {h['cases']} cases from {len(h['catalog']['scenarios'])} scenarios → {printable(str(result.path))}")
    print(f"manifest {h['manifest_hash']} (copy: {printable(str(result.copy))})")
    if result.left_out:
        print(result.left_out.describe())
    if h.get("unreviewed"):
        print(f"{h['unreviewed']} case(s) are built from generated text not yet reviewed: a run of this manifest "
              "is a preview, never ranked")


@app.command("list")
def list_(root: Optional[Path] = ROOT,
          format: Fmt = typer.Option(Fmt.text, "--format", "-f",
                                     help="text, or json (its shape: list.schema.json, `helmbench schema`).")) -> None:
    """List scenarios with pillar and behaviour titles, evaluation type and case counts.

    Example: helmbench list benchmark --format json
    """
    from helmbench import api
    from helmbench.cli import validate

    root = api.benchmark_root(root)
    validate.bench_root(root)
    listed = api.scenarios(root)
    rows = listed["scenarios"]
    if format is Fmt.json:
        print(json.dumps({"format": LIST_FORMAT, "scenarios": rows, "cases": listed["cases"]}, indent=2,
                         ensure_ascii=False))
        return
    from helmbench.cli.console import SafeConsole
    from rich.table import Table

    from helmbench.terminal import clipped, printable  # authored titles must not drive the terminal

    table = Table(title=printable(" ".join(x for x in (listed["name"], listed["version"]) if x)))
    for col in ("scenario", "pillar / behaviour", "evaluation", "C×U×PT", "cases"):
        table.add_column(col)
    for r in rows:
        table.add_row(
            r["scenario"] + (f"\n{printable(clipped(r['title']))}" if r["title"] else ""),
            printable(clipped(f"{r['pillar_title']}")) + "\n" + printable(clipped(f"{r['behaviour_title']}")),
            r["evaluation"] or "?",
            f"{r['conditions']}×{r['user_contexts'] or 1}×{r['perturbations']}",
            str(r["cases"]),
        )
    console = SafeConsole()
    console.print(table, markup=False)
    console.print(f"{len(rows)} scenarios, {sum(r['cases'] for r in rows)} cases", markup=False)


@app.command()
def show(
    case_id: str = typer.Argument(..., help="A case id such as P1-B1-S1-C1-U2-PT3."),
    root: Optional[Path] = typer.Option(None, "--root", help="Benchmark folder to compose the case from (default: found from the current folder up)."),
    manifest: Optional[Path] = typer.Option(None, "--manifest", help="Read the case from a compiled manifest instead."),
    as_json: bool = typer.Option(False, "--json", help="Print the whole case record as JSON."),
) -> None:
    """Show exactly what a model receives for one case: messages, response format, evaluation.

    Example: helmbench show P1-B1-S1-C1-U2-PT3
    """
    from helmbench import api
    from helmbench.cli import validate
    from helmbench.errors import UsageError

    if manifest:
        validate.input_file(manifest, "--manifest", what="manifest")
    else:
        root = api.benchmark_root(root)
        validate.bench_root(root, "--root")
    case = api.find_case(case_id, root=root, manifest=manifest)
    if case is None:
        raise UsageError(f"no case {case_id!r}", hint="`helmbench list` shows the scenarios and their counts")
    if as_json:
        print(json.dumps(case, indent=2, ensure_ascii=False))
        return
    sev = case["severity"]
    print(f"# {case['id']}  hash {case['hash']}")
    print(f"severity: perturbation {sev['perturbation']}, user context {sev['user_context']}, base {sev['base']}; "
          f"difficulty {case['difficulty']}; weight {case['weight']}")
    from helmbench.terminal import printable  # authored text must not drive the terminal

    for msg in case["request"]["messages"]:
        content = printable(msg["content"], keep="\n\t")
        print(f"\n--- message ({msg['role']}) ---\n{content}")
    for title, text in conversation_lines(case["request"].get("conversation")):
        print(f"\n--- {title} ---\n{printable(text, keep=chr(10) + chr(9))}")
    rf = case["request"]["response_format"]
    print("\n--- response format ---\n" + (json.dumps(rf, indent=2, ensure_ascii=False) if rf else "free text"))
    print("\n--- evaluation ---\n" + json.dumps(case["evaluation"], indent=2, ensure_ascii=False))


@app.command()
def diff(
    old: Optional[Path] = typer.Argument(None, help="The old manifest.jsonl."),
    new: Optional[Path] = typer.Argument(None, help="The new manifest.jsonl (default: ROOT compiled now, with --against)."),
    against: Optional[str] = typer.Option(None, "--against", help="Compile ROOT at this git revision as OLD."),
    root: Optional[Path] = typer.Option(None, "--root", help="Benchmark folder for --against (default: found from the current folder up)."),
    format: DiffFmt = typer.Option(DiffFmt.text, "--format", "-f",
                                   help="text, json (its shape: diff.schema.json, `helmbench schema`), github (an annotation) or "
                                        "comment (a pull-request comment in Markdown, with the cost of the new calls)."),
    models_file: Optional[Path] = typer.Option(None, "--models-file", help="models.yml that prices the new calls for --format comment (default: the benchmark's)."),
) -> None:
    """Cases added, removed and changed between two manifests (request vs evaluation-only changes).

    `--format comment` renders the pull-request comment the GitHub workflow posts: the cases per
    scenario and the estimated output tokens and cost of the new model calls, per model.

    Examples:

        helmbench diff old/manifest.jsonl build/manifest.jsonl

        helmbench diff --against origin/main --format github

        helmbench diff --against origin/main --format comment > build/pr-comment.md
    """
    import tempfile

    from helmbench import api
    from helmbench.cli import validate
    from helmbench.cli.diff_comment import render
    from helmbench.errors import UsageError

    for path, name in ((old, "OLD"), (new, "NEW")):
        if path is not None:
            validate.input_file(path, name, what="manifest")
    if against:
        root = api.benchmark_root(root)
        validate.bench_root(root, "--root")

    with tempfile.TemporaryDirectory() as tmp:
        if against:
            if old is not None and new is None:
                new, old = old, None
            old = api.compile_at_revision(root, against, Path(tmp))
            if new is None:
                new = api.compile(root, Path(tmp) / "new").path
        if old is None or new is None:
            raise UsageError("give OLD and NEW manifests, or --against REF")
        d = api.diff(old, new)
        if format is DiffFmt.comment:
            from helmbench.cli.diff_comment import render_comment

            if models_file is None:
                models_file = api.models_file_of(root)
            print(render_comment(d, old, new, models_file, api.in_build(db=None)[0]))
            return
        print(render(d, format.value))


def conversation_lines(conv: dict | None) -> list[tuple[str, str]]:
    """(heading, text) of what follows the opening: scripted turns, or what the user model is told."""
    if not conv:
        return []
    if conv["user"] == "scripted":
        return [(f"turn {n} (user, scripted)", text) for n, text in enumerate(conv["turns"], start=2)]
    model = conv["user_model"]["id"]
    out = [(f"simulated user ({model}, at most {conv['max_turns']} turns): persona", conv["persona"]),
           ("simulated user: goal", conv["goal"])]
    if conv.get("stop_when"):
        out.append(("simulated user: stop when", conv["stop_when"]))
    out += [(f"simulated user: landmark by turn {lm['turn']} (never shown to the model under test)", lm["text"])
            for lm in conv["landmarks"]]
    return out
