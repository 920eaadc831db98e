"""Build an expensive, read-only test artifact once per test session, whichever xdist worker asks first.

Why: a session fixture is built once per *worker*. Pipelines run against the fake OpenRouter and mkdocs
builds of the shipped benchmark's site take tens of seconds each; with them built once per worker, every
worker that needs one pays for it again, or (as `--dist loadgroup` used to arrange) every test that needs
one has to queue on the same worker. Here the first worker that asks builds it into a folder shared by the
session's workers (under pytest's session temporary folder, never the repository), holding an exclusive
file lock; the others wait on that lock and then read what it built. So the tests using it can spread over
every worker and the artifact is still built once.

A worker that finds the lock held does not just wait: it builds another artifact the session will need and
nobody is building (`while_waiting`, set by tests/conftest.py), then tries again.

Only for artifacts the tests read: a test that writes must work on a copy (`shutil.copytree`, SQLite's
backup API), as it already had to when the fixture was per worker. A test that wrote into one anyway would
change what tests on other workers read while they run (seen: a test recompiling into the shared review
pipeline's folder made another's check of that manifest fail, now and then): each build records its files
(`untouched`), and the session fails at its end naming any file of an artifact that changed or went away.

What a build returns reaches the other workers as JSON (the site cache's codec, helmbench.publish.codec), never
as pickle: a file another process left in a temporary folder is data, and unpickling data runs code. A build
returning what the codec cannot give back fails when it ends, naming the type.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from helmbench.publish import codec
from helmbench.store.db import SQLITE_HEADER

T = TypeVar("T")

#: What this worker does instead of idling while another worker builds the artifact it asked for: builds one other
#: artifact the session will need that nobody is building, and says whether it did (tests/conftest.py sets it while
#: a session fixture is set up, `_build_ahead`). None: build_once just waits on the lock.
while_waiting: Callable[[], bool] | None = None


def session_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder shared by this session's workers: the parent of a worker's own temporary folder under
    xdist (`…/pytest-N/popen-gwK`), else the session's temporary folder itself."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def build_once(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], T]) -> T:
    """`build(folder)` run once per session into an empty `folder` named `name`; its result (what the site
    cache's codec encodes, with the dataclasses of SHARED_DATACLASSES) is returned to every caller, in every
    worker, as decoded from the shared file (the worker that built it gets what the others get). A build that
    raised is tried again by the next caller (and fails its tests the same way), never half-reused."""
    root = session_root(tmp_path_factory) / "shared"
    root.mkdir(exist_ok=True)
    folder, done = root / name, root / f"{name}.json"
    with open(root / f"{name}.lock", "w") as lock:
        _lock(lock)  # released when the file closes, also if this worker dies
        if done.exists():
            return codec.decode(done.read_bytes())
        if folder.exists():
            shutil.rmtree(folder)  # what a failed build left
        folder.mkdir()
        encoded = codec.encode(_in_a_thread(build, folder))
        (root / f"{name}.files.json").write_text(json.dumps(_files(_checkpointed(folder))), encoding="utf-8")
        tmp = done.with_suffix(".tmp")
        tmp.write_bytes(encoded)
        tmp.replace(done)
        return codec.decode(encoded)


#: SQLite's side files come and go as readers open and close a database; a lock file is opened by every caller.
_TRANSIENT = ("-wal", "-shm", "-journal", ".lock")


def _checkpointed(folder: Path) -> Path:
    """`folder`, each SQLite database in it with its write-ahead log moved into the file: else the first reader to
    close it moves it there, and the file's change would look like a test's write."""
    for p in folder.rglob("*.db"):
        with open(p, "rb") as f:
            if f.read(len(SQLITE_HEADER)) != SQLITE_HEADER:
                continue
        conn = sqlite3.connect(p)
        try:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            conn.close()
    return folder


def _files(folder: Path) -> dict[str, list[int]]:
    """Size and modification time (ns) of each file under `folder`, by path relative to it."""
    out = {}
    for p in sorted(folder.rglob("*")):
        if p.is_file() and not p.name.endswith(_TRANSIENT):
            st = p.stat()
            out[p.relative_to(folder).as_posix()] = [st.st_size, st.st_mtime_ns]
    return out


def touched(root: Path) -> list[str]:
    """The files of this session's shared artifacts (under `root`, session_root's) that changed or went away
    since their build, as "artifact/path: what happened". Files added after it are not counted: an artifact may be
    built into another's folder (a site into its pipeline's)."""
    out = []
    for record in sorted((root / "shared").glob("*.files.json")):
        name = record.name[: -len(".files.json")]
        now = _files(root / "shared" / name) if (root / "shared" / name).is_dir() else {}
        for path, before in json.loads(record.read_text(encoding="utf-8")).items():
            if path not in now:
                out.append(f"{name}/{path}: removed")
            elif now[path] != before:
                out.append(f"{name}/{path}: written (size {before[0]} → {now[path][0]} bytes)")
    return out


#: The modules whose dataclasses a build returns, decoded by the site cache's codec (helmbench.publish.codec:
#: nothing else is made from a shared file but JSON's values, paths, tuples and sets). `publish_helpers` is the name
#: tests/publish's modules import it under (pytest puts a conftest's folder on sys.path).
SHARED_DATACLASSES = ("publish_helpers", "tests.score.stats_pipeline", "tests.judge.judge_pipeline",
                      "helmbench.run.imported")
for _module in SHARED_DATACLASSES:
    codec.allow(_module)


def _lock(lock) -> None:
    """Hold `lock` exclusively. While another worker holds it (builds the artifact), build what `while_waiting`
    offers, and try again after each: the two cores stay busy instead of one waiting (measured: ~40 s of one
    core idle in a suite run, a worker waiting for the shipped site or the statistics pipeline). A build started
    ahead runs to its end, so the artifact asked for may be ready a little later than it would have been."""
    while (hook := while_waiting) is not None:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if not hook():
                break
    fcntl.flock(lock, fcntl.LOCK_EX)


def ahead_candidate(needed, set_up, where: str, busy: set, artifacts_of) -> tuple[str, str] | None:
    """The first of `needed` (full keys: defining folder, name) not in `set_up`, visible from the test file
    `where` (below its folder), whose artifacts (`artifacts_of(key)`) share none with `busy`."""
    for key in needed:
        if key not in set_up and where.startswith(key[0] + "/") and not artifacts_of(key) & busy:
            return key
    return None


def _in_a_thread(build: Callable[[Path], T], folder: Path) -> T:
    """`build(folder)` in a thread of its own: a browser test's Playwright (sync API) keeps its event loop
    marked as running in the main thread while a browser is open, where a pipeline's `asyncio.run` would be
    refused; so a browser fixture need not ask for every artifact its module may use before it opens."""
    out: dict = {}

    def target() -> None:
        try:
            out["result"] = build(folder)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            out["error"] = exc

    thread = threading.Thread(target=target, name=f"build-{folder.name}", daemon=True)
    thread.start()
    thread.join()
    if "error" in out:
        raise out["error"]
    return out["result"]
