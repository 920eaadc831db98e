"""`helmbench agreement` and `helmbench review` (serve / export / import): clinician calibration.

Thin over helmbench.score.calibration (the numbers), helmbench.store.review_files (the
exchange files) and helmbench.publish.review (the page). Each imports its stage inside the body.
"""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from helmbench.cli.app import app


#: The versions of `agreement --format json` and `review status --format json`: the `format` of
#: agreement.schema.json and review-status.schema.json (bump each with its schema).
AGREEMENT_FORMAT = 1
STATUS_FORMAT = 1


class AgreementFormat(str, Enum):
    text = "text"
    json = "json"


def _fmt(x: float | None, digits: int = 2) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def _ci(ci) -> str:
    return "" if not ci else f" [{ci[0]:.2f}, {ci[1]:.2f}]"


def agreement_lines(report) -> list[str]:
    """The text rendering: one line per criterion, then overall; authored codes made printable."""
    from helmbench.terminal import printable

    t = report.threshold
    lines = [f"judge–clinician agreement (calibrated: κ ≥ {t.min_kappa:g} and n ≥ {t.min_n}); "
             f"manifest {report.manifest_hash or '—'}"]
    if report.note:
        lines.append(f"note: {printable(report.note)}")
    rows = [["criterion", "n", "κ [95% CI]", "sensitivity FAIL", "specificity", "α clinicians (items)", "split",
             "stale", "status"]]
    for c in [*report.criteria, report.overall]:
        kappa = "—" if c.kappa is None else f"{c.kappa.value:.2f}{_ci(c.kappa.ci)}"
        sens = f"{_fmt(c.sensitivity.value)}{_ci(c.sensitivity.interval)} ({c.sensitivity.k}/{c.sensitivity.n})"
        spec = f"{_fmt(c.specificity.value)}{_ci(c.specificity.interval)} ({c.specificity.k}/{c.specificity.n})"
        alpha = f"{_fmt(c.alpha)} ({c.n_alpha})"
        status = "calibrated" if c.calibrated else "uncalibrated"
        if c.judges > 1:
            status += f"; {c.judges} judges, α between them {_fmt(c.judge_alpha)}"
        rows.append([printable(c.key), str(c.n), kappa, sens, spec, alpha, str(c.n_split), str(c.n_stale), status])
    # columns as wide as their widest cell, so a long interval never pushes the next column out of line
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    right = {1, 6, 7}  # counts
    for row in rows:
        cells = [cell.rjust(w) if i in right else cell.ljust(w) for i, (cell, w) in enumerate(zip(row, widths))]
        lines.append(" ".join(cells) + "  " + row[-1])
    if report.overall.n_reviewed == 0:
        lines.append("no current reviews yet: collect some with `helmbench review`")
    return lines


@app.command("agreement")
def agreement(
    db: Optional[Path] = typer.Option(None, "--db", help="The results database (default build/results.db)."),
    manifest: Optional[Path] = typer.Option(None, "--manifest",
                                            help="Whose criteria (default build/manifest.jsonl, else the latest judged runs)."),
    format: AgreementFormat = typer.Option(AgreementFormat.text, "--format", "-f",
                                           help="text, or json (its shape: agreement.schema.json, `helmbench schema`)."),
) -> None:
    """How far the judge agrees with clinicians' blind reviews, per judged criterion and overall.

    n (items with a clinicians' consensus), Cohen's κ between the judge and that consensus,
    sensitivity and specificity for the failing verdicts (each with a 95 % interval),
    Krippendorff's α between clinicians where items have several reviewers, and whether the
    criterion counts as calibrated (benchmark.yml `calibration: {min_kappa, min_n}`). Reviews of
    an earlier wording of a criterion are stale: counted apart, never in the numbers.

    How verdicts combine: each clinician's option is PASS or FAIL by the criterion's pass
    values (any option that is not a pass value, PARTIAL included, counts as FAIL); an item's
    clinicians' consensus is their majority, and an even split has none (the item is left out
    of κ, sensitivity and specificity and counted as split, but counts toward α). Several judges
    combine the same way, except that a tie is a FAIL. A badge's date is that of the latest
    current review (stale reviews and dates in the future never date it).

    Examples:

        helmbench agreement

        helmbench agreement --format json > calibration.json
    """
    from helmbench.cli import validate
    from helmbench.spec.discover import in_build

    db, manifest = in_build(db=db, manifest=manifest)
    validate.db_to_read(db), validate.input_file(manifest, "--manifest", what="manifest", optional=True)
    report = _calibration(db, manifest)
    if format is AgreementFormat.json:
        typer.echo(json.dumps({"format": AGREEMENT_FORMAT, **report.to_dict()}, ensure_ascii=False, indent=2))
        return
    typer.echo("\n".join(agreement_lines(report)))


