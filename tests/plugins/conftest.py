"""The test plugin installed for real: `pip install --target` of tests/plugins/helmbench_regex into a
temporary folder, which commands see through PYTHONPATH (subprocesses) or sys.path (in-process).
HELMBench finds it only through its `helmbench` entry point; nothing imports it by name."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from plugin_trees import fresh_registry

REPO = Path(__file__).resolve().parents[2]
PLUGIN_SRC = Path(__file__).resolve().parent / "helmbench_regex"
if str(REPO) not in sys.path:  # `tests.fakes` must import however pytest was started
    sys.path.insert(0, str(REPO))


def pip_target(src: Path, target: Path) -> Path:
    """Install the package at `src` into `target` (offline, no build isolation), building from a copy so
    that the source folder gets no build/ or .egg-info."""
    copy = target.parent / f"{src.name}-src"
    shutil.copytree(src, copy)
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--no-index", "--target", str(target), str(copy)], check=True, capture_output=True, text=True)
    return target


@pytest.fixture(scope="session")
def regex_site(tmp_path_factory) -> Path:
    return pip_target(PLUGIN_SRC, tmp_path_factory.mktemp("plugin") / "site")


@pytest.fixture
def plugin_env(regex_site) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(regex_site), str(REPO)])
    env.pop("HELMBENCH_DISABLE_PLUGINS", None)
    return env


@pytest.fixture
def with_plugin(regex_site):
    """The regex plugin visible to this process for one test, and the registry reloaded around it."""
    undo = fresh_registry(regex_site)
    yield regex_site
    undo()
