"""The spec layer: models of authored files and the tree loader.

The names below load on first use (`helmbench.lazy`): a reader of one small module of this stage
(say `helmbench.spec.families`) does not pay for the loader's Pydantic models.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from helmbench import lazy

if TYPE_CHECKING:
    from helmbench.spec.loader import load_benchmark
    from helmbench.spec.tree import Benchmark, BehaviourInfo, Component, Criterion, PillarInfo, Scenario

__all__ = ["Benchmark", "BehaviourInfo", "Component", "Criterion", "PillarInfo", "Scenario", "load_benchmark"]

__getattr__ = lazy.exports(__name__, {"load_benchmark": "helmbench.spec.loader",
                                      **{name: "helmbench.spec.tree" for name in __all__ if name != "load_benchmark"}})
