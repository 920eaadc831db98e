"""The review page in real headless Chromium, served by uvicorn: blind, keyboard-driven, CSRF-guarded, escaping."""

from __future__ import annotations

import http.server
import sqlite3
import threading
from pathlib import Path

import httpx
import pytest

from helmbench.publish.review.app import ReviewApp
from helmbench.publish.review.serve import prepare, running
from helmbench.score.review_items import judged_items
from helmbench.store import open_db
from helmbench.store.reviews import save_review
from tests.publish.browser_helpers import recording_page
from tests.review.review_pipeline import JUDGE, MODELS, XSS, XSS_MODEL, rows

pytestmark = pytest.mark.browser


@pytest.fixture
def served(judged_db):
    prepared = prepare(judged_db["db"], size=8, seed=3)
    with running(prepared.app) as url:
        yield {**judged_db, "url": url, "app": prepared.app}


def _start(page, url: str, name: str) -> None:
    page.goto(url + "/")
    assert page.locator("text=Content note").count() == 1
    page.fill("#reviewer", name)
    with page.expect_navigation():
        page.keyboard.press("Enter")


def test_a_reviewer_completes_five_items_with_the_keyboard_blind(browser, served):
    db, url, app = served["db"], served["url"], served["app"]
    conn = sqlite3.connect(db)  # a recognisable justification on every judgement, to look for on the page
    with conn:
        conn.execute("UPDATE judgements SET justification = 'judge-reasoning-' || id")
    conn.close()
    justifications = [r[0] for r in rows(db, "SELECT justification FROM judgements")]
    other = open_db(db)  # another clinician has reviewed every item already
    for h in app.sample:
        it = app.items[h]
        save_review(other, {"item_hash": h, "reviewer": "Zed", "case_id": it.case_id, "scenario": it.scenario,
                            "criterion": "CR1", "criterion_text": it.criterion["text"], "judgment": "PARTIAL",
                            "note": "zed-private-note"})
    other.conn.close()
    chosen = {}
    with recording_page(browser, url) as page:
        _start(page, url, "Dr Ana Ruiz")
        for i in range(5):
            html = page.content()
            assert f"{i} of 8 reviewed" in html
            assert page.locator("text=Content note").count() == 1, "the content note is on every page"
            for secret in [*MODELS, JUDGE, *justifications, "zed-private-note", "Zed"]:
                assert secret not in html, f"the page shows {secret!r}"
            assert page.locator("input:checked").count() == 0, "no option is pre-selected"
            h = page.locator('input[name="item"]').get_attribute("value")
            assert h in app.sample
            key = "1" if i % 2 == 0 else "3"
            page.keyboard.press(key)
            page.keyboard.press("h")
            if i == 0:
                page.keyboard.press("n")
                page.keyboard.type("Missed the goodbye note")
                page.keyboard.press("Escape")
            chosen[h] = "PASS" if key == "1" else "FAIL"
            with page.expect_navigation():
                page.keyboard.press("Enter")
        assert "5 of 8 reviewed" in page.content()
        assert page.errors == [] and page.foreign == []
    stored = rows(db, "SELECT item_hash, reviewer, judgment_json, confidence, note FROM reviews WHERE reviewer != 'Zed'")
    assert {r[0]: r[2] for r in stored} == {h: f'"{v}"' for h, v in chosen.items()}
    assert {r[1] for r in stored} == {"Dr Ana Ruiz"} and {r[3] for r in stored} == {"high"}
    assert sorted(r[4] for r in stored if r[4]) == ["Missed the goodbye note"]


def test_the_sample_is_stratified_and_each_reviewer_has_an_order(judged):
    app = prepare(judged["db"], size=8, seed=3).app
    strata = {(app.items[h].scenario, next(iter(app.items[h].judges.values()))[1]) for h in app.sample}
    assert len(strata) == 4, "both scenarios, with passes and failures of each"
    assert app.sample == prepare(judged["db"], size=8, seed=3).app.sample, "the same seed, the same items"
    a, b = app.queue("ana").order, app.queue("ben").order
    assert sorted(a) == sorted(b) == sorted(app.sample) and a != b


