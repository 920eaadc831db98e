"""The site build's caches are data (issue #36 §1): planted files under build/ run nothing and show nothing.

`build/` can be written by a pull request, a CI cache or another user, and the cache's names are the same
on every machine. A malicious pickle or Jinja bytecode file planted under those names must run nothing on
`publish`, and a well-formed entry that this user's builds did not sign must not be shown: both are rebuilt.
"""

from __future__ import annotations

import json
import os
import pickle
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest
from markupsafe import Markup

from publish_helpers import DATASETTE_URL, REPO
from tests.inprocess import helmbench


class _Planted:
    """Unpickling this opens (creates) the marker file: what a hostile pickle would run instead."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return open, (self.marker, "w")


def _publish(db: Path, manifest: Path, site: Path, fresh: bool = False) -> subprocess.CompletedProcess:
    """`helmbench publish` as a maintainer runs it: in this process (tests/inprocess.py), or in a fresh one when
    `fresh` (where nothing is loaded yet: whatever the build reads from a file, it reads from the file)."""
    args = ["publish", "--db", str(db), "--manifest", str(manifest), "--site-dir", str(site),
            "--datasette-url", DATASETTE_URL]
    if not fresh:
        return helmbench(*args, cwd=db.parent, env=dict(os.environ))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])}
    return subprocess.run([sys.executable, "-m", "helmbench", *args],  # this checkout's helmbench, not the venv's
                          capture_output=True, text=True, timeout=600, cwd=db.parent, env=env)


def _copy_db(pipeline, db: Path) -> Path:
    db.parent.mkdir(parents=True, exist_ok=True)
    with closing(sqlite3.connect(pipeline.db)) as src, closing(sqlite3.connect(db)) as dst:
        src.backup(dst)
    return db


def _pages(site: Path) -> dict[str, bytes]:
    return {str(p.relative_to(site)): p.read_bytes() for p in site.rglob("*.html")}


def _jinja_cache_names() -> list[str]:
    """The file names Jinja's FileSystemBytecodeCache gives the site's and the theme's templates."""
    from jinja2.bccache import BytecodeCache

    import material

    templates = [*(REPO / "helmbench" / "publish" / "templates").rglob("*"), *Path(material.__file__).parent.rglob("*.html")]
    names = []
    for path in templates:
        if path.is_file():
            for name in {path.name, str(path.relative_to(path.parents[1]))}:
                names.append(f"__jinja2_{BytecodeCache().get_cache_key(name, str(path))}.cache")
    return names


@pytest.mark.slow  # three publishes, one in a fresh interpreter
def test_planted_cache_files_run_nothing_and_a_forged_entry_is_rebuilt(small_pipeline, tmp_path):
    """On a 9-case run (`small_pipeline`): the caches are what is checked, and every cache the build keeps (its
    data, the pages' fragments, summaries, charts) is there for 9 cases as for 600."""
    from jinja2.bccache import bc_magic

    pipeline = small_pipeline
    build = tmp_path / "build"
    db = _copy_db(pipeline, build / "results.db")
    first = _publish(db, pipeline.manifest, build / "site")
    assert first.returncode == 0, first.stderr
    genuine = _pages(build / "site")
    cache = build / "cache" / "site"
    entries = sorted(p for p in cache.iterdir() if p.suffix in (".json", ".pickle"))  # .pickle: older releases
    assert len(entries) >= 3  # the site's data, the pages' fragments, summaries and charts
    assert any(b"PASS" in entry.read_bytes() for entry in entries)  # so that the forgery below changes something

    # 1. Forged data under this build's own names: well-formed JSON whose numbers say something else,
    #    with the genuine entry's signature line kept. Not signed for that body: rebuilt, never shown. (In this
    #    process: a build keeps no entry in memory, each is read from its file, so what is shown is told here too.)
    for entry in entries:
        entry.write_bytes(entry.read_bytes().replace(b'"PASS"', b'"FAIL"').replace(b"PASS", b"FAIL"))
    forged = _publish(db, pipeline.manifest, build / "site")
    assert forged.returncode == 0, forged.stderr
    assert _pages(build / "site") == genuine

    # 2. A pickle that would create a marker, under every name the cache uses or used (`<key>.json`, the
    #    `<key>.pickle` of older releases) and every name Jinja's bytecode cache gives the templates.
    marker = tmp_path / "planted-code-ran"
    payload = pickle.dumps(_Planted(marker))
    assert not marker.exists()
    for entry in entries:
        entry.with_suffix(".json").write_bytes(payload)
        entry.with_suffix(".pickle").write_bytes(payload)
    templates = build / "cache" / "templates"
    templates.mkdir(parents=True, exist_ok=True)
    for name in _jinja_cache_names():
        (templates / name).write_bytes(bc_magic + payload)
    # In a fresh process: this one has built sites already (and compiled the site's templates: its Jinja
    # environment is kept), so a bytecode cache consulted only for a template not yet loaded would go unread here.
    planted = _publish(db, pipeline.manifest, build / "site", fresh=True)
    assert planted.returncode == 0, planted.stderr
    assert not marker.exists(), "a planted file ran on publish"
    assert _pages(build / "site") == genuine
    rebuilt = sorted(cache.glob("*.json"))
    assert rebuilt and not list(cache.glob("*.pickle"))
    assert all(p.read_bytes() != payload for p in rebuilt)  # each entry rebuilt as data

    # and the control: the payload does run when unpickled, so the test could fail
    pickle.loads(payload).close()
    assert marker.exists()


