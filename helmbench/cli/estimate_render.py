"""How an estimate of new calls reads: the table on a terminal, the money and token ranges, and the notes
(what the numbers are based on). Why in cli/: only the command line renders; `helmbench.api` returns the
`Estimate` (`run(dry_run=True)`, `costs`, `estimate_run`), this formats it (and the diff comment reuses it).
"""

from __future__ import annotations

from helmbench.api import Estimate, ModelEstimate, money  # noqa: F401  (money: generate_cmd prints it too)


def tokens_range(low: float, high: float | None) -> str:
    lo = f"{round(low):,}"
    if high is None:
        return f"{lo} – no limit"
    hi = f"{round(high):,}"
    return lo if lo == hi else f"{lo} – {hi}"


def cost_range(m: ModelEstimate) -> str:
    if m.price is None:
        return "no known price"
    lo, hi = money(m.cost_low), money(m.cost_high) if m.cost_high is not None else "no limit"
    return lo if lo == hi else f"{lo} – {hi}"


def render(est: Estimate, out) -> None:
    """The estimate as a table on a rich console (strings from models.yml shown literally)."""
    from rich.table import Table
    from rich.text import Text

    table = Table("model", "new calls", "est. output tokens", "price in / out per Mtok", "est. cost")
    for m in est.models:
        price = (f"${m.price.input_per_token * 1e6:g} / ${m.price.output_per_token * 1e6:g} ({m.price.source})"
                 if m.price else "unknown")
        table.add_row(Text(m.label), str(m.calls), tokens_range(m.output_low, m.output_high), price, cost_range(m))
    out.print(table)
    for line in est.to_dict()["notes"]:  # what the numbers are based on: data, in the JSON too
        out.print(Text(line))
