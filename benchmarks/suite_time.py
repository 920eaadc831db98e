"""The test suite's wall time: the README's test command (`make test`) run --repeat times, and the median.

The suite's target (issue #30) is an absolute figure for one machine: under 150 s wall on a 2-core machine,
from a fresh clone. So this script times the command itself, in the checkout it is run from, and prints each
run's wall time, its test counts (pytest's summary line), the CPU time of everything it ran (divided by the
cores: the least wall time any parallel schedule of the same work could reach here), the load average before
each run (other work on the machine lengthens the suite: a figure taken under load says so) and the median.

Usage (from a fresh clone, after `make install`; `make test` installs what is missing first):

    python3 benchmarks/suite_time.py                 # `make test`, three times
    python3 benchmarks/suite_time.py --repeat 1 -- .venv/bin/python -m pytest -n 3 --dist loadgroup

Exit status is 1 when a run fails (its output's tail is printed), or when the median is above --target.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SUMMARY = re.compile(r"^=* ?(\d+ (?:passed|failed).*?) in [\d.]+s", re.M)


CORES = os.cpu_count() or 1


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3, help="how many runs (default 3)")
    ap.add_argument("--target", type=float, default=150.0, help="seconds the median should stay under")
    ap.add_argument("command", nargs="*", default=["make", "test"], help="the command (default: make test)")
    args = ap.parse_args(argv)

    walls = []
    for i in range(1, args.repeat + 1):
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
        start, cpu0 = time.perf_counter(), _children_cpu()
        proc = subprocess.run(args.command, cwd=REPO, capture_output=True, text=True)
        wall, cpu = time.perf_counter() - start, _children_cpu() - cpu0
        out = proc.stdout + proc.stderr
        found = SUMMARY.findall(out)
        # The CPU of every process the command started and waited for (browsers included): divided by the
        # cores, the least wall time any schedule of the same work could take on this machine.
        print(f"run {i}: {wall:7.1f} s wall · {found[-1] if found else 'no pytest summary'} · "
              f"CPU {cpu:.0f} s = at least {cpu / CORES:.0f} s on {CORES} cores · load before {load}", flush=True)
        if proc.returncode != 0:
            print(f"`{' '.join(args.command)}` exited {proc.returncode}:\n{out[-3000:]}", file=sys.stderr)
            return 1
        walls.append(wall)
    median = statistics.median(walls)
    print(f"median of {len(walls)}: {median:.1f} s (target < {args.target:.0f} s)")
    return 0 if median < args.target else 1


if __name__ == "__main__":
    sys.exit(main())
