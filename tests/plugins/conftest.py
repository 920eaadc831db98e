"""The test plugin installed for real, as an outside author would have it: the code blocks of the published
plugin page (helmbench/publish/site_default/plugins.md) written into a package folder outside the
repository, and `pip install --target` of it into a temporary folder, which commands see through
PYTHONPATH (subprocesses) or sys.path (in-process). HELMBench finds it only through its `helmbench`
entry point; nothing imports it by name. So the page's code (imports included) is what the suite runs."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from plugin_trees import fresh_registry, page_package, pip_target
from tests.shared import build_once

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def regex_site(tmp_path_factory) -> Path:
    """The plugin's `pip install --target` folder, installed once per session (read-only)."""
    return build_once(tmp_path_factory, "plugin-regex",
                      lambda root: pip_target(page_package(root / "src" / "helmbench-regex"), root / "site"))


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
