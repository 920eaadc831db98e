"""The spec layer: models of authored files and the tree loader."""

from helmbench.spec.loader import load_benchmark
from helmbench.spec.tree import Benchmark, BehaviourInfo, Component, Criterion, PillarInfo, Scenario

__all__ = ["Benchmark", "BehaviourInfo", "Component", "Criterion", "PillarInfo", "Scenario", "load_benchmark"]
