"""`helmbench agreement`: how far the judge agrees with clinicians (one call of `helmbench.api.agreement`).

Why apart from `helmbench review`: review collects verdicts; agreement reads the numbers computed from them.
"""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from helmbench.cli.app import app


#: The version of `agreement --format json`: the `format` of agreement.schema.json (bump it with its schema).
AGREEMENT_FORMAT = 1


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
        if c.checked:
            status += "; κ against the check"
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
    from helmbench import api
    from helmbench.cli import validate

    db, manifest = api.in_build(db=db, manifest=manifest)
    validate.db_to_read(db), validate.input_file(manifest, "--manifest", what="manifest", optional=True)
    report = api.agreement(db, manifest)
    if format is AgreementFormat.json:
        typer.echo(json.dumps({"format": AGREEMENT_FORMAT, **report.to_dict()}, ensure_ascii=False, indent=2))
        return
    typer.echo("\n".join(agreement_lines(report)))