def test_the_codec_gives_back_what_it_was_given():
    from helmbench.publish.codec import decode, encode
    from helmbench.publish.settings import PublishSettings
    from helmbench.score.consistency import Consistency
    from helmbench.score.floors import Floor
    from helmbench.score.model import ScoredResult

    value = {
        "text": "∅ \x00 tag-like", "n": 3, "x": -0.0, "nan": float("inf"), "none": None, "flag": True,
        "tuple": (1, ("a", 2.5)), "list": [1, [2]], "set": {"b", "a"}, "frozen": frozenset({1}),
        "markup": Markup("<b>ok</b>"), "bytes": b"<svg>\xff</svg>", "path": Path("/tmp/x"),
        (1, "two"): "a tuple key", 7: "an int key", "\x00": "the tag as a plain key",
        "rows": [ScoredResult(case_id="C", pillar="P", behaviour="P-B", scenario="P-B-S", condition="P-B-S-C",
                              severity_user_context=1, severity_perturbation=2, difficulty=3, weight=1.0,
                              verdict="PASS", score=1.0)],
        "floor": Floor(part="P1", minimum=0.5, cap=0.4),
        "consistency": Consistency(n_cases=2, n_unanimous=1, unanimous_share=0.5, fleiss_kappa=None, min_samples=2,
                                   max_samples=3),  # in a summary when a model answered each case more than once
        "settings": PublishSettings(db=Path("a.db"), manifest=Path("m.jsonl"), datasette_url="http://x"),
        # long strings travel beside the JSON as raw UTF-8 (codec.LONG): a page's HTML, with quotes, newlines,
        # characters of several bytes and the tag; as a value, inside Markup, as a key of a tagged dict
        "page": Markup('<p class="a">\n' + "é∅\x00\"" * 200 + "</p>"), "long": "x" * 255 + "\n",
        ("k" * 300,): ["y" * 300, "z" * 300],
    }
    encoded = encode(value)
    text, _, raw = encoded.partition(b"\n")  # the JSON's one line, then the long strings as they are
    assert str(value["page"]).encode() in raw and "é∅".encode() not in text and (b"x" * 255 + b"\n") in raw
    back = decode(encoded)
    assert back == value
    assert type(back["page"]) is Markup
    assert type(back["tuple"]) is tuple and type(back["markup"]) is Markup and type(back["frozen"]) is frozenset
    assert type(back["rows"][0]) is ScoredResult and isinstance(back["settings"].db, Path)
    assert encode(value) == encode(back)  # the same object gives the same bytes (a cache key hashes them)


