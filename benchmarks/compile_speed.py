"""How fast `compile` is, against the cost of just serialising and hashing its output.

Generates a synthetic tree of 200 scenarios × 5 conditions × 5 user contexts × 10
perturbations = 50,000 cases in a temporary folder, then

1. times `compile_tree` (load + lint + compose + hash + write the manifest and its copy),
   best of --repeat runs, each into a fresh output folder;
2. times a baseline in the same process that only serialises (canonical JSON) and hashes
   the same 50,000 records, taken from the compiled manifest: for each record, json.dumps +
   sha256 of the request, of the {evaluation, request} pair and of the whole record
   (compile and baseline runs alternate, so that a busy machine slows both alike);
3. prints cases per second for both and the ratio compile / baseline throughput
   (target >= 0.5: compile should cost at most about twice the unavoidable work), by wall
   clock and by CPU time (steadier when other processes compete for the CPU);
4. measures the peak memory of compiling 50,000 cases and 10,000 cases, each in a fresh
   subprocess (peak RSS, and tracemalloc's peak of Python allocations), and prints the
   ratios: the writer streams cases to disk, so they should stay close to 1. The 10,000
   cases come two ways: 5× fewer scenarios (the tree shrinks too) and the same 200 scenarios
   with one user context instead of five (only the number of cases shrinks).

Usage:

    .venv/bin/python benchmarks/compile_speed.py              # the full measurement (~1-2 min)
    .venv/bin/python benchmarks/compile_speed.py --scenarios 40 --repeat 1 --no-memory   # quick
    .venv/bin/python benchmarks/compile_speed.py --profile    # cProfile of one compile, top functions

Exit status is 1 when the wall-clock ratio is below --target, so CI can run it as a check.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import hashlib
import io
import json
import pstats
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = ("the user says they have been feeling tired and would like help with a plan for the week "
         "ahead including work deadlines family visits a trip to the coast and sorting out some "
         "paperwork for the bank before friday when everything needs to be finished and sent").split()
TAGS = ["ASSISTANCE", "TASK", "CHIT_CHAT", "EMOTIONAL_CHAT", "TECHNICAL_QUESTION", "CREATIVE_ENDEAVOUR"]
PILLARS, BEHAVIOURS = 4, 5


def _text(rng: random.Random, words: int) -> str:
    out, line = [], []
    for _ in range(words):
        line.append(rng.choice(WORDS))
        if len(line) == 14:
            out.append(" ".join(line).capitalize() + ".")
            line = []
    if line:
        out.append(" ".join(line).capitalize() + ".")
    return "\n".join(out)


def generate_tree(root: Path, scenarios: int = 200, conditions: int = 5, user_contexts: int = 5,
                  perturbations: int = 10, seed: int = 7) -> int:
    """Write a lint-clean nested tree; returns the number of cases it yields."""
    rng = random.Random(seed)
    root.mkdir(parents=True)
    per_behaviour = -(-scenarios // (PILLARS * BEHAVIOURS))
    lines = ["name: Synthetic", 'version: "1"', "pillars:"]
    for p in range(1, PILLARS + 1):
        lines += [f"  P{p}:", f"    title: Pillar {p}", "    behaviours:"]
        for b in range(1, BEHAVIOURS + 1):
            lines += [f"      B{b}:", f"        title: Behaviour {p}.{b}", f"        weight: {b + p}"]
    (root / "benchmark.yml").write_text("\n".join(lines) + "\n")
    (root / "models.yml").write_text("marking_model: openai/gpt-4.1\nmodels:\n  - id: openai/gpt-4.1-mini\n")
    schema = {"type": "object", "additionalProperties": False, "required": ["response", "tags"],
              "properties": {"response": {"type": "string"},
                             "tags": {"type": "array", "items": {"type": "string", "enum": TAGS}}}}
    made = 0
    for p in range(1, PILLARS + 1):
        for b in range(1, BEHAVIOURS + 1):
            for s in range(1, per_behaviour + 1):
                if made == scenarios:
                    break
                made += 1
                folder = root / "scenarios" / f"P{p}" / f"B{b}" / f"S{s}--synthetic"
                folder.mkdir(parents=True)
                tag_list = "\n".join(f"- {t}: {_text(rng, 12)}" for t in TAGS)
                (folder / f"S{s}.md").write_text(
                    "---\ncategory: ASSISTANCE\nevaluation:\n  type: list_includes\n  field: tags\n"
                    f"  required: [ASSISTANCE]\n---\n## Your job\n\n{_text(rng, 120)}\n\n{tag_list}\n\n"
                    f"### Notes\n\n{_text(rng, 60)}\n")
                (folder / f"S{s}.json").write_text(json.dumps(schema, indent=2))
                (folder / "conditions.md").write_text("\n".join(
                    f"# C{i}\n---\ndifficulty: {i % 4}\n---\n\n## System instructions\n\n{_text(rng, 80)}\n"
                    for i in range(1, conditions + 1)))
                (folder / "user-contexts.md").write_text("\n".join(
                    f"# U{i}\n---\nseverity: {i % 4}\n---\n\n## User memory\n\n- {_text(rng, 30)}\n"
                    f"- {_text(rng, 20)}\n\n## User profile\n\n{_text(rng, 20)}\n"
                    for i in range(1, user_contexts + 1)))
                (folder / "perturbations.md").write_text("\n".join(
                    f"# PT{i}\n\n---\nseverity: {(i % 7) + 1}\n---\n\n## User's input\n\n{_text(rng, 40)}\n"
                    for i in range(1, perturbations + 1)))
    return scenarios * conditions * user_contexts * perturbations


def _dumps(obj) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def compile_once(root: Path, out: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one compile."""
    from helmbench.manifest import compile_tree

    gc.collect()
    t0, c0 = time.perf_counter(), time.process_time()
    result = compile_tree(root, out)
    elapsed = time.perf_counter() - t0, time.process_time() - c0
    errors = [d for d in result.diagnostics if d.is_error]
    assert not errors, errors
    return elapsed


