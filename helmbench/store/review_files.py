"""Reviews as exchange files (CSV or JSONL), so clinicians on separate machines can pool verdicts.

Why all-or-nothing: a file with one bad row is a file someone has to fix; importing the good
rows and dropping the bad one would lose a verdict silently. Every row is checked first and
every bad one reported as `file:line: what is wrong`; only a clean file is written, in one
transaction. The reader is bounded (file size, rows, field length) because a shared file is
untrusted input.

Columns (both formats): format (the rows' version, VERDICTS_FORMAT; verdicts.schema.json), item_hash,
reviewer, case_id, scenario, criterion, criterion_text, judgment, confidence, note, created_at. `judgment` is the option chosen, or the list of options
for a multi-answer criterion: in JSONL a string or a list, in CSV that value as JSON
(`"PASS"`, `["A", "B"]`); a bare word in CSV (PASS) is read as that string.

A CSV file is opened in spreadsheets, and a cell starting with `=`, `+`, `-`, `@`, a tab or a
carriage return is run there as a formula (CSV injection): notes and names are free text, so
such a cell is written with a leading `'` (OWASP's rule), and so is a cell that starts with `'`
itself; reading removes that one `'` again, so an export imports back exactly.

What an import accepts (checked per row, the line named): a reviewer name of printable
characters (whitespace and case are normalised once, in `store.reviews`, so "ana " and "ANA" are
"ana"), a date and time not in the future (a review dated 9999 would win "newer wins" forever),
and an item key that is a judged output of some manifest in the database (stale ones included).
"""

from __future__ import annotations

import csv
import io
import json
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Iterable

from helmbench.errors import HelmbenchError
from helmbench.store.reviews import CONFIDENCES, reviewer_key, reviewer_name

FIELDS = ("item_hash", "reviewer", "case_id", "scenario", "criterion", "criterion_text", "judgment", "confidence",
          "note", "created_at")
#: The version of a verdicts file's rows (a `format` key on each JSONL line, a `format` column in CSV):
#: verdicts.schema.json's `format`. Optional on import: files written before it was added have none.
VERDICTS_FORMAT = 1
REQUIRED = ("item_hash", "reviewer", "case_id", "criterion", "criterion_text", "judgment", "created_at")
MAX_BYTES = 64 << 20
MAX_ROWS = 200_000
MAX_FIELD = 20_000
MAX_NAME = 200
MAX_SHOWN = 20
_HASH = re.compile(r"^sha256:[0-9a-f]{64}$")
#: Cells a spreadsheet would read as a formula, and the quote that marks them as text.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
TEXT_MARK = "'"
#: How far ahead of this machine's clock a review's date may be (another machine's clock drift).
CLOCK_SKEW = timedelta(minutes=10)


def csv_cell(value: str) -> str:
    """`value` as a CSV cell no spreadsheet runs: a leading `'` before a formula start (and before `'`)."""
    return TEXT_MARK + value if value.startswith((*FORMULA_START, TEXT_MARK)) else value


def from_csv_cell(value: str) -> str:
    """The text `csv_cell` wrote."""
    return value[1:] if value.startswith(TEXT_MARK) else value


