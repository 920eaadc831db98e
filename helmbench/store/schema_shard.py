"""Migration "run shards": `runs.shard`, the part of the work the run's invocations covered.

Why: `helmbench run --shard K/N` runs a part of a manifest (by case and model), typically one job
of a CI matrix writing its own database. Its run row must say which part it holds, so that a
later merge can tell a complete set of shards (1/N … N/N) from a missing one, and the leaderboard
never mistakes a part for the whole. NULL: the run was asked for all of its work (no shard);
`K/N`: one shard; `1,3/N`: shards 1 and 3, run one after another into the same database.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: importing sqlite_utils costs ~0.25 s (it loads pandas)
    import sqlite_utils


def apply(db: sqlite_utils.Database) -> None:
    db.conn.execute("ALTER TABLE runs ADD COLUMN shard TEXT")


def combined(before: str | None, shard: str | None, *, existing: bool) -> str | None:
    """The `runs.shard` after an invocation of shard `shard` (None: unsharded) continues a run whose
    value was `before` (`existing`: the run row was there already).

    An unsharded invocation covers every part: NULL. A shard of the same N as `before` adds its
    number; anything else (a new run, a different N, a run that was whole) takes the invocation's
    own shard, which claims no more than this invocation asked for."""
    if shard is None:
        return None
    if not existing or before is None:
        return shard
    k, n = shard.split("/")
    parts, _, before_n = before.partition("/")
    if before_n != n:
        return shard
    numbers = {int(x) for x in parts.split(",") if x.isdigit()} | {int(k)}
    return ",".join(str(x) for x in sorted(numbers)) + "/" + n


def union(values: list[str | None]) -> str | None:
    """The `runs.shard` of one run put together from rows holding `values` (`helmbench merge`): NULL when one
    of them is whole or the parts of one N cover 1..N, else the parts of that N together; parts of different
    N cannot be added up, so the first is kept (the merged run then counts as partial, and its coverage
    shows how much of it there is)."""
    if any(v is None for v in values):
        return None
    parts: set[int] = set()
    first_n = values[0].partition("/")[2]
    for value in values:
        numbers, _, n = value.partition("/")
        if n != first_n:
            return values[0]
        parts |= {int(x) for x in numbers.split(",") if x.isdigit()}
    if first_n.isdigit() and parts >= set(range(1, int(first_n) + 1)):
        return None
    return ",".join(str(x) for x in sorted(parts)) + "/" + first_n