def _calibration(db: Path, manifest: Path | None):
    from helmbench.api import agreement as api_agreement

    return api_agreement(db, manifest)


def _manifest_hash(conn, manifest: Path | None) -> str | None:
    """The manifest's hash when it has finished runs; None (the latest judged one) otherwise: the rule
    `report` and `agreement` follow."""
    from helmbench.score.report import REPORT_STATUSES, manifest_hash_of
    from helmbench.store import queries

    wanted = manifest_hash_of(manifest)
    if wanted and queries.choose_manifest(conn, wanted, REPORT_STATUSES) == wanted:
        return wanted
    return None


class FileFormat(str, Enum):
    csv = "csv"
    jsonl = "jsonl"


review_app = typer.Typer(name="review", invoke_without_command=True, no_args_is_help=False,
                         rich_markup_mode="markdown")
app.add_typer(review_app)


@review_app.callback()
def review(
    ctx: typer.Context,
    db: Optional[Path] = typer.Option(None, "--db", help="The results database (default build/results.db)."),
    manifest: Optional[Path] = typer.Option(None, "--manifest",
                                            help="Whose judged items (default build/manifest.jsonl, else the latest judged runs)."),
    sample: Optional[int] = typer.Option(None, "--sample", min=1,
                                         help="Review this many items, stratified by scenario and judge verdict (default: all)."),
    seed: int = typer.Option(0, "--seed", help="Which sample: the same seed gives every reviewer the same items."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on (loopback unless you mean otherwise)."),
    port: int = typer.Option(8002, "--port", "-p", min=0, max=65535, help="Port (0: any free one)."),
    packet: Optional[Path] = typer.Option(None, "--packet",
                                          help="Serve this review packet (from `helmbench review packet`): no database needed."),
    verdicts: Optional[Path] = typer.Option(None, "--verdicts",
                                            help="With --packet: where the verdicts go (default: beside the packet, "
                                                 "NAME.review-verdicts.jsonl for NAME.review.json)."),
    plan: Optional[Path] = typer.Option(None, "--plan", help="The review plan to follow (default build/review-plan.json "
                                                             "when it exists)."),
    allow_host: list[str] = typer.Option([], "--allow-host", help="Also answer requests addressed to this host name (with the port), e.g. when binding to a LAN address; repeatable."),
) -> None:
    """Serve the blind review page on http://127.0.0.1:8002 (Ctrl-C stops it).

    One judged item at a time: the exact messages the model was sent, its reply, and the
    criterion's text and options. The model, the judge's verdict and other reviewers' verdicts
    are hidden; the order is random per reviewer; the sample is stratified by scenario and judge
    verdict. Verdicts are stored in results.db, keyed by what the judge saw. With a review plan
    (`helmbench review plan`), a reviewer named in it gets the items planned for them.

    A clinician elsewhere gets a packet instead (`helmbench review packet`): `helmbench review
    --packet ana.review.json` serves it on their own machine, without any results database, and
    writes their verdicts to `ana.review-verdicts.jsonl` beside it, the file to send back
    (`helmbench review import` reads it).

    How verdicts combine: see `helmbench agreement --help` (PARTIAL counts as FAIL; the
    clinicians' majority is compared with the judge; an even split is left out).

    Examples:

        helmbench review

        helmbench review --sample 60 --port 8010

        helmbench review --packet ana.review.json

        helmbench review plan --reviewer ana --reviewer ben --reviewer cleo --sample 60

        helmbench review export --format csv --out ana.csv

        helmbench review import ben.jsonl
    """
    if ctx.invoked_subcommand is not None:
        return
    from helmbench.cli import validate
    from helmbench.publish.local_guard import LOOPBACK
    from helmbench.publish.review.serve import bind, prepare, prepare_packet, serve
    from helmbench.spec.discover import in_build
    from helmbench.store import open_readonly

    if packet is not None:
        validate.input_file(packet, "--packet", what="review packet")
        if verdicts is not None:
            validate.output_file(verdicts, "--verdicts", what="verdicts file")
            if verdicts.suffix.lower() != ".jsonl":
                from helmbench.errors import UsageError

                raise UsageError(f"--verdicts: {verdicts} is not a .jsonl file",
                                 hint="name the verdicts file .jsonl (what `helmbench review import` reads)")
        prepared = prepare_packet(packet, verdicts)
        validate.output_file(prepared.app.verdicts.path, "--verdicts", what="verdicts file")
        described = (f"reviewing the packet of {prepared.app.reviewer} ({len(prepared.app.sample)} item(s)); "
                     f"verdicts go to {prepared.app.verdicts.path}")
    else:
        db, manifest = in_build(db=db, manifest=manifest)
        validate.db_to_read(db), validate.input_file(manifest, "--manifest", what="manifest", optional=True)
        conn = open_readonly(db)
        try:
            wanted = _manifest_hash(conn, manifest)
        finally:
            conn.close()
        validate.db_to_write(db)
        followed = _plan(plan, db, required=False)
        prepared = prepare(db, wanted, size=sample, seed=seed, plan=followed)
        from helmbench.score.report import manifest_hash_of, shown_note

        note = shown_note(manifest, manifest_hash_of(manifest), prepared.manifest_hash)
        if note:
            typer.echo(f"note: {note}", err=True)
        described = (f"reviewing {len(prepared.app.sample)} of {len(prepared.app.items)} judged item(s) of manifest "
                     f"{prepared.manifest_hash}")
        if prepared.app.plan is not None:
            described += f", following the review plan ({', '.join(prepared.app.plan.reviewers)})"
        elif followed is not None:
            typer.echo("warning: the review plan is of another manifest; not followed "
                       "(write a new one with `helmbench review plan`)", err=True)
    sock = bind(host, port)
    shown = f"[{host}]" if ":" in host else host
    typer.echo(f"{described}: http://{shown}:{sock.getsockname()[1]}/  (Ctrl-C stops)", err=True)
    if host not in LOOPBACK:
        typer.echo(f"warning: listening on {host}, not loopback: anyone who can reach it sees the items "
                   "(it answers requests addressed to loopback, to the address it is bound to, and to the "
                   "names given with --allow-host)", err=True)
    serve(prepared.app, sock, tuple(allow_host))


PLAN_FILE = "review-plan.json"


def _plan(path: Path | None, db: Path, *, required: bool):
    """The review plan at `path` (default: review-plan.json beside the database), or None when there is none."""
    from helmbench.cli import validate
    from helmbench.score.review_plan import load_plan

    given = path is not None
    path = path if given else db.parent / PLAN_FILE
    if not path.exists() and not given and not required:
        return None
    validate.input_file(path, "--plan", what="review plan",
                        hint="write one with `helmbench review plan --reviewer NAME --reviewer NAME …`")
    return load_plan(path)


@review_app.command("plan")
def review_plan(
    reviewer: list[str] = typer.Option(..., "--reviewer", "-r", help="A reviewer's name (repeat for each)."),
    sample: Optional[int] = typer.Option(None, "--sample", min=1,
                                         help="Plan this many items, stratified by scenario and judge verdict (default: all)."),
    seed: int = typer.Option(0, "--seed", help="The same seed, reviewers and items give the same plan."),
    per_item: Optional[int] = typer.Option(None, "--per-item", min=1, max=20,
                                           help="Reviewers per item (default: benchmark.yml calibration.reviewers_per_item, "
                                                "else 2)."),
    db: Optional[Path] = typer.Option(None, "--db", help="The results database (default build/results.db)."),
    manifest: Optional[Path] = typer.Option(None, "--manifest",
                                            help="Whose judged items (default build/manifest.jsonl, else the latest judged runs)."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Write the plan here (default build/review-plan.json)."),
) -> None:
    """Plan who reviews what: each sampled item gets k reviewers, shared fairly within every stratum.

    k is benchmark.yml's `calibration: {reviewers_per_item: k}` (default 2): with two or more
    reviewers per item, Krippendorff's α between clinicians can be measured on every item.
    `--per-item 1` shares the sample out with no overlap (one clinician alone gets every item).
    Reviewers' loads differ by at most one item within each stratum (scenario × judge verdict).
    The plan is a file (review-plan.json beside results.db) that `helmbench review`, `review
    packet` and `review status` follow; the same seed and reviewers give the same plan.

    Examples:

        helmbench review plan --reviewer ana --reviewer ben --reviewer cleo --sample 60

        helmbench review packet --out-dir packets/
    """
    from helmbench.cli import validate
    from helmbench.errors import UsageError
    from helmbench.score.review_items import judged_items
    from helmbench.score.review_plan import make_plan, per_item_of
    from helmbench.spec.discover import in_build
    from helmbench.store import open_readonly
    from helmbench.store.queries.reviews import declared_calibration
    from helmbench.store.review_packets import write_json

    db, manifest = in_build(db=db, manifest=manifest)
    validate.db_to_read(db), validate.input_file(manifest, "--manifest", what="manifest", optional=True)
    out = out or db.parent / PLAN_FILE
    validate.output_file(out, "--out", what="review plan")
    names = [" ".join(r.split()) for r in reviewer]
    bad = next((r for r in names if not r or len(r) > 200 or not r.isprintable()), None)
    if bad is not None:
        raise UsageError(f"--reviewer: {bad!r} is not a name (1 to 200 printable characters)", hint="pass each reviewer's name")
    conn = open_readonly(db)
    try:
        manifest_hash, items = judged_items(conn, _manifest_hash(conn, manifest))
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
    typer.echo(f"review plan written to {out}: {len(made.sample)} item(s) of manifest {manifest_hash}, "
               f"{k} reviewer(s) each")
    for r in made.reviewers:
        typer.echo(f"  {_shown(r)}: {len(made.assigned[r])} item(s)")


def _shown(text: str) -> str:
    from helmbench.terminal import printable

    return printable(text)


def _slug(name: str) -> str:
    import re

    return re.sub(r"[^\w]+", "-", name.casefold(), flags=re.UNICODE).strip("-_")[:60] or "reviewer"


@review_app.command("packet")
def review_packet(
    reviewer: Optional[list[str]] = typer.Option(None, "--reviewer", "-r",
                                                 help="Whose packet (repeat for several; default: every reviewer of the plan)."),
    out_dir: Optional[Path] = typer.Option(None, "--out-dir", "-o",
                                           help="Write the packets here, one NAME.review.json each (default build/review-packets)."),
    plan: Optional[Path] = typer.Option(None, "--plan", help="The review plan (default build/review-plan.json)."),
    db: Optional[Path] = typer.Option(None, "--db", help="The results database (default build/results.db)."),
) -> None:
    """Write a blinded packet of the items each reviewer still has to review, to send by email.

    A packet is one file: the reviewer's name and, for each item planned for them and not yet
    reviewed, the messages the model was sent, its reply and the criterion (never the model,
    the judge's verdict or anyone's verdict). The reviewer opens it with `helmbench review
    --packet FILE` (no results database needed) and sends back the verdicts file it writes
    (`NAME.review-verdicts.jsonl` beside `NAME.review.json`), which `helmbench review import` adds here.

    Examples:

        helmbench review packet --out-dir packets/

        helmbench review packet --reviewer ana --out-dir packets/
    """
    from helmbench.cli import validate
    from helmbench.errors import UsageError
    from helmbench.score.review_items import judged_items
    from helmbench.score.review_plan import packet_items
    from helmbench.spec.discover import in_build
    from helmbench.store import open_readonly
    from helmbench.store.queries.reviews import all_reviews
    from helmbench.store.review_packets import PACKET_FORMAT, write_json

    (db,) = in_build(db=db)
    validate.db_to_read(db)
    followed = _plan(plan, db, required=True)
    root = out_dir if out_dir is not None else db.parent  # a default below build/: a link planted there is refused
    out_dir = out_dir or db.parent / "review-packets"
    validate.output_dir(out_dir, "--out-dir")
    names = reviewer or followed.reviewers
    unknown = [r for r in names if followed.of(r) is None]
    if unknown:
        raise UsageError(f"--reviewer: {unknown[0]!r} is not in the review plan ({', '.join(followed.reviewers)})",
                         hint="add them with `helmbench review plan --reviewer …` (a new plan) or pick a planned reviewer")
    conn = open_readonly(db)
    try:
        _, items = judged_items(conn, followed.manifest_hash)
        done: dict[str, set[str]] = {}  # plan name → items they have a verdict on, however the name was spelt
        for row in all_reviews(conn):
            named = followed.named(row["reviewer"])
            if named is not None:
                done.setdefault(named, set()).add(row["item_hash"])
    finally:
        conn.close()
    used: set[str] = set()
    for r in names:
        name = followed.named(r)
        slug = _slug(name)
        while slug in used:
            slug += "-2"
        used.add(slug)
        todo, gone = packet_items(followed, name, items, done.get(name, set()))
        path = out_dir / f"{slug}.review.json"
        write_json(path, {"format": PACKET_FORMAT, "version": 1, "reviewer": name,
                          "manifest_hash": followed.manifest_hash, "seed": followed.seed,
                          "about": f"A HELMBench review packet for {name}. Open it with: "
                                   f"helmbench review --packet {path.name}",
                          "items": todo}, root)
        note = f" ({gone} planned item(s) no longer judged as planned: re-plan to replace them)" if gone else ""
        typer.echo(f"{path}: {len(todo)} item(s) for {_shown(name)}{note}")


class StatusFormat(str, Enum):
    text = "text"
    json = "json"


@review_app.command("status")
def review_status(
    plan: Optional[Path] = typer.Option(None, "--plan", help="The review plan (default build/review-plan.json when it exists)."),
    db: Optional[Path] = typer.Option(None, "--db", help="The results database (default build/results.db)."),
    manifest: Optional[Path] = typer.Option(None, "--manifest",
                                            help="Without a plan: whose judged items (default build/manifest.jsonl, "
                                                 "else the latest judged runs)."),
    format: StatusFormat = typer.Option(StatusFormat.text, "--format", "-f",
                                        help="text, or json (its shape: review-status.schema.json, `helmbench schema`)."),
) -> None:
    """How far the review is: per reviewer what is assigned and done, per criterion the items with ≥ 2 reviews.

    Counts current reviews (stale ones, of an earlier wording, are not counted). "≥2" is the
    number of items Krippendorff's α between clinicians is computed on (`helmbench agreement`).

    Examples:

        helmbench review status

        helmbench review status --format json
    """
    from helmbench.cli import validate
    from helmbench.score.review_plan import load_status
    from helmbench.spec.discover import in_build
    from helmbench.store import open_readonly

    db, manifest = in_build(db=db, manifest=manifest)
    validate.db_to_read(db), validate.input_file(manifest, "--manifest", what="manifest", optional=True)
    followed = _plan(plan, db, required=False)
    conn = open_readonly(db)
    try:
        status = load_status(conn, followed, _manifest_hash(conn, manifest))
    finally:
        conn.close()
    if format is StatusFormat.json:
        typer.echo(json.dumps({"format": STATUS_FORMAT, **status.to_dict()}, ensure_ascii=False, indent=2))
        return
    typer.echo("\n".join(status_lines(status)))


def _table(rows: list[list[str]], right: set[int]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))).rstrip()
            for row in rows]


