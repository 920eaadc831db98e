"""The review page as a plain ASGI application: one judged item at a time, blind, written back to results.db
(or, serving a packet on a clinician's own machine, to a verdicts file beside it).

Why no web framework: four routes, form posts and two static files; uvicorn (already installed
with Datasette) serves it and `asgi_csrf` (likewise) guards every write. Why not a Datasette
plugin: Datasette would serve the whole database beside the page, judge verdicts and model ids
included, which a blind review must not offer.

What the reviewer sees: the messages the model was sent, its reply verbatim, the criterion's
text and options. Never the model's id, the judge's verdict or reasoning, or other reviewers'
verdicts; no option is pre-selected. Everything authored or generated is escaped by Jinja's
autoescape; the Content-Security-Policy allows only this server's own script and style (no
inline script, nothing from another host), so even a missed escape could not run.

Where verdicts go is a store with `done_by` and `save`: `DbVerdicts` (results.db, the maintainer's machine) or
`FileVerdicts` (a packet's verdicts file, in the format `helmbench review import` reads). The
page, its checks and its guards are the same for both: a packet is served by this very app.

Security: the CSRF token (`asgi_csrf`: a signed, HttpOnly cookie that the form must echo) is
checked on every POST, including POSTs without cookies; around it, `publish.local_guard` answers
only requests addressed to this server (Host: loopback with its own port, or names allowed
explicitly), refuses writes from another origin (another local port included) and bounds the
body, for every mode the app serves.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import parse_qsl, quote, unquote

from jinja2 import Environment, FileSystemLoader, select_autoescape

from helmbench.errors import HelmbenchError
from helmbench.publish.review.queue import Queue
from helmbench.score.review_items import JudgedItem, current_keys
from helmbench.store.db import connect
from helmbench.store.queries.reviews import reviewed_by
from helmbench.store.reviews import CONFIDENCES, now, save_review

HERE = Path(__file__).parent
STATIC = {"/static/review.css": ("review.css", "text/css; charset=utf-8"),
          "/static/review.js": ("review.js", "text/javascript; charset=utf-8")}
COOKIE = "helmbench_reviewer"
MAX_BODY = 64 << 10
MAX_NOTE = 4000
MAX_NAME = 200
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
HEADERS = [(b"content-security-policy", CSP.encode()), (b"x-content-type-options", b"nosniff"),
           (b"referrer-policy", b"no-referrer"), (b"cache-control", b"no-store"), (b"x-frame-options", b"DENY"),
           (b"cross-origin-resource-policy", b"same-origin")]
WRITE_PATHS = {"/verdict", "/reviewer"}


@dataclass
class Response:
    status: int
    body: bytes = b""
    content_type: str = "text/html; charset=utf-8"
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)


def redirect(to: str = "/", headers: list[tuple[bytes, bytes]] | None = None) -> Response:
    return Response(303, headers=[(b"location", to.encode()), *(headers or [])])


class DbVerdicts:
    """Verdicts in results.db (each written in its own transaction, as it is given)."""

    def __init__(self, db_path: Path):
        self.db_path = Path(db_path)
        self.where = None  # nothing for the reviewer to send back: the verdicts are already where they count

    def done_by(self, reviewer: str) -> set[str]:
        conn = connect(self.db_path)
        try:
            return reviewed_by(conn, reviewer)
        finally:
            conn.conn.close()

    def save(self, review: dict) -> None:
        db = connect(self.db_path)
        try:
            save_review(db, review)
        finally:
            db.conn.close()


class FileVerdicts:
    """A packet's verdicts, kept in a JSONL file in `helmbench review import`'s format.

    Why the whole file is rewritten on each verdict (a temporary file in its folder, then a
    rename) rather than appended to: a crash or a full disk mid-write leaves the previous,
    complete file, never a torn last line that would make the import refuse the whole file."""

    def __init__(self, path: Path, rows: list[dict]):
        self.path = Path(path)
        self.where = self.path
        self.rows = {r["item_hash"]: r for r in rows}

    def done_by(self, reviewer: str) -> set[str]:
        return {h for h, r in self.rows.items() if r["reviewer"] == reviewer}

    def save(self, review: dict) -> None:
        import io

        from helmbench.store.review_files import FIELDS, write
        from helmbench.store.review_packets import write_text

        self.rows[review["item_hash"]] = {**{k: review.get(k) for k in FIELDS}, "created_at": now()}
        out = io.StringIO()
        write(list(self.rows.values()), "jsonl", out)
        write_text(self.path, out.getvalue())


class ReviewApp:
    """The application; `items` and `sample` are fixed for the server's lifetime.

    `verdicts`: where verdicts go (`DbVerdicts`, `FileVerdicts`, or the path of results.db). `reviewer`:
    the one reviewer of a packet (no name page then). `plan` (`score.review_plan.Plan`): a
    reviewer in it gets their planned items, anyone else the whole sample."""

    def __init__(self, verdicts, items: dict[str, JudgedItem], sample: list[str], *, seed: int = 0,
                 reviewer: str | None = None, plan=None):
        self.verdicts = verdicts if hasattr(verdicts, "save") else DbVerdicts(verdicts)
        self.items = items
        self.sample = sample
        self.in_sample = set(sample)
        self.seed = seed
        self.reviewer = reviewer
        self.plan = plan
        self.queues: dict[str, Queue] = {}
        self.env = Environment(loader=FileSystemLoader(str(HERE / "templates")),
                               autoescape=select_autoescape(default=True, default_for_string=True),
                               trim_blocks=True, lstrip_blocks=True)

    # --- ASGI ------------------------------------------------------------------------------
    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return
        response = await self.handle(scope, receive)
        await send({"type": "http.response.start", "status": response.status,
                    "headers": [(b"content-type", response.content_type.encode()),
                                (b"content-length", str(len(response.body)).encode()), *HEADERS, *response.headers]})
        await send({"type": "http.response.body", "body": response.body})

    async def handle(self, scope, receive) -> Response:
        headers = dict(scope.get("headers") or [])
        method, path = scope["method"], scope["path"]
        if path in STATIC and method in ("GET", "HEAD"):
            name, ctype = STATIC[path]
            return Response(200, (HERE / "static" / name).read_bytes(), ctype)
        if method == "POST" and path in WRITE_PATHS:
            form = await _form(receive, headers)
            if form is None:
                return self.page("error.html.j2", scope, status=413, message="The form was too large.")
            return self.reviewer_form(scope, form) if path == "/reviewer" else self.verdict(scope, form)
        if method in ("GET", "HEAD") and path == "/":
            reviewer = self.reviewer_of(headers)
            if self.reviewer is None and (reviewer is None or scope.get("query_string") == b"change"):
                return self.page("name.html.j2", scope, reviewer=reviewer)
            return self.item_page(scope, reviewer)
        return self.page("error.html.j2", scope, status=404 if method in ("GET", "HEAD") else 405,
                         message="Nothing here.")

    # --- pages -----------------------------------------------------------------------------
    def page(self, template: str, scope, *, status: int = 200, **context) -> Response:
        token = scope["csrftoken"]() if "csrftoken" in scope else ""
        html = self.env.get_template(template).render(csrftoken=token, packet=self.reviewer is not None,
                                                      verdicts_file=self.verdicts.where, **context)
        return Response(status, html.encode("utf-8"))

    def reviewer_of(self, headers: dict) -> str | None:
        """The packet's reviewer, or the name in the cookie."""
        return self.reviewer if self.reviewer is not None else _reviewer(headers)

    def queue(self, reviewer: str) -> Queue:
        q = self.queues.get(reviewer)
        if q is None:
            if self.reviewer is not None:  # a packet: its items, in the order the plan gave them
                q = Queue(reviewer, list(self.sample))
            else:
                planned = self.plan.of(reviewer) if self.plan is not None else None
                q = Queue(reviewer, [h for h in planned if h in self.in_sample]) if planned is not None else \
                    Queue.for_reviewer(self.sample, reviewer, self.seed)
            self.queues[reviewer] = q
        return q

    def done_by(self, reviewer: str) -> set[str]:
        return current_keys(self.verdicts.done_by(reviewer), self.items) & self.in_sample

    def item_page(self, scope, reviewer: str, *, status: int = 200, message: str | None = None) -> Response:
        queue = self.queue(reviewer)
        done = self.done_by(reviewer)
        finished, total = queue.progress(done)
        h = queue.next(done)
        if h is None:
            return self.page("done.html.j2", scope, status=status, reviewer=reviewer, finished=finished, total=total)
        item = self.items[h]
        return self.page("item.html.j2", scope, status=status, reviewer=reviewer, finished=finished, total=total,
                         item=item, messages=[_message(m) for m in item.messages], confidences=CONFIDENCES,
                         message=message)

    # --- writes ----------------------------------------------------------------------------
    def reviewer_form(self, scope, form: list[tuple[str, str]]) -> Response:
        if self.reviewer is not None:  # a packet names its reviewer
            return redirect("/")
        name = " ".join(_one(form, "reviewer").split())
        if not name or len(name) > MAX_NAME or not name.isprintable():
            return self.page("name.html.j2", scope, status=400, reviewer=None,
                             message=f"Enter your name (1 to {MAX_NAME} printable characters).")
        cookie = f"{COOKIE}={quote(name, safe='')}; Path=/; HttpOnly; SameSite=Strict"
        return redirect("/", [(b"set-cookie", cookie.encode("latin-1"))])

    def verdict(self, scope, form: list[tuple[str, str]]) -> Response:
        reviewer = self.reviewer_of(dict(scope.get("headers") or []))
        if reviewer is None:
            return redirect("/")
        h = _one(form, "item")
        item = self.items.get(h) if h in self.in_sample else None
        if item is None:
            return self.item_page(scope, reviewer, status=400, message="That item is not in the review sample.")
        chosen = [v for k, v in form if k == "judgment"]
        if any(v not in item.options for v in chosen) or (not item.multi and len(chosen) != 1):
            return self.item_page(scope, reviewer, status=400,
                                  message="Choose one of the criterion's options." if not item.multi else
                                  "Choose only among the criterion's options.")
        confidence = _one(form, "confidence") or None
        note = _one(form, "note").strip() or None
        if confidence not in (None, *CONFIDENCES) or (note and len(note) > MAX_NOTE):
            return self.item_page(scope, reviewer, status=400,
                                  message=f"Confidence is low, medium or high; a note is at most {MAX_NOTE} characters.")
        try:
            self.verdicts.save({"item_hash": item.hash, "reviewer": reviewer, "case_id": item.case_id,
                                "scenario": item.scenario, "criterion": item.criterion["code"],
                                "criterion_text": item.criterion["text"],
                                "judgment": chosen if item.multi else chosen[0], "confidence": confidence, "note": note})
        except (HelmbenchError, OSError) as exc:  # a link planted at the verdicts file, a full disk: said, not a traceback
            return self.page("error.html.j2", scope, status=500,
                             message=f"Your verdict could not be saved: {getattr(exc, 'message', None) or exc}")
        return redirect("/")


