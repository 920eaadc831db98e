"""HELMBench: a declarative benchmark compiler for the mental-health safety of language models.

The package is split by pipeline stage (spec → lint → manifest → run → store → score →
publish); each stage reads only the artifact of the stage before it.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
