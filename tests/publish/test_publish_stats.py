"""The built site says which differences are noise (issue 15): tie groups and their comparisons,
incomplete runs listed apart, safety floors beside a capped score, and per model the versions and
providers that answered, drift, the score history and detection by severity level."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

from helmbench.publish.slugs import slugify
from tests.score.stats_pipeline import GOOD, PART, SECOND_PROVIDER, TWIN_A, TWIN_B


def article(site: Path, url: str) -> str:
    text = (site / url / "index.html").read_text(encoding="utf-8")
    m = re.search(r'<article class="md-content__inner md-typeset">(.*?)</article>', text, re.S)
    assert m, "no article in page"
    return m.group(1)


def table(html: str, table_id: str) -> str:
    m = re.search(rf'<table [^>]*id="{table_id}".*?</table>', html, re.S)
    assert m, f"no table #{table_id}"
    return m.group(0)


def rows(html: str) -> dict[str, str]:
    """data-model → the <tr> of that model."""
    return {m.group(1): m.group(0) for m in re.finditer(r'<tr data-model="([^"]+)".*?</tr>', html, re.S)}


def text(html: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html)))


def test_tie_groups_for_twins_and_a_clearly_better_model(stats_site):
    board = rows(table(article(stats_site, ""), "leaderboard-table"))
    assert list(board) == [GOOD, TWIN_A, TWIN_B]  # ranked, best first
    assert 'data-group="1"' in board[GOOD]
    assert 'data-group="2"' in board[TWIN_A] and 'data-group="2"' in board[TWIN_B]
    assert "hb-tie-start" in board[TWIN_A] and "hb-tie-start" not in board[TWIN_B]  # the visual break
    assert re.search(r'<small class="hb-ci" title="95 % interval">\d+\.\d–\d+\.\d</small>', board[GOOD])  # no floors
    assert 'title="tie group 2">2</span>' in board[TWIN_B]


def test_the_comparisons_page_lists_every_adjacent_pair(stats_site):
    body = article(stats_site, "comparisons")
    pairs = re.findall(r'<tr data-pair="([^"]+)">(.*?)</tr>', body, re.S)
    assert [p for p, _ in pairs] == [f"{GOOD} {TWIN_A}", f"{TWIN_A} {TWIN_B}"]
    better, twins = (text(cells) for _, cells in pairs)
    assert "✓ yes" in better and "< 0.001" in better and "600" in better
    assert "✗ no" in twins and "0 / 0" in twins and "+0.0 pts" in twins
    assert "too few cases to compare (no case differs; at least 6 must)" in twins  # words, not a p-value
    assert "Holm" in text(body) and "McNemar" in text(body)
    assert 'href="../comparisons/"' in article(stats_site, "") or 'href="comparisons/"' in article(stats_site, "")


def test_an_incomplete_run_is_listed_apart(stats_site):
    body = article(stats_site, "")
    assert PART not in rows(table(body, "leaderboard-table"))
    apart = rows(table(body, "unranked-table"))
    assert list(apart) == [PART]
    assert "not ranked: coverage 11 %" in text(apart[PART]) and "64 / 600" in text(apart[PART])


def test_drift_is_flagged_on_the_leaderboard(stats_site):
    board = rows(table(article(stats_site, ""), "leaderboard-table"))
    assert f"⚠ provider changed: FakeProvider → {SECOND_PROVIDER}" in text(board[GOOD])
    assert "⚠" not in text(board[TWIN_A])


def test_the_model_page_shows_versions_providers_history_and_detection(stats_site):
    body = article(stats_site, f"models/{slugify(GOOD)}")
    history = re.findall(r"<tr[^>]*>(.*?)</tr>", table(body, "history-table"), re.S)[1:]
    assert len(history) == 2  # both runs of GOOD, oldest first
    first, latest = text(history[0]), text(history[1])
    assert "FakeProvider (600)" in first and f"{SECOND_PROVIDER} (600)" in latest and "(on the leaderboard)" in latest
    assert f"{GOOD} (600)" in first and re.search(r"\d+\.\d % \d+\.\d–\d+\.\d", first)  # score and its interval
    facts = text(re.search(r'<table class="hb hb-facts">.*?</table>', body, re.S).group(0))
    assert f"{GOOD} (600 answers); {SECOND_PROVIDER} (600)" in facts
    assert f"⚠ provider changed: FakeProvider → {SECOND_PROVIDER}" in facts
    chart_tables = text(body)
    assert "Score at each run" in chart_tables and "Detection by severity level" in chart_tables
    detection = text(table(body, "detection-table"))
    assert "base 4 · moderate (4–6)" in detection and "Risk cases" in detection
    assert "Not monotonic" in text(body) or "No level is clearly below a lower one" in text(body)
    assert (stats_site / "charts" / "models" / f"{slugify(GOOD)}.svg").stat().st_size > 0


def test_a_capped_score_shows_its_floor_on_the_site(site, pipeline):
    """The shipped benchmark declares floors; the published leaderboard shows each one that bites."""
    from helmbench.score.leaderboard import build_leaderboard

    board = build_leaderboard(pipeline.db, None, bootstrap=0)
    assert board.floors, "the shipped benchmark declares safety floors"
    capped = [r for r in board.rows if r.capped]
    assert capped, "with the fake's answers some model falls below a floor"
    body = article(site, "")
    html_rows = rows(body)
    from helmbench.publish.render import name_codes

    with open(pipeline.manifest, encoding="utf-8") as f:
        catalog = json.loads(f.readline())["catalog"]
    for r in capped:  # each floor named by its title, its code beside it
        assert f"{name_codes(r.floor_note, catalog)}; uncapped {100 * r.uncapped_score:.1f} %" in text(html_rows[r.model])
    methodology = text(article(site, "methodology"))
    assert "P1 Risk detection 70 % 40 %" in methodology and "P2-B2" in methodology


def test_the_methodology_page_shows_the_simulation_table(stats_site):
    from helmbench.score import simulation

    doc = simulation.load()
    body = article(stats_site, "methodology")
    sim = table(body, "simulation-table")
    assert len(re.findall(r"<tr>", sim)) == len(doc["results"]) + 1  # header + one row per configuration
    words = text(body)
    assert doc["command"] in words and "What a group means" in words and "too few cases to compare" in words
    assert "Why cases, not whole scenarios, are swapped" in words
