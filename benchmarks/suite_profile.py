"""Where the test suite's CPU goes: a pytest plugin that records, for every test, its CPU and what it started.

Why: `benchmarks/suite_time.py` gives the suite's total against its budget; to bring the total down one has to
know which tests spend it, and on what: the test process's own CPU (imports, pipelines, mkdocs builds run
in-process), its children's (a `helmbench` subprocess, a pip install), and how many processes it started
(each fresh interpreter pays its imports again). Durations alone (`--durations`) mix waiting with working.

Each test's set-up, call and tear-down are counted together (a fixture's cost lands on the first test that
asks for it). A child's CPU is counted when it is reaped; Chromium's renderers are orphaned and reaped by no
test (suite_time.py counts them in the total), so a browser test's figure is its own process's part only.

Its audit hook runs on every audited event of every test process (each import, open, exec): a suite run under it
spends more CPU than without it (a run of 502 s under it, 415-425 s without, on one machine the same evening), so
its totals compare only with totals taken under it, never with `suite_time.py`'s figure of `make test`.

Usage (any pytest command; one JSON line per test, appended to the file, per xdist worker):

    SUITE_PROFILE=/tmp/prof.jsonl .venv/bin/python -m pytest -n auto --dist loadgroup -p benchmarks.suite_profile
    python3 benchmarks/suite_profile.py /tmp/prof.jsonl            # the top files and tests by CPU
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from collections import defaultdict

_spawned = [0]
_commands: list[str] = []


def _audit(event: str, args) -> None:
    if event in ("subprocess.Popen", "os.posix_spawn", "os.exec", "os.fork"):
        _spawned[0] += 1
        if event == "subprocess.Popen":
            argv = args[1] if isinstance(args[1], (list, tuple)) else [args[1]]
            _commands.append(" ".join(os.path.basename(str(a)) if i == 0 else str(a)
                                      for i, a in enumerate(list(argv)[:3])))


def _cpu(who: int) -> float:
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def pytest_configure(config):
    if os.environ.get("SUITE_PROFILE"):
        sys.addaudithook(_audit)


try:
    import pytest

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item, nextitem):
        out = os.environ.get("SUITE_PROFILE")
        if not out:
            yield
            return
        del _commands[:]
        start = time.time()
        s0, c0, w0, p0 = _cpu(resource.RUSAGE_SELF), _cpu(resource.RUSAGE_CHILDREN), time.perf_counter(), _spawned[0]
        yield
        row = {"test": item.nodeid, "self": round(_cpu(resource.RUSAGE_SELF) - s0, 3),
               "children": round(_cpu(resource.RUSAGE_CHILDREN) - c0, 3),
               "wall": round(time.perf_counter() - w0, 3), "spawned": _spawned[0] - p0, "commands": list(_commands),
               "worker": os.environ.get("PYTEST_XDIST_WORKER", "main"), "start": round(start, 3)}
        with open(out, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(row) + "\n")
except ImportError:  # run as a script, to read a profile, without pytest installed
    pass


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    rows = [json.loads(line) for line in open(argv[0], encoding="utf-8") if line.strip()]
    top = int(argv[1]) if len(argv) > 1 else 30
    files: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0, 0, 0.0])
    for r in rows:
        f = files[r["test"].split("::", 1)[0]]
        f[0] += r["self"]
        f[1] += r["children"]
        f[2] += r["spawned"]
        f[3] += 1
        f[4] += r["wall"]
    total_self = sum(r["self"] for r in rows)
    total_children = sum(r["children"] for r in rows)
    print(f"{len(rows)} tests: CPU {total_self + total_children:.0f} s ({total_self:.0f} s in the test processes, "
          f"{total_children:.0f} s in their reaped children), {sum(r['spawned'] for r in rows)} processes started")
    print(f"\n{'CPU s':>7} {'self':>7} {'child':>7} {'spawn':>5} {'tests':>5} {'wall':>7}  file")
    for name, (s, c, p, n, w) in sorted(files.items(), key=lambda kv: -(kv[1][0] + kv[1][1]))[:top]:
        print(f"{s + c:7.1f} {s:7.1f} {c:7.1f} {p:5d} {n:5d} {w:7.1f}  {name}")
    print(f"\n{'CPU s':>7} {'self':>7} {'child':>7} {'spawn':>5} {'wall':>7}  test")
    for r in sorted(rows, key=lambda r: -(r["self"] + r["children"]))[:top]:
        print(f"{r['self'] + r['children']:7.1f} {r['self']:7.1f} {r['children']:7.1f} {r['spawned']:5d} "
              f"{r['wall']:7.1f}  {r['test']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
