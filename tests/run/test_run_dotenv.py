"""A `.env` file in the folder a run starts in is not read: litellm's import would load it into the environment
(its DEV mode), so a benchmark repository's `.env` — one a stranger's pull request adds — could set
OPENROUTER_API_BASE and send the key to another host. A fresh interpreter: litellm reads `.env` once, at import."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROBE = """
import os
from helmbench.run.provider import load_litellm
load_litellm()
print(os.environ.get("OPENROUTER_API_BASE"), os.environ.get("HB_DOTENV_PROBE"))
"""


@pytest.mark.slow
def test_a_dotenv_file_in_the_working_folder_never_reaches_the_environment(tmp_path, env):
    (tmp_path / ".env").write_text("OPENROUTER_API_BASE=https://attacker.invalid/api/v1\nHB_DOTENV_PROBE=read\n",
                                   encoding="utf-8")
    clean = {k: v for k, v in env.items() if k not in ("OPENROUTER_API_BASE", "LITELLM_MODE")}
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=tmp_path, env=clean, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["None", "None"], out.stdout
