"""Static SVG charts with matplotlib: scores with their intervals, nothing loaded at view time.

Why static SVG: the site must work offline and make no third-party request, so no charting
library runs in the browser. Text stays text (`svg.fonttype: none`, generic sans-serif
family), so the SVG references no font file and stays small; `svg.hashsalt` and a blank
date make the bytes reproducible. Figures are built with the object API (no pyplot), so
nothing global is touched and nothing opens a window.
"""

from __future__ import annotations

import io
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

RC = {
    "svg.fonttype": "none",
    "text.parse_math": False,  # labels are authored titles: "$5 … $" is text, never TeX (nor a parse error)
    "svg.hashsalt": "helmbench",
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Helvetica", "Arial"],
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.edgecolor": "#888888",
    "axes.titlesize": 10,
    "axes.titleweight": "bold",
}
INK = "#3f51b5"  # material's indigo: the theme's primary colour
SOFT = "#9fa8da"


@dataclass(frozen=True)
class Bar:
    """One row of a chart: a label, a value in [0, 1] (None: not scored) and its interval."""

    label: str
    value: float | None
    ci: tuple[float, float] | None = None
    note: str = ""  # right-hand annotation, e.g. "n=64"
    strong: bool = False  # a group row (a pillar among behaviours)


@lru_cache(maxsize=1)
def _mpl():
    """matplotlib, imported on first use (the main build process never draws when a worker does)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.backends.backend_svg import FigureCanvasSVG
    from matplotlib.figure import Figure

    return matplotlib, Figure, FigureCanvasSVG


def _svg(fig) -> bytes:
    buf = io.BytesIO()
    _mpl()[2](fig).print_svg(buf, metadata={"Date": None})
    return buf.getvalue()


def _wrap(label: str, width: int = 46) -> str:
    return "\n".join(textwrap.wrap(label, width, max_lines=2, placeholder="…")) or label


@dataclass(frozen=True)
class Panel:
    """One chart of a figure: bars top to bottom, a title, an x label; dots instead of bars."""

    bars: Sequence[Bar]
    title: str
    xlabel: str
    dots: bool = False


WIDTH = 7.2  # inches
TOP, BOTTOM, GAP = 0.42, 0.5, 0.15


def _labels(panel: Panel) -> list[str]:
    return [_wrap(b.label) for b in panel.bars]


def _height(panel: Panel) -> float:
    lines = sum(1 + label.count("\n") for label in _labels(panel))
    return 0.24 * max(lines, 1) + 0.1 * len(panel.bars)


def figure(panels: Sequence[Panel]) -> bytes:
    """An SVG of one or more stacked panels sharing the left margin (one figure: cheaper than two)."""
    matplotlib, Figure, _ = _mpl()
    with matplotlib.rc_context(RC):
        # Fixed margins in inches (constrained layout would double the rendering time).
        longest = max((len(part) for p in panels for label in _labels(p) for part in label.split("\n")), default=4)
        notes = max((len(part) for p in panels for b in p.bars for part in (b.note or "").split("\n")), default=0)
        # ~0.07 in per character of 9 pt bold on the left and of the 9 pt notes on the right (9 pt is 12 px,
        # the least a reader should have to read: the page shows the chart at its drawn size, never smaller),
        # so "ranks 1–2, group 1" is never cut off at the figure's edge.
        left, right = 0.3 + 0.07 * longest, max(1.1, 0.25 + 0.066 * notes)
        heights = [_height(p) for p in panels]
        total = sum(heights) + len(panels) * (TOP + BOTTOM) + GAP * (len(panels) - 1)
        fig = Figure(figsize=(WIDTH, total))
        y = total
        for panel, h in zip(panels, heights):
            y -= TOP
            ax = fig.add_axes((left / WIDTH, (y - h) / total, (WIDTH - left - right) / WIDTH, h / total))
            fig.text(0.01, (y + TOP - 0.12) / total, panel.title, ha="left", va="top", fontsize=10, fontweight="bold")
            _draw(ax, panel)
            y -= h + BOTTOM + GAP
        return _svg(fig)


def _draw(ax, panel: Panel) -> None:
    """Draw a panel with as few artists as possible (one collection of bars, one line of whiskers,
    labels as plain text rather than tick objects): drawing cost is per artist."""
    from matplotlib.collections import PatchCollection
    from matplotlib.patches import Rectangle

    bars = panel.bars
    ys = list(range(len(bars)))[::-1]
    scored = [(y, b) for y, b in zip(ys, bars) if b.value is not None]
    if panel.dots:
        ax.plot([b.value * 100 for _, b in scored], [y for y, _ in scored], "o", color=INK, markersize=6,
                zorder=3, linestyle="none")
    elif scored:
        rects = [Rectangle((0, y - 0.31), b.value * 100, 0.62) for y, b in scored]
        ax.add_collection(PatchCollection(rects, facecolors=[INK if b.strong else SOFT for _, b in scored],
                                          edgecolors="none", zorder=2), autolim=False)
    xs: list[float] = []
    yy: list[float] = []
    for y, b in zip(ys, bars):  # all whiskers as one line, broken by NaN
        if b.ci is not None:
            lo, hi = b.ci[0] * 100, b.ci[1] * 100
            xs += [lo, lo, lo, hi, hi, hi, float("nan")]
            yy += [y - 0.15, y + 0.15, y, y, y - 0.15, y + 0.15, float("nan")]
    if xs:
        ax.plot(xs, yy, color="#263238", linewidth=1.1, zorder=4)
    labels = _labels(panel)
    for y, b, label in zip(ys, bars, labels):
        ax.text(-1.5, y, label, va="center", ha="right", fontsize=9, fontweight="bold" if b.strong else "normal")
        text = "not scored" if b.value is None else f"{b.value * 100:.1f} %"
        if b.note:
            text += f"\n{b.note}"
        ax.text(101.5, y, text, va="center", ha="left", fontsize=9, color="#37474f", linespacing=1.1)
    ax.set_yticks([])
    ax.set_xlim(0, 100)
    ax.set_ylim(-0.7, len(bars) - 0.3)
    ax.set_xticks([0, 20, 40, 60, 80, 100], ["0 %", "20 %", "40 %", "60 %", "80 %", "100 %"])
    ax.grid(axis="x", color="#e0e0e0", linewidth=0.8, zorder=0)
    ax.set_xlabel(panel.xlabel)


def leaderboard_chart(rows: Sequence[Bar]) -> bytes:
    return figure([Panel(rows, "HELMBench score by model (95 % interval)", "severity-weighted score",
                         dots=True)])


def model_chart(scores: Sequence[Bar], severity: Sequence[Bar], model_name: str,
                detection: Sequence[Bar] = (), history: Sequence[Bar] = ()) -> bytes:
    """A model's charts in one SVG: score by pillar and behaviour; pass rate by base severity; then,
    when there is something to show, detection by severity level and the score at each run."""
    panels = [
        Panel(scores, f"{model_name}: score by pillar and behaviour (95 % interval)",
              "severity-weighted score"),
        Panel(severity, f"{model_name}: pass rate by base severity (95 % Wilson interval)", "pass rate"),
    ]
    if detection:
        panels.append(Panel(detection, f"{model_name}: detection by severity level (95 % Wilson interval)",
                            "pass rate on risk cases"))
    if history:
        panels.append(Panel(history, f"{model_name}: score at each run (95 % interval)", "score",
                            dots=True))
    return figure(panels)


# --- the charts of one build, as jobs a worker process can run -------------------------------


@dataclass(frozen=True)
class ModelChartJob:
    """Everything a model's two charts need; the score intervals by pillar and behaviour are
    computed here too (`score.score_interval`, the leaderboard's interval), and returned for the model page's tables."""

    name: str
    pillars: list[tuple[str, str, float | None, int]]  # code, label, score, n verdicts
    behaviours: list[tuple[str, str, str, float | None, int]]  # code, pillar, label, score, n verdicts
    severity: list[Bar]
    scored: list  # the model's ScoredResult rows
    path: str  # where the SVG goes
    bootstrap: int = 1000
    seed: int = 0
    detection: list[Bar] = field(default_factory=list)  # pass rate per base-severity level of risk cases
    history: list[Bar] = field(default_factory=list)  # the model's score at each run, oldest first


def _write(path: str, content: bytes) -> None:
    from helmbench import safewrite

    safewrite.write_bytes(path, content)  # into the build's fresh site folder, never through a link


def run_model_job(job: ModelChartJob) -> tuple[dict, dict]:
    """Render and write a model's charts; returns (pillar intervals, behaviour intervals)."""
    from helmbench.score import score_interval

    def ci(rows):
        return score_interval(rows) if job.bootstrap else None

    pillar_ci = {code: ci([r for r in job.scored if r.pillar == code]) for code, *_ in job.pillars}
    behaviour_ci = {code: ci([r for r in job.scored if r.behaviour == code]) for code, *_ in job.behaviours}
    bars: list[Bar] = []
    for code, label, score, n in job.pillars:
        bars.append(Bar(label, score, pillar_ci[code], f"n={n}", strong=True))
        bars += [Bar(blabel, bscore, behaviour_ci[bcode], f"n={bn}")
                 for bcode, pillar, blabel, bscore, bn in job.behaviours if pillar == code]
    _write(job.path, model_chart(bars, job.severity, job.name, job.detection, job.history))
    return pillar_ci, behaviour_ci


def run_leaderboard_job(bars: list[Bar], path: str) -> None:
    _write(path, leaderboard_chart(bars))


def ready() -> bool:
    """Submitted first, so that a worker imports matplotlib while the build reads data."""
    _mpl()
    return True
