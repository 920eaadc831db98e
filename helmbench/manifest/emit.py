"""`compile`: write `build/manifest.jsonl` and its read-only copy under `build/manifests/`.

Cases are streamed to disk as they are produced and the manifest hash is folded in
incrementally, so memory does not grow with the number of cases; the header (which needs
the count and the hash) is prepended at the end and the file is swapped in atomically.
"""

from __future__ import annotations

import filecmp
import hashlib
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from helmbench import __version__, safewrite
from helmbench.diagnostics import Diagnostic
from helmbench.errors import HelmbenchError
from helmbench.manifest.canonical import hash_of, canonical, canonical_normalised
from helmbench.manifest.cases import all_cases, catalog, hash_catalog
from helmbench.manifest.review import LeftOut, reviewed_only
from helmbench.spec.tree import Benchmark

FORMAT = "helmbench-manifest/1"


class LintFailed(HelmbenchError):
    """The tree has lint errors; the compiler refuses to write a manifest from it."""

    def __init__(self, diagnostics: list[Diagnostic]):
        errors = [d for d in diagnostics if d.is_error]
        super().__init__(f"the benchmark has {len(errors)} lint error(s); fix them before compiling",
                         hint="run `helmbench lint` to see them")
        self.diagnostics = diagnostics


@dataclass(frozen=True)
class CompileResult:
    path: Path
    copy: Path
    header: dict
    diagnostics: list[Diagnostic]
    left_out: LeftOut = LeftOut()  # unreviewed generated content kept out of the manifest


class _ManifestHash:
    """sha256 of canonical JSON of the ordered list of case hashes, folded one by one."""

    def __init__(self) -> None:
        self._h = hashlib.sha256(b"[")
        self.count = 0

    def add(self, case_hash: str) -> None:
        self._h.update((b"," if self.count else b"") + canonical(case_hash).encode())
        self.count += 1

    def hexdigest(self) -> str:
        h = self._h.copy()
        h.update(b"]")
        return "sha256:" + h.hexdigest()

    def manifest_hash(self, catalog_hash: str) -> str:
        """The manifest's identity: its ordered case hashes and its catalog (severities,
        difficulties, weights, titles), so that two manifests that would score the same
        responses differently never share a hash."""
        return hash_of({"cases": self.hexdigest(), "catalog": catalog_hash})


def header_for(bench: Benchmark, mh: _ManifestHash, unreviewed: int = 0, played: int = 0) -> dict:
    cat = catalog(bench)
    catalog_hash = hash_catalog(cat)
    header = {
        "format": FORMAT,
        "benchmark": {"name": bench.name, "version": bench.version, "description": bench.description},
        "compiler": f"helmbench {__version__}",
        "cases": mh.count,
        "manifest_hash": mh.manifest_hash(catalog_hash),
        "catalog_hash": catalog_hash,
        "catalog": cat,
    }
    if bench.content_note is not None:  # only when given: a benchmark.yml without it keeps its manifest's bytes
        header["benchmark"]["content_note"] = bench.content_note
    if unreviewed:  # cases built from generated text nobody has reviewed: a run of them is never ranked
        header["unreviewed"] = unreviewed
    if played:  # conversations played by several simulated users: only then, so other headers stay as they were
        header["simulated_users"] = {"users": [u.id for u in bench.models.simulators], "cases": played}
    return header


def write_manifest(bench: Benchmark, out_dir: Path, root: Path | None = None) -> tuple[Path, Path, dict]:
    """Write manifest.jsonl and its read-only copy under manifests/, through the safe writer: both
    appear whole or not at all, and a link below `root` (default `out_dir`; a committed
    `build/manifest.jsonl -> elsewhere`, or `build` itself when `root` is the tree) is refused,
    never written through."""
    root = out_dir if root is None else root
    mh = _ManifestHash()
    unreviewed = played = 0
    path = out_dir / "manifest.jsonl"
    safewrite.make_dir(out_dir, root)
    with tempfile.TemporaryFile(dir=out_dir) as body:  # nameless: removed whatever happens
        for case in all_cases(bench):  # records come normalised from all_cases
            mh.add(case["hash"])
            unreviewed += "unreviewed" in case
            played += "user_models" in (case["request"].get("conversation") or {})
            body.write(canonical_normalised(case).encode("utf-8") + b"\n")
        header = header_for(bench, mh, unreviewed, played)
        body.seek(0)
        with safewrite.atomic(path, root) as out:  # a full disk: the previous manifest stays
            out.write(canonical(header).encode("utf-8") + b"\n")
            shutil.copyfileobj(body, out, 1 << 20)  # bytes: no decode + re-encode
    copy = out_dir / "manifests" / f"{header['manifest_hash'].split(':', 1)[1]}.jsonl"
    # Same hash means same cases and catalog; only the compiler version string can differ,
    # and a copy with other bytes (an older compiler, or a damaged file) is replaced.
    if not (copy.is_file() and not copy.is_symlink() and filecmp.cmp(path, copy, shallow=False)):
        safewrite.copy_file(path, copy, root, perms=stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    return path, copy, header


def compile_tree(root: str | Path, out_dir: str | Path = Path("build"), *,
                 include_unreviewed: bool = False) -> CompileResult:
    """Lint the tree, refuse it on errors, else write the manifest; returns where it went.

    Generated components and drafts not yet `reviewed: true` are left out unless
    `include_unreviewed` (then their cases are marked, and a run of them is never ranked)."""
    from helmbench.lint import lint_tree
    from helmbench.spec import markdown

    try:
        bench, diags = lint_tree(root)
        if any(d.is_error for d in diags):
            raise LintFailed(diags)
        left_out = LeftOut()
        if not include_unreviewed:
            bench, left_out = reviewed_only(bench)
        out_dir = Path(out_dir)
        # a build folder inside the tree is checked from the tree down: a committed `build` link is refused
        inside = os.path.abspath(out_dir).startswith(os.path.abspath(root) + os.sep)
        path, copy, header = write_manifest(bench, out_dir, Path(root) if inside else None)
    finally:
        markdown.clear_cache()  # bodies parsed once for lint and composition; not kept after
    return CompileResult(path, copy, header, diags, left_out)