def baseline_once(records: list[dict]) -> tuple[float, float]:
    """Serialise + hash the request, the {evaluation, request} pair and the whole record."""
    sha = hashlib.sha256
    gc.collect()
    t0, c0 = time.perf_counter(), time.process_time()
    for r in records:
        sha(_dumps(r["request"])).hexdigest()
        sha(_dumps({"evaluation": r["evaluation"], "request": r["request"]})).hexdigest()
        sha(_dumps(r)).hexdigest()
    return time.perf_counter() - t0, time.process_time() - c0


def time_both(root: Path, work: Path, repeat: int) -> tuple[tuple, tuple, int, int]:
    """Best-of-`repeat` (wall, CPU) seconds for compile and for the baseline, runs interleaved
    so that a busy machine slows both alike. A first, untimed compile warms imports and gives
    the records (parsed outside any timing, then frozen out of the garbage collector's way)."""
    compile_once(root, work / "warm")
    manifest = work / "warm" / "manifest.jsonl"
    size = manifest.stat().st_size
    with open(manifest, encoding="utf-8") as f:
        f.readline()
        records = [json.loads(line) for line in f]
    shutil.rmtree(work / "warm", onerror=lambda *a: None)
    gc.collect()
    gc.freeze()
    compiles, bases = [], []
    try:
        for i in range(repeat):
            compiles.append(compile_once(root, work / f"out-{i}"))
            shutil.rmtree(work / f"out-{i}", onerror=lambda *a: None)
            bases.append(baseline_once(records))
    finally:
        gc.unfreeze()
    best = lambda runs: (min(r[0] for r in runs), min(r[1] for r in runs))  # noqa: E731
    return best(compiles), best(bases), len(records), size


_MEMORY_PROBE = r"""
import json, resource, sys, tracemalloc
from helmbench.manifest import compile_tree
trace = sys.argv[3] == "trace"
if trace:
    tracemalloc.start()
compile_tree(sys.argv[1], sys.argv[2])
peak = tracemalloc.get_traced_memory()[1] if trace else None
# VmHWM is the peak RSS of this process image; ru_maxrss would also count the parent's peak
# (Linux keeps it across fork + exec), which is large here because the baseline holds 50k records.
try:
    hwm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
except OSError:
    hwm = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"peak_rss_kb": hwm, "traced_peak": peak}))
"""


