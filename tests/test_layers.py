"""The import rules of the package, checked over its source (an AST walk, no import runs).

Why a test: the pipeline is spec → lint → manifest → store → run → score → publish → cli, and
each stage may import only the stages before it, so a change in a later stage can never break
an earlier one and `lint`/`compile` stay light (no litellm, no SQLite, no mkdocs). Every
`import` counts, including the ones inside functions (a lazy import is still an arrow).

Where the top-level modules sit (LAYERS below, lowest first):
- `errors` (0): the user-facing error types, imported by every stage; it imports no stage. It
  may import `sqlite3`, only to recognise SQLite's exception classes in `explain` (it never
  opens a database): that one translation serves the CLI's catch-all guard as well as store.
- `safewrite` (0): the one safe way to write a file (no link followed, atomic, inside a root); every
  stage that writes (compile, generate, publish, the CLI) uses it, so it imports no stage.
- `terminal` (0): how text reaches a terminal or a log (control characters shown, not obeyed); it imports no stage.
- `lazy` (0): how a stage's `__init__` exports names loaded on first use (PEP 562); it imports no stage.
- `codes` (0): the catalogue of diagnostic codes (pure data), read by `diagnostics`.
- `plugins` (0): the hook specifications and the plugin manager, which every stage may ask for
  its extensions; it must not import a stage, not even by name: the built-in plugins are entry
  points of HELMBench's own distribution (pyproject.toml), found as a third party's are.
- `diagnostics` (1, with spec): the findings spec, lint, manifest and run emit.
- `__version__` (0): the version string, which `helmbench/__init__.py` defines before it imports
  anything, so every stage may read it (`from helmbench import __version__`).
- `generate` (6, after run): assisted authoring calls the generator model as a job kind on run's
  engine and caches in store, and writes spec files; no stage reads it (only the CLI calls it).
- `plugin_api` (6, after run): the public module a plugin imports everything from (hooks, types,
  verdicts, lint helpers), so it sits above every stage a plugin's parts come from.
- `crisis` (6, with plugin_api): the crisis-resource registry and its evaluator, a plugin built only
  on `plugin_api` (and spec's YAML reader); nothing imports it, HELMBench finds it by entry point.
- `api` (9, after publish): the public Python API calls every stage; the CLI is thin over it: a cli/ module
  imports only `api`, `terminal`, `errors`, `__version__` and cli's own modules (rule `cli-through-api`), so
  every command is one API call and the rendering of what it returns.
- `__init__` and `__main__` (11, after cli): the API's re-exports and `python -m helmbench` sit on top.
"""

from __future__ import annotations

import ast
import re
import shutil
import textwrap
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "helmbench"

#: Layer of each top-level module or package of helmbench (lower may not import higher).
LAYERS: dict[str, int] = {
    "errors": 0, "codes": 0, "plugins": 0, "__version__": 0, "safewrite": 0, "lazy": 0, "terminal": 0,
    "spec": 1, "diagnostics": 1,
    "lint": 2,
    "manifest": 3,
    "store": 4,
    "run": 5,
    "generate": 6, "plugin_api": 6, "crisis": 6,
    "score": 7,
    "publish": 8,
    "api": 9,
    "cli": 10,
    "__init__": 11, "__main__": 11,
}

#: Third-party (or stdlib) modules allowed only in some places: module → allowed helmbench prefixes.
CONFINED: dict[str, tuple[str, ...]] = {
    "sqlite3": ("helmbench.store", "helmbench.errors"),
    "sqlite_utils": ("helmbench.store",),
    "litellm": ("helmbench.run.provider",),
    "mkdocs": ("helmbench.publish",),
    "matplotlib": ("helmbench.publish",),
}

#: A string that is SQL (a statement, not prose about one): allowed only in store, the one door to the database.
SQL = re.compile(r"^\s*(SELECT\s.+\sFROM|INSERT\s+(OR\s+\w+\s+)?INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|"
                 r"CREATE\s+(TABLE|INDEX|VIEW)|WITH\s+\w+\s+AS\s*\(|PRAGMA\s)", re.S)

#: Stages that must never import litellm, even through a stage they may import (checked transitively).
NO_LITELLM = ("helmbench.lint", "helmbench.manifest", "helmbench.spec")


@dataclass(frozen=True)
class Violation:
    path: str
    line: int
    rule: str
    detail: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: [{self.rule}] {self.detail}"


def _module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 2:
        parts.pop()
    return ".".join(parts)


