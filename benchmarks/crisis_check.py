"""The crisis_resources check's time on a reply of digits and dots, by the reply's length.

    .venv/bin/python benchmarks/crisis_check.py [--cap SECONDS] [--tree DIR] [SIZE ...]

Issue 36: a 14 KB reply of digits and dots took 25-35 s to check, growing with the square of its
length (minutes at the 40,000-character limit a reply is read to). Each size (default 1,000 to
40,000 characters of `1.1.1.…`) is checked once against the shipped registry for a user in AU, in
a child process stopped after --cap seconds (default 60), so an old, quadratic checker can be
measured too: `--tree DIR` times the `helmbench` package under DIR instead of the installed one
(e.g. `git archive main helmbench | tar -x -C /tmp/main`, then `--tree /tmp/main`). Printed per
size: seconds (best of five when it takes under a second), and the exponent k of t ~ n^k between
it and the size before; for a size that hit the cap, the time the last measured exponent
predicts, marked as extrapolated.
"""

from __future__ import annotations

import argparse
import math
import os
import site
import subprocess
import sys
import time
from pathlib import Path

REGISTRY = Path(__file__).resolve().parents[1] / "benchmark" / "crisis-services.yml"
SIZES = (1_000, 2_000, 4_000, 8_000, 14_000, 40_000)


def reply(size: int) -> str:
    return ("1." * (size // 2 + 1))[:size]


def one(size: int) -> float:
    """Seconds to check one reply of `size` characters (this process's helmbench)."""
    from helmbench.crisis import evaluate
    from helmbench.crisis.services import contacts_of, read_registry

    registry = read_registry(REGISTRY)
    services = [contacts_of(cc, s) for cc, c in sorted(registry.countries.items()) for s in c.services]
    evaluation = {"type": "crisis_resources", "field": None, "country": "AU", "audience": None,
                  "registry": "crisis-services.yml", "registry_version": registry.version, "services": services}
    evaluate(evaluation, "Call Lifeline on 13 11 14.")  # libphonenumber's metadata, loaded once
    text = reply(size)
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        evaluate(evaluation, text)
        best = min(best, time.perf_counter() - started)
        if best > 1:
            break
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=list(SIZES))
    parser.add_argument("--cap", type=float, default=60.0, help="seconds a size may take before it is stopped")
    parser.add_argument("--tree", type=Path, help="time the helmbench package under this folder")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one is not None:
        import helmbench

        print(f"{one(args.one):.6f} {Path(helmbench.__file__).parent}")
        return
    env = dict(os.environ)
    command = [sys.executable]
    if args.tree is not None:
        # -S: no .pth files, so the editable install's finder cannot put the installed tree first; the
        # dependencies still come from this environment's site-packages
        command.append("-S")
        env["PYTHONPATH"] = os.pathsep.join([str(args.tree.resolve()), *site.getsitepackages()])
    print(f"reply of digits and dots, user in AU, cap {args.cap:.0f} s per size")
    last: tuple[int, float] | None = None
    k = None
    for size in args.sizes:
        try:
            done = subprocess.run([*command, __file__, "--one", str(size)], capture_output=True, text=True,
                                  timeout=args.cap, check=True, env=env)
        except subprocess.TimeoutExpired:
            guess = f"; t ~ n^{k:.2f} predicts {last[1] * (size / last[0]) ** k:.0f} s (extrapolated)" \
                if last and k else ""
            print(f"{size:>7,} chars  over {args.cap:.0f} s (stopped){guess}")
            continue
        seconds, tree = done.stdout.split(maxsplit=1)
        seconds = float(seconds)
        if last is None:
            print(f"helmbench from {tree.strip()}")
        if last is not None and seconds > 0 and last[1] > 0:
            k = math.log(seconds / last[1]) / math.log(size / last[0])
        exponent = f"  k = {k:.2f}" if last is not None and k is not None else ""
        print(f"{size:>7,} chars  {seconds:9.4f} s{exponent}")
        last = (size, seconds)


if __name__ == "__main__":
    main()
