"""Every command with a table of bad arguments: a clear `error:` line naming the path, a `hint:`,
a non-zero exit (2 for a bad argument), and never a traceback.

In-process through Typer's CliRunner (the same group, guard and rendering as the installed
`helmbench`); two subprocess smoke tests at the end check the real entry point.
"""

from __future__ import annotations

import os
import subprocess
import sys
import traceback
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from helmbench.cli import app

REPO = Path(__file__).resolve().parents[2]
TREE = REPO / "tests" / "manifest" / "golden" / "tree"
CASE = "P1-B1-S1-C1-PT1"


@pytest.fixture(scope="module")
def bad(pipeline, broken, tmp_path_factory):
    """Paths that are wrong in every way a path option can be wrong."""
    tmp = tmp_path_factory.mktemp("bad")
    a_file = tmp / "a_file.txt"
    a_file.write_text("not what you want\n", encoding="utf-8")
    (tmp / "a_dir").mkdir()
    lines = pipeline.manifest.read_bytes().split(b"\n")
    header_bad = tmp / "header_not_utf8.jsonl"
    header_bad.write_bytes(b"\n".join([lines[0][:40] + b"\xff\xfe" + lines[0][40:], *lines[1:]]))
    line3_bad = tmp / "line3_not_utf8.jsonl"
    line3_bad.write_bytes(b"\n".join([*lines[:2], lines[2][:30] + b"\xc3\x28" + lines[2][30:], *lines[3:]]))
    return SimpleNamespace(
        missing=tmp / "missing", a_file=a_file, a_dir=tmp / "a_dir", under_file=a_file / "sub",
        header_bad=header_bad, line3_bad=line3_bad, out=tmp / "out", p=pipeline, db=broken,
        mkdocs=REPO / "mkdocs.yml",
    )


def _man(b):
    return ["--manifest", str(b.p.manifest), "--models-file", str(b.p.models)]


