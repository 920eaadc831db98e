"""Clinician review from Python: plan who reviews what, write packets, serve the blind page, see how far
the review is, and move verdicts between machines (`helmbench review …`; `agreement` is in the package).

Why a module of its own: these are one concept (collecting clinicians' verdicts on judged outputs), and
the command line renders what they return, so a notebook can run a calibration round without the
CLI. Paths are explicit (the CLI fills in build/ defaults); every stage is imported inside the function
that needs it, so importing `helmbench.api` stays cheap. Nothing here prints.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, TextIO

from helmbench.errors import UsageError

if TYPE_CHECKING:  # pragma: no cover - names for annotations only
    import socket

    from helmbench.score.review_plan import Plan, ReviewStatus

#: Where a review plan lives by default: beside the results database.
PLAN_FILE = "review-plan.json"

#: Where review packets go by default: a folder beside the results database.
PACKETS_DIR = "review-packets"


def _path(manifest) -> Path | None:
    return None if manifest is None else Path(getattr(manifest, "path", manifest))


def _ran_manifest(conn, manifest) -> str | None:
    """The manifest's hash when it has finished runs; None (the latest judged one) otherwise: the rule
    `report` and `agreement` follow."""
    from helmbench.score.report import REPORT_STATUSES, manifest_hash_of
    from helmbench.store import queries

    wanted = manifest_hash_of(_path(manifest))
    if wanted and queries.choose_manifest(conn, wanted, REPORT_STATUSES) == wanted:
        return wanted
    return None


def review_plan_path(db: str | Path, plan: str | Path | None = None, *, required: bool = False) -> Path | None:
    """The review plan to follow: `plan`, else review-plan.json beside `db`; None when that default is absent
    and not `required` (a plan given, or required, is returned whether or not it exists: the caller checks)."""
    if plan is not None:
        return Path(plan)
    default = Path(db).parent / PLAN_FILE
    return default if required or default.exists() else None


def read_review_plan(path: str | Path) -> Plan:
    """The plan written at `path` (by `review_plan`), checked as an untrusted file."""
    from helmbench.score.review_plan import load_plan

    return load_plan(Path(path))


def _plan_of(plan) -> Plan | None:
    return read_review_plan(plan) if isinstance(plan, (str, Path)) else plan


def review_plan(db: str | Path, reviewers: Iterable[str], *, manifest=None, sample: int | None = None,
                seed: int = 0, per_item: int | None = None, out: str | Path | None = None) -> Plan:
    """Plan who reviews what, write it to `out` (default review-plan.json beside `db`) and return it.

    Each sampled item (stratified by criterion and judge or check verdict; `sample` items, default all) gets
    `per_item` reviewers (default benchmark.yml `calibration: {reviewers_per_item}`, else 2), shared fairly
    within every stratum. `manifest` picks whose judged items as `report` does. The same seed, reviewers and
    items give the same plan. Raises `UsageError` for a bad name, too few reviewers or no judged items.
    """
    from helmbench.score.review_items import judged_items
    from helmbench.score.review_plan import make_plan, per_item_of
    from helmbench.store import open_readonly
    from helmbench.store.queries.reviews import declared_calibration
    from helmbench.store.review_packets import write_json

    db = Path(db)
    out = Path(out) if out is not None else db.parent / PLAN_FILE
    names = [" ".join(r.split()) for r in reviewers]
    bad = next((r for r in names if not r or len(r) > 200 or not r.isprintable()), None)
    if bad is not None:
        raise UsageError(f"--reviewer: {bad!r} is not a name (1 to 200 printable characters)",
                         hint="pass each reviewer's name")
    conn = open_readonly(db)
    try:
        manifest_hash, items = judged_items(conn, _ran_manifest(conn, manifest))
        k = per_item or per_item_of(declared_calibration(conn, manifest_hash))
    finally:
        conn.close()
    if not items:
        raise UsageError(f"{db} holds no judged items to review",
                         hint="run a benchmark with judged (sqe) scenarios first: `helmbench run`")
    if k > len(names):
        raise UsageError(f"--reviewer: {k} reviewers per item (benchmark.yml calibration: reviewers_per_item, or "
                         f"--per-item) needs at least {k} reviewers, got {len(names)}",
                         hint=f"name {k} or more reviewers, or pass --per-item {len(names)}")
    try:
        made = make_plan(items, names, per_item=k, size=sample, seed=seed, manifest_hash=manifest_hash)
    except ValueError as exc:
        raise UsageError(f"--reviewer: {exc}", hint="name each reviewer once") from None
    write_json(out, made.to_dict())
    return made


@dataclass
class ReviewPacket:
    """One packet `review_packets` wrote: whose, where, how many items, and how many planned items are gone
    (no longer judged as planned: a criterion was reworded, so the plan should be made again)."""

    reviewer: str
    path: Path
    items: int
    gone: int = 0


def _slug(name: str) -> str:
    return re.sub(r"[^\w]+", "-", name.casefold(), flags=re.UNICODE).strip("-_")[:60] or "reviewer"


def review_packets(db: str | Path, plan, *, reviewers: Iterable[str] | None = None,
                   out_dir: str | Path | None = None) -> list[ReviewPacket]:
    """Write one blinded packet per reviewer of `plan` (a `Plan` or its path; `reviewers`: some of them) into
    `out_dir` (default review-packets/ beside `db`): the items planned for them they have not reviewed yet.

    A packet holds what the judge saw and the criterion, never the model or anyone's verdict; the reviewer
    serves it with `review_session(packet=…)`. Raises `UsageError` for a reviewer not in the plan.
    """
    from helmbench.score.review_items import current_keys, judged_items
    from helmbench.score.review_plan import packet_items
    from helmbench.store import open_readonly
    from helmbench.store.queries.reviews import all_reviews
    from helmbench.store.review_packets import PACKET_FORMAT, write_json

    db = Path(db)
    followed = _plan_of(plan)
    root = Path(out_dir) if out_dir is not None else db.parent  # a default below build/: a link planted there is refused
    out_dir = Path(out_dir) if out_dir is not None else db.parent / PACKETS_DIR
    names = list(reviewers or followed.reviewers)
    unknown = [r for r in names if followed.of(r) is None]
    if unknown:
        raise UsageError(f"--reviewer: {unknown[0]!r} is not in the review plan ({', '.join(followed.reviewers)})",
                         hint="add them with `helmbench review plan --reviewer …` (a new plan) or pick a planned reviewer")
    conn = open_readonly(db)
    try:
        _, items = judged_items(conn, followed.manifest_hash)
        followed = followed.migrated(items)
        done: dict[str, set[str]] = {}  # plan name → items they have a verdict on, however the name was spelt
        for row in all_reviews(conn):
            named = followed.named(row["reviewer"])
            if named is not None:
                done.setdefault(named, set()).add(row["item_hash"])
    finally:
        conn.close()
    used: set[str] = set()
    written = []
    for r in names:
        name = followed.named(r)
        slug = _slug(name)
        while slug in used:
            slug += "-2"
        used.add(slug)
        todo, gone = packet_items(followed, name, items, current_keys(done.get(name, set()), items))
        path = out_dir / f"{slug}.review.json"
        write_json(path, {"format": PACKET_FORMAT, "version": 1, "reviewer": name,
                          "manifest_hash": followed.manifest_hash, "seed": followed.seed,
                          "about": f"A HELMBench review packet for {name}. Open it with: "
                                   f"helmbench review --packet {path.name}",
                          "items": todo}, root)
        written.append(ReviewPacket(name, path, len(todo), gone))
    return written


def review_status(db: str | Path, *, plan=None, manifest=None) -> ReviewStatus:
    """How far the review is: per reviewer assigned and done, per criterion the items with ≥ 1 and ≥ 2 current
    reviews. `plan` (a `Plan` or its path; default none) picks the items, else `manifest` as `report` does."""
    from helmbench.score.review_plan import load_status
    from helmbench.store import open_readonly

    conn = open_readonly(Path(db))
    try:
        return load_status(conn, _plan_of(plan), _ran_manifest(conn, manifest))
    finally:
        conn.close()


@dataclass
class ReviewSession:
    """A blind review page ready to serve: `app` (the WSGI app), what it shows (`described`), and what the
    caller should say first (`notes`: the manifest shown is not the one asked for, a plan not followed)."""

    app: object
    described: str
    manifest_hash: str | None = None
    notes: list[str] = field(default_factory=list)

    def bind(self, host: str = "127.0.0.1", port: int = 0) -> socket.socket:
        """A listening socket on (host, port) (port 0: any free one); a taken port is a `UsageError`."""
        from helmbench.publish.review.serve import bind

        return bind(host, port)

    def serve(self, sock: socket.socket, allow_hosts: Iterable[str] = ()) -> None:
        """Serve the page on `sock` until interrupted (it answers loopback, the bound address and `allow_hosts`)."""
        from helmbench.publish.review.serve import serve

        serve(self.app, sock, tuple(allow_hosts))


def is_loopback(host: str) -> bool:
    """Whether `host` is a loopback address (else anyone who can reach it sees the items)."""
    from helmbench.publish.local_guard import LOOPBACK

    return host in LOOPBACK


def review_session(db: str | Path | None = None, *, manifest=None, sample: int | None = None, seed: int = 0,
                   plan=None, packet: str | Path | None = None, verdicts: str | Path | None = None) -> ReviewSession:
    """The blind review page of `db`'s judged items (`sample` of them, stratified, by `seed`; following `plan`,
    a `Plan` or its path, when it is of the same manifest), or of a review `packet` (no database: the verdicts
    go to `verdicts`, default beside the packet). Serve it with `.bind()` and `.serve()`."""
    from helmbench.publish.review.serve import prepare, prepare_packet

    if packet is not None:
        if verdicts is not None and Path(verdicts).suffix.lower() != ".jsonl":
            raise UsageError(f"--verdicts: {verdicts} is not a .jsonl file",
                             hint="name the verdicts file .jsonl (what `helmbench review import` reads)")
        prepared = prepare_packet(Path(packet), None if verdicts is None else Path(verdicts))
        a = prepared.app
        return ReviewSession(a, f"reviewing the packet of {a.reviewer} ({len(a.sample)} item(s)); "
                                f"verdicts go to {a.verdicts.path}", prepared.manifest_hash)
    from helmbench.score.report import manifest_hash_of, shown_note
    from helmbench.store import open_readonly

    if db is None:
        raise UsageError("review_session needs a results database or a review packet",
                         hint="pass db=… (results.db) or packet=… (NAME.review.json)")
    db = Path(db)
    conn = open_readonly(db)
    try:
        wanted = _ran_manifest(conn, manifest)
    finally:
        conn.close()
    followed = _plan_of(plan)
    prepared = prepare(db, wanted, size=sample, seed=seed, plan=followed)
    a = prepared.app
    notes = []
    note = shown_note(_path(manifest), manifest_hash_of(_path(manifest)), prepared.manifest_hash)
    if note:
        notes.append(f"note: {note}")
    described = f"reviewing {len(a.sample)} of {len(a.items)} judged item(s) of manifest {prepared.manifest_hash}"
    if a.plan is not None:
        described += f", following the review plan ({', '.join(a.plan.reviewers)})"
    elif followed is not None:
        notes.append("warning: the review plan is of another manifest; not followed "
                     "(write a new one with `helmbench review plan`)")
    return ReviewSession(a, described, prepared.manifest_hash, notes)


def review_export(db: str | Path, out: str | Path | TextIO | None = None, *, format: str = "csv") -> list[dict]:
    """Every stored review (stale ones included) as exchange rows, written as `format` (csv or jsonl) to `out`:
    a path (written atomically, never through a link), an open text file, or standard output when None.
    Returns the rows (verdicts.schema.json)."""
    from helmbench import safewrite
    from helmbench.store import open_readonly
    from helmbench.store.queries.reviews import all_reviews
    from helmbench.store.review_files import export_rows, write

    conn = open_readonly(Path(db))
    try:
        rows = export_rows(all_reviews(conn))
    finally:
        conn.close()
    if out is None or hasattr(out, "write"):
        write(rows, format, out if out is not None else sys.stdout)
    else:
        with safewrite.atomic(Path(out), text=True, newline="") as f:
            write(rows, format, f)
    return rows


@dataclass
class ReviewImport:
    """What `review_import` did: rows read, added, and already here (the newer of the two kept)."""

    read: int
    added: int
    kept: int


def review_import(db: str | Path, file: str | Path) -> ReviewImport:
    """Add the reviews of another machine's export (`review_export`) to `db`; a file with any bad row imports
    nothing and raises a `HelmbenchError` naming the lines (the rules `merge` applies to an input's reviews)."""
    from helmbench.store import open_db
    from helmbench.store.review_files import read, review_rules
    from helmbench.store.reviews import import_reviews

    database = open_db(Path(db))
    try:
        rows = read(Path(file), *review_rules(database))
        added, other = import_reviews(database, rows)
    finally:
        database.conn.close()
    return ReviewImport(len(rows), added, other)
