"""Six models in one `helmbench run`, one of them behind a provider that rate-limits: does each
model go at the pace of its own limits?

    .venv/bin/python benchmarks/mixed_run.py            # 6 models × 200 cases (~2 min)
    .venv/bin/python benchmarks/mixed_run.py --cases 60 # quicker

The fake OpenRouter runs in its own process; every request waits 300–800 ms (a fixed amount per
request, so both runs wait the same). One model's upstream accepts 4 concurrent requests and
answers 429 above that. Every model may have 8 in flight (`--concurrency 8`); the rate-limited
one must find its 4 by itself (adaptive limiter). The lower bound of the wall time is what each
model's own limits allow: max over models of (sum of its latencies ÷ its concurrency), with 4
for the limited model. Prints wall ÷ lower bound (target ≤ 1.15).

For comparison, the same run with one limiter shared by every model (the former behaviour,
`HELMBENCH_SHARED_LIMITER=1`) and the same total concurrency (6 × 8 = 48): one provider's 429s
then halve the concurrency of all six.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

MODELS = [f"bench/model-{i}" for i in range(1, 7)]
LIMITED = MODELS[2]
PER_MODEL, PROVIDER_LIMIT, LATENCY, SPREAD = 8, 4, 0.3, 0.5


def worker(a) -> dict:
    """One run through the session API, timed after litellm is imported (a user's run overlaps it)."""
    from helmbench.run.provider import load_litellm

    load_litellm()
    from rich.console import Console

    from helmbench.run.config import RetryPolicy, RunOptions
    from helmbench.run.session import run

    opts = RunOptions(manifest=a.manifest, models_file=a.models, db=a.db, concurrency=a.concurrency,
                      logs_dir=str(Path(a.db).parent / "logs"), retry=RetryPolicy.from_env())
    start = time.perf_counter()
    report = run(opts, Console(stderr=True, quiet=True), live=False)
    wall = time.perf_counter() - start
    return {"wall": wall, "status": report.status, "errors": sum(r["n_error"] for r in report.runs)}


def lower_bound(manifest: Path, fake) -> float:
    from helmbench.manifest import read_manifest
    from tests.fakes.openrouter import request_key

    cases = list(read_manifest(manifest))
    bound = 0.0
    for model in MODELS:
        total = sum(fake.latency_of(request_key(model, c["request"]["messages"])) for c in cases)
        bound = max(bound, total / (PROVIDER_LIMIT if model == LIMITED else PER_MODEL))
    return bound


def one_run(server, manifest: Path, models: Path, db: Path, *, shared: bool) -> dict:
    env = dict(os.environ, OPENROUTER_API_BASE=server.base + "/api/v1", OPENROUTER_API_KEY="sk-bench",
               PYTHONPATH=str(REPO))
    env.pop("HELMBENCH_SHARED_LIMITER", None)
    if shared:
        env["HELMBENCH_SHARED_LIMITER"] = "1"
    for p in db.parent.glob(db.name + "*"):
        p.unlink()
    server.configure(reset=True)
    concurrency = PER_MODEL * len(MODELS) if shared else PER_MODEL
    out = subprocess.run([sys.executable, __file__, "--worker", "--manifest", str(manifest), "--models", str(models),
                          "--db", str(db), "--concurrency", str(concurrency)], env=env, capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"worker failed:\n{out.stderr[-3000:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    with urllib.request.urlopen(server.base + "/_stats") as r:
        stats = json.load(r)
    result["429"] = stats["over_limit"].get(LIMITED, 0)
    result["peaks"] = stats["model_peak"]
    result["spans"] = stats["model_span"]
    return result


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cases", type=int, default=200, help="cases per model (default 200)")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--manifest"), p.add_argument("--models"), p.add_argument("--db")
    p.add_argument("--concurrency", type=int, default=PER_MODEL)
    a = p.parse_args()
    if a.worker:
        print(json.dumps(worker(a)))
        return

    from run_throughput import FakeServer
    from tests.fakes.manifests import synthetic_cases, write_manifest, write_models
    from tests.fakes.openrouter import FakeOpenRouter

    server = FakeServer()
    settings = {"latency": LATENCY, "latency_spread": SPREAD, "model_limits": {LIMITED: PROVIDER_LIMIT}}
    server.configure(**settings)
    try:
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            manifest = tmp / "build" / "manifest.jsonl"
            write_manifest(manifest, synthetic_cases(a.cases, scenarios=2))  # no judge: model calls only
            models = write_models(tmp / "models.yml", MODELS, judge=None, temperature=0, max_tokens=300)
            bound = lower_bound(manifest, FakeOpenRouter(latency=LATENCY, latency_spread=SPREAD))
            n = sum(1 for _ in open(manifest)) - 1
            print(f"{len(MODELS)} models × {n} cases, {LATENCY * 1000:.0f}–{(LATENCY + SPREAD) * 1000:.0f} ms per "
                  f"request, {LIMITED} answers 429 above {PROVIDER_LIMIT} concurrent; lower bound {bound:.2f} s")
            for shared in (False, True):
                r = one_run(server, manifest, models, tmp / "build" / "results.db", shared=shared)
                what = "one shared limiter, --concurrency 48" if shared else "per-model limiters, --concurrency 8"
                print(f"  {what}: wall {r['wall']:.2f} s, wall ÷ lower bound = {r['wall'] / bound:.3f}"
                      f"{' (target ≤ 1.15)' if not shared else ''}; {r['429']} × 429 from {LIMITED}, "
                      f"{r['errors']} error(s), peak in flight per model {sorted(r['peaks'].values(), reverse=True)}")
                print("    first to last answer per model (s): " + ", ".join(
                    f"{m.split('/')[-1]} {r['spans'].get(m, 0):.1f}" for m in MODELS))
    finally:
        server.stop()


if __name__ == "__main__":
    main()
