"""How long the score interval and the paired comparison take, as ratios to one plain score computation.

    .venv/bin/python benchmarks/score_speed.py [N_RESULTS] [RESAMPLES]

The interval (`score_interval`: Wilson with the effective number of cases) is closed-form; the
paired comparison (a sign-flip test over RESAMPLES random patterns, its interval, plus McNemar)
recomputes the difference RESAMPLES times. Each is reported as how many plain `run_score` calls
it costs (lower is better).
"""

from __future__ import annotations

import random
import sys
import time

from helmbench.score import ScoredResult, run_score, score_interval
from helmbench.score.pairwise import tie_groups

WEIGHTS = {"P1-B1": 12, "P1-B2": 10, "P2-B2": 15, "P3-B1": 8, "P4-B1": 5}


def dataset(n: int, seed: int = 1) -> list[ScoredResult]:
    """n cases (the same cases for every seed, as two models of one manifest have); verdicts by seed."""
    rng = random.Random(1)
    verdicts = random.Random(seed)
    rows = []
    for i in range(n):
        b = rng.choice(sorted(WEIGHTS))
        verdict = verdicts.choice(["PASS", "PASS", "FAIL"])
        rows.append(ScoredResult(f"{b}-S1-C1-U1-PT{i}", b[:2], b, f"{b}-S1", f"{b}-S1-C1",
                                 rng.randint(-3, 10), rng.randint(0, 10), rng.randint(0, 9), WEIGHTS[b],
                                 verdict, 1.0 if verdict == "PASS" else 0.0))
    return rows


def best_of(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    resamples = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    rows = dataset(n)
    plain = best_of(lambda: run_score(rows))
    interval = best_of(lambda: score_interval(rows))
    print(f"{n} results: run_score {plain * 1000:.1f} ms; score interval {interval * 1000:.1f} ms; "
          f"ratio {interval / plain:.1f} plain score computations")
    other = dataset(n, seed=2)
    pair = best_of(lambda: tie_groups([("a", rows), ("b", other)], resamples=resamples, seed=0))
    print(f"{n} results × 2 models: paired comparison, {resamples} sign-flip patterns {pair * 1000:.1f} ms; "
          f"ratio {pair / plain:.1f} plain score computations")


if __name__ == "__main__":
    main()