#: (id, args from the `bad` namespace, the path the error must name, exit code).
#: `code` None: any non-zero (a storage failure, 1); 2: a bad argument.
TABLE = [
    # lint / schema / compile / list
    ("lint-missing", lambda b: ["lint", str(b.missing)], "missing", 2),
    ("lint-file", lambda b: ["lint", str(b.a_file)], "a_file", 2),
    ("schema-out-file", lambda b: ["schema", "--out", str(b.a_file)], "a_file", 2),
    ("schema-out-under-file", lambda b: ["schema", "--out", str(b.under_file)], "a_file", 2),
    ("compile-root-missing", lambda b: ["compile", str(b.missing)], "missing", 2),
    ("compile-root-file", lambda b: ["compile", str(b.a_file)], "a_file", 2),
    ("compile-out-file", lambda b: ["compile", str(TREE), "--out", str(b.a_file)], "a_file", 2),
    ("compile-out-under-file", lambda b: ["compile", str(TREE), "--out", str(b.under_file)], "a_file", 2),
    ("compile-out-proc", lambda b: ["compile", str(TREE), "--out", "/proc/version/x"], "/proc/version", 2),
    ("list-missing", lambda b: ["list", str(b.missing)], "missing", 2),
    ("list-file", lambda b: ["list", str(b.a_file)], "a_file", 2),
    # show / diff
    ("show-manifest-missing", lambda b: ["show", CASE, "--manifest", str(b.missing)], "missing", 2),
    ("show-manifest-dir", lambda b: ["show", CASE, "--manifest", str(b.a_dir)], "a_dir", 2),
    ("show-manifest-not-json", lambda b: ["show", CASE, "--manifest", str(b.a_file)], "a_file", None),
    ("show-manifest-header-not-utf8", lambda b: ["show", CASE, "--manifest", str(b.header_bad)], "header_not_utf8", None),
    ("show-manifest-line-not-utf8", lambda b: ["show", CASE, "--manifest", str(b.line3_bad)], "line3_not_utf8.jsonl:3", None),
    ("show-root-missing", lambda b: ["show", CASE, "--root", str(b.missing)], "missing", 2),
    ("diff-old-missing", lambda b: ["diff", str(b.missing), str(b.p.manifest)], "missing", 2),
    ("diff-new-dir", lambda b: ["diff", str(b.p.manifest), str(b.a_dir)], "a_dir", 2),
    ("diff-old-not-utf8", lambda b: ["diff", str(b.header_bad), str(b.p.manifest)], "header_not_utf8", None),
    ("diff-against-root-missing", lambda b: ["diff", "--against", "HEAD", "--root", str(b.missing)], "missing", 2),
    # run and its variants
    ("run-db-dir", lambda b: ["run", *_man(b), "--db", str(b.a_dir)], "a_dir", 2),
    ("run-db-under-file", lambda b: ["run", *_man(b), "--db", str(b.under_file)], "a_file", 2),
    ("run-manifest-missing", lambda b: ["run", "--manifest", str(b.missing), "--models-file", str(b.p.models),
                                        "--db", str(b.out / "r.db")], "missing", 2),
    ("run-manifest-dir", lambda b: ["run", "--manifest", str(b.a_dir), "--models-file", str(b.p.models),
                                    "--db", str(b.out / "r.db")], "a_dir", 2),
    ("run-manifest-not-utf8", lambda b: ["run", "--manifest", str(b.line3_bad), "--models-file", str(b.p.models),
                                         "--db", str(b.out / "r.db")], "line3_not_utf8.jsonl:3", None),
    ("run-models-missing", lambda b: ["run", "--manifest", str(b.p.manifest), "--models-file", str(b.missing),
                                      "--db", str(b.out / "r.db")], "missing", 2),
    ("run-models-dir", lambda b: ["run", "--manifest", str(b.p.manifest), "--models-file", str(b.a_dir),
                                  "--db", str(b.out / "r.db")], "a_dir", 2),
    ("run-batch-manifest-missing", lambda b: ["run-batch", "--all-scenarios", "--manifest", str(b.missing),
                                              "--models-file", str(b.p.models)], "missing", 2),
    ("run-all-models-dir", lambda b: ["run-all", "--manifest", str(b.p.manifest), "--models-file", str(b.a_dir)],
     "a_dir", 2),
    ("run-single-manifest-dir", lambda b: ["run-single", CASE, "--manifest", str(b.a_dir),
                                           "--models-file", str(b.p.models)], "a_dir", 2),
    # readers
    ("report-db-etc-passwd", lambda b: ["report", "--db", "/etc/passwd"], "/etc/passwd", 2),
    ("report-manifest-dir", lambda b: ["report", "--db", str(b.p.db), "--manifest", str(b.a_dir)], "a_dir", 2),
    ("report-manifest-not-utf8", lambda b: ["report", "--db", str(b.p.db), "--manifest", str(b.header_bad)],
     "header_not_utf8", None),
    ("publish-manifest-dir", lambda b: ["publish", "--manifest", str(b.a_dir)], "a_dir", 2),
    ("publish-manifest-not-utf8", lambda b: ["publish", "--db", str(b.p.db), "--manifest", str(b.header_bad),
                                             "--config-file", str(b.mkdocs), "--site-dir", str(b.out / "s")],
     "header_not_utf8", None),
    ("publish-site-dir-file", lambda b: ["publish", "--config-file", str(b.mkdocs), "--site-dir", str(b.a_file)],
     "a_file", 2),
    ("publish-site-dir-etc-passwd", lambda b: ["publish", "--config-file", str(b.mkdocs), "--site-dir", "/etc/passwd"],
     "/etc/passwd", 2),
    ("publish-site-dir-under-file", lambda b: ["publish", "--config-file", str(b.mkdocs),
                                               "--site-dir", str(b.under_file)], "a_file", 2),
    ("publish-config-missing", lambda b: ["publish", "--config-file", str(b.missing)], "missing", 2),
    ("publish-config-dir", lambda b: ["publish", "--config-file", str(b.a_dir)], "a_dir", 2),
    ("serve-db-etc-passwd", lambda b: ["serve", "--db", "/etc/passwd"], "/etc/passwd", 2),
    ("serve-publish-file", lambda b: ["serve", "--db", str(b.p.db), "--publish", str(b.a_file)], "a_file", 2),
    ("serve-serve-dir-file", lambda b: ["serve", "--db", str(b.p.db), "--serve-dir", str(b.a_file)], "a_file", 2),
    # Typer's own usage errors get the same two lines
    ("report-bad-format", lambda b: ["report", "--db", str(b.p.db), "--format", "xml"], "--format", 2),
    ("unknown-command", lambda b: ["frobnicate"], "frobnicate", 2),
]

