"""A results database that exercises the honest-numbers features end to end (issue 15).

The shipped benchmark, compiled for real and run by the real executor through litellm against
the fake OpenRouter, with:
- GOOD: answers as the fake does (schema-fitting answers);
- TWIN_A and TWIN_B: identical twins (the fake answers both as one model), of which 60 % of the
  answers come back empty: format failures, so both are clearly worse than GOOD and not
  distinguishable from each other;
- PART: run on one scenario only (a partial run: incomplete coverage, never ranked);
- GOOD run a second time with other settings (new calls) served by another provider: drift.

`build` runs the shipped benchmark with its safety floors; `without_floors` derives the same runs under
the benchmark with its floors stripped (so the ranking shows the tie groups of the uncapped scores).
Importable as `tests.score.stats_pipeline`.

Why derived, not run again: floors are scoring only. Stripping them changes the manifest's hash (they are in
its catalog) and nothing a model is asked: the same cases, the same requests, so the fake's same answers and
the same verdicts (compared table by table when both were run: identical but for row ids and clocks). A
second run cost ~14 s of CPU for a database that differs from the first in which manifest its runs name.
`without_floors` checks that premise on every build (same cases in the same order, catalogs equal but for
`floors`) and re-registers the runs through the product's own catalog code.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from helmbench.manifest import compile_tree
from helmbench.run.config import RetryPolicy, RunOptions
from helmbench.run.session import run
from tests.fakes.openrouter import FakeOpenRouter, request_key

REPO = Path(__file__).resolve().parents[2]
GOOD = "test/good"
TWIN_A = "test/twin-a"
TWIN_B = "test/twin-b"
PART = "test/partial"
TWINS = (TWIN_A, TWIN_B)
JUDGE = "test/judge-1"
SECOND_PROVIDER = "OtherProvider"
PART_SCENARIO = "P1-B1-S1"
FAST = RetryPolicy(max_attempts=2, base_delay=0.0, max_delay=0.0)
_FLOORS = re.compile(r"^floors:\n(?:[ #].*\n|\n)*", re.M)


#: Every plain-text answer names a real crisis line of each country the shipped user contexts use, as a
#: good reply would: the shipped handoff scenarios check that with crisis_resources (no judge), and the
#: fake's free text alone names none, which would fail that criterion for every model alike.
CRISIS_LINES = (" In Australia call Lifeline on 13 11 14; in the UK or Ireland, Samaritans on 116 123;"
                " in the US or Canada, call or text 988; in New Zealand, call or text 1737.")


class StatsFake(FakeOpenRouter):
    """Twins answer alike (the key without the model), 60 % of their answers empty; the provider
    can be switched between runs."""

    provider = "FakeProvider"

    def reply(self, body: dict, key: str, fault: str | None) -> dict:
        model = str(body.get("model", "")).removeprefix("openrouter/")
        twin = model in TWINS
        if twin:
            key = request_key("twins", body.get("messages", []))
        out = super().reply(body, key, fault)
        out["provider"] = self.provider
        if not body.get("response_format") and out.get("choices") and out["choices"][0]["message"]["content"]:
            out["choices"][0]["message"]["content"] += CRISIS_LINES
        if twin and out.get("choices") and int(hashlib.sha256(key.encode()).hexdigest(), 16) % 10 < 6:
            out["choices"][0]["message"]["content"] = ""
        return out


@dataclass(frozen=True)
class StatsPipeline:
    root: Path
    tree: Path
    manifest: Path
    db: Path


def _models(path: Path, models: list[str], temperature: float) -> Path:
    lines = ["marking_model:", f"  id: {JUDGE}", "  max_tokens: 400", "models:"]
    for m in models:
        lines += [f"  - id: {m}", f"    temperature: {temperature}", "    max_tokens: 300"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def build(root: Path) -> StatsPipeline:
    """The runs above, of the shipped benchmark (with its floors), into `root`."""
    import pytest

    tree = root / "benchmark"
    shutil.copytree(REPO / "benchmark", tree)
    manifest = compile_tree(tree, root / "build").path
    db = root / "build" / "results.db"
    fake = StatsFake().start()
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("OPENROUTER_API_KEY", "sk-or-v1-stats-tests")
            mp.setenv("OPENROUTER_API_BASE", fake.api_base)

            def go(models_file: Path, **kw):
                opts = RunOptions(manifest=str(manifest), models_file=str(models_file), db=str(db),
                                  logs_dir=str(root / "build" / "logs"), concurrency=16, retry=FAST, **kw)
                return run(opts, Console(stderr=True, width=160), live=False)

            first = _models(root / "models.yml", [GOOD, TWIN_A, TWIN_B, PART], 0.7)
            assert go(first, models=(GOOD,)).status == "completed"
            assert go(first, models=TWINS).status == "completed"
            assert go(first, models=(PART,), scenarios=(PART_SCENARIO,)).status == "partial"
            fake.provider = SECOND_PROVIDER
            assert go(_models(root / "models-2.yml", [GOOD], 0.5), models=(GOOD,)).status == "completed"
    finally:
        fake.stop()
    return StatsPipeline(root=root, tree=tree, manifest=manifest, db=db)


def without_floors(floored: StatsPipeline, root: Path) -> StatsPipeline:
    """`floored`'s runs under the shipped benchmark without its floors, into `root` (`floored` is only read):
    the tree with `floors:` stripped, compiled; `floored`'s database copied (SQLite's backup API), that manifest
    registered (helmbench.store.catalog, as `helmbench run` does) and the runs moved to it, the floored
    manifest dropped. Refuses (AssertionError) if the two manifests differ in anything but the floors."""
    import sqlite3
    from contextlib import closing

    from helmbench.manifest import read_manifest
    from helmbench.store.catalog import register_manifest
    from helmbench.store.db import open_db

    tree = root / "benchmark"
    shutil.copytree(floored.tree, tree)
    yml = tree / "benchmark.yml"
    text, n = _FLOORS.subn("", yml.read_text(encoding="utf-8"))
    assert n == 1, "the shipped benchmark.yml should declare floors"
    yml.write_text(text, encoding="utf-8")
    manifest = compile_tree(tree, root / "build").path
    old, new = read_manifest(floored.manifest), read_manifest(manifest)
    assert old.hash != new.hash, "stripping the floors should change the manifest's hash"
    assert [c["hash"] for c in old] == [c["hash"] for c in new], "floors changed a case: run it, do not derive it"
    strip = lambda header: {k: v for k, v in (header.get("catalog") or {}).items() if k != "floors"}  # noqa: E731
    assert strip(old.header) == strip(new.header) and old.header["catalog"].get("floors"), "not only the floors differ"
    db = root / "build" / "results.db"
    with closing(sqlite3.connect(floored.db)) as src, closing(sqlite3.connect(db)) as dst:
        src.backup(dst)
    store = open_db(db)
    try:
        register_manifest(store, new.header, iter(new))
        with store.conn as conn:
            moved = conn.execute("UPDATE runs SET manifest_hash = ? WHERE manifest_hash = ?", [new.hash, old.hash])
            assert moved.rowcount == 5, moved.rowcount
            conn.execute("DELETE FROM manifest_cases WHERE manifest_hash = ?", [old.hash])
            conn.execute("DELETE FROM manifests WHERE hash = ?", [old.hash])
    finally:
        store.conn.close()
    return StatsPipeline(root=root, tree=tree, manifest=manifest, db=db)
