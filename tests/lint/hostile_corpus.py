"""The hostile-tree corpus: input a stranger's pull request could use to stall, crash or read
outside the tree, each built on the valid base tree and answered by one expected finding.

Cases are built by code rather than stored, because some cannot live in a repository
(symlinks to files of the machine, 5 MB and 50 MB files). `benchmarks/lint_hostile.py` times
the same cases and checks, with an audit hook, that nothing outside the tree is opened.

Every case has `expected`: the exact set of `(path, line, code)` lint must report. A tree may
point at `OUTSIDE` (a folder beside the tree, made by `build`) holding a file whose text,
`SECRET`, must never show up in any output.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
BASE = HERE / "base"
S1 = "scenarios/P1/B1/S1--late-planning"
S2 = "scenarios/P1/B1/S2--judged"
SECRET = "SECRET-OUTSIDE-THE-TREE-7f3a"
OUTSIDE = "outside"  # sibling of the tree folder


@dataclass(frozen=True)
class Case:
    name: str
    about: str
    make: Callable[[Path], None]  # edits a fresh copy of the base tree
    expected: frozenset  # {(path, line, code)}
    large: bool = False  # writes tens of megabytes


def alias_bomb(levels: int = 9, indent: str = "") -> str:
    """A YAML mapping whose aliases expand to 9**levels values (387 M at 9 levels)."""
    names = [f"l{i}" for i in range(levels + 1)]
    lines = [f'{indent}{names[0]}: &{names[0]} ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for prev, cur in zip(names, names[1:]):
        lines.append(f"{indent}{cur}: &{cur} [" + ", ".join([f"*{prev}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _edit(root: Path, rel: str, old: str, new: str) -> None:
    path = root / rel
    text = path.read_text(encoding="utf-8")
    assert old in text, (rel, old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _big(root: Path, rel: str, size: int) -> None:
    """A real (not sparse) file of `size` bytes of plausible Markdown."""
    chunk = ("# C1\n---\ndifficulty: 1\n---\n## System instructions\n\n" + "word " * 180 + "\n\n").encode()
    with open(root / rel, "wb") as fh:
        for _ in range(size // len(chunk)):
            fh.write(chunk)
        fh.write(b"x" * (size % len(chunk)))


def _link(root: Path, rel: str, target: str) -> None:
    path = root / rel
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, path)


def _outside(root: Path) -> Path:
    """A folder beside the tree holding a readable file and a valid-looking scenario."""
    out = root.parent / OUTSIDE
    (out / "S3").mkdir(parents=True, exist_ok=True)
    (out / "secret.md").write_text(f"# {SECRET}\n---\ndifficulty: 1\n---\n## System instructions\n\n{SECRET}\n")
    shutil.copytree(BASE / S1, out / "S3", dirs_exist_ok=True)
    (out / "S3" / "S1.md").rename(out / "S3" / "S3.md")
    (out / "S3" / "S1.json").rename(out / "S3" / "S3.json")
    return out


def _schema(root: Path, patch: Callable[[dict], None]) -> None:
    path = root / S1 / "S1.json"
    doc = json.loads(path.read_text())
    patch(doc["json_schema"]["schema"])
    path.write_text(json.dumps(doc, indent=2) + "\n")


def _props(**named: dict) -> Callable[[dict], None]:
    """A patch adding required properties (in this order) to the schema."""
    def patch(s: dict) -> None:
        for name, schema in named.items():
            s["properties"][name] = schema
            s["required"].append(name)

    return patch


def _prop(**schema) -> Callable[[dict], None]:
    return _props(extra=schema)


# --- the cases ------------------------------------------------------------------------------

CASES: list[Case] = []


def case(name: str, about: str, expected, large: bool = False):
    def register(make):
        CASES.append(Case(name, about, make, frozenset(expected), large))
        return make

    return register


@case("alias-bomb-scenario", "a 9-level alias bomb in S1.md frontmatter", {(f"{S1}/S1.md", 6, "HB150")})
def _(root):
    _edit(root, f"{S1}/S1.md", "category: ASSISTANCE\n", "category: ASSISTANCE\n" + alias_bomb())


@case("alias-bomb-models", "an alias bomb under a model's `provider:` in models.yml",
      {("models.yml", 8, "HB150")})
def _(root):
    _write(root, "models.yml", "marking_model: openai/gpt-4.1-mini\nmodels:\n  - id: openai/gpt-4.1-mini\n"
           "    provider:\n" + alias_bomb(indent="      "))


@case("alias-bomb-benchmark", "an alias bomb in benchmark.yml", {("benchmark.yml", 6, "HB150")})
def _(root):
    _edit(root, "benchmark.yml", 'version: "1"\n', 'version: "1"\n' + alias_bomb())


@case("alias-bomb-scoring", "an alias bomb in scoring.yaml", {("scoring.yaml", 4, "HB150")})
def _(root):
    _write(root, "scoring.yaml", alias_bomb())


@case("alias-bomb-criterion", "an alias bomb in a criterion's frontmatter", {(f"{S2}/CR1.md", 6, "HB150")})
def _(root):
    _edit(root, f"{S2}/CR1.md", "options: [PASS, PARTIAL, FAIL]\n", "options: [PASS, PARTIAL, FAIL]\n" + alias_bomb())


@case("alias-recursive", "an alias inside the collection it names", {(f"{S1}/S1.md", 3, "HB150")})
def _(root):
    _edit(root, f"{S1}/S1.md", "category: ASSISTANCE\n", "category: ASSISTANCE\nloop: &a [*a]\n")


@case("deep-yaml", "330 nested YAML lists in a condition's frontmatter", {(f"{S1}/conditions.md", 5, "HB151")})
def _(root):
    _edit(root, f"{S1}/conditions.md", "difficulty: 2\n", "difficulty: 2\ndeep: " + "[" * 330 + "]" * 330 + "\n")


@case("deep-json", "1,000 nested JSON arrays in the response schema", {(f"{S1}/S1.json", 32, "HB151")})
def _(root):
    _schema(root, _prop(type="array", default="DEEP"))
    _edit(root, f"{S1}/S1.json", '"DEEP"', "[" * 1000 + "]" * 1000)


@case("deep-schema", "a response schema nested 240 levels", {(f"{S1}/S1.json", 150, "HB151")})
def _(root):
    node: dict = {"type": "string"}
    for _ in range(240):
        node = {"type": "array", "items": node}
    _schema(root, _prop(**node))


@case("large-5mb", "a 5 MB conditions.md", {(f"{S1}/conditions.md", 1, "HB152")}, large=True)
def _(root):
    _big(root, f"{S1}/conditions.md", 5_000_000)


@case("large-50mb", "a 50 MB perturbations.md", {(f"{S2}/perturbations.md", 1, "HB152")},
      large=True)
def _(root):
    _big(root, f"{S2}/perturbations.md", 50_000_000)


@case("large-yaml", "a 100 kB models.yml", {("models.yml", 1, "HB152")})
def _(root):
    _write(root, "models.yml", "marking_model: openai/gpt-4.1-mini\nmodels:\n"
           + "".join(f"  - id: vendor/model-{i}\n    temperature: 0.5\n" for i in range(2500)))


@case("many-values", "a YAML document of 6,000 values without any alias", {("scoring.yaml", 1, "HB152")})
def _(root):
    _write(root, "scoring.yaml", "weights: [" + ",".join(["1"] * 6_000) + "]\n")


@case("many-frontmatters", "70 kB of frontmatter spread over parts of one file",
      {(f"{S1}/conditions.md", 171, "HB152")})
def _(root):
    part = "---\ndifficulty: 2\n# " + "x" * 3_000 + "\n---\n## System instructions\n\nHi.\n"
    _write(root, f"{S1}/conditions.md", "".join(f"# C{i}\n{part}" for i in range(1, 25)))


@case("schema-many-objects", "a response schema of 600 properties (each costs ~1 ms to check)",
      {(f"{S1}/S1.json", 1, "HB152")})
def _(root):
    _schema(root, _props(**{f"p{i}": {"type": "string"} for i in range(600)}))


@case("json-escapes", "250 kB of an unterminated JSON string of escaped quotes (quadratic for a naive scan)",
      {(f"{S1}/S1.json", 1, "HB104")})
def _(root):
    _write(root, f"{S1}/S1.json", '"\\' * 125_000)


@case("caps-flood", "250 kB of distinct ALL-CAPS words against a 400-value enum (typo check is words x enum)",
      {(f"{S1}/S1.json", 1, "HB152")})
def _(root):
    def patch(s):
        s["properties"]["tags"]["items"]["enum"] += [f"TAG_{i:04d}" for i in range(400)]

    _schema(root, patch)
    words = (" ".join(f"WORD_{i}" for i in range(n * 10, n * 10 + 10)) for n in range(1_900))
    _write(root, f"{S1}/perturbations.md", "# PT1\n---\nseverity: 1\n---\n## User's input\n\n" + "\n".join(words) + "\n")


@case("markdown-lines", "a 3,000-line Markdown file of one-line list items (each block costs parse time)",
      {(f"{S1}/conditions.md", 2001, "HB152")})
def _(root):
    _write(root, f"{S1}/conditions.md", "# C1\n## System instructions\n" + "- x\n" * 3_000)


@case("symlink-readme-out", "a pillar README linked to a file outside the tree",
      {("scenarios/P1/README.md", 1, "HB153"), ("benchmark.yml", 1, "HB601")})
def _(root):
    (root / "benchmark.yml").unlink()
    _write(root, "scoring.yaml", "weights:\n  P1-B1: 3\n")
    _outside(root)
    _link(root, "scenarios/P1/README.md", f"../../../{OUTSIDE}/secret.md")


@case("symlink-component-out", "a condition file linked to a file outside the tree",
      {(f"{S2}/conditions/C1.md", 1, "HB153")})
def _(root):
    out = _outside(root)
    _link(root, f"{S2}/conditions/C1.md", str(out / "secret.md"))  # an absolute link


@case("symlink-scenario-out", "a scenario folder linked to a folder outside the tree",
      {("scenarios/P1/B1/S3", 1, "HB153")})
def _(root):
    _outside(root)
    _link(root, "scenarios/P1/B1/S3", f"../../../../{OUTSIDE}/S3")


@case("symlink-scenarios-out", "the scenarios/ folder itself linked outside the tree",
      {("scenarios", 1, "HB153"), ("scenarios", 1, "HB310")})
def _(root):
    _outside(root)
    _link(root, "scenarios", f"../{OUTSIDE}")


@case("symlink-loop", "two symlinks naming each other, and one naming itself",
      {(f"{S2}/CR1.md", 1, "HB153"), (f"{S2}/CR3.md", 1, "HB153"), (f"{S2}/CR4.md", 1, "HB153")})
def _(root):
    _link(root, f"{S2}/CR1.md", "CR3.md")
    _link(root, f"{S2}/CR3.md", "CR1.md")
    _link(root, f"{S2}/CR4.md", "CR4.md")


@case("symlink-inside", "a file link and a folder link that stay inside the tree are followed", set())
def _(root):
    _link(root, f"{S2}/perturbations.md", "../S1--late-planning/perturbations.md")
    shutil.move(root / f"{S2}/conditions", root / "shared-conditions")
    _link(root, f"{S2}/conditions", "../../../../shared-conditions")


@case("special-files", "a FIFO (a read would block forever) and a folder named like condition files",
      {(f"{S2}/conditions/C2.md", 1, "HB103"), (f"{S2}/conditions/C3.md", 1, "HB103")})
def _(root):
    (root / f"{S2}/conditions/C2.md").mkdir()
    os.mkfifo(root / f"{S2}/conditions/C3.md")


@case("ref-remote", "a `$ref` to a URL in the response schema", {(f"{S1}/S1.json", 31, "HB154")})
def _(root):
    _schema(root, _prop(**{"$ref": "http://127.0.0.1:9/schema.json"}))


@case("ref-absolute", "`$ref`s to an absolute path and a file:// URL", {(f"{S1}/S1.json", 31, "HB154"), (f"{S1}/S1.json", 34, "HB154")})
def _(root):
    _schema(root, _props(extra={"$ref": "/etc/passwd"}, other={"$ref": "file:///etc/passwd"}))


@case("ref-dangling", "a local `$ref` to nothing and an `$id` below the root",
      {(f"{S1}/S1.json", 31, "HB154"), (f"{S1}/S1.json", 34, "HB154")})
def _(root):
    _schema(root, _props(extra={"$ref": "#/$defs/missing"},
                         other={"$id": "https://example.com/other", "type": "string"}))


@case("bad-pattern", "a `pattern` and a `patternProperties` key that are not regular expressions",
      {(f"{S1}/S1.json", 32, "HB155"), (f"{S1}/S1.json", 37, "HB155")})
def _(root):
    _schema(root, _props(extra={"type": "string", "pattern": "([A-Z"},
                         other={"type": "object", "patternProperties": {"[z-a]": {"type": "string"}},
                                "additionalProperties": False}))


@case("redos-pattern", "a `pattern` that nests a repetition in a repetition (exponential backtracking on an answer)",
      {(f"{S1}/S1.json", 32, "HB155")})
def _(root):
    _schema(root, _props(extra={"type": "string", "pattern": "^(a+)+$"}))


@case("inf-weight", "`weight: .inf` in benchmark.yml", {("benchmark.yml", 9, "HB156")})
def _(root):
    _edit(root, "benchmark.yml", "weight: 3", "weight: .inf")


@case("nan-json", "`NaN` in the response schema", {(f"{S1}/S1.json", 32, "HB156")})
def _(root):
    _schema(root, _prop(type="number", maximum=12345))
    _edit(root, f"{S1}/S1.json", "12345", "NaN")


@case("huge-number", "a 5,000-digit integer in models.yml and 1e999 in the schema",
      {("models.yml", 4, "HB156"), (f"{S1}/S1.json", 32, "HB156")})
def _(root):
    _edit(root, "models.yml", "  - id: openai/gpt-4.1-mini\n",
          "  - id: openai/gpt-4.1-mini\n    max_tokens: " + "9" * 5000 + "\n")
    _schema(root, _prop(type="number", maximum=12345))
    _edit(root, f"{S1}/S1.json", "12345", "1e999")


@case("non-ascii-digit", "a scenario folder `S١` (Arabic-Indic digit one)",
      {("scenarios/P1/B1/S\u0661", 1, "HB313")})
def _(root):
    shutil.copytree(root / S1, root / "scenarios/P1/B1/S\u0661")


@case("bad-timestamp", "a YAML timestamp with month 13", {(f"{S1}/S1.md", 2, "HB101")})
def _(root):
    _edit(root, f"{S1}/S1.md", "category: ASSISTANCE\n", "category: ASSISTANCE\nreviewed: 2024-13-45\n")


FORGED_FOLDER = "S9\n::error file=x::forged\n::add-mask::pwned\x1b[2J"
EVIL_KEY = "\x1b]0;pwned\x07colour\u202e"


@case("control-characters", "a folder name with newlines and escapes, and a YAML key with an escape",
      {(f"scenarios/P1/B1/{FORGED_FOLDER}", 1, "HB313"), (f"{S1}/S1.md", 3, "HB201")})
def _(root):
    (root / "scenarios/P1/B1" / FORGED_FOLDER).mkdir()
    _edit(root, f"{S1}/S1.md", "category: ASSISTANCE\n", f'category: ASSISTANCE\n"{EVIL_KEY.encode("unicode_escape").decode()}": 1\n'
          .replace("\\x1b", "\\e").replace("\\x07", "\\a"))


# A character YAML does not allow (PyYAML's reader refuses it before parsing, comments included):
# each is an HB101 at the character, in every YAML the loader reads.
@case("yaml-bell-in-models-comment", "a BEL (0x07) inside a comment of models.yml", {("models.yml", 1, "HB101")})
def _(root):
    _edit(root, "models.yml", "marking_model: openai/gpt-4o-mini\n", "marking_model: openai/gpt-4o-mini # \x07 bell\n")


@case("yaml-escape-in-component", "`severity: 5 # \\x1b` in perturbations.md", {(f"{S1}/perturbations.md", 3, "HB101")})
def _(root):
    _edit(root, f"{S1}/perturbations.md", "severity: 5\n", "severity: 5 # \x1b\n")


@case("yaml-control-in-scenario", "a vertical tab (0x0B) in S1.md's frontmatter", {(f"{S1}/S1.md", 2, "HB101")})
def _(root):
    _edit(root, f"{S1}/S1.md", "category: ASSISTANCE\n", "category: ASSIS\x0bTANCE\n")


@case("yaml-control-in-benchmark", "a form feed (0x0C) and a DEL (0x7F) in benchmark.yml",
      {("benchmark.yml", 1, "HB101")})
def _(root):
    _edit(root, "benchmark.yml", "name: Tiny\n", "name: Ti\x0cny\x7f\n")


@case("yaml-control-in-scoring", "an escape (0x1B) in scoring.yaml", {("scoring.yaml", 2, "HB101")})
def _(root):
    _write(root, "scoring.yaml", "weights:\n  P1-B1: 3 # \x1b[2J\n")


def build(case: Case, top: Path) -> Path:
    """Materialise `case` at `top/tree` (and `top/outside` when it links there)."""
    root = top / "tree"
    shutil.copytree(BASE, root)
    case.make(root)
    return root


def by_name(name: str) -> Case:
    return next(c for c in CASES if c.name == name)