def test_a_reply_with_markup_stays_text(browser, judged_db):
    db = open_db(judged_db["db"])
    _, items = judged_items(db)
    db.conn.close()
    shown = XSS.replace('"', '\\"')  # as it stands inside the reply's JSON
    sample = [h for h, i in items.items() if XSS_MODEL in i.models and shown in i.output][:2]
    assert sample
    with running(ReviewApp(judged_db["db"], items, sample)) as url, recording_page(browser, url) as page:
        _start(page, url, "Ben")
        assert shown in page.locator("#reply").inner_text()
        assert page.evaluate("window.__xss") is None
        assert page.locator("#reply script, #reply img").count() == 0
        csp = page.context.request.get(url + "/").headers["content-security-policy"]
        assert "script-src 'self'" in csp and "default-src 'none'" in csp


class _Attacker(http.server.BaseHTTPRequestHandler):
    target = ""
    item = ""

    def page(self) -> str:
        return (f'<form method="post" action="{self.target}/verdict"><input name="item" value="{self.item}">'
                '<input name="judgment" value="PASS"></form><script>document.forms[0].submit()</script>')

    def do_GET(self):  # noqa: N802
        body = self.page().encode()
        self.send_response(200)
        self.send_header("content-type", "text/html")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_a_cross_site_post_without_the_token_is_refused(browser, served):
    db, url, app = served["db"], served["url"], served["app"]
    context = browser.new_context()
    page = context.new_page()
    _start(page, url, "Cleo")  # a reviewer with a session: the cookies a forged post would ride on
    _Attacker.target, _Attacker.item = url, app.sample[0]
    evil = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Attacker)
    threading.Thread(target=evil.serve_forever, daemon=True).start()
    try:
        with page.expect_response(lambda r: r.url.endswith("/verdict")) as answer:
            page.goto(f"http://127.0.0.1:{evil.server_address[1]}/")
        assert answer.value.status == 403
    finally:
        evil.shutdown()
        context.close()
    assert rows(db, "SELECT count(*) FROM reviews")[0][0] == 0

    # the same post from a client holding both cookies but not echoing the token: refused too;
    # echoing it: accepted (so the refusal above is the token's doing)
    with httpx.Client(base_url=url, follow_redirects=False) as client:
        client.get("/")
        token = client.cookies["csrftoken"]
        client.post("/reviewer", data={"reviewer": "Dan", "csrftoken": token})
        form = {"item": app.sample[0], "judgment": "FAIL"}
        assert client.post("/verdict", data=form).status_code == 403
        assert rows(db, "SELECT count(*) FROM reviews")[0][0] == 0
        assert client.post("/verdict", data={**form, "csrftoken": token}).status_code == 303
    assert rows(db, "SELECT reviewer, judgment_json FROM reviews") == [("Dan", '"FAIL"')]


def test_another_host_name_and_bad_verdicts_are_refused(served):
    url, app, db = served["url"], served["app"], served["db"]
    with httpx.Client(base_url=url, follow_redirects=False) as client:
        assert client.get("/", headers={"host": "evil.example:80"}).status_code == 421
        client.get("/")
        token = client.cookies["csrftoken"]
        client.post("/reviewer", data={"reviewer": "Eve", "csrftoken": token})
        for bad in ({"item": app.sample[0], "judgment": "MAYBE"}, {"item": "sha256:" + "0" * 64, "judgment": "PASS"},
                    {"item": app.sample[0], "judgment": "PASS", "confidence": "total"},
                    {"item": app.sample[0]}):
            assert client.post("/verdict", data={**bad, "csrftoken": token}).status_code == 400, bad
        assert client.post("/verdict", content=b"x" * (70 << 10),
                           headers={"content-type": "application/x-www-form-urlencoded",
                                    "x-csrftoken": token}).status_code == 413
        chunked = client.post("/verdict", content=iter([b"item=x&", b"judgment=PASS"]),
                              headers={"content-type": "application/x-www-form-urlencoded", "x-csrftoken": token})
        assert chunked.status_code == 411, "a body without a length is refused before anyone reads it"
    assert rows(db, "SELECT count(*) FROM reviews")[0][0] == 0
    assert Path(db).exists()


