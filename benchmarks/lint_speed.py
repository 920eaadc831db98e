"""How fast is `helmbench lint`, and how does it compare with just reading the tree?

Lint runs in pre-commit and on every pull request, so it has to feel instant (target: the
whole `helmbench lint benchmark` command under 1 s). The baseline, reading and hashing
every file of the tree in the same process, is the floor no linter can beat; the ratio
says how much the parsing and the rules cost on top of I/O.

    python benchmarks/lint_speed.py [ROOT] [--repeat N]

ROOT defaults to `benchmark`, or the upstream sample when there is no benchmark/ folder.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
UPSTREAM = REPO.parent / "shared" / "fixtures" / "upstream-sample"


def default_root() -> Path:
    local = REPO / "benchmark"
    return local if (local / "scenarios").is_dir() else UPSTREAM


def read_and_hash(root: Path) -> int:
    """The baseline: touch every byte of the tree once."""
    n = 0
    for path in sorted(root.rglob("*")):
        if path.is_file():
            hashlib.sha256(path.read_bytes()).hexdigest()
            n += 1
    return n


def timed(fn, repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", nargs="?", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    root = (args.root or default_root()).resolve()
    if not root.is_dir():
        print(f"no benchmark tree at {root}", file=sys.stderr)
        return 2

    start = time.perf_counter()
    from helmbench.lint import lint_tree  # import cost is part of what a user waits for

    import_s = time.perf_counter() - start
    cold_s = timed(lambda: lint_tree(root), 1)[0]
    lint_s = statistics.median(timed(lambda: lint_tree(root), args.repeat))
    files = read_and_hash(root)
    base_s = statistics.median(timed(lambda: read_and_hash(root), args.repeat))
    _, diags = lint_tree(root)

    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "helmbench", "lint", str(root)], capture_output=True, text=True)
    cli_s = time.perf_counter() - start

    print(f"tree:                 {root} ({files} files, {len(diags)} findings)")
    print(f"import helmbench.lint {import_s:.3f} s")
    print(f"lint_tree, first run  {cold_s:.3f} s")
    print(f"lint_tree, median     {lint_s:.3f} s over {args.repeat} runs")
    print(f"read+hash, median     {base_s:.4f} s  (baseline)")
    print(f"ratio lint/baseline   {lint_s / base_s:.1f}x" if base_s else "ratio lint/baseline   n/a")
    print(f"CLI subprocess        {cli_s:.3f} s  (exit {proc.returncode}; target < 1 s)")
    return 0 if cli_s < 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
