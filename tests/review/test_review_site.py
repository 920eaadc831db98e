"""The published site shows each judged criterion's calibration, or an "uncalibrated" badge; the methodology explains it."""

from __future__ import annotations

import re

import pytest

from helmbench.publish import PublishSettings, build_site
from tests.review.review_pipeline import PLAIN, SCENARIOS
from tests.review.test_review_report import _agree_on


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


@pytest.mark.slow
def test_judged_scenario_pages_show_the_badge_and_the_methodology_explains_it(judged_db, tmp_path):
    _agree_on(judged_db["db"], SCENARIOS[1])
    site = tmp_path / "site"
    build_site(PublishSettings(db=judged_db["db"], manifest=judged_db["manifest"], datasette_url="http://127.0.0.1:8001"),
               site_dir=site)
    for code in SCENARIOS:
        page = (site / "scenarios" / code / "index.html").read_text(encoding="utf-8")
        assert 'class="hb-badge hb-uncalibrated">uncalibrated' in page, code
        assert 'data-criterion="' + code + '/CR1"' in page
    reviewed = _text((site / "scenarios" / SCENARIOS[1] / "index.html").read_text(encoding="utf-8"))
    assert "12 / 12 reviewed" in reviewed and "calibrated when κ ≥ 0.6 with n ≥ 30" in reviewed
    plain = (site / "scenarios" / PLAIN / "index.html").read_text(encoding="utf-8")
    assert "hb-calibration" not in plain, "a scenario without a judge has no calibration to show"
    board = (site / "index.html").read_text(encoding="utf-8")
    assert board.count('class="hb-badge hb-uncalibrated"') == 2 and 'id="judge-calibration"' in board
    method = _text((site / "methodology" / "index.html").read_text(encoding="utf-8"))
    assert "Cohen's κ" in method and "--calibrated-only" in method and "a tie counting as a FAIL" in method
