"""What the integrity check on opening results.db costs, as ratios to baselines in the same process.

    .venv/bin/python benchmarks/open_check.py [N_RESPONSES]

Every command that opens the database runs `PRAGMA quick_check` first (a corrupt file is
refused before any work). Printed: a checked open against an unchecked open, and against
one full read of every stored answer (`SELECT content FROM responses`), which `report` and
`publish` do anyway.
"""

from __future__ import annotations

import random
import sys
import tempfile
import timeit
from pathlib import Path

from helmbench.store import open_db
from helmbench.store.db import open_readonly
from helmbench.store.responses import Write, write_batch


def build(path: Path, n: int) -> None:
    rng = random.Random(1)
    db = open_db(path)
    db.conn.execute("INSERT INTO models (id, name) VALUES ('m/a', 'A')")
    words = "I hear how hard this is and I am glad you told me you can call a crisis line".split()
    batch = []
    for i in range(n):
        text = " ".join(rng.choice(words) for _ in range(300))  # ~1.5 kB, a typical answer
        batch.append(Write({"request_hash": f"sha256:{i:064x}", "model": "m/a", "settings_hash": "sha256:s",
                            "sample": 0, "content": text, "finish_reason": "stop", "attempts": 1,
                            "created_at": "2026-01-01T00:00:00+00:00"}, None))
        if len(batch) == 1000:
            write_batch(db, batch)
            batch = []
    write_batch(db, batch)
    db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.conn.close()


def best_of(fn, repeat: int = 5) -> float:
    return min(timeit.repeat(fn, number=1, repeat=repeat))


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "results.db"
        build(path, n)

        def opened(check: bool):
            return lambda: open_readonly(path, check=check).close()

        def read_all():
            conn = open_readonly(path, check=False)
            for _ in conn.execute("SELECT content FROM responses"):
                pass
            conn.close()

        plain, checked, full = best_of(opened(False)), best_of(opened(True)), best_of(read_all)
        size = path.stat().st_size / 1e6
    print(f"{n} responses, {size:.1f} MB: open {plain * 1000:.2f} ms, open + quick_check {checked * 1000:.1f} ms, "
          f"read every answer {full * 1000:.1f} ms; quick_check costs {checked / full:.2f}× one full read "
          f"({checked / plain:.0f}× an unchecked open)")


if __name__ == "__main__":
    main()