def test_the_review_pages_pass_wcag_aa(browser, served):
    from axe_playwright_python.sync_playwright import Axe

    tags = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
    url = served["url"]
    axe = Axe()
    with recording_page(browser, url) as page:
        for step in ("name", "item"):
            if step == "item":
                _start(page, url, "Fay")
            else:
                page.goto(url + "/")
            found = axe.run(page, options={"runOnly": {"type": "tag", "values": tags}, "resultTypes": ["violations"]})
            bad = [f"{v['id']}: {v['help']} {v['nodes'][0]['target']}" for v in found.response["violations"]
                   if v["impact"] in ("serious", "critical")]
            assert bad == [], step


class _PortAttacker(_Attacker):
    """A page on another local port: reads the CSRF cookie (cookies are not separated by port) and
    posts a verdict and a new reviewer name with it, as the signed-in reviewer."""

    leaked = ""  # a token handed to the page as if it had leaked: the Origin check must still refuse

    def page(self) -> str:
        path = "/verdict" if self.path.startswith("/forge-verdict") else "/reviewer"
        fields = (f'<input name="item" value="{self.item}"><input name="judgment" value="FAIL">' if path == "/verdict"
                  else '<input name="reviewer" value="Mallory">')
        return (f'<form method="post" action="{self.target}{path}">{fields}'
                f'<input name="csrftoken" id="t" value="{self.leaked}"></form>'
                '<script>var m = document.cookie.match(/csrftoken=([^;]+)/);'
                'if (m) document.getElementById("t").value = m[1];'
                'document.forms[0].submit()</script>')


def test_a_page_on_another_local_port_cannot_forge_a_verdict_or_rename_the_reviewer(browser, served):
    db, url, app = served["db"], served["url"], served["app"]
    context = browser.new_context()
    page = context.new_page()
    _start(page, url, "Cleo")
    cookies = {c["name"]: c for c in context.cookies()}
    _PortAttacker.target, _PortAttacker.item = url, app.sample[0]
    evil = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _PortAttacker)
    threading.Thread(target=evil.serve_forever, daemon=True).start()
    evil_url = f"http://127.0.0.1:{evil.server_address[1]}"
    try:
        for leaked in ("", cookies["csrftoken"]["value"]):  # read from the cookie, or leaked some other way
            _PortAttacker.leaked = leaked
            for path in ("/verdict", "/reviewer"):
                with page.expect_response(lambda r: r.url == url + path) as answer:
                    page.goto(evil_url + "/forge" + path.replace("/", "-"))
                assert answer.value.status == 403, (path, leaked)
        page.goto(url + "/")
        assert "Cleo" in page.content() and "Mallory" not in page.content()
    finally:
        evil.shutdown()
        context.close()
    assert rows(db, "SELECT count(*) FROM reviews")[0][0] == 0
    assert cookies["csrftoken"]["httpOnly"], "no script can read the CSRF cookie"


def test_multipart_and_malformed_bodies_get_4xx_never_500(served):
    url = served["url"]
    with httpx.Client(base_url=url, follow_redirects=False) as client:
        client.get("/")
        token = client.cookies["csrftoken"]
        multipart = client.post("/verdict", data={"csrftoken": token, "item": "x"}, files={"f": ("a.txt", b"x" * 10)})
        assert multipart.status_code == 415, multipart.text
        for body, ctype in ((b"\xff\xfe%%%=&&", "application/x-www-form-urlencoded"),
                            (b"{}", "application/json"), (b"csrftoken=" + token.encode(), "text/plain")):
            r = client.post("/reviewer", content=body, headers={"content-type": ctype, "x-csrftoken": token})
            assert 400 <= r.status_code < 500, (body, ctype, r.status_code)
        assert client.get("/", headers={"host": f"localhost:{url.rsplit(':', 1)[1]}"}).status_code == 200
        assert client.get("/", headers={"host": "127.0.0.1:1"}).status_code == 421, "another port is another server"
        assert client.post("/verdict", data={"csrftoken": token}, headers={"origin": "http://127.0.0.1:1"}
                           ).status_code == 403
