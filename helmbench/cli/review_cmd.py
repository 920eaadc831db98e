"""`helmbench review` (serve / plan / packet / status / export / import): collecting clinicians' verdicts.

Each command is one call of `helmbench.api`'s review functions (`helmbench/api/review.py`) and the
rendering of what it returns (`review_render.py`); `helmbench agreement` is in agreement_cmd.py.
"""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from helmbench.cli.app import app
from helmbench.cli.review_render import shown, status_lines


#: The version of `review status --format json`: the `format` of review-status.schema.json (bump it with its schema).
STATUS_FORMAT = 1


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
                                         help="Review this many items, stratified by criterion and judge (or check) verdict (default: all)."),
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

    One judged item at a time: the exact messages the model was sent, its reply (or, for a
    criterion judged on a conversation, the whole conversation, the simulated user's messages
    marked), and the criterion's text and options (a checked criterion's rule in plain words).
    The model, the judge's or check's verdict and other reviewers' verdicts are hidden; the order
    is random per reviewer; the sample is stratified by criterion and judge (or check) verdict. Verdicts are stored in results.db, keyed by what the judge saw. With a review plan
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
    from helmbench import api
    from helmbench.cli import validate

    if packet is not None:
        validate.input_file(packet, "--packet", what="review packet")
        if verdicts is not None:
            validate.output_file(verdicts, "--verdicts", what="verdicts file")
        session = api.review_session(packet=packet, verdicts=verdicts)
        validate.output_file(session.app.verdicts.path, "--verdicts", what="verdicts file")
    else:
        db, manifest = api.in_build(db=db, manifest=manifest)
        validate.db_to_read(db), validate.input_file(manifest, "--manifest", what="manifest", optional=True)
        validate.db_to_write(db)
        session = api.review_session(db, manifest=manifest, sample=sample, seed=seed,
                                     plan=_plan(plan, db, required=False))
    for note in session.notes:
        typer.echo(note, err=True)
    sock = session.bind(host, port)
    shown = f"[{host}]" if ":" in host else host
    typer.echo(f"{session.described}: http://{shown}:{sock.getsockname()[1]}/  (Ctrl-C stops)", err=True)
    if not api.is_loopback(host):
        typer.echo(f"warning: listening on {host}, not loopback: anyone who can reach it sees the items "
                   "(it answers requests addressed to loopback, to the address it is bound to, and to the "
                   "names given with --allow-host)", err=True)
    session.serve(sock, allow_host)


def _plan(path: Path | None, db: Path, *, required: bool):
    """The review plan at `path` (default: review-plan.json beside the database), or None when there is none."""
    from helmbench import api
    from helmbench.cli import validate

    path = api.review_plan_path(db, path, required=required)
    if path is None:
        return None
    validate.input_file(path, "--plan", what="review plan",
                        hint="write one with `helmbench review plan --reviewer NAME --reviewer NAME …`")
    return api.read_review_plan(path)


@review_app.command("plan")
def review_plan(
    reviewer: list[str] = typer.Option(..., "--reviewer", "-r", help="A reviewer's name (repeat for each)."),
    sample: Optional[int] = typer.Option(None, "--sample", min=1,
                                         help="Plan this many items, stratified by criterion and judge (or check) verdict (default: all)."),
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
    Reviewers' loads differ by at most one item within each stratum (criterion × judge or check verdict).
    The plan is a file (review-plan.json beside results.db) that `helmbench review`, `review
    packet` and `review status` follow; the same seed and reviewers give the same plan.

    Examples:

        helmbench review plan --reviewer ana --reviewer ben --reviewer cleo --sample 60

        helmbench review packet --out-dir packets/
    """
    from helmbench import api
    from helmbench.cli import validate

    db, manifest = api.in_build(db=db, manifest=manifest)
    validate.db_to_read(db), validate.input_file(manifest, "--manifest", what="manifest", optional=True)
    out = out or db.parent / api.PLAN_FILE
    validate.output_file(out, "--out", what="review plan")
    made = api.review_plan(db, reviewer, manifest=manifest, sample=sample, seed=seed, per_item=per_item, out=out)
    typer.echo(f"review plan written to {out}: {len(made.sample)} item(s) of manifest {made.manifest_hash}, "
               f"{made.per_item} reviewer(s) each")
    for r in made.reviewers:
        typer.echo(f"  {shown(r)}: {len(made.assigned[r])} item(s)")


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
    from helmbench import api
    from helmbench.cli import validate

    (db,) = api.in_build(db=db)
    validate.db_to_read(db)
    followed = _plan(plan, db, required=True)
    validate.output_dir(out_dir or db.parent / api.PACKETS_DIR, "--out-dir")
    for p in api.review_packets(db, followed, reviewers=reviewer, out_dir=out_dir):
        note = f" ({p.gone} planned item(s) no longer judged as planned: re-plan to replace them)" if p.gone else ""
        typer.echo(f"{p.path}: {p.items} item(s) for {shown(p.reviewer)}{note}")


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
    from helmbench import api
    from helmbench.cli import validate

    db, manifest = api.in_build(db=db, manifest=manifest)
    validate.db_to_read(db), validate.input_file(manifest, "--manifest", what="manifest", optional=True)
    status = api.review_status(db, plan=_plan(plan, db, required=False), manifest=manifest)
    if format is StatusFormat.json:
        typer.echo(json.dumps({"format": STATUS_FORMAT, **status.to_dict()}, ensure_ascii=False, indent=2))
        return
    typer.echo("\n".join(status_lines(status)))


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
    from helmbench import api
    from helmbench.cli import validate

    (db,) = api.in_build(db=db)
    validate.db_to_read(db)
    if out is not None:
        validate.output_file(out, "--out")
    rows = api.review_export(db, out, format=format.value)  # to --out never through a link; else standard output
    if out is not None:
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
    from helmbench import api
    from helmbench.cli import validate

    (db,) = api.in_build(db=db)
    validate.input_file(file, "FILE", what="review file")
    validate.db_to_read(db)  # reviews belong beside the results they judge: a mistyped --db must not start a new one
    validate.db_to_write(db)
    done = api.review_import(db, file)
    typer.echo(f"{done.read} review(s) read from {file}: {done.added} added, {done.kept} already here (kept the newer)")
