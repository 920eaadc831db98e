"""A content-addressed cache for the costly parts of a build: score summaries and charts.

Why: the paired tests and drawing charts are most of a build's work, yet after
`helmbench run` usually only some models have new results. A key is the sha256 of the pickled
inputs plus a digest of the code that turns them into the output (helmbench/score, charts.py)
and the matplotlib version, so a change to either misses the cache rather than serving a
stale number. The cache lives next to results.db (`build/cache/site/`); after a build only
the entries it used are kept. A cache that cannot be read or written only makes a build slower.
"""

from __future__ import annotations

import gc
import hashlib
import pickle
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

from helmbench import safewrite

PROTOCOL = pickle.HIGHEST_PROTOCOL


@lru_cache(maxsize=1)
def code_digest() -> str:
    """Digest of the scoring and charting code, and of matplotlib's version."""
    from importlib.metadata import version

    import helmbench.publish.charts as charts
    import helmbench.score as score

    h = hashlib.sha256(version("matplotlib").encode())
    for path in sorted(Path(score.__file__).parent.glob("*.py")) + [Path(charts.__file__)]:
        h.update(path.read_bytes())
    return h.hexdigest()


@lru_cache(maxsize=1)
def _package_digest() -> str:
    from importlib.metadata import version

    h = hashlib.sha256(code_digest().encode())
    for name in ("jinja2", "markupsafe", "mkdocs", "mkdocs-material", "markdown"):
        h.update(f"|{name}={version(name)}".encode())
    package = Path(__file__).resolve().parents[1]  # helmbench/
    # By name, size and modification time, not bytes: reading the package's 1.5 MB cost ~0.17 s of
    # each build, and its files change only when HELMBench is installed or edited, which sets both.
    for path in sorted(p for p in package.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        stat = path.stat()
        h.update(f"{path.relative_to(package)}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    return h.hexdigest()


def site_code_digest() -> str:
    """Digest of everything besides the data that shapes a page: every file of the helmbench package
    (code, templates, packaged pages and data, the built-in plugins included; by size and time), the versions of the
    libraries that render, and which plugins are installed, from which distribution at which version
    (read from their metadata, each time: loading them costs a second, and a plugin can be installed
    in a running process). Any change misses the cache."""
    from helmbench.plugins.entrypoints import declared

    return hashlib.sha256(f"{_package_digest()}|{declared()!r}".encode()).hexdigest()


def inputs_digest(files: list[Path], extra) -> str:
    """Digest of the site's inputs: the bytes of `files` (results.db, its write-ahead log, the
    manifest; a missing one counts as missing), `extra` (the settings) and `site_code_digest()`.

    By content, not by modification time: a database copied over with its times kept is still seen
    as changed. Hashing is much cheaper than reading the rows (a 40 MB database: ~0.1 s)."""
    h = hashlib.sha256(f"{site_code_digest()}|{extra!r}".encode())
    for path in files:
        h.update(f"|{path.name}|".encode())
        try:
            with open(path, "rb") as f:
                h.update(hashlib.file_digest(f, "sha256").digest())
        except OSError:
            h.update(b"missing")
    return h.hexdigest()


@contextmanager
def _collector_paused():
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def digest(obj) -> str:
    return hashlib.sha256(pickle.dumps(obj, protocol=PROTOCOL)).hexdigest()


class BuildCache:
    """`folder`: where entries live; `root`: the build folder it is in (writes never leave it, nor follow a link)."""

    def __init__(self, folder: Path, root: Path | None = None):
        self.folder = folder
        self.root = root if root is not None else folder
        self.used: set[str] = set()

    def key(self, kind: str, payload) -> str:
        return hashlib.sha256(f"{code_digest()}|{kind}|{digest(payload)}".encode()).hexdigest()

    def get(self, key: str):
        """(True, value) or (False, None)."""
        try:
            data = (self.folder / f"{key}.pickle").read_bytes()
            with _collector_paused():  # unpickling makes ~10^5 objects, none of them garbage: a collection
                value = pickle.loads(data)  # pass in between only scans them (~40 % of the load's time)
        except (OSError, pickle.UnpicklingError, EOFError, ValueError, AttributeError, ImportError):
            return False, None
        self.used.add(key)
        return True, value

    def put(self, key: str, value) -> None:
        try:  # the safe writer's temporary names are random: two builds at once never share one
            safewrite.write_bytes(self.folder / f"{key}.pickle", pickle.dumps(value, protocol=PROTOCOL), self.root)
            self.used.add(key)
        except (OSError, safewrite.UnsafeWrite):
            pass

    def get_chart(self, key: str, dest: str):
        """(True, value) after writing the cached SVG to `dest`, or (False, None)."""
        hit, entry = self.get(key)
        if not hit:
            return False, None
        svg, value = entry
        safewrite.write_bytes(dest, svg)  # into the build's fresh site folder
        return True, value

    def put_chart(self, key: str, dest: str, value) -> None:
        try:
            self.put(key, (Path(dest).read_bytes(), value))
        except OSError:
            pass

    def stale(self, db: Path) -> bool:
        """Whether results.db changed since the last build (so some charts will be drawn)."""
        if not db.is_file():
            return False
        marker = self.folder / "built"
        if not marker.is_file():
            return True
        changed = max(p.stat().st_mtime for p in (db, db.with_name(db.name + "-wal")) if p.is_file())
        return changed > marker.stat().st_mtime

    def mark_built(self) -> None:
        try:
            safewrite.write_bytes(self.folder / "built", b"", self.root)
        except (OSError, safewrite.UnsafeWrite):
            pass

    def prune(self) -> None:
        """Keep only the entries this build used."""
        if self.folder.is_dir():
            for entry in self.folder.glob("*.pickle"):
                if entry.stem not in self.used:
                    entry.unlink(missing_ok=True)