#: A module named in a string (`importlib.import_module("helmbench.run.x")`, an entry-point value
#: `"helmbench.lint.rules:f"`, a table of module paths): an arrow like an import, when it names a real module.
BY_NAME = re.compile(r"^(helmbench(?:\.[A-Za-z_][A-Za-z0-9_]*)+)(?::[A-Za-z_][\w.]*)?$")


def _is_module(name: str) -> bool:
    rel = Path(*name.split(".")[1:])
    return (PACKAGE / rel).with_suffix(".py").is_file() or (PACKAGE / rel / "__init__.py").is_file()


def _imports(path: Path, module: str) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in the file, relative ones resolved, and of every
    module it names in a string (loaded by name with importlib: still an arrow between layers)."""
    source = path.read_text(encoding="utf-8")
    key = (source, module, path.name == "__init__.py")
    if key not in _IMPORTS:
        _IMPORTS[key] = _imports_of(ast.parse(source, filename=str(path)), *key[1:])
    return list(_IMPORTS[key])


#: `_imports` by (file text, module, is a package's __init__): the tests below check copies of the package with
#: one file changed, so each unchanged file would be parsed and walked again to the same answer.
_IMPORTS: dict[tuple[str, str, bool], tuple[tuple[int, str], ...]] = {}


def _imports_of(tree: ast.Module, module: str, is_init: bool) -> tuple[tuple[int, str], ...]:
    package = module if is_init else module.rpartition(".")[0]
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and (m := BY_NAME.match(node.value)) \
                and _is_module(m.group(1)):
            out.append((node.lineno, m.group(1)))
        elif isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parent = ".".join(parts[: len(parts) - node.level + 1])
                base = f"{parent}.{base}" if base else parent
                if not node.module:  # `from . import x`: each name may be a module
                    out += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
                    continue
            if base == "helmbench":  # `from helmbench import x`: x is a stage, or the root's `__version__`
                out += [(node.lineno, f"helmbench.{alias.name}") for alias in node.names]
                continue
            out.append((node.lineno, base))  # and each name, which may be a submodule
            out += [(node.lineno, f"{base}.{alias.name}") for alias in node.names if alias.name != "*"]
    return tuple(out)


def _sql_strings(path: Path) -> list[int]:
    """Lines of the string literals in the file that are SQL statements."""
    source = path.read_text(encoding="utf-8")
    if source not in _SQL:  # cached by text, as _IMPORTS
        tree = ast.parse(source, filename=str(path))
        _SQL[source] = sorted({n.lineno for n in ast.walk(tree)
                               if isinstance(n, ast.Constant) and isinstance(n.value, str) and SQL.match(n.value)})
    return list(_SQL[source])


_SQL: dict[str, list[int]] = {}


def _layer_of(name: str) -> tuple[str, int] | None:
    parts = name.split(".")
    if parts[0] != "helmbench":
        return None
    top = parts[1] if len(parts) > 1 else "__init__"
    return top, LAYERS.get(top, -1)


def import_graph(root: Path) -> dict[str, tuple[Path, list[tuple[int, str]]]]:
    """module → (file, its imports) for every .py file under the package folder `root`."""
    return {_module_name(root, p): (p, _imports(p, _module_name(root, p))) for p in sorted(root.rglob("*.py"))}


def check(root: Path = PACKAGE) -> list[Violation]:
    """Every import that breaks a rule, naming the file, the line and the rule."""
    graph = import_graph(root)
    found: list[Violation] = []
    for module, (path, imports) in graph.items():
        rel = str(path.relative_to(root.parent))
        own = _layer_of(module)
        if own is not None and own[1] < 0:
            found.append(Violation(rel, 1, "layer-unknown",
                                   f"helmbench.{own[0]} has no place in the layer order (add it to LAYERS in "
                                   f"tests/test_layers.py, with why)"))
            continue
        if not module.startswith("helmbench.store"):
            found += [Violation(rel, line, "sql-outside-store", f"{module} spells SQL; put it in a named query in "
                                                                 f"helmbench/store/ (store is the only door to SQL)")
                      for line in _sql_strings(path)]
        for line, target in imports:
            top = target.split(".")[0]
            if top in CONFINED and not module.startswith(CONFINED[top]):
                found.append(Violation(rel, line, f"confined-{top}",
                                       f"{module} imports {target}; {top} may be imported only in "
                                       f"{', '.join(CONFINED[top])}"))
            theirs = _layer_of(target)
            if own is None or theirs is None or theirs[0] == own[0]:
                continue
            if theirs[1] > own[1]:
                found.append(Violation(rel, line, "layer-upward",
                                       f"{module} (layer {own[0]}) imports {target} (layer {theirs[0]}), "
                                       "which comes later in spec → lint → manifest → store → run → score → "
                                       "publish → cli"))
    found += _cli_through_api(graph, root)
    found += _litellm_reachable(graph, root)
    first: dict[tuple[str, int, str], Violation] = {}
    for v in found:  # one per import statement and rule: the module it names, not each imported name
        first.setdefault((v.path, v.line, v.rule), v)
    return list(first.values())


#: What a cli/ module may import of helmbench: the public API, the terminal and error helpers, the version, and
#: cli's own modules. Everything else (a stage) is reached through `helmbench.api` (#41 §1): every command is one
#: API call and its rendering, so a notebook can do what the command does without reaching into a stage.
CLI_MAY_IMPORT = ("api", "terminal", "errors", "cli", "__version__")


def _cli_through_api(graph, root: Path) -> list[Violation]:
    """A cli/ module importing a stage module (lazy imports count), reported at its line."""
    found = []
    for module, (path, imports) in graph.items():
        if not module.startswith("helmbench.cli"):
            continue
        rel = str(path.relative_to(root.parent))
        seen_lines: set[int] = set()
        for line, target in imports:  # the first name of a statement is its module: one violation per statement
            parts = target.split(".")
            if parts[0] != "helmbench" or line in seen_lines:
                continue
            if len(parts) == 1 or parts[1] in CLI_MAY_IMPORT:
                continue
            seen_lines.add(line)
            found.append(Violation(rel, line, "cli-through-api",
                                   f"{module} imports {target}; cli/ reaches the stages only through "
                                   "helmbench.api (add a function there that returns the data, render it here)"))
    return found


def _litellm_reachable(graph, root: Path) -> list[Violation]:
    """A lint/compile module from which litellm is reachable through helmbench's own imports
    (reported at the import that starts the path, with the whole path)."""
    found = []
    for start in sorted(m for m in graph if m.startswith(NO_LITELLM)):
        seen, queue = {start}, [(start, None, [start])]
        while queue:
            module, first_line, chain = queue.pop(0)
            hit = next(((line, t) for line, t in graph[module][1] if t.split(".")[0] == "litellm"), None)
            if hit is not None:
                found.append(Violation(str(graph[start][0].relative_to(root.parent)), first_line or hit[0],
                                       "no-litellm-in-lint",
                                       f"{start} reaches litellm: {' → '.join([*chain, hit[1]])}"))
                break
            for line, target in graph[module][1]:
                for candidate in (target, target.rpartition(".")[0]):
                    if candidate in graph and candidate not in seen:
                        seen.add(candidate)
                        queue.append((candidate, first_line or line, [*chain, candidate]))
    return found


def import_cycles(root: Path = PACKAGE) -> list[list[str]]:
    """Every cycle of imports between modules (each a strongly connected set, sorted), lazy imports and modules
    named by string included. A package's `__init__` is left out: it re-exports its modules' names (lazily,
    `helmbench/lazy.py`), so `from helmbench.store import queries` inside store is an arrow to the module that
    holds the name, not a dependency on the whole package."""
    graph = import_graph(root)
    facades = {m for m, (path, _) in graph.items() if path.name == "__init__.py"}
    edges = {m: sorted({t for _, t in imports if t in graph and t not in facades and t != m})
             for m, (_, imports) in graph.items() if m not in facades}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(start: str) -> None:  # Tarjan's algorithm, iterative (no recursion limit on a deep chain)
        work = [(start, iter(edges[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    work.append((target, iter(edges[target])))
                    break
                if target in stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    members = []
                    while True:
                        member = stack.pop()
                        members.append(member)
                        if member == node:
                            break
                    if len(members) > 1:
                        found.append(sorted(members))

    for module in sorted(edges):
        if module not in index:
            visit(module)
    return sorted(found)


def test_no_module_imports_itself_through_others():
    """An import cycle makes each module's meaning depend on import order and hides which one is the lower
    concept; the stage order above says nothing inside a stage, so this does."""
    cycles = import_cycles()
    assert not cycles, "import cycles (lazy imports count):\n" + "\n".join(" ↔ ".join(c) for c in cycles)


def test_a_planted_cycle_is_reported_lazy_import_included(tmp_path):
    root = _copy(tmp_path)
    _write(root, "score/zz_a.py", "from .zz_b import B\nA = 1\n")
    _write(root, "score/zz_b.py", "B = 2\n\ndef later():\n    from .zz_a import A\n    return A\n")
    assert ["helmbench.score.zz_a", "helmbench.score.zz_b"] in import_cycles(root)


def test_the_package_keeps_its_layers():
    violations = check()
    assert not violations, "import rules broken:\n" + "\n".join(map(str, violations))


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "helmbench"
    shutil.copytree(PACKAGE, root, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return root


def _write(root: Path, rel: str, source: str) -> None:
    (root / rel).write_text(textwrap.dedent(source), encoding="utf-8")


def test_an_import_running_back_up_is_reported_with_file_line_and_rule(tmp_path):
    root = _copy(tmp_path)
    _write(root, "lint/zz_bad.py", '''\
        """A deliberate bad import: lint reaching up into the store."""

        def f():
            from helmbench.store.db import open_db
            return open_db
        ''')
    [v] = [v for v in check(root) if v.path == "helmbench/lint/zz_bad.py"]
    assert (v.line, v.rule) == (4, "layer-upward")
    assert "helmbench.lint.zz_bad (layer lint) imports helmbench.store.db (layer store)" in str(v)
    assert str(v).startswith("helmbench/lint/zz_bad.py:4: [layer-upward]")


def test_a_relative_import_up_and_a_confined_library_are_reported(tmp_path):
    root = _copy(tmp_path)
    _write(root, "score/zz_bad.py", "import sqlite3\nfrom ..publish import site\n")
    found = {(v.line, v.rule) for v in check(root) if v.path == "helmbench/score/zz_bad.py"}
    assert found == {(1, "confined-sqlite3"), (2, "layer-upward")}


def test_sql_outside_store_is_reported(tmp_path):
    root = _copy(tmp_path)
    source = 'Q = "ok"\nROWS = """\n  SELECT id\n  FROM runs"""\nNOTE = "every SELECT is named"\n'
    _write(root, "publish/zz_bad.py", source)
    assert [(v.line, v.rule) for v in check(root) if v.path == "helmbench/publish/zz_bad.py"] == [
        (2, "sql-outside-store")]


def test_litellm_reached_from_lint_through_another_module_is_reported(tmp_path):
    root = _copy(tmp_path)
    _write(root, "spec/zz_helper.py", "import litellm\n")
    _write(root, "lint/zz_uses.py", "\n\nfrom helmbench.spec import zz_helper\n")
    rules = {(v.path, v.line, v.rule) for v in check(root)}
    assert ("helmbench/spec/zz_helper.py", 1, "confined-litellm") in rules
    assert ("helmbench/lint/zz_uses.py", 3, "no-litellm-in-lint") in rules


def test_a_new_top_level_module_needs_a_place_in_the_order(tmp_path):
    root = _copy(tmp_path)
    _write(root, "zz_new.py", "X = 1\n")
    assert [(v.path, v.rule) for v in check(root) if "zz_new" in v.path] == [("helmbench/zz_new.py", "layer-unknown")]


def test_a_module_loaded_by_name_is_an_arrow_too(tmp_path):
    """`plugins/` once loaded the built-in evaluators by module name, below every stage; a string naming a
    module of a later stage is reported like the import it stands for."""
    root = _copy(tmp_path)
    _write(root, "plugins/zz_bad.py", '''\
        import importlib

        BUILTIN = {"evaluators": "helmbench.run.evaluate.builtin"}
        RULES = importlib.import_module("helmbench.lint.rules")
        ENTRY = "helmbench.publish.site:Builder"
        LOGGER = "helmbench.run.answers"  # a logger's name, not a module: no arrow
        ''')
    found = sorted((v.line, v.rule, v.detail.split(" imports ")[1].split(" ")[0])
                   for v in check(root) if v.path == "helmbench/plugins/zz_bad.py")
    assert found == [(3, "layer-upward", "helmbench.run.evaluate.builtin"), (4, "layer-upward", "helmbench.lint.rules"),
                     (5, "layer-upward", "helmbench.publish.site")]


def test_a_cli_import_of_a_stage_is_reported_at_its_line(tmp_path):
    """Every command is one API call (#41 §1): a cli/ module reaching into a stage, even lazily, is a violation."""
    root = _copy(tmp_path)
    _write(root, "cli/zz_bad.py", '''\
        """A deliberate bad import: a command opening the database itself."""
        from helmbench.api import report
        from helmbench import terminal, errors, __version__


        def f():
            from helmbench.store import open_db
            return open_db
        ''')
    found = [(v.line, v.rule) for v in check(root) if v.path == "helmbench/cli/zz_bad.py"]
    assert found == [(7, "cli-through-api")]
    [v] = [v for v in check(root) if v.path == "helmbench/cli/zz_bad.py"]
    assert "imports helmbench.store;" in str(v)

