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
             f"manifest {report.manifest_hash or '—'}",
             f"{'criterion':<24} {'n':>4} {'κ [95% CI]':<22} {'sensitivity FAIL':<24} {'specificity':<24} "
             f"{'α clinicians (items)':<21} {'split':>5} {'stale':>5}  status"]
    for c in [*report.criteria, report.overall]:
        kappa = "—" if c.kappa is None else f"{c.kappa.value:.2f}{_ci(c.kappa.ci)}"
        sens = f"{_fmt(c.sensitivity.value)}{_ci(c.sensitivity.interval)} ({c.sensitivity.k}/{c.sensitivity.n})"
        spec = f"{_fmt(c.specificity.value)}{_ci(c.specificity.interval)} ({c.specificity.k}/{c.specificity.n})"
        alpha = f"{_fmt(c.alpha)} ({c.n_alpha})"
        status = "calibrated" if c.calibrated else "uncalibrated"
        if c.judges > 1:
            status += f"; {c.judges} judges, α between them {_fmt(c.judge_alpha)}"
        lines.append(printable(f"{c.key:<24} {c.n:>4} {kappa:<22} {sens:<24} {spec:<24} {alpha:<21} "
                               f"{c.n_split:>5} {c.n_stale:>5}  {status}"))
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
    from helmbench.score.calibration import load_calibration
    from helmbench.store import open_readonly

    conn = open_readonly(db)
    try:
        return load_calibration(conn, _manifest_hash(conn, manifest))
    finally:
        conn.close()


def _manifest_hash(conn, manifest: Path | None) -> str | None:
    """The manifest's hash when its runs have judgements; None (the latest judged one) otherwise."""
    from helmbench.cli.report_data import manifest_hash_of
    from helmbench.store.reviews import manifest_has_runs

    wanted = manifest_hash_of(manifest)
    if wanted and manifest_has_runs(conn, wanted):
        return wanted
    return None
