"""Does any hostile tree stall lint or make it read outside the tree?

A stranger's pull request is linted in CI, so every tree of the hostile corpus
(tests/lint/hostile_corpus.py: alias bombs, 5 MB and 50 MB files, deep YAML and JSON, a
240-level schema, symlinks out of the tree and loops, remote and absolute `$ref`s, non-finite
numbers, forged folder names) must be answered with findings in well under 2 s. Each is timed
in-process (lint and its text rendering) against a baseline measured in the same process:
linting the clean base tree the corpus is built from. The ratio says how much more than a
normal tree a hostile one costs.

While a tree is linted, an audit hook (`sys.addaudithook`) records every `open`,
`os.listdir` and `os.scandir` event; each path must lie inside the tree or the Python
installation (lazily imported modules). Anything else is printed and fails the script.

    python benchmarks/lint_hostile.py [--repeat N] [--only NAME]

Exit status 1 when a case is slower than 2 s, reads outside its tree, or differs from the
findings the corpus expects.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "lint"))

from hostile_corpus import BASE, CASES, SECRET, build  # noqa: E402

from helmbench.lint import lint_tree  # noqa: E402
from helmbench.cli.lint_render import text  # noqa: E402

TARGET_S = 2.0
_recording: list[str] | None = None


def _audit(event: str, args) -> None:
    if _recording is None or event not in ("open", "os.listdir", "os.scandir"):
        return
    path = args[0] if args else None
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if isinstance(path, str):
        _recording.append(path)


def _allowed_roots(tree: Path) -> list[str]:
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, *sysconfig.get_paths().values()}
    return [os.path.realpath(tree)] + sorted(os.path.realpath(r) for r in roots if r)


def lint_once(root: Path) -> tuple[float, list, str, list[str]]:
    """Lint and render `root`; returns seconds, findings, text and every path touched."""
    global _recording
    _recording = []
    start = time.perf_counter()
    try:
        _, diags = lint_tree(root)
        out = text(diags)
    finally:
        touched, _recording = _recording, None
    return time.perf_counter() - start, diags, out, touched


def outside(touched: list[str], allowed: list[str]) -> list[str]:
    bad = []
    for p in touched:
        real = os.path.realpath(p)  # what the OS really opened, symlinks followed
        if not any(real == a or real.startswith(a.rstrip("/") + "/") for a in allowed):
            bad.append(f"{p} -> {real}" if real != p else p)
    return sorted(set(bad))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", help="run only the case of this name")
    args = parser.parse_args(argv)
    sys.addaudithook(_audit)
    failed = False

    with tempfile.TemporaryDirectory() as tmp:
        base = shutil.copytree(BASE, Path(tmp) / "base" / "tree")
        lint_once(base)  # warm imports, so the baseline measures linting only
        baseline = statistics.median(lint_once(base)[0] for _ in range(max(args.repeat, 3)))
        print(f"baseline: lint of the clean base tree {baseline * 1000:.1f} ms (median)\n")
        print(f"{'case':<24} {'worst s':>8} {'x base':>8}  findings")
        rows = []
        for case in CASES:
            if args.only and case.name != args.only:
                continue
            top = Path(tmp) / case.name
            root = build(case, top)
            allowed = _allowed_roots(root)
            runs = [lint_once(root) for _ in range(args.repeat)]
            worst = max(r[0] for r in runs)
            _, diags, out, _ = runs[-1]
            got = {(d.path, d.line, d.code) for d in diags}
            problems = outside([p for r in runs for p in r[3]], allowed)
            if SECRET in out:
                problems.append("text from outside the tree reached the output")
            if got != case.expected:
                problems.append(f"findings differ from the corpus: {sorted(got ^ case.expected)}")
            if worst > TARGET_S:
                problems.append(f"slower than {TARGET_S} s")
            codes = ", ".join(sorted({d.code for d in diags})) or "(clean)"
            print(f"{case.name:<24} {worst:8.3f} {worst / baseline:8.1f}  {codes}")
            for p in problems:
                print(f"    FAIL: {p}")
            failed |= bool(problems)
            rows.append((worst, case.name))
            shutil.rmtree(top)  # the 50 MB case should not outlive its measurement
        if rows:
            worst, name = max(rows)
            print(f"\nslowest: {name} {worst:.3f} s = {worst / baseline:.1f}x the clean tree "
                  f"(target < {TARGET_S} s); every opened path inside its tree or the Python installation: "
                  f"{'no' if failed else 'yes'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