# --db that is missing or a folder, for every reader (publish accepts a missing one: its site says how to run)
TABLE += [(f"{cmd}-db-{what}", lambda b, cmd=cmd, what=what: [cmd, "--db", str(getattr(b, what))], what, 2)
          for cmd in ("costs", "report", "serve", "publish") for what in ("missing", "a_dir")
          if (cmd, what) != ("publish", "missing")]

#: Every broken database with every command that reads or writes one. `empty` is a valid new
#: database to a writer (run fills it), so only readers refuse it.
BROKEN = ["empty", "garbage", "text", "truncated_header", "truncated", "corrupt_page", "not_results"]
DB_COMMANDS = {
    "run": lambda b: ["run", *_man(b)],
    "run-dry": lambda b: ["run", "--dry-run", *_man(b)],
    "run-batch": lambda b: ["run-batch", "--all-scenarios", *_man(b)],
    "run-single": lambda b: ["run-single", CASE, *_man(b)],
    "costs": lambda b: ["costs"],
    "report": lambda b: ["report"],
    "publish": lambda b: ["publish", "--config-file", str(b.mkdocs), "--site-dir", str(b.out / "site")],
    "serve": lambda b: ["serve", "--publish", str(b.out / "snap")],
}
WRITERS = {"run", "run-dry", "run-batch", "run-single"}


def invoke(args: list[str]):
    result = CliRunner().invoke(app, args, env={"OPENROUTER_API_KEY": None, "COLUMNS": "200"})
    return result


def assert_clean_failure(result, named: str, code: int | None) -> str:
    """Non-zero, `error:` first on stderr naming `named`, a hint, and no traceback anywhere."""
    shown = result.stdout + result.stderr
    assert isinstance(result.exception, SystemExit) or result.exception is None, \
        "".join(traceback.format_exception(result.exception))
    assert "Traceback" not in shown
    assert result.exit_code != 0, shown
    if code is not None:
        assert result.exit_code == code, shown
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert lines and lines[0].startswith("error: "), result.stderr
    error = "\n".join(ln for ln in lines if not ln.lstrip().startswith("hint:"))
    assert named in error, f"{named!r} not named in: {result.stderr}"
    assert any(ln.lstrip().startswith("hint: ") for ln in lines), result.stderr
    assert "completed" not in shown
    return result.stderr


@pytest.mark.parametrize("args, named, code", [pytest.param(a, n, c, id=i) for i, a, n, c in TABLE])
def test_bad_argument(bad, args, named, code):
    assert_clean_failure(invoke(args(bad)), named, code)


@pytest.mark.parametrize("kind, command", [(k, c) for k in BROKEN for c in DB_COMMANDS
                                           if not (k == "empty" and c in WRITERS)])  # see test_run_fills_an_empty_file
def test_broken_database(bad, command, kind):
    db = bad.db[kind]
    before = db.read_bytes()
    stderr = assert_clean_failure(invoke([*DB_COMMANDS[command](bad), "--db", str(db)]), str(db), None)
    if kind in ("truncated", "corrupt_page", "truncated_header"):
        assert "not a usable SQLite database" in stderr
    assert db.read_bytes() == before, "a broken database must be left as it was"


def test_run_fills_an_empty_file(bad, tmp_path):
    """The one case above that is not an error: `touch results.db` then a dry run creates the schema."""
    db = tmp_path / "results.db"
    db.touch()
    result = invoke(["run", "--dry-run", *_man(bad), "--db", str(db)])
    assert result.exit_code == 0, result.stderr