def status_lines(status) -> list[str]:
    """The text rendering of `review status`: the plan, then reviewers, then criteria."""
    p = status.plan
    lines = [f"review status of manifest {status.manifest_hash or '—'}; "
             + (f"plan: {len(p.sample)} item(s), {p.per_item} reviewer(s) each, seed {p.seed}" if p else
                "no review plan (`helmbench review plan` writes one)")]
    if status.missing:
        lines.append(f"{status.missing} planned item(s) are no longer judged as planned (a criterion was reworded): "
                     "write a new plan")
    rows = [["reviewer", "assigned", "done", "to do", "other reviews"]]
    rows += [[_shown(r.reviewer), str(r.assigned), str(r.done), str(r.assigned - r.done), str(r.other)]
             for r in status.reviewers]
    lines += [""] + (_table(rows, {1, 2, 3, 4}) if len(rows) > 1 else ["no reviewers yet"])
    rows = [["criterion", "items", "planned", "reviews assigned", "done", "≥1 review", "≥2 reviews (α)"]]
    rows += [[_shown(c.key), str(c.items), str(c.planned), str(c.assigned), str(c.done), str(c.reviewed),
              str(c.overlap)] for c in status.criteria]
    lines += [""] + _table(rows, {1, 2, 3, 4, 5, 6})
    return lines


