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


class AgreementFormat(str, Enum):
    text = "text"
    json = "json"


def _fmt(x: float | None, digits: int = 2) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def _ci(ci) -> str:
    return "" if not ci else f" [{ci[0]:.2f}, {ci[1]:.2f}]"


def agreement_lines(report) -> list[str]:
    """The text rendering: one line per criterion, then overall; authored codes made printable."""
    from helmbench.lint.render import printable

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
    format: AgreementFormat = typer.Option(AgreementFormat.text, "--format", "-f", help="text or json."),
) -> None:
    """How far the judge agrees with clinicians' blind reviews, per judged criterion and overall.

    n (items with a clinicians' consensus), Cohen's κ between the judge and that consensus,
    sensitivity and specificity for the failing verdicts (each with a 95 % interval),
    Krippendorff's α between clinicians where items have several reviewers, and whether the
    criterion counts as calibrated (benchmark.yml `calibration: {min_kappa, min_n}`). Reviews of
    an earlier wording of a criterion are stale: counted apart, never in the numbers.

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
        typer.echo(json.dumps(report.to_dict(), ensure_ascii=False, indent=2))
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
) -> None:
    """Serve the blind review page on http://127.0.0.1:8002 (Ctrl-C stops it).

    One judged item at a time: the exact messages the model was sent, its reply, and the
    criterion's text and options. The model, the judge's verdict and other reviewers' verdicts
    are hidden; the order is random per reviewer; the sample is stratified by scenario and judge
    verdict. Verdicts are stored in results.db, keyed by what the judge saw.

    Examples:

        helmbench review

        helmbench review --sample 60 --port 8010

        helmbench review export --format csv --out ana.csv

        helmbench review import ben.jsonl
    """
    if ctx.invoked_subcommand is not None:
        return
    from helmbench.cli import validate
    from helmbench.publish.review.app import LOOPBACK
    from helmbench.publish.review.serve import bind, prepare, serve
    from helmbench.spec.discover import in_build
    from helmbench.store import open_readonly

    db, manifest = in_build(db=db, manifest=manifest)
    validate.db_to_read(db), validate.input_file(manifest, "--manifest", what="manifest", optional=True)
    conn = open_readonly(db)
    try:
        wanted = _manifest_hash(conn, manifest)
    finally:
        conn.close()
    validate.db_to_write(db)
    prepared = prepare(db, wanted, size=sample, seed=seed, host=host)
    from helmbench.score.report import manifest_hash_of, shown_note

    note = shown_note(manifest, manifest_hash_of(manifest), prepared.manifest_hash)
    if note:
        typer.echo(f"note: {note}", err=True)
    sock = bind(host, port)
    shown = f"[{host}]" if ":" in host else host
    typer.echo(f"reviewing {len(prepared.app.sample)} of {len(prepared.app.items)} judged item(s) of manifest "
               f"{prepared.manifest_hash}: http://{shown}:{sock.getsockname()[1]}/  (Ctrl-C stops)", err=True)
    if host not in LOOPBACK:
        typer.echo(f"warning: listening on {host}, not loopback: anyone who can reach it sees the items", err=True)
    serve(prepared.app, sock)


@review_app.command("export")
def review_export(
    db: Optional[Path] = typer.Option(None, "--db", help="The results database (default build/results.db)."),
    format: FileFormat = typer.Option(FileFormat.csv, "--format", "-f", help="csv or jsonl."),
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
        tmp = out.with_name(out.name + ".tmp")
        out.parent.mkdir(parents=True, exist_ok=True)  # validated above as a folder that can be created
        with open(tmp, "w", encoding="utf-8", newline="") as f:
            write(rows, format.value, f)
        tmp.replace(out)
        typer.echo(f"{len(rows)} review(s) written to {out}", err=True)


@review_app.command("import")
def review_import(
    file: Path = typer.Argument(..., help="A .csv or .jsonl file written by `helmbench review export`."),
    db: Optional[Path] = typer.Option(None, "--db", help="The results database (default build/results.db)."),
) -> None:
    """Add the reviews of another machine's export; a file with any bad row imports nothing and names the lines.

    A review already here (same item, same reviewer) is replaced only by a newer one.

    Examples:

        helmbench review import ben.csv

        helmbench review import cleo.jsonl --db build/results.db
    """
    from helmbench.cli import validate
    from helmbench.score.review_items import judged_items
    from helmbench.spec.discover import in_build
    from helmbench.store import open_db
    from helmbench.store.review_files import read
    from helmbench.store.reviews import import_reviews

    (db,) = in_build(db=db)
    validate.input_file(file, "FILE", what="review file")
    validate.db_to_read(db)  # reviews belong beside the results they judge: a mistyped --db must not start a new one
    validate.db_to_write(db)
    database = open_db(db)
    try:
        _, items = judged_items(database)
        rows = read(file, {h: i.options for h, i in items.items()})
        added, other = import_reviews(database, rows)
    finally:
        database.conn.close()
    typer.echo(f"{len(rows)} review(s) read from {file}: {added} added, {other} already here (kept the newer)")