def _fmt(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return "csv"
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    raise HelmbenchError(f"{path}: unknown review file type {suffix or '(none)'}", exit_code=2,
                         hint="name the file .csv or .jsonl (what `helmbench review export` writes)")


def export_rows(reviews: Iterable[dict]) -> list[dict]:
    """Stored reviews as exchange rows (judgment decoded)."""
    return [{**{k: r.get(k) for k in FIELDS if k != "judgment"}, "judgment": json.loads(r["judgment_json"])}
            for r in reviews]


def write(rows: list[dict], fmt: str, out: io.TextIOBase) -> None:
    if fmt == "jsonl":
        for r in rows:
            line = {"format": VERDICTS_FORMAT, **{k: r.get(k) for k in FIELDS}}
            out.write(json.dumps(line, ensure_ascii=False) + "\n")
        return
    # RFC 4180; a cell holding CR is then quoted
    w = csv.DictWriter(out, fieldnames=("format", *FIELDS), lineterminator="\r\n")
    w.writeheader()
    for r in rows:
        cells = {**{k: "" if r.get(k) is None else str(r[k]) for k in FIELDS},
                 "judgment": json.dumps(r["judgment"], ensure_ascii=False)}
        w.writerow({"format": str(VERDICTS_FORMAT), **{k: csv_cell(v) for k, v in cells.items()}})


def _csv_records(text: str) -> Iterable[tuple[int, dict | str]]:
    """(line, row) pairs; a row is a message when the row itself is malformed."""
    csv.field_size_limit(MAX_FIELD + 1)
    reader = csv.DictReader(io.StringIO(text, newline=""), strict=True)
    try:
        header = reader.fieldnames or []
        missing = [f for f in REQUIRED if f not in header]
        if missing:
            yield 1, f"the header lacks the column(s) {', '.join(missing)}"
            return
        while True:
            try:
                row = next(reader)
            except StopIteration:
                return
            line = reader.line_num
            if None in row:
                yield line, "more cells than the header has columns"
            elif any(v is None for v in row.values()):
                yield line, "fewer cells than the header has columns"
            else:
                row = {k: from_csv_cell(v) for k, v in row.items()}
                judgment = row.get("judgment", "")
                try:
                    row["judgment"] = json.loads(judgment)
                except ValueError:
                    row["judgment"] = judgment
                except RecursionError:
                    yield line, "`judgment` is nested too deeply to be an option or a list of options"
                    continue
                yield line, {k: (v if v != "" else None) if k != "judgment" else v for k, v in row.items()}
    except csv.Error as exc:
        yield reader.line_num, f"not valid CSV ({exc})"


def _jsonl_records(text: str) -> Iterable[tuple[int, dict | str]]:
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError as exc:
            yield n, f"not valid JSON ({exc.msg})"
            continue
        except RecursionError:  # bounded parser: a row nested past the interpreter's limit is a bad row
            yield n, "JSON nested too deeply to be a review row"
            continue
        yield n, obj if isinstance(obj, dict) else f"expected a JSON object, got {type(obj).__name__}"


def _problem(row: dict, options_of: dict[str, list[str]], known: set[str] | None = None) -> str | None:
    """What is wrong with one row, or None."""
    unknown = sorted(set(row) - set(FIELDS) - {"source", "format"})
    if unknown:
        return f"unknown column(s) {', '.join(unknown)}"
    if row.get("format") not in (None, VERDICTS_FORMAT, str(VERDICTS_FORMAT)):
        return (f"`format` {str(row['format'])[:20]!r} is not {VERDICTS_FORMAT}: written by another version of "
                "HELMBench (upgrade it to read this file)")
    for f in REQUIRED:
        if row.get(f) in (None, ""):
            return f"`{f}` is missing"
    for f in FIELDS:
        v = row.get(f)
        if f != "judgment" and v is not None and not isinstance(v, str):
            return f"`{f}` must be text, got {type(v).__name__}"
        if isinstance(v, str) and len(v) > MAX_FIELD:
            return f"`{f}` is longer than {MAX_FIELD} characters"
    if not _HASH.match(row["item_hash"]):
        return f"`item_hash` {row['item_hash'][:80]!r} is not a sha256:… hash written by `helmbench review export`"
    if known is not None and row["item_hash"] not in known:
        return (f"`item_hash` {row['item_hash'][:24]}… matches no judged output in this database "
                "(an export of another benchmark's database?)")
    if len(row["reviewer"].strip()) == 0 or len(row["reviewer"]) > MAX_NAME:
        return f"`reviewer` must be 1 to {MAX_NAME} characters"
    if not row["reviewer"].replace(" ", "").isprintable() or any(c in row["reviewer"] for c in "\t\n\r\v\f"):
        return f"`reviewer` {row['reviewer'][:40]!r} holds control characters"
    judgment = row["judgment"]
    if not (isinstance(judgment, str) or (isinstance(judgment, list) and all(isinstance(v, str) for v in judgment))):
        return "`judgment` must be an option (text) or a list of options"
    known = options_of.get(row["item_hash"])
    if known is not None:
        chosen = judgment if isinstance(judgment, list) else [judgment]
        bad = [v for v in chosen if v not in known]
        if bad:
            return f"`judgment` {bad[0]!r} is not one of the criterion's options ({', '.join(known)})"
    if row.get("confidence") not in (None, *CONFIDENCES):
        return f"`confidence` must be one of {', '.join(CONFIDENCES)} or empty, got {row['confidence']!r}"
    try:
        at = datetime.fromisoformat(row["created_at"])
    except ValueError:
        return f"`created_at` {row['created_at'][:40]!r} is not an ISO 8601 date and time"
    if (at if at.tzinfo else at.replace(tzinfo=timezone.utc)) > datetime.now(timezone.utc) + CLOCK_SKEW:
        return f"`created_at` {row['created_at'][:40]!r} is in the future"
    return None


def _utc(stamp: str) -> str:
    """The time in UTC, as `store.reviews.now` writes it: "newer" is decided by comparing this text,
    so a row written at another offset must not sort by its local clock (no offset: taken as UTC)."""
    at = datetime.fromisoformat(stamp)
    return (at if at.tzinfo else at.replace(tzinfo=timezone.utc)).astimezone(timezone.utc).isoformat()


def accepted(records: Iterable[tuple[str, dict | str]], options_of: dict[str, list[str]],
             known: set[str] | None, source: str) -> tuple[list[dict], list[str]]:
    """The rules every review from elsewhere passes, `review import`'s file and `helmbench merge`'s input
    database alike (the one place they are written): (the rows taken, as they are stored, and the refusals as
    `where: why`). `records`: (where, row or what is wrong with it) pairs, a row with the exchange columns
    (FIELDS; `judgment` decoded). Names are normalised (whitespace; `store.reviews` matches case when writing),
    a name with control characters, a date in the future, an option the criterion lacks and, with `known`, an
    item key that matches no judged output are refused, and so is a second verdict by one reviewer (any
    spelling) on one item. Dates are stored in UTC, so that "newer wins" compares like with like."""
    rows: list[dict] = []
    problems: list[str] = []
    seen: dict[tuple[str, str], str] = {}
    for where, rec in records:
        if len(rows) + len(problems) >= MAX_ROWS:
            problems.append(f"{where}: more than {MAX_ROWS} rows")
            break
        why = rec if isinstance(rec, str) else _problem(rec, options_of, known)
        if why is None:
            key = (rec["item_hash"], reviewer_key(rec["reviewer"]))
            if key in seen:
                why = f"a second verdict by {rec['reviewer']!r} on the same item (the first: {seen[key]})"
            else:
                seen[key] = where
        if why is not None:
            problems.append(f"{where}: {why}")
            continue
        rows.append({k: rec.get(k) for k in FIELDS} | {"source": source, "reviewer": reviewer_name(rec["reviewer"]),
                                                      "created_at": _utc(rec["created_at"])})
    return rows, problems


def review_rules(db) -> tuple[dict[str, list[str]], set[str]]:
    """(item hash → its criterion's options, the item hashes a review may be of) in a database: its judged
    outputs (every manifest's, stale wordings included) and the items reviewed in it already."""
    from helmbench.store.queries.reviews import judged_item_options, reviewed_items

    options = judged_item_options(db)
    return options, set(options) | reviewed_items(db)


def read(path: Path, options_of: dict[str, list[str]] | None = None, known: set[str] | None = None) -> list[dict]:
    """Every row of a review file, checked (`accepted`); raises naming each bad line (and imports nothing).

    `options_of`: item hash → the criterion's options; `known`: the item hashes a review may be of
    (None: not checked)."""
    fmt = _fmt(path)
    if path.stat().st_size > MAX_BYTES:
        raise HelmbenchError(f"{path} is larger than {MAX_BYTES >> 20} MB: not a review export",
                             hint="split it, or check that it is the file `helmbench review export` wrote")
    text = path.read_bytes().decode("utf-8-sig")  # no newline translation: a CR inside a quoted cell is text
    records = _csv_records(text) if fmt == "csv" else _jsonl_records(text)
    rows, problems = accepted(((f"{path}:{line}", rec) for line, rec in records), options_of or {}, known,
                              f"import:{path.name}")
    if problems:
        shown = problems[:MAX_SHOWN] + ([f"… and {len(problems) - MAX_SHOWN} more"] if len(problems) > MAX_SHOWN else [])
        raise HelmbenchError(f"{len(problems)} bad row(s) in {path}; nothing was imported:\n" + "\n".join(shown),
                             hint="fix the rows named above (or remove them) and import the file again")
    return rows
