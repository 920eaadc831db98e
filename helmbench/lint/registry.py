"""Lint rules are small functions registered with the codes they may emit.

A rule receives the loaded benchmark and a collector; it must not raise on odd input
(half-loaded scenarios have `meta=None`), so one bad file never hides the other findings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from helmbench.diagnostics import Collector
from helmbench.spec.tree import Benchmark

RuleFn = Callable[[Benchmark, Collector], None]


@dataclass(frozen=True)
class Rule:
    name: str
    codes: tuple[str, ...]
    fn: RuleFn


RULES: list[Rule] = []


def rule(*codes: str):
    def register(fn: RuleFn) -> RuleFn:
        RULES.append(Rule(fn.__name__, codes, fn))
        return fn

    return register
