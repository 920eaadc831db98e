"""Lazy package exports (helmbench/lazy.py): what a warm site build imports, and the one trap."""

from __future__ import annotations

import subprocess
import sys

import pytest

from helmbench import lazy


def test_a_name_is_loaded_on_first_use_and_kept():
    import helmbench.spec as spec

    loaded = spec.load_benchmark
    from helmbench.spec.loader import load_benchmark

    assert loaded is load_benchmark and vars(spec)["load_benchmark"] is load_benchmark
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        spec.nothing  # noqa: B018


def test_a_name_its_module_is_also_called_is_refused():
    # importing helmbench.manifest.canonical would set the package's `canonical` to the module
    with pytest.raises(ValueError, match="canonical"):
        lazy.exports("helmbench.manifest", {"canonical": "helmbench.manifest.canonical"})


def test_the_site_hooks_and_its_cached_data_classes_import_no_heavy_stage():
    """What a warm `helmbench publish` imports before mkdocs renders: the hooks module and every
    module a cached SiteData is decoded into. None of them needs Pydantic (the spec models, the
    plugin types), sqlite_utils (and the pandas it loads), jsonschema or litellm; each was pulled
    in by an eager `__init__` or a top-level import once, costing a warm build ~0.8 s."""
    code = (
        "import sys\n"
        "import helmbench.publish.hooks, helmbench.publish.data, helmbench.publish.settings\n"
        "import helmbench.score.board, helmbench.score.breakdown, helmbench.score.calibration\n"
        "import helmbench.score.detection, helmbench.score.drift, helmbench.score.floors, helmbench.score.judges\n"
        "import helmbench.score.model, helmbench.score.stability, helmbench.score.summary, helmbench.store.queries.runs\n"
        "from helmbench.publish.cache import site_code_digest\n"
        "site_code_digest()\n"
        "print(' '.join(m for m in ('pydantic', 'sqlite_utils', 'pandas', 'jsonschema', 'litellm', 'pluggy', 'markdown_it')"
        " if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == ""
