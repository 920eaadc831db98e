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

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def regex_site(tmp_path_factory) -> Path:
    src = page_package(tmp_path_factory.mktemp("plugin-src") / "helmbench-regex")
    return pip_target(src, tmp_path_factory.mktemp("plugin") / "site")


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
