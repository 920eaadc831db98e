"""Drift: which model version and serving provider a run's answers really came from.

Why: an OpenRouter model id names a model, not a snapshot or a host. The provider that serves it
can change between runs (or between calls of one run), and so can the snapshot the provider
returns; a leaderboard that hides this shows one model where there were two. The executor stores
the returned `model` and the serving `provider` of every call; this module reads them back per
run, compares a run with the model's previous run, and gives the model's score history.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from helmbench.store import Connection
from helmbench.store import queries
from helmbench.store.turns import served_conversations

from .floors import Floor, FlooredScore, apply_floors
from .model import ScoredResult, criterion_key
from .weighted import weighted_scores


@dataclass(frozen=True, slots=True)
class Served:
    """Answer counts per returned model version and per serving provider, for one run."""

    versions: dict[str, int]
    providers: dict[str, int]

    @property
    def mixed(self) -> bool:
        """More than one provider or version answered within the run."""
        return len(self.versions) > 1 or len(self.providers) > 1


def served(conn: Connection, run_id: int) -> Served:
    """What answered the results of a run (responses without a value are left out); a conversation
    counts once, by its last reply."""
    versions: dict[str, int] = {}
    providers: dict[str, int] = {}
    for version, provider, n in [*queries.served_counts(conn, run_id), *served_conversations(conn, run_id)]:
        if version:
            versions[version] = versions.get(version, 0) + n
        if provider:
            providers[provider] = providers.get(provider, 0) + n
    return Served(dict(sorted(versions.items())), dict(sorted(providers.items())))


def drift_notes(current: Served, previous: Served | None) -> tuple[str, ...]:
    """Plain-language flags: a change since the previous run, or a mix within this one."""
    notes = []
    if previous is not None:
        for label, now, before in (("model version", current.versions, previous.versions),
                                   ("provider", current.providers, previous.providers)):
            if now and before and set(now) != set(before):
                notes.append(f"{label} changed: {', '.join(before)} → {', '.join(now)}")
    if len(current.providers) > 1:
        notes.append(f"served by {len(current.providers)} providers")
    if len(current.versions) > 1:
        notes.append(f"{len(current.versions)} model versions answered")
    return tuple(notes)


@dataclass(frozen=True, slots=True)
class HistoryPoint:
    run_id: int
    manifest_hash: str
    date: str | None
    status: str
    score: float | None
    score_ci: tuple[float, float] | None
    served: Served
    floored: FlooredScore | None = None  # the score after the run's manifest's floors (None: no floors)

    @property
    def composite(self) -> float | None:
        """The score the leaderboard would rank this run by (after floors)."""
        return self.floored.score if self.floored is not None else self.score


def model_runs(conn: Connection, model: str, statuses: Sequence[str]) -> list[dict]:
    """Every finished run of a model, oldest first."""
    return queries.model_runs(conn, model, statuses)


def previous_run(conn: Connection, model: str, run_id: int, statuses: Sequence[str]) -> int | None:
    """The model's finished run just before `run_id` (any manifest), or None."""
    ids = [r["id"] for r in model_runs(conn, model, statuses)]
    return ids[ids.index(run_id) - 1] if run_id in ids and ids.index(run_id) > 0 else None


def history(conn: Connection, model: str, statuses: Sequence[str],
            load: Callable[[Connection, int], list[ScoredResult]],
            summarise_fn: Callable[..., object], *, bootstrap: int = 1000, seed: int = 0,
            floors_of: Callable[[str], Sequence[Floor]] | None = None) -> list[HistoryPoint]:
    """The model's score at each of its runs, oldest first, with interval and what served it.

    `floors_of(manifest_hash)` gives the safety floors each run's manifest declares, so a point
    shows the composite the leaderboard ranked it by (and the uncapped score beside).
    """
    points = []
    for r in model_runs(conn, model, statuses):
        rows = load(conn, r["id"])
        summary = summarise_fn(rows, bootstrap=bootstrap, seed=seed)
        floors = floors_of(r["manifest_hash"]) if floors_of else ()
        stamp = r["finished_at"] or r["started_at"]
        points.append(HistoryPoint(r["id"], r["manifest_hash"], stamp[:10] if stamp else None, r["status"],
                                   summary.score, summary.score_ci, served(conn, r["id"]),
                                   apply_floors(weighted_scores(rows), floors) if floors else None))
    return points


def judge_drift(conn: Connection, run_ids: Sequence[int]) -> tuple[str, ...]:
    """One note per (judge, scenario, criterion) whose judgements behind the runs came from more than one returned
    model version or serving provider (the ledger's per-call record): the judge changed under one
    criterion, as drift.py says of models under test. Empty when every judge stayed one."""
    seen: dict[tuple[str, str, str], tuple[dict[str, int], dict[str, int]]] = {}
    for judge, scenario, criterion, version, provider, n in queries.judge_served(conn, run_ids):
        versions, providers = seen.setdefault((judge, scenario, criterion), ({}, {}))
        if version:
            versions[version] = versions.get(version, 0) + n
        if provider:
            providers[provider] = providers.get(provider, 0) + n
    notes = []
    for (judge, scenario, criterion), (versions, providers) in seen.items():
        for what, counts in (("model versions", versions), ("providers", providers)):
            if len(counts) > 1:
                shown = ", ".join(f"{k} ×{v}" for k, v in sorted(counts.items()))
                notes.append(f"judge {judge} on {criterion_key(scenario, criterion)}: {what} changed ({shown})")
    return tuple(notes)
