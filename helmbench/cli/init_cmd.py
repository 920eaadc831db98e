"""`helmbench init`: scaffold a benchmark repository the authors' way (scenarios/ at the root).

The files come from `init_template/` in the package (names starting `_dot_` become dotfiles, so
that packaging never drops them); `{version}` in them becomes this helmbench's version, so the
pre-commit hook and the workflow install the same release that wrote them. Nothing that exists is
overwritten; in a folder that already holds scenarios/ only the tooling files are added, never
the example benchmark.
"""

from __future__ import annotations

from pathlib import Path

import typer

from helmbench.cli.app import app

TEMPLATE = Path(__file__).resolve().parent / "init_template"
DOT = "_dot_"
#: Files of the example benchmark, left out when the folder already holds one.
EXAMPLE = ("benchmark.yml", "scenarios")


def template_files() -> list[tuple[str, Path]]:
    """(destination path relative to the new repository, template file), in a stable order."""
    out = []
    for src in sorted(TEMPLATE.rglob("*")):
        if not src.is_file() or "__pycache__" in src.parts or src.suffix == ".pyc":
            continue
        rel = src.relative_to(TEMPLATE).as_posix()
        dest = "/".join("." + p[len(DOT):] if p.startswith(DOT) else p for p in rel.split("/"))
        out.append((dest, src))
    return out


def scaffold(target: Path) -> tuple[list[str], list[str]]:
    """Write the template into `target`; returns (created, skipped) relative paths."""
    from helmbench import __version__
    from helmbench.api import write_text

    existing_benchmark = (target / "scenarios").is_dir()
    created, skipped = [], []
    for dest, src in template_files():
        path = target / dest
        if existing_benchmark and dest.split("/")[0] in EXAMPLE:
            continue
        if path.exists() or path.is_symlink():
            skipped.append(dest)
            continue
        text = src.read_text(encoding="utf-8").replace("{version}", __version__)
        # exclusive: never replace a file made meanwhile; a link in the way (scenarios -> elsewhere) is refused
        write_text(path, text, target, exclusive=True)
        created.append(dest)
    return created, skipped


@app.command("init")
def init(
    directory: Path = typer.Argument(Path("."), help="The folder for the new benchmark repository (created if missing)."),
) -> None:
    """Create a benchmark repository: benchmark.yml, models.yml, one example scenario per evaluation
    family, a pre-commit hook, a GitHub workflow and a README. Existing files are never overwritten.

    The example lints clean with --strict and runs as it is (a dry run without OPENROUTER_API_KEY).

    Examples:

        helmbench init my-benchmark

        cd my-benchmark && helmbench lint --strict && helmbench compile && helmbench run
    """
    from helmbench.errors import UsageError
    from helmbench.terminal import printable

    if directory.exists() and not directory.is_dir():
        raise UsageError(f"not a folder: {directory}", hint="give a folder for the new benchmark repository")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        created, skipped = scaffold(directory)
    except OSError as exc:
        raise UsageError(f"cannot write into {directory}: {exc.strerror or exc}") from None
    for rel in created:
        print(f"created {printable(str(directory / rel))}")
    for rel in skipped:
        print(f"kept    {printable(str(directory / rel))} (exists; not overwritten)")
    example = any(c.startswith("scenarios/") for c in created)
    if (directory / "scenarios").is_dir() and not example:
        print("scenarios/ exists: no example scenarios added")
    print(f"\nnext: {next_command(directory, strict=example)}")


def next_command(directory: Path, *, strict: bool) -> str:
    """The command to paste next. `--strict` only for the example, which is written to pass it: a
    benchmark that was there already may lack benchmark.yml, whose HB601 warning --strict fails.
    The folder is quoted for the shell, and `cd .` left out."""
    import shlex

    from helmbench.terminal import printable

    steps = f"helmbench lint{' --strict' if strict else ''} && helmbench compile && helmbench run"
    if directory.resolve() == Path.cwd().resolve():
        return steps
    return f"cd {printable(shlex.quote(str(directory)))} && {steps}"
