"""What a merge did (`Merged`), and why it refused when two databases hold different content under one key
(`Conflict`, `MergeConflict`).

Why a module: the account of a merge is what `helmbench.api.merge` returns and the CLI renders; it is the same
whichever table the rows came from, so it stands apart from the copy (store/merge_rows.py) that fills it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from helmbench.errors import HelmbenchError


class MergeConflict(HelmbenchError):
    """Two databases hold different content under one key: which one is right is not for merge to guess."""


#: How many conflicts one refusal lists (the count of the rest follows).
SHOWN = 10


@dataclass
class Merged:
    """What a merge did: per table, rows added and rows that superseded a stored one; the runs it touched."""

    out: Path
    inputs: list[Path]
    added: dict[str, int] = field(default_factory=dict)
    replaced: dict[str, int] = field(default_factory=dict)
    runs: list[dict] = field(default_factory=list)
    migrated: list[Path] = field(default_factory=list)
    twice: dict[str, int] = field(default_factory=dict)  # the same request answered differently in two files, the first kept
    itself: list[Path] = field(default_factory=list)  # inputs that are OUT itself (skipped: nothing to add)
    still_running: list[Path] = field(default_factory=list)  # inputs holding a run marked `running` (merged as interrupted)
    refused: list[str] = field(default_factory=list)  # rows left out by the rules `review import` applies, `where: why`

    @property
    def changed(self) -> bool:
        return any(self.added.values()) or any(self.replaced.values())


@dataclass(frozen=True)
class Conflict:
    table: str
    key: dict
    columns: tuple[str, ...]
    stored_in: str
    incoming: str

    def __str__(self) -> str:
        key = ", ".join(f"{k}={_short(v)}" for k, v in self.key.items())
        return (f"{self.table} ({key}): {self.stored_in} and {self.incoming} differ in "
                f"{', '.join(self.columns)}")


def _short(value) -> str:
    text = repr(value) if not isinstance(value, str) else value
    text = "".join(c if c.isprintable() else "?" for c in text)
    return text if len(text) <= 24 else text[:21] + "…"


def refusal(conflicts: list[Conflict]) -> MergeConflict:
    lines = [str(c) for c in conflicts[:SHOWN]]
    if len(conflicts) > SHOWN:
        lines.append(f"… and {len(conflicts) - SHOWN} more")
    return MergeConflict(
        f"cannot merge: {len(conflicts)} row(s) have the same key but different content; nothing was written\n  "
        + "\n  ".join(lines),
        hint="these databases answered the same requests differently (two unsharded runs of one model, or a "
             "shard run twice with a changed judge): merge only one of them, or run the missing parts with "
             "--shard K/N into separate databases")