@pytest.mark.parametrize("planted", [
    b"\x80\x04\x95",  # a pickle's opening
    b'{"\\u0000": "os:system", "v": ["touch /tmp/x"]}',
    b'{"\\u0000": "subprocess:Popen", "v": [["id"]]}',
    b'{"\\u0000": "helmbench.publish.site:Builder", "v": []}',  # a dataclass, of a module the data never holds
    b'{"\\u0000": "helmbench.publish.data:natural_key", "v": []}',  # an allowed module's function, not a dataclass
    b'{"\\u0000": "helmbench.score.floors:Floor", "v": ["P1"]}',  # too few fields
    b'{"\\u0000": "helmbench.score.floors:Floor.__init__.__globals__", "v": []}',
    b'{"\\u0000": "helmbench.score..floors:Floor", "v": []}',
    b'{"\\u0000": "helmbench.scoreboard:Floor", "v": []}',
    b'{"\\u0000": "zz", "v": 1}',
    b'{"\\u0000": "t", "v": [], "extra": 1}',
    b'{"\\u0000": "d", "v": [[[1], 2]]}',  # an unhashable key
    b"[" * 100_000,  # nesting deeper than the parser goes
    b'{"\\u0000": "r", "v": [0, 4]}\nabc',  # a long string's offsets past the raw part
    b'{"\\u0000": "r", "v": [2, 1]}\nabc',
    b'{"\\u0000": "r", "v": [-1, 2]}\nabc',
    b'{"\\u0000": "r", "v": [0, true]}\nabc',
    b'{"\\u0000": "r", "v": [0, 1.0]}\nabc',
    b'{"\\u0000": "r", "v": [0, 2]}\n\xc3(',  # not UTF-8
    b'{"\\u0000": "r", "v": [0, 2]}',  # no raw part at all
    # the raw part is read once, in order: a few bytes of JSON naming one range again and again would copy it each time
    b'{"\\u0000": "t", "v": [' + b", ".join([b'{"\\u0000": "r", "v": [0, 300]}'] * 3) + b"]}\n" + b"a" * 300,
    b'{"\\u0000": "r", "v": [0, 3]}\nabc',  # a short string, which encode writes in the JSON
    b'{"a": 1}\nleft over',  # raw bytes no string refers to
    '{"a": 1}',  # not bytes
])
def test_the_codec_refuses_what_it_did_not_make(planted):
    from helmbench.publish.codec import DecodeError, decode

    with pytest.raises(DecodeError):
        decode(planted)


def test_an_entry_signed_by_another_key_is_a_miss(tmp_path, monkeypatch):
    from helmbench.publish import cache as cache_mod

    store = cache_mod.BuildCache(tmp_path / "cache", tmp_path)
    key = store.key("summary", ("rows", 1000, 0))
    store.put(key, {"score": 0.5})
    assert cache_mod.BuildCache(tmp_path / "cache", tmp_path).get(key) == (True, {"score": 0.5})
    entry = tmp_path / "cache" / f"{key}.json"
    assert json.loads(entry.read_bytes().split(b"\n", 2)[2]) == {"score": 0.5}  # data, readable as JSON
    monkeypatch.setattr(cache_mod, "signing_key", lambda: b"k" * 32)  # another machine's, or a guess
    assert cache_mod.BuildCache(tmp_path / "cache", tmp_path).get(key) == (False, None)


def test_the_signing_key_is_made_once_and_kept_outside_the_build(tmp_path, monkeypatch):
    from helmbench.publish import cache as cache_mod

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home-cache"))
    cache_mod.signing_key.cache_clear()
    try:
        key = cache_mod.signing_key()
        path = tmp_path / "home-cache" / "helmbench" / "site-cache.key"
        assert path.read_bytes() == key and len(key) == 32 and path.stat().st_mode & 0o077 == 0
        cache_mod.signing_key.cache_clear()
        assert cache_mod.signing_key() == key
    finally:
        cache_mod.signing_key.cache_clear()