def _reviewer(headers: dict) -> str | None:
    raw = headers.get(b"cookie", b"").decode("latin-1")
    cookie = SimpleCookie()
    try:
        cookie.load(raw)
    except Exception:  # noqa: BLE001 - a malformed Cookie header is no reviewer
        return None
    morsel = cookie.get(COOKIE)
    name = unquote(morsel.value) if morsel else ""
    return name if name and len(name) <= MAX_NAME and name.isprintable() else None


def _one(form: list[tuple[str, str]], key: str) -> str:
    return next((v for k, v in form if k == key), "")


def _message(m: dict) -> dict:
    content = m.get("content")
    return {"role": str(m.get("role") or "user"), "content": content if isinstance(content, str) else str(content)}


async def _form(receive, headers: dict) -> list[tuple[str, str]] | None:
    """The url-encoded form of a POST, or None when it is larger than MAX_BODY."""
    body = b""
    more = True
    while more:
        event = await receive()
        body += event.get("body", b"")
        more = event.get("more_body", False)
        if len(body) > MAX_BODY:
            return None
    if headers.get(b"content-type", b"").split(b";")[0].strip() != b"application/x-www-form-urlencoded":
        return []
    return parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True)


def with_csrf(app: ReviewApp, hosts: frozenset[str], secret: str | None = None):
    """The app behind asgi_csrf (every POST to a write path needs the token, cookie or not), behind
    the local guard (who may ask; writes from this origin only, bounded url-encoded bodies; the
    CSRF cookie HttpOnly). `hosts`: `local_guard.allowed_hosts(...)` for the bound socket."""
    from asgi_csrf import asgi_csrf

    from helmbench.publish.local_guard import guard

    guarded = asgi_csrf(app, signing_secret=secret or secrets.token_hex(32), always_protect=WRITE_PATHS,
                        cookie_samesite="Strict")
    return guard(guarded, hosts, max_body=MAX_BODY, cookie_httponly=(b"csrftoken",))
