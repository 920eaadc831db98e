"""Diff two manifests by case id, splitting what needs new model calls from re-judging only.

A pull request that edits a criterion costs judge calls; one that edits a perturbation
costs model calls for exactly the cases using it. The split lets a reviewer see which.
An edit to a severity, a difficulty or a weight costs no call but changes every score the
case feeds, so it is its own group rather than "unchanged".
"""

from __future__ import annotations

import json
import subprocess
import tarfile
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from helmbench import safewrite
from helmbench.errors import UsageError
from helmbench.manifest.reader import read_manifest
from helmbench.spec.naming import natural_key


@dataclass
class ManifestDiff:
    old_hash: str
    new_hash: str
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    request_changed: list[str] = field(default_factory=list)  # new model calls needed
    evaluation_changed: list[str] = field(default_factory=list)  # re-judging only
    scoring_changed: list[str] = field(default_factory=list)  # severity, difficulty or weight only: no call
    unchanged: int = 0

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.request_changed or self.evaluation_changed
                    or self.scoring_changed)

    def to_dict(self) -> dict:
        return asdict(self)


def _scoring(case: dict) -> str:
    """What the score of a case depends on besides its verdict (the hashes cover the rest)."""
    return json.dumps([case.get("severity"), case.get("difficulty"), case.get("weight")], sort_keys=True)


def _index(path: Path) -> tuple[str, dict[str, tuple[str, str, str]]]:
    m = read_manifest(path)
    return m.hash, {c["id"]: (c["hash"], c["request_hash"], _scoring(c)) for c in m}


def diff_manifests(old: str | Path, new: str | Path) -> ManifestDiff:
    old_hash, a = _index(Path(old))
    new_hash, b = _index(Path(new))
    d = ManifestDiff(old_hash, new_hash)
    for cid in sorted(a.keys() | b.keys(), key=natural_key):
        if cid not in b:
            d.removed.append(cid)
        elif cid not in a:
            d.added.append(cid)
        elif a[cid][1] != b[cid][1]:
            d.request_changed.append(cid)
        elif a[cid][0] != b[cid][0]:
            d.evaluation_changed.append(cid)
        elif a[cid][2] != b[cid][2]:
            d.scoring_changed.append(cid)
        else:
            d.unchanged += 1
    return d


def compile_at_revision(root: Path, ref: str, out_dir: Path) -> Path:
    """Compile the tree as it was at git revision `ref` (for pull-request diffs)."""
    from helmbench.manifest.emit import compile_tree

    root = root.resolve()
    try:
        top = Path(subprocess.run(["git", "-C", str(root), "rev-parse", "--show-toplevel"],
                                  check=True, capture_output=True, text=True).stdout.strip())
    except (subprocess.CalledProcessError, FileNotFoundError):
        raise UsageError(f"{root} is not inside a git repository; --against needs one") from None
    rel = root.relative_to(top).as_posix() or "."
    with tempfile.TemporaryDirectory() as tmp:
        archive = Path(tmp) / "tree.tar"
        proc = subprocess.run(["git", "-C", str(top), "archive", "--format=tar", "-o", str(archive), ref, "--", rel],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise UsageError(f"cannot read {rel} at revision {ref!r}: {proc.stderr.strip()}")
        with tarfile.open(archive) as tar:
            tar.extractall(Path(tmp) / "src", filter="data")
        result = compile_tree(Path(tmp) / "src" / rel, Path(tmp) / "out")
        dest = out_dir / f"manifest-{ref.replace('/', '_')}.jsonl"
        safewrite.copy_file(result.path, dest, out_dir)
    return dest


#: The version of `diff --format json`'s shape: diff.schema.json's `format` (bump both together).
DIFF_FORMAT = 1