def test_good_arguments_still_work(bad):
    """The guard and the checks do not refuse what is right: the same commands on the good files."""
    assert invoke(["report", "--db", str(bad.p.db), "--manifest", str(bad.p.manifest), "--format", "json"]).exit_code == 0
    assert invoke(["costs", "--db", str(bad.p.db)]).exit_code == 0
    assert invoke(["list", str(TREE)]).exit_code == 0
    out = invoke(["show", CASE, "--manifest", str(bad.p.manifest), "--json"])
    assert out.exit_code == 0 and CASE in out.stdout


def test_list_clips_a_very_long_title_in_its_table_and_keeps_it_whole_in_json(tmp_path):
    import json
    import shutil

    tree = tmp_path / "bench"
    shutil.copytree(REPO / "tests" / "lint" / "base", tree)
    s1 = tree / "scenarios/P1/B1/S1--late-planning/S1.md"
    long = "Late-stage planning " + "and more " * 600
    s1.write_text(s1.read_text(encoding="utf-8").replace("title: Late-stage planning", f"title: {long.strip()}"),
                  encoding="utf-8")
    table = invoke(["list", str(tree)])
    assert table.exit_code == 0, table.stderr
    assert "Late-stage" in table.stdout and "characters)" in table.stdout
    assert table.stdout.count("and more") < 40 and len(table.stdout.splitlines()) < 60
    listed = invoke(["list", str(tree), "--format", "json"])
    assert long.strip() in {r["title"] for r in json.loads(listed.stdout)["scenarios"]}


def test_control_characters_in_a_path_are_shown_not_obeyed(bad):
    result = invoke(["list", str(bad.missing) + "\x1b[2J"])
    assert result.exit_code == 2 and "\x1b" not in result.stderr and "\\x1b[2J" in result.stderr


# --- the installed entry point, in a fresh interpreter -------------------------------------------


def _helmbench(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "OPENROUTER_API_KEY"}
    return subprocess.run([sys.executable, "-m", "helmbench", *args], cwd=cwd, capture_output=True, text=True,
                          env=env, timeout=120)


def test_subprocess_bad_out_is_exit_2_without_traceback(tmp_path):
    proc = _helmbench("compile", str(TREE), "--out", "/etc/passwd", cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("error: --out: /etc/passwd is a file, not a folder")
    assert "hint: " in proc.stderr


def test_subprocess_corrupt_database_is_refused_without_traceback(bad, tmp_path):
    proc = _helmbench("report", "--db", str(bad.db["corrupt_page"]), cwd=tmp_path)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith(f"error: {bad.db['corrupt_page']} is not a usable SQLite database")


# --- the guard itself, on failures no bad argument above produces ------------------------------


def _failing_app(exc: BaseException):
    import typer

    from helmbench.cli.guard import GuardedGroup

    demo = typer.Typer(cls=GuardedGroup)

    @demo.command()
    def boom() -> None:
        raise exc

    @demo.command()
    def other() -> None:  # two commands, so `boom` is a subcommand as in helmbench
        pass

    return demo


@pytest.mark.parametrize("exc, code, first", [
    (__import__("sqlite3").OperationalError("database or disk is full"), 1, "error: the disk is full"),
    (OSError(28, "No space left on device", "/data/out.json"), 1, "error: the disk is full while writing /data/out.json"),
    (OSError(30, "Read-only file system", "/data/x"), 1, "error: /data/x is on a read-only file system"),
    (ValueError("a bug"), 1, "error: unexpected ValueError: a bug"),
], ids=["sqlite-full", "enospc", "erofs", "bug"])
def test_guard_renders_what_escapes_a_command(exc, code, first):
    result = CliRunner().invoke(_failing_app(exc), ["boom"])
    assert result.exit_code == code and isinstance(result.exception, SystemExit)
    assert result.stderr.startswith(first), result.stderr
    assert "hint: " in result.stderr and "Traceback" not in result.stderr


def test_helmbench_traceback_shows_a_bug_in_full():
    result = CliRunner().invoke(_failing_app(ValueError("a bug")), ["boom"], env={"HELMBENCH_TRACEBACK": "1"})
    assert isinstance(result.exception, ValueError)
