"""How many paid calls a stopped run pays for again when it resumes: Ctrl-C vs kill -9.

    .venv/bin/python benchmarks/interrupt_repay.py [--rounds 3]

A real `helmbench run` process (concurrency 8, 1 s server latency) is stopped while exactly 8
calls are in flight at the fake OpenRouter, then the run is resumed in this process and every
request the server saw twice is counted. Ctrl-C drains (waits for the 8 and stores them), so
it should re-pay 0; kill -9 cannot be drained: it re-pays the calls in flight plus any answer
received in the writer's last commit interval (0.25 s) before the kill. Two moments are
measured: right after a burst of answers arrived (the worst case for kill -9: the burst is not
committed yet) and 0.5 s later (the burst is committed; only the calls in flight are lost).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

CONCURRENCY = 8


def one(stop: signal.Signals, tmp: Path, wait: float) -> tuple[int, int]:
    """(calls re-paid on resume, calls in flight when stopped)."""
    from rich.console import Console

    from helmbench.run.config import RetryPolicy, RunOptions
    from helmbench.run.session import run
    from tests.fakes.manifests import synthetic_cases, write_manifest, write_models
    from tests.fakes.openrouter import FakeOpenRouter

    manifest, models, db = tmp / "manifest.jsonl", tmp / "models.yml", tmp / "results.db"
    write_manifest(manifest, synthetic_cases(200, scenarios=3))
    write_models(models, ["bench/model"], temperature=0, max_tokens=300)
    fake = FakeOpenRouter(latency=1.0).start()
    env = dict(os.environ, OPENROUTER_API_BASE=fake.api_base, OPENROUTER_API_KEY="sk-bench", PYTHONPATH=str(REPO))
    try:
        proc = subprocess.Popen([sys.executable, "-m", "helmbench", "run", "--manifest", str(manifest), "--models-file",
                                 str(models), "--db", str(db), "--concurrency", str(CONCURRENCY)],
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while fake.total < 3 * CONCURRENCY or fake.in_flight != CONCURRENCY:  # steady state, all slots busy
            if time.monotonic() > deadline or proc.poll() is not None:
                raise SystemExit("the run never reached 8 calls in flight")
            time.sleep(0.002)
        time.sleep(wait)
        in_flight = fake.in_flight
        proc.send_signal(stop)
        proc.wait(60)
        fake.latency = 0
        before = fake.total
        os.environ.update(OPENROUTER_API_BASE=fake.api_base, OPENROUTER_API_KEY="sk-bench")
        opts = RunOptions(manifest=str(manifest), models_file=str(models), db=str(db), concurrency=CONCURRENCY,
                          logs_dir=str(tmp / "logs"), retry=RetryPolicy(max_attempts=6, base_delay=0.05))
        run(opts, Console(stderr=True, quiet=True), live=False)
        assert fake.total > before
        return sum(n - 1 for n in fake.by_key.values()), in_flight
    finally:
        fake.stop()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=3)
    a = p.parse_args()
    for name, sig in (("Ctrl-C (SIGINT)", signal.SIGINT), ("kill -9 (SIGKILL)", signal.SIGKILL)):
        for wait, when in ((0.0, "right after a burst of answers"), (0.5, "0.5 s later")):
            results = []
            for _ in range(a.rounds):
                with tempfile.TemporaryDirectory() as d:
                    results.append(one(sig, Path(d), wait))
            repaid = [r for r, _ in results]
            print(f"{name}, {when}: calls in flight when stopped {[f for _, f in results]}; re-paid on resume "
                  f"{repaid} (mean {sum(repaid) / len(repaid):.1f} per stop)", flush=True)


if __name__ == "__main__":
    main()
