"""No format that can run code (issue #36 §1): nothing in helmbench/ imports pickle, marshal or shelve
(nor their look-alikes), or configures a Jinja bytecode cache; nor do the suite and the benchmark scripts (a
file one test process leaves for another is data too: tests/shared.py shares build results as JSON). Read
statically, from the syntax trees."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "helmbench"

#: Modules whose loading runs code from the bytes it reads.
CODE_FORMATS = {"pickle", "_pickle", "cPickle", "marshal", "shelve", "dill", "cloudpickle", "joblib", "jsonpickle",
                "copyreg"}
#: Jinja's bytecode caches, and the option that turns one on.
BYTECODE = {"BytecodeCache", "FileSystemBytecodeCache", "MemcachedBytecodeCache", "bccache", "bytecode_cache"}


def _top(name: str | None) -> str:
    return (name or "").split(".")[0]


def findings(source: str, path: str = "<source>") -> list[tuple[int, str]]:
    """(line, what) of every import of a code format and every use of a bytecode cache in `source`."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source, path)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, f"import {a.name}") for a in node.names if _top(a.name) in CODE_FORMATS]
        elif isinstance(node, ast.ImportFrom):
            if _top(node.module) in CODE_FORMATS:
                found.append((node.lineno, f"from {node.module} import"))
            found += [(node.lineno, f"import {a.name}") for a in node.names
                      if a.name in BYTECODE or a.name in CODE_FORMATS]
            if node.module and any(part in BYTECODE for part in node.module.split(".")):
                found.append((node.lineno, f"from {node.module} import"))
        elif isinstance(node, ast.Attribute) and node.attr in BYTECODE:
            found.append((node.lineno, f".{node.attr}"))
        elif isinstance(node, ast.Name) and node.id in BYTECODE:
            found.append((node.lineno, node.id))
        elif isinstance(node, ast.keyword) and node.arg in BYTECODE:
            found.append((node.lineno, f"{node.arg}="))
        elif isinstance(node, ast.Call):  # importlib.import_module("pickle"), __import__("marshal")
            callee = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if callee in ("import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant) \
                    and _top(str(node.args[0].value)) in CODE_FORMATS:
                found.append((node.lineno, f"{callee}({node.args[0].value!r})"))
    return found


def _scan(folder: Path) -> dict[str, list[tuple[int, str]]]:
    bad = {}
    for path in sorted(folder.rglob("*.py")):
        hits = findings(path.read_text(encoding="utf-8"), str(path))
        if hits:
            bad[str(path.relative_to(REPO))] = hits
    return bad


def test_no_module_of_helmbench_imports_a_code_format_or_a_bytecode_cache():
    assert len(list(PACKAGE.rglob("*.py"))) > 100  # the scan sees the package
    assert _scan(PACKAGE) == {}


#: The suite's files that make a code format on purpose, and what for (the one load there is the control that shows
#: its own planted payload would run).
PLANTERS = {"tests/publish/test_publish_cache.py": "plants hostile pickles and Jinja bytecode the build must never run"}


def test_neither_the_suite_nor_the_benchmark_scripts_import_a_code_format():
    assert (REPO / "tests" / "shared.py").is_file() and (REPO / "benchmarks" / "suite_time.py").is_file()
    found = {**_scan(REPO / "tests"), **_scan(REPO / "benchmarks")}
    assert {path: hits for path, hits in found.items() if path not in PLANTERS} == {}
    assert set(PLANTERS) <= set(found)  # the scan sees what the planters import


def test_the_scan_finds_each_form():
    planted = """
import pickle
import marshal as m
from shelve import open as shelf
from jinja2 import FileSystemBytecodeCache
from jinja2.bccache import Bucket
import importlib
importlib.import_module("dill")
env = Environment(bytecode_cache=None)
env.bytecode_cache = object()
__import__("cloudpickle")
"""
    assert sorted({line for line, _ in findings(planted)}) == [2, 3, 4, 5, 6, 8, 9, 10, 11]
    assert findings("import json\nfrom markupsafe import Markup\nx = {'pickle': 1}\n") == []