def measure_memory(root: Path, out: Path) -> tuple[float, float]:
    """(peak RSS MB, tracemalloc peak MB) of compiling `root` in fresh interpreters."""
    found = {}
    for mode in ("rss", "trace"):
        proc = subprocess.run([sys.executable, "-c", _MEMORY_PROBE, str(root), str(out / mode), mode],
                              capture_output=True, text=True, check=True)
        found[mode] = json.loads(proc.stdout)
    return found["rss"]["peak_rss_kb"] / 1024, found["trace"]["traced_peak"] / 2**20


def profile_compile(root: Path, out: Path, top: int) -> str:
    from helmbench.manifest import compile_tree

    prof = cProfile.Profile()
    prof.enable()
    compile_tree(root, out)
    prof.disable()
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(top)
    return buf.getvalue()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenarios", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--target", type=float, default=0.5, help="minimum compile/baseline throughput ratio")
    ap.add_argument("--no-memory", action="store_true", help="skip the 10k vs 50k peak-memory comparison")
    ap.add_argument("--profile", action="store_true", help="print a cProfile of one compile and stop")
    ap.add_argument("--keep", type=Path, help="generate the tree here and keep it (must not exist)")
    args = ap.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="helmbench-speed-") as tmp:
        work = Path(tmp)
        root = args.keep or work / "tree"
        t0 = time.perf_counter()
        n = generate_tree(root, args.scenarios)
        print(f"tree: {args.scenarios} scenarios × 5 conditions × 5 user contexts × 10 perturbations = {n:,} cases "
              f"(generated in {time.perf_counter() - t0:.1f} s)")
        if args.profile:
            print(profile_compile(root, work / "profiled", 30))
            return 0

        (compile_s, compile_cpu), (base_s, base_cpu), count, size = time_both(root, work, args.repeat)
        assert count == n, (count, n)
        ratio, cpu_ratio = base_s / compile_s, base_cpu / compile_cpu
        print(f"compile_tree : {compile_s:6.2f} s wall {n / compile_s:8,.0f} cases/s | {compile_cpu:6.2f} s CPU "
              f"{n / compile_cpu:8,.0f} cases/s   (best of {args.repeat}; manifest {size / 1e6:.0f} MB)")
        print(f"baseline     : {base_s:6.2f} s wall {n / base_s:8,.0f} cases/s | {base_cpu:6.2f} s CPU "
              f"{n / base_cpu:8,.0f} cases/s   (json.dumps + sha256: request, {{evaluation, request}}, record)")
        print(f"ratio compile/baseline throughput: {ratio:.2f} wall, {cpu_ratio:.2f} CPU  (target >= {args.target})")

        if not args.no_memory:
            small = max(1, args.scenarios // 5)
            trees = {
                "fewer scenarios": (work / "mem-a", dict(scenarios=small)),
                "fewer user contexts": (work / "mem-b", dict(scenarios=args.scenarios, user_contexts=1)),
            }
            full_rss, full_traced = measure_memory(root, work / "mem-full")
            print(f"peak memory, {n:,} cases ({args.scenarios} scenarios): "
                  f"RSS {full_rss:6.1f} MB, tracemalloc {full_traced:5.1f} MB")
            for label, (where, kw) in trees.items():
                cases = generate_tree(where / "tree", **kw)
                rss, traced = measure_memory(where / "tree", where)
                print(f"peak memory, {cases:,} cases ({label}): RSS {rss:6.1f} MB, tracemalloc {traced:5.1f} MB;"
                      f"  ratio {n:,}/{cases:,}: RSS {full_rss / rss:.2f}, tracemalloc {full_traced / traced:.2f}")
            print("  (streamed output: the ratio stays near 1 as cases grow; what grows is the loaded tree)")
    return 0 if ratio >= args.target else 1


if __name__ == "__main__":
    sys.exit(main())
