"""Merge results databases by content (`helmbench merge OUT.db IN.db…`): shards of one run, machines of one team.

Why by content key and not by row id: every id in results.db is local to its file (run 1 of one
shard is not run 1 of another), while every row that matters has a key that says what it is: a
response is (request hash, model, settings, sample), a judgement its judge request, a turn its chain
key, a ledger row its `uid`, a run (manifest, model, settings). Merging is therefore: for every
table, in the order tables point at each other, find each incoming row's key in OUT; absent, insert
it (its references translated to OUT's ids); present with the same content, map onto it (identical
rows are kept once); present with different content, a conflict. Nothing is decided by file order
except which of two equal rows' bookkeeping (latency, created_at) is kept: OUT's, then the inputs'
in the order given.

What is not a conflict, by the store's own rules: a stored error yields to a success for the same
key (responses, turns, judgements, an ERROR result), a judge request answered in two databases keeps
its first answer (shards split the answers, not the judge requests: two models' identical answers
make one judge request; each result keeps the verdict it was decided with), a ledger row `sent`
yields to its completion, a model's display name keeps the first one known. Runs of one key are one
run: their ledger rows, answers and results together, `runs.shard` the union of the parts (NULL once
every part 1..N is there), the status the least finished of them (`completed` when the parts make the
whole and every case has its result), the counts and costs recomputed from the merged rows (billed =
the sum of the shards' own ledger rows, each row once); parts that differ in their settings or
models.yml's `families:` are a conflict. Different manifests or settings stay different runs.

Derived, never trusted (#36): what can be recomputed from content is. An input's manifests are taken only
as their hashes vouch for them (store/catalog_check.py: the catalog hashes to its `catalog_hash`, it and
the ordered case hashes to the manifest hash, each case's measures are its catalog's) or the input is
refused, naming it; a manifest OUT lacks is registered from its verified header as `run` registers one,
so the catalog tables and case measures are never copied and the registration date is OUT's own clock
(an input's dates decide nothing about which catalog is "newest"). Reviews pass the rules and the writer of
`review import` (`review_files.accepted`, `reviews.write_imported`: one reviewer however spelled, a later
verdict replaces an earlier one, a name with control characters, a future date or a key that matches no
judged output refused, each refusal said in `Merged.refused`), with `source` `import:<input file>`. An
input dated in the future anywhere merge keeps a date (`DATED`) is refused. Kept from the inputs as they
are, as bookkeeping that decides nothing: latency, tokens, provider and model version of a row already
compared under its key, a model's display name, `runs.helmbench_version`.

Safety: inputs are read inside one read transaction each (a consistent snapshot) and never written
(an input of an older schema is copied and the copy migrated; a newer one is refused); OUT is built
in a fresh temporary file (a copy of OUT when it exists) and renamed over OUT only when every input
merged without conflict, under OUT's run lock, so a refused merge leaves OUT as it was. Every table
of the schema must be listed in `TABLES` or `DERIVED`: a table a later migration adds is refused
by name until it is (tests/store/test_store_merge.py checks a fresh database).

Where each part lives: this module builds OUT and puts it in place; store/merge_tables.py holds each table's
key and rule, store/merge_inputs.py the checks an input passes, store/merge_rows.py the copy itself,
store/merge_runs.py the status of a run merged from parts, store/merge_report.py what a merge did or why it
refused.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from pathlib import Path
from typing import Sequence

from helmbench import safewrite
from helmbench.errors import StorageError, explain
from helmbench.store.db import check_file, connect, open_db
from helmbench.store.lock import RunLock
from helmbench.store.merge_inputs import open_input
from helmbench.store.merge_report import Merged, refusal
from helmbench.store.merge_rows import Merger


# ---------------------------------------------------------------------------------------------------
# OUT: built in a temporary copy, renamed into place


def _copy_out(out: Path, dest: Path) -> None:
    """OUT's content into `dest` (OUT's WAL checkpointed first, so that nothing of it is left beside the
    file the rename replaces)."""
    check_file(out, allow_empty=True)
    conn = connect(out)
    try:
        conn.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        target = sqlite3.connect(str(dest))
        conn.conn.backup(target)
        target.close()
    finally:
        conn.conn.close()


def _still_open(out: Path) -> bool:
    return any(Path(f"{out}{suffix}").exists() for suffix in ("-wal", "-shm"))


def merge(out: Path | str, inputs: Sequence[Path | str]) -> Merged:
    """Merge `inputs` into `out` (created when absent); raises MergeConflict (nothing written) on a conflict."""
    out = Path(out)
    inputs = [Path(p) for p in inputs]
    if out.is_symlink():
        raise safewrite.UnsafeWrite(f"refusing to write {out}: it is a symbolic link; nothing was written",
                                    hint="name the database file itself")
    # OUT given as an input too is merged into itself already (merging is idempotent): skipped, as opening
    # it read-only beside the merge would leave its -wal/-shm for the merge to blame on "another process"
    itself = [p for p in inputs if out.exists() and p.exists() and p.samefile(out)]
    inputs = [p for p in inputs if p not in itself]
    merged = Merged(out=out, inputs=inputs, itself=itself)
    safewrite.make_dir(out.parent)
    with RunLock(out, "helmbench merge"):
        work = safewrite.fresh_dir(out.parent, ".merge-")
        scratch = Path(tempfile.mkdtemp(prefix="helmbench-merge-"))
        try:
            target = work / out.name
            if out.exists() and out.stat().st_size:
                _copy_out(out, target)
            db = open_db(target)
            conn = db.conn
            merger = Merger(conn, str(out), merged)
            try:
                for path in inputs:
                    src = open_input(path, scratch, merged)
                    try:
                        src.execute("BEGIN")  # one consistent snapshot, even if a run writes it meanwhile
                        with conn:
                            merger.merge_input(src, str(path))
                    finally:
                        src.close()
                if merger.conflicts:
                    raise refusal(merger.conflicts)
                merger.refresh_runs()
                with conn:
                    merger.settle_catalog()
                conn.execute("PRAGMA journal_mode = DELETE")  # the finished file stands alone
            finally:
                conn.close()
            if out.exists() and _still_open(out):
                raise StorageError(f"{out} is open in another process (its -wal/-shm files are there): nothing was "
                                   "written", hint="stop the process reading it (`helmbench serve`, a report) and "
                                                   "merge again")
            safewrite.place(target, out)
        except sqlite3.Error as exc:
            raise explain(exc, db=out) from None
        finally:
            shutil.rmtree(work, ignore_errors=True)
            shutil.rmtree(scratch, ignore_errors=True)
    return merged
