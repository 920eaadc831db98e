"""Find the benchmark from the current folder, the way git finds a repository.

Why: the benchmark's authors keep their scenarios in their own repository (`scenarios/` at its
root), this repository keeps them under `benchmark/`; either way a command run anywhere inside
must find the same tree, and put `build/` in the same place, without being told.

A folder is the benchmark root when it holds `scenarios/`; a folder holding `benchmark/scenarios/`
is a project whose root is that `benchmark/`. The search walks up from the start folder through
its parents. `build/` (manifest, results.db, site) lands in the project folder: the folder that
holds `benchmark/`, or the root itself in the authors' layout. A root named `benchmark` that is
not itself the top of a git repository counts as the `benchmark/` of its parent.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

SUBFOLDER = "benchmark"
MARKER = "scenarios"
#: Bound on the walk up, so a pathological mount never loops.
MAX_DEPTH = 64


@dataclass(frozen=True)
class Layout:
    root: Path  # the folder holding scenarios/ (what lint and compile read)
    project: Path  # the folder holding build/ (and optionally mkdocs.yml, site/)

    @property
    def build(self) -> Path:
        return self.project / "build"


def _is_dir(p: Path) -> bool:
    try:
        return p.is_dir()
    except OSError:  # permission denied, name too long: not a benchmark
        return False


def _layout_of(folder: Path) -> Layout | None:
    if _is_dir(folder / MARKER):
        if folder.name == SUBFOLDER and not (folder / ".git").exists():
            return Layout(folder, folder.parent)
        return Layout(folder, folder)
    if _is_dir(folder / SUBFOLDER / MARKER):
        return Layout(folder / SUBFOLDER, folder)
    return None


def find_layout(start: str | Path | None = None) -> Layout | None:
    """The benchmark at `start` (default: the current folder) or in the nearest parent, or None."""
    here = Path(start if start is not None else Path.cwd()).absolute()
    for depth, folder in enumerate((here, *here.parents)):
        if depth > MAX_DEPTH:
            break
        found = _layout_of(folder)
        if found is not None:
            return found
    return None


def _shown(p: Path) -> Path:
    """`p` relative to the current folder when it is inside it (shorter messages), else absolute."""
    try:
        rel = os.path.relpath(p, Path.cwd())
    except ValueError:
        return p
    return p if rel.startswith("..") else Path(rel)


def benchmark_root(arg: Path | None) -> Path:
    """The tree a command reads: `arg` (or its `benchmark/` subfolder), else the one found from here.

    An explicit folder that holds neither is returned unchanged, so lint reports what is wrong
    with it at the path the user typed.
    """
    from helmbench.errors import UsageError

    if arg is not None:
        if not _is_dir(arg / MARKER) and _is_dir(arg / SUBFOLDER / MARKER):
            return arg / SUBFOLDER
        return arg
    found = find_layout()
    if found is None:
        raise UsageError(f"no benchmark found in {Path.cwd()} or any folder above it",
                         hint="run inside a benchmark repository (a folder holding scenarios/), pass its path, "
                              "or create one with `helmbench init`")
    return _shown(found.root)


def build_dir(start: str | Path | None = None, *, options: str = "--out") -> Path:
    """Where build/ is: beside the benchmark found from `start` (default: here), else ./build.

    A default build folder that is a symbolic link is refused: with the `benchmark/` layout it
    sits outside the tree, in the repository a pull request changes, and a committed `build`
    link would send the manifest, the database and the site wherever it points. A user who keeps
    build/ elsewhere on purpose names the paths on the command line (`options`), which are trusted
    as named."""
    found = find_layout(start)
    build = _shown(found.build) if found is not None else Path("build")
    if build.is_symlink():
        from helmbench.safewrite import UnsafeWrite

        raise UnsafeWrite(f"refusing to use the build folder {build}: it is a symbolic link (to {os.readlink(build)}), "
                          "and a link committed there would lead HELMBench's writes elsewhere; nothing was written",
                          hint=f"remove the link, or name the paths on the command line ({options})")
    return build


#: What each command writes in or reads from build/, by the name of its option.
BUILD_FILES = {"manifest": "manifest.jsonl", "db": "results.db", "site_dir": "site", "serve_dir": "serve"}


def in_build(**given: Path | None) -> list[Path]:
    """Each path given, or its default in build/ beside the benchmark found from here (searched once),
    in the order given: `manifest, db = in_build(manifest=manifest, db=db)`. A named manifest that sits in
    a benchmark's build/ folder brings it: the other defaults are there (`run --manifest
    bench/build/manifest.jsonl` reads and writes bench/build/results.db), wherever the command runs from. A
    manifest anywhere else (a copy in build/manifests/, a file in the repository's top folder) brings nothing:
    the defaults stay in build/ beside the benchmark found from here, so no folder of the user's (an authored
    site/) is written over. A default that is a symbolic link, its build folder included, is refused
    (`build/serve -> ~/x` would have snapshots written, and old ones removed, there); a path the user names
    is trusted as named."""
    options = ", ".join("--" + o.replace("_", "-") for o, p in given.items() if p is None)
    named = given.get("manifest")
    build: Path | None = build_holding(named, options=options) if named is not None else None
    paths = []
    for option, path in given.items():
        if path is None:
            build = build if build is not None else build_dir(options=options)
            path = build / BUILD_FILES[option]
            if path.is_symlink():  # HELMBench's own file in its own folder: a link there was planted
                from helmbench.safewrite import UnsafeWrite

                flag = "--" + option.replace("_", "-")
                raise UnsafeWrite(f"refusing to use {path}: it is a symbolic link (to {os.readlink(path)}), and the "
                                  "build folder's own files are never used through a link; nothing was written",
                                  hint=f"remove the link, or name the path with {flag}")
        paths.append(path)
    return paths


def project_dir() -> Path | None:
    """The project folder of the benchmark found from here (where a mkdocs.yml or site/ may override the site)."""
    found = find_layout()
    return _shown(found.project) if found is not None else None


def _layout_holding(manifest: Path) -> Layout | None:
    """The benchmark whose build/ folder is the folder holding `manifest`, else None."""
    found = find_layout(manifest.parent.parent)
    if found is None or os.path.abspath(found.build) != os.path.abspath(manifest.parent):
        return None
    return found


def build_holding(manifest: Path, *, options: str = "--db") -> Path | None:
    """The build folder holding `manifest` when it is a benchmark's build/ (refused, as build_dir refuses it, when
    it is a symbolic link), else None."""
    found = _layout_holding(manifest)
    return build_dir(found.project, options=options) if found is not None else None


def models_file(manifest: Path | None = None) -> Path:
    """models.yml of the benchmark whose build/ holds `manifest` (when given and there is one: its own, even when
    missing, so the error names that benchmark), else of the benchmark found from here (or benchmark/models.yml
    when there is none)."""
    beside = _layout_holding(manifest) if manifest is not None else None
    if beside is not None:
        return _shown(beside.root / "models.yml")
    found = find_layout()
    return _shown(found.root / "models.yml") if found is not None else Path(SUBFOLDER) / "models.yml"
