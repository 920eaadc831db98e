"""The lint stage: rules over the loaded tree, rendered as text, GitHub annotations or JSON."""

from helmbench.lint.codes import CODES, Code
from helmbench.lint.runner import lint_tree

__all__ = ["CODES", "Code", "lint_tree"]
