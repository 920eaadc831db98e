"""The package's bytecode, compiled before a benchmark starts its processes.

pip writes bytecode when it installs a wheel, so a user's `helmbench` loads compiled modules. An
editable checkout has none, and where PYTHONDONTWRITEBYTECODE is set (this machine's image sets it)
every fresh interpreter would compile each helmbench module it imports, inside the timed part, while
the baseline's libraries (litellm, mkdocs) are compiled already. `make bytecode` does the same, into the same
place: .venv/pycache (PYTHONPYCACHEPREFIX, set here for this process and the ones it starts), never beside the
sources.
"""

from __future__ import annotations

import compileall
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PREFIX = REPO / ".venv" / "pycache"


def compile_package() -> None:
    os.environ["PYTHONPYCACHEPREFIX"] = str(PREFIX)  # the benchmark's processes read it from there
    sys.pycache_prefix = str(PREFIX)
    if not compileall.compile_dir(str(REPO / "helmbench"), quiet=1, workers=0):
        raise SystemExit("compileall failed on helmbench/")
