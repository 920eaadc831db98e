"""`python -m helmbench.publish.build_child`: one site build with the repository's code allowed, in its own process.

Why a process: `helmbench publish --allow-site-code` runs hooks and plugins a pull request can change.
The parent (`build_site`) starts this one with an environment that holds no credentials, so neither
`os.environ` nor `/proc/self/environ` here has one. The request comes as JSON on stdin; stdout carries
only the outcome (`{"error": …}` on failure, as the last line), since hooks may print.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def main() -> int:
    outcome = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # whatever the build prints goes to stderr
    sys.stdout = sys.stderr
    request = json.loads(sys.stdin.read())
    from helmbench.errors import HelmbenchError
    from helmbench.publish import log_to_stderr, run_mkdocs

    if request.get("log_level") is not None:
        log_to_stderr(int(request["log_level"]))
    optional = {k: Path(request[k]) if request.get(k) else None for k in ("config", "project")}
    try:
        run_mkdocs(optional["config"], optional["project"], Path(request["work"]), Path(request["site_dir"]),
                   bool(request["strict"]), allow_code=True)
    except HelmbenchError as exc:
        outcome.write(json.dumps({"error": exc.message}) + "\n")
        outcome.flush()
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
