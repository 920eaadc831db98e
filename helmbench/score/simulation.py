"""The simulation table behind the methodology page: what `benchmarks/significance.py` measured.

The harness writes `simulation.json` beside this module (`--write`); the site shows it, and the
harness prints it, through `table` (one formatting of the numbers). Rates are shown with their
one-sided 95 % Clopper–Pearson upper bound where the claim is "at most 5 %".
"""

from __future__ import annotations

import json
from pathlib import Path

PATH = Path(__file__).with_name("simulation.json")

HEAD = ["cases", "scenarios", "partial credit", "null: claimed (95 % upper bound)",
        "10 models: any pair claimed (95 % upper bound)", "power, +5 points", "power, +10 points",
        "score interval coverage", "difference interval coverage", "too few to compare (null)",
        "stress: case flips / scenario flips claimed", "scenario flips instead: null claimed, power +10",
        "percentile bootstrap (replaced): coverage"]


def load(path: Path = PATH) -> dict | None:
    """The saved table, or None when the harness has not written one."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def upper_bound(k: int, n: int) -> float:
    """One-sided 95 % Clopper–Pearson upper bound of the rate k / n (the harness stores it, so that
    showing the table needs no scipy)."""
    from scipy.stats import beta

    return 1.0 if k >= n else float(beta.ppf(0.95, k + 1, n - k))


def _pct(counts) -> str:
    """"k / n" as a percentage, with the stored upper bound when there is one: [k, n] or [k, n, bound]."""
    k, n = counts[0], counts[1]
    if not n:
        return "—"
    return f"{100 * k / n:.1f} %" + (f" ({100 * counts[2]:.1f} %)" if len(counts) > 2 else "")


def table(doc: dict) -> tuple[list[str], list[list[str]]]:
    """Header and rows of strings, one row per configuration."""
    rows = []
    for r in doc["results"]:
        rows.append([
            str(r["n"]), str(r["scenarios"]), "yes" if r["partial"] else "no", _pct(r["null"]),
            _pct(r["family"]), _pct(r["power_5"]), _pct(r["power_10"]), _pct(r["score_coverage"]),
            _pct(r["difference_coverage"]), _pct(r["too_few"]),
            f"{_pct(r['stress_case_flips'])} / {_pct(r['stress_scenario_flips'])}",
            f"{_pct(r['null_scenario_flips'])}, {_pct(r['power_10_scenario_flips'])}",
            _pct(r["bootstrap_coverage"]),
        ])
    return HEAD, rows


def summary(doc: dict) -> dict:
    """The extremes a reader should take away: the worst null rate and coverage, the power at the largest size."""
    res = doc["results"]

    def share(counts):
        return counts[0] / counts[1] if counts[1] else None

    worst_null = max(res, key=lambda r: r["null"][2])
    largest = max(res, key=lambda r: (r["n"], r["scenarios"], not r["partial"]))
    return {
        "null": share(worst_null["null"]), "null_upper": worst_null["null"][2],
        "family_upper": max(r["family"][2] for r in res),
        "score_coverage": min(share(r["score_coverage"]) for r in res),
        "difference_coverage": min(share(r["difference_coverage"]) for r in res),
        "power_10": share(largest["power_10"]), "largest": (largest["n"], largest["scenarios"]),
        "reps": min(r["null"][1] for r in res), "family_reps": min(r["family"][1] for r in res),
    }


def markdown(doc: dict) -> str:
    head, rows = table(doc)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])
