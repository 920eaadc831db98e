"""Check every path a command was given before it starts work: exists, right kind, writable.

Why up front: a command that fails half-way (after linting for a minute, or after paying
for calls) for a typo in `--out` wastes the user's time or money, and the OS error it dies
with names neither the option nor the fix. Each check raises a `UsageError` (exit 2) that
names the option and the path, and records the path so that a storage failure later in the
command (`helmbench.cli.guard`) can name it too.
"""

from __future__ import annotations

import os
from pathlib import Path

from typer._click.globals import get_current_context

from helmbench.cli.guard import META_DB, META_PATHS
from helmbench.errors import UsageError


def _record(path: Path, role: str, *, db: bool = False) -> None:
    """Remember `path` ("in" read, "out" written) for the guard's messages about later failures."""
    ctx = get_current_context(silent=True)
    if ctx is None:
        return
    paths = ctx.meta.setdefault(META_PATHS, {})
    paths.setdefault(path, role)
    if db:
        ctx.meta[META_DB] = path


def _writable(path: Path) -> bool:
    """Whether files can be created in folder `path` (False on a read-only file system too)."""
    return os.access(path, os.W_OK | os.X_OK)


def _existing_ancestor(path: Path) -> Path:
    p = path.absolute()
    while not p.exists() and p != p.parent:
        p = p.parent
    return p


def input_dir(path: Path, option: str, *, what: str = "folder", hint: str | None = None) -> Path:
    """An existing, readable folder."""
    if not path.exists():
        raise UsageError(f"{option}: {what} not found: {path}", hint=hint or f"pass an existing {what} with {option}")
    if not path.is_dir():
        raise UsageError(f"{option}: {path} is a file, not a folder", hint=hint or f"pass a {what} with {option}")
    if not os.access(path, os.R_OK | os.X_OK):
        raise UsageError(f"{option}: cannot read {path} (permission denied)", hint="fix its permissions")
    _record(path, "in")
    return path


def input_file(path: Path, option: str, *, what: str = "file", hint: str | None = None,
               optional: bool = False) -> Path:
    """An existing, readable file (`optional`: a missing one is fine, a folder is not)."""
    if not path.exists():
        if optional:
            return path
        raise UsageError(f"{option}: {what} not found: {path}", hint=hint or f"pass an existing {what} with {option}")
    if path.is_dir():
        raise UsageError(f"{option}: {path} is a folder, not a {what}", hint=hint or f"pass a {what} with {option}")
    if not os.access(path, os.R_OK):
        raise UsageError(f"{option}: cannot read {path} (permission denied)", hint="fix its permissions")
    _record(path, "in")
    return path


def output_dir(path: Path, option: str) -> Path:
    """A folder that exists and is writable, or can be created (its nearest existing parent is a writable folder)."""
    if path.exists():
        if not path.is_dir():
            raise UsageError(f"{option}: {path} is a file, not a folder", hint=f"pass a folder with {option}")
        if not _writable(path):
            raise UsageError(f"{option}: cannot write in {path} (read-only or permission denied)",
                             hint=f"pass a writable folder with {option}")
    else:
        base = _existing_ancestor(path)
        if not base.is_dir():
            raise UsageError(f"{option}: cannot create {path}: {base} is a file, not a folder",
                             hint=f"pass a folder path with {option}")
        if not _writable(base):
            raise UsageError(f"{option}: cannot create {path}: {base} is read-only or not writable",
                             hint=f"pass a path in a writable folder with {option}")
    _record(path, "out")
    return path


def output_file(path: Path, option: str, *, what: str = "file", db: bool = False) -> Path:
    """A file that is writable, or can be created in a writable folder."""
    if path.exists():
        if path.is_dir():
            raise UsageError(f"{option}: {path} is a folder, not a {what}",
                             hint=f"pass a file path with {option}, e.g. {path / ('results.db' if db else 'out')}")
        if not os.access(path, os.W_OK):
            raise UsageError(f"{option}: cannot write {path} (read-only or permission denied)",
                             hint=f"pass a writable {what} with {option}")
    output_dir(path.parent, option)
    _record(path, "out", db=db)
    return path


def db_to_read(path: Path, option: str = "--db", *, optional: bool = False, open_now: bool = False) -> Path:
    """An existing results database to read (its content is checked when it is opened).

    `open_now`: open and check it here, for commands that would otherwise find a corrupt
    file only deep inside a long job (publish, inside mkdocs).
    """
    if not path.exists() and not optional:
        from helmbench.api import NO_RUN_HINT

        raise UsageError(f"{option}: no run has been made yet (dry run only): there is no results database at {path}",
                         hint=f"{NO_RUN_HINT}; or pass the results.db a run wrote with {option}")
    input_file(path, option, what="results database", optional=optional)
    _record(path, "in", db=True)
    if open_now and path.exists():
        from helmbench.api import check_database

        check_database(path)
    return path


def db_to_write(path: Path, option: str = "--db") -> Path:
    """A results database to create or add to."""
    return output_file(path, option, what="results database file", db=True)


def bench_root(path: Path, option: str = "ROOT") -> Path:
    """The benchmark folder."""
    return input_dir(path, option, what="benchmark folder", hint="pass the folder that holds scenarios/")


def run_paths(manifest: Path, models_file: Path, db: Path, *, dry_run: bool) -> None:
    """`helmbench run*`: the manifest and models.yml to read, the database to write (or read, dry)."""
    input_file(manifest, "--manifest", what="manifest", hint="run `helmbench compile` first, or pass --manifest")
    input_file(models_file, "--models-file", what="models file", hint="pass --models-file, e.g. benchmark/models.yml")
    if dry_run:
        db_to_read(db, optional=True)
    else:
        db_to_write(db)


def publish_paths(db: Path, manifest: Path, config_file: Path | None, site_dir: Path | None, *,
                  manifest_named: bool = False) -> None:
    """`helmbench publish`: a missing database, or the default manifest missing, gives a site that says how to
    run (a fresh checkout); a manifest the user named must exist (a typo would publish a site of no run)."""
    db_to_read(db, optional=True, open_now=True)
    if input_file(manifest, "--manifest", what="manifest", optional=not manifest_named,
                  hint="run `helmbench compile` first, or name the manifest it wrote").is_file():
        from helmbench.api import manifest_header

        manifest_header(manifest)  # the site picks its run by this header: a broken one is refused, not ignored
    if config_file is not None:
        input_file(config_file, "--config-file", what="mkdocs configuration",
                   hint="run from the repository root, or pass --config-file")
    if site_dir is not None:
        output_dir(site_dir, "--site-dir")


def iso_date(value: str, option: str):
    """A `YYYY-MM-DD` option as a date, or a usage error naming the option."""
    from datetime import date

    try:
        return date.fromisoformat(value)
    except ValueError:
        raise UsageError(f"{option} {value!r} is not a date", hint="write it as YYYY-MM-DD, e.g. 2026-11-26") from None
