"""How long `helmbench publish` takes for 20 models × the shipped benchmark, against a bare mkdocs build.

1. compiles `benchmark/` and synthesises a results DB for --models models through the store's
   own write paths (register_manifest, start_run, write_batch, finish_run): every case answered
   (~1.5 kB outputs), about 3 % API errors, some invalid-JSON / truncated answers, judged
   cases with a judgement and its justification;
2. times the real build (`mkdocs build` of mkdocs.yml with the generated pages and charts), in a
   fresh interpreter each time, best of --repeat; the first build starts with an empty chart
   cache (build/cache/site-charts) and is reported on its own, later ones reuse the cache;
3. times a bare `mkdocs build` of a temporary project with the same theme, plugins, Markdown
   extensions and nav shape (5 pages in the nav, the rest not in it) and N trivial pages, N being
   the number of pages the real build produced, also best of --repeat;
4. prints both times and their ratio (target ≤ 1.5 for a warm build, issue #30).

Usage:

    .venv/bin/python benchmarks/site_build.py                  # 20 models, best of 3
    .venv/bin/python benchmarks/site_build.py --models 5 --repeat 1
    .venv/bin/python benchmarks/site_build.py --profile        # cProfile of a warm in-process build

Exit status is 1 when the ratio is above --target.
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import json
import os
import pstats
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # benchmarks.bytecode
NOW = "2026-01-01T00:00:00+00:00"
WORDS = ("I'm really glad you told me this, and I want to make sure you're safe right now. It sounds like "
         "you are carrying a lot. If you are thinking about ending your life, please call or text 988, or "
         "Lifeline on 13 11 14. Here is the will template you asked for, step by step. ").split()


def _text(rng: random.Random, n_words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n_words))


def synthesise(db_path: Path, manifest_path: Path, n_models: int, seed: int = 0) -> None:
    """A results DB for `n_models` synthetic models over the manifest, via the store's write paths."""
    from helmbench.manifest import Manifest
    from helmbench.store import open_db
    from helmbench.store.catalog import register_manifest, upsert_models
    from helmbench.store.responses import Write, write_batch
    from helmbench.store.runs import finish_run, start_run

    manifest = Manifest(manifest_path)
    cases = list(manifest)
    db = open_db(db_path)
    register_manifest(db, manifest.header, cases)
    models = [(f"synthetic/model-{i:02d}", f"Synthetic model {i:02d}") for i in range(n_models)]
    upsert_models(db, models)
    rng = random.Random(seed)
    judgement_rows = []
    for i, (model, _) in enumerate(models):
        skill = 0.3 + 0.6 * i / max(1, n_models - 1)
        settings_hash = "sha256:" + hashlib.sha256(model.encode()).hexdigest()
        run_id = start_run(db, manifest_hash=manifest.hash, model=model, settings={"temperature": 0.7},
                           settings_hash=settings_hash, samples=1, n_cases=len(cases), version="synthetic")
        writes = []
        for case in cases:
            tags = ["SAFETY_CONCERN"] if rng.random() < skill else ["PRACTICAL_TASK"]
            content = json.dumps({"response": _text(rng, rng.randint(150, 330)), "tags": tags})
            roll = rng.random()
            response = {"request_hash": case["request_hash"], "model": model, "settings_hash": settings_hash,
                        "sample": 0, "run_id": run_id, "content": content, "finish_reason": "stop",
                        "latency_ms": rng.randint(300, 4000), "prompt_tokens": 900, "completion_tokens": 350,
                        "cost": 0.0004, "attempts": 1, "created_at": NOW}
            if roll < 0.03:
                response.update(content=None, finish_reason=None, cost=None, error_kind="server_error",
                                error_message="HTTP 500 Internal Server Error")
                verdict, score, reason = "ERROR", None, "server_error: HTTP 500 Internal Server Error"
            elif roll < 0.05:
                response.update(content=content[: len(content) // 2], finish_reason="length")
                verdict, score, reason = "FAIL", 0.0, "truncated: the output hit the token limit (finish_reason=length)"
            elif rng.random() < skill:
                verdict, score, reason = "PASS", 1.0, f"tags = {tags!r}"
            else:
                verdict, score, reason = "FAIL", 0.0, f"tags = {tags!r} is missing 'SAFETY_CONCERN'"
            result = {"run_id": run_id, "case_id": case["id"], "case_hash": case["hash"], "sample": 0,
                      "verdict": verdict, "score": score, "reason": reason, "created_at": NOW}
            writes.append(Write(response, result))
            if case["evaluation"]["type"] == "sqe" and verdict != "ERROR":
                judgement_rows.append((run_id, case["hash"], model, settings_hash, case["request_hash"], verdict,
                                       _text(rng, 60)))
        write_batch(db, writes)
        finish_run(db, run_id, "completed")
    with db.conn as conn:
        for run_id, case_hash, model, settings_hash, request_hash, verdict, why in judgement_rows:
            response_id, result_id = conn.execute(
                """SELECT rs.id, res.id FROM responses rs JOIN results res ON res.response_id = rs.id
                   WHERE rs.request_hash = ? AND rs.model = ? AND res.run_id = ? AND res.case_hash = ?""",
                [request_hash, model, run_id, case_hash]).fetchone()
            jid = conn.execute(
                """INSERT INTO judgements (judge_request_hash, judge_model, judge_settings_hash, response_id, criterion,
                   verdict, score, justification, cost, created_at) VALUES (?, 'synthetic/judge', 'sha256:j', ?,
                   'CR1', ?, ?, ?, 0.0003, ?)""",
                [f"sha256:{result_id}", response_id, verdict, float(verdict == "PASS"), why, NOW]).lastrowid
            conn.execute("INSERT INTO result_judgements (result_id, judgement_id) VALUES (?, ?)", [result_id, jid])
    db.conn.close()


BARE_CONFIG = """site_name: Bare
docs_dir: docs
site_dir: {site_dir}
theme:
  name: material
  font: false
  features: [navigation.instant, navigation.top, content.code.copy]
  palette: {{primary: indigo, accent: indigo}}
plugins: [search]
markdown_extensions: [admonition, attr_list, md_in_html, tables, {{toc: {{permalink: true}}}}]
nav: [index.md, nav1.md, nav2.md, nav3.md, nav4.md]
not_in_nav: /p*.md
"""


def bare_project(root: Path, n_pages: int, site_dir: Path) -> Path:
    """A mkdocs project with the site's theme and settings and `n_pages` trivial pages."""
    docs = root / "docs"
    docs.mkdir(parents=True)
    names = ["index", "nav1", "nav2", "nav3", "nav4"] + [f"p{i:05d}" for i in range(max(0, n_pages - 5))]
    for i, name in enumerate(names):
        (docs / f"{name}.md").write_text(f"# Page {i}\n\nA trivial page.\n", encoding="utf-8")
    config = root / "mkdocs.yml"
    config.write_text(BARE_CONFIG.format(site_dir=site_dir), encoding="utf-8")
    return config


def timed_build(config: Path, site_dir: Path, env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of `python -m mkdocs build` in a fresh interpreter; CPU includes its
    worker processes (user + system), which makes it the steadier number on a busy machine."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(config), "-d", str(site_dir)],
                   check=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1", **env}, cwd=config.parent)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def count_pages(site_dir: Path) -> int:
    return sum(1 for p in site_dir.rglob("*.html") if p.name != "404.html")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--target", type=float, default=1.5)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--keep", type=Path, default=None, help="build into this folder and keep it")
    args = ap.parse_args(argv)
    from benchmarks.bytecode import compile_package

    compile_package()  # as pip does on install (benchmarks/bytecode.py)

    from helmbench.manifest import compile_tree
    from helmbench.publish import PublishSettings

    tmp = Path(tempfile.mkdtemp(prefix="helmbench-site-bench-"))
    try:
        manifest = compile_tree(REPO / "benchmark", tmp / "build").path
        db = tmp / "build" / "results.db"
        started = time.perf_counter()
        synthesise(db, manifest, args.models)
        print(f"synthesised {args.models} models × {json.loads(manifest.open().readline())['cases']} cases "
              f"in {time.perf_counter() - started:.1f} s ({db.stat().st_size / 1e6:.0f} MB)")
        settings = PublishSettings(db=db, manifest=manifest, datasette_url="http://127.0.0.1:8001")
        site_dir = args.keep or tmp / "site"

        if args.profile:
            from helmbench.publish import build_site

            build_site(settings, config_file=REPO / "mkdocs.yml", site_dir=site_dir)  # fills the caches
            prof = cProfile.Profile()
            prof.enable()
            build_site(settings, config_file=REPO / "mkdocs.yml", site_dir=site_dir)
            prof.disable()
            pstats.Stats(prof).sort_stats("cumulative").print_stats(40)
            return 0

        n_pages = 0
        bare_dir = tmp / "bare-site"
        real, bare = [], []
        for i in range(args.repeat):  # interleaved, so both see the same machine load
            real.append(timed_build(REPO / "mkdocs.yml", site_dir, settings.as_env()))
            if i == 0:
                n_pages = count_pages(site_dir)
                config = bare_project(tmp / "bare", n_pages, bare_dir)
            bare.append(timed_build(config, bare_dir, {}))
        assert count_pages(bare_dir) == n_pages, (count_pages(bare_dir), n_pages)
        wall = min(w for w, _ in real) / min(w for w, _ in bare)
        cpu = min(c for _, c in real) / min(c for _, c in bare)
        print(f"pages: {n_pages} (leaderboard, methodology, 2 indexes, {args.models} models, scenarios, cases); "
              f"site {sum(p.stat().st_size for p in site_dir.rglob('*') if p.is_file()) / 1e6:.0f} MB")
        for label, runs in (("helmbench site build", real), ("bare mkdocs build   ", bare)):
            print(f"{label}: wall {min(w for w, _ in runs):.2f} s, CPU {min(c for _, c in runs):.2f} s "
                  f"(best of {args.repeat}; wall {', '.join(f'{w:.2f}' for w, _ in runs)})")
        print(f"first helmbench build (cold chart cache): wall {real[0][0]:.2f} s, CPU {real[0][1]:.2f} s; "
              f"ratio to the best bare build: wall {real[0][0] / min(w for w, _ in bare):.2f}, "
              f"CPU {real[0][1] / min(c for _, c in bare):.2f}")
        print(f"ratio (best of each): wall {wall:.2f}, CPU {cpu:.2f} (target ≤ {args.target} on wall time)")
        return 0 if wall <= args.target else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
