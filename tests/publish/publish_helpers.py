"""Constants shared by the publishing tests and their fixtures."""

import functools
import json
import re
import shutil
import threading
from dataclasses import dataclass
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
XSS = '<script>window.__xss=1</script><img src=x onerror="window.__xss=2">'
XSS_MODEL = "anthropic/claude-sonnet-4"
FORMAT_MODEL = "google/gemini-2.5-flash"
ERROR_MODEL = "openai/gpt-4.1-mini"
MODELS = (ERROR_MODEL, XSS_MODEL, FORMAT_MODEL)
#: The public Datasette the shared site's raw-rows links point at (issue #39: never 127.0.0.1, dead for a visitor).
DATASETTE_URL = "https://datasette.helmbench.example"
#: `helmbench serve`'s address on this machine: a site built with it has no public Datasette.
LOCAL_DATASETTE_URL = "http://127.0.0.1:8001"

#: Goes into every authored title and name of the hostile tree: a tag that runs if written raw,
#: and the same tag as entities, which runs if some path unescapes before writing (striptags does).
#: The unbalanced `$…$` would stop the chart drawing if labels were read as mathtext.
TITLE_XSS = XSS + ' &lt;img src=x onerror="window.__xss=3"&gt; $x_{$'  # and a broken TeX formula for matplotlib
#: What must never appear in a built page, in any case (a written `<script>` or `<img onerror>`).
RAW_PAYLOADS = ("<script>window.__xss", "<img src=x onerror")



@dataclass(frozen=True)
class Pipeline:
    """What the publishing tests' pipelines made (conftest.py). Here, not in conftest.py, so that it has
    one importable name (tests.shared.build_once hands it to the other workers as JSON, naming its class)."""
    root: Path
    manifest: Path
    db: Path
    judged_case: str  # the sqe case given a (simulated) judgement


_TITLE_LINE = re.compile(r"^(\s*(?:-\s+)?)(title|name|version):[ \t]*(.+?)\s*$", re.M)
_DESCRIPTION = re.compile(r"^(\s*)(description|compliance):[ \t]*>-?\n(\s+)", re.M)


def hostile_tree(src: Path, dest: Path) -> Path:
    """A copy of the benchmark tree at `src` whose every title, name, version and description
    carries TITLE_XSS (the authored strings that reach pages by paths other than model output)."""
    shutil.copytree(src, dest)
    for path in dest.rglob("*"):
        if path.suffix not in (".yml", ".md") or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")

        def title(m: re.Match) -> str:
            value = m.group(3)
            if value[:1] in "\"'":
                value = value[1:-1]
            return f"{m.group(1)}{m.group(2)}: {json.dumps(value + ' ' + TITLE_XSS)}"

        text = _TITLE_LINE.sub(title, text)
        text = _DESCRIPTION.sub(lambda m: f"{m.group(0)}{TITLE_XSS} ", text)
        path.write_text(text, encoding="utf-8")
    return dest


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve(folder: Path):
    """Serve `folder` with http.server on 127.0.0.1 (random port): yields its URL once, then stops."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(folder)))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
