"""Deterministic "perfunctory typing" without a model: typo, lowercase and dropped-character
versions of a component's text.

Why seeded and model-free: a noisy variant must be reproducible from what its frontmatter
records (`generated: {noise: {transform, seed}}`), on any machine and Python version, so a
reviewer can re-derive it and a diff shows only what changed. `random.Random` seeded with a
string is stable across platforms and Python 3 releases (its string seeding is SHA-512 based).
Only prose changes: `#` heading lines (they become XML tags) and fenced code keep every byte.
"""

from __future__ import annotations

import random
import re

TRANSFORMS = ("typo", "lowercase", "dropped")

#: Share of eligible words changed by `typo` and `dropped`: about one in six, enough to read as
#: hurried typing while every word stays recognisable.
RATE = 1 / 6
_WORD = re.compile(r"[A-Za-z]{4,}")
_FENCE = re.compile(r"^\s*(```|~~~)")


def _rng(transform: str, seed: int) -> random.Random:
    return random.Random(f"helmbench-noise:{transform}:{seed}")


def _swap(word: str, rng: random.Random) -> str:
    i = rng.randrange(1, len(word) - 2)  # keep the first and last letters: the word stays readable
    return word[:i] + word[i + 1] + word[i] + word[i + 2:]


def _drop(word: str, rng: random.Random) -> str:
    i = rng.randrange(1, len(word) - 1)
    return word[:i] + word[i + 1:]


def _words(line: str, change, rng: random.Random) -> str:
    return _WORD.sub(lambda m: change(m.group(0), rng) if rng.random() < RATE else m.group(0), line)


def apply_noise(text: str, transform: str, seed: int) -> str:
    """`text` with `transform` applied to its prose lines; the same (text, transform, seed) always
    gives the same result."""
    if transform not in TRANSFORMS:
        raise ValueError(f"unknown noise transform {transform!r}; one of {', '.join(TRANSFORMS)}")
    rng = _rng(transform, seed)
    out, in_fence = [], False
    for line in text.split("\n"):
        if _FENCE.match(line):
            in_fence = not in_fence
            out.append(line)
        elif in_fence or line.lstrip().startswith("#"):
            out.append(line)
        elif transform == "lowercase":
            out.append(line.lower())
        else:
            out.append(_words(line, _swap if transform == "typo" else _drop, rng))
    result = "\n".join(out)
    if result == text and transform != "lowercase":  # a short text the dice spared: change one word anyway
        result = _force_one(text, _swap if transform == "typo" else _drop, rng)
    return result


def _force_one(text: str, change, rng: random.Random) -> str:
    lines = text.split("\n")
    spots, in_fence = [], False
    for n, line in enumerate(lines):
        if _FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence and not line.lstrip().startswith("#"):
            spots += [(n, m) for m in _WORD.finditer(line)]
    if not spots:
        return text
    n, m = spots[rng.randrange(len(spots))]
    lines[n] = lines[n][:m.start()] + change(m.group(0), rng) + lines[n][m.end():]
    return "\n".join(lines)