@review_app.command("export")
def review_export(
    db: Optional[Path] = typer.Option(None, "--db", help="The results database (default build/results.db)."),
    format: FileFormat = typer.Option(FileFormat.csv, "--format", "-f",
                                      help="csv or jsonl (rows: verdicts.schema.json, `helmbench schema`)."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Write here (default: standard output)."),
) -> None:
    """Write every stored review (stale ones included) as CSV or JSONL, to pool with other machines.

    Examples:

        helmbench review export --out ana.csv

        helmbench review export --format jsonl > ana.jsonl
    """
    import sys

    from helmbench.cli import validate
    from helmbench.spec.discover import in_build
    from helmbench.store import open_readonly
    from helmbench.store.review_files import export_rows, write
    from helmbench.store.queries.reviews import all_reviews

    (db,) = in_build(db=db)
    validate.db_to_read(db)
    if out is not None:
        validate.output_file(out, "--out")
    conn = open_readonly(db)
    try:
        rows = export_rows(all_reviews(conn))
    finally:
        conn.close()
    if out is None:
        write(rows, format.value, sys.stdout)
    else:
        from helmbench import safewrite

        with safewrite.atomic(out, text=True, newline="") as f:  # never through a link at --out
            write(rows, format.value, f)
        typer.echo(f"{len(rows)} review(s) written to {out}", err=True)


@review_app.command("import")
def review_import(
    file: Path = typer.Argument(..., help="A .csv or .jsonl file written by `helmbench review export`."),
    db: Optional[Path] = typer.Option(None, "--db", help="The results database (default build/results.db)."),
) -> None:
    """Add the reviews of another machine's export; a file with any bad row imports nothing and names the lines.

    A review already here (same item, same reviewer) is replaced only by a newer one. Refused, with
    the line named: a reviewer name with control characters, a date in the future, an item that
    is no judged output of any manifest in the database. Names are matched ignoring whitespace
    and case ("ana " and "ANA" are "ana").

    Examples:

        helmbench review import ben.csv

        helmbench review import cleo.jsonl --db build/results.db
    """
    from helmbench.cli import validate
    from helmbench.spec.discover import in_build
    from helmbench.store import open_db
    from helmbench.store.review_files import read, review_rules
    from helmbench.store.reviews import import_reviews

    (db,) = in_build(db=db)
    validate.input_file(file, "FILE", what="review file")
    validate.db_to_read(db)  # reviews belong beside the results they judge: a mistyped --db must not start a new one
    validate.db_to_write(db)
    database = open_db(db)
    try:
        rows = read(file, *review_rules(database))  # the rules `helmbench merge` applies to an input's reviews
        added, other = import_reviews(database, rows)
    finally:
        database.conn.close()
    typer.echo(f"{len(rows)} review(s) read from {file}: {added} added, {other} already here (kept the newer)")
