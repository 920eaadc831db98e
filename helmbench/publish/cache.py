"""A content-addressed cache for the costly parts of a build: score summaries and charts.

Why: the paired tests and drawing charts are most of a build's work, yet after
`helmbench run` usually only some models have new results. A key is the sha256 of the encoded
inputs plus a digest of the code that turns them into the output (helmbench/score, charts.py)
and the matplotlib version, so a change to either misses the cache rather than serving a
stale number. The cache lives next to results.db (`build/cache/site/`); after a build only
the entries it used are kept. A cache that cannot be read or written only makes a build slower.

An entry is data, never code: JSON (`codec.py`: nothing but JSON values, tuples, sets, Markup and
the site's dataclasses can come out of it), signed with a key kept outside the build folder
(`~/.cache/helmbench/site-cache.key`, made on first use, readable by its owner only). `build/` can
be written by a pull request, a CI cache or another user, and its names are the same on every
machine; an entry that is not signed by this key, or fails to decode, is a miss and is rebuilt,
so a planted entry neither runs nor shows its numbers.
"""

from __future__ import annotations

import gc
import hashlib
import hmac
import os
import secrets
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

from helmbench import safewrite

from .codec import DecodeError, decode, encode

MAGIC = b"helmbench-site-cache 1\n"
KEY_BYTES = 32


def _key_file() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "helmbench" / "site-cache.key"


@lru_cache(maxsize=1)
def signing_key() -> bytes:
    """This user's key for the cache's entries, made on first use (owner-only, no link followed).

    Where it cannot be read or made (a read-only home), a key for this process only: entries
    then never verify in a later build, which is slower and still correct."""
    path = _key_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if not path.exists():
            tmp = path.with_name(f".{path.name}.{secrets.token_hex(8)}")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(secrets.token_bytes(KEY_BYTES))
            try:
                os.link(tmp, path)  # never replaces a key another build made meanwhile
            except FileExistsError:
                pass
            finally:
                os.unlink(tmp)
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as f:
            key = f.read(KEY_BYTES + 1)
        if len(key) == KEY_BYTES:
            return key
    except OSError:
        pass
    return secrets.token_bytes(KEY_BYTES)


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
    return hashlib.sha256(encode(obj)).hexdigest()


def _signature(key: str, body: bytes) -> bytes:
    return hmac.new(signing_key(), key.encode() + b"\0" + body, hashlib.sha256).hexdigest().encode()


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
            data = (self.folder / f"{key}.json").read_bytes()
            head, signature, body = data[: len(MAGIC)], data[len(MAGIC): len(MAGIC) + 64], data[len(MAGIC) + 65:]
            if head != MAGIC or not hmac.compare_digest(signature, _signature(key, body)):
                return False, None  # not written by this user's builds for this key: rebuilt
            with _collector_paused():  # decoding makes ~10^5 objects, none of them garbage: a collection
                value = decode(body)  # pass in between only scans them
        except (OSError, DecodeError):
            return False, None
        self.used.add(key)
        return True, value

    def put(self, key: str, value) -> None:
        try:  # the safe writer's temporary names are random: two builds at once never share one
            body = encode(value)
            safewrite.write_bytes(self.folder / f"{key}.json", MAGIC + _signature(key, body) + b"\n" + body, self.root)
            self.used.add(key)
        except (OSError, safewrite.UnsafeWrite, TypeError, ValueError, RecursionError):
            pass  # a value the codec cannot give back (a bug: the round-trip tests look for it) is not cached

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
            for entry in [*self.folder.glob("*.json"), *self.folder.glob("*.pickle")]:  # .pickle: left by older releases
                if entry.suffix == ".pickle" or entry.stem not in self.used:
                    entry.unlink(missing_ok=True)
