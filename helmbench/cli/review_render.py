"""The text rendering of `helmbench review status` (and the names shown in review's messages).

Why apart from the commands: what the status looks like on a terminal is one concept, which command asks for
it another; every authored or typed name passes `printable` before it reaches the terminal.
"""

from __future__ import annotations


def shown(text: str) -> str:
    """A reviewer's or criterion's name as a terminal shows it (control characters shown, not obeyed)."""
    from helmbench.terminal import printable

    return printable(text)


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
    rows += [[shown(r.reviewer), str(r.assigned), str(r.done), str(r.assigned - r.done), str(r.other)]
             for r in status.reviewers]
    lines += [""] + (_table(rows, {1, 2, 3, 4}) if len(rows) > 1 else ["no reviewers yet"])
    rows = [["criterion", "items", "planned", "reviews assigned", "done", "≥1 review", "≥2 reviews (α)"]]
    rows += [[shown(c.key), str(c.items), str(c.planned), str(c.assigned), str(c.done), str(c.reviewed),
              str(c.overlap)] for c in status.criteria]
    lines += [""] + _table(rows, {1, 2, 3, 4, 5, 6})
    return lines
